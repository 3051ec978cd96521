/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: turns send WQEs into packets (IBTA 9.7.1-9.7.4): segmentation by path MTU, PSN
 * assignment, AckReq policy, the READ/atomic limit and fence, the in-flight window, congestion
 * control pacing, and go-back-N rewinding for retransmission.
 */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_byteorder.h"
#include "droce_psn.h"
#include "droce_sr.h"

/* Opcodes by [operation][first][last]; UC is RC + 0x20 (IBTA 9.2.1 table 38). */
enum { K_SEND, K_SEND_IMM, K_SEND_INV, K_WRITE, K_WRITE_IMM, K_MAX };

static const uint8_t rc_opcode[K_MAX][2][2] = {
	[K_SEND] = { { DROCE_OP_RC_SEND_MIDDLE, DROCE_OP_RC_SEND_LAST },
		     { DROCE_OP_RC_SEND_FIRST, DROCE_OP_RC_SEND_ONLY } },
	[K_SEND_IMM] = { { DROCE_OP_RC_SEND_MIDDLE, DROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE },
			 { DROCE_OP_RC_SEND_FIRST, DROCE_OP_RC_SEND_ONLY_WITH_IMMEDIATE } },
	[K_SEND_INV] = { { DROCE_OP_RC_SEND_MIDDLE, DROCE_OP_RC_SEND_LAST_WITH_INVALIDATE },
			 { DROCE_OP_RC_SEND_FIRST, DROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE } },
	[K_WRITE] = { { DROCE_OP_RC_RDMA_WRITE_MIDDLE, DROCE_OP_RC_RDMA_WRITE_LAST },
		      { DROCE_OP_RC_RDMA_WRITE_FIRST, DROCE_OP_RC_RDMA_WRITE_ONLY } },
	[K_WRITE_IMM] = { { DROCE_OP_RC_RDMA_WRITE_MIDDLE,
			    DROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE },
			  { DROCE_OP_RC_RDMA_WRITE_FIRST,
			    DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE } },
};

static int
wr_kind(enum droce_wr_opcode op)
{
	switch (op) {
	case DROCE_WR_SEND_WITH_IMM:
		return K_SEND_IMM;
	case DROCE_WR_SEND_WITH_INV:
		return K_SEND_INV;
	case DROCE_WR_RDMA_WRITE:
		return K_WRITE;
	case DROCE_WR_RDMA_WRITE_WITH_IMM:
		return K_WRITE_IMM;
	default:
		return K_SEND;
	}
}

/* Rewind transmission to psn (go-back-N, IBTA 9.7.5.2.x): the WQE holding it and every later one
 * are sent again with their original PSNs; a READ resumes at the first missing response. */
void
droce_req_go_back(struct droce_qp *qp, uint32_t psn)
{
	struct droce_requester *r = &qp->req;
	uint32_t i, rd = 0;

	/* Karn: an ACK after a rewind may answer the resend; no message sent so far is timed.
	 * (Only a congestion control that asked for samples pays for the walk.) */
	qp->inf.timing = false;
	if (qp->cc_ops->on_rtt != NULL)
		for (i = r->comp; i != r->sent_hi; i++)
			r->ring[i & r->mask].timed = false;
	for (i = r->comp; i != r->sent_hi; i++) {
		struct droce_swqe *w = &r->ring[i & r->mask];

		if (droce_psn_diff(psn, droce_psn_add(w->first_psn, w->npkts)) < 0)
			break;
		if (droce_wr_is_rd_atomic(w->opcode) && w->state != DROCE_SWQE_DONE)
			rd++;
	}
	if (i != r->sent_hi && droce_psn_lt(psn, r->ring[i & r->mask].first_psn))
		psn = r->ring[i & r->mask].first_psn; /* never restart inside nothing */
	r->next = i;
	r->rd_out = rd;
	r->psn = psn;
	r->since_ackreq = 0;
	droce_rd_go_back(qp, psn);
	r->off = 0;
	r->cur.sge = r->cur.off = r->cur.pos = 0;
	if (i != r->head && r->ring[i & r->mask].state != DROCE_SWQE_POSTED) {
		struct droce_swqe *w = &r->ring[i & r->mask];

		r->off = (uint32_t)droce_psn_diff(psn, w->first_psn) *
			 (w->opcode == DROCE_WR_RDMA_READ ? qp->mtu : droce_swqe_seg(qp, w));
		if (w->opcode != DROCE_WR_RDMA_READ)
			droce_cursor_seek(&r->cur, w->sge, w->num_sge, r->off);
	}
	droce_sched_ready(qp);
}

static void
fill_hdr(struct droce_qp *qp, const struct droce_swqe *w, struct droce_pkt *p)
{
	if (qp->type == DROCE_QPT_UD) {
		droce_qp_tmpl_from_av(qp, &w->ah->av, p);
		p->dqpn = w->remote_qpn;
		/* IBTA 10.2.5 (C10-15): a Q_Key with its high bit set means "the QP's Q_Key". */
		p->deth_qkey = (w->remote_qkey & 0x80000000u) ? qp->attr.qkey : w->remote_qkey;
		p->deth_sqpn = qp->qpn;
	} else {
		droce_tx_pkt_init(qp, p);
	}
}

/* A WQE's first packet: validate its local buffers once (IBTA 10.7.x: local protection). */
static int
check_local(struct droce_qp *qp, struct droce_swqe *w)
{
	unsigned int acc = droce_wr_is_rd_atomic(w->opcode) ? DROCE_ACCESS_LOCAL_WRITE : 0;
	uint32_t i;

	for (i = 0; i < w->num_sge; i++)
		if (droce_mr_check_local(qp->pd, &w->sge[i], acc) != 0)
			return -EACCES;
	w->checked = true;
	return 0;
}

/* The in-flight cap (droce_inflight.c); an ACK reschedules us. A READ or atomic is one request
 * packet whose responses the responder paces: max_rd_atomic bounds those. With selective repeat
 * the cap counts what is in the network (RFC 6675's pipe): a packet the responder reported kept
 * has left it. So past a hole new packets keep going, and the NAKs they draw show a resend lost
 * again at once, where counting from una held the window until the RTO. The span from una stays
 * within DROCE_MAX_INFLIGHT (below DROCE_SR_WIN, what the responder keeps). */
static bool
capped(const struct droce_qp *qp, const struct droce_swqe *w)
{
	const struct droce_requester *r = &qp->req;
	int32_t out = droce_psn_diff(r->psn, r->una);

	if (out >= DROCE_MAX_INFLIGHT)
		return true;
	if (droce_wr_is_rd_atomic(w->opcode))
		return false;
	if (droce_unlikely(qp->sr != NULL) && qp->sr->peer && r->psn == r->max_psn_sent)
		out -= (int32_t)qp->sr->sacked_n;
	return out >= (int32_t)qp->inf.limit;
}

/* May this WQE go now? 0 yes, 1 wait for something that reschedules us. */
static int
gate(struct droce_qp *qp, struct droce_swqe *w)
{
	struct droce_requester *r = &qp->req;
	uint32_t lim = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;

	if (w->state == DROCE_SWQE_POSTED) {
		/* SQD: no new message starts (IBTA 10.3.1.4). */
		if (qp->state != DROCE_QPS_RTS)
			return 1;
		/* IBTA 10.8.3.3: a fenced WR waits for earlier READ/atomic to complete. */
		if ((w->flags & DROCE_SEND_FENCE) && r->rd_out > 0)
			return 1;
		if (droce_unlikely(qp->sr != NULL) && qp->sr->peer && droce_sr_fence(qp, w))
			return 1;
	}
	if (droce_wr_is_rd_atomic(w->opcode) && r->rd_out >= lim)
		return 1;
	if (qp->type == DROCE_QPT_RC && capped(qp, w))
		return 1;
	/* Selective repeat, peer unknown: one request out, its response says whether the peer
	 * marks (droce_sr.h); a window of unmarked packets would recover by go-back-N. */
	if (droce_unlikely(qp->sr != NULL) && !qp->sr->known && r->psn != r->una)
		return 1;
	return 0;
}

static void
after_send(struct droce_qp *qp, struct droce_swqe *w, bool last, uint32_t npsn, uint64_t now,
	   uint32_t bytes)
{
	struct droce_requester *r = &qp->req;

	bool resend = droce_psn_lt(r->psn, r->max_psn_sent);

	if (droce_unlikely(qp->sr != NULL))
		droce_sr_sent(qp, r->psn);

	if (resend)
		droce_qp_cnt(qp, DROCE_CNT_RETRANSMITTED_PKTS);
	/* A message's last packet asks for an ACK: the time to it is a round-trip sample, if
	 * this is its first transmission (Karn: a resent one cannot be told from the first). */
	if (last) {
		w->timed = !resend && qp->cc_ops->on_rtt != NULL;
		w->sent_ns = now;
	}
	/* One AckReq'd packet at a time is timed for the RTO (droce_inflight.c) */
	if (!resend && r->since_ackreq == 0)
		droce_inflight_sent(qp, r->psn, now);
	r->psn = droce_psn_add(r->psn, npsn);
	if (droce_psn_lt(r->max_psn_sent, r->psn))
		r->max_psn_sent = r->psn;
	qp->cc_ops->on_send(&qp->cc, bytes, now);
	qp->cc.held = false;
	/* IBTA 9.7.6.1.3: the local ACK timer runs while any request packet is unacknowledged,
	 * so any packet starts it, not only a message's last: a message longer than the window,
	 * or resent after an RNR NAK, would otherwise fill the window with no timer running and
	 * wait forever if its ACKs are lost (rxe restarts it on every packet sent). */
	if (qp->type == DROCE_QPT_RC && r->rto_at == UINT64_MAX)
		droce_comp_arm_rto(qp, now);
	if (!last) {
		if (w->state == DROCE_SWQE_POSTED)
			w->state = DROCE_SWQE_STARTED; /* a resend never demotes SENT */
		return;
	}
	w->state = DROCE_SWQE_SENT;
	r->next++;
	r->off = 0;
	r->cur.sge = r->cur.off = r->cur.pos = 0;
	if (qp->type != DROCE_QPT_RC) {
		/* UC and UD complete once sent (IBTA 9.8.x: no acknowledgement). */
		droce_comp_complete(qp, DROCE_WC_SUCCESS);
		return;
	}
}

/* One data packet of w: PSN psn, its data from byte off, where the cursor c stands. With
 * selective repeat its placement header goes first (stack/wire/droce_srh.h). 1 or -EAGAIN. */
static int
xmit_data(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint32_t off, bool ackreq,
	  struct droce_cursor *c, uint32_t *frame_len)
{
	uint32_t rem = w->length - off, seg = droce_swqe_seg(qp, w);
	uint32_t pay = rem < seg ? rem : seg, hdr = 0;
	bool first = off == 0, last = rem <= seg;
	struct droce_pkt p;
	uint8_t *buf, *data;
	void *cookie;
	int k = wr_kind(w->opcode);

	fill_hdr(qp, w, &p);
	if (qp->type == DROCE_QPT_UD)
		p.opcode = w->opcode == DROCE_WR_SEND_WITH_IMM ?
				   DROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
				   DROCE_OP_UD_SEND_ONLY;
	else
		p.opcode = (uint8_t)(rc_opcode[k][first][last] +
				     (qp->type == DROCE_QPT_UC ? 0x20 : 0));
	p.psn = psn;
	if (first && (k == K_WRITE || k == K_WRITE_IMM)) {
		p.reth_va = w->raddr;
		p.reth_rkey = w->rkey;
		p.reth_len = w->length;
	}
	if (last) {
		p.imm = droce_be32_to_cpu(w->imm); /* verbs hands ImmDt in network order */
		p.ieth_rkey = w->inv_rkey;
		p.se = (w->flags & DROCE_SEND_SOLICITED) && k != K_WRITE;
	}
	p.ackreq = ackreq;
	if (droce_unlikely(w->sr)) {
		p.srcap = true;
		hdr = droce_sr_hdr_len(p.opcode);
	}
	buf = droce_tx_begin(qp, &p, hdr + pay, &cookie, &data);
	if (buf == NULL)
		return -EAGAIN;
	if (hdr != 0) {
		droce_sr_hdr_put(data, p.opcode, w, off);
		if (pay != 0)
			droce_copy_out(data + hdr, w->sge, c, pay);
		droce_tx_end(qp, &p, buf, cookie);
	} else {
		droce_tx_payload_end(qp, &p, buf, cookie, data, w->sge, c);
	}
	*frame_len = p.frame_len;
	return 1;
}

static int
send_data(struct droce_qp *qp, struct droce_swqe *w, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	uint32_t rem = w->length - r->off, seg = droce_swqe_seg(qp, w);
	uint32_t pay = rem < seg ? rem : seg, flen;
	bool first = r->off == 0, last = rem <= seg, ackreq = false;
	int rc;

	/* AckReq (IBTA 9.7.2): on a message's last packet, every Nth so the window moves, and the
	 * last of the QP's transmit turn, whose packets would otherwise wait for its next turn. */
	if (qp->type == DROCE_QPT_RC)
		ackreq = last || ++r->since_ackreq >= qp->inf.ackreq_every || qp->dev->turn_end ||
			 (qp->sr != NULL && !qp->sr->known); /* the probe (gate) */
	if (ackreq)
		r->since_ackreq = 0;
	rc = xmit_data(qp, w, r->psn, r->off, ackreq, &r->cur, &flen);
	if (rc != 1)
		return rc;
	r->off += pay;
	if (first && w->state == DROCE_SWQE_POSTED)
		droce_qp_cnt(qp, DROCE_CNT_RDMA_SENDS);
	after_send(qp, w, last, 1, now, flen);
	return 1;
}

/* A READ request for n of w's response PSNs from psn: a re-request asks only for what is
 * missing, its VA advanced and its length cut to match (IBTA 9.7.5.2.x READ retry). */
static void
fill_read(struct droce_qp *qp, const struct droce_swqe *w, struct droce_pkt *p, uint32_t psn,
	  uint32_t n)
{
	uint32_t done = (uint32_t)droce_psn_diff(psn, w->first_psn);

	droce_tx_pkt_init(qp, p);
	p->opcode = DROCE_OP_RC_RDMA_READ_REQUEST;
	p->psn = psn;
	p->ackreq = true;
	p->srcap = w->sr;
	p->reth_va = w->raddr + (uint64_t)done * qp->mtu;
	p->reth_rkey = w->rkey;
	p->reth_len = done + n >= w->npkts ? w->length - done * qp->mtu : n * qp->mtu;
}

static void
fill_atomic(struct droce_qp *qp, const struct droce_swqe *w, struct droce_pkt *p, uint32_t psn)
{
	droce_tx_pkt_init(qp, p);
	p->opcode = w->opcode == DROCE_WR_ATOMIC_CMP_AND_SWP ? DROCE_OP_RC_COMPARE_SWAP :
							       DROCE_OP_RC_FETCH_ADD;
	p->psn = psn;
	p->ackreq = true;
	p->srcap = w->sr;
	p->atomic_va = w->raddr;
	p->atomic_rkey = w->rkey;
	if (w->opcode == DROCE_WR_ATOMIC_CMP_AND_SWP) {
		p->atomic_swap_add = w->swap;
		p->atomic_compare = w->compare_add;
	} else {
		p->atomic_swap_add = w->compare_add;
		p->atomic_compare = 0;
	}
}

static int
send_read(struct droce_qp *qp, struct droce_swqe *w, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	uint32_t done;
	struct droce_pkt p;
	uint8_t *buf, *data;
	void *cookie;

	/* A rewind resends a READ from its first missing response, never from below it: the
	 * responder may have moved the READ's start to an earlier re-request's (droce_comp_rd.c),
	 * and one fully answered is passed over. */
	if (w->state != DROCE_SWQE_POSTED) {
		r->psn = droce_rd_first_missing(qp, w, r->psn);
		if (r->psn == droce_psn_add(w->first_psn, w->npkts)) {
			r->rd_out++; /* given back when it completes */
			r->next++;
			return 1;
		}
	}
	done = (uint32_t)droce_psn_diff(r->psn, w->first_psn);
	fill_read(qp, w, &p, r->psn, w->npkts - done);
	buf = droce_tx_begin(qp, &p, 0, &cookie, &data);
	if (buf == NULL)
		return -EAGAIN;
	droce_tx_end(qp, &p, buf, cookie);
	r->rd_out++;
	r->since_ackreq = 0;
	after_send(qp, w, true, w->npkts - done, now, p.frame_len);
	return 1;
}

static int
send_atomic(struct droce_qp *qp, struct droce_swqe *w, uint64_t now)
{
	struct droce_pkt p;
	uint8_t *buf, *data;
	void *cookie;

	fill_atomic(qp, w, &p, qp->req.psn);
	buf = droce_tx_begin(qp, &p, 0, &cookie, &data);
	if (buf == NULL)
		return -EAGAIN;
	droce_tx_end(qp, &p, buf, cookie);
	qp->req.rd_out++;
	qp->req.since_ackreq = 0;
	after_send(qp, w, true, 1, now, p.frame_len);
	return 1;
}

/* ATOMIC WRITE (IBTA 1.5): one packet, a RETH for 8 bytes, the 8 bytes from the WQE, at psn
 * (first send or resend); *flen the frame's length. 1 or -EAGAIN. */
static int
xmit_atomic_write(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint32_t *flen)
{
	struct droce_pkt p;
	uint8_t *buf, *data;
	void *cookie;

	droce_tx_pkt_init(qp, &p);
	p.opcode = DROCE_OP_RC_ATOMIC_WRITE;
	p.srcap = w->sr;
	p.psn = psn;
	p.ackreq = true;
	p.reth_va = w->raddr;
	p.reth_rkey = w->rkey;
	p.reth_len = sizeof(w->swap);
	buf = droce_tx_begin(qp, &p, sizeof(w->swap), &cookie, &data);
	if (buf == NULL)
		return -EAGAIN;
	memcpy(data, &w->swap, sizeof(w->swap));
	droce_tx_end(qp, &p, buf, cookie);
	*flen = p.frame_len;
	return 1;
}

/* An ACK completes an ATOMIC WRITE as it does a WRITE, and a duplicate is only ACKed again, so
 * it holds no responder resource and takes no max_rd_atomic credit (as rxe). */
static int
send_atomic_write(struct droce_qp *qp, struct droce_swqe *w, uint64_t now)
{
	uint32_t flen;

	if (xmit_atomic_write(qp, w, qp->req.psn, &flen) != 1)
		return -EAGAIN;
	if (w->state == DROCE_SWQE_POSTED)
		droce_qp_cnt(qp, DROCE_CNT_RDMA_SENDS);
	qp->req.since_ackreq = 0;
	after_send(qp, w, true, 1, now, flen);
	return 1;
}

/*
 * BIND_MW and LOCAL_INV act on this side alone, in send-queue order, with no packet and no PSN
 * (npkts 0): the completer completes such a WQE with the one before it (droce_comp_complete),
 * so completions stay in order. A refused one completes in error (MW_BIND_ERR, LOC_QP_OP_ERR as
 * rxe) once those before it are done, as a local protection error does. A rewind passes an
 * executed one again without a second execution.
 */
static int
local_op(struct droce_qp *qp, struct droce_swqe *w)
{
	struct droce_requester *r = &qp->req;
	enum droce_wc_status st;

	if (w->state != DROCE_SWQE_POSTED) {
		r->next++;
		return 1;
	}
	if (w->opcode == DROCE_WR_BIND_MW)
		st = droce_mw_bind(qp, w);
	else
		st = droce_mw_invalidate(qp, w->inv_rkey) == 0 ? DROCE_WC_SUCCESS :
								 DROCE_WC_LOC_QP_OP_ERR;
	if (st != DROCE_WC_SUCCESS) {
		if (r->comp != r->next)
			return 0; /* retried when an ACK completes the ones before */
		droce_qp_cnt(qp, DROCE_CNT_MW_OP_ERR);
		droce_comp_complete(qp, st);
		return 0;
	}
	droce_qp_cnt(qp,
		     w->opcode == DROCE_WR_BIND_MW ? DROCE_CNT_MW_BIND : DROCE_CNT_MW_INVALIDATE);
	w->first_psn = r->psn;
	w->state = DROCE_SWQE_SENT;
	r->sent_hi = r->next + 1;
	if (r->comp == r->next) {
		droce_comp_complete(qp, DROCE_WC_SUCCESS); /* moves next past it */
		return 1;
	}
	r->next++;
	return 1;
}

/* A READ request for n packets from psn, or an atomic's request, at psn (a first send's
 * builders, for a resend or a re-request); *flen the frame's length. 1 or -EAGAIN. */
static int
xmit_rd_request(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint32_t n, uint32_t *flen)
{
	struct droce_pkt p;
	uint8_t *buf, *data;
	void *cookie;

	if (w->opcode == DROCE_WR_RDMA_READ)
		fill_read(qp, w, &p, psn, n);
	else
		fill_atomic(qp, w, &p, psn);
	buf = droce_tx_begin(qp, &p, 0, &cookie, &data);
	if (buf == NULL)
		return -EAGAIN;
	droce_tx_end(qp, &p, buf, cookie);
	*flen = p.frame_len;
	return 1;
}

/* One re-request for a run of READ/atomic responses lost past a gap (droce_comp_rd.c), ahead
 * of new work: it holds up completions. It takes no max_rd_atomic credit: the request it
 * repeats already holds one. 1 sent, 0 none due, -EAGAIN. */
static int
send_rereq(struct droce_qp *qp, uint64_t now)
{
	struct droce_swqe *w;
	uint32_t psn, n, flen;

	w = droce_rd_rereq_next(qp, &psn, &n);
	if (w == NULL)
		return 0;
	if (xmit_rd_request(qp, w, psn, n, &flen) != 1)
		return -EAGAIN;
	droce_qp_cnt(qp, DROCE_CNT_RETRANSMITTED_PKTS);
	droce_rd_rereq_sent(qp, w, psn, n);
	qp->cc_ops->on_send(&qp->cc, flen, now);
	if (qp->req.rto_at == UINT64_MAX)
		droce_comp_arm_rto(qp, now);
	return 1;
}

/* Selective repeat (droce_sr_req.c): one PSN of w sent again alone, the transmit position and
 * the WQE's state untouched; a READ or an atomic sends its whole request again. */
int
droce_req_resend(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint64_t now)
{
	uint32_t k = (uint32_t)droce_psn_diff(psn, w->first_psn), flen;
	struct droce_cursor c = { 0 };
	int rc;

	if (droce_wr_is_rd_atomic(w->opcode)) {
		if (xmit_rd_request(qp, w, psn, w->npkts - k, &flen) != 1)
			return -EAGAIN;
	} else if (w->opcode == DROCE_WR_ATOMIC_WRITE) {
		if (xmit_atomic_write(qp, w, psn, &flen) != 1)
			return -EAGAIN;
	} else {
		droce_cursor_seek(&c, w->sge, w->num_sge, k * droce_swqe_seg(qp, w));
		rc = xmit_data(qp, w, psn, k * droce_swqe_seg(qp, w), k + 1 == w->npkts, &c, &flen);
		if (rc != 1)
			return rc;
	}
	droce_qp_cnt(qp, DROCE_CNT_RETRANSMITTED_PKTS);
	qp->cc_ops->on_send(&qp->cc, flen, now);
	qp->cc.held = false;
	if (qp->req.rto_at == UINT64_MAX)
		droce_comp_arm_rto(qp, now);
	return 1;
}

int
droce_req_tx(struct droce_qp *qp, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	struct droce_swqe *w;
	uint64_t t;
	int rc;

	if ((qp->state != DROCE_QPS_RTS && qp->state != DROCE_QPS_SQD) || !droce_req_has_work(qp))
		return 0;
	if (r->rd_scan) {
		rc = send_rereq(qp, now);
		if (rc != 0 || r->next == r->head)
			return rc;
	}
	if (r->sr_scan) {
		rc = droce_sr_resend(qp, now);
		if (rc != 0 || r->next == r->head)
			return rc;
	}
	w = &r->ring[r->next & r->mask];
	if (gate(qp, w))
		return 0;
	if (droce_wr_is_local(w->opcode))
		return local_op(qp, w);
	if (!w->checked) {
		/* Complete in order: an invalid WQE waits until those before it are done. */
		if (check_local(qp, w) != 0) {
			if (r->comp != r->next)
				return 0;
			droce_qp_cnt(qp, DROCE_CNT_REQ_LOCAL_PROT_ERROR);
			droce_comp_complete(qp, DROCE_WC_LOC_PROT_ERR);
			return 0;
		}
	}
	t = qp->cc_ops->next_send_time(&qp->cc);
	if (t > now) {
		/* The rate limiter holds the packet: sleep until it allows. The
		 * local ACK timer expires no earlier than a timeout after that packet leaves: a
		 * message still leaving at a cut rate has not had its AckReq yet, and holding it
		 * is not a loss (IBTA 9.7.6.1.3 times the wait for an acknowledgement, not our
		 * own pacing). */
		droce_qp_cnt(qp, DROCE_CNT_CC_DEFERRED);
		qp->cc.held = true;
		if (r->rto_at != UINT64_MAX && qp->attr.timeout != 0 &&
		    qp->inf.ibta_at < t + (4096ull << qp->attr.timeout))
			droce_comp_arm_rto(qp, t);
		qp->cc_at = t;
		droce_sched_deadline(qp);
		return -EBUSY;
	}
	if (w->state == DROCE_SWQE_POSTED) {
		/* Placement headers only once the peer showed it has selective repeat (a marked
		 * response): a message is marked, or not, from its first packet to its resends. */
		if (droce_unlikely(qp->sr != NULL) && qp->sr->peer && !w->sr) {
			w->sr = true;
			if (!droce_wr_one_request(w->opcode))
				w->npkts = droce_qp_data_npkts(qp, w->length, qp->seg);
		}
		w->first_psn = r->psn;
		r->sent_hi = r->next + 1;
		r->off = 0;
		r->cur.sge = r->cur.off = r->cur.pos = 0;
	}
	if (w->opcode == DROCE_WR_RDMA_READ)
		return send_read(qp, w, now);
	if (w->opcode == DROCE_WR_ATOMIC_CMP_AND_SWP || w->opcode == DROCE_WR_ATOMIC_FETCH_AND_ADD)
		return send_atomic(qp, w, now);
	if (w->opcode == DROCE_WR_ATOMIC_WRITE)
		return send_atomic_write(qp, w, now);
	return send_data(qp, w, now);
}
