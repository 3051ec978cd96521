/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_SR_H
#define DROCE_SR_H

/*
 * Selective repeat between droce peers (both ends enabled, droce_qp_set_recovery), after an
 * in-band handshake (stack/wire/README.md, "Capability mark"): the responder marks its
 * responses, the requester marks, and gives placement headers to, only the messages it starts
 * after a marked response; the responder keeps and strips only marked packets. One end alone is
 * standard go-back-N.
 *
 * Responder (droce_sr_resp.c): a request that arrives past a gap, within DROCE_SR_WIN PSNs of
 * the expected PSN, is kept: WRITE and SEND data are placed at once (the placement headers of
 * stack/wire/droce_srh.h say where), and what execution needs later is remembered per PSN. Each
 * one is answered by a PSN sequence error NAK (AETH syndrome 0x60, IBTA 9.7.5.2.3) for the first
 * missing PSN whose MSN field carries the PSN that arrived: a selective NAK. When the gap fills,
 * the kept requests execute in PSN order as if they had just arrived (completions, receive WQEs,
 * READ responses and atomics in order), with no second copy of their data. On a shared receive
 * queue, the WQEs a SEND past a gap needs are taken from it then, in ordinal order
 * (droce_sr_srq.c).
 *
 * Requester (droce_sr_req.c): a selective NAK acknowledges everything before its PSN (IBTA
 * 9.7.5.2.2), marks the PSN it carries as received, and every PSN between the first missing and
 * the highest received that is neither received nor already resent is sent again, alone. A
 * resend reported still missing by a NAK for a packet first sent after it was lost again: it is
 * resent once more. The in-flight cap counts only what is in the network: packets reported
 * kept do not count (droce_req.c), so new packets keep drawing NAKs past a hole. An RTO resends
 * the oldest PSN and the newest as a probe and keeps the window (droce_inflight.c); the local
 * ACK timeout resends every PSN not kept.
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_internal.h"

#define DROCE_SR_WIN	   2048 /* PSNs past the expected one a request may be kept from */
#define DROCE_SR_MAX_PAY   4096 /* data bytes of a packet at most (the largest path MTU) */
#define DROCE_SR_SRQ_AHEAD 16	/* shared receive queue WQEs a QP may take before their turn */

/* What a kept request's execution needs, by PSN & (DROCE_SR_WIN - 1). */
struct droce_sr_slot {
	uint8_t opcode;
	bool se;
	uint16_t pay_len; /* data bytes (placement header excluded) */
	uint32_t imm;	  /* ImmDt, or the IETH R_Key */
	uint32_t rkey;	  /* RETH or AtomicETH */
	uint32_t len;	  /* RETH DMA length */
	uint64_t va;	  /* RETH or AtomicETH */
	uint64_t swap;	  /* atomic swap/add, ATOMIC WRITE data */
	uint64_t compare;
	uint64_t pva; /* WRITE data placed at [pva, pva + pay_len) */
};

struct droce_sr {
	/* requester: by PSN & (DROCE_SR_WIN - 1), for PSNs in [una, max_psn_sent) */
	uint64_t sacked[DROCE_SR_WIN / 64]; /* the responder reported it kept */
	uint32_t sacked_n;		    /* bits set in sacked: out of the network */
	uint64_t resent[DROCE_SR_WIN / 64]; /* resent alone, not known lost again */
	uint32_t tx[DROCE_SR_WIN];	    /* tx_seq of its latest transmission */
	uint32_t tx_seq;		    /* request packets sent so far (original or resent) */
	uint32_t base;	/* the responder's first missing PSN, as last reported */
	uint32_t hi;	/* one past the highest PSN reported missing or kept */
	uint32_t scan;	/* PSNs below it were looked at since hi last grew */
	uint32_t hint;	/* ring index of the WQE the last resend belonged to */
	uint32_t probe; /* the RTO's probe: the newest PSN sent then */
	bool probe_due;
	uint32_t ord_next; /* receive ordinal of the next message that consumes one */
	bool known;	   /* a response came: peer tells what the peer has */
	bool peer;	   /* a marked response came: the peer has selective repeat too */
	/* responder */
	uint64_t kept[DROCE_SR_WIN / 64];
	uint32_t kept_n;
	uint32_t kept_hi;     /* one past the highest kept PSN */
	uint32_t ord;	      /* receive WQEs consumed in order (the next message's ordinal) */
	uintptr_t kmin, kmax; /* bounds of the WRITE data kept requests placed */
	bool replay;	      /* executing kept requests: their data is in place already */
	/* responder on a shared receive queue: WQEs taken from it for ordinals ord, ord + 1, ..
	 * (droce_sr_srq.c), a ring of srq_n from srq_head */
	uint32_t srq_head, srq_n;
	struct droce_rwqe srq_wqe[DROCE_SR_SRQ_AHEAD];
	struct droce_sge srq_sge[DROCE_SR_SRQ_AHEAD][DROCE_MAX_SGE];
	struct droce_sr_slot slot[DROCE_SR_WIN];
};

static inline bool
droce_sr_bit(const uint64_t *b, uint32_t psn)
{
	uint32_t i = psn & (DROCE_SR_WIN - 1);

	return (b[i >> 6] >> (i & 63)) & 1;
}

static inline void
droce_sr_bit_set(uint64_t *b, uint32_t psn)
{
	uint32_t i = psn & (DROCE_SR_WIN - 1);

	b[i >> 6] |= 1ull << (i & 63);
}

static inline void
droce_sr_bit_clear(uint64_t *b, uint32_t psn)
{
	uint32_t i = psn & (DROCE_SR_WIN - 1);

	b[i >> 6] &= ~(1ull << (i & 63));
}

/* Placement header bytes an opcode carries at the start of its payload (0: none). */
uint32_t droce_sr_hdr_len(uint8_t opcode);
/* Fill the placement header of a packet of w at byte offset off. */
void droce_sr_hdr_put(uint8_t *dst, uint8_t opcode, const struct droce_swqe *w, uint32_t off);
/* The receive ordinal a new message w takes, if it consumes a receive WQE. */
void droce_sr_assign_ord(struct droce_qp *qp, struct droce_swqe *w);

/* droce_sr_req.c */
/* A WRITE whose target overlaps a READ or atomic still outstanding waits for it: its data,
 * placed as soon as it arrives, must not reach what that request has yet to read. */
bool droce_sr_fence(const struct droce_qp *qp, const struct droce_swqe *w);
void droce_sr_reset(struct droce_qp *qp);
void droce_sr_passed(struct droce_qp *qp, uint32_t old_una);
/* Request PSN psn left for the first time, or in a go-back-N pass (the order of transmissions
 * tells a resend lost again). */
static inline void
droce_sr_sent(struct droce_qp *qp, uint32_t psn)
{
	qp->sr->tx[psn & (DROCE_SR_WIN - 1)] = ++qp->sr->tx_seq;
}
void droce_sr_nak(struct droce_qp *qp, uint32_t psn, uint32_t got);
int droce_sr_resend(struct droce_qp *qp, uint64_t now);
/* A timer expired: with all (the local ACK timer) every PSN outstanding and not kept is resent
 * alone; without (the RTO, droce_inflight.c) the oldest, the holes NAKs showed and the newest as
 * a probe (false: the oldest is a READ or atomic, or a rewind is under way; go-back-N then). */
bool droce_sr_timeout(struct droce_qp *qp, bool all);

/* droce_req.c: send PSN psn of w once more, alone (a READ or atomic: its whole request).
 * 1 sent, -EAGAIN no buffer. */
int droce_req_resend(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint64_t now);

/* droce_sr_resp.c */
void droce_sr_resp_ahead(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame);
void droce_sr_resp_advance(struct droce_qp *qp);
/* p without its placement header in *tmp (p itself when it has none); NULL: too short. */
const struct droce_pkt *droce_sr_strip(const struct droce_qp *qp, const struct droce_pkt *p,
				       struct droce_pkt *tmp);

/* RDMA WRITE data of request psn: the bytes a kept later request placed already stay (the later
 * WRITE wins, as in-order execution would leave them). */
void droce_sr_write(struct droce_qp *qp, uint32_t psn, uint8_t *dst, const uint8_t *src,
		    uint32_t n);

/* droce_sr_srq.c */
/* The shared receive queue WQE of the message idx places after the next one to consume a
 * receive WQE (taking it, and those before it, from the SRQ now); NULL: none left, or too far. */
const struct droce_rwqe *droce_sr_srq_target(struct droce_qp *qp, uint32_t idx);
/* The next receive WQE, one taken ahead (false: none was). */
bool droce_sr_srq_pop(struct droce_qp *qp, struct droce_rwqe *out);
/* Complete the WQEs taken ahead with WR_FLUSH_ERR (the QP went to the error state). */
void droce_sr_srq_flush(struct droce_qp *qp);

static inline bool
droce_sr_replaying(const struct droce_qp *qp)
{
	return qp->sr != NULL && qp->sr->replay;
}

#endif /* DROCE_SR_H */
