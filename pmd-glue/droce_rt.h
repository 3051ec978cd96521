/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_H
#define DROCE_RT_H

/*
 * The droce runtime: engine devices on one DPDK port, with ARP/ND, a poll loop and counters.
 *
 * Shards (`shards` = N, default 1): N engine devices, each with its own queue pair, and in lcore
 * mode its own poll lcore. A QPN names its shard in its top bits; a frame received on another
 * shard's queue is handed over to the owner. Objects of one shard (PD, MR, CQ, QP, SRQ, AH) are
 * never mixed with another's. Shard 0 also runs ARP/ND, the exception path and telemetry, and
 * is the device of droce_rt_dev() / droce_rt_call().
 *
 * Threading (each engine device is single-threaded; the runtime keeps it so):
 * - Lcore mode: droce_rt_start() runs shard i's poll loop on lcore 1 + i of `lcores`. From
 *   then on every engine call (droce_post_send, droce_cq_poll, droce_qp_modify ...) on shard
 *   i's objects must go through droce_rt_call_shard(rt, i, ...) (droce_rt_call for shard 0):
 *   the closure is handed over a multi-producer, single-consumer ring and runs on that shard's
 *   lcore between loop iterations; the caller waits for its result. Any number of application
 *   threads may call at once.
 * - Inline mode: without droce_rt_start() the application's one thread drives every shard with
 *   droce_rt_poll() and may call any shard's engine directly (the calls then run the closure at
 *   once). Only that thread may touch the runtime.
 * Everything else below may be called from any thread in both modes.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_cc.h"
#include "droce_rt_config.h"
#include "droce_verbs.h"

struct droce_rt;

/* Load the configuration (path, else $DROCE_CONFIG, then DROCE_* variables), run the pre-EAL
 * checks, initialise EAL, bring up the port, create the engine device, announce our addresses.
 * NULL on failure with a one-line reason in err. One runtime per process. */
struct droce_rt *droce_rt_open(const char *config_path, const char *argv0, char *err,
			       size_t errlen);
/* As droce_rt_open() with a configuration already built. */
struct droce_rt *droce_rt_open_config(const struct droce_rt_config *cfg, const char *argv0,
				      char *err, size_t errlen);
/* Stop the loop, destroy the device, stop the port, clean EAL up. */
void droce_rt_close(struct droce_rt *rt);

/* Shard 0's engine device. */
struct droce_dev *droce_rt_dev(struct droce_rt *rt);
/* Number of shards, and shard i's device (NULL beyond). */
unsigned int droce_rt_nb_shards(const struct droce_rt *rt);
struct droce_dev *droce_rt_shard_dev(struct droce_rt *rt, unsigned int shard);
const struct droce_rt_config *droce_rt_config(const struct droce_rt *rt);
void droce_rt_mac(const struct droce_rt *rt, uint8_t mac[6]);
uint16_t droce_rt_port_id(const struct droce_rt *rt);
/* GID table as given to the engine: IPv4 (::ffff:a.b.c.d) first when configured, then IPv6;
 * in host-address mode the interface's addresses, as they change (an empty slot, an address
 * removed, reads as the zero GID). Any thread. Returns the number of slots; fills gid when
 * index is below it. */
unsigned int droce_rt_gid(const struct droce_rt *rt, unsigned int index, uint8_t gid[16]);

/* Lcore mode: start the loop on the poll lcore (-ENOTSUP with a single lcore configured). */
int droce_rt_start(struct droce_rt *rt);
int droce_rt_stop(struct droce_rt *rt);
/* Inline mode: one loop iteration; returns the work done (frames, calls), 0 when idle. */
unsigned int droce_rt_poll(struct droce_rt *rt);
/* Inline mode: one iteration after which the engine may hold the ACKs of what it received
 * (stack/droce_ackpol.h, keys ack_delay_ns, ack_coalesce, ack_order): the next iteration
 * sends them in one burst with what the application posts in between, before or after it.
 * The caller owes that next iteration soon; returns the work done, and *held the ACKs left
 * waiting. droce_rt_poll() holds none and sends those held. */
unsigned int droce_rt_poll_hold(struct droce_rt *rt, unsigned int *held);
/* Inline mode: iterate with idle back-off until cond(arg) holds or timeout_ms passes;
 * returns 0 or -ETIMEDOUT. In lcore mode it only re-checks cond: idle_spins times with a
 * sched_yield() between, then every 20 us. */
int droce_rt_run_until(struct droce_rt *rt, bool (*cond)(void *arg), void *arg,
		       uint32_t timeout_ms);

/* Run fn(rt, arg) where the engine lives and return its result (see Threading above). A
 * closure runs inside the loop: it must not wait for the loop (droce_rt_resolve,
 * droce_rt_run_until) in lcore mode. */
int droce_rt_call(struct droce_rt *rt, int (*fn)(struct droce_rt *rt, void *arg), void *arg);
/* The same on shard's thread (-EINVAL for no such shard). A closure on one shard must not call
 * into another's (only shard 0 waits on the others, for counters). */
int droce_rt_call_shard(struct droce_rt *rt, unsigned int shard,
			int (*fn)(struct droce_rt *rt, void *arg), void *arg);

/* Before a QP is created: when the qp_cc key names an algorithm for QP index (DROCE_RT_QP_NEXT:
 * the next in the order QPs but QP1 come here, from 0), ia's cc and cc_params are set to it
 * and its parameters from the configuration (written into *p, which must outlive the
 * creation); otherwise ia is left as it is. 0, or -EINVAL for a name no registry knows. */
#define DROCE_RT_QP_NEXT UINT32_MAX
int droce_rt_qp_cc(struct droce_rt *rt, uint32_t index, struct droce_qp_init_attr *ia,
		   union droce_cc_params *p);

/* Whether the loop last saw the port's link up (it announces us on each rising edge). */
bool droce_rt_link_up(const struct droce_rt *rt);

/* Nanoseconds of the runtime clock (the one the engine sees). */
uint64_t droce_rt_now(const struct droce_rt *rt);
/* Inline mode, for a caller that runs engine verbs itself between iterations (not through
 * droce_rt_call, which does this): every device's time brought to now first, so that what
 * the verbs complete (a flush) carries the time they ran. */
void droce_rt_tick(struct droce_rt *rt);

/* MAC of the next hop towards gid (::ffff:a.b.c.d or IPv6), by ARP/ND (host-address mode: from
 * the kernel's neighbour table, the kernel asked to resolve it), waiting up to timeout_ms: 0,
 * -EHOSTUNREACH (droce_rt_strerror(): "peer unreachable (no ARP reply from X after N
 * tries)"), -ENETUNREACH, -ETIMEDOUT. */
int droce_rt_resolve(struct droce_rt *rt, const uint8_t gid[16], uint8_t mac[6],
		     uint32_t timeout_ms);
/* Fill av->dmac for av->dgid (for droce_ah_create / a QP's DROCE_QP_AV), and av->has_vlan /
 * vlan_tci with the configured VLAN and priority (none: untagged). */
int droce_rt_resolve_av(struct droce_rt *rt, struct droce_av *av, uint32_t timeout_ms);
/* Join (join true) or leave an IP multicast group (a multicast GID) on the host interface
 * behind the port, for IGMP/MLD snooping switches: the kernel sends the reports and answers
 * the queries while joined; joins of one group are counted, the last leave ends it. Any
 * thread. 0, -ENODEV (the port has no host interface: memif, ring, pcap), -ENOENT (leave
 * without a join), -ENOMEM (DROCE_MCAST_GROUPS groups joined), -EINVAL, or the kernel's
 * -errno. Groups still joined are left at droce_rt_close. */
int droce_rt_mcast_report(struct droce_rt *rt, const uint8_t gid[16], bool join);
/* The last failure's one-line text ("" when none). */
const char *droce_rt_strerror(const struct droce_rt *rt);

/* Counters as name/value pairs: "rt.*" (loop, classification drops), "port.*" (ethdev), "neigh.*"
 * and "dev.*" (engine). Fills up to n; returns how many exist (n = 0 to size). rt.* and dev.*
 * are totals over the shards; with several, rt.shard<i>_* and dev.shard<i>_* follow. */
struct droce_rt_counter {
	char name[48];
	uint64_t value;
};
int droce_rt_counters(struct droce_rt *rt, struct droce_rt_counter *out, unsigned int n);
/* One counter by name, or -ENOENT. */
int droce_rt_counter(struct droce_rt *rt, const char *name, uint64_t *value);

/* Every QP of every shard: its number, type, state, counters and congestion control, with the
 * algorithm's own figures (its stats op: DCQCN's rate and alpha, TIMELY's rate and RTT, ...).
 * Fills up to n; returns how many exist (n = 0 to size). Each shard's QPs are read on its own
 * thread (droce_rt_call_shard). Telemetry's /droce/qps and droce-stat --qps show the same. */
#define DROCE_RT_QP_CC_STATS 8
struct droce_rt_qp_info {
	uint32_t qpn;
	uint16_t shard;
	uint8_t type;	/* enum droce_qp_type */
	uint8_t state;	/* enum droce_qp_state */
	const char *cc; /* the algorithm's name */
	uint64_t sent_pkts, rcvd_pkts, retransmitted_pkts, cc_deferred;
	unsigned int n_cc; /* cc_stats used */
	struct droce_cc_stat cc_stats[DROCE_RT_QP_CC_STATS];
};
int droce_rt_qps(struct droce_rt *rt, struct droce_rt_qp_info *out, unsigned int n);

/* Exception path (exception = ring): copy out the next frame that was neither RoCE nor ARP/ND.
 * Returns its length (truncated to len), or -EAGAIN. Any thread. */
int droce_rt_exception_recv(struct droce_rt *rt, uint8_t *buf, uint32_t len);
/* Send a whole Ethernet frame as is (the exception path's way out; any thread, through
 * droce_rt_call). 0, -EMSGSIZE beyond the port's frame size, -ENOBUFS when Tx is full. */
int droce_rt_exception_send(struct droce_rt *rt, const uint8_t *frame, uint32_t len);

#endif /* DROCE_RT_H */
