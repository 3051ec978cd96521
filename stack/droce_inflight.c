/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-flight cap and RTT-based retransmission timeout of RC requesters (droce_inflight.h).
 *
 * The cap bounds what a go-back-N rewind throws away: without it a requester puts its whole
 * send queue on the wire (up to 1024 PSNs), and one loss costs all of it sent again. With it,
 * about one bandwidth-delay product is out, as IRN's BDP flow control keeps it. Its round trip
 * is configured (_CAP_BDP), or with _CAP_AUTO the QP's smoothed RTT above a configured floor:
 * a software path's round trip under load is its processes' scheduling, not the wire's, and
 * no one figure fits every host. The RTT includes the queue the cap itself builds, so the cap
 * settles where it is when the link is the bottleneck (cap = rate x (delay + queue)); it
 * grows when the path is slower than path_bps, hence path_bps should be the bottleneck's.
 *
 * The RTO (RFC 6298 2.2-2.3, 5.5-5.7): SRTT and RTTVAR from round trips of request packets that
 * ask for an ACK, one timed at a time, from its first transmission to the ACK (or response)
 * that moves una past it; a rewind stops the timing (Karn's rule: an answer to a resend cannot
 * be told from one to the first). Per packet, not per message: under loss a long message is
 * rarely sent once from end to end, and the RTO would never learn a round trip.
 * RTO = SRTT + 4 RTTVAR, at least the floor, doubled after each early resend until the peer
 * acknowledges something sent after it (under heavy loss waiting for the next sample let the
 * backoff climb to the local ACK timeout; ending it at any ACK kept an RTO below a grown round
 * trip firing for every packet, never sampled). Under go-back-N an early resend sends one
 * packet and the window reopens, doubling per ACK (RFC 5681 3.1's loss window): a timer that
 * fired early costs one packet, not a window. So does a retry after the local ACK timeout
 * (droce_inflight_go_back): a QP whose first window was dropped whole has no round trip
 * yet, hence no RTO, and its whole window resent into a full tail-drop queue was lost whole
 * each time until retry_cnt ran out. Under selective repeat it resends the oldest and
 * a probe (droce_sr_timeout) and the window stays open. While the device hears nothing after
 * one QP's early resend, only that QP resends (it probes the path); the others wait. READs and
 * atomics have an early resend too: their responses stream at the responder's pace, but each
 * one that moves una or comes past a gap re-arms the timer (droce_comp.c), so it fires on the
 * peer's silence, when the last responses out were lost (a READ's tail, a re-request's answer,
 * an atomic's response). It asks for the oldest one's first missing run alone, a probe
 * (droce_rd_timeout), where the local ACK timeout (code 18, rdma_cm's default: 1.07 s) would
 * have stalled the QP. It only
 * ever fires before the IBTA local ACK timer (C9-140, 9.7.6.1.3: 4.096 us x 2^timeout): that
 * timer keeps its own deadline, and only its expiry spends retry_cnt, so RETRY_EXC_ERR comes
 * exactly when IBTA says.
 */
#include <errno.h>

#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_sr.h"

#define INFLIGHT_MIN_CAP     4 /* below this the window stalls on every ACK's round trip */
#define INFLIGHT_UNKNOWN_BPS 100000000000ull /* a port that reports no speed */
#define INFLIGHT_MAX_BACKOFF 16

void
droce_inflight_defaults(struct droce_inflight_cfg *c)
{
	c->cap = DROCE_INFLIGHT_CAP_BDP;
	c->path_bps = 0;
	c->rtt_ns = 0;
	c->rto = true;
	c->rto_min_ns = DROCE_INFLIGHT_RTO_MIN_NS;
}

/* Packets in path_bps x rtt ns at this MTU; bps / 8000 x ns / 10^6 = bytes without overflow
 * up to 1.6 Tbit/s and seconds of round trip. */
static uint32_t
bdp_pkts(const struct droce_qp *qp, const struct droce_inflight_cfg *c, uint64_t rtt)
{
	uint64_t bps = c->path_bps	      ? c->path_bps :
		       qp->dev->attr.link_bps ? qp->dev->attr.link_bps :
						INFLIGHT_UNKNOWN_BPS;
	uint64_t bytes = bps / 8000 * rtt / 1000000;
	uint64_t n = (bytes + qp->mtu - 1) / qp->mtu;

	return n > DROCE_MAX_INFLIGHT ? DROCE_MAX_INFLIGHT : (uint32_t)n;
}

/* The cap's packets from the settings: the configured round trip's BDP, and with _AUTO the
 * smoothed round trip's when that is longer (what this path takes with the window in flight). */
static uint32_t
cap_pkts(const struct droce_qp *qp, const struct droce_inflight *f)
{
	uint64_t rtt = f->cfg.rtt_ns ? f->cfg.rtt_ns : DROCE_INFLIGHT_RTT_NS;

	if (f->cfg.cap != DROCE_INFLIGHT_CAP_BDP && f->cfg.cap != DROCE_INFLIGHT_CAP_AUTO)
		return f->cfg.cap;
	if (qp->mtu == 0)
		return 0; /* sized again with the MTU */
	if (f->cfg.cap == DROCE_INFLIGHT_CAP_AUTO && f->srtt > rtt)
		rtt = f->srtt;
	return bdp_pkts(qp, &f->cfg, rtt);
}

/* The window in force: the cap, or less while it reopens after an early resend. */
static void
set_limit(struct droce_inflight *f, uint32_t n)
{
	f->limit = n;
	if (n >= DROCE_MAX_INFLIGHT)
		f->ackreq_every = DROCE_ACKREQ_EVERY;
	else /* an ACK per quarter of it: the window reopens before it is used up */
		f->ackreq_every = n / 4 ? n / 4 : 1;
}

static uint32_t
full_pkts(const struct droce_qp *qp, const struct droce_inflight *f)
{
	uint32_t cap = cap_pkts(qp, f);

	if (cap == 0 || cap >= DROCE_MAX_INFLIGHT)
		return DROCE_MAX_INFLIGHT;
	return cap < INFLIGHT_MIN_CAP ? INFLIGHT_MIN_CAP : cap;
}

void
droce_inflight_update(struct droce_qp *qp)
{
	struct droce_inflight *f = &qp->inf;

	f->full = full_pkts(qp, f);
	set_limit(f, f->full);
}

/* _AUTO after a round-trip sample: the cap follows it; a window reopening after an early
 * resend keeps reopening (droce_inflight_acked) up to the new cap. */
static void
follow_rtt(struct droce_qp *qp)
{
	struct droce_inflight *f = &qp->inf;
	uint32_t full = full_pkts(qp, f);

	if (full == f->full)
		return;
	if (f->limit >= f->full || f->limit > full)
		set_limit(f, full);
	f->full = full;
}

void
droce_inflight_init(struct droce_qp *qp)
{
	qp->inf.cfg = qp->dev->inflight;
	droce_inflight_reset(qp);
}

void
droce_inflight_reset(struct droce_qp *qp)
{
	struct droce_inflight *f = &qp->inf;

	f->srtt = f->rttvar = f->rto = 0;
	f->backoff = 0;
	f->rewound = false;
	f->timing = false;
	f->ibta_at = UINT64_MAX;
	droce_inflight_update(qp);
}

void
droce_inflight_sent(struct droce_qp *qp, uint32_t psn, uint64_t now)
{
	struct droce_inflight *f = &qp->inf;

	/* the auto cap samples round trips as the RTO does */
	if (f->timing || (!f->cfg.rto && f->cfg.cap != DROCE_INFLIGHT_CAP_AUTO))
		return;
	f->timing = true;
	f->timed_psn = psn;
	f->timed_at = now;
}

void
droce_inflight_acked(struct droce_qp *qp, uint32_t una, uint64_t now)
{
	struct droce_inflight *f = &qp->inf;

	/* The path delivers again: the backoff ends, as the retry count refills, once una passes
	 * what was out at the last early resend. An ACK for those PSNs may answer their first
	 * transmission (the resend was spurious: the round trip outgrew the RTO), and ending the
	 * backoff there would let every later packet time out alike and never be sampled (Karn;
	 * RFC 6298 5.7 keeps the backed-off RTO until a new sample). */
	if (!f->rewound || droce_psn_lt(f->rewind_hi, una)) {
		f->backoff = 0;
		f->rewound = false;
	}
	if (f->limit < f->full) /* reopen: double per ACK that moves una (slow start) */
		set_limit(f, f->limit * 2 < f->full ? f->limit * 2 : f->full);
	if (f->timing && droce_psn_lt(f->timed_psn, una)) {
		f->timing = false;
		droce_inflight_rtt(qp, now - f->timed_at);
	}
}

void
droce_inflight_rtt(struct droce_qp *qp, uint64_t rtt)
{
	struct droce_inflight *f = &qp->inf;

	if (rtt == 0)
		rtt = 1; /* 0 means "no sample" */
	if (f->srtt == 0) {
		f->srtt = rtt;
		f->rttvar = rtt / 2;
	} else {
		uint64_t d = f->srtt > rtt ? f->srtt - rtt : rtt - f->srtt;

		f->rttvar = (3 * f->rttvar + d) / 4;
		f->srtt = (7 * f->srtt + rtt) / 8;
	}
	f->rto = f->srtt + 4 * f->rttvar;
	if (f->rto < f->cfg.rto_min_ns)
		f->rto = f->cfg.rto_min_ns;
	f->backoff = 0;
	if (f->cfg.cap == DROCE_INFLIGHT_CAP_AUTO)
		follow_rtt(qp);
}

static uint64_t
early_at(const struct droce_inflight *f, uint64_t now)
{
	uint64_t t;

	/* Timeout 0 disables the local ACK timer (C9-140): no resend on a timer at all then. */
	if (!f->cfg.rto || f->srtt == 0 || f->ibta_at == UINT64_MAX)
		return f->ibta_at;
	t = now + (f->rto << f->backoff);
	return t < f->ibta_at ? t : f->ibta_at;
}

uint64_t
droce_inflight_arm(struct droce_qp *qp, uint64_t now, uint64_t ibta_at)
{
	qp->inf.ibta_at = ibta_at;
	return early_at(&qp->inf, now);
}

void
droce_inflight_heard(struct droce_qp *qp, uint64_t now)
{
	/* A later deadline needs no heap move (droce_comp_arm_rto). */
	if (qp->req.rto_at < qp->inf.ibta_at)
		qp->req.rto_at = early_at(&qp->inf, now);
}

void
droce_inflight_go_back(struct droce_qp *qp)
{
	set_limit(&qp->inf, 1);
	droce_req_go_back(qp, qp->req.una);
}

/* What an early resend sends. READs and atomics: the oldest one's first missing run, asked
 * for again (droce_rd_timeout). Selective repeat resends the oldest and the holes NAKs showed,
 * and keeps its window: new packets draw the NAKs that find what else is missing (a window of
 * one would wait for una to pass every hole, each on a doubled RTO). Go-back-N resends the
 * window from una: one packet, then more as ACKs come (above). */
static void
early_resend(struct droce_qp *qp)
{
	const struct droce_swqe *w = &qp->req.ring[qp->req.comp & qp->req.mask];

	if (droce_wr_is_rd_atomic(w->opcode)) {
		droce_rd_timeout(qp);
		return;
	}
	if (qp->sr != NULL && qp->sr->peer && droce_sr_timeout(qp, false))
		return;
	droce_inflight_go_back(qp);
}

bool
droce_inflight_early(struct droce_qp *qp, uint64_t now)
{
	struct droce_inflight *f = &qp->inf;

	if (now >= f->ibta_at)
		return false;
	/* Nothing came in since another QP's early resend: the path or the peer is quiet for
	 * all of them (a pause of either process, a link down), and that resend probes it. The
	 * others wait another RTO rather than each resend into the same silence (on a loaded
	 * host, 1000 QPs with one WRITE each in flight sent up to 64 needless resends a pause). */
	if (!qp->dev->rto_heard && qp->dev->rto_prober != qp->qpn) {
		droce_qp_cnt(qp, DROCE_CNT_RTO_DEFERRED);
		qp->req.rto_at = early_at(f, now);
		return true;
	}
	qp->dev->rto_heard = false;
	qp->dev->rto_prober = qp->qpn;
	droce_qp_cnt(qp, DROCE_CNT_RTO_RESEND);
	if (f->backoff < INFLIGHT_MAX_BACKOFF)
		f->backoff++;
	f->rewound = true;
	f->rewind_hi = qp->req.max_psn_sent;
	early_resend(qp);
	qp->req.rto_at = early_at(f, now);
	return true;
}

int
droce_dev_set_inflight(struct droce_dev *dev, const struct droce_inflight_cfg *c)
{
	if (dev == NULL || c == NULL)
		return -EINVAL;
	dev->inflight = *c;
	return 0;
}

const struct droce_inflight_cfg *
droce_dev_inflight(const struct droce_dev *dev)
{
	return dev != NULL ? &dev->inflight : NULL;
}

int
droce_qp_set_inflight(struct droce_qp *qp, const struct droce_inflight_cfg *c)
{
	if (qp == NULL || !qp->used || c == NULL)
		return -EINVAL;
	qp->inf.cfg = *c;
	if (qp->inf.srtt != 0) {
		qp->inf.rto = qp->inf.srtt + 4 * qp->inf.rttvar;
		if (qp->inf.rto < c->rto_min_ns)
			qp->inf.rto = c->rto_min_ns;
	}
	droce_inflight_update(qp);
	return 0;
}

int
droce_qp_inflight(const struct droce_qp *qp, struct droce_inflight_info *info)
{
	const struct droce_inflight *f;

	if (qp == NULL || !qp->used || info == NULL)
		return -EINVAL;
	f = &qp->inf;
	info->cap = f->full < DROCE_MAX_INFLIGHT ? f->full : 0;
	info->ackreq_every = f->ackreq_every;
	info->srtt_ns = f->srtt;
	info->rttvar_ns = f->rttvar;
	info->ibta_ns = qp->attr.timeout ? 4096ull << qp->attr.timeout : UINT64_MAX;
	info->rto_ns = 0;
	if (f->cfg.rto && f->srtt != 0 && qp->attr.timeout != 0) {
		info->rto_ns = f->rto << f->backoff;
		if (info->rto_ns > info->ibta_ns)
			info->rto_ns = info->ibta_ns;
	}
	return 0;
}
