/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CC_H
#define DROCE_CC_H

/*
 * Congestion-control hook. Each QP owns a small state block; the engine calls the ops as data
 * leaves and feedback arrives, and never sends a data packet before next_send_time(). An
 * algorithm keeps its variables in the opaque words (no allocation per QP).
 */
#include <stdbool.h>
#include <stdint.h>

struct droce_cc_state {
	uint64_t next_send_ns;	/* earliest time the QP may send its next data packet */
	uint64_t w[14];		/* algorithm private */
	/* Set by the engine: the packet on_send() is told about waited for next_send_ns (the
	 * limiter held it), so leaving later than that is the loop's lateness, not idleness. */
	bool held;
};

struct droce_cc_stat {
	const char *name;	/* static storage */
	int64_t value;
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
	/* Optional (NULL: not wanted). A round-trip sample per message whose last request
	 * packet left once: a SEND or WRITE to the ACK that covered it, a READ to its first
	 * response, an atomic to its response; a resent request gives none (Karn). */
	void (*on_rtt)(struct droce_cc_state *s, uint64_t rtt_ns, uint64_t now_ns);
	/* Optional: a QP's state as up to n name/value pairs ("rate_mbps", ...) for telemetry
	 * and tools (droce-stat --qps); returns how many it has. Off the data path. */
	unsigned int (*stats)(const struct droce_cc_state *s, struct droce_cc_stat *out,
			      unsigned int n);
};

/* No congestion control: always allowed to send. */
extern const struct droce_cc_ops droce_cc_none;

/* The algorithm of that name ("none", "dcqcn", "timely", or one registered), or NULL. */
const struct droce_cc_ops *droce_cc_find(const char *name);

/*
 * Algorithms from outside the engine (a researcher's, a plugin's: below). Registered ops are
 * found by name like the built-in ones; the struct must outlive every QP that runs it. 0, or
 * -EINVAL (no name, a name over DROCE_CC_NAME_MAX, or no init, on_send, on_cnp, on_ack or
 * next_send_time), -EEXIST (another algorithm has that name; the same ops again is 0),
 * -ENOSPC (DROCE_CC_REGISTER_MAX registered). Not concurrently with droce_cc_find(): register
 * before devices run.
 */
#define DROCE_CC_NAME_MAX 31
#define DROCE_CC_REGISTER_MAX 8
int droce_cc_register(const struct droce_cc_ops *ops);
/* The names of every algorithm (built-in first), comma-separated, into buf; returns buf. */
char *droce_cc_names(char *buf, unsigned int len);

/*
 * Plugins: a shared object exporting droce_cc_plugin_init(), which registers its algorithms
 * through the table it is handed (no symbol of droce's needs to be visible to it, whether droce
 * is linked statically or not). The DPDK runtime loads one with the `cc_plugin` key
 * (pmd-glue/README.md, "Congestion control"); returns 0 or -errno. The table also carries the
 * helpers rate-based algorithms share.
 */
#define DROCE_CC_PLUGIN_ABI 1
struct droce_cc_plugin_api {
	unsigned int abi;	/* DROCE_CC_PLUGIN_ABI of the droce that loads the plugin */
	int (*register_ops)(const struct droce_cc_ops *ops);
	uint64_t (*next_send_ns)(const struct droce_cc_state *s);
	void (*ignore)(struct droce_cc_state *s, uint64_t now_ns);
	void (*pace)(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns, uint64_t rate_bps,
		     uint64_t max_bps);
	unsigned int (*stats_fill)(struct droce_cc_stat *out, unsigned int n,
				   const char *const *names, const int64_t *values,
				   unsigned int count);
};
#define DROCE_CC_PLUGIN_INIT "droce_cc_plugin_init"
int droce_cc_plugin_init(const struct droce_cc_plugin_api *api);
/* The table droce hands to plugins (its abi is DROCE_CC_PLUGIN_ABI). */
extern const struct droce_cc_plugin_api droce_cc_plugin_api;

/* Parts an algorithm may share (droce_cc.c): next_send_time() as a plain read of
 * next_send_ns, an event it ignores, and pacing at a rate (from max_bps on, the wire paces).
 * A held packet that leaves late (a loop's sleep ending after the deadline) keeps the
 * schedule, up to DROCE_CC_PACE_BURST bytes sent back to back; after idle time the schedule
 * starts anew from now. */
#define DROCE_CC_PACE_BURST 16384
uint64_t droce_cc_next_send_ns(const struct droce_cc_state *s);
void droce_cc_ignore(struct droce_cc_state *s, uint64_t now_ns);
void droce_cc_pace(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns, uint64_t rate_bps,
		   uint64_t max_bps);
/* A stats() op's body: the first n of count names[i] = values[i] into out; returns count. */
unsigned int droce_cc_stats_fill(struct droce_cc_stat *out, unsigned int n,
				 const char *const *names, const int64_t *values,
				 unsigned int count);

/*
 * DCQCN reaction point (droce_cc_dcqcn.c): per-QP rate limiter cut by CNPs, recovering by timer
 * and byte stages. Parameters carry mlx5's names; defaults are ConnectX-5's.
 */
extern const struct droce_cc_ops droce_cc_dcqcn;

struct droce_dcqcn_params {
	uint64_t max_rate_bps;		/* rpg_max_rate: the rate a QP starts at and returns to */
	uint64_t min_rate_bps;		/* rpg_min_rate: no cut goes below */
	uint64_t ai_rate_bps;		/* rpg_ai_rate: additive increase step of the target */
	uint64_t hai_rate_bps;		/* rpg_hai_rate: hyper increase step */
	uint64_t time_reset_ns;		/* rpg_time_reset: rate-increase timer period */
	uint64_t byte_reset;		/* rpg_byte_reset: bytes per byte-counter stage */
	uint32_t threshold;		/* rpg_threshold: stages of fast recovery (F) */
	uint32_t min_dec_fac;		/* rpg_min_dec_fac: percent of the rate a cut keeps at least */
	uint32_t g;			/* dce_tcp_g: alpha gain, in 1/1024 */
	uint64_t alpha_period_ns;	/* dce_tcp_rtt: alpha decays once per period without CNP */
	uint64_t reduce_period_ns;	/* rate_reduce_monitor_period: at most one cut per period */
	uint32_t initial_alpha;		/* initial_alpha_value, in 1/1024 */
};

struct droce_dcqcn_stats {
	uint64_t rate_bps, target_bps;	/* RC, RT */
	uint32_t alpha;			/* in 1/1024 */
	uint64_t cuts, cnp_ignored;	/* CNPs that cut the rate; CNPs inside a monitor period */
};

void droce_cc_dcqcn_defaults(struct droce_dcqcn_params *p);
/* Process-wide; for QPs initialised afterwards. -EINVAL for values out of range. */
int droce_cc_dcqcn_configure(const struct droce_dcqcn_params *p);
const struct droce_dcqcn_params *droce_cc_dcqcn_params(void);
/* A QP's DCQCN state (its struct droce_cc_state, while droce_cc_dcqcn drives it). */
void droce_cc_dcqcn_stats(const struct droce_cc_state *s, struct droce_dcqcn_stats *st);

/*
 * TIMELY (droce_cc_timely.c): per-QP rate from round-trip times (on_rtt), paper parameters.
 */
extern const struct droce_cc_ops droce_cc_timely;

struct droce_timely_params {
	uint64_t max_rate_bps;		/* the rate a QP starts at, and the ceiling */
	uint64_t min_rate_bps;
	uint64_t delta_bps;		/* additive step */
	uint64_t t_low_ns;		/* below: always increase */
	uint64_t t_high_ns;		/* above: decrease by beta (1 - t_high / rtt) */
	uint64_t min_rtt_ns;		/* normalises the gradient */
	uint32_t ewma_alpha;		/* weight of a new RTT change, in 1/1024 (0.875: 896) */
	uint32_t beta;			/* decrease factor, in 1/1024 (0.8: 819) */
	uint32_t hai_n;			/* increase by hai_n delta after 5 falling samples in a row */
};

struct droce_timely_stats {
	uint64_t rate_bps, prev_rtt_ns;
	int64_t rtt_diff_ns;		/* the EWMA of the RTT's change */
	uint64_t samples, decreases;
};

void droce_cc_timely_defaults(struct droce_timely_params *p);
/* Process-wide; for QPs initialised afterwards. -EINVAL for values out of range. */
int droce_cc_timely_configure(const struct droce_timely_params *p);
void droce_cc_timely_stats(const struct droce_cc_state *s, struct droce_timely_stats *st);

#endif /* DROCE_CC_H */
