/* SPDX-License-Identifier: BSD-3-Clause */
/* Posting work requests (verbs semantics: 0, or -errno with *bad_wr the first not posted). */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_sr.h"

/* Operations each service type supports (IBTA 10.7.2.x, table "work request operations"). */
static bool
op_allowed(enum droce_qp_type t, enum droce_wr_opcode op)
{
	switch (op) {
	case DROCE_WR_SEND:
	case DROCE_WR_SEND_WITH_IMM:
		return true;
	case DROCE_WR_RDMA_WRITE:
	case DROCE_WR_RDMA_WRITE_WITH_IMM:
		return t != DROCE_QPT_UD;
	case DROCE_WR_RDMA_READ:
	case DROCE_WR_ATOMIC_CMP_AND_SWP:
	case DROCE_WR_ATOMIC_FETCH_AND_ADD:
	case DROCE_WR_SEND_WITH_INV:
	case DROCE_WR_ATOMIC_WRITE:
		return t == DROCE_QPT_RC;
	case DROCE_WR_LOCAL_INV:
	case DROCE_WR_BIND_MW:
		return t != DROCE_QPT_UD; /* IBTA 10.6.7.2.x: over connected QPs */
	default:
		return false;
	}
}

static bool
is_atomic(enum droce_wr_opcode op)
{
	return op == DROCE_WR_ATOMIC_CMP_AND_SWP || op == DROCE_WR_ATOMIC_FETCH_AND_ADD;
}

static int
check_wr(const struct droce_qp *qp, const struct droce_send_wr *wr, uint64_t *len)
{
	int i;

	if (!op_allowed(qp->type, wr->opcode))
		return -EINVAL;
	*len = 0;
	/* No data; a bad window fails the completion (MW_BIND_ERR), not the post. */
	if (droce_wr_is_local(wr->opcode))
		return wr->opcode == DROCE_WR_BIND_MW && wr->wr.bind_mw.mw == NULL ? -EINVAL : 0;
	/* Its 8 bytes travel in the WR (wr.atomic.swap), as verbs' wr_atomic_write copies them. */
	if (wr->opcode == DROCE_WR_ATOMIC_WRITE)
		return 0;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge ||
	    (wr->num_sge > 0 && wr->sg_list == NULL))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		*len += wr->sg_list[i].length;
	if (*len > DROCE_MAX_MSG)
		return -EINVAL;
	if ((wr->send_flags & DROCE_SEND_INLINE) &&
	    (*len > qp->cap.max_inline_data || wr->opcode == DROCE_WR_RDMA_READ ||
	     is_atomic(wr->opcode)))
		return -EINVAL;
	/* IBTA 9.4.5: atomics move exactly 8 bytes. */
	if (is_atomic(wr->opcode) && *len != 8)
		return -EINVAL;
	if (qp->type == DROCE_QPT_UD) {
		/* IBTA 10.2.2: the AH must come from the QP's PD; a UD message is one
		 * packet no longer than the path MTU. */
		if (wr->wr.ud.ah == NULL || !wr->wr.ud.ah->used || wr->wr.ud.ah->pd != qp->pd ||
		    *len > qp->mtu)
			return -EINVAL;
	}
	return 0;
}

static void
fill_swqe(struct droce_qp *qp, struct droce_swqe *w, const struct droce_send_wr *wr, uint32_t slot,
	  uint32_t len)
{
	struct droce_requester *r = &qp->req;
	int i;

	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->send_flags;
	w->imm = wr->imm_data;
	w->inv_rkey = wr->invalidate_rkey;
	w->length = len;
	w->state = DROCE_SWQE_POSTED;
	w->sge = &r->sges[(size_t)slot * qp->cap.max_send_sge];
	w->num_sge = (uint32_t)wr->num_sge;
	w->checked = false;
	w->timed = false;
	w->part_asked = false;
	w->sr = false; /* until it starts (droce_req.c) */
	w->npkts = 0;
	if (droce_wr_is_local(wr->opcode)) {
		w->num_sge = 0;
		w->checked = true;
		if (wr->opcode == DROCE_WR_BIND_MW) {
			w->rkey = wr->wr.bind_mw.rkey;
			w->mw = wr->wr.bind_mw.mw;
			w->bind_mr = wr->wr.bind_mw.mr;
			w->bind_access = wr->wr.bind_mw.access;
			w->raddr = wr->wr.bind_mw.addr;
			w->compare_add = wr->wr.bind_mw.length;
		}
		return; /* executed by the requester in order, no packet (droce_req.c) */
	}
	if (wr->opcode == DROCE_WR_ATOMIC_WRITE) {
		w->num_sge = 0;
		w->checked = true; /* no local buffer */
		w->length = 8;
		w->npkts = 1;
		w->raddr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->swap = wr->wr.atomic.swap;
		return;
	}
	if (is_atomic(wr->opcode)) {
		w->raddr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else if (qp->type == DROCE_QPT_UD) {
		w->ah = wr->wr.ud.ah;
		w->remote_qpn = wr->wr.ud.remote_qpn;
		w->remote_qkey = wr->wr.ud.remote_qkey;
	} else {
		w->raddr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (wr->send_flags & DROCE_SEND_INLINE) {
		/* The data is copied now: the caller may reuse its buffers on return. */
		uint8_t *buf = r->inline_buf + (size_t)slot * qp->cap.max_inline_data;
		uint32_t off = 0;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(buf + off, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w->sge[0].addr = (uintptr_t)buf;
		w->sge[0].length = len;
		w->sge[0].lkey = 0;
		w->num_sge = len ? 1 : 0;
		w->checked = true;
	} else {
		for (i = 0; i < wr->num_sge; i++)
			w->sge[i] = wr->sg_list[i];
	}
	w->npkts = is_atomic(wr->opcode)	    ? 1 :
		   wr->opcode == DROCE_WR_RDMA_READ ? droce_qp_npkts(qp, len) :
						      droce_qp_data_npkts(qp, len, qp->mtu);
	if (qp->sr != NULL)
		droce_sr_assign_ord(qp, w);
}

int
droce_post_send(struct droce_qp *qp, struct droce_send_wr *wr, struct droce_send_wr **bad_wr)
{
	struct droce_requester *r;
	bool flush;

	if (qp == NULL || !qp->used) {
		*bad_wr = wr;
		return -EINVAL;
	}
	r = &qp->req;
	/* IBTA 10.8.1: the send queue accepts work from RTS on; in SQE and ERR the work
	 * is accepted and flushed. */
	if (qp->state < DROCE_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	flush = qp->state == DROCE_QPS_ERR || qp->state == DROCE_QPS_SQE;
	for (; wr != NULL; wr = wr->next) {
		uint64_t len;
		uint32_t slot;
		int e = check_wr(qp, wr, &len);

		if (e == 0 && r->head - r->comp >= r->max_wr)
			e = -ENOMEM;
		if (e != 0) {
			*bad_wr = wr;
			return e;
		}
		slot = r->head & r->mask;
		fill_swqe(qp, &r->ring[slot], wr, slot, (uint32_t)len);
		r->head++;
	}
	if (qp->state == DROCE_QPS_SQE)
		droce_qp_sq_error(qp);
	else if (flush)
		droce_qp_flush(qp);
	else if (qp->state == DROCE_QPS_RTS)
		droce_sched_ready(qp);
	return 0;
}

int
droce_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr, struct droce_recv_wr **bad_wr)
{
	int e;

	if (qp == NULL || !qp->used || qp->srq != NULL || qp->state == DROCE_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	e = droce_rq_post(&qp->rq, wr, bad_wr);
	if (qp->state == DROCE_QPS_ERR)
		droce_qp_flush(qp);
	return e;
}
