/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * READ and atomic responses past a gap. The responder answers in request order (IBTA 9.7.5.1),
 * so a response at PSN p says every PSN before p was answered: a missing one was lost. Each
 * response has its place in a WQE's buffer, so one that comes past a gap is placed at once and
 * remembered; each lost PSN run is asked for once by a re-request starting at its first PSN, the
 * RETH's VA advanced and length reduced to the run (IBTA 9.7.5.2.x READ retry; a duplicate READ
 * may ask for part of the original, 9.7.5.1.x, as rxe's responder serves it), one re-request of
 * a READ at a time, each from the READ's first missing PSN (droce_rd_rereq_next says why).
 * The responses still in flight behind the gap are kept, not re-read. Responses come back in
 * the order the requests were sent, re-requests among them, so an answer to one re-request (or
 * to a request first sent after it) says that what an earlier one asked for and is still
 * missing was lost again: it is asked for once more (droce_rd_heard). The completer moves una
 * over what was kept (droce_comp.c settle). A lost tail, with no later response to show it, is
 * asked for by the RTO's probe (droce_rd_timeout); the local ACK timeout or a NAK still rewinds
 * (go-back-N, droce_req_go_back).
 */
#include <string.h>

#include "droce_internal.h"
#include "droce_psn.h"

#define RD_MASK (DROCE_RD_WIN - 1)
/* A re-request runs on over kept responses to the next gap of its READ if at most this many
 * lie between: their stale copies cost less than waiting a round trip to ask for that gap. */
#define RD_SPAN_GAP 8

static bool
bit_get(const uint64_t *b, uint32_t psn)
{
	uint32_t i = psn & RD_MASK;

	return (b[i >> 6] >> (i & 63)) & 1;
}

static void
bit_set(uint64_t *b, uint32_t psn)
{
	uint32_t i = psn & RD_MASK;

	b[i >> 6] |= 1ull << (i & 63);
}

/* Clear n bits from psn (n <= DROCE_RD_WIN), a word at a time where aligned. */
static void
bits_clear(uint64_t *b, uint32_t psn, uint32_t n)
{
	while (n != 0) {
		uint32_t i = psn & RD_MASK;

		if ((i & 63) == 0 && n >= 64) {
			b[i >> 6] = 0;
			psn += 64;
			n -= 64;
		} else {
			b[i >> 6] &= ~(1ull << (i & 63));
			psn++;
			n--;
		}
	}
}

/* x is asked for by a re-request whose answer may still come. */
static bool
rr_covers(const struct droce_requester *r, uint32_t x)
{
	uint32_t i;

	for (i = 0; i < r->rd_rr_n; i++)
		if (!droce_psn_lt(x, r->rd_rr[i].psn) && droce_psn_lt(x, r->rd_rr[i].end))
			return true;
	return false;
}

/* The PSNs of [psn, end) asked for, still missing and awaited by no re-request were lost
 * again: they may be asked for once more. True if there was one. */
static bool
rr_lost(struct droce_requester *r, uint32_t psn, uint32_t end)
{
	bool any = false;

	if (droce_psn_lt(psn, r->una))
		psn = r->una;
	for (; droce_psn_lt(psn, end); psn = droce_psn_add(psn, 1)) {
		uint32_t i = psn & RD_MASK;

		if (bit_get(r->rd_asked, psn) && !bit_get(r->rd_got, psn) && !rr_covers(r, psn)) {
			r->rd_asked[i >> 6] &= ~(1ull << (i & 63));
			any = true;
		}
	}
	return any;
}

static void
rr_remove(struct droce_requester *r, uint32_t i)
{
	memmove(&r->rd_rr[i], &r->rd_rr[i + 1], (r->rd_rr_n - i - 1) * sizeof(r->rd_rr[0]));
	r->rd_rr_n--;
}

static void
rr_push(struct droce_requester *r, uint32_t psn, uint32_t end)
{
	if (r->rd_rr_n == DROCE_RD_RR)
		rr_remove(r, 0); /* a rewind or probe forgets the oldest (droce_rd_heard) */
	r->rd_rr[r->rd_rr_n++] = (struct droce_rd_rereq){ psn, end, r->max_psn_sent };
}

bool
droce_rd_got(const struct droce_qp *qp, uint32_t psn)
{
	return bit_get(qp->req.rd_got, psn);
}

/* una moved on from old_una: the bits it passed are free for the PSNs a window later, and
 * re-requests for what it passed await nothing. */
void
droce_rd_passed(struct droce_qp *qp, uint32_t old_una)
{
	struct droce_requester *r = &qp->req;
	bool full = r->rd_rr_n == DROCE_RD_RR;
	uint32_t n;

	for (n = 0; n < r->rd_rr_n;) {
		struct droce_rd_rereq *e = &r->rd_rr[n];

		if (droce_psn_lt(e->psn, r->una))
			e->psn = r->una;
		if (droce_psn_lt(e->psn, e->end))
			n++;
		else
			rr_remove(r, n);
	}
	if (full && r->rd_rr_n < DROCE_RD_RR) {
		r->rd_scan = true; /* a re-request waiting for room may go */
		droce_sched_ready(qp);
	}
	if (!droce_psn_lt(old_una, r->rd_hi)) {
		r->rd_hi = r->una;
		return;
	}
	n = droce_psn_lt(r->una, r->rd_hi) ? (uint32_t)droce_psn_diff(r->una, old_una) :
					     (uint32_t)droce_psn_diff(r->rd_hi, old_una);
	bits_clear(r->rd_got, old_una, n);
	bits_clear(r->rd_asked, old_una, n);
	if (droce_psn_lt(r->rd_hi, r->una))
		r->rd_hi = r->una;
}

/* The responder answered every PSN below hi (a response or ACK at hi - 1 came). */
void
droce_rd_answered(struct droce_qp *qp, uint32_t hi)
{
	struct droce_requester *r = &qp->req;
	uint32_t lim = droce_psn_add(r->una, DROCE_RD_WIN);

	if (droce_psn_lt(lim, hi))
		hi = lim;
	if (!droce_psn_lt(r->rd_hi, hi))
		return;
	r->rd_hi = hi;
	r->rd_scan = true;
	droce_sched_ready(qp);
}

/*
 * A response at psn came (a READ response, an atomic or plain ACK, in order or past a gap).
 * Answers come in the order their requests reached the responder, so it answers the oldest
 * awaited re-request holding psn, or else a request first sent after every re-request whose
 * mark (max_psn_sent when it left) is not past psn: each re-request sent before that one is
 * answered, and what it asked for and is still missing was lost again, as were the PSNs below
 * psn of the one it answers. A PSN asked for by a later re-request still awaits that one: not
 * asked again. The order re-requests leave in is not PSN order (one per READ at a time,
 * droce_rd_rereq_next), so "below psn" alone would ask again for PSNs still on their way.
 */
void
droce_rd_heard(struct droce_qp *qp, uint32_t psn)
{
	struct droce_requester *r = &qp->req;
	struct droce_rd_rereq gone[DROCE_RD_RR + 1];
	uint32_t i, k, ng = 0;
	bool asked, lost = false, full = r->rd_rr_n == DROCE_RD_RR;

	/* the common case, read from lines every response reads: nothing awaited, and psn at or
	 * past rd_hi, where nothing is ever asked */
	if (r->rd_rr_n == 0 && !droce_psn_lt(psn, r->rd_hi))
		return;
	asked = bit_get(r->rd_asked, psn);
	if (r->rd_rr_n == 0 && !asked)
		return;
	for (k = 0; k < r->rd_rr_n; k++)
		if (!droce_psn_lt(psn, r->rd_rr[k].psn) && droce_psn_lt(psn, r->rd_rr[k].end))
			break;
	if (k == r->rd_rr_n)
		for (k = 0; k < r->rd_rr_n && !droce_psn_lt(psn, r->rd_rr[k].wm); k++)
			;
	else if (asked) {
		gone[ng++] = (struct droce_rd_rereq){ r->rd_rr[k].psn, psn, 0 };
		r->rd_rr[k].psn = droce_psn_add(psn, 1);
		if (r->rd_rr[k].psn == r->rd_rr[k].end)
			k++;
	}
	for (i = 0; i < k; i++)
		gone[ng++] = r->rd_rr[i];
	memmove(r->rd_rr, &r->rd_rr[k], (r->rd_rr_n - k) * sizeof(r->rd_rr[0]));
	r->rd_rr_n -= k;
	for (i = 0; i < ng; i++)
		lost |= rr_lost(r, gone[i].psn, gone[i].end);
	/* a re-request forgotten (droce_rd_timeout, a rewind past DROCE_RD_RR) was sent before
	 * the one answered here: what it asked for below psn was lost too */
	if (asked)
		lost |= rr_lost(r, r->una, psn);
	/* an answer to a re-request may end the wait of its READ's next gap (droce_rd_rereq_next) */
	if (lost || asked || (full && k > 0)) {
		r->rd_scan = true;
		droce_sched_ready(qp);
	}
}

/* A rewind to psn asks again for every PSN from psn on: the missing ones there count as asked
 * (what was kept stays kept; its copies are dropped). */
void
droce_rd_go_back(struct droce_qp *qp, uint32_t psn)
{
	struct droce_requester *r = &qp->req;
	uint32_t x = droce_psn_lt(psn, r->una) ? r->una : psn;

	if (!droce_psn_lt(x, r->rd_hi))
		return;
	rr_push(r, x, r->rd_hi);
	for (; droce_psn_lt(x, r->rd_hi); x = droce_psn_add(x, 1))
		if (!bit_get(r->rd_got, x))
			bit_set(r->rd_asked, x);
}

/*
 * An early resend (droce_inflight.c) while the oldest request is a READ or atomic: the peer fell
 * silent for an RTO, so the oldest one's first missing run was lost (the run, or the answer to
 * its re-request) and is asked for again, alone, through the re-request scan (a READ from its
 * first missing PSN to the next kept response, as ever), as a probe. Its answer shows more:
 * responses come in order, so re-requested PSNs below one answered and still missing were lost
 * again and are asked for then (droce_rd_ahead), and una moving on re-arms the timer for what
 * follows. Neither every gap below rd_hi nor every request after it goes again: on a host
 * whose peer stalls (a TCG guest, a busy core) the RTO fires with those still queued there,
 * and rxe executes each duplicate READ again in full.
 */
void
droce_rd_timeout(struct droce_qp *qp)
{
	struct droce_requester *r = &qp->req;
	struct droce_swqe *w = &r->ring[r->comp & r->mask];
	uint32_t x = droce_rd_first_missing(qp, w, r->una);
	uint32_t end = droce_psn_add(w->first_psn, w->npkts);
	uint32_t lim = droce_psn_add(r->una, DROCE_RD_WIN), i;

	if (droce_psn_lt(lim, end))
		end = lim;
	/* Nothing answered from x on counts as answered and lost: the scan covers it. */
	if (droce_psn_lt(r->rd_hi, end))
		r->rd_hi = end;
	bits_clear(r->rd_asked, x, (uint32_t)droce_psn_diff(end, x));
	/* the re-requests for that run count as lost; the probe must find room */
	for (i = 0; i < r->rd_rr_n;)
		if (droce_psn_lt(r->rd_rr[i].psn, end) && droce_psn_lt(x, r->rd_rr[i].end))
			rr_remove(r, i);
		else
			i++;
	if (r->rd_rr_n == DROCE_RD_RR)
		rr_remove(r, 0);
	r->rd_scan = true;
	droce_sched_ready(qp);
}

/* The sent WQE whose PSNs hold psn, or NULL. Responses come in order, so the last one's WQE or
 * the next is nearly always it. */
struct droce_swqe *
droce_rd_find(struct droce_qp *qp, uint32_t psn)
{
	struct droce_requester *r = &qp->req;
	uint32_t i = r->rd_hint;

	if ((int32_t)(i - r->comp) < 0 || (int32_t)(r->sent_hi - i) <= 0)
		i = r->comp;
	else if (droce_psn_lt(psn, r->ring[i & r->mask].first_psn))
		i = r->comp;
	for (; i != r->sent_hi; i++) {
		struct droce_swqe *w = &r->ring[i & r->mask];

		if (w->state == DROCE_SWQE_POSTED || droce_psn_lt(psn, w->first_psn))
			return NULL;
		if (droce_psn_lt(psn, droce_psn_add(w->first_psn, w->npkts))) {
			r->rd_hint = i;
			return w;
		}
	}
	return NULL;
}

/* IBTA 9.7.5.2.x: a READ response's opcode and length must fit its place in the READ: FIRST at
 * the first packet, LAST at the last, a full path MTU before it. A resumed READ is answered
 * from FIRST (or, from rxe, MIDDLE) again where it resumed, and a re-request for part of it
 * ends with LAST where the part ends, so those may appear inside a READ that was asked again. */
bool
droce_rd_resp_fits(const struct droce_qp *qp, const struct droce_swqe *w, const struct droce_pkt *p)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	uint32_t k = (uint32_t)droce_psn_diff(p->psn, w->first_psn);
	uint32_t base = k * qp->mtu;
	uint32_t want = w->length - base < qp->mtu ? w->length - base : qp->mtu;
	bool last = k == w->npkts - 1;

	if (k == 0 && !(op->flags & DROCE_OPF_FIRST))
		return false;
	if (last && !(op->flags & DROCE_OPF_LAST))
		return false;
	if (!last && (op->flags & DROCE_OPF_LAST) && !w->part_asked)
		return false;
	return p->pay_len == want;
}

/* A READ response or atomic ACK past una (droce_comp_rx checked it is no ghost): placed in its
 * WQE's buffer and remembered, or dropped with its reason. */
void
droce_rd_ahead(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	struct droce_requester *r = &qp->req;
	struct droce_swqe *w;
	struct droce_cursor cur = { 0 };

	if (droce_psn_diff(p->psn, r->una) >= DROCE_RD_WIN) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_OUT_OF_SEQ); /* asked again later */
		return;
	}
	w = droce_rd_find(qp, p->psn);
	if (w == NULL ||
	    ((op->flags & DROCE_OPF_READ) ? w->opcode != DROCE_WR_RDMA_READ :
					    (w->opcode != DROCE_WR_ATOMIC_CMP_AND_SWP &&
					     w->opcode != DROCE_WR_ATOMIC_FETCH_AND_ADD))) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED);
		return;
	}
	if (droce_rd_got(qp, p->psn)) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESP_STALE); /* a re-request's copy */
		return;
	}
	if (op->flags & DROCE_OPF_READ) {
		uint32_t base = (uint32_t)droce_psn_diff(p->psn, w->first_psn) * qp->mtu;

		if (!droce_rd_resp_fits(qp, w, p)) {
			droce_dev_drop(qp->dev, DROCE_DROP_RESP_UNEXPECTED);
			return;
		}
		if (p->pay_len) {
			droce_cursor_seek(&cur, w->sge, w->num_sge, base);
			droce_copy_in(w->sge, &cur, frame + p->pay_off, p->pay_len);
		}
	} else {
		uint64_t orig = p->atomic_orig;

		droce_copy_in(w->sge, &cur, (const uint8_t *)&orig, sizeof(orig));
	}
	droce_qp_cnt(qp, DROCE_CNT_READ_RESP_AHEAD);
	bit_set(r->rd_got, p->psn);
	droce_rd_answered(qp, droce_psn_add(p->psn, 1));
}

/*
 * The next re-request: the lowest PSN below rd_hi (and below what the requester sends next
 * anyway) neither answered nor asked, on to the last PSN of its WQE below that bound not
 * answered yet while no more than RD_SPAN_GAP kept responses separate two gaps. PSNs of
 * SEND/WRITE below rd_hi were answered by the response or ACK that raised it (IBTA 9.7.5.1: in
 * order) and are marked so on the way. A READ with a re-request still unanswered is passed
 * over: a re-request starts at its READ's first missing PSN, never below an earlier one of the
 * same READ, because a responder may take a duplicate READ's VA as that READ's start and drop
 * one below it (IBTA 9.7.5.1 lets it serve a part only; Linux rxe does so), and a gap asked for
 * after a later one would then never be answered. NULL: nothing.
 */
struct droce_swqe *
droce_rd_rereq_next(struct droce_qp *qp, uint32_t *psn, uint32_t *n)
{
	struct droce_requester *r = &qp->req;
	uint32_t x = r->una, lim = droce_psn_lt(r->psn, r->rd_hi) ? r->psn : r->rd_hi;

	if (r->rd_rr_n == DROCE_RD_RR)
		lim = x; /* as many awaited as it keeps: the next waits for an answer */
	while (droce_psn_lt(x, lim)) {
		struct droce_swqe *w;
		uint32_t end, e, y;
		bool pending = false;

		if (bit_get(r->rd_got, x) || bit_get(r->rd_asked, x)) {
			x = droce_psn_add(x, 1);
			continue;
		}
		w = droce_rd_find(qp, x);
		if (w == NULL)
			break;
		end = droce_psn_add(w->first_psn, w->npkts);
		if (droce_psn_lt(lim, end))
			end = lim;
		if (!droce_wr_is_rd_atomic(w->opcode)) {
			for (; droce_psn_lt(x, end); x = droce_psn_add(x, 1))
				bit_set(r->rd_got, x);
			continue;
		}
		y = droce_psn_lt(w->first_psn, r->una) ? r->una : w->first_psn;
		for (; droce_psn_lt(y, x) && !pending; y = droce_psn_add(y, 1))
			pending = !bit_get(r->rd_got, y);
		if (pending) {
			x = droce_psn_add(w->first_psn, w->npkts);
			continue;
		}
		e = droce_psn_add(x, 1);
		for (y = e; droce_psn_lt(y, end); y = droce_psn_add(y, 1)) {
			if (bit_get(r->rd_got, y)) {
				if (droce_psn_diff(y, e) >= RD_SPAN_GAP)
					break;
				continue;
			}
			e = droce_psn_add(y, 1);
		}
		*psn = x;
		*n = (uint32_t)droce_psn_diff(e, x);
		return w;
	}
	r->rd_scan = false;
	return NULL;
}

/* The first PSN from psn of w not answered yet: where a resent READ starts (the same rule). */
uint32_t
droce_rd_first_missing(const struct droce_qp *qp, const struct droce_swqe *w, uint32_t psn)
{
	const struct droce_requester *r = &qp->req;
	uint32_t end = droce_psn_add(w->first_psn, w->npkts);

	if (droce_psn_lt(psn, r->una))
		psn = r->una;
	while (droce_psn_lt(psn, end) && droce_psn_lt(psn, r->rd_hi) && bit_get(r->rd_got, psn))
		psn = droce_psn_add(psn, 1);
	return psn;
}

void
droce_rd_rereq_sent(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint32_t n)
{
	uint32_t psn0 = psn;

	w->part_asked = true;
	for (; n != 0; n--, psn = droce_psn_add(psn, 1))
		if (!bit_get(qp->req.rd_got, psn))
			bit_set(qp->req.rd_asked, psn);
	rr_push(&qp->req, psn0, psn);
	droce_qp_cnt(qp, DROCE_CNT_READ_REREQ);
}
