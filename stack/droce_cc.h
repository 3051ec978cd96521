/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CC_H
#define DROCE_CC_H

/*
 * Congestion-control hook. Each QP owns a small state block; the engine calls the ops as data
 * leaves and feedback arrives, and never sends a data packet before next_send_time(). An
 * algorithm keeps its variables in the opaque words (no allocation per QP).
 */
#include <stdint.h>

struct droce_cc_state {
	uint64_t next_send_ns;	/* earliest time the QP may send its next data packet */
	uint64_t w[14];		/* algorithm private */
};

struct droce_cc_ops {
	const char *name;
	void (*init)(struct droce_cc_state *s, uint64_t now_ns);
	/* A data packet of bytes (whole frame) left at now_ns. */
	void (*on_send)(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns);
	/* A CNP (RoCEv2 Annex A17.9.3) reached this QP. */
	void (*on_cnp)(struct droce_cc_state *s, uint64_t now_ns);
	/* An acknowledgement advanced the send window. */
	void (*on_ack)(struct droce_cc_state *s, uint64_t now_ns);
	uint64_t (*next_send_time)(const struct droce_cc_state *s);
};

/* No congestion control: always allowed to send. */
extern const struct droce_cc_ops droce_cc_none;

#endif /* DROCE_CC_H */
