/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime API: open/close, threading modes, neighbour resolution, counters, exceptions. */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_random.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_rt_priv.h"

static void __attribute__((format(printf, 3, 4)))
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
}

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
	return droce_neigh_init(&rt->neigh, &nc, ops);
}

static int
make_dev(struct droce_rt *rt, const struct droce_io *io, char *err, size_t errlen)
{
	const struct droce_rt_config *c = &rt->cfg;
	struct droce_dev_attr a;
	int e = 0;

	memset(&a, 0, sizeof(a));
	memcpy(a.mac, rt->port.mac, 6);
	memcpy(a.gids, rt->gids, sizeof(rt->gids));
	a.num_gids = (uint8_t)rt->num_gids;
	a.eth_mtu = rt->port.mtu;
	a.max_qp = c->max_qp;
	a.max_cq = c->max_cq;
	a.max_mr = c->max_mr;
	a.max_srq = c->max_srq;
	a.max_ah = c->max_ah;
	a.max_pd = c->max_pd;
	rt->dev = droce_dev_create(&a, io, &e);
	if (rt->dev == NULL) {
		fail(err, errlen, "cannot create the engine device (%s): lower DROCE_MAX_QP and "
		     "the other max_* keys", strerror(e ? e : ENOMEM));
		return -(e ? e : ENOMEM);
	}
	return 0;
}

static int
make_rings(struct droce_rt *rt, char *err, size_t errlen)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "droce_call%u", rt->port.port_id);
	/* Many application threads enqueue, the poll lcore alone dequeues. */
	rt->calls = rte_ring_create(name, DROCE_RT_CALL_RING, (int)rte_socket_id(),
				    RING_F_SC_DEQ);
	if (rt->calls == NULL) {
		fail(err, errlen, "cannot create the call ring: %s", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if (rt->cfg.exception != DROCE_RT_EXC_RING)
		return 0;
	snprintf(name, sizeof(name), "droce_exc%u", rt->port.port_id);
	rt->exc = rte_ring_create(name, DROCE_RT_EXC_RING_SIZE, (int)rte_socket_id(), RING_F_SP_ENQ);
	if (rt->exc == NULL) {
		fail(err, errlen, "cannot create the exception ring: %s", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	return 0;
}

struct droce_rt *
droce_rt_open_config(const struct droce_rt_config *cfg, const char *argv0, char *err,
		     size_t errlen)
{
	struct droce_neigh_ops nops;
	struct droce_io io;
	struct droce_rt *rt;
	int rc;

	rt = calloc(1, sizeof(*rt));
	if (rt == NULL) {
		fail(err, errlen, "out of memory");
		return NULL;
	}
	rt->cfg = *cfg;
	rc = droce_rt_eal_init(cfg, argv0, err, errlen);
	if (rc != 0) {
		free(rt);
		return NULL;
	}
	rt->eal_up = true;
	rt->poll_lcore = cfg->nb_lcores > 1 ? cfg->lcores[1] : cfg->lcores[0];
	rt->tsc_base = rte_rdtsc();
	rt->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / rte_get_tsc_hz());
	if (cfg->seed != 0)
		rte_srand(cfg->seed);
	rc = droce_rt_port_open(&rt->port, cfg, err, errlen);
	if (rc == 0)
		rc = make_rings(rt, err, errlen);
	if (rc == 0) {
		make_gids(rt);
		droce_rt_io_init(rt, &io, &nops);
		rc = make_neigh(rt, &nops);
		if (rc != 0)
			fail(err, errlen, "MAC %02x:... of port %s is not unicast: set DROCE_MAC",
			     rt->port.mac[0], rt->port.name);
	}
	if (rc == 0)
		rc = make_dev(rt, &io, err, errlen);
	if (rc != 0) {
		droce_rt_close(rt);
		return NULL;
	}
	rt->now = droce_rt_clock(rt);
	rt->neigh_deadline = UINT64_MAX;
	rt->next_link_check = 0;	/* the first iteration announces us once the link is up */
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
	struct rte_mbuf *m;
	void *p;

	if (rt == NULL)
		return;
	droce_rt_stop(rt);
	if (rt->dev != NULL) {
		droce_dev_destroy(rt->dev);
		rt->dev = NULL;
	}
	if (rt->port.started)
		droce_rt_flush(rt);
	rte_pktmbuf_free_bulk(rt->txb, rt->ntx);
	rt->ntx = 0;
	if (rt->exc != NULL) {
		while (rte_ring_dequeue(rt->exc, &p) == 0) {
			m = p;
			rte_pktmbuf_free(m);
		}
		rte_ring_free(rt->exc);
	}
	rte_ring_free(rt->calls);
	droce_rt_port_close(&rt->port);
	if (rt->eal_up)
		droce_rt_eal_cleanup(&rt->cfg);
	free(rt);
}

struct droce_dev *
droce_rt_dev(struct droce_rt *rt)
{
	return rt->dev;
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

unsigned int
droce_rt_gid(const struct droce_rt *rt, unsigned int index, uint8_t gid[16])
{
	if (index < rt->num_gids)
		memcpy(gid, rt->gids[index], 16);
	return rt->num_gids;
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

const char *
droce_rt_strerror(const struct droce_rt *rt)
{
	return rt->err;
}

/* ---- Threading ---- */

static int
lcore_main(void *arg)
{
	struct droce_rt *rt = arg;
	unsigned int work;

	/* Idle sleeps are bounded by the next timer: keep the kernel's 50 us slack off them. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

	while (!__atomic_load_n(&rt->stop, __ATOMIC_ACQUIRE)) {
		work = droce_rt_iter(rt);
		droce_rt_backoff(rt, work);
	}
	droce_rt_iter(rt);	/* run closures enqueued before the stop */
	return 0;
}

int
droce_rt_start(struct droce_rt *rt)
{
	int rc;

	if (rt->started)
		return -EALREADY;
	if (rt->cfg.nb_lcores < 2 || rt->poll_lcore == rte_get_main_lcore()) {
		snprintf(rt->err, sizeof(rt->err), "no poll lcore: configure two lcores "
			 "(DROCE_LCORES=0,1) or drive the loop inline with droce_rt_poll()");
		return -ENOTSUP;
	}
	__atomic_store_n(&rt->stop, 0, __ATOMIC_RELEASE);
	rc = rte_eal_remote_launch(lcore_main, rt, rt->poll_lcore);
	if (rc != 0) {
		snprintf(rt->err, sizeof(rt->err), "cannot launch the poll loop on lcore %u (%s): "
			 "is it among EAL's lcores (DROCE_LCORES, -l in DROCE_EAL)?",
			 rt->poll_lcore, strerror(-rc));
		return rc;
	}
	rt->started = true;
	return 0;
}

int
droce_rt_stop(struct droce_rt *rt)
{
	if (!rt->started)
		return 0;
	__atomic_store_n(&rt->stop, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(rt->poll_lcore);
	rt->started = false;
	return 0;
}

unsigned int
droce_rt_poll(struct droce_rt *rt)
{
	if (rt->started)
		return 0;
	return droce_rt_iter(rt);
}

int
droce_rt_call(struct droce_rt *rt, int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	struct droce_rt_call_req req = { .fn = fn, .arg = arg };
	unsigned int spins = 0;

	if (!rt->started || rte_lcore_id() == rt->poll_lcore)
		return fn(rt, arg);
	while (rte_ring_mp_enqueue(rt->calls, &req) != 0)
		sched_yield();
	droce_rt_wake(rt);
	/* Spin briefly (the loop may be busy), then yield: the poll lcore may share our core. */
	while (!__atomic_load_n(&req.done, __ATOMIC_ACQUIRE)) {
		if (++spins < 256)
			rte_pause();
		else
			sched_yield();
	}
	return req.rc;
}

int
droce_rt_run_until(struct droce_rt *rt, bool (*cond)(void *arg), void *arg, uint32_t timeout_ms)
{
	uint64_t end = droce_rt_clock(rt) + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = { 0, 20000 };
	unsigned int checks = 0;

	while (!cond(arg)) {
		if (droce_rt_clock(rt) >= end)
			return -ETIMEDOUT;
		/* Lcore mode: ask again at once for idle_spins checks (yielding the core between
		 * them), then every 20 us so a cond that calls into the device does not keep the
		 * loop busy for long. */
		if (!rt->started)
			droce_rt_backoff(rt, droce_rt_iter(rt));
		else if (++checks < rt->cfg.idle_spins)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
	return 0;
}

/* ---- Neighbours ---- */

struct resolve_req {
	const uint8_t *gid;
	uint8_t mac[6];
};

static int
resolve_fn(struct droce_rt *rt, void *arg)
{
	struct resolve_req *r = arg;
	int rc;

	rt->now = droce_rt_clock(rt);
	rc = droce_neigh_resolve(&rt->neigh, r->gid, rt->now, r->mac, NULL, NULL);
	rt->neigh_deadline = droce_neigh_next_deadline(&rt->neigh);
	droce_rt_flush(rt);
	if (rc == -EHOSTUNREACH)
		snprintf(rt->err, sizeof(rt->err), "%s", droce_neigh_strerror(&rt->neigh));
	return rc;
}

int
droce_rt_resolve(struct droce_rt *rt, const uint8_t gid[16], uint8_t mac[6],
		 uint32_t timeout_ms)
{
	struct resolve_req r = { .gid = gid };
	uint64_t end = droce_rt_clock(rt) + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = { 0, 200000 };
	char a[48];
	int rc;

	for (;;) {
		rc = droce_rt_call(rt, resolve_fn, &r);
		if (rc != -EAGAIN)
			break;
		if (droce_rt_clock(rt) >= end) {
			droce_neigh_addr_str(gid, a, sizeof(a));
			snprintf(rt->err, sizeof(rt->err), "no answer from %s within %u ms "
				 "(resolution still under way)", a, timeout_ms);
			return -ETIMEDOUT;
		}
		/* The loop answers and retries on its own; this thread only asks again. */
		if (rt->started)
			nanosleep(&ts, NULL);
		else
			droce_rt_backoff(rt, droce_rt_iter(rt));
	}
	if (rc == 0)
		memcpy(mac, r.mac, 6);
	else if (rc == -ENETUNREACH || rc == -EAFNOSUPPORT) {
		droce_neigh_addr_str(gid, a, sizeof(a));
		snprintf(rt->err, sizeof(rt->err), "%s: %s: configure %s", a,
			 rc == -ENETUNREACH ? "no route (off our prefix, no gateway)" :
			 "no local address of that IP version",
			 rc == -ENETUNREACH ? "DROCE_GW4/DROCE_GW6" : "DROCE_IPV4/DROCE_IPV6");
	}
	return rc;
}

int
droce_rt_resolve_av(struct droce_rt *rt, struct droce_av *av, uint32_t timeout_ms)
{
	return droce_rt_resolve(rt, av->dgid, av->dmac, timeout_ms);
}

/* ---- Exceptions ---- */

int
droce_rt_exception_recv(struct droce_rt *rt, uint8_t *buf, uint32_t len)
{
	struct rte_mbuf *m;
	const void *src;
	void *p;
	uint32_t n;

	if (rt->exc == NULL || rte_ring_mc_dequeue(rt->exc, &p) != 0)
		return -EAGAIN;
	m = p;
	n = rte_pktmbuf_pkt_len(m);
	if (n > len)
		n = len;
	src = rte_pktmbuf_read(m, 0, n, buf);	/* copies into buf only if segmented */
	if (src != NULL && src != buf)
		memcpy(buf, src, n);
	rte_pktmbuf_free(m);
	return (int)n;
}

struct exc_frame {
	const uint8_t *frame;
	uint32_t len;
};

static int
exc_send_fn(struct droce_rt *rt, void *arg)
{
	const struct exc_frame *x = arg;
	int rc;

	if (x->len > rt->port.max_frame)
		return -EMSGSIZE;
	rc = droce_rt_tx_copy(rt, x->frame, x->len);
	droce_rt_flush(rt);
	return rc;
}

int
droce_rt_exception_send(struct droce_rt *rt, const uint8_t *frame, uint32_t len)
{
	struct exc_frame x = { frame, len };

	return droce_rt_call(rt, exc_send_fn, &x);
}
