/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat, requester side (droce_sr.h): the placement headers it writes, what the
 * selective NAKs reported, and which PSNs to send again alone. Also the mode's configuration.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_byteorder.h"
#include "droce_ext.h"
#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_sr.h"
#include "wire/droce_reth.h"
#include "wire/droce_srh.h"

#define SR_MASK (DROCE_SR_WIN - 1)

int
droce_qp_set_recovery(struct droce_qp *qp, enum droce_recovery mode)
{
	if (qp == NULL || !qp->used || qp->type != DROCE_QPT_RC ||
	    (qp->state != DROCE_QPS_RESET && qp->state != DROCE_QPS_INIT) || qp->req.head != 0 ||
	    (mode != DROCE_RECOVERY_GBN && mode != DROCE_RECOVERY_SR))
		return -EINVAL;
	if (mode == DROCE_RECOVERY_GBN) {
		free(qp->sr);
		qp->sr = NULL;
	} else if (qp->sr == NULL) {
		/* not on the data path: the window is allocated once, here */
		qp->sr = calloc(1, sizeof(*qp->sr));
		if (qp->sr == NULL)
			return -ENOMEM;
	}
	droce_qp_set_mtu(qp, (enum droce_mtu)qp->attr.path_mtu); /* qp->seg */
	return 0;
}

int
droce_dev_set_recovery(struct droce_dev *dev, enum droce_recovery mode)
{
	if (dev == NULL || (mode != DROCE_RECOVERY_GBN && mode != DROCE_RECOVERY_SR))
		return -EINVAL;
	dev->sr_default = mode == DROCE_RECOVERY_SR;
	return 0;
}

enum droce_recovery
droce_qp_recovery(const struct droce_qp *qp)
{
	return qp->sr != NULL ? DROCE_RECOVERY_SR : DROCE_RECOVERY_GBN;
}

uint32_t
droce_sr_hdr_len(uint8_t opcode)
{
	const struct droce_opcode_info *op = droce_opcode_info(opcode);

	if (!(op->flags & DROCE_OPF_RC) || !(op->flags & DROCE_OPF_REQ))
		return 0;
	if ((op->flags & DROCE_OPF_WRITE) && !(op->flags & DROCE_OPF_FIRST) &&
	    !(op->flags & DROCE_OPF_ATOMIC_WRITE))
		return DROCE_SRH_WRITE_LEN;
	if ((op->flags & DROCE_OPF_SEND) && !(op->flags & DROCE_OPF_WRITE))
		return DROCE_SRH_SEND_LEN;
	return 0;
}

void
droce_sr_hdr_put(uint8_t *dst, uint8_t opcode, const struct droce_swqe *w, uint32_t off)
{
	if (droce_sr_hdr_len(opcode) == DROCE_SRH_WRITE_LEN) {
		struct droce_reth *h = (struct droce_reth *)dst;

		h->va = droce_cpu_to_be64(w->raddr + off);
		h->rkey = droce_cpu_to_be32(w->rkey);
		h->dma_len = droce_cpu_to_be32(w->length);
	} else {
		struct droce_srh_send *h = (struct droce_srh_send *)dst;

		h->ord = droce_cpu_to_be32(w->sr_ord);
		h->off = droce_cpu_to_be32(off);
	}
}

void
droce_sr_assign_ord(struct droce_qp *qp, struct droce_swqe *w)
{
	switch (w->opcode) {
	case DROCE_WR_SEND:
	case DROCE_WR_SEND_WITH_IMM:
	case DROCE_WR_SEND_WITH_INV:
	case DROCE_WR_RDMA_WRITE_WITH_IMM:
		w->sr_ord = qp->sr->ord_next++;
		break;
	default:
		break;
	}
}

bool
droce_sr_fence(const struct droce_qp *qp, const struct droce_swqe *w)
{
	const struct droce_requester *r = &qp->req;
	uint32_t i;

	if (r->rd_out == 0 || w->length == 0 ||
	    (w->opcode != DROCE_WR_RDMA_WRITE && w->opcode != DROCE_WR_RDMA_WRITE_WITH_IMM))
		return false;
	for (i = r->comp; i != r->next; i++) {
		const struct droce_swqe *u = &r->ring[i & r->mask];
		uint64_t len = u->opcode == DROCE_WR_RDMA_READ ? u->length : 8;

		if ((u->opcode == DROCE_WR_RDMA_READ || u->opcode == DROCE_WR_ATOMIC_CMP_AND_SWP ||
		     u->opcode == DROCE_WR_ATOMIC_FETCH_AND_ADD) &&
		    u->state != DROCE_SWQE_DONE && u->raddr < w->raddr + w->length &&
		    w->raddr < u->raddr + len)
			return true;
	}
	return false;
}

void
droce_sr_reset(struct droce_qp *qp)
{
	if (qp->sr != NULL)
		memset(qp->sr, 0, sizeof(*qp->sr));
	qp->req.sr_scan = false;
}

/* A position kept across calls, brought back into [una, max_psn_sent] when it fell out. */
static uint32_t
clamp(const struct droce_requester *r, uint32_t v)
{
	if (droce_psn_lt(v, r->una) || droce_psn_lt(r->max_psn_sent, v))
		return r->una;
	return v;
}

/* sacked and its count together */
static void
sacked_set(struct droce_sr *sr, uint32_t psn)
{
	if (!droce_sr_bit(sr->sacked, psn)) {
		droce_sr_bit_set(sr->sacked, psn);
		sr->sacked_n++;
	}
}

static void
sacked_clear(struct droce_sr *sr, uint32_t psn)
{
	if (droce_sr_bit(sr->sacked, psn)) {
		droce_sr_bit_clear(sr->sacked, psn);
		sr->sacked_n--;
	}
}

/* una moved on from old_una: the bits it passed are free for the PSNs a window later. */
void
droce_sr_passed(struct droce_qp *qp, uint32_t old_una)
{
	struct droce_sr *sr = qp->sr;
	uint32_t n = (uint32_t)droce_psn_diff(qp->req.una, old_una), psn = old_una;

	if (n >= DROCE_SR_WIN) {
		memset(sr->sacked, 0, sizeof(sr->sacked));
		memset(sr->resent, 0, sizeof(sr->resent));
		sr->sacked_n = 0;
		return;
	}
	for (; n != 0; n--, psn = droce_psn_add(psn, 1)) {
		sacked_clear(sr, psn);
		droce_sr_bit_clear(sr->resent, psn);
	}
}

/* A selective NAK: psn is the responder's first missing PSN, got the one it kept (psn itself:
 * it kept nothing new). */
void
droce_sr_nak(struct droce_qp *qp, uint32_t psn, uint32_t got)
{
	struct droce_requester *r = &qp->req;
	struct droce_sr *sr = qp->sr;

	if (droce_psn_lt(psn, r->una) || !droce_psn_lt(psn, r->max_psn_sent))
		return;
	sr->base = clamp(r, sr->base);
	sr->hi = clamp(r, sr->hi);
	sr->scan = clamp(r, sr->scan);
	if (droce_psn_lt(sr->base, psn))
		sr->base = psn;
	if (got != psn && droce_psn_lt(psn, got) && droce_psn_lt(got, r->max_psn_sent) &&
	    droce_psn_diff(got, r->una) < (int32_t)DROCE_SR_WIN) {
		sacked_set(sr, got);
		if (!droce_psn_lt(got, sr->hi))
			sr->hi = droce_psn_add(got, 1);
		/* psn was resent before got last left and is still missing: lost again */
		if (droce_sr_bit(sr->resent, psn) &&
		    (int32_t)(sr->tx[got & SR_MASK] - sr->tx[psn & SR_MASK]) > 0) {
			droce_sr_bit_clear(sr->resent, psn);
			if (droce_psn_lt(psn, sr->scan))
				sr->scan = psn;
		}
	}
	if (!droce_psn_lt(psn, sr->hi))
		sr->hi = droce_psn_add(psn, 1);
	r->sr_scan = true;
	droce_sched_ready(qp);
}

/* The WQE holding psn (sent, so between comp and sent_hi), from the last one found on. */
static struct droce_swqe *
find(struct droce_qp *qp, uint32_t psn)
{
	struct droce_requester *r = &qp->req;
	uint32_t i = qp->sr->hint;

	if ((uint32_t)(i - r->comp) >= (uint32_t)(r->sent_hi - r->comp) ||
	    droce_psn_lt(psn, r->ring[i & r->mask].first_psn))
		i = r->comp;
	for (; i != r->sent_hi; i++) {
		struct droce_swqe *w = &r->ring[i & r->mask];

		if (w->state == DROCE_SWQE_POSTED)
			break;
		if (droce_psn_lt(psn, droce_psn_add(w->first_psn, w->npkts))) {
			if (droce_psn_lt(psn, w->first_psn))
				return NULL;
			qp->sr->hint = i;
			return w;
		}
	}
	return NULL;
}

bool
droce_sr_timeout(struct droce_qp *qp, bool all)
{
	struct droce_requester *r = &qp->req;
	struct droce_sr *sr = qp->sr;
	struct droce_swqe *w = find(qp, r->una);

	if (w == NULL || droce_wr_one_request(w->opcode) || r->psn != r->max_psn_sent)
		return false;
	/* the oldest goes even if it was kept: its answer was what got lost, and a duplicate is
	 * answered with an ACK (IBTA 9.7.5.1.2) */
	sacked_clear(sr, r->una);
	sr->base = r->una;
	sr->scan = r->una;
	memset(sr->resent, 0, sizeof(sr->resent));
	if (all) {
		sr->hi = r->max_psn_sent;
	} else {
		/* A message sent before the handshake is unmarked: the responder kept none of it
		 * past the gap, so the rest of it goes again (up to the window). */
		uint32_t end = droce_psn_add(r->una, 1);

		if (!w->sr) {
			end = droce_psn_add(w->first_psn, w->npkts);
			if (droce_psn_diff(end, r->una) > (int32_t)qp->inf.limit)
				end = droce_psn_add(r->una, qp->inf.limit);
		}
		if (droce_psn_lt(sr->hi, end))
			sr->hi = end;
		/* and the newest as a probe (RACK-TLP's, RFC 8985 7): the NAK it draws shows every
		 * hole after the last one reported, a lost tail among them, at once */
		sr->probe = droce_psn_add(r->max_psn_sent, DROCE_PSN_MASK);
		sr->probe_due = true;
	}
	r->sr_scan = true;
	droce_sched_ready(qp);
	return true;
}

/* Send psn of w again alone and note it resent. 1 sent, -EAGAIN no buffer. */
static int
resend_one(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint64_t now)
{
	int rc = droce_req_resend(qp, w, psn, now);

	if (rc == 1) {
		droce_sr_bit_set(qp->sr->resent, psn);
		droce_sr_sent(qp, psn);
	}
	return rc;
}

/* The RTO's probe, unless the scan sent it, it was kept, or its message is a READ or atomic
 * (one request, resent from its first PSN). 1 sent, 0 none, -EAGAIN no buffer. */
static int
probe(struct droce_qp *qp, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	struct droce_sr *sr = qp->sr;
	uint32_t p = sr->probe;
	struct droce_swqe *w;
	int rc;

	if (droce_psn_lt(p, r->una) || !droce_psn_lt(p, r->max_psn_sent) ||
	    droce_sr_bit(sr->sacked, p) || droce_sr_bit(sr->resent, p)) {
		sr->probe_due = false;
		return 0;
	}
	w = find(qp, p);
	if (w == NULL || droce_wr_one_request(w->opcode)) {
		sr->probe_due = false;
		return 0;
	}
	rc = resend_one(qp, w, p, now);
	if (rc == 1)
		sr->probe_due = false;
	return rc;
}

/* The next PSN reported missing (below the highest kept), neither kept nor resent, among those
 * sent in this pass: sent again alone. 1 sent, 0 none left, -EAGAIN no buffer. */
int
droce_sr_resend(struct droce_qp *qp, uint64_t now)
{
	struct droce_requester *r = &qp->req;
	struct droce_sr *sr = qp->sr;
	uint32_t p, lim;
	int rc;

	sr->base = clamp(r, sr->base);
	sr->hi = clamp(r, sr->hi);
	p = clamp(r, sr->scan);
	if (droce_psn_lt(p, sr->base))
		p = sr->base;
	lim = droce_psn_lt(r->psn, sr->hi) ? r->psn : sr->hi;
	while (droce_psn_lt(p, lim)) {
		struct droce_swqe *w;

		if (droce_sr_bit(sr->sacked, p) || droce_sr_bit(sr->resent, p)) {
			p = droce_psn_add(p, 1);
			continue;
		}
		w = find(qp, p);
		if (w == NULL) {
			p = droce_psn_add(p, 1);
			continue;
		}
		/* a READ or atomic is one request: its first PSN stands for the rest */
		if (droce_wr_one_request(w->opcode) && p != w->first_psn) {
			p = droce_psn_add(w->first_psn, w->npkts);
			continue;
		}
		rc = resend_one(qp, w, p, now);
		if (rc != 1) {
			sr->scan = p;
			return rc;
		}
		sr->scan = droce_psn_add(p, droce_wr_one_request(w->opcode) ? w->npkts : 1);
		return 1;
	}
	sr->scan = p;
	if (sr->probe_due) {
		rc = probe(qp, now);
		if (rc != 0)
			return rc;
	}
	r->sr_scan = false;
	return 0;
}
