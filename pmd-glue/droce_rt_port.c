/* SPDX-License-Identifier: BSD-3-Clause */
/* Port bring-up, with one-line errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>

#include "droce_rt_afpacket.h"
#include "droce_rt_err.h"
#include "droce_rt_guard.h"
#include "droce_rt_port.h"

enum { ETH_OVERHEAD = RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN };

/*
 * DPDK 22.11's net_af_xdp gives the kernel a umem of populated_size x the object size from the
 * pool's first chunk (fixed in DPDK 24.07): it takes the objects to lie back to back. Objects
 * kept IOVA-contiguous do not cross pages, so under --no-huge each 2368-byte mbuf takes a 4 KiB
 * page and the umem covers 58 % of the pool. The kernel refuses the addresses past its end: a
 * frame sent from such an mbuf is dropped without a word (the socket's tx_invalid_descs) and
 * the mbuf never comes back; a fill ring entry is lost alike. af_xdp needs no IOVA: packed.
 */
struct rte_mempool *
droce_rt_port_pool_create(const char *name, unsigned int n, unsigned int cache, uint16_t room,
			  bool packed)
{
	struct rte_pktmbuf_pool_private priv;
	struct rte_mempool *mp;
	int rc;

	if (!packed)
		return rte_pktmbuf_pool_create(name, n, cache, 0, room, (int)rte_socket_id());
	mp = rte_mempool_create_empty(name, n, (unsigned int)sizeof(struct rte_mbuf) + room, cache,
				      sizeof(priv), (int)rte_socket_id(),
				      RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return NULL;
	rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc == 0) {
		memset(&priv, 0, sizeof(priv));
		priv.mbuf_data_room_size = room;
		rte_pktmbuf_pool_init(mp, &priv);
		rc = rte_mempool_populate_default(mp);
	}
	if (rc < 0) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}

struct umem_span {
	uintptr_t start, end;
	bool outside;
};

static void
umem_check_obj(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct umem_span *u = arg;
	uintptr_t o = (uintptr_t)obj - mp->header_size;

	(void)idx;
	if (o < u->start || o + mp->header_size + mp->elt_size + mp->trailer_size > u->end)
		u->outside = true;
}

bool
droce_rt_port_pool_fits_umem(struct rte_mempool *mp)
{
	struct rte_mempool_memhdr *first = STAILQ_FIRST(&mp->mem_list);
	uintptr_t page = (uintptr_t)getpagesize();
	struct umem_span u;

	if (first == NULL)
		return false;
	/* the umem DPDK 22.11 registers (xdp_umem_configure, unaligned chunks) */
	u.start = (uintptr_t)first->addr & ~(page - 1);
	u.end = (uintptr_t)first->addr +
		(uintptr_t)mp->populated_size * (mp->header_size + mp->elt_size + mp->trailer_size);
	u.outside = false;
	rte_mempool_obj_iter(mp, umem_check_obj, &u);
	return !u.outside;
}

static int
find_port(const struct droce_rt_config *cfg, uint16_t *port, char *err, size_t errlen)
{
	char names[256] = "", name[RTE_ETH_NAME_MAX_LEN];
	unsigned long num;
	uint16_t pid;
	size_t off = 0;
	char *end;

	if (rte_eth_dev_count_avail() == 0 && cfg->vdev[0] != '\0')
		return droce_rt_errf(-ENODEV, err, errlen,
				     "no Ethernet port: the vdev '%s' did not come up "
				     "(its driver's reason is printed above): fix DROCE_VDEV",
				     cfg->vdev);
	if (rte_eth_dev_count_avail() == 0)
		return droce_rt_errf(
			-ENODEV, err, errlen,
			"no Ethernet port: add one with "
			"DROCE_VDEV=net_memif0,role=server (or --vdev in DROCE_EAL), or bind a "
			"NIC to a DPDK driver");
	if (cfg->port[0] == '\0') {
		RTE_ETH_FOREACH_DEV(pid)
		{
			*port = pid;
			return 0;
		}
	}
	num = strtoul(cfg->port, &end, 10);
	if (*end == '\0' && num < RTE_MAX_ETHPORTS && rte_eth_dev_is_valid_port((uint16_t)num)) {
		*port = (uint16_t)num;
		return 0;
	}
	if (rte_eth_dev_get_port_by_name(cfg->port, port) == 0)
		return 0;
	RTE_ETH_FOREACH_DEV(pid)
	{
		if (rte_eth_dev_get_name_by_port(pid, name) == 0 && off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%u=%s",
						off ? ", " : "", pid, name);
	}
	return droce_rt_errf(-ENODEV, err, errlen,
			     "port '%s' not found (ports: %s): fix DROCE_PORT", cfg->port, names);
}

static int
setup_queues(struct droce_rt_port *p, const struct droce_rt_config *cfg,
	     const struct rte_eth_dev_info *info, char *err, size_t errlen)
{
	uint16_t nrx = (uint16_t)cfg->rx_desc, ntx = (uint16_t)cfg->tx_desc, q;
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(p->port_id), rc;

	if (socket < 0)
		socket = (int)rte_socket_id();
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = p->ethdev_mtu;
	p->rss = false;
	if (p->nb_queues > 1 && (info->flow_type_rss_offloads & RTE_ETH_RSS_UDP) != 0) {
		/* Spread flows over the queues by UDP ports: the source port is the sender's
		 * per-QP entropy (Annex A17.2.3); the shards steer what lands elsewhere. */
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & info->flow_type_rss_offloads;
		p->rss = true;
	}
	rc = rte_eth_dev_configure(p->port_id, p->nb_queues, p->nb_queues, &conf);
	if (rc != 0)
		return droce_rt_errf(rc, err, errlen,
				     "cannot configure port %s with %u queue(s) and MTU %u: "
				     "%s",
				     p->name, p->nb_queues, cfg->mtu, rte_strerror(-rc));
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nrx, &ntx);
	for (q = 0; rc == 0 && q < p->nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(p->port_id, q, nrx, (unsigned int)socket, NULL, p->mp);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, q, ntx, (unsigned int)socket, NULL);
	}
	if (rc != 0)
		return droce_rt_errf(rc, err, errlen,
				     "cannot set up queues of port %s (%u x %u/%u "
				     "descriptors): %s",
				     p->name, p->nb_queues, nrx, ntx, rte_strerror(-rc));
	return 0;
}

static int
set_mtu(struct droce_rt_port *p, const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	uint16_t cur = 0;
	int rc;

	if (p->afpacket) {
		/* its slot holds cfg->mtu and the kernel's MTU was checked: the PMD's mtu_set
		 * would only change the kernel's, which is the administrator's */
		p->mtu = cfg->mtu;
		return 0;
	}
	rc = rte_eth_dev_set_mtu(p->port_id, (uint16_t)cfg->mtu);

	if (rc == -ENOTSUP && rte_eth_dev_get_mtu(p->port_id, &cur) == 0 && cur >= cfg->mtu) {
		p->mtu = cur; /* the PMD cannot change it but already carries ours */
		return 0;
	}
	if (rc != 0)
		return droce_rt_errf(rc, err, errlen,
				     "cannot set MTU %u on port %s: %s: lower DROCE_MTU", cfg->mtu,
				     p->name, rte_strerror(-rc));
	p->mtu = cfg->mtu;
	return 0;
}

/* Set up queues and MTU, then start. */
static int
configure_start(struct droce_rt_port *p, const struct droce_rt_config *cfg,
		const struct rte_eth_dev_info *info, char *err, size_t errlen)
{
	int rc = setup_queues(p, cfg, info, err, errlen);

	if (rc == 0)
		rc = set_mtu(p, cfg, err, errlen);
	if (rc == 0) {
		rc = rte_eth_dev_start(p->port_id);
		if (rc != 0)
			droce_rt_errf(rc, err, errlen, "cannot start port %s: %s", p->name,
				      rte_strerror(-rc));
	}
	return rc;
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Link up within ms milliseconds (memif's handshake runs in EAL's interrupt thread). */
static bool
link_within(const struct droce_rt_port *p, unsigned int ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	unsigned int i;

	for (i = 0; i < ms / 10; i++) {
		if (droce_rt_port_link_up(p))
			return true;
		nanosleep(&ts, NULL);
	}
	return droce_rt_port_link_up(p);
}

/*
 * A memif client connects when it starts, and the PMD never tries again: not when no server
 * listens yet (the start fails), nor when the server accepted before its own port was up (the
 * link stays down on both sides). So, for start_wait_ms: a client start that fails, or whose
 * link is not up 500 ms later, is undone and the device probed anew. The two sides of a memif
 * link may then be launched in any order.
 */
static int
start(struct droce_rt_port *p, const struct droce_rt_config *cfg,
      const struct rte_eth_dev_info *info, char *err, size_t errlen)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	size_t n = strcspn(cfg->vdev, ",");
	char name[RTE_DEV_NAME_MAX_LEN];
	int rc, log_type, log_level;
	uint64_t end;
	bool up = false;

	rc = configure_start(p, cfg, info, err, errlen);
	if (strncmp(cfg->vdev, "net_memif", 9) != 0 || strstr(cfg->vdev, "role=client") == NULL ||
	    n >= sizeof(name))
		return rc;
	memcpy(name, cfg->vdev, n);
	name[n] = '\0';
	/* The PMD logs each refused connection: once is enough. */
	log_type = rte_log_register("pmd.net.memif");
	log_level = log_type >= 0 ? rte_log_get_level((uint32_t)log_type) : -1;
	if (log_level >= 0)
		rte_log_set_level((uint32_t)log_type, RTE_LOG_CRIT);
	end = mono_ms() + cfg->start_wait_ms;
	for (;;) {
		up = rc == 0 && link_within(p, 500);
		if (up || mono_ms() >= end)
			break;
		if (rc == 0)
			droce_rt_guard_stop(p->port_id);
		else
			nanosleep(&ts, NULL);
		rte_eth_dev_close(p->port_id);
		rte_eal_hotplug_remove("vdev", name);
		rc = rte_eal_hotplug_add("vdev", name,
					 cfg->vdev[n] == ',' ? cfg->vdev + n + 1 : "");
		if (rc == 0)
			rc = rte_eth_dev_get_port_by_name(name, &p->port_id);
		if (rc == 0)
			rc = configure_start(p, cfg, info, err, errlen);
	}
	if (log_level >= 0)
		rte_log_set_level((uint32_t)log_type, (uint32_t)log_level);
	if (rc != 0)
		return droce_rt_errf(rc, err, errlen,
				     "memif client %s found no server on its socket in %u "
				     "ms: start the server side first or raise DROCE_START_WAIT_MS",
				     name, cfg->start_wait_ms);
	if (!up) {
		droce_rt_guard_stop(p->port_id);
		return droce_rt_errf(-ENOTCONN, err, errlen,
				     "memif client %s: the server accepted but the "
				     "link stayed down for %u ms: restart the server side or raise "
				     "DROCE_START_WAIT_MS",
				     name, cfg->start_wait_ms);
	}
	return 0;
}

static int
set_mac(struct droce_rt_port *p, const struct droce_rt_config *cfg)
{
	struct rte_ether_addr a;

	if (cfg->has_mac) {
		memcpy(a.addr_bytes, cfg->mac, 6);
		/* A PMD that cannot change its address must at least hear ours. */
		if (rte_eth_dev_default_mac_addr_set(p->port_id, &a) != 0)
			rte_eth_promiscuous_enable(p->port_id);
		memcpy(p->mac, cfg->mac, 6);
		return 0;
	}
	if (rte_eth_macaddr_get(p->port_id, &a) != 0)
		return -ENODEV;
	memcpy(p->mac, a.addr_bytes, 6);
	return 0;
}

int
droce_rt_port_open(struct droce_rt_port *p, const struct droce_rt_config *cfg, char *err,
		   size_t errlen)
{
	struct rte_eth_dev_info info;
	char pool[RTE_MEMPOOL_NAMESIZE];
	struct droce_rt_afp afp;
	uint32_t room, max_mtu;
	bool afxdp;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = find_port(cfg, &p->port_id, err, errlen);
	if (rc != 0)
		return rc;
	rte_eth_dev_get_name_by_port(p->port_id, p->name);
	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc != 0)
		return droce_rt_errf(rc, err, errlen, "cannot query port %s: %s", p->name,
				     rte_strerror(-rc));
	p->nb_queues = (uint16_t)droce_rt_config_nb_queues(cfg);
	p->nb_shards = (uint16_t)cfg->shards;
	if (cfg->shards > 1 &&
	    (cfg->shards > info.max_rx_queues || cfg->shards > info.max_tx_queues))
		return droce_rt_errf(-EINVAL, err, errlen,
				     "port %s has at most %u Rx / %u Tx queues, "
				     "shards %u need one each: lower DROCE_SHARDS%s",
				     p->name, info.max_rx_queues, info.max_tx_queues, cfg->shards,
				     strncmp(p->name, "net_af_packet", 13) == 0 ?
					     " or add qpairs=N to the af_packet vdev" :
					     "");
	if (p->nb_queues > info.max_rx_queues || p->nb_queues > info.max_tx_queues)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "port %s has at most %u Rx / %u Tx queues: lower "
				     "DROCE_QUEUES (%u)",
				     p->name, info.max_rx_queues, info.max_tx_queues, cfg->queues);
	/* PMDs that leave max_mtu open bound the frame instead (ethdev's 18-byte overhead). */
	max_mtu = info.max_mtu;
	if (info.max_rx_pktlen > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN)
		max_mtu = RTE_MIN(max_mtu,
				  info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
	p->ethdev_mtu = cfg->mtu;
	room = RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM, cfg->mtu + ETH_OVERHEAD);
	droce_rt_afp_geometry(cfg, &afp);
	p->afpacket = afp.is_afpacket && strncmp(p->name, "net_af_packet", 13) == 0;
	if (p->afpacket) {
		/*
		 * af_packet reports a fixed 1518-byte frame whatever its ring slot, and copies a
		 * received frame into one mbuf: the slot bounds the MTU, its mbufs hold a slot,
		 * and ethdev is told no more than its own range allows (the PMD does not use it;
		 * the kernel's MTU was checked before EAL).
		 */
		p->ethdev_mtu = RTE_MIN(cfg->mtu, max_mtu);
		max_mtu = droce_rt_afp_max_mtu(&afp);
		room = RTE_MAX(room, droce_rt_afp_rx_room(&afp));
	}
	if (cfg->mtu > max_mtu || cfg->mtu < info.min_mtu)
		return droce_rt_errf(
			-EINVAL, err, errlen, "MTU %u outside port %s's range %u..%u: %s", cfg->mtu,
			p->name, info.min_mtu, max_mtu,
			strncmp(p->name, "net_af_xdp", 10) == 0 ?
				"af_xdp receives a frame into one umem chunk of a page (DPDK 22.11 "
				"has no multi-buffer AF_XDP): use af_packet (droce-run --pmd "
				"af_packet) for a larger MTU, or lower DROCE_MTU" :
			p->afpacket ? "raise framesz and blocksz in DROCE_VDEV, or drop "
				      "them (droce sizes them for DROCE_MTU)" :
				      "set DROCE_MTU within it");
	snprintf(pool, sizeof(pool), "droce_p%u", p->port_id);
	afxdp = strncmp(p->name, "net_af_xdp", 10) == 0;
	p->mp = droce_rt_port_pool_create(pool, cfg->mbufs, cfg->mbuf_cache,
					  (uint16_t)(room + RTE_PKTMBUF_HEADROOM), afxdp);
	if (p->mp == NULL)
		return droce_rt_errf(-ENOMEM, err, errlen,
				     "cannot allocate %u mbufs of %u bytes (%s): give "
				     "EAL more memory (-m in DROCE_EAL) or lower DROCE_MBUFS",
				     cfg->mbufs, room, rte_strerror(rte_errno));
	if (afxdp && !droce_rt_port_pool_fits_umem(p->mp)) {
		/* frames in the mbufs past the umem would vanish: refuse rather than lose them */
		rte_mempool_free(p->mp);
		p->mp = NULL;
		return droce_rt_errf(
			-ENOMEM, err, errlen,
			"port %s: %u mbufs do not fit in one block of memory (af_xdp's "
			"umem): give EAL more memory (-m in DROCE_EAL) or lower "
			"DROCE_MBUFS",
			p->name, cfg->mbufs);
	}
	p->max_frame = room;
	rc = start(p, cfg, &info, err, errlen);
	if (rc == 0) {
		p->started = true;
		p->guard = strncmp(p->name, "net_memif", 9) == 0 && droce_rt_guard_init() == 0;
		p->memif_client = strncmp(cfg->vdev, "net_memif", 9) == 0 &&
				  strstr(cfg->vdev, "role=client") != NULL;
		droce_rt_port_flow(p);
		rc = set_mac(p, cfg);
		if (rc != 0)
			droce_rt_errf(rc, err, errlen,
				      "cannot read the MAC of port %s: set DROCE_MAC", p->name);
		/* IPv6 neighbour solicitations go to solicited-node multicast groups. */
		rte_eth_allmulticast_enable(p->port_id);
	}
	if (rc != 0)
		droce_rt_port_close(p);
	return rc;
}

void
droce_rt_port_close(struct droce_rt_port *p)
{
	struct rte_flow_error fe;
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (p->flows[i] != NULL) {
			rte_flow_destroy(p->port_id, p->flows[i], &fe);
			p->flows[i] = NULL;
		}
	if (p->started) {
		droce_rt_guard_stop(p->port_id);
		p->started = false;
	}
	if (p->mp != NULL) {
		rte_eth_dev_close(p->port_id);
		rte_mempool_free(p->mp);
		p->mp = NULL;
	}
}

int
droce_rt_port_reconnect(struct droce_rt_port *p)
{
	int log_type, log_level, rc;

	if (!p->memif_client || !p->started)
		return -ENOTSUP;
	/* Each refused connection is logged by the PMD; a retry every half second would be a
	 * line each. */
	log_type = rte_log_register("pmd.net.memif");
	log_level = log_type >= 0 ? rte_log_get_level((uint32_t)log_type) : -1;
	if (log_level >= 0)
		rte_log_set_level((uint32_t)log_type, RTE_LOG_CRIT);
	__atomic_store_n(&p->stopped, true, __ATOMIC_RELAXED);
	droce_rt_guard_stop(p->port_id);
	rc = rte_eth_dev_start(p->port_id);
	if (rc == 0)
		__atomic_store_n(&p->stopped, false, __ATOMIC_RELAXED);
	if (log_level >= 0)
		rte_log_set_level((uint32_t)log_type, (uint32_t)log_level);
	return rc;
}

bool
droce_rt_port_link_up(const struct droce_rt_port *p)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

/*
 * UDP destination 4791 (Annex A17.2) to our queues by rte_flow: on a NIC whose own RoCE engine
 * would otherwise take those frames (mlx5, see README) this is the rule that wins, and it
 * spreads them over the shards' queues by UDP ports. Validated first; refused by most virtual
 * PMDs (memif, af_packet: no flow API), which then rely on RSS or one queue per shard.
 */
void
droce_rt_port_flow(struct droce_rt_port *p)
{
	static const struct rte_flow_item_udp udp_spec = { .hdr.dst_port = RTE_BE16(4791) };
	static const struct rte_flow_item_udp udp_mask = { .hdr.dst_port = RTE_BE16(0xffff) };
	uint16_t queues[RTE_MAX_QUEUES_PER_PORT];
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item pat[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4 },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP, .spec = &udp_spec, .mask = &udp_mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action_rss rss = {
		.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP,
		.queue_num = p->nb_shards,
		.queue = queues,
	};
	struct rte_flow_action_queue q0 = { .index = 0 };
	struct rte_flow_action act[] = {
		{ .type = p->nb_shards > 1 ? RTE_FLOW_ACTION_TYPE_RSS : RTE_FLOW_ACTION_TYPE_QUEUE,
		  .conf = p->nb_shards > 1 ? (const void *)&rss : (const void *)&q0 },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error fe;
	unsigned int i;
	int rc;

	for (i = 0; i < p->nb_shards; i++)
		queues[i] = (uint16_t)i;
	p->flow_rules = 0;
	p->flow_why[0] = '\0';
	for (i = 0; i < 2; i++) {
		pat[1].type = i == 0 ? RTE_FLOW_ITEM_TYPE_IPV4 : RTE_FLOW_ITEM_TYPE_IPV6;
		memset(&fe, 0, sizeof(fe));
		rc = rte_flow_validate(p->port_id, &attr, pat, act, &fe);
		if (rc == 0)
			p->flows[i] = rte_flow_create(p->port_id, &attr, pat, act, &fe);
		if (p->flows[i] != NULL) {
			p->flow_rules++;
			continue;
		}
		if (p->flow_why[0] == '\0')
			snprintf(p->flow_why, sizeof(p->flow_why), "%s",
				 fe.message != NULL ? fe.message :
						      rte_strerror(rc != 0 ? -rc : rte_errno));
	}
}
