/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_NETEM_MODEL_H
#define DROCE_NETEM_MODEL_H

/*
 * The impairment model of one link direction, with no EAL: a frame (data, len, arrival time)
 * goes in, zero, one or two timed departures come out. Time is a parameter and randomness
 * comes from a seeded PRNG, so every statistic is testable and every run replayable.
 *
 * Order of effects for a frame: Gilbert-Elliott loss, random loss, duplication, corruption,
 * then per copy: queue limit (tail drop), RED/ECN on the queue seen at arrival, serialisation
 * at the link rate, delay +- jitter, reorder (extra delay).
 */
#include <stdbool.h>
#include <stdint.h>

#include "netem_rng.h"

enum droce_netem_drop {
	DROCE_NETEM_DROP_NONE = 0,
	DROCE_NETEM_DROP_LOSS,	    /* independent random loss */
	DROCE_NETEM_DROP_GE,	    /* Gilbert-Elliott burst loss */
	DROCE_NETEM_DROP_QUEUE,	    /* queue limit reached (tail drop) */
	DROCE_NETEM_DROP_RED,	    /* RED chose a non-ECT frame and red_drop_not_ect is set */
	DROCE_NETEM_DROP_HOLD_FULL, /* runtime: no room to hold the frame until departure */
	DROCE_NETEM_DROP_TX,	    /* runtime: the egress port refused it */
	DROCE_NETEM_DROP_NOMBUF,    /* runtime: no mbuf for a duplicate or linearisation */
	DROCE_NETEM_DROP__MAX,
};

const char *droce_netem_drop_name(enum droce_netem_drop r);

/* Result of droce_netem_mark_ce(). */
enum droce_netem_ecn {
	DROCE_NETEM_ECN_MARKED = 0, /* was ECT(0)/ECT(1), now CE */
	DROCE_NETEM_ECN_ALREADY_CE,
	DROCE_NETEM_ECN_NOT_ECT, /* Not-ECT: left alone */
	DROCE_NETEM_ECN_NOT_IP,	 /* not IPv4/IPv6 or too short: left alone */
};

/* Gilbert-Elliott two-state loss (the same parameters as Linux netem's gemodel). */
struct droce_netem_ge {
	bool on;
	double p;	  /* P(good -> bad) per frame */
	double r;	  /* P(bad -> good) per frame */
	double loss_bad;  /* loss probability in the bad state (1 - h) */
	double loss_good; /* loss probability in the good state (1 - k) */
};

struct droce_netem_cfg {
	uint64_t delay_ns;
	uint64_t jitter_ns;   /* uniform in [-jitter, +jitter], the sum clamped at 0 */
	bool keep_order;      /* jitter never lets a frame overtake an earlier one */
	uint64_t rate_bps;    /* serialisation rate; 0 = infinitely fast, no queue */
	uint32_t overhead;    /* bytes added per frame to serialise (24: preamble, IFG, FCS) */
	uint64_t limit_bytes; /* queue limit; 0 = unbounded */
	double loss;
	struct droce_netem_ge ge;
	double reorder; /* probability that a frame is held reorder_delay_ns longer */
	uint64_t reorder_delay_ns;
	double duplicate;
	double corrupt;	       /* probability of one flipped bit past the Ethernet header */
	bool red_on;	       /* RED/ECN on the serialisation queue (needs rate_bps) */
	bool red_drop_not_ect; /* drop Not-ECT frames RED picks (else pass them unmarked) */
	uint64_t red_kmin;     /* bytes of queue */
	uint64_t red_kmax;
	double red_pmax; /* marking probability at kmax; 1 above kmax */
};

/* The queue each frame found on arrival, in 1 KiB buckets up to 4 MiB (the last holds all
 * above): its percentiles are what a congestion controller holds the queue to. */
#define DROCE_NETEM_QHIST_SHIFT 10
#define DROCE_NETEM_QHIST	4096

struct droce_netem_stats {
	uint64_t rx;
	uint64_t rx_bytes;
	uint64_t out; /* departures scheduled (duplicates included) */
	uint64_t out_bytes;
	uint64_t drop[DROCE_NETEM_DROP__MAX];
	uint64_t duplicated;
	uint64_t corrupted;
	uint64_t reordered;
	uint64_t ce_marked;
	uint64_t ce_already;
	uint64_t red_not_ect;		   /* picked by RED, Not-ECT or not IP, passed unmarked */
	uint64_t max_backlog;		   /* bytes */
	uint64_t qhist[DROCE_NETEM_QHIST]; /* with a rate: frames by the queue they found */
};

/* The queue over time (droce-netem --series): per period from time 0, what arrived and what it
 * found. The samples are the caller's, zeroed; a frame past the last period is only counted. */
struct droce_netem_sample {
	uint32_t frames;
	uint32_t ce;	/* of them marked CE here */
	uint32_t q_max; /* the largest queue one found, bytes */
	uint64_t q_sum; /* the queue they found, summed */
};

struct droce_netem_series {
	struct droce_netem_sample *s;
	uint32_t cap;
	uint32_t len; /* up to the last period a frame arrived in */
	uint64_t period_ns;
	uint64_t beyond; /* frames that arrived after the last period */
};

struct droce_netem {
	struct droce_netem_cfg cfg;
	struct droce_netem_rng rng;
	bool ge_bad;
	uint64_t link_free_ps;	 /* when the serialiser has sent every accepted byte */
	uint64_t last_depart_ns; /* for keep_order */
	struct droce_netem_stats st;
	struct droce_netem_series *series; /* NULL: none; set after droce_netem_init() */
};

/* At most this many departures per frame (the frame and its duplicate). */
#define DROCE_NETEM_MAX_COPIES 2

struct droce_netem_out {
	uint32_t n; /* departures: 0 = dropped */
	uint64_t depart_ns[DROCE_NETEM_MAX_COPIES];
	enum droce_netem_drop drop; /* why a copy was dropped, if one was */
	bool ce_marked;
	bool corrupted;
};

/* Validate a configuration; returns 0 or -EINVAL with a message in err. */
int droce_netem_cfg_check(const struct droce_netem_cfg *cfg, char *err, unsigned int errlen);

void droce_netem_init(struct droce_netem *n, const struct droce_netem_cfg *cfg, uint64_t seed);

/*
 * Pass one frame arriving at now_ns (non-decreasing between calls). The frame may be modified
 * in place (CE mark, bit flip); a duplicate is a copy of the modified frame. Returns out->n.
 */
uint32_t droce_netem_submit(struct droce_netem *n, uint8_t *frame, uint32_t len, uint64_t now_ns,
			    struct droce_netem_out *out);

/* Bytes waiting for serialisation at now_ns. */
uint64_t droce_netem_backlog(const struct droce_netem *n, uint64_t now_ns);

/* The queue that pct percent of the frames found at most (0..100), to the KiB below: the
 * median at 50. 0 without a rate or a frame. */
uint64_t droce_netem_queue_pct(const struct droce_netem_stats *st, double pct);

/* RED marking probability for a queue of q bytes. */
double droce_netem_red_prob(const struct droce_netem_cfg *cfg, uint64_t q);

/*
 * Set ECN CE on an ECT frame (Ethernet, optionally one 802.1Q tag, then IPv4 or IPv6), fixing
 * the IPv4 header checksum. RoCEv2's ICRC masks the traffic class (IBTA A17.3.3), so it stays
 * valid.
 */
enum droce_netem_ecn droce_netem_mark_ce(uint8_t *frame, uint32_t len);

#endif /* DROCE_NETEM_MODEL_H */
