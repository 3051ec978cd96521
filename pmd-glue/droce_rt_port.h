/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_PORT_H
#define DROCE_RT_PORT_H

/*
 * EAL and Ethernet port bring-up from a runtime configuration. Failures come back as one line
 * naming the cause and the fix. No engine call here, so it is tested before the engine exists.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_rt_config.h"

struct rte_flow;
struct rte_mempool;

struct droce_rt_port {
	uint16_t port_id;
	char name[64];
	struct rte_mempool *mp;
	uint8_t mac[6];
	uint16_t nb_queues;
	uint16_t nb_shards;	 /* Tx queues in use, and the queues a flow rule spreads over */
	bool rss;		 /* RSS on the UDP ports spreads Rx over the queues */
	unsigned int flow_rules; /* rte_flow rules steering UDP 4791 installed (IPv4, IPv6) */
	struct rte_flow *flows[2];
	char flow_why[160];  /* why none was, from the PMD */
	uint32_t mtu;	     /* as set on the port */
	uint32_t ethdev_mtu; /* as told to ethdev: af_packet's range ends at 1500, slot or not */
	bool afpacket;	     /* net_af_packet: the MTU is its ring slot's and the kernel's */
	uint32_t max_frame;  /* largest frame a Tx mbuf holds */
	bool started;
	bool guard;	   /* memif: bursts guarded against its teardown race (droce_rt_guard.h) */
	bool memif_client; /* reconnects when its server goes (droce_rt_port_reconnect) */
	bool stopped;	   /* stopped for a reconnect that did not start yet: no bursts */
};

/* droce_rt_preflight(), then rte_eal_init() with droce_rt_config_eal_argv(). Once per process. */
int droce_rt_eal_init(const struct droce_rt_config *cfg, const char *argv0, char *err,
		      size_t errlen);

/* rte_eal_cleanup(), and removal of the runtime directory of a generated --file-prefix. */
void droce_rt_eal_cleanup(const struct droce_rt_config *cfg);

/*
 * The port's mbuf pool (rte_pktmbuf_pool_create's), its objects packed back to back when
 * `packed` (RTE_MEMPOOL_F_NO_IOVA_CONTIG: net_af_xdp, whose umem in DPDK 22.11 assumes it).
 * NULL with rte_errno set on failure.
 */
struct rte_mempool *droce_rt_port_pool_create(const char *name, unsigned int n, unsigned int cache,
					      uint16_t room, bool packed);

/* Whether every object of mp lies in the umem DPDK 22.11's net_af_xdp registers for it. */
bool droce_rt_port_pool_fits_umem(struct rte_mempool *mp);

/* Find the port, create the mempool, configure queues and MTU, start, read or set the MAC. */
int droce_rt_port_open(struct droce_rt_port *p, const struct droce_rt_config *cfg, char *err,
		       size_t errlen);
void droce_rt_port_close(struct droce_rt_port *p);

/* Try rte_flow rules ETH / IPV4|IPV6 / UDP dst 4791 -> RSS over the shards' queues (QUEUE 0
 * with one); a PMD refusing them leaves flow_rules 0 and says why in flow_why. */
void droce_rt_port_flow(struct droce_rt_port *p);

/*
 * A memif client's link went down (its server's process left): stop and start the port, which
 * connects it again (the PMD never retries by itself), so that a server that comes back, or
 * another in its place, is found. 0 when the connection was asked for (the link comes up
 * once the server accepts), -ENOTSUP for other ports, or the start's -errno (nobody listens
 * yet: try again later).
 */
int droce_rt_port_reconnect(struct droce_rt_port *p);

/* Link state now (no wait). */
bool droce_rt_port_link_up(const struct droce_rt_port *p);

#endif /* DROCE_RT_PORT_H */
