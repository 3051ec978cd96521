/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime API: open and close, accessors. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_random.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_ext.h"
#include "droce_rt_cc_plugin.h"
#include "droce_rt_err.h"
#include "droce_rt_portd.h"
#include "droce_rt_priv.h"

static void
make_gids(struct droce_rt *rt)
{
	const struct droce_rt_config *c = &rt->cfg;

	rt->num_gids = 0;
	if (c->has_ipv4) {
		memset(rt->gids[rt->num_gids], 0, 10);
		rt->gids[rt->num_gids][10] = 0xff;
		rt->gids[rt->num_gids][11] = 0xff;
		memcpy(&rt->gids[rt->num_gids][12], c->ipv4, 4);
		rt->num_gids++;
	}
	if (c->has_ipv6)
		memcpy(rt->gids[rt->num_gids++], c->ipv6, 16);
}

static int
make_neigh(struct droce_rt *rt, const struct droce_neigh_ops *ops)
{
	const struct droce_rt_config *c = &rt->cfg;
	struct droce_neigh_conf nc;

	memset(&nc, 0, sizeof(nc));
	memcpy(nc.mac, rt->port.mac, 6);
	nc.has_ipv4 = c->has_ipv4;
	memcpy(nc.ipv4, c->ipv4, 4);
	nc.ipv4_prefix = c->ipv4_prefix;
	nc.has_gw4 = c->has_gw4;
	memcpy(nc.gw4, c->gw4, 4);
	nc.has_ipv6 = c->has_ipv6;
	memcpy(nc.ipv6, c->ipv6, 16);
	nc.ipv6_prefix = c->ipv6_prefix;
	nc.has_gw6 = c->has_gw6;
	memcpy(nc.gw6, c->gw6, 16);
	nc.timeout_ns = (uint64_t)c->arp_timeout_ms * 1000000u;
	nc.retry_ns = (uint64_t)c->arp_retry_ms * 1000000u;
	nc.tries = c->arp_tries;
	nc.vlan = (uint16_t)c->vlan;
	nc.vlan_pcp = (uint8_t)c->vlan_pcp;
	return droce_neigh_init(&rt->neigh, &nc, ops);
}

/* TIMELY's parameters: the defaults for the link, with what the configuration sets (0 keeps a
 * default). */
static int
set_timely(const struct droce_rt_config *c, struct droce_timely_params *pp, uint64_t link_bps,
	   char *err, size_t errlen)
{
	struct droce_timely_params p;

	droce_cc_timely_defaults(&p, link_bps);
	if (c->timely_max_rate_mbps != 0)
		p.max_rate_bps = (uint64_t)c->timely_max_rate_mbps * 1000000;
	if (c->timely_min_rate_mbps != 0)
		p.min_rate_bps = (uint64_t)c->timely_min_rate_mbps * 1000000;
	if (c->timely_delta_mbps != 0)
		p.delta_bps = (uint64_t)c->timely_delta_mbps * 1000000;
	if (c->timely_t_low_us != 0)
		p.t_low_ns = (uint64_t)c->timely_t_low_us * 1000;
	if (c->timely_t_high_us != 0)
		p.t_high_ns = (uint64_t)c->timely_t_high_us * 1000;
	if (c->timely_min_rtt_us != 0)
		p.min_rtt_ns = (uint64_t)c->timely_min_rtt_us * 1000;
	if (droce_cc_timely_check(&p) != 0)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"TIMELY parameters out of range: timely_t_low_us must be below "
			"timely_t_high_us and timely_min_rate_mbps at most the maximum rate");
	*pp = p;
	return 0;
}

/* DCQCN's parameters: the defaults for the link, with what the configuration sets (0 keeps a
 * default). */
static int
set_dcqcn(const struct droce_rt_config *c, struct droce_dcqcn_params *pp, uint64_t link_bps,
	  char *err, size_t errlen)
{
	struct droce_dcqcn_params p;

	droce_cc_dcqcn_defaults(&p, link_bps);
	if (c->dcqcn_max_rate_mbps != 0)
		p.max_rate_bps = (uint64_t)c->dcqcn_max_rate_mbps * 1000000;
	if (c->dcqcn_min_rate_mbps != 0)
		p.min_rate_bps = (uint64_t)c->dcqcn_min_rate_mbps * 1000000;
	if (c->dcqcn_ai_rate_mbps != 0)
		p.ai_rate_bps = (uint64_t)c->dcqcn_ai_rate_mbps * 1000000;
	if (c->dcqcn_hai_rate_mbps != 0)
		p.hai_rate_bps = (uint64_t)c->dcqcn_hai_rate_mbps * 1000000;
	if (c->dcqcn_time_reset_us != 0)
		p.time_reset_ns = (uint64_t)c->dcqcn_time_reset_us * 1000;
	if (c->dcqcn_byte_reset != 0)
		p.byte_reset = c->dcqcn_byte_reset;
	if (c->dcqcn_threshold != 0)
		p.threshold = c->dcqcn_threshold;
	if (c->dcqcn_g != 0)
		p.g = c->dcqcn_g;
	if (c->dcqcn_alpha_period_us != 0)
		p.alpha_period_ns = (uint64_t)c->dcqcn_alpha_period_us * 1000;
	if (c->dcqcn_reduce_period_us != 0)
		p.reduce_period_ns = (uint64_t)c->dcqcn_reduce_period_us * 1000;
	if (c->dcqcn_min_dec_fac != 0)
		p.min_dec_fac = c->dcqcn_min_dec_fac;
	p.cut_per_rtt = c->dcqcn_cut_per_rtt;
	p.cut_from_sent = c->dcqcn_cut_from_sent;
	p.clamp_tgt_rate = c->dcqcn_clamp_tgt_rate;
	p.ai_rate_ppm = c->dcqcn_ai_rate_ppm;
	p.target_cut_pct = c->dcqcn_target_cut_pct;
	p.level_cut_pct = c->dcqcn_level_cut_pct;
	p.level_min_share = c->dcqcn_level_min_share;
	p.level_max_alpha = c->dcqcn_level_max_alpha;
	p.first_cut_pct = c->dcqcn_first_cut_pct;
	p.paced_cut_pct = c->dcqcn_paced_cut_pct;
	p.paced_min_share = c->dcqcn_paced_min_share;
	if (droce_cc_dcqcn_check(&p) != 0)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"DCQCN parameters out of range: dcqcn_min_rate_mbps above the maximum "
			"rate (%" PRIu64 " Mbit/s)?",
			p.max_rate_bps / 1000000);
	*pp = p;
	return 0;
}

/* The port's rate for congestion control's defaults: link_mbps, else what the PMD reports,
 * else 0 (unknown: the algorithms assume 100 Gbit/s). */
static uint64_t
link_bps(const struct droce_rt *rt)
{
	struct rte_eth_link l;

	if (rt->cfg.link_mbps != 0)
		return (uint64_t)rt->cfg.link_mbps * 1000000;
	if (rte_eth_link_get_nowait(rt->port.port_id, &l) == 0 && l.link_speed != 0 &&
	    l.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		return (uint64_t)l.link_speed * 1000000;
	return 0;
}

/* Congestion control scales its defaults to the port's rate. A virtual PMD reports a nominal
 * speed (memif: 100 Gbit/s) or none (then 100 Gbit/s is assumed), and behind a slower
 * path, an emulated link, those defaults never bind: say which rate they are for. */
static void
note_cc_rate(const struct droce_rt *rt)
{
	if (strcmp(rt->cfg.cc, "none") == 0 || rt->cfg.link_mbps != 0)
		return;
	if (rt->link_bps == 0)
		rte_log(RTE_LOG_NOTICE, RTE_LOGTYPE_USER1,
			"droce: cc %s: port %s reports no link speed, so its parameters are a "
			"100 Gbit/s port's: set link_mbps to the path's bottleneck rate\n",
			rt->cfg.cc, rt->port.name);
	else
		rte_log(RTE_LOG_NOTICE, RTE_LOGTYPE_USER1,
			"droce: cc %s: parameters for %" PRIu64 " Mbit/s, port %s's reported "
			"speed; behind a slower path (an emulated link) set link_mbps to its "
			"rate\n",
			rt->cfg.cc, rt->link_bps / 1000000, rt->port.name);
}

/* The device's algorithms (the built-in ones and the plugins'), the one `cc` names and its
 * parameters from the configuration: what the device's QPs start with. */
static int
dev_cc(struct droce_rt *rt, struct droce_dev *dev, char *err, size_t errlen)
{
	const struct droce_rt_config *c = &rt->cfg;
	const struct droce_cc_ops *ops;
	union droce_cc_params p;
	unsigned int i;
	int rc = 0;

	for (i = 0; i < rt->cc_reg.n; i++)
		droce_dev_cc_register(dev, rt->cc_reg.ops[i]); /* fits: same size */
	ops = droce_dev_cc_find(dev, c->cc); /* validated with the configuration */
	droce_cc_defaults(ops, &p, rt->link_bps);
	if (ops == &droce_cc_dcqcn)
		rc = set_dcqcn(c, &p.dcqcn, rt->link_bps, err, errlen);
	else if (ops == &droce_cc_timely)
		rc = set_timely(c, &p.timely, rt->link_bps, err, errlen);
	if (rc == 0 && droce_dev_set_cc(dev, ops, &p) != 0)
		rc = droce_rt_errf(-EINVAL, err, errlen,
				   "cc %s refuses its parameters: see its documentation", c->cc);
	return rc;
}

int
droce_rt_qp_cc(struct droce_rt *rt, uint32_t index, struct droce_qp_init_attr *ia,
	       union droce_cc_params *p)
{
	const struct droce_cc_ops *ops;
	char name[DROCE_CC_NAME_MAX + 1], err[160];
	int rc;

	if (ia->gsi)
		return 0; /* QP1 is the runtime's own, not the program's */
	if (index == DROCE_RT_QP_NEXT)
		index = rt->qp_made++;
	rc = droce_rt_config_qp_cc(rt->cfg.qp_cc, index, name, sizeof(name));
	if (rc <= 0)
		return rc;
	ops = droce_cc_find(&rt->cc_reg, name);
	if (ops == NULL)
		return -EINVAL;
	droce_cc_defaults(ops, p, rt->link_bps);
	rc = 0;
	if (ops == &droce_cc_dcqcn)
		rc = set_dcqcn(&rt->cfg, &p->dcqcn, rt->link_bps, err, sizeof(err));
	else if (ops == &droce_cc_timely)
		rc = set_timely(&rt->cfg, &p->timely, rt->link_bps, err, sizeof(err));
	if (rc != 0)
		return rc;
	ia->cc = ops->name;
	ia->cc_params = p;
	return 0;
}

static int
make_dev(struct droce_rt *rt, struct droce_rt_shard *s, char *err, size_t errlen)
{
	const struct droce_rt_config *c = &rt->cfg;
	struct droce_inflight_cfg inf;
	struct droce_ack_policy ack;
	struct droce_dev_attr a;
	struct droce_io io;
	int e = 0;

	memset(&a, 0, sizeof(a));
	memcpy(a.mac, rt->port.mac, 6);
	memcpy(a.gids, rt->gids, sizeof(rt->gids));
	a.num_gids = (uint8_t)rt->num_gids;
	a.eth_mtu = rt->port.mtu;
	a.max_qp = c->max_qp;
	a.max_cq = c->max_cq;
	a.max_mr = c->max_mr;
	a.max_mw = c->max_mw;
	a.max_srq = c->max_srq;
	a.max_ah = c->max_ah;
	a.max_pd = c->max_pd;
	a.shard = (uint8_t)s->idx;
	a.shard_bits = (uint8_t)rt->shard_bits;
	if (rt->portd_fd >= 0) {
		/* one shard (droce_rt_portd_attach): the QPNs of droce-portd's slot for us */
		a.shard = (uint8_t)rt->portd_slot;
		a.shard_bits = (uint8_t)rt->portd_bits;
		a.gsi_any_shard = true;
	}
	a.link_bps = rt->link_bps;
	droce_rt_io_init(s, &io);
	s->dev = droce_dev_create(&a, &io, &e);
	if (s->dev == NULL) {
		droce_rt_errf(0, err, errlen,
			      "cannot create the engine device (%s): lower DROCE_MAX_QP and "
			      "the other max_* keys",
			      strerror(e ? e : ENOMEM));
		return -(e ? e : ENOMEM);
	}
	droce_dev_set_cnp_interval(s->dev, c->cnp_interval_us == DROCE_RT_CNP_AUTO ?
						   droce_cc_dcqcn_cnp_interval(rt->link_bps) :
						   (uint64_t)c->cnp_interval_us * 1000);
	if (droce_rt_config_inflight(c, &inf) == 0) /* validated with the configuration */
		droce_dev_set_inflight(s->dev, &inf);
	droce_dev_set_recovery(s->dev, strcmp(c->recovery, "sr") == 0 ? DROCE_RECOVERY_SR :
									DROCE_RECOVERY_GBN);
	droce_dev_set_tx_quantum(s->dev, c->tx_quantum); /* validated with the configuration */
	/* By default the application's answer leads a held ACK: the peer's next Rx burst begins
	 * with what it waits for (validated with the configuration). */
	if (droce_rt_config_ack(c, DROCE_ACK_ORDER_REQUESTS_FIRST, &ack) == 0)
		droce_dev_set_ack_policy(s->dev, &ack);
	return dev_cc(rt, s->dev, err, errlen);
}

static int
make_rings(struct droce_rt *rt, char *err, size_t errlen)
{
	char name[RTE_RING_NAMESIZE];
	struct droce_rt_shard *s;
	unsigned int i;

	for (i = 0; i < rt->nb_shards; i++) {
		s = &rt->sh[i];
		/* Many application threads enqueue, the shard's poll lcore alone dequeues. */
		snprintf(name, sizeof(name), "droce_call%u_%u", rt->port.port_id, i);
		s->calls = rte_ring_create(name, DROCE_RT_CALL_RING, (int)rte_socket_id(),
					   RING_F_SC_DEQ);
		if (s->calls == NULL) {
			droce_rt_errf(0, err, errlen, "cannot create the call ring: %s",
				      rte_strerror(rte_errno));
			return -ENOMEM;
		}
		if (rt->nb_shards == 1)
			continue;
		/* The other shards' Rx enqueue, this shard dequeues. */
		snprintf(name, sizeof(name), "droce_steer%u_%u", rt->port.port_id, i);
		s->steer = rte_ring_create(name, DROCE_RT_STEER_RING, (int)rte_socket_id(),
					   RING_F_SC_DEQ);
		if (s->steer == NULL) {
			droce_rt_errf(0, err, errlen, "cannot create the steering ring: %s",
				      rte_strerror(rte_errno));
			return -ENOMEM;
		}
	}
	if (rt->cfg.exception != DROCE_RT_EXC_RING)
		return 0;
	snprintf(name, sizeof(name), "droce_exc%u", rt->port.port_id);
	/* Every shard's Rx may enqueue; any application thread dequeues. */
	rt->exc = rte_ring_create(name, DROCE_RT_EXC_RING_SIZE, (int)rte_socket_id(),
				  rt->nb_shards > 1 ? 0 : RING_F_SP_ENQ);
	if (rt->exc == NULL) {
		droce_rt_errf(0, err, errlen, "cannot create the exception ring: %s",
			      rte_strerror(rte_errno));
		return -ENOMEM;
	}
	return 0;
}

struct droce_rt *
droce_rt_open_config(const struct droce_rt_config *cfg, const char *argv0, char *err, size_t errlen)
{
	struct droce_neigh_ops nops;
	struct droce_rt *rt;
	unsigned int i;
	int rc;

	/* The shards are cache-line aligned (each is written by its own lcore). */
	rt = aligned_alloc(_Alignof(struct droce_rt), sizeof(*rt));
	if (rt == NULL) {
		droce_rt_errf(0, err, errlen, "out of memory");
		return NULL;
	}
	memset(rt, 0, sizeof(*rt));
	rt->cfg = *cfg;
	rt->host_fd = -1;
	rt->portd_fd =
		droce_rt_portd_attach(&rt->cfg, &rt->portd_slot, &rt->portd_bits, err, errlen);
	if (rt->portd_fd < 0 && rt->portd_fd != -ENOENT) {
		free(rt);
		return NULL;
	}
	cfg = &rt->cfg; /* the port as droce-portd gave it */
	rc = droce_rt_eal_init(cfg, argv0, err, errlen);
	if (rc != 0) {
		if (rt->portd_fd >= 0)
			close(rt->portd_fd);
		free(rt);
		return NULL;
	}
	rt->eal_up = true;
	rt->nb_shards = cfg->shards;
	rt->shard_bits = droce_rt_config_shard_bits(cfg);
	for (i = 0; i < rt->nb_shards; i++) {
		rt->sh[i].rt = rt;
		rt->sh[i].idx = i;
		/* Lcore mode: lcores[0] is the application's, shard i polls on lcores[1 + i]. */
		rt->sh[i].lcore = cfg->nb_lcores > 1 + i ? cfg->lcores[1 + i] : cfg->lcores[0];
	}
	rt->tsc_base = rte_rdtsc();
	rt->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / rte_get_tsc_hz());
	if (cfg->seed != 0)
		rte_srand(cfg->seed);
	rc = droce_rt_port_open(&rt->port, cfg, err, errlen);
	if (rc == 0)
		rc = make_rings(rt, err, errlen);
	if (rc == 0 && droce_rt_config_host_mode(cfg))
		rc = droce_rt_host_open(rt, err, errlen);
	if (rc == 0) {
		if (!droce_rt_config_host_mode(cfg))
			make_gids(rt);
		nops.tx = droce_rt_tx_copy; /* ARP/ND leave through shard 0 */
		nops.ctx = &rt->sh[0];
		rc = make_neigh(rt, &nops);
		if (rc != 0)
			droce_rt_errf(0, err, errlen,
				      "MAC %02x:... of port %s is not unicast: set DROCE_MAC",
				      rt->port.mac[0], rt->port.name);
	}
	/* the algorithms a plugin adds (each device gets them, with the parameters of the one
	 * its QPs will run: make_dev) */
	if (rc == 0 && rt->cfg.cc_plugin[0] != '\0')
		rc = droce_rt_cc_plugin_load(rt->cfg.cc_plugin, &rt->cc_reg, rt->cfg.cc, err,
					     errlen);
	if (rc == 0) {
		rt->link_bps = link_bps(rt);
		note_cc_rate(rt);
	}
	for (i = 0; rc == 0 && i < rt->nb_shards; i++)
		rc = make_dev(rt, &rt->sh[i], err, errlen);
	if (rc == 0 && rt->port.flow_rules == 0)
		rte_log(rt->nb_shards > 1 ? RTE_LOG_NOTICE : RTE_LOG_INFO, RTE_LOGTYPE_USER1,
			"droce: port %s: no rte_flow rule "
			"for UDP 4791 (%s): %s\n",
			rt->port.name, rt->port.flow_why,
			rt->port.rss ? "RSS spreads Rx, shards steer by QPN" :
				       "each shard polls its own queue, shards steer by QPN");
	if (rc == 0)
		rc = droce_rt_capture_open(rt, err, errlen);
	if (rc == 0 && droce_rt_telemetry_attach(rt) != 0) {
		droce_rt_errf(0, err, errlen, "out of memory");
		rc = -ENOMEM;
	}
	if (rc != 0) {
		droce_rt_close(rt);
		return NULL;
	}
	for (i = 0; i < rt->nb_shards; i++)
		rt->sh[i].now = droce_rt_clock(rt);
	rt->neigh_deadline = UINT64_MAX;
	rt->next_link_check = 0; /* the first iteration announces us once the link is up */
	return rt;
}

struct droce_rt *
droce_rt_open(const char *config_path, const char *argv0, char *err, size_t errlen)
{
	struct droce_rt_config cfg;

	if (droce_rt_config_load(&cfg, config_path, err, errlen) != 0)
		return NULL;
	return droce_rt_open_config(&cfg, argv0, err, errlen);
}

void
droce_rt_close(struct droce_rt *rt)
{
	struct droce_rt_shard *s;
	struct rte_mbuf *m;
	unsigned int i, k;
	void *p;

	if (rt == NULL)
		return;
	if (rt->cfg.counters_file[0] != '\0' && rt->nb_shards > 0 && rt->sh[0].dev != NULL)
		droce_rt_counters_save(rt);
	/* Telemetry first: a read in progress finishes before the loop stops. */
	droce_rt_telemetry_detach(rt);
	droce_rt_stop(rt);
	for (i = 0; i < rt->nb_shards; i++) {
		s = &rt->sh[i];
		if (s->dev != NULL) {
			droce_dev_destroy(s->dev);
			s->dev = NULL;
		}
		if (rt->port.started)
			droce_rt_flush(s);
		rte_pktmbuf_free_bulk(s->txb, s->ntx);
		s->ntx = 0;
		for (k = 0; k < rt->nb_shards; k++)
			rte_pktmbuf_free_bulk(s->out[k], s->nout[k]);
		if (s->steer != NULL) {
			while (rte_ring_dequeue(s->steer, &p) == 0) {
				m = p;
				rte_pktmbuf_free(m);
			}
			rte_ring_free(s->steer);
		}
		rte_ring_free(s->calls);
	}
	droce_rt_capture_close(rt);
	droce_rt_mcast_close(rt);
	droce_rt_host_close(rt);
	if (rt->exc != NULL) {
		while (rte_ring_dequeue(rt->exc, &p) == 0) {
			m = p;
			rte_pktmbuf_free(m);
		}
		rte_ring_free(rt->exc);
	}
	if (rt->portd_fd >= 0) {
		/* our slot back first: droce-portd stops bursting on our memif (it looks every
		 * 2 ms) before the memif is torn down under it on its interrupt thread */
		close(rt->portd_fd);
		usleep(10000);
	}
	droce_rt_port_close(&rt->port);
	if (rt->eal_up)
		droce_rt_eal_cleanup(&rt->cfg);
	free(rt);
}

struct droce_dev *
droce_rt_dev(struct droce_rt *rt)
{
	return rt->sh[0].dev;
}

const struct droce_rt_config *
droce_rt_config(const struct droce_rt *rt)
{
	return &rt->cfg;
}

void
droce_rt_mac(const struct droce_rt *rt, uint8_t mac[6])
{
	memcpy(mac, rt->port.mac, 6);
}

uint16_t
droce_rt_port_id(const struct droce_rt *rt)
{
	return rt->port.port_id;
}

bool
droce_rt_link_up(const struct droce_rt *rt)
{
	return __atomic_load_n(&rt->link_up, __ATOMIC_RELAXED);
}

uint64_t
droce_rt_now(const struct droce_rt *rt)
{
	return droce_rt_clock(rt);
}

void
droce_rt_tick(struct droce_rt *rt)
{
	unsigned int i;

	for (i = 0; i < rt->nb_shards; i++)
		droce_rt_shard_clock(&rt->sh[i]);
}

const char *
droce_rt_strerror(const struct droce_rt *rt)
{
	return rt->err;
}
