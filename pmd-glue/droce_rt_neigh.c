/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbour resolution for the application, and the exception path in and out. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_rt_priv.h"
#include "droce_rt_vlan.h"

struct resolve_req {
	const uint8_t *gid;
	uint8_t mac[6];
};

static int
resolve_fn(struct droce_rt *rt, void *arg)
{
	struct droce_rt_shard *s = &rt->sh[0]; /* droce_rt_call: on shard 0's thread */
	struct resolve_req *r = arg;
	int rc;

	s->now = droce_rt_clock(rt);
	rc = droce_neigh_resolve(&rt->neigh, r->gid, s->now, r->mac, NULL, NULL);
	rt->neigh_deadline = droce_neigh_next_deadline(&rt->neigh);
	droce_rt_flush(s);
	if (rc == -EHOSTUNREACH)
		snprintf(rt->err, sizeof(rt->err), "%s", droce_neigh_strerror(&rt->neigh));
	return rc;
}

int
droce_rt_resolve(struct droce_rt *rt, const uint8_t gid[16], uint8_t mac[6], uint32_t timeout_ms)
{
	struct resolve_req r = { .gid = gid };
	uint64_t end = droce_rt_clock(rt) + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = { 0, 200000 };
	char a[48];
	int rc;

	if (rt->host_fd >= 0)
		return droce_rt_host_resolve(rt, gid, mac, timeout_ms);
	for (;;) {
		rc = droce_rt_call(rt, resolve_fn, &r);
		if (rc != -EAGAIN)
			break;
		if (droce_rt_clock(rt) >= end) {
			droce_neigh_addr_str(gid, a, sizeof(a));
			snprintf(rt->err, sizeof(rt->err),
				 "no answer from %s within %u ms "
				 "(resolution still under way)",
				 a, timeout_ms);
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
	/* The peer answers on our VLAN only, so every frame to it goes out on that VLAN, with
	 * its priority (the engine builds the tag, droce_build). */
	av->has_vlan = rt->cfg.vlan != 0;
	av->vlan_tci = av->has_vlan ? droce_rt_vlan_tci(&rt->cfg) : 0;
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
	src = rte_pktmbuf_read(m, 0, n, buf); /* copies into buf only if segmented */
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
	rc = droce_rt_tx_copy(&rt->sh[0], x->frame, x->len);
	droce_rt_flush(&rt->sh[0]);
	return rc;
}

int
droce_rt_exception_send(struct droce_rt *rt, const uint8_t *frame, uint32_t len)
{
	struct exc_frame x = { frame, len };

	return droce_rt_call(rt, exc_send_fn, &x);
}
