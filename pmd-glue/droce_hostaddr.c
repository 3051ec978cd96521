/* SPDX-License-Identifier: BSD-3-Clause */
/* Host-address mode over rtnetlink: the interface's addresses, its routes and neighbours. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "droce_hostaddr.h"
#include "droce_neigh.h"
#include "droce_rt_err.h"

static const uint8_t zero16[16];

/* The kernel's NUD_VALID (include/net/neighbour.h, not exported): states with a usable MAC. */
#define HOST_NUD_VALID \
	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)

int
droce_host_gids_add(struct droce_host_gids *t, const uint8_t gid[16])
{
	unsigned int i, free_slot = DROCE_HOST_GIDS;

	for (i = 0; i < t->n; i++) {
		if (memcmp(t->gid[i], gid, 16) == 0)
			return 0;
		if (free_slot == DROCE_HOST_GIDS && memcmp(t->gid[i], zero16, 16) == 0)
			free_slot = i;
	}
	if (free_slot == DROCE_HOST_GIDS) {
		if (t->n == DROCE_HOST_GIDS)
			return -ENOSPC;
		free_slot = t->n++;
	}
	memcpy(t->gid[free_slot], gid, 16);
	return 1;
}

int
droce_host_gids_del(struct droce_host_gids *t, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (memcmp(t->gid[i], gid, 16) == 0)
			break;
	if (i == t->n)
		return 0;
	memset(t->gid[i], 0, 16);
	while (t->n > 0 && memcmp(t->gid[t->n - 1], zero16, 16) == 0)
		t->n--;
	return 1;
}

/* The GID of an address message, or false when it is none of ours (link-local IPv6). */
static bool
addr_gid(const struct nlmsghdr *nh, uint8_t gid[16])
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	const struct rtattr *a = IFA_RTA(ifa);
	int len = (int)IFA_PAYLOAD(nh);
	const void *local = NULL, *addr = NULL;
	const uint8_t *p;

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == IFA_LOCAL)
			local = RTA_DATA(a);
		else if (a->rta_type == IFA_ADDRESS)
			addr = RTA_DATA(a);
	}
	/* On a point-to-point link IFA_ADDRESS is the peer's and IFA_LOCAL ours. */
	p = local != NULL ? local : addr;
	if (p == NULL)
		return false;
	memset(gid, 0, 16);
	if (ifa->ifa_family == AF_INET) {
		gid[10] = gid[11] = 0xff; /* ::ffff:a.b.c.d (Annex A17.4.5.1) */
		memcpy(gid + 12, p, 4);
		return true;
	}
	if (ifa->ifa_family != AF_INET6 || (p[0] == 0xfe && (p[1] & 0xc0) == 0x80))
		return false;
	memcpy(gid, p, 16);
	return true;
}

int
droce_host_apply(struct droce_host_gids *t, int ifindex, const void *buf, size_t len, int *done)
{
	const struct nlmsghdr *nh = buf;
	const struct ifaddrmsg *ifa;
	int changes = 0, rc, nlen = (int)len;
	uint8_t gid[16];

	for (; NLMSG_OK(nh, (unsigned int)nlen); nh = NLMSG_NEXT(nh, nlen)) {
		if (nh->nlmsg_type == NLMSG_DONE) {
			if (done != NULL)
				*done = 1;
			continue;
		}
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EBADMSG;
			if (e->error != 0)
				return e->error;
			continue;
		}
		if (nh->nlmsg_type != RTM_NEWADDR && nh->nlmsg_type != RTM_DELADDR)
			continue;
		if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
			continue;
		ifa = NLMSG_DATA(nh);
		if ((int)ifa->ifa_index != ifindex || !addr_gid(nh, gid))
			continue;
		rc = nh->nlmsg_type == RTM_NEWADDR ? droce_host_gids_add(t, gid) :
						     droce_host_gids_del(t, gid);
		if (rc > 0)
			changes++;
	}
	return changes;
}

/* A blocking rtnetlink socket whose reads give up after a second. */
static int
nl_open(void)
{
	struct timeval tv = { 1, 0 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int
dump_family(int fd, int ifindex, unsigned char family, struct droce_host_gids *t, uint32_t seq)
{
	static __thread uint8_t buf[DROCE_HOST_NL_BUF];
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
	} req;
	int done = 0, rc;
	ssize_t n;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_GETADDR;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = seq;
	req.ifa.ifa_family = family;
	if (send(fd, &req, sizeof(req), 0) < 0)
		return -errno;
	while (!done) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		rc = droce_host_apply(t, ifindex, buf, (size_t)n, &done);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int
droce_host_dump(int ifindex, struct droce_host_gids *t, char *err, size_t errlen)
{
	char name[IF_NAMESIZE] = "?";
	int fd = nl_open(), rc;

	memset(t, 0, sizeof(*t));
	if (fd < 0)
		return droce_rt_errf(fd, err, errlen, "cannot open rtnetlink: %s", strerror(-fd));
	rc = dump_family(fd, ifindex, AF_INET, t, 1);
	if (rc == 0)
		rc = dump_family(fd, ifindex, AF_INET6, t, 2);
	close(fd);
	if (rc != 0)
		return droce_rt_errf(rc, err, errlen, "cannot list the addresses of %s: %s",
				     if_indextoname((unsigned int)ifindex, name) ? name : "?",
				     strerror(-rc));
	return 0;
}

int
droce_host_listen(void)
{
	struct sockaddr_nl sa;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* After an overrun: the kernel's table now, with every address still there in its slot. */
static int
resync(int ifindex, struct droce_host_gids *t)
{
	struct droce_host_gids now;
	unsigned int i, j, changes = 0;
	char err[8];
	int rc = droce_host_dump(ifindex, &now, err, sizeof(err));

	if (rc != 0)
		return rc;
	for (i = 0; i < t->n; i++) {
		for (j = 0; j < now.n; j++)
			if (memcmp(t->gid[i], now.gid[j], 16) == 0)
				break;
		if (j == now.n && memcmp(t->gid[i], zero16, 16) != 0)
			changes += (unsigned int)droce_host_gids_del(t, t->gid[i]);
	}
	for (j = 0; j < now.n; j++)
		if (memcmp(now.gid[j], zero16, 16) != 0 && droce_host_gids_add(t, now.gid[j]) > 0)
			changes++;
	return (int)changes;
}

int
droce_host_poll(int fd, int ifindex, struct droce_host_gids *t)
{
	static __thread uint8_t buf[DROCE_HOST_NL_BUF];
	int changes = 0, rc;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return changes;
			if (errno != ENOBUFS)
				return -errno;
			rc = resync(ifindex, t);
			return rc < 0 ? rc : changes + rc;
		}
		rc = droce_host_apply(t, ifindex, buf, (size_t)n, NULL);
		if (rc > 0)
			changes += rc;
	}
}

/* ---- Next hops through the kernel ---- */

static void
put_attr(struct nlmsghdr *nh, unsigned short type, const void *data, unsigned short len)
{
	struct rtattr *a = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send one request, read its one answer into resp: the answer's length, or -errno (an
 * NLMSG_ERROR answer's error). */
static int
nl_talk(int fd, struct nlmsghdr *req, void *resp, size_t resplen)
{
	const struct nlmsghdr *nh = resp;
	ssize_t n;

	if (send(fd, req, req->nlmsg_len, 0) < 0)
		return -errno;
	do {
		n = recv(fd, resp, resplen, 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
	} while (NLMSG_OK(nh, (unsigned int)n) && nh->nlmsg_seq != req->nlmsg_seq);
	if (!NLMSG_OK(nh, (unsigned int)n))
		return -EBADMSG;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);

		return nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) ? -EBADMSG : e->error;
	}
	return (int)n;
}

static bool
is_v4(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a, pfx, 12) == 0;
}

/* A request's header: body bytes of its family's message follow, attributes after them. */
static void
nl_head(struct nlmsghdr *nh, size_t body, uint16_t type, uint16_t flags, uint32_t seq)
{
	nh->nlmsg_len = NLMSG_LENGTH(body);
	nh->nlmsg_type = type;
	nh->nlmsg_flags = flags;
	nh->nlmsg_seq = seq;
}

/* A neighbour request (RTM_GETNEIGH, RTM_NEWNEIGH) for nh on ifindex. */
struct nd_req {
	struct nlmsghdr nh;
	struct ndmsg nd;
	char attrs[64];
};

static void
nd_req_init(struct nd_req *req, uint16_t type, uint16_t flags, int ifindex, const uint8_t nh[16],
	    uint32_t seq)
{
	bool v4 = is_v4(nh);

	memset(req, 0, sizeof(*req));
	nl_head(&req->nh, sizeof(req->nd), type, flags, seq);
	req->nd.ndm_family = v4 ? AF_INET : AF_INET6;
	req->nd.ndm_ifindex = ifindex;
	put_attr(&req->nh, NDA_DST, v4 ? nh + 12 : nh, v4 ? 4 : 16);
}

/* The next hop towards addr as the kernel routes it (the gateway, or addr itself). */
static int
route_nh(int fd, int ifindex, const uint8_t addr[16], uint8_t nh_out[16], uint32_t seq)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[64];
	} req;
	union {
		struct nlmsghdr nh;
		uint8_t b[4096];
	} resp;
	const struct rtmsg *rt;
	const struct rtattr *a;
	int n, len, oif = 0;
	bool v4 = is_v4(addr);

	memset(&req, 0, sizeof(req));
	nl_head(&req.nh, sizeof(req.rt), RTM_GETROUTE, NLM_F_REQUEST, seq);
	req.rt.rtm_family = v4 ? AF_INET : AF_INET6;
	req.rt.rtm_dst_len = v4 ? 32 : 128;
	put_attr(&req.nh, RTA_DST, v4 ? addr + 12 : addr, v4 ? 4 : 16);
	n = nl_talk(fd, &req.nh, &resp, sizeof(resp));
	if (n < 0)
		return n;
	if (resp.nh.nlmsg_type != RTM_NEWROUTE)
		return -EBADMSG;
	rt = NLMSG_DATA(&resp.nh);
	if (rt->rtm_type == RTN_LOCAL)
		return -EADDRINUSE; /* one of this host's own addresses */
	if (rt->rtm_type != RTN_UNICAST)
		return -ENETUNREACH;
	memcpy(nh_out, addr, 16);
	len = (int)RTM_PAYLOAD(&resp.nh);
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == 4)
			memcpy(&oif, RTA_DATA(a), 4);
		else if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == (v4 ? 4u : 16u))
			memcpy(v4 ? nh_out + 12 : nh_out, RTA_DATA(a), v4 ? 4 : 16);
	}
	return oif == ifindex ? 0 : -EXDEV;
}

/* The kernel's entry for nh: its NUD state, the MAC when it has one; -ENOENT when none. */
static int
neigh_get(int fd, int ifindex, const uint8_t nh[16], uint8_t mac[6], bool *has_mac, uint32_t seq)
{
	union {
		struct nlmsghdr nh;
		uint8_t b[4096];
	} resp;
	const struct ndmsg *nd;
	const struct rtattr *a;
	struct nd_req req;
	int n, len;

	nd_req_init(&req, RTM_GETNEIGH, NLM_F_REQUEST, ifindex, nh, seq);
	n = nl_talk(fd, &req.nh, &resp, sizeof(resp));
	if (n < 0)
		return n;
	if (resp.nh.nlmsg_type != RTM_NEWNEIGH)
		return -EBADMSG;
	nd = NLMSG_DATA(&resp.nh);
	*has_mac = false;
	len = (int)RTM_PAYLOAD(&resp.nh);
	for (a = (const struct rtattr *)((const char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			*has_mac = true;
		}
	return nd->ndm_state;
}

/* Ask the kernel to resolve nh: NTF_USE makes it act as if it had a packet for it. */
static int
neigh_use(int fd, int ifindex, const uint8_t nh[16], uint32_t seq)
{
	union {
		struct nlmsghdr nh;
		uint8_t b[1024];
	} resp;
	struct nd_req req;
	int n;

	nd_req_init(&req, RTM_NEWNEIGH, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, ifindex, nh, seq);
	req.nd.ndm_flags = NTF_USE;
	n = nl_talk(fd, &req.nh, &resp, sizeof(resp));
	return n < 0 ? n : 0;
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
droce_host_neigh(int ifindex, const uint8_t addr[16], uint8_t mac[6], uint32_t timeout_ms,
		 char *err, size_t errlen)
{
	const struct timespec tick = { 0, 1000000 };
	char a[48], h[48], ifn[IF_NAMESIZE] = "?";
	uint64_t end = mono_ms() + timeout_ms;
	uint8_t nh[16];
	uint32_t seq = 1;
	bool asked = false, has_mac;
	int fd, rc, state;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	droce_neigh_addr_str(addr, a, sizeof(a));
	if_indextoname((unsigned int)ifindex, ifn);
	fd = nl_open();
	if (fd < 0)
		return droce_rt_errf(fd, err, errlen, "cannot open rtnetlink: %s", strerror(-fd));
	rc = route_nh(fd, ifindex, addr, nh, seq++);
	if (rc == -EADDRINUSE || rc == -EXDEV || rc == -ENETUNREACH) {
		close(fd);
		return droce_rt_errf(-ENETUNREACH, err, errlen, "%s: %s", a,
				     rc == -EADDRINUSE ? "an address of this host (droce does not "
							 "loop back to itself)" :
				     rc == -EXDEV      ? "the kernel routes it through another "
							 "interface: add a route through this one" :
						    "no route in the kernel: add an address on its "
						    "prefix or a route ('ip route add')");
	}
	droce_neigh_addr_str(nh, h, sizeof(h));
	for (; rc == 0;) {
		state = neigh_get(fd, ifindex, nh, mac, &has_mac, seq++);
		if (state >= 0 && (state & HOST_NUD_VALID) && has_mac)
			break;
		if (state >= 0 && (state & NUD_FAILED) && asked) {
			rc = droce_rt_errf(-EHOSTUNREACH, err, errlen,
					   "peer unreachable (the kernel's neighbour entry for %s "
					   "on %s is FAILED: no ARP/ND answer)",
					   h, ifn);
			break;
		}
		if (state < 0 && state != -ENOENT) {
			rc = droce_rt_errf(state, err, errlen, "%s: kernel neighbour lookup: %s", h,
					   strerror(-state));
			break;
		}
		if (!asked) {
			rc = neigh_use(fd, ifindex, nh, seq++);
			if (rc != 0) {
				rc = droce_rt_errf(rc, err, errlen,
						   "%s: the kernel would not resolve it (%s)", h,
						   strerror(-rc));
				break;
			}
			asked = true;
			continue;
		}
		if (mono_ms() >= end) {
			rc = droce_rt_errf(-ETIMEDOUT, err, errlen,
					   "no answer from %s within %u ms (the kernel is "
					   "resolving it on %s)",
					   h, timeout_ms, ifn);
			break;
		}
		nanosleep(&tick, NULL);
	}
	if (rc < 0 && err != NULL && errlen > 0 && err[0] == '\0')
		droce_rt_errf(rc, err, errlen, "%s: route lookup: %s", a, strerror(-rc));
	close(fd);
	return rc;
}
