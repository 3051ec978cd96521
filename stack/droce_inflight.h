/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_INFLIGHT_H
#define DROCE_INFLIGHT_H

/*
 * An RC requester's loss recovery on the standard wire (droce_inflight.c): a cap on the PSNs
 * sent and not yet acknowledged (a bandwidth-delay product, in the spirit of IRN's BDP flow
 * control), and a retransmission timeout from measured round trips (RFC 6298's SRTT/RTTVAR)
 * that resends before the IBTA local ACK timeout without spending retry_cnt.
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_ext.h"

struct droce_qp;

/* Per QP: its settings and what follows from them; the estimator restarts with the QP. */
struct droce_inflight {
	struct droce_inflight_cfg cfg;
	uint32_t full;	       /* the cap in packets, or the engine's window without one */
	uint32_t limit;	       /* PSNs past una the requester may send now: full, or less while
				 * it reopens after an early resend */
	uint32_t ackreq_every; /* AckReq on every Nth packet besides each message's last */
	uint64_t srtt;	       /* ns; 0: no sample yet (the local ACK timeout alone runs) */
	uint64_t rttvar;
	uint64_t rto;	    /* srtt + 4 rttvar, at least cfg.rto_min_ns */
	uint64_t ibta_at;   /* the local ACK timer's own deadline; req.rto_at may be earlier */
	uint8_t backoff;    /* early resends since una passed rewind_hi: the RTO doubles each */
	bool rewound;	    /* an early resend went; una has not passed rewind_hi since */
	uint32_t rewind_hi; /* max_psn_sent at the last early resend */
	bool timing;	    /* timed_psn's first transmission is out, unanswered */
	uint32_t timed_psn;
	uint64_t timed_at;
};

/* A QP's settings from its device's, at creation. */
void droce_inflight_init(struct droce_qp *qp);
/* Recompute the cap (the path MTU or the settings changed). */
void droce_inflight_update(struct droce_qp *qp);
/* Back to RESET: no round trip known. */
void droce_inflight_reset(struct droce_qp *qp);
/* A request packet asking for an ACK left for the first time (times it if none is timed). */
void droce_inflight_sent(struct droce_qp *qp, uint32_t psn, uint64_t now);
/* una moved: a sample if the timed packet is answered; the backoff ends. */
void droce_inflight_acked(struct droce_qp *qp, uint32_t una, uint64_t now);
/* A round-trip sample. */
void droce_inflight_rtt(struct droce_qp *qp, uint64_t rtt_ns);
/* The timer deadline for a local ACK timeout armed now that ends at ibta_at. */
uint64_t droce_inflight_arm(struct droce_qp *qp, uint64_t now, uint64_t ibta_at);
/* A response past a gap: the peer answers, its re-request is under way; an early resend
 * waits another RTO from now (the local ACK timer does not move). */
void droce_inflight_heard(struct droce_qp *qp, uint64_t now);
/* Go-back-N after a timer (early or the local ACK timeout): resend from una, one packet, the
 * window reopening per ACK (RFC 5681 3.1's loss window). */
void droce_inflight_go_back(struct droce_qp *qp);
/* The timer fired before ibta_at: resend from una with no retry spent and re-arm; true then. */
bool droce_inflight_early(struct droce_qp *qp, uint64_t now);

#endif /* DROCE_INFLIGHT_H */
