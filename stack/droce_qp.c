/* SPDX-License-Identifier: BSD-3-Clause */
/* QP objects: create/destroy/query, posting work requests, completions, error and flush. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_ext.h"
#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_sr.h"
#include "wire/droce_srh.h"
#include "wire/droce_udp.h"

static uint16_t
qp_sport(uint32_t qpn)
{
	/* Stable per QP (its packets take one ECMP path, in order): 0xC000 | 14 bits of a
	 * multiplicative hash of the QPN. */
	return (uint16_t)(DROCE_UDP_SPORT_MIN | (((qpn * 2654435761u) >> 16) & 0x3FFF));
}

static int
check_init_attr(struct droce_pd *pd, const struct droce_qp_init_attr *a)
{
	const struct droce_qp_cap *c = &a->cap;

	if (pd == NULL || !pd->used || a == NULL)
		return -EINVAL;
	if (a->qp_type != DROCE_QPT_RC && a->qp_type != DROCE_QPT_UC && a->qp_type != DROCE_QPT_UD)
		return -EINVAL;
	if (a->send_cq == NULL || a->recv_cq == NULL || !a->send_cq->used || !a->recv_cq->used)
		return -EINVAL;
	if (a->srq != NULL && (!a->srq->used || a->srq->pd->dev != pd->dev))
		return -EINVAL;
	/* A queue of depth 0 is allowed (a QP that only initiates WRITEs and READs, or only
	 * receives), as rxe and mlx5 allow it: a post to it finds the queue full (-ENOMEM). */
	if (c->max_send_wr > DROCE_MAX_WR || c->max_recv_wr > DROCE_MAX_WR ||
	    c->max_send_sge > DROCE_MAX_SGE || c->max_recv_sge > DROCE_MAX_SGE ||
	    c->max_inline_data > DROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static struct droce_qp *
qp_slot(struct droce_dev *dev)
{
	int64_t i = droce_slots_take(&dev->qp_slots);

	return i < 0 ? NULL : &dev->qps[i];
}

static void
qp_free_mem(struct droce_qp *qp)
{
	free(qp->req.ring);
	free(qp->req.sges);
	free(qp->req.inline_buf);
	droce_resp_free(qp);
	free(qp->np_ud);
	droce_rq_fini(&qp->rq);
	free(qp->sr);
	qp->sr = NULL;
	qp->req.ring = NULL;
	qp->req.sges = NULL;
	qp->req.inline_buf = NULL;
	qp->np_ud = NULL;
}

/*
 * The congestion control a new QP runs: the one its attributes name (with their parameters, or
 * that algorithm's defaults for the device's link), else the device's (with the attributes'
 * parameters, or the device's). -EINVAL: an unknown name, or parameters the algorithm refuses.
 */
static int
qp_cc_choose(const struct droce_dev *dev, const struct droce_qp_init_attr *attr,
	     const struct droce_cc_ops **ops, union droce_cc_params *p)
{
	if (attr->cc != NULL) {
		*ops = droce_cc_find(&dev->cc_reg, attr->cc);
		if (*ops == NULL)
			return -EINVAL;
		if (attr->cc_params == NULL)
			droce_cc_defaults(*ops, p, dev->attr.link_bps);
	} else {
		*ops = dev->cc_default != NULL ? dev->cc_default : &droce_cc_none;
		if (attr->cc_params == NULL)
			*p = dev->cc_params;
	}
	if (attr->cc_params != NULL)
		*p = *attr->cc_params;
	return droce_cc_check(*ops, p);
}

/* (Re)start a QP's congestion control: zeroed state that points at the QP's parameters. */
static void
qp_cc_start(struct droce_qp *qp, uint64_t now_ns)
{
	memset(&qp->cc, 0, sizeof(qp->cc));
	qp->cc.params = &qp->cc_params;
	qp->cc_ops->init(&qp->cc, now_ns);
}

struct droce_qp *
droce_qp_create(struct droce_pd *pd, const struct droce_qp_init_attr *attr, int *err)
{
	const struct droce_cc_ops *cc_ops;
	union droce_cc_params cc_params;
	struct droce_dev *dev;
	struct droce_qp *qp;
	uint32_t n, bits, slot, sb, low, top;
	int e;

	e = check_init_attr(pd, attr);
	if (e != 0)
		goto fail;
	dev = pd->dev;
	e = qp_cc_choose(dev, attr, &cc_ops, &cc_params);
	if (e != 0)
		goto fail;
	for (bits = 0; (1u << bits) <= dev->qp_mask; bits++)
		;
	/* QPN = shard (top shard_bits) | generation | slot (low bits: O(1) lookup); at least one
	 * generation bit, so the loop below always finds a QPN. */
	sb = dev->attr.shard_bits;
	if (sb > 8 || bits + sb >= 24) {
		e = -EINVAL;
		goto fail;
	}
	top = sb != 0 ? ((uint32_t)dev->attr.shard & ((1u << sb) - 1)) << (24 - sb) : 0;
	if (attr->gsi) {
		/* QP1 is UD (IBTA 11.2.5, Annex A17.5.8). Its top bits say shard 0, where the
		 * runtime steers DestQP 1: on another shard it would never receive, unless the
		 * shard is a droce-portd slot (the service routes MADs itself). */
		if (attr->qp_type != DROCE_QPT_UD || (top != 0 && !dev->attr.gsi_any_shard)) {
			e = -EINVAL;
			goto fail;
		}
		qp = &dev->qps[DROCE_QPN_GSI]; /* its own slot: droce_dev_qp() finds it */
		if (qp->used) {
			e = -EBUSY;
			goto fail;
		}
	} else {
		qp = qp_slot(dev);
		if (qp == NULL) {
			e = -ENOMEM;
			goto fail;
		}
	}
	memset(qp, 0, sizeof(*qp));
	slot = (uint32_t)(qp - dev->qps);
	low = DROCE_PSN_MASK >> sb;
	/* The generation makes a reused slot a different QPN; 0xFFFFFF is the multicast QPN
	 * (IBTA 10.5.2.2). The slot (>= 2, and bits + sb < 24 keeps it whole) is the QPN's low
	 * bits, so no generation yields QPN 0 or 1, the special QPs (IBTA 11.2.5). */
	if (attr->gsi)
		qp->qpn = DROCE_QPN_GSI;
	else
		do
			qp->qpn = top | (((dev->qpn_gen++ << bits) | slot) & low);
		while (qp->qpn == 0xFFFFFF);
	qp->dev = dev;
	qp->pd = pd;
	qp->type = attr->qp_type;
	qp->scq = attr->send_cq;
	qp->rcq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->cap = attr->cap;
	qp->mcast_no_self = attr->block_self_mcast_lb;
	if (qp->cap.max_send_sge == 0)
		qp->cap.max_send_sge = 1;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->context = attr->qp_context;
	qp->udp_sport = qp_sport(qp->qpn);
	n = droce_pow2_at_least(qp->cap.max_send_wr);
	qp->req.mask = n - 1;
	qp->req.max_wr = qp->cap.max_send_wr;
	qp->req.ring = calloc(n, sizeof(*qp->req.ring));
	qp->req.sges = calloc((size_t)n * qp->cap.max_send_sge, sizeof(*qp->req.sges));
	if (qp->cap.max_inline_data)
		qp->req.inline_buf = calloc(n, qp->cap.max_inline_data);
	/* UD: where a CNP goes is learnt per marked packet (droce_np.c) */
	if (qp->type == DROCE_QPT_UD)
		qp->np_ud = calloc(1, sizeof(*qp->np_ud));
	if (qp->req.ring == NULL || qp->req.sges == NULL || droce_resp_reserve(qp, 0) != 0 ||
	    (qp->type == DROCE_QPT_UD && qp->np_ud == NULL) ||
	    (qp->cap.max_inline_data && qp->req.inline_buf == NULL) ||
	    (qp->srq == NULL &&
	     droce_rq_init(&qp->rq, qp->cap.max_recv_wr, qp->cap.max_recv_sge) != 0)) {
		qp_free_mem(qp);
		droce_slots_put(&dev->qp_slots, slot);
		e = -ENOMEM;
		goto fail;
	}
	qp->state = DROCE_QPS_RESET;
	qp->attr.qp_state = DROCE_QPS_RESET;
	qp->attr.cap = qp->cap;
	qp->attr.port_num = DROCE_PORT_NUM;
	qp->req.rto_at = qp->req.rnr_at = qp->cc_at = qp->ack_due = UINT64_MAX;
	qp->deadline = UINT64_MAX;
	qp->np_last = UINT64_MAX;
	qp->cc_ops = cc_ops;
	qp->cc_params = cc_params;
	qp_cc_start(qp, dev->now);
	droce_inflight_init(qp);
	droce_qp_set_mtu(qp, (enum droce_mtu)dev->active_mtu);
	qp->used = true;
	if (dev->sr_default && qp->type == DROCE_QPT_RC &&
	    droce_qp_set_recovery(qp, DROCE_RECOVERY_SR) != 0) {
		droce_qp_destroy(qp);
		e = -ENOMEM;
		goto fail;
	}
	pd->refs++;
	qp->scq->refs++;
	qp->rcq->refs++;
	if (qp->srq)
		qp->srq->refs++;
	return qp;
fail:
	if (err)
		*err = -e;
	return NULL;
}

int
droce_qp_destroy(struct droce_qp *qp)
{
	struct droce_dev *dev;
	unsigned int i;

	if (qp == NULL || !qp->used)
		return -EINVAL;
	dev = qp->dev;
	droce_sched_unready(qp);
	droce_ack_drop(qp);
	qp->req.rto_at = qp->req.rnr_at = qp->cc_at = UINT64_MAX;
	droce_sched_deadline(qp);
	if (dev->rto_prober == qp->qpn)
		dev->rto_heard = true; /* no probe of the path left: the next early resend goes */
	droce_mcast_detach_all(qp);    /* as the kernel does for a QP destroyed attached */
	droce_mw_qp_gone(qp);	       /* its type 2 windows: no QP left to serve */
	for (i = 0; i < DROCE_CNT_MAX; i++)
		dev->cnt_gone[i] += qp->cnt[i];
	qp_free_mem(qp);
	qp->used = false;
	droce_slots_put(&dev->qp_slots, (uint32_t)(qp - dev->qps)); /* not the GSI's */
	qp->pd->refs--;
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	return 0;
}

uint32_t
droce_qp_num(const struct droce_qp *qp)
{
	return qp->qpn;
}

int
droce_qp_query(const struct droce_qp *qp, struct droce_qp_attr *attr,
	       struct droce_qp_init_attr *init)
{
	if (qp == NULL || !qp->used)
		return -EINVAL;
	if (attr) {
		*attr = qp->attr;
		attr->qp_state = qp->state;
		attr->cur_qp_state = qp->state;
		attr->cap = qp->cap;
		attr->sq_draining = qp->state == DROCE_QPS_SQD && qp->req.comp != qp->req.next;
	}
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_type = qp->type;
		init->send_cq = qp->scq;
		init->recv_cq = qp->rcq;
		init->srq = qp->srq;
		init->cap = qp->cap;
		init->sq_sig_all = qp->sq_sig_all;
		init->qp_context = qp->context;
		init->cc = qp->cc_ops->name;
		init->cc_params = &qp->cc_params;
		init->gsi = qp->qpn == DROCE_QPN_GSI;
		init->block_self_mcast_lb = qp->mcast_no_self;
	}
	return 0;
}

void
droce_qp_set_mtu(struct droce_qp *qp, enum droce_mtu mtu)
{
	qp->attr.path_mtu = mtu;
	qp->mtu = droce_mtu_bytes(mtu);
	qp->seg = qp->mtu - (qp->sr != NULL ? DROCE_SRH_ROOM : 0);
	droce_inflight_update(qp); /* the cap is counted in packets of this MTU */
}

int
droce_qp_set_cc(struct droce_qp *qp, const struct droce_cc_ops *ops, const union droce_cc_params *p,
		uint64_t now_ns)
{
	union droce_cc_params v;

	if (qp == NULL || !qp->used)
		return -EINVAL;
	if (ops == NULL)
		ops = &droce_cc_none;
	if (p == NULL)
		droce_cc_defaults(ops, &v, qp->dev->attr.link_bps);
	else
		v = *p;
	if (droce_cc_check(ops, &v) != 0)
		return -EINVAL;
	qp->cc_ops = ops;
	qp->cc_params = v;
	qp_cc_start(qp, now_ns);
	return 0;
}

int
droce_dev_set_cc(struct droce_dev *dev, const struct droce_cc_ops *ops,
		 const union droce_cc_params *p)
{
	union droce_cc_params v;

	if (dev == NULL)
		return -EINVAL;
	if (ops == NULL)
		ops = &droce_cc_none;
	if (p == NULL)
		droce_cc_defaults(ops, &v, dev->attr.link_bps);
	else
		v = *p;
	if (droce_cc_check(ops, &v) != 0)
		return -EINVAL;
	dev->cc_default = ops;
	dev->cc_params = v;
	return 0;
}

int
droce_dev_cc_register(struct droce_dev *dev, const struct droce_cc_ops *ops)
{
	if (dev == NULL)
		return -EINVAL;
	return droce_cc_register(&dev->cc_reg, ops);
}

const struct droce_cc_ops *
droce_dev_cc_find(const struct droce_dev *dev, const char *name)
{
	return droce_cc_find(dev != NULL ? &dev->cc_reg : NULL, name);
}

const struct droce_cc_ops *
droce_dev_cc(const struct droce_dev *dev, const union droce_cc_params **p)
{
	if (dev == NULL)
		return NULL;
	if (p != NULL)
		*p = &dev->cc_params;
	return dev->cc_default != NULL ? dev->cc_default : &droce_cc_none;
}

struct droce_qp *
droce_dev_qp_next(struct droce_dev *dev, const struct droce_qp *prev)
{
	int64_t i = droce_qp_slot_next(dev, prev == NULL ? 0 : (uint32_t)(prev - dev->qps) + 1);

	return i >= 0 ? &dev->qps[i] : NULL;
}

const struct droce_cc_ops *
droce_qp_cc(const struct droce_qp *qp, const struct droce_cc_state **state)
{
	if (qp == NULL || !qp->used)
		return NULL;
	if (state != NULL)
		*state = &qp->cc;
	return qp->cc_ops;
}

static enum droce_wc_opcode
wc_opcode(enum droce_wr_opcode op)
{
	switch (op) {
	case DROCE_WR_RDMA_WRITE:
	case DROCE_WR_RDMA_WRITE_WITH_IMM:
		return DROCE_WC_RDMA_WRITE;
	case DROCE_WR_RDMA_READ:
		return DROCE_WC_RDMA_READ;
	case DROCE_WR_ATOMIC_CMP_AND_SWP:
		return DROCE_WC_COMP_SWAP;
	case DROCE_WR_ATOMIC_FETCH_AND_ADD:
		return DROCE_WC_FETCH_ADD;
	case DROCE_WR_BIND_MW:
		return DROCE_WC_BIND_MW;
	case DROCE_WR_LOCAL_INV:
		return DROCE_WC_LOCAL_INV;
	case DROCE_WR_ATOMIC_WRITE:
		return DROCE_WC_ATOMIC_WRITE;
	default:
		return DROCE_WC_SEND;
	}
}

/* A send completion: always on error, otherwise when signaled (IBTA 10.8.3 / verbs). */
void
droce_qp_send_cqe(struct droce_qp *qp, const struct droce_swqe *w, enum droce_wc_status st)
{
	struct droce_wc *wc;

	if (st == DROCE_WC_SUCCESS && !qp->sq_sig_all && !(w->flags & DROCE_SEND_SIGNALED))
		return;
	if (st == DROCE_WC_WR_FLUSH_ERR)
		droce_qp_cnt(qp, DROCE_CNT_REQ_CQE_FLUSH_ERROR);
	else if (st != DROCE_WC_SUCCESS)
		droce_qp_cnt(qp, DROCE_CNT_REQ_CQE_ERROR);
	/* Written in its ring slot: no copy through the stack. */
	wc = droce_cq_slot(qp->scq);
	if (wc == NULL)
		return;
	*wc = (struct droce_wc){
		.wr_id = w->wr_id,
		.status = st,
		.opcode = wc_opcode(w->opcode),
		.byte_len = w->length,
		.qp_num = qp->qpn,
	};
	droce_cq_commit(qp->scq, wc, false);
}

void
droce_qp_recv_count(struct droce_qp *qp, enum droce_wc_status st)
{
	if (st == DROCE_WC_WR_FLUSH_ERR)
		droce_qp_cnt(qp, DROCE_CNT_RESP_CQE_FLUSH_ERROR);
	else if (st != DROCE_WC_SUCCESS)
		droce_qp_cnt(qp, DROCE_CNT_RESP_CQE_ERROR);
	else
		droce_qp_cnt(qp, DROCE_CNT_RDMA_RECVS);
}

void
droce_qp_recv_cqe(struct droce_qp *qp, struct droce_wc *wc, bool solicited)
{
	wc->qp_num = qp->qpn;
	droce_qp_recv_count(qp, wc->status);
	droce_cq_push(qp->rcq, wc, solicited);
}

static void
flush_rwqe(struct droce_qp *qp, uint64_t wr_id)
{
	struct droce_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = DROCE_WC_WR_FLUSH_ERR;
	wc.opcode = DROCE_WC_RECV;
	droce_qp_recv_cqe(qp, &wc, false);
}

/* IBTA 10.3.1 / 11.6.2: in the error state every outstanding WR completes, in order, with a
 * flush error; an SRQ's WQEs stay for other QPs and the last-WQE event tells the owner. */
void
droce_qp_flush(struct droce_qp *qp)
{
	struct droce_requester *r = &qp->req;

	for (; r->comp != r->head; r->comp++)
		droce_qp_send_cqe(qp, &r->ring[r->comp & r->mask], DROCE_WC_WR_FLUSH_ERR);
	r->next = r->head;
	if (qp->resp.have_rwqe) {
		qp->resp.have_rwqe = false;
		flush_rwqe(qp, qp->resp.rwqe.wr_id);
	}
	if (qp->sr != NULL)
		droce_sr_srq_flush(qp);
	if (qp->srq == NULL) {
		for (; qp->rq.tail != qp->rq.head; qp->rq.tail++)
			flush_rwqe(qp, qp->rq.ring[qp->rq.tail & qp->rq.mask].wr_id);
	}
	droce_ack_drop(qp); /* the ACK it held goes with the ring */
	qp->resp.ring_head = qp->resp.ring_tail = 0;
	qp->resp.rd_pending = 0;
	qp->resp.final_nak_pending = false; /* ERR another way first: nothing more goes out */
	r->rto_at = r->rnr_at = qp->cc_at = UINT64_MAX;
	droce_sched_deadline(qp);
	droce_sched_unready(qp);
}

void
droce_qp_error(struct droce_qp *qp)
{
	if (qp->state == DROCE_QPS_ERR)
		return;
	qp->state = DROCE_QPS_ERR;
	qp->attr.qp_state = DROCE_QPS_ERR;
	droce_qp_flush(qp);
	if (qp->srq != NULL)
		droce_dev_event(qp->dev, DROCE_EVENT_QP_LAST_WQE_REACHED, qp);
}

/* Send queue error (UC/UD): the send queue flushes, receives go on until SQE -> RTS. */
void
droce_qp_sq_error(struct droce_qp *qp)
{
	struct droce_requester *r = &qp->req;

	if (qp->state == DROCE_QPS_ERR)
		return;
	qp->state = qp->attr.qp_state = DROCE_QPS_SQE;
	for (; r->comp != r->head; r->comp++)
		droce_qp_send_cqe(qp, &r->ring[r->comp & r->mask], DROCE_WC_WR_FLUSH_ERR);
	r->next = r->sent_hi = r->head;
	r->off = 0;
	r->cur.sge = r->cur.off = r->cur.pos = 0;
}

/* Back to RESET: every queue emptied without completions (IBTA 10.3.1 "Reset"). */
void
droce_qp_reset(struct droce_qp *qp)
{
	droce_sched_unready(qp);
	droce_ack_drop(qp);
	{
		struct droce_responder s = qp->resp;

		memset(&qp->resp, 0, sizeof(qp->resp));
		qp->resp.ring = s.ring;
		qp->resp.ring_mask = s.ring_mask;
		qp->resp.atomics = s.atomics;
		qp->resp.n_atomics = s.n_atomics;
		memset(s.atomics, 0, s.n_atomics * sizeof(*s.atomics));
	}
	{
		struct droce_requester s = qp->req;

		memset(&qp->req, 0, sizeof(qp->req));
		qp->req.ring = s.ring;
		qp->req.sges = s.sges;
		qp->req.inline_buf = s.inline_buf;
		qp->req.mask = s.mask;
		qp->req.max_wr = s.max_wr;
	}
	qp->req.rto_at = qp->req.rnr_at = qp->cc_at = UINT64_MAX;
	droce_sched_deadline(qp);
	qp->rq.head = qp->rq.tail = 0;
	droce_sr_reset(qp);
	qp->np_pending = false;
	qp->np_last = UINT64_MAX;
	qp_cc_start(qp, qp->dev->now);
	droce_inflight_reset(qp);
}
