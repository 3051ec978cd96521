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

/*
 * Parameters. Every QP has its own copy (struct droce_qp_init_attr's cc_params, or its device's,
 * droce_dev_set_cc()), so two devices or two QPs run the same algorithm with different values.
 * DCQCN's (mlx5's names and meaning) and TIMELY's have their structs; a plugin's algorithm uses
 * the words as it likes.
 */
struct droce_dcqcn_params {
	uint64_t line_rate_bps;	   /* the port's: at or above it the wire paces, not the QP */
	uint64_t max_rate_bps;	   /* rpg_max_rate: the rate a QP starts at and returns to */
	uint64_t min_rate_bps;	   /* rpg_min_rate: no cut goes below */
	uint64_t ai_rate_bps;	   /* rpg_ai_rate: additive increase step of the target */
	uint64_t hai_rate_bps;	   /* rpg_hai_rate: hyper increase step */
	uint64_t time_reset_ns;	   /* rpg_time_reset: rate-increase timer period */
	uint64_t byte_reset;	   /* rpg_byte_reset: bytes per byte-counter stage, 0: none */
	uint32_t threshold;	   /* rpg_threshold: stages of fast recovery (F) */
	uint32_t min_dec_fac;	   /* rpg_min_dec_fac: percent of the rate a cut keeps at least */
	uint32_t g;		   /* dce_tcp_g: alpha gain, in 1/1024 */
	uint64_t alpha_period_ns;  /* dce_tcp_rtt: alpha decays once per period without CNP */
	uint64_t reduce_period_ns; /* rate_reduce_monitor_period: at most one cut per period */
	uint32_t initial_alpha;	   /* initial_alpha_value, in 1/1024 */
	/* 1: also at most one cut per smoothed round trip, and a CNP inside it restarts the
	 * recovery stages (droce's; mlx5 has no such rule: 0) */
	uint32_t cut_per_rtt;
	/* N: a cut starts from at most N times the rate the QP sent since its last cut, for a
	 * QP held below RC by something else (a path slower than line_rate_bps, its window,
	 * the loop); 0: from RC alone (the paper's and mlx5's) */
	uint32_t cut_from_sent;
	/* 1: every cut sets the target to the rate it cuts from (the paper's); 0: only a cut
	 * after a timer stage does, so a train of cuts recovers towards the rate before the
	 * first (mlx5's clamp_tgt_rate 0 with clamp_tgt_rate_after_time_inc 1) */
	uint32_t clamp_tgt_rate;
	/* the additive step adds this many millionths of RT to R_AI: the flows' steps then sum
	 * to a share of the link whatever their number, a few flows recover sooner and many no
	 * faster; 0: R_AI alone (the paper's and mlx5's) */
	uint32_t ai_rate_ppm;
	/* percent of each cut that RT takes too, so that fast recovery returns short of the
	 * rate cut from and each CNP lowers the level a QP settles at; 0: RT keeps the rate
	 * cut from (the paper's and mlx5's) */
	uint32_t target_cut_pct;
	/* a QP among few: while its target is at least max_rate / level_min_share and alpha
	 * is under level_max_alpha (in 1/1024: past the start), a cut lowers the target by
	 * level_cut_pct percent of the way from it down to the new rate, not to the rate cut
	 * from, which depends on how far recovery had come; 0: off (the paper's and mlx5's) */
	uint32_t level_cut_pct;
	uint32_t level_min_share;
	uint32_t level_max_alpha;
	/* a cut while the target is at max_rate (the first of a congestion episode) of a QP
	 * that its window held (since its start or last cut it sent under 90 % of RC) sets the
	 * target this percent of the way down to the new rate, so that a QP whose second CNP
	 * came early is not a cut's worth below the others for the rest of the start; a QP
	 * sending at its rate (a flow alone on its link) keeps max_rate as the target;
	 * 0: the target stays at max_rate (the paper's and mlx5's) */
	uint32_t first_cut_pct;
	/* a paced QP: one that since its last cut sent at least the rate that cut set (the
	 * limiter holds it, not its window) and whose target is at least max_rate /
	 * paced_min_share lowers the target by paced_cut_pct percent of the way from it down
	 * to the new rate (level_cut_pct, where that holds, comes first); 0: off */
	uint32_t paced_cut_pct;
	uint32_t paced_min_share;
};

struct droce_timely_params {
	uint64_t line_rate_bps; /* the port's: at or above it the wire paces, not the QP */
	uint64_t max_rate_bps;	/* the rate a QP starts at, and the ceiling */
	uint64_t min_rate_bps;
	uint64_t delta_bps;  /* additive step */
	uint64_t t_low_ns;   /* below: always increase */
	uint64_t t_high_ns;  /* above: decrease by beta (1 - t_high / rtt) */
	uint64_t min_rtt_ns; /* normalises the gradient */
	uint32_t ewma_alpha; /* weight of a new RTT change, in 1/1024 (0.875: 896) */
	uint32_t beta;	     /* decrease factor, in 1/1024 (0.8: 819) */
	uint32_t hai_n;	     /* increase by hai_n delta after 5 falling samples in a row */
};

#define DROCE_CC_PARAM_WORDS 18
union droce_cc_params {
	struct droce_dcqcn_params dcqcn;
	struct droce_timely_params timely;
	uint64_t w[DROCE_CC_PARAM_WORDS]; /* a plugin's */
};
/* the built-in algorithms' parameters fit in a plugin's words: the union keeps its size */
_Static_assert(sizeof(union droce_cc_params) == DROCE_CC_PARAM_WORDS * sizeof(uint64_t),
	       "union droce_cc_params grew");

struct droce_cc_state {
	uint64_t next_send_ns; /* earliest time the QP may send its next data packet */
	uint64_t w[16];	       /* algorithm private */
	/* Set by the engine: the packet on_send() is told about waited for next_send_ns (the
	 * limiter held it), so leaving later than that is the loop's lateness, not idleness. */
	bool held;
	/* Set by the engine before init() (which zeroes the rest of the state and leaves this):
	 * the QP's parameters, which stay put while the QP runs the algorithm. */
	const union droce_cc_params *params;
};

struct droce_cc_stat {
	const char *name; /* static storage */
	int64_t value;
};

struct droce_cc_ops {
	const char *name;
	/* Optional (NULL: all zero): the parameters to run with on a port of link_bps bit/s
	 * (0: unknown), into *p. */
	void (*defaults)(union droce_cc_params *p, uint64_t link_bps);
	/* Optional (NULL: any is fine): 0, or -EINVAL for parameters it cannot run with. */
	int (*check)(const union droce_cc_params *p);
	/* A QP starts (or restarts) running the algorithm: the engine has zeroed *s but for
	 * s->params. */
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

/*
 * Algorithms from outside the engine (a researcher's, a plugin's: below) live in a registry its
 * owner keeps (each device has one, droce_dev_cc_register(); the runtime keeps the plugins' one):
 * the engine has no process-wide list. Registered ops are found by name after the built-in ones;
 * the struct must outlive every QP that runs it.
 */
#define DROCE_CC_NAME_MAX     31
#define DROCE_CC_REGISTER_MAX 8
struct droce_cc_registry {
	const struct droce_cc_ops *ops[DROCE_CC_REGISTER_MAX];
	unsigned int n;
};

/* The algorithm of that name ("none", "dcqcn", "timely", or one in reg; reg NULL: the built-in
 * ones only), or NULL. */
const struct droce_cc_ops *droce_cc_find(const struct droce_cc_registry *reg, const char *name);
/* 0, or -EINVAL (no registry, no name, a name over DROCE_CC_NAME_MAX, or no init, on_send,
 * on_cnp, on_ack or next_send_time), -EEXIST (another algorithm has that name; the same ops
 * again is 0), -ENOSPC (DROCE_CC_REGISTER_MAX registered). */
int droce_cc_register(struct droce_cc_registry *reg, const struct droce_cc_ops *ops);
/* The names of every algorithm (built-in first, then reg's), comma-separated, into buf. */
char *droce_cc_names(const struct droce_cc_registry *reg, char *buf, unsigned int len);
/* ops' defaults for a port of link_bps (zeroes without a defaults op), and its check. */
void droce_cc_defaults(const struct droce_cc_ops *ops, union droce_cc_params *p, uint64_t link_bps);
int droce_cc_check(const struct droce_cc_ops *ops, const union droce_cc_params *p);

/*
 * Plugins: a shared object exporting droce_cc_plugin_init(), which registers its algorithms
 * into the registry it is handed, through the table it is handed (no symbol of droce's needs to be visible to it, whether droce
 * is linked statically or not). The DPDK runtime loads one with the `cc_plugin` key
 * (pmd-glue/README.md, "Congestion control"); returns 0 or -errno. The table also carries the
 * helpers rate-based algorithms share.
 */
/* ABI 2: parameters per QP (droce_cc_state.params; defaults and check ops), a registry per
 * owner instead of a process-wide one. */
#define DROCE_CC_PLUGIN_ABI 2
struct droce_cc_plugin_api {
	unsigned int abi; /* DROCE_CC_PLUGIN_ABI of the droce that loads the plugin */
	int (*register_ops)(struct droce_cc_registry *reg, const struct droce_cc_ops *ops);
	uint64_t (*next_send_ns)(const struct droce_cc_state *s);
	void (*ignore)(struct droce_cc_state *s, uint64_t now_ns);
	void (*pace)(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns, uint64_t rate_bps,
		     uint64_t max_bps);
	unsigned int (*stats_fill)(struct droce_cc_stat *out, unsigned int n,
				   const char *const *names, const int64_t *values,
				   unsigned int count);
};
#define DROCE_CC_PLUGIN_INIT "droce_cc_plugin_init"
int droce_cc_plugin_init(const struct droce_cc_plugin_api *api, struct droce_cc_registry *reg);
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
 * and byte stages. Parameters carry mlx5's names.
 */
extern const struct droce_cc_ops droce_cc_dcqcn;

struct droce_dcqcn_stats {
	uint64_t rate_bps, target_bps; /* RC, RT */
	uint32_t alpha;		       /* in 1/1024 */
	uint64_t cuts, cnp_ignored;    /* CNPs that cut the rate; CNPs inside a monitor period */
};

/* The defaults for a port of link_bps (0: 100 Gbit/s assumed); 0 or -EINVAL for values out
 * of range. */
void droce_cc_dcqcn_defaults(struct droce_dcqcn_params *p, uint64_t link_bps);
/* The notification point's CNP interval that goes with those defaults (the paper's 50 us,
 * stretched below 25 Gbit/s as the timers are), in ns. */
uint64_t droce_cc_dcqcn_cnp_interval(uint64_t link_bps);
/* ConnectX-5's firmware defaults (rpg_ai_rate 5 Mb/s, rpg_time_reset 300 us, rpg_threshold 1,
 * dce_tcp_g 1019 every 1 us, clamp_tgt_rate 0, ...; the increase on the timer alone, as the
 * HPCC simulator models it) for a port of link_bps: as they are at 25 Gbit/s and above,
 * slowed down by 25G / link below (timers longer, steps smaller). */
void droce_cc_dcqcn_mlx5(struct droce_dcqcn_params *p, uint64_t link_bps);
/* mlx5's min_time_between_cnps (4 us) for a port of link_bps, stretched as those timers are. */
uint64_t droce_cc_dcqcn_mlx5_cnp_interval(uint64_t link_bps);
int droce_cc_dcqcn_check(const struct droce_dcqcn_params *p);
/* A QP's DCQCN state (its struct droce_cc_state, while droce_cc_dcqcn drives it). */
void droce_cc_dcqcn_stats(const struct droce_cc_state *s, struct droce_dcqcn_stats *st);

/*
 * TIMELY (droce_cc_timely.c): per-QP rate from round-trip times (on_rtt), paper parameters.
 */
extern const struct droce_cc_ops droce_cc_timely;

struct droce_timely_stats {
	uint64_t rate_bps, prev_rtt_ns;
	int64_t rtt_diff_ns; /* the EWMA of the RTT's change */
	uint64_t samples, decreases;
};

void droce_cc_timely_defaults(struct droce_timely_params *p, uint64_t link_bps);
int droce_cc_timely_check(const struct droce_timely_params *p);
void droce_cc_timely_stats(const struct droce_cc_state *s, struct droce_timely_stats *st);

#endif /* DROCE_CC_H */
