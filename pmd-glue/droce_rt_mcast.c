/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Membership of IP multicast groups on the host interface behind the port, so that switches
 * which forward multicast only to ports that asked for it (IGMP / MLD snooping) deliver a
 * group's RoCE datagrams. The kernel's rdma_cm does the same for RoCE (an IGMP join on the
 * netdev). Here the kernel sends the reports and answers the queries: a UDP socket joined to
 * the group on that interface holds the membership until it is closed. Only a port with a
 * host interface has one (rte_eth_dev_info.if_index: af_packet, af_xdp, tap, mlx5's netdev);
 * memif, ring and pcap ports have none (-ENODEV).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "droce_pkt.h"
#include "droce_rt_priv.h"

static pthread_mutex_t kmc_lock = PTHREAD_MUTEX_INITIALIZER;

/* A socket of the group's family joined to it on ifindex, or -errno. */
static int
kernel_join(const uint8_t gid[16], unsigned int ifindex)
{
	int fd, rc;

	fd = socket(droce_gid_is_v4(gid) ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (droce_gid_is_v4(gid)) {
		struct ip_mreqn m;

		memset(&m, 0, sizeof(m));
		memcpy(&m.imr_multiaddr, gid + 12, 4);
		m.imr_ifindex = (int)ifindex;
		rc = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
	} else {
		struct ipv6_mreq m;

		memset(&m, 0, sizeof(m));
		memcpy(&m.ipv6mr_multiaddr, gid, 16);
		m.ipv6mr_interface = ifindex;
		rc = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof(m));
	}
	if (rc != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int
droce_rt_mcast_report(struct droce_rt *rt, const uint8_t gid[16], bool join)
{
	struct droce_rt_kgroup *g, *free_slot = NULL;
	struct rte_eth_dev_info info;
	unsigned int i;
	int rc = 0;

	if (rt == NULL || gid == NULL || !droce_gid_is_multicast(gid))
		return -EINVAL;
	pthread_mutex_lock(&kmc_lock);
	for (i = 0; i < DROCE_MCAST_GROUPS; i++) {
		g = &rt->kgroups[i];
		if (g->refs == 0) {
			if (free_slot == NULL)
				free_slot = g;
			continue;
		}
		if (memcmp(g->gid, gid, 16) != 0)
			continue;
		/* ids of this process joined the group more than once: one membership */
		if (join) {
			g->refs++;
		} else if (--g->refs == 0) {
			close(g->fd); /* the kernel reports the leave */
		}
		goto out;
	}
	if (!join) {
		rc = -ENOENT;
		goto out;
	}
	if (free_slot == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (rte_eth_dev_info_get(rt->port.port_id, &info) != 0 || info.if_index == 0) {
		rc = -ENODEV;
		goto out;
	}
	rc = kernel_join(gid, info.if_index);
	if (rc < 0)
		goto out;
	memcpy(free_slot->gid, gid, 16);
	free_slot->fd = rc;
	free_slot->refs = 1;
	rc = 0;
out:
	pthread_mutex_unlock(&kmc_lock);
	return rc;
}

void
droce_rt_mcast_close(struct droce_rt *rt)
{
	unsigned int i;

	pthread_mutex_lock(&kmc_lock);
	for (i = 0; i < DROCE_MCAST_GROUPS; i++) {
		if (rt->kgroups[i].refs != 0)
			close(rt->kgroups[i].fd);
		rt->kgroups[i].refs = 0;
	}
	pthread_mutex_unlock(&kmc_lock);
}
