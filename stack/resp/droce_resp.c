/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder execution (IBTA 9.7.5.1): opcode sequence, lengths, R_Key checks, SEND/WRITE data
 * placement, READ queueing, atomics with their result cache, and the fatal-error path.
 */
#include <errno.h>
#include <string.h>

#include "droce_byteorder.h"
#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_resp.h"
#include "droce_sr.h"
#include "wire/droce_aeth.h"

/* Each error state: the NAK code it sends, the event the responder raises, the drop counted. */
static const struct {
	uint8_t nak;
	enum droce_event_type ev;
	enum droce_drop drop;
} rst_err[] = {
	[RST_ERR_OPSEQ] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR, DROCE_DROP_OPCODE_SEQ },
	[RST_ERR_LENGTH] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR, DROCE_DROP_LENGTH },
	[RST_ERR_RKEY] = { DROCE_NAK_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR, DROCE_DROP_RKEY },
	[RST_ERR_LOCAL] = { DROCE_NAK_REM_OP_ERR, DROCE_EVENT_QP_FATAL, DROCE_DROP_RWQE_PROT },
	[RST_ERR_ALIGN] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR,
			    DROCE_DROP_ATOMIC_ALIGN },
	[RST_ERR_QP_ACCESS] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR,
				DROCE_DROP_QP_ACCESS },
	[RST_ERR_INVALIDATE] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR,
				 DROCE_DROP_INVALIDATE },
	/* ibv_get_async_event(3): "too many RDMA Read or Atomic requests" is an access error */
	[RST_ERR_RD_RES] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_ACCESS_ERR,
			     DROCE_DROP_RESOURCE },
};

void
droce_resp_complete(struct droce_qp *qp, enum droce_wc_status st, const struct droce_pkt *p,
		    uint32_t byte_len, enum droce_wc_opcode opc)
{
	unsigned int flags = 0;
	uint32_t imm = 0, src_qp = 0;
	struct droce_wc *wc;

	if (p != NULL) {
		const struct droce_opcode_info *op = droce_opcode_info(p->opcode);

		if (op->flags & DROCE_OPF_IMM) {
			flags |= DROCE_WC_WITH_IMM;
			imm = droce_cpu_to_be32(p->imm);
		}
		if ((op->flags & DROCE_OPF_INV) && st == DROCE_WC_SUCCESS) {
			flags |= DROCE_WC_WITH_INV;
			imm = p->ieth_rkey; /* verbs' invalidated_rkey: host order */
		}
		if (qp->type == DROCE_QPT_UD) {
			flags |= DROCE_WC_GRH;
			src_qp = p->deth_sqpn;
		}
	}
	qp->resp.have_rwqe = false;
	droce_qp_recv_count(qp, st);
	/* Written in its ring slot: no copy through the stack. */
	wc = droce_cq_slot(qp->rcq);
	if (wc == NULL)
		return;
	*wc = (struct droce_wc){
		.wr_id = qp->resp.rwqe.wr_id,
		.status = st,
		.opcode = opc,
		.byte_len = byte_len,
		.imm_data = imm,
		.qp_num = qp->qpn,
		.src_qp = src_qp,
		.wc_flags = flags,
	};
	droce_cq_commit(qp->rcq, wc, p != NULL && p->se);
}

/* A fatal responder error: the receive WQE in use (if any) completes in error, the QP goes to
 * ERR (IBTA 10.3.1, "responder class C/D"), and for RC one NAK tells the requester. RC first
 * sends what it queued for the earlier requests: responses go out in request order (IBTA 9.5
 * ordering, 9.7.5.1), and those requests were executed (atomics changed memory), so the NAK
 * and the ERR transition wait behind them (droce_resp_tx -> droce_resp_fatal_end); the
 * responder takes no further request meanwhile (droce_resp_rx). */
void
droce_resp_fatal(struct droce_qp *qp, enum droce_rst st, const struct droce_pkt *p)
{
	struct droce_responder *s = &qp->resp;

	if (st == RST_ERR_RKEY)
		droce_qp_cnt(qp, DROCE_CNT_RESP_REMOTE_ACCESS_ERRORS);
	else
		droce_qp_cnt(qp, DROCE_CNT_RESP_REMOTE_INVALID_REQUEST);
	droce_dev_drop(qp->dev, rst_err[st].drop);
	if (s->have_rwqe) {
		enum droce_wc_status ws = st == RST_ERR_LENGTH ? DROCE_WC_LOC_LEN_ERR :
					  st == RST_ERR_LOCAL  ? DROCE_WC_LOC_PROT_ERR :
					  st == RST_ERR_RKEY   ? DROCE_WC_REM_ACCESS_ERR :
								 DROCE_WC_REM_INV_REQ_ERR;

		if (st == RST_ERR_LENGTH)
			droce_qp_cnt(qp, DROCE_CNT_RESP_LOCAL_LENGTH_ERROR);
		droce_resp_complete(qp, ws, NULL, s->cur.pos, DROCE_WC_RECV);
	}
	if (qp->type != DROCE_QPT_RC) {
		droce_qp_error(qp);
		droce_dev_event(qp->dev, rst_err[st].ev, qp);
		return;
	}
	s->final_nak.kind = DROCE_RESP_NAK;
	s->final_nak.syn = DROCE_AETH_TYPE_NAK | rst_err[st].nak;
	s->final_nak.psn = p->psn;
	s->final_nak.msn = s->msn;
	s->final_nak_pending = true;
	s->final_ev = rst_err[st].ev;
	droce_ack_release(qp); /* the earlier requests' ACK goes before the NAK */
	droce_sched_ready(qp);
}

/* The fatal NAK went out after every earlier response: now the QP enters ERR and flushes
 * (IBTA 10.3.1), with the event of the error the NAK named. */
void
droce_resp_fatal_end(struct droce_qp *qp)
{
	qp->resp.final_nak_pending = false;
	droce_qp_error(qp);
	droce_dev_event(qp->dev, qp->resp.final_ev, qp);
}

void
droce_resp_nak(struct droce_qp *qp, uint8_t syn, uint32_t psn)
{
	struct droce_resp_item *it = droce_resp_push(qp);

	if (it == NULL)
		return;
	it->kind = DROCE_RESP_NAK;
	it->sel = false;
	it->syn = syn;
	it->psn = psn;
	it->msn = qp->resp.msn;
}

/* IBTA 9.7.5.1.3: inside a message only its MIDDLE/LAST may come, outside only FIRST
 * or ONLY. */
static enum droce_rst
check_opseq(struct droce_qp *qp, const struct droce_opcode_info *op)
{
	struct droce_responder *s = &qp->resp;

	if (s->msg == DROCE_RMSG_NONE)
		return (op->flags & DROCE_OPF_FIRST) ? RST_DONE : RST_ERR_OPSEQ;
	if (op->flags & DROCE_OPF_FIRST)
		return RST_ERR_OPSEQ;
	if (s->msg == DROCE_RMSG_SEND &&
	    (!(op->flags & DROCE_OPF_SEND) || (op->flags & DROCE_OPF_WRITE)))
		return RST_ERR_OPSEQ;
	if (s->msg == DROCE_RMSG_WRITE && !(op->flags & DROCE_OPF_WRITE))
		return RST_ERR_OPSEQ;
	return RST_DONE;
}

/* IBTA 9.7.5.1.x: FIRST and MIDDLE carry exactly the path MTU (less the placement header room
 * on a packet marked for selective repeat: qp->seg), ONLY at most that, LAST 1 to that many
 * bytes (a message's last packet holds its remainder, never nothing: rxe's check_length refuses
 * an empty LAST too). */
static bool
len_ok(const struct droce_qp *qp, const struct droce_opcode_info *op, const struct droce_pkt *p)
{
	uint32_t seg = droce_rx_seg(qp, p), len = p->pay_len;

	if (!(op->flags & DROCE_OPF_LAST))
		return len == seg;
	if (!(op->flags & DROCE_OPF_FIRST) && len == 0)
		return false;
	return len <= seg;
}

enum droce_rst
droce_resp_take_rwqe(struct droce_qp *qp)
{
	struct droce_responder *s = &qp->resp;
	uint32_t i;

	if (s->have_rwqe) { /* UC: kept from an aborted message */
		s->cur.sge = s->cur.off = s->cur.pos = 0;
		return RST_DONE;
	}
	if (!droce_rq_pop(qp, &s->rwqe)) {
		droce_qp_cnt(qp, DROCE_CNT_OUT_OF_BUFFER);
		return RST_RNR;
	}
	s->have_rwqe = true;
	if (qp->sr != NULL)
		qp->sr->ord++; /* the next message's receive ordinal (droce_sr_resp.c) */
	s->cur.sge = s->cur.off = s->cur.pos = 0;
	for (i = 0; i < s->rwqe.num_sge; i++)
		if (droce_mr_check_local(qp->pd, &s->rwqe.sge[i], DROCE_ACCESS_LOCAL_WRITE) != 0)
			return RST_ERR_LOCAL;
	droce_cursor_seek(&s->cur, s->rwqe.sge, s->rwqe.num_sge, 0);
	return RST_DONE;
}

static enum droce_rst
exec_send(struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op,
	  const uint8_t *frame)
{
	struct droce_responder *s = &qp->resp;
	enum droce_rst st;

	if (!len_ok(qp, op, p))
		return RST_ERR_LENGTH;
	if (op->flags & DROCE_OPF_FIRST) {
		st = droce_resp_take_rwqe(qp);
		if (st != RST_DONE)
			return st;
		s->msg = DROCE_RMSG_SEND;
	}
	if ((uint64_t)s->cur.pos + p->pay_len > s->rwqe.length)
		return RST_ERR_LENGTH;
	/* IBTA 9.4.1.2 / 10.6.7.2.x: before the message completes, the IETH's R_Key is
	 * invalidated; a key that cannot be (no such type 2 window, another PD, an MR: droce has
	 * no fast-registered ones) fails the receive WQE with REM_INV_REQ_ERR and the QP (rxe's
	 * class J); the NAK tells the requester at once rather than through its retries. A
	 * duplicate never gets here: the message is not executed twice. */
	if (op->flags & DROCE_OPF_INV) {
		if (droce_mw_invalidate(qp, p->ieth_rkey) != 0)
			return RST_ERR_INVALIDATE;
		droce_qp_cnt(qp, DROCE_CNT_MW_INVALIDATE);
	}
	if (droce_unlikely(droce_sr_replaying(qp))) /* placed when it came */
		droce_cursor_seek(&s->cur, s->rwqe.sge, s->rwqe.num_sge, s->cur.pos + p->pay_len);
	else if (p->pay_len)
		droce_copy_in(s->rwqe.sge, &s->cur, frame + p->pay_off, p->pay_len);
	if (op->flags & DROCE_OPF_LAST) {
		s->msg = DROCE_RMSG_NONE;
		s->msn = droce_psn_add(s->msn, 1);
		droce_resp_complete(qp, DROCE_WC_SUCCESS, p, s->cur.pos, DROCE_WC_RECV);
	}
	return RST_DONE;
}

/*
 * IBTA 1.5 ATOMIC WRITE (as rxe): the RETH and the payload name exactly 8 bytes (else a length
 * error), the target is 8-aligned (else an invalid request) and writable remotely. The bytes
 * land as one store, released after the stores of everything before them, so a local reader
 * that sees them sees those too. A duplicate is re-ACKed as a WRITE's is, not placed again.
 */
static enum droce_rst
exec_atomic_write(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	uint64_t v;

	if (p->reth_len != sizeof(v) || p->pay_len != sizeof(v))
		return RST_ERR_LENGTH;
	if (droce_mr_check_remote(qp, p->reth_rkey, p->reth_va, sizeof(v),
				  DROCE_ACCESS_REMOTE_WRITE) == NULL)
		return RST_ERR_RKEY;
	if (p->reth_va & 7)
		return RST_ERR_ALIGN;
	memcpy(&v, frame + p->pay_off, sizeof(v));
	__atomic_store_n((uint64_t *)(uintptr_t)p->reth_va, v, __ATOMIC_RELEASE);
	droce_qp_cnt(qp, DROCE_CNT_RX_ATOMIC_WRITE_REQUESTS);
	qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
	return RST_DONE;
}

static enum droce_rst
exec_write(struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op,
	   const uint8_t *frame)
{
	struct droce_responder *s = &qp->resp;
	bool first = op->flags & DROCE_OPF_FIRST;
	uint32_t left = first ? p->reth_len : s->wr_left;

	if (op->flags & DROCE_OPF_ATOMIC_WRITE)
		return exec_atomic_write(qp, p, frame);

	if (!len_ok(qp, op, p))
		return RST_ERR_LENGTH;
	/* IBTA 9.7.4.1.x: no message is longer than 2^31 bytes (rxe: a length error) */
	if (first && p->reth_len > DROCE_MAX_MSG)
		return RST_ERR_LENGTH;
	/* C9-88 note: a zero-length RDMA WRITE checks no R_Key. */
	if (first && p->reth_len != 0 &&
	    droce_mr_check_remote(qp, p->reth_rkey, p->reth_va, p->reth_len,
				  DROCE_ACCESS_REMOTE_WRITE) == NULL)
		return RST_ERR_RKEY;
	/* The payload must fill the RETH length exactly (IBTA 9.7.5.1.x length checks). */
	if (p->pay_len > left || ((op->flags & DROCE_OPF_LAST) && p->pay_len != left))
		return RST_ERR_LENGTH;
	/* With immediate, a receive WQE is consumed: take it before any state or byte changes,
	 * so that an RNR retry finds the responder as it was. */
	if (op->flags & DROCE_OPF_IMM) {
		enum droce_rst st = droce_resp_take_rwqe(qp);

		if (st != RST_DONE)
			return st;
	}
	if (first) {
		droce_qp_cnt(qp, DROCE_CNT_RX_WRITE_REQUESTS);
		s->wr_va = (uintptr_t)p->reth_va;
		s->wr_left = p->reth_len;
		s->wr_len = p->reth_len;
		s->msg = DROCE_RMSG_WRITE;
	}
	if (p->pay_len) {
		if (droce_unlikely(qp->sr != NULL)) {
			if (!qp->sr->replay) /* else placed when it came */
				droce_sr_write(qp, p->psn, (uint8_t *)s->wr_va, frame + p->pay_off,
					       p->pay_len);
		} else {
			memcpy((void *)s->wr_va, frame + p->pay_off, p->pay_len);
		}
		s->wr_va += p->pay_len;
		s->wr_left -= p->pay_len;
	}
	if (op->flags & DROCE_OPF_LAST) {
		s->msg = DROCE_RMSG_NONE;
		s->msn = droce_psn_add(s->msn, 1);
		if (op->flags & DROCE_OPF_IMM)
			droce_resp_complete(qp, DROCE_WC_SUCCESS, p, s->wr_len,
					    DROCE_WC_RECV_RDMA_WITH_IMM);
	}
	return RST_DONE;
}

enum droce_rst
droce_resp_read(struct droce_qp *qp, const struct droce_pkt *p, bool dup)
{
	struct droce_resp_item *it;

	/* IBTA 9.7.4.1.x: no message is longer than 2^31 bytes (rxe: a length error) */
	if (!dup && p->reth_len > DROCE_MAX_MSG)
		return RST_ERR_LENGTH;
	if (p->reth_len != 0 && droce_mr_check_remote(qp, p->reth_rkey, p->reth_va, p->reth_len,
						      DROCE_ACCESS_REMOTE_READ) == NULL) {
		if (!dup)
			return RST_ERR_RKEY;
		droce_dev_drop(qp->dev, DROCE_DROP_DUP_NO_REPLAY); /* no longer valid */
		return RST_DROP;
	}
	it = droce_resp_push(qp);
	if (it == NULL) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESOURCE);
		return RST_DROP; /* the requester's retry asks again */
	}
	if (!dup) {
		qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
		qp->resp.rd_pending++;
	}
	it->kind = DROCE_RESP_READ;
	it->first = true;
	it->dup = dup;
	it->psn = p->psn;
	it->msn = qp->resp.msn;
	it->va = (uintptr_t)p->reth_va;
	it->left = p->reth_len;
	return RST_QUIET;
}

static enum droce_rst
exec_atomic(struct droce_qp *qp, const struct droce_pkt *p)
{
	struct droce_responder *s = &qp->resp;
	struct droce_resp_item *it;
	struct droce_atomic_res *res;
	uint64_t *ptr, orig;

	if (droce_mr_check_remote(qp, p->atomic_rkey, p->atomic_va, 8,
				  DROCE_ACCESS_REMOTE_ATOMIC) == NULL)
		return RST_ERR_RKEY;
	/* IBTA 9.4.5: the target must be 8-byte aligned, else invalid request. */
	if (p->atomic_va & 7)
		return RST_ERR_ALIGN;
	if (s->ring_head - s->ring_tail > s->ring_mask) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESOURCE);
		return RST_DROP; /* not executed: the retry will find it new */
	}
	ptr = (uint64_t *)(uintptr_t)p->atomic_va;
	orig = *ptr;
	if (p->opcode == DROCE_OP_RC_COMPARE_SWAP) {
		if (orig == p->atomic_compare)
			*ptr = p->atomic_swap_add;
	} else {
		*ptr = orig + p->atomic_swap_add;
	}
	droce_qp_cnt(qp, DROCE_CNT_RX_ATOMIC_REQUESTS);
	/* Remember the result: a duplicate replays it, never executes again (IBTA 9.7.5.1.x). */
	res = &s->atomics[s->atomic_next++ % s->n_atomics];
	res->psn = p->psn;
	res->orig = orig;
	res->valid = true;
	s->msn = droce_psn_add(s->msn, 1);
	it = droce_resp_push(qp);
	it->kind = DROCE_RESP_ATOMIC;
	it->syn = DROCE_AETH_TYPE_ACK | DROCE_AETH_CREDIT_INVALID;
	it->dup = false;
	it->psn = p->psn;
	it->msn = s->msn;
	it->orig = orig;
	s->rd_pending++;
	return RST_QUIET;
}

static bool
qp_enabled(const struct droce_qp *qp, const struct droce_opcode_info *op)
{
	unsigned int need = 0;

	if (op->flags & DROCE_OPF_READ)
		need = DROCE_ACCESS_REMOTE_READ;
	else if (op->flags & DROCE_OPF_ATOMIC)
		need = DROCE_ACCESS_REMOTE_ATOMIC;
	else if (op->flags & DROCE_OPF_WRITE)
		need = DROCE_ACCESS_REMOTE_WRITE; /* ATOMIC WRITE included, as rxe */
	return (qp->attr.qp_access_flags & need) == need;
}

enum droce_rst
droce_resp_execute(struct droce_qp *qp, const struct droce_pkt *p,
		   const struct droce_opcode_info *op, const uint8_t *frame)
{
	enum droce_rst st = check_opseq(qp, op);

	if (st != RST_DONE)
		return st;
	/* IBTA 9.7.5.2.2 (as rxe's check_op_valid): a READ, WRITE or atomic the QP is not
	 * enabled for (its remote access flags) is an Invalid Request, before any R_Key check */
	if (!qp_enabled(qp, op))
		return RST_ERR_QP_ACCESS;
	/* Responder resources: a new READ/atomic while max_dest_rd_atomic earlier ones still await
	 * their response is "too many RDMA READ or ATOMIC requests", an Invalid Request (IBTA
	 * 9.7.5.2.5, responder error behaviour): NAK; a duplicate re-uses its original's resource. */
	if ((op->flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC)) &&
	    qp->resp.rd_pending >= qp->attr.max_dest_rd_atomic)
		return RST_ERR_RD_RES;
	if (op->flags & DROCE_OPF_READ) {
		droce_qp_cnt(qp, DROCE_CNT_RX_READ_REQUESTS);
		return droce_resp_read(qp, p, false);
	}
	if (op->flags & DROCE_OPF_ATOMIC)
		return exec_atomic(qp, p);
	if (op->flags & DROCE_OPF_WRITE)
		return exec_write(qp, p, op, frame);
	return exec_send(qp, p, op, frame);
}
