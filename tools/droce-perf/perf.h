/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_PERF_H
#define DROCE_PERF_H

/* droce-perf: shared types of the options, exchange, run, verify and report modules. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "droce_rt.h"
#include "droce_verbs.h"

enum {
	PERF_MAX_SIZES = 32,
	PERF_MAX_QPS = 16384,
	PERF_MAX_SIZE = 1 << 20,    /* 1 MiB: the sweep's top */
	PERF_BUF_CAP = 16 << 20,    /* bytes of slots per QP and side */
	PERF_BUF_MB = 256,	    /* MiB per shard by default: beyond it QPs share regions */
	PERF_MAX_SAMPLES = 1 << 22, /* latency samples kept per size */
	PERF_DEF_PORT = 18515,	    /* perftest's default */
	PERF_EXIT_FAIL = 1,
	PERF_EXIT_USAGE = 2,
};

enum perf_op {
	PERF_OP_WRITE,
	PERF_OP_READ,
	PERF_OP_SEND,
	PERF_OP_FADD,
	PERF_OP_CSWAP,
	PERF_OP_AWRITE, /* IBTA 1.5 ATOMIC WRITE: 8 bytes onto the counter, as the atomics */
	PERF_OP_LAST = PERF_OP_AWRITE
};
enum perf_mode { PERF_MODE_BW, PERF_MODE_LAT };

/* What the client asks for; sent to the server, which adopts it (perftest needs both sides to
 * agree; here the server simply follows). Fixed-width fields: it travels over TCP as is. */
struct perf_plan {
	uint32_t magic;
	uint32_t op;   /* enum perf_op */
	uint32_t mode; /* enum perf_mode */
	uint32_t nsizes;
	uint32_t sizes[PERF_MAX_SIZES];
	uint64_t iters;	      /* per size; bound even with duration_ms */
	uint32_t duration_ms; /* 0: iters only */
	uint32_t qps;
	uint32_t depth; /* outstanding WRs per QP (bw) */
	uint32_t mtu;	/* path MTU bytes */
	uint32_t verify;
	uint32_t corrupt;    /* --corrupt-for-test: the checking side flips one byte first */
	uint32_t timeout_ms; /* no progress for this long: the peer is gone */
	uint32_t gid_index;  /* -x: both sides use the same GID family */
	uint32_t buf_mb;     /* --buf-mb: buffer MiB per shard and side */
};

/* Command line. */
struct perf_opts {
	struct perf_plan plan;
	bool server;
	const char *addr; /* client: the server's TCP address */
	uint16_t port;
	const char *port_file; /* server: write the bound TCP port here (tests use port 0) */
	const char *config;    /* runtime config file (else $DROCE_CONFIG) */
	bool json;
	bool quiet;		 /* no progress line */
	bool counters;		 /* print the runtime's non-zero counters at the end */
	unsigned int shard_base; /* QP i on shard (i + shard_base) % shards */
	uint64_t max_out;	 /* bw client: WRs in flight over all QPs (0: the windows only) */
};

/* One QP's endpoint as exchanged out of band (perftest: LID/QPN/PSN/RKEY/VADDR/GID). */
struct perf_ep {
	uint32_t qpn, psn, rkey, slots;
	uint64_t va, len;
	uint8_t gid[16];
};

/* A work request's wr_id: the QP's index above, its iteration or slot below, so that one CQ
 * per shard serves every QP and a completion finds its QP in O(1). */
#define PERF_WR(qi, j) (((uint64_t)(qi) << 40) | (j))
#define PERF_WR_QP(w)  ((unsigned int)((w) >> 40))
#define PERF_WR_J(w)   ((w) & ((1ull << 40) - 1))

struct perf_qp {
	unsigned int shard; /* the runtime shard whose device holds qp, cq, mr */
	struct droce_qp *qp;
	struct droce_cq *cq; /* the shard's, shared by its QPs */
	struct droce_mr *mr; /* the shard's, shared by its QPs */
	uint8_t *buf;	     /* this QP's region of the shard's buffer: slots of the round's size */
	uint64_t len;
	bool region_first; /* the first QP on its region (the one that clears it) */
	bool queued;	   /* client: in its shard's ready ring */
	struct perf_ep me, peer;
	/* per round */
	uint64_t posted, done; /* WRs posted / completed */
	uint64_t rdone;	       /* receives completed (send) or ping-pong replies seen */
	uint32_t slots;	       /* slots of this round's size in buf */
};

/* Result of one size. */
struct perf_result {
	uint32_t size;
	uint64_t iters;
	double seconds;
	double gbps, mmps; /* goodput Gbit/s, million messages/s */
	double lat_min, lat_p50, lat_p99, lat_p999, lat_max, lat_avg; /* us */
	bool has_lat;
	bool verified;	    /* checked and clean (only meaningful with verify) */
	uint64_t bad_bytes; /* mismatches seen by this side and the peer */
	double rss_per_qp;  /* bytes of resident memory the round's QPs added, per QP */
	uint64_t rss;	    /* resident bytes at the round's end, its QPs still there */
	double connect_ms;  /* the round's QPs created, endpoints traded, all in RTS */
	uint64_t retrans;   /* dev.roce_adp_retrans during the round */
	/* congestion control at the round's end: QP 0's algorithm and its own figures, and the
	 * packets every QP's limiter held (droce_rt_qps) */
	const char *cc;
	unsigned int n_cc;
	struct droce_cc_stat cc_stats[DROCE_RT_QP_CC_STATS];
	uint64_t cc_held;
};

/* Everything a run needs. */
struct perf_ctx {
	const struct perf_opts *o;
	struct perf_plan plan;
	struct droce_rt *rt;
	bool lcore; /* the loop runs on poll lcores: engine calls via droce_rt_call */
	unsigned int nshards;
	unsigned int used; /* bit s: shard s holds a QP */
	int cur_shard;	   /* the shard a fanned-out perf_call runs on; -1: every shard */
	bool one_call;	   /* perf_call runs fn once (no engine inside, e.g. TCP only) */
	struct droce_pd *pd[DROCE_RT_MAX_SHARDS]; /* one per shard holding QPs */
	uint64_t shard_msgs[DROCE_RT_MAX_SHARDS]; /* per round: messages per shard */
	struct perf_qp q[PERF_MAX_QPS];
	/* per shard: one buffer, MR and CQ for its QPs; the client's ring of QPs that may post */
	uint8_t *buf[DROCE_RT_MAX_SHARDS];
	struct droce_mr *mr[DROCE_RT_MAX_SHARDS];
	struct droce_cq *cq[DROCE_RT_MAX_SHARDS];
	uint32_t *ready[DROCE_RT_MAX_SHARDS];
	uint32_t ready_qps[DROCE_RT_MAX_SHARDS]; /* the ring's room: the shard's QPs */
	uint32_t ready_head[DROCE_RT_MAX_SHARDS], ready_n[DROCE_RT_MAX_SHARDS];
	uint64_t outstanding[DROCE_RT_MAX_SHARDS]; /* client: WRs posted, not completed */
	uint64_t rdone_s[DROCE_RT_MAX_SHARDS];	   /* server: SENDs received per shard */
	uint64_t expect_s[DROCE_RT_MAX_SHARDS];	   /* server: SENDs the client posted per shard */
	uint64_t posted_all;			   /* client: WRs posted in the round */
	uint64_t out_all;			   /* client: WRs in flight over all shards */
	uint64_t *tpost;	 /* bw: post time of QP i's WR j at i * depth + j % depth */
	uint64_t rss0;		 /* resident bytes before the round's QPs */
	int sock;		 /* the TCP connection to the peer */
	struct droce_av peer_av; /* the peer's address, resolved (MAC, VLAN) in round 0 */
	/* round state */
	uint32_t size;
	unsigned int round;
	uint64_t t0, t_last, t_progress;
	uint64_t *samples;
	uint64_t nsamples;
	uint64_t bad; /* bytes or values that failed verification */
	uint64_t first_bad_iter;
	bool failed; /* a completion error or a timeout */
	char why[160];
	bool stop;			       /* client: time or iteration bound reached */
	bool corrupted;			       /* --corrupt-for-test applied once */
	uint64_t t_post;		       /* lat: when the outstanding operation was posted */
	uint64_t t_end;			       /* time of the last completion */
	bool awaiting;			       /* lat ping-pong: a request is out */
	uint64_t last_rx[DROCE_RT_MAX_SHARDS]; /* server: engines' rcvd_pkts at the last look */
	uint64_t t_tcp;			       /* server: last look for the client's message */
	bool got_done;			       /* server: the client's DONE arrived */
	uint64_t expect[PERF_MAX_QPS];	       /* server: what the client posted per QP */
	void *verdict_msg; /* client: where verdict_step puts the server's verdict */
};

/* Round messages over TCP: READY (server), DONE (client: counts per QP), VERDICT (server). */
enum perf_msg_kind { PERF_MSG_READY = 1, PERF_MSG_DONE, PERF_MSG_VERDICT };
#define PERF_MAGIC 0x64706631u /* "dpf1" */
struct perf_msg {
	uint32_t magic;
	uint32_t kind;
	uint64_t count[PERF_MAX_QPS];
	uint64_t bad;
	uint32_t ok;
	uint32_t pad;
	char why[160];
};

/* opts.c */
int perf_parse(int argc, char **argv, struct perf_opts *o, char *err, size_t errlen);
void perf_usage(FILE *f);
const char *perf_op_name(enum perf_op op);
bool perf_is_atomic(enum perf_op op);

/* oob.c: the out-of-band TCP exchange */
int perf_oob_listen(const struct perf_opts *o, char *err, size_t errlen);
int perf_oob_accept(const struct perf_opts *o, int lfd, char *err, size_t errlen);
int perf_oob_connect(const struct perf_opts *o, char *err, size_t errlen);
int perf_oob_send(int fd, const void *buf, size_t len, uint32_t timeout_ms);
int perf_oob_recv(int fd, void *buf, size_t len, uint32_t timeout_ms);
/* Non-blocking: 1 when a byte is waiting, 0 when none is, -ECONNRESET at EOF, -errno. */
int perf_oob_readable(int fd);
/* Non-blocking: 1 when a whole len-byte message was read, 0 when none is pending, -errno. */
int perf_oob_try_recv(int fd, void *buf, size_t len);
void perf_oob_wait_eof(int fd, uint32_t timeout_ms);

/* verify.c: patterns and checks (no DPDK, unit-tested) */
uint8_t perf_pat(uint64_t iter, uint64_t off);
void perf_fill(uint8_t *p, uint32_t len, uint64_t iter);
/* Mismatching bytes of p against the pattern of iter; *first the first bad offset. */
uint64_t perf_check(const uint8_t *p, uint32_t len, uint64_t iter, uint32_t *first);
uint64_t perf_atomic_init(unsigned int qp);
uint64_t perf_atomic_expect(unsigned int qp, uint64_t iter); /* value before op iter */
/* The write ping-pong's arrival marker: the last byte, different from the previous iteration's. */
uint8_t perf_marker(uint64_t iter);

/* conn.c: runtime, QPs, connection */
int perf_open(struct perf_ctx *c, const char *argv0);
int perf_setup_qps(struct perf_ctx *c);
int perf_connect_qps(struct perf_ctx *c);
void perf_teardown_qps(struct perf_ctx *c);
void perf_close(struct perf_ctx *c);
/* Run fn where the engines live. Lcore mode with several shards: once on each shard holding
 * QPs (c->cur_shard set; fn touches only those QPs, perf_mine), one after the other; the
 * results combine as: the first error, else 1 when every run returned 1, else 0. */
int perf_call(struct perf_ctx *c, int (*fn)(struct perf_ctx *c));
/* Whether this perf_call run may touch QP qi's engine objects. */
static inline bool
perf_mine(const struct perf_ctx *c, unsigned int qi)
{
	return c->cur_shard < 0 || c->q[qi].shard == (unsigned int)c->cur_shard;
}
/* Drive the loop until step returns non-zero (1 done, <0 error); prints progress. */
int perf_drive(struct perf_ctx *c, int (*step)(struct perf_ctx *c), const char *what);
uint64_t perf_now(const struct perf_ctx *c);
uint32_t perf_slots(const struct perf_plan *p, uint32_t size);
uint64_t perf_rss(void); /* resident bytes of the process */
int perf_post_recv(struct perf_ctx *c, unsigned int qi, uint32_t slot);
void perf_fail(struct perf_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* bw.c, lat.c: one round each side (step functions for perf_drive) */
int perf_bw_client_step(struct perf_ctx *c);
int perf_bw_server_step(struct perf_ctx *c);
int perf_lat_client_step(struct perf_ctx *c);
int perf_lat_server_step(struct perf_ctx *c);
/* Server: a client message arrived (DONE) or not; polled about every millisecond. */
int perf_server_poll_tcp(struct perf_ctx *c, uint64_t now);
/* The checking side's byte flip for --corrupt-for-test, once. */
void perf_maybe_corrupt(struct perf_ctx *c, uint8_t *p);
void perf_sample(struct perf_ctx *c, uint64_t ns);
/* Prepare a round: slots, server pattern/counters, receives. */
int perf_round_prepare(struct perf_ctx *c);
/* Final checks of a round on the server (write bw contents, atomic counters). */
int perf_round_final_check(struct perf_ctx *c);

/* report.c */
void perf_result_fill(struct perf_ctx *c, struct perf_result *r, uint64_t iters, uint64_t ns);
void perf_report_header(const struct perf_ctx *c);
void perf_report_row(const struct perf_ctx *c, const struct perf_result *r);
void perf_report_json(const struct perf_ctx *c, const struct perf_result *r, unsigned int n);
void perf_percentiles(uint64_t *v, uint64_t n, struct perf_result *r);
void perf_report_counters(struct perf_ctx *c);
/* With several shards: the round's messages per shard (count[i]: QP i's), one line. */
void perf_report_shards(struct perf_ctx *c, const uint64_t *count);

#endif /* DROCE_PERF_H */
