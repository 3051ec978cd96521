/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer (IBTA 9.7.5.2): ACKs, NAKs, READ responses and atomic ACKs advance the send window
 * and complete WQEs in order; NAKs, RNR NAKs, implied NAKs and the local ACK timeout rewind the
 * requester (go-back-N) or end the QP in error with the matching verbs status.
 */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_sr.h"
#include "wire/droce_aeth.h"

/* IBTA 9.7.5.2.8 table 45, in nanoseconds. rxe's code 25 (61.41 ms) is off: it is 61.44 ms. */
static const uint64_t rnr_ns[32] = {
	655360000, 10000,    20000,    30000,	  40000,     60000,	80000,	   120000,
	160000,	   240000,   320000,   480000,	  640000,    960000,	1280000,   1920000,
	2560000,   3840000,  5120000,  7680000,	  10240000,  15360000,	20480000,  30720000,
	40960000,  61440000, 81920000, 122880000, 163840000, 245760000, 327680000, 491520000,
};

enum comp_rc {
	COMP_OK,
	COMP_IMPLIED_NAK, /* a covered READ/atomic has no response: it was lost */
};

void
droce_comp_arm_rto(struct droce_qp *qp, uint64_t now)
{
	/* Local ACK timeout 4.096 us * 2^timeout; 0 disables it (IBTA 9.7.6.1.3, C9-140). */
	uint64_t ibta = qp->attr.timeout == 0 ? UINT64_MAX : now + (4096ull << qp->attr.timeout);

	/* The RTO from measured round trips may fire first (droce_inflight.c). */
	qp->req.rto_at = droce_inflight_arm(qp, now, ibta);
	/* A later timeout needs no heap move: the QP's entry pops at its earlier deadline, finds
	 * nothing due and is re-keyed then (run_timers), once per timeout instead of per ACK. */
	if (droce_sched_timed(qp) && qp->deadline <= qp->req.rto_at)
		return;
	droce_sched_deadline(qp);
}

static void
check_drained(struct droce_qp *qp)
{
	struct droce_requester *r = &qp->req;

	if (qp->state == DROCE_QPS_SQD && r->comp == r->next && !r->drained_notified &&
	    qp->attr.en_sqd_async_notify) {
		r->drained_notified = true;
		droce_dev_event(qp->dev, DROCE_EVENT_SQ_DRAINED, qp);
	}
}

/* Complete the oldest WQE; an error moves the QP to ERR and flushes the rest (IBTA 10.3.1). */
static void
complete_one(struct droce_qp *qp, enum droce_wc_status st)
{
	struct droce_requester *r = &qp->req;
	struct droce_swqe *w = &r->ring[r->comp & r->mask];

	if (r->comp == r->head)
		return; /* nothing outstanding: a response the peer should not have sent */
	droce_qp_send_cqe(qp, w, st);
	if (droce_wr_is_rd_atomic(w->opcode) && w->state != DROCE_SWQE_POSTED && r->rd_out > 0)
		r->rd_out--;
	w->state = DROCE_SWQE_DONE;
	if (r->comp == r->next) {
		/* completed while (re)transmission was inside it */
		r->next++;
		r->off = 0;
		r->cur.sge = r->cur.off = r->cur.pos = 0;
	}
	r->comp++;
	if ((int32_t)(r->sent_hi - r->comp) < 0)
		r->sent_hi = r->comp; /* a WQE that failed before it was sent */
	if (st != DROCE_WC_SUCCESS) {
		/* IBTA 10.3.1.6/7: a send error on UC/UD stops only the send queue (SQE); RC
		 * goes to ERR. */
		if (qp->type == DROCE_QPT_RC)
			droce_qp_error(qp);
		else
			droce_qp_sq_error(qp);
		return;
	}
	check_drained(qp);
}

/* Executed BIND_MW / LOCAL_INV requests next in line wait for nothing more: they complete with
 * the WQE before them (a READ or atomic response completes its WQE with no ACK to sweep on). */
void
droce_comp_complete(struct droce_qp *qp, enum droce_wc_status st)
{
	struct droce_requester *r = &qp->req;

	complete_one(qp, st);
	while (st == DROCE_WC_SUCCESS && qp->state != DROCE_QPS_ERR && r->comp != r->sent_hi &&
	       droce_wr_is_local(r->ring[r->comp & r->mask].opcode) &&
	       r->ring[r->comp & r->mask].state == DROCE_SWQE_SENT)
		complete_one(qp, DROCE_WC_SUCCESS);
}

/* The peer made progress: retry budgets refill (as rxe and ConnectX do) and the timer restarts. */
static void
progress(struct droce_qp *qp, uint32_t una, uint64_t now)
{
	struct droce_requester *r = &qp->req;

	uint32_t old = r->una;

	if (!droce_psn_lt(r->una, una))
		return;
	r->una = una;
	droce_rd_passed(qp, old);
	if (qp->sr != NULL)
		droce_sr_passed(qp, old);
	r->retry_left = qp->attr.retry_cnt;
	r->rnr_left = qp->attr.rnr_retry;
	droce_inflight_acked(qp, una, now);
	qp->cc_ops->on_ack(&qp->cc, now);
	/* An ACK for packets sent before a rewind: skip what the peer already has. */
	if (droce_psn_lt(r->psn, una))
		droce_req_go_back(qp, una);
	if (r->una == r->max_psn_sent) {
		/* all acknowledged: the timer's heap entry is dropped lazily (droce_comp_arm_rto) */
		r->rto_at = UINT64_MAX;
		if (!droce_sched_timed(qp))
			droce_sched_deadline(qp);
	} else {
		droce_comp_arm_rto(qp, now);
	}
	/* The window moved: a WQE it held may go now. With none queued, probing would only cost
	 * process() a pass (responses schedule themselves when queued). */
	if (droce_req_has_work(qp))
		droce_sched_ready(qp);
}

/* The round trip of w's request, if it is timed: its last packet left once (droce_req.c) and
 * this is the first answer to it, an ACK or a READ's first or an atomic's response. */
static inline void
rtt_sample(struct droce_qp *qp, struct droce_swqe *w, uint64_t now)
{
	if (w->timed && qp->cc_ops->on_rtt != NULL)
		qp->cc_ops->on_rtt(&qp->cc, now - w->sent_ns, now);
	w->timed = false;
}

/* Everything up to and including psn is acknowledged (IBTA 9.7.5.1.x: ACKs are cumulative). */
static enum comp_rc
ack_upto(struct droce_qp *qp, uint32_t psn, uint64_t now)
{
	struct droce_requester *r = &qp->req;

	while (r->comp != r->sent_hi) {
		struct droce_swqe *w = &r->ring[r->comp & r->mask];
		uint32_t last = droce_psn_add(w->first_psn, w->npkts - 1);

		if (w->state == DROCE_SWQE_POSTED)
			break;
		if (droce_psn_lt(psn, last) || w->state != DROCE_SWQE_SENT) {
			/* Only its own responses acknowledge a READ's PSNs: an ACK or response
			 * inside its range moves una no further than the READ's start. */
			if (droce_wr_is_rd_atomic(w->opcode) && !droce_psn_lt(psn, w->first_psn)) {
				progress(qp, w->first_psn, now);
				return COMP_OK;
			}
			break;
		}
		/* IBTA 9.7.5.2.x: an ACK beyond a READ or atomic without its response
		 * means the response was lost: implied NAK. */
		if (droce_wr_is_rd_atomic(w->opcode)) {
			progress(qp, w->first_psn, now); /* what came before is done */
			return COMP_IMPLIED_NAK;
		}
		rtt_sample(qp, w, now);
		droce_comp_complete(qp, DROCE_WC_SUCCESS);
		if (qp->state == DROCE_QPS_ERR)
			return COMP_OK;
	}
	progress(qp, droce_psn_add(psn, 1), now);
	return COMP_OK;
}

/* IBTA 9.7.5.2.x implied NAK: the responder answered up to hi but a READ/atomic before it has
 * a response missing. Only what is missing is asked for again (droce_comp_rd.c). */
static void
implied_nak(struct droce_qp *qp, uint32_t hi)
{
	if (droce_psn_lt(qp->req.rd_hi, hi))
		droce_qp_cnt(qp, DROCE_CNT_IMPLIED_NAK_SEQ_ERR); /* counted once per gap */
	droce_rd_answered(qp, hi);
}

static enum droce_wc_status
nak_status(uint8_t code)
{
	switch (code) {
	case DROCE_NAK_INVALID_REQ:
		return DROCE_WC_REM_INV_REQ_ERR;
	case DROCE_NAK_REM_ACCESS_ERR:
		return DROCE_WC_REM_ACCESS_ERR;
	case DROCE_NAK_INVALID_RD_REQ:
		return DROCE_WC_REM_INV_RD_REQ_ERR;
	default:
		return DROCE_WC_REM_OP_ERR;
	}
}

static void
rx_rnr(struct droce_qp *qp, uint32_t psn, uint8_t syn, uint64_t now)
{
	struct droce_requester *r = &qp->req;

	droce_qp_cnt(qp, DROCE_CNT_RCVD_RNR_ERR);
	/* Nothing is sent during the wait, so an RNR NAK for una now is a copy of the one being
	 * waited on (a duplicated frame): the request was NAKed once, one retry pays for it. */
	if (r->rnr_at != UINT64_MAX && psn == r->una)
		return;
	/* IBTA 9.7.5.2.8: rnr_retry 7 retries forever; otherwise each RNR NAK uses one. */
	if (qp->attr.rnr_retry != 7) {
		if (r->rnr_left == 0) {
			droce_qp_cnt(qp, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR);
			droce_comp_complete(qp, DROCE_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		r->rnr_left--;
	}
	/* The RNR NAK answers the request (the responder is alive and in sequence): the local ACK
	 * timeouts spent reaching it are behind us, so the transport retry count reloads and only
	 * the RNR count pays (IBTA 9.7.5.2.8, 9.7.6.1.3: separate counters). Without this, lost
	 * resends during a long RNR wait drain retry_cnt into RETRY_EXC_ERR. */
	r->retry_left = qp->attr.retry_cnt;
	r->rto_at = UINT64_MAX;
	r->rnr_at = now + rnr_ns[syn & DROCE_AETH_VALUE_MASK];
	droce_sched_deadline(qp);
	droce_sched_unready(qp);
}

static void
rx_nak(struct droce_qp *qp, uint32_t psn, uint8_t code)
{
	struct droce_requester *r = &qp->req;
	enum droce_wc_status st;

	if (code == DROCE_NAK_PSN_SEQ_ERR) {
		/* IBTA 9.7.5.2.3: resend from the NAKed PSN (earlier ones are implicitly ACKed).
		 * The resend is a retry like a local ACK timeout's and draws on the same
		 * retry_cnt (9.7.6.1.3; rxe too); an implicit ACK that moved una refilled it. */
		droce_qp_cnt(qp, DROCE_CNT_RCVD_SEQ_ERR);
		if (r->retry_left == 0) {
			droce_qp_cnt(qp, DROCE_CNT_RETRY_EXCEEDED_ERR);
			droce_comp_complete(qp, DROCE_WC_RETRY_EXC_ERR);
			return;
		}
		r->retry_left--;
		droce_req_go_back(qp, psn);
		return;
	}
	st = nak_status(code);
	if (st == DROCE_WC_REM_ACCESS_ERR)
		droce_qp_cnt(qp, DROCE_CNT_REQ_REMOTE_ACCESS_ERRORS);
	else if (st == DROCE_WC_REM_INV_REQ_ERR)
		droce_qp_cnt(qp, DROCE_CNT_REQ_REMOTE_INVALID_REQUEST);
	else
		droce_qp_cnt(qp, DROCE_CNT_REQ_REMOTE_OP_ERRORS);
	/* IBTA 9.7.5.2.4/5: the NAKed request completes in error; the QP goes to ERR. */
	droce_comp_complete(qp, st);
}

/* The PSN a sequence error NAK from a selective-repeat peer reports kept: a marked (selective)
 * NAK's MSN field (droce_sr.h); an unmarked one, for a message sent before the handshake, keeps
 * nothing (its PSN: only the first missing goes again, and the selective NAKs for the marked
 * requests behind it report the rest). */
static uint32_t
sr_got(const struct droce_pkt *p)
{
	return p->srcap ? p->aeth_msn : p->psn;
}

/* The in-band handshake (stack/wire/README.md): the first response tells whether the peer has
 * selective repeat; a standard peer sends resv6 as 0 (IBTA 9.2). A selective repeat responder
 * leaves a standard PSN sequence error NAK unmarked: that one tells nothing. */
static void
sr_learn(struct droce_qp *qp, const struct droce_pkt *p)
{
	if (!p->srcap && p->opcode == DROCE_OP_RC_ACKNOWLEDGE &&
	    p->aeth_syn == (DROCE_AETH_TYPE_NAK | DROCE_NAK_PSN_SEQ_ERR))
		return;
	qp->sr->known = true;
	qp->sr->peer = p->srcap;
	if (p->srcap)
		droce_qp_cnt(qp, DROCE_CNT_SR_PEER);
	droce_sched_ready(qp); /* the gate held the send queue */
}

static void
rx_ack(struct droce_qp *qp, const struct droce_pkt *p, uint64_t now)
{
	uint8_t type = p->aeth_syn & DROCE_AETH_TYPE_MASK;
	uint32_t before = droce_psn_add(p->psn, DROCE_PSN_MASK); /* psn - 1 */

	if (type == DROCE_AETH_TYPE_ACK) {
		droce_rd_heard(qp, p->psn);
		if (ack_upto(qp, p->psn, now) == COMP_IMPLIED_NAK)
			implied_nak(qp, droce_psn_add(p->psn, 1));
		return;
	}
	/* A NAK acknowledges everything before its PSN (IBTA 9.7.5.2.2). A sequence error NAK
	 * behind a missing response still rewinds to its PSN, the re-requests filling below it;
	 * it draws on no retry: una has not moved for the missing response, which the local ACK
	 * timer bounds (IBTA 9.7.6.1.3). */
	if (ack_upto(qp, before, now) == COMP_IMPLIED_NAK) {
		implied_nak(qp, p->psn);
		if (type == DROCE_AETH_TYPE_NAK &&
		    (p->aeth_syn & DROCE_AETH_VALUE_MASK) == DROCE_NAK_PSN_SEQ_ERR) {
			droce_qp_cnt(qp, DROCE_CNT_RCVD_SEQ_ERR);
			if (qp->sr != NULL && qp->sr->peer)
				droce_sr_nak(qp, p->psn, sr_got(p));
			else
				droce_req_go_back(qp, p->psn);
		}
		return;
	}
	if (qp->state == DROCE_QPS_ERR)
		return;
	if (qp->req.comp == qp->req.sent_hi) {
		/* IBTA 9.7.5.2.x: a NAK must name an outstanding request */
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED);
		return;
	}
	if (type == DROCE_AETH_TYPE_RNR_NAK)
		rx_rnr(qp, p->psn, p->aeth_syn, now);
	else if (type == DROCE_AETH_TYPE_NAK && qp->sr != NULL && qp->sr->peer &&
		 (p->aeth_syn & DROCE_AETH_VALUE_MASK) == DROCE_NAK_PSN_SEQ_ERR) {
		droce_qp_cnt(qp, DROCE_CNT_RCVD_SEQ_ERR);
		droce_sr_nak(qp, p->psn, sr_got(p));
	} else if (type == DROCE_AETH_TYPE_NAK)
		rx_nak(qp, p->psn, p->aeth_syn & DROCE_AETH_VALUE_MASK);
	else
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED); /* reserved syndrome */
}

/* The READ or atomic a response belongs to, if psn is its next missing PSN (the oldest WQE's);
 * a response past a gap is kept by droce_rd_ahead, the gap asked for again. */
static struct droce_swqe *
expect(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame, uint64_t now)
{
	struct droce_requester *r = &qp->req;

	/* Responses come in request order: every request before this one was answered. */
	if (ack_upto(qp, droce_psn_add(p->psn, DROCE_PSN_MASK), now) == COMP_IMPLIED_NAK)
		implied_nak(qp, p->psn); /* an earlier READ/atomic lost its response */
	if (qp->state == DROCE_QPS_ERR || r->comp == r->sent_hi) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED);
		return NULL;
	}
	if (p->psn != r->una) {
		droce_rd_ahead(qp, p, frame);
		droce_inflight_heard(qp, now); /* the gap is re-requested: no RTO yet */
		return NULL;
	}
	return &r->ring[r->comp & r->mask];
}

static void
rx_read_resp(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	struct droce_swqe *w = expect(qp, p, frame, now);
	uint32_t k, want, base;
	bool first, last;

	if (w == NULL)
		return;
	if (w->opcode != DROCE_WR_RDMA_READ) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED);
		return;
	}
	k = (uint32_t)droce_psn_diff(p->psn, w->first_psn);
	base = k * qp->mtu;
	first = k == 0;
	last = k == w->npkts - 1;
	want = p->pay_len;
	if (!droce_rd_resp_fits(qp, w, p)) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED);
		return;
	}
	if (first)
		rtt_sample(qp, w, now); /* a resumed READ's request was resent: not timed */
	if (want) {
		if (r->rd_cur.pos != base)
			droce_cursor_seek(&r->rd_cur, w->sge, w->num_sge, base);
		droce_copy_in(w->sge, &r->rd_cur, frame + p->pay_off, want);
	}
	if (last) {
		r->rd_cur.sge = r->rd_cur.off = r->rd_cur.pos = 0;
		progress(qp, droce_psn_add(p->psn, 1), now);
		droce_comp_complete(qp, DROCE_WC_SUCCESS);
		droce_sched_ready(qp); /* fence or the READ limit may have been waiting */
	} else {
		progress(qp, droce_psn_add(p->psn, 1), now);
	}
}

static void
rx_atomic_ack(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	struct droce_swqe *w = expect(qp, p, frame, now);
	uint64_t orig = p->atomic_orig; /* host order, as verbs returns it */

	if (w == NULL)
		return;
	if (w->opcode != DROCE_WR_ATOMIC_CMP_AND_SWP &&
	    w->opcode != DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED);
		return;
	}
	rtt_sample(qp, w, now);
	r->rd_cur.sge = r->rd_cur.off = r->rd_cur.pos = 0;
	droce_copy_in(w->sge, &r->rd_cur, (const uint8_t *)&orig, sizeof(orig));
	r->rd_cur.sge = r->rd_cur.off = r->rd_cur.pos = 0;
	progress(qp, droce_psn_add(p->psn, 1), now);
	droce_comp_complete(qp, DROCE_WC_SUCCESS);
	droce_sched_ready(qp);
}

/* Responses kept past a gap (droce_comp_rd.c): una moves over them once the gap is filled,
 * completing each READ/atomic whose responses are all in, and each other request that a later
 * response answered (IBTA 9.7.5.1: responses come in request order). */
static void
settle(struct droce_qp *qp, uint64_t now)
{
	struct droce_requester *r = &qp->req;

	while (droce_psn_lt(r->una, r->rd_hi) && qp->state != DROCE_QPS_ERR &&
	       r->comp != r->sent_hi) {
		struct droce_swqe *w = &r->ring[r->comp & r->mask];
		uint32_t end = droce_psn_add(w->first_psn, w->npkts), u = r->una;

		if (w->state == DROCE_SWQE_POSTED)
			break;
		if (!droce_wr_is_rd_atomic(w->opcode)) {
			if (w->state != DROCE_SWQE_SENT || droce_psn_lt(r->rd_hi, end))
				break;
			progress(qp, end, now);
			droce_comp_complete(qp, DROCE_WC_SUCCESS);
			continue;
		}
		while (droce_psn_lt(u, end) && droce_rd_got(qp, u))
			u = droce_psn_add(u, 1);
		progress(qp, u, now);
		if (r->una != end)
			break;
		r->rd_cur.sge = r->rd_cur.off = r->rd_cur.pos = 0;
		droce_comp_complete(qp, DROCE_WC_SUCCESS);
		droce_sched_ready(qp); /* fence or the READ limit may have been waiting */
	}
}

void
droce_comp_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);

	/* IBTA 10.3.1: responses matter while the send queue works (RTS, SQD). */
	if (qp->state != DROCE_QPS_RTS && qp->state != DROCE_QPS_SQD) {
		droce_dev_drop(qp->dev, DROCE_DROP_QP_STATE);
		return;
	}
	/* IBTA 9.7.5.2.1: a response for a PSN never sent is a ghost; one before the
	 * oldest outstanding is stale (a duplicate or an overtaken ACK). */
	if (!droce_psn_lt(p->psn, r->max_psn_sent)) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_GHOST);
		return;
	}
	if (droce_psn_lt(p->psn, r->una) && !(p->opcode == DROCE_OP_RC_ACKNOWLEDGE &&
					      p->psn == droce_psn_add(r->una, DROCE_PSN_MASK))) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_STALE);
		return;
	}
	/* the in-band handshake: a standard peer sends resv6 as 0 (wire/droce_bth.h) */
	if (droce_unlikely(qp->sr != NULL) && !qp->sr->known)
		sr_learn(qp, p);
	if (op->flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC))
		droce_rd_heard(qp, p->psn);
	if (op->flags & DROCE_OPF_READ)
		rx_read_resp(qp, p, frame, now);
	else if (op->flags & DROCE_OPF_ATOMIC)
		rx_atomic_ack(qp, p, frame, now);
	else
		rx_ack(qp, p, now);
	if (droce_psn_lt(r->una, r->rd_hi))
		settle(qp, now);
}

/* Local ACK timeout (IBTA 9.7.6.1.3): retry from the oldest unacknowledged PSN, retry_cnt times
 * in a row: a valid response (progress, or an RNR NAK: rx_rnr) reloads the count.
 * retry_cnt 7 means seven retries: unlike rnr_retry, IBTA gives 7 no "infinite" meaning
 * (rxe treats it as infinite; we follow the spec). */
void
droce_comp_timer(struct droce_qp *qp, uint64_t now)
{
	struct droce_requester *r = &qp->req;

	r->rto_at = UINT64_MAX;
	if (r->comp == r->sent_hi)
		return;
	/* An RTO before the local ACK timeout resends and spends no retry (droce_inflight.c). */
	if (droce_inflight_early(qp, now))
		return;
	droce_qp_cnt(qp, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR);
	if (r->retry_left == 0) {
		droce_qp_cnt(qp, DROCE_CNT_RETRY_EXCEEDED_ERR);
		droce_comp_complete(qp, DROCE_WC_RETRY_EXC_ERR);
		return;
	}
	r->retry_left--;
	droce_qp_cnt(qp, DROCE_CNT_COMPLETER_RETRY_ERR);
	if (qp->sr == NULL || !qp->sr->peer || !droce_sr_timeout(qp, true))
		droce_inflight_go_back(qp);
	droce_comp_arm_rto(qp, now);
}
