/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host-address mode in the runtime: the GID table from the interface's addresses, kept up to
 * date by shard 0 (rtnetlink, read with the link check), and next hops from the kernel.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "droce_ext.h"
#include "droce_pkt.h"
#include "droce_hostaddr.h"
#include "droce_rt_err.h"
#include "droce_rt_priv.h"

/* The table into rt->gids under the gid_seq seqlock (odd while written): application threads
 * read it with droce_rt_gid(), the other shards copy it into their devices. */
static void
publish(struct droce_rt *rt)
{
	__atomic_fetch_add(&rt->gid_seq, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(rt->gids, rt->host_gids.gid, sizeof(rt->gids));
	rt->num_gids = rt->host_gids.n;
	__atomic_fetch_add(&rt->gid_seq, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&rt->gid_gen, 1, __ATOMIC_RELEASE);
}

int
droce_rt_host_open(struct droce_rt *rt, char *err, size_t errlen)
{
	char iface[32];
	int rc;

	rt->host_fd = -1;
	if (!droce_rt_config_host_mode(&rt->cfg))
		return 0;
	if (droce_rt_config_host_iface(&rt->cfg, iface, sizeof(iface)) != 0)
		return droce_rt_errf(-EINVAL, err, errlen, "addr_mode host: no interface");
	rt->host_ifindex = (int)if_nametoindex(iface);
	if (rt->host_ifindex == 0)
		return droce_rt_errf(-ENODEV, err, errlen,
				     "addr_mode host: interface '%s' not found: fix "
				     "DROCE_HOST_IFACE or the vdev's iface=",
				     iface);
	/* listening first: a change during the dump is read again later, never lost */
	rt->host_fd = droce_host_listen();
	if (rt->host_fd < 0)
		return droce_rt_errf(rt->host_fd, err, errlen,
				     "addr_mode host: cannot listen to rtnetlink: %s",
				     strerror(-rt->host_fd));
	rc = droce_host_dump(rt->host_ifindex, &rt->host_gids, err, errlen);
	if (rc != 0)
		return rc;
	if (rt->host_gids.n == 0)
		return droce_rt_errf(-EADDRNOTAVAIL, err, errlen,
				     "addr_mode host: interface %s has no IPv4 or global IPv6 "
				     "address: add one ('ip addr add 198.18.0.1/24 dev %s')",
				     iface, iface);
	publish(rt);
	return 0;
}

void
droce_rt_host_close(struct droce_rt *rt)
{
	if (rt->host_fd >= 0)
		close(rt->host_fd);
	rt->host_fd = -1;
}

/* A shard's device takes the table published last. */
void
droce_rt_host_sync(struct droce_rt_shard *s)
{
	struct droce_rt *rt = s->rt;
	uint8_t gids[DROCE_MAX_GIDS][16];
	uint32_t seq, gen = __atomic_load_n(&rt->gid_gen, __ATOMIC_ACQUIRE);
	unsigned int n;

	if (gen == s->gid_gen)
		return;
	do {
		seq = __atomic_load_n(&rt->gid_seq, __ATOMIC_ACQUIRE);
		memcpy(gids, rt->gids, sizeof(gids));
		n = rt->num_gids;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != __atomic_load_n(&rt->gid_seq, __ATOMIC_RELAXED));
	if (s->dev != NULL)
		droce_dev_set_gids(s->dev, (const uint8_t(*)[16])gids, n);
	s->gid_gen = gen;
}

/* Shard 0, with the link check: the address changes rtnetlink reported. */
unsigned int
droce_rt_host_poll(struct droce_rt_shard *s)
{
	struct droce_rt *rt = s->rt;
	int rc;

	if (rt->host_fd < 0)
		return 0;
	rc = droce_host_poll(rt->host_fd, rt->host_ifindex, &rt->host_gids);
	if (rc < 0) {
		s->st.host_addr_errors++;
		return 0;
	}
	if (rc == 0)
		return 0;
	s->st.host_addr_changes += (unsigned int)rc;
	publish(rt);
	droce_rt_host_sync(s);
	return 1;
}

unsigned int
droce_rt_gid(const struct droce_rt *rt, unsigned int index, uint8_t gid[16])
{
	uint32_t seq;
	unsigned int n;

	do {
		seq = __atomic_load_n(&rt->gid_seq, __ATOMIC_ACQUIRE);
		n = rt->num_gids;
		if (index < n && index < DROCE_MAX_GIDS)
			memcpy(gid, rt->gids[index], 16);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != __atomic_load_n(&rt->gid_seq, __ATOMIC_RELAXED));
	return n;
}

int
droce_rt_host_resolve(struct droce_rt *rt, const uint8_t gid[16], uint8_t mac[6],
		      uint32_t timeout_ms)
{
	/* A group's MAC is derived (RFC 1112 6.4, RFC 2464 7), as droce_neigh_resolve does. */
	if (droce_gid_is_multicast(gid)) {
		droce_gid_mcast_mac(gid, mac);
		return 0;
	}
	/* On the caller's thread: the kernel answers, the loop is not involved. */
	return droce_host_neigh(rt->host_ifindex, gid, mac, timeout_ms, rt->err, sizeof(rt->err));
}
