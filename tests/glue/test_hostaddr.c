/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host-address mode without EAL (pmd-glue/droce_hostaddr.c): the GID table's slots, rtnetlink
 * address messages crafted here applied to it, the live dump of the loopback interface, and
 * the configuration's addr_mode checks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_hostaddr.h"
#include "droce_rt_config.h"
#include "droce_test.h"

static void
gid4(uint8_t g[16], const char *a)
{
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	CU_ASSERT_FATAL(inet_pton(AF_INET, a, g + 12) == 1);
}

static void
gid6(uint8_t g[16], const char *a)
{
	CU_ASSERT_FATAL(inet_pton(AF_INET6, a, g) == 1);
}

/* Slots keep their index: a removed address leaves a hole the next one fills. */
static void
test_slots(void)
{
	struct droce_host_gids t;
	uint8_t a[16], b[16], c[16], z[16] = { 0 };
	unsigned int i;

	memset(&t, 0, sizeof(t));
	gid4(a, "198.18.0.1");
	gid4(b, "198.18.0.7");
	gid6(c, "2001:2::1");
	CU_ASSERT_EQUAL(droce_host_gids_add(&t, a), 1);
	CU_ASSERT_EQUAL(droce_host_gids_add(&t, b), 1);
	CU_ASSERT_EQUAL(droce_host_gids_add(&t, a), 0);
	CU_ASSERT_EQUAL(t.n, 2);
	CU_ASSERT_EQUAL(droce_host_gids_del(&t, a), 1);
	CU_ASSERT_EQUAL(droce_host_gids_del(&t, a), 0);
	CU_ASSERT_EQUAL(t.n, 2); /* b keeps index 1 */
	CU_ASSERT_EQUAL(memcmp(t.gid[0], z, 16), 0);
	CU_ASSERT_EQUAL(memcmp(t.gid[1], b, 16), 0);
	CU_ASSERT_EQUAL(droce_host_gids_add(&t, c), 1);
	CU_ASSERT_EQUAL(memcmp(t.gid[0], c, 16), 0);
	CU_ASSERT_EQUAL(droce_host_gids_del(&t, b), 1);
	CU_ASSERT_EQUAL(t.n, 1); /* trailing holes go */
	for (i = 1; i < DROCE_HOST_GIDS; i++) {
		b[15] = (uint8_t)(100 + i);
		CU_ASSERT_EQUAL(droce_host_gids_add(&t, b), 1);
	}
	b[15] = 99;
	CU_ASSERT_EQUAL(droce_host_gids_add(&t, b), -ENOSPC);
}

/* One RTM_NEWADDR / RTM_DELADDR at buf + *off. */
static void
put_addr(uint8_t *buf, size_t *off, uint16_t type, int family, int ifindex, uint16_t attr,
	 const char *addr, uint8_t scope)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)(buf + *off);
	struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	struct rtattr *rta;
	unsigned int alen = family == AF_INET ? 4 : 16;

	memset(nh, 0, NLMSG_SPACE(sizeof(*ifa)) + RTA_SPACE(16));
	nh->nlmsg_type = type;
	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_index = (uint32_t)ifindex;
	ifa->ifa_scope = scope;
	rta = (struct rtattr *)((char *)ifa + NLMSG_ALIGN(sizeof(*ifa)));
	rta->rta_type = attr;
	rta->rta_len = (unsigned short)RTA_LENGTH(alen);
	CU_ASSERT_FATAL(inet_pton(family, addr, RTA_DATA(rta)) == 1);
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*ifa)) + RTA_SPACE(alen);
	*off += NLMSG_ALIGN(nh->nlmsg_len);
}

static void
test_apply(void)
{
	static uint8_t buf[4096];
	struct droce_host_gids t;
	struct nlmsghdr *nh;
	struct nlmsgerr *e;
	uint8_t g[16];
	size_t off = 0;
	int done = 0;

	memset(&t, 0, sizeof(t));
	put_addr(buf, &off, RTM_NEWADDR, AF_INET, 7, IFA_LOCAL, "198.18.0.1", RT_SCOPE_UNIVERSE);
	put_addr(buf, &off, RTM_NEWADDR, AF_INET, 8, IFA_LOCAL, "198.18.9.9", RT_SCOPE_UNIVERSE);
	put_addr(buf, &off, RTM_NEWADDR, AF_INET6, 7, IFA_ADDRESS, "2001:2::1", RT_SCOPE_UNIVERSE);
	put_addr(buf, &off, RTM_NEWADDR, AF_INET6, 7, IFA_ADDRESS, "fe80::1", RT_SCOPE_LINK);
	nh = (struct nlmsghdr *)(buf + off);
	nh->nlmsg_len = NLMSG_LENGTH(0);
	nh->nlmsg_type = NLMSG_DONE;
	off += NLMSG_ALIGN(nh->nlmsg_len);
	/* the other interface's address and the link-local one are not GIDs */
	CU_ASSERT_EQUAL(droce_host_apply(&t, 7, buf, off, &done), 2);
	CU_ASSERT_EQUAL(done, 1);
	CU_ASSERT_EQUAL(t.n, 2);
	gid4(g, "198.18.0.1");
	CU_ASSERT_EQUAL(memcmp(t.gid[0], g, 16), 0);
	gid6(g, "2001:2::1");
	CU_ASSERT_EQUAL(memcmp(t.gid[1], g, 16), 0);
	/* the same again changes nothing; a removal does */
	CU_ASSERT_EQUAL(droce_host_apply(&t, 7, buf, off, NULL), 0);
	off = 0;
	put_addr(buf, &off, RTM_DELADDR, AF_INET, 7, IFA_LOCAL, "198.18.0.1", RT_SCOPE_UNIVERSE);
	put_addr(buf, &off, RTM_NEWADDR, AF_INET, 7, IFA_ADDRESS, "198.18.0.5", RT_SCOPE_UNIVERSE);
	CU_ASSERT_EQUAL(droce_host_apply(&t, 7, buf, off, NULL), 2);
	gid4(g, "198.18.0.5");
	CU_ASSERT_EQUAL(memcmp(t.gid[0], g, 16), 0); /* the hole taken */
	/* an error message is returned as its -errno */
	nh = (struct nlmsghdr *)buf;
	memset(buf, 0, NLMSG_SPACE(sizeof(*e)));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	nh->nlmsg_type = NLMSG_ERROR;
	e = NLMSG_DATA(nh);
	e->error = -EPERM;
	CU_ASSERT_EQUAL(droce_host_apply(&t, 7, buf, nh->nlmsg_len, NULL), -EPERM);
	/* a truncated message is skipped, not read past */
	CU_ASSERT_EQUAL(droce_host_apply(&t, 7, buf, 7, NULL), 0);
}

/* The kernel's own table: the loopback interface carries 127.0.0.1 in every namespace. */
static void
test_dump_lo(void)
{
	struct droce_host_gids t;
	char err[160] = "";
	uint8_t g[16];
	int ifindex = (int)if_nametoindex("lo");
	int fd;

	CU_ASSERT_FATAL(ifindex > 0);
	fd = droce_host_listen();
	CU_ASSERT(fd >= 0);
	CU_ASSERT_EQUAL(droce_host_dump(ifindex, &t, err, sizeof(err)), 0);
	gid4(g, "127.0.0.1");
	CU_ASSERT(t.n >= 1);
	CU_ASSERT_EQUAL(memcmp(t.gid[0], g, 16), 0); /* IPv4 first */
	/* nothing changed since: a poll applies nothing */
	if (fd >= 0) {
		CU_ASSERT_EQUAL(droce_host_poll(fd, ifindex, &t), 0);
		close(fd);
	}
	CU_ASSERT_EQUAL(droce_host_dump(0x7fffff, &t, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(t.n, 0);
}

static void
set(struct droce_rt_config *c, const char *k, const char *v)
{
	char err[256];

	CU_ASSERT_EQUAL_FATAL(droce_rt_config_set(c, k, v, err, sizeof(err)), 0);
}

static void
test_config(void)
{
	struct droce_rt_config c;
	char err[512], ifn[32];

	droce_rt_config_defaults(&c);
	CU_ASSERT_FALSE(droce_rt_config_host_mode(&c));
	set(&c, "addr_mode", "host");
	set(&c, "vdev", "net_af_xdp0,iface=va,xdp_prog=/x/droce_xdp.o");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_host_iface(&c, ifn, sizeof(ifn)), 0);
	CU_ASSERT_STRING_EQUAL(ifn, "va");
	/* af_packet: refused, naming the cause and the fix */
	set(&c, "vdev", "net_af_packet0,iface=va");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot run on net_af_packet"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "use net_af_xdp"));
	/* af_xdp without droce's program would take ARP and TCP from the kernel */
	set(&c, "vdev", "net_af_xdp0,iface=va");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "xdp_prog="));
	/* a PCI port (bifurcated NIC) names its netdev */
	set(&c, "vdev", "");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "DROCE_HOST_IFACE"));
	set(&c, "host_iface", "ens1f0np0");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), 0);
	/* an address of droce's own contradicts host mode */
	set(&c, "ipv4", "198.18.0.1/24");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "drop DROCE_IPV4"));
	set(&c, "addr_mode", "own");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), 0);
	set(&c, "addr_mode", "kernel");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "addr_mode kernel"));
}

DROCE_TEST_MAIN("hostaddr", DROCE_TEST(test_slots), DROCE_TEST(test_apply),
		DROCE_TEST(test_dump_lo), DROCE_TEST(test_config))
