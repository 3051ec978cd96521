/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_PRIV_H
#define DROCE_RT_PRIV_H

/* The runtime's state, shared by droce_rt.c (API) and droce_rt_loop.c (the poll loop). */
#include <stdbool.h>
#include <stdint.h>

#include "droce_hostaddr.h"
#include "droce_neigh.h"
#include "droce_rt.h"
#include "droce_rt_classify.h"
#include "droce_rt_port.h"

struct rte_mbuf;
struct rte_ring;

enum {
	DROCE_RT_BURST_MAX = 64,
	DROCE_RT_CALL_RING = 256, /* pending droce_rt_call()s; callers wait when it is full */
	DROCE_RT_EXC_RING_SIZE = 1024,
	DROCE_RT_STEER_RING = 1024, /* frames handed to a shard by the others' Rx */
	DROCE_RT_LINK_CHECK_NS = 100 * 1000 * 1000,
	DROCE_RT_RECONNECT_NS = 500 * 1000 * 1000, /* a memif client's tries while down */
};

/* A closure handed to a poll lcore; lives on the caller's stack until done. */
struct droce_rt_call_req {
	int (*fn)(struct droce_rt *rt, void *arg);
	void *arg;
	int rc;
	uint32_t done; /* release-stored by the lcore, acquire-loaded by the caller */
};

/* clang-format off */
#define DROCE_RT_STATS(X) \
	X(iterations) X(clock_behind) X(idle_sleeps) X(idle_yields) X(rx_pkts) X(rx_bytes) \
	X(tx_pkts) X(tx_bytes) X(rx_roce) X(rx_neigh) X(exception) X(calls) X(tx_alloc_fail) \
	X(tx_too_long) X(tx_batch_full) X(link_up) X(capture_pkts) X(capture_skipped) \
	X(telemetry_reads) X(steered) X(steered_in) X(steer_held) X(burst_faults) \
	X(tx_lost_teardown) X(tx_bursts) X(link_down) X(reconnects) X(host_addr_changes) \
	X(host_addr_errors)
/* clang-format on */

struct droce_rt_stats {
#define DROCE_X_RT_FIELD(name) uint64_t name;
	DROCE_RT_STATS(DROCE_X_RT_FIELD)
#undef DROCE_X_RT_FIELD
	uint64_t drop[DROCE_DROP_MAX];
};

/*
 * One shard: an engine device with its own Rx queue(s), Tx queue, batch, clock, closure ring
 * and counters, driven by one thread (its poll lcore, or the inline thread that drives them
 * all). Shard 0 also runs ARP/ND, the link check, the exception path and telemetry. A frame
 * received on one shard for a QP of another (QPN top bits) crosses over `steer`.
 */
struct droce_rt_shard {
	struct droce_rt *rt;
	unsigned int idx;
	struct droce_dev *dev;
	struct rte_ring *calls; /* closures: any thread enqueues, this shard dequeues */
	struct rte_ring *steer; /* mbufs from the other shards' Rx: MP enqueue, SC dequeue */

	/* Transmit batch on Tx queue idx, flushed each iteration or when full. */
	struct rte_mbuf *txb[DROCE_RT_BURST_MAX];
	unsigned int ntx;
	unsigned int tx_out; /* buffers given by tx_alloc, not yet back through tx_send */

	/* Frames for other shards not yet in their steering rings (full): until they are, this
	 * shard polls no Rx queue, so the port's queue fills and the peer is held back. */
	struct rte_mbuf *out[DROCE_RT_MAX_SHARDS][DROCE_RT_BURST_MAX];
	unsigned int nout[DROCE_RT_MAX_SHARDS];
	bool out_pending;

	uint64_t now; /* one TSC read per iteration, converted to ns */
	unsigned int idle;
	uint32_t gid_gen; /* the GID table generation this shard's device has */

	/* Lcore mode */
	unsigned int lcore;
	bool launched;
	bool on_lcore; /* written by the poll lcore itself: it may sleep on the futex */
	uint32_t stop;
	uint32_t sleeping; /* the poll lcore is (about to be) in its idle futex wait */
	uint32_t wake_seq; /* the futex word: a closure or a steered frame bumps it */

	struct droce_rt_stats st;
} __attribute__((aligned(64)));

/* A group the host interface was joined to for the application (droce_rt_mcast.c). */
struct droce_rt_kgroup {
	uint8_t gid[16];
	int fd;		   /* the socket holding the membership */
	unsigned int refs; /* joins of it; 0: a free slot */
};

struct droce_rt {
	struct droce_rt_config cfg;
	struct droce_rt_port port;
	struct droce_cc_registry cc_reg; /* the algorithms cc_plugin added */
	uint64_t link_bps;		 /* the port's rate for congestion control (0: unknown) */
	uint32_t qp_made;		 /* QPs droce_rt_qp_cc() numbered: qp_cc's next index */
	struct droce_neigh neigh;	 /* shard 0's */
	struct rte_ring *exc;
	uint8_t gids[DROCE_MAX_GIDS][16]; /* written under gid_seq (host mode) */
	unsigned int num_gids;
	uint32_t gid_seq; /* seqlock: odd while rt->gids is written */
	uint32_t gid_gen; /* bumped after each change of the table */
	/* addr_mode host (droce_rt_host.c): the rtnetlink socket shard 0 reads, the interface */
	int host_fd;
	int host_ifindex;
	struct droce_host_gids host_gids;
	bool eal_up;
	/* droce-portd (droce_rt_portd.h): the control connection held for our life (-1: none),
	 * our slot, the top bits of every QPN our device makes */
	int portd_fd;
	uint32_t portd_slot;
	uint32_t portd_bits;

	uint64_t tsc_base;
	uint64_t ns_mult; /* ns per cycle << 32 */
	uint64_t neigh_deadline;
	uint64_t next_link_check;
	uint64_t next_reconnect;
	bool link_up;
	unsigned int idle; /* inline mode */

	bool started;  /* written by the thread calling start/stop */
	bool ack_hold; /* inline: the engine may hold ACKs for the application's next step */
	unsigned int nb_shards;
	unsigned int shard_bits; /* QPN top bits naming the shard */
	struct droce_rt_shard sh[DROCE_RT_MAX_SHARDS];

	char err[256];

	/* Capture (droce_rt_capture.c), NULL when off; written by the shards' threads (under a
	 * lock when there are several). */
	struct droce_rt_capture *cap;
	/* Telemetry (droce_rt_telemetry.c): the telemetry thread bumps tel_req, shard 0 copies
	 * the counters into tel_snap under the tel_seq seqlock and stores tel_done = tel_req. */
	uint32_t tel_req;
	uint32_t tel_done;
	uint32_t tel_seq;
	unsigned int tel_n;
	struct droce_rt_counter *tel_snap;
	uint32_t tel_want_qps;		  /* this request is /droce/qps's: list the QPs too */
	unsigned int tel_nqps;		  /* QPs that exist (more than tel_qps holds?) */
	struct droce_rt_qp_info *tel_qps; /* DROCE_RT_TEL_QPS of them */
	struct droce_rt_kgroup kgroups[DROCE_MCAST_GROUPS];
};

/* droce_rt_loop.c */
uint64_t droce_rt_clock(const struct droce_rt *rt);
/* The shard's and its device's time brought to now, before a closure runs. */
void droce_rt_shard_clock(struct droce_rt_shard *s);
void droce_rt_io_init(struct droce_rt_shard *s, struct droce_io *io);
/* One iteration of one shard; of every shard (inline mode). Both return the work done. */
unsigned int droce_rt_shard_iter(struct droce_rt_shard *s);
unsigned int droce_rt_iter(struct droce_rt *rt);
/* Idle back-off after an iteration of one shard (its poll lcore) or of all (s NULL: inline). */
void droce_rt_shard_backoff(struct droce_rt *rt, struct droce_rt_shard *s, unsigned int work);
void droce_rt_backoff(struct droce_rt *rt, unsigned int work);
/* After enqueueing a closure or a frame: wake the shard's poll lcore if it sleeps. */
void droce_rt_shard_wake(struct droce_rt_shard *s);
void droce_rt_wake(struct droce_rt *rt); /* shard 0 */
/* Send the Tx batch; returns the frames the PMD took (the rest stay queued, in order). */
unsigned int droce_rt_flush(struct droce_rt_shard *s);
/* Queue a copy of a frame on the Tx batch (ctx: the shard); 0 or -ENOBUFS. */
int droce_rt_tx_copy(void *ctx, const uint8_t *frame, uint32_t len);

/* droce_rt_counters.c: the counters, called on the device's thread. Their names are
 * GROUP.LEAF, the groups in this order (telemetry, the counters file, droce-stat). */
enum { DROCE_RT_GROUPS = 4 };
extern const char *const droce_rt_groups[DROCE_RT_GROUPS];
/* The LEAF of name when it is in group g, else NULL. */
const char *droce_rt_counter_leaf(const char *name, unsigned int g);
int droce_rt_counters_collect(struct droce_rt *rt, struct droce_rt_counter *out, unsigned int n);
/* Write every counter as JSON to cfg.counters_file (at close); 0 or -errno, said on stderr. */
int droce_rt_counters_save(struct droce_rt *rt);

/* droce_rt_capture.c */
/* "%p" in a configured path becomes the process id; 0 or -ENAMETOOLONG. */
int droce_rt_expand_path(const char *in, char *out, size_t outlen);
int droce_rt_capture_open(struct droce_rt *rt, char *err, size_t errlen);
void droce_rt_capture_frame(struct droce_rt_shard *s, const uint8_t *frame, uint32_t caplen,
			    uint32_t len);
void droce_rt_capture_close(struct droce_rt *rt);

/* droce_rt_mcast.c: leave every group the host interface was joined to */
void droce_rt_mcast_close(struct droce_rt *rt);

/* droce_rt_host.c: addr_mode host (no-ops in own mode) */
int droce_rt_host_open(struct droce_rt *rt, char *err, size_t errlen);
void droce_rt_host_close(struct droce_rt *rt);
/* Shard 0, every link check: apply the interface's address changes; the work done. */
unsigned int droce_rt_host_poll(struct droce_rt_shard *s);
/* Any shard: its device takes the GID table published last (a load when nothing changed). */
void droce_rt_host_sync(struct droce_rt_shard *s);
/* The next hop's MAC from the kernel, on the caller's thread. */
int droce_rt_host_resolve(struct droce_rt *rt, const uint8_t gid[16], uint8_t mac[6],
			  uint32_t timeout_ms);

/* droce_rt_telemetry.c */
enum { DROCE_RT_TEL_MAX = 512 }; /* counters a telemetry snapshot holds */
enum { DROCE_RT_TEL_QPS = 64 };	 /* QPs a telemetry snapshot holds */
int droce_rt_telemetry_attach(struct droce_rt *rt);
void droce_rt_telemetry_detach(struct droce_rt *rt);
/* The loop's side: a snapshot was asked for. */
void droce_rt_telemetry_serve(struct droce_rt *rt);

#endif /* DROCE_RT_PRIV_H */
