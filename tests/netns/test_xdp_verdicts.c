/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmd-glue/xdp/droce_xdp.c's verdicts on crafted frames (BPF_PROG_TEST_RUN, no interface): built
 * with DROCE_XDP_NO_XSK=XDP_DROP, a frame the program would hand to droce's AF_XDP socket comes
 * back as XDP_DROP (no socket is bound in a test run), one left to the kernel as XDP_PASS.
 * Loading BPF needs root: as another user the test fails saying so.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "droce_test.h"

enum { TO_DROCE = XDP_DROP, TO_KERNEL = XDP_PASS };

static struct bpf_object *obj;
static int prog_fd = -1;
static int addrs_fd = -1;

/* droce_addrs's "::" key: present once droce-xdp-addrs has listed every address */
static int
set_complete(int map_fd, bool on)
{
	uint8_t zero[16] = { 0 };
	uint32_t one = 1; /* the value is 32 bits: the owner's PID */

	return on ? bpf_map_update_elem(map_fd, zero, &one, BPF_ANY) :
		    bpf_map_delete_elem(map_fd, zero);
}

static int
load(void)
{
	struct bpf_program *prog;
	uint8_t key[16] = { 0 };
	uint32_t one = 1;
	int map_fd;

	if (prog_fd >= 0)
		return 0;
	if (geteuid() != 0) {
		fprintf(stderr, "FAIL: loading an XDP program needs root: run as root\n");
		return -1;
	}
	obj = bpf_object__open_file(DROCE_XDP_TEST_O, NULL);
	if (obj == NULL || bpf_object__load(obj) != 0)
		return -1;
	prog = bpf_object__find_program_by_name(obj, "droce_xdp");
	map_fd = bpf_object__find_map_fd_by_name(obj, "droce_addrs");
	if (prog == NULL || map_fd < 0)
		return -1;
	/* droce's addresses: 198.18.0.1 (as ::ffff:198.18.0.1) and 2001:2::1 */
	key[10] = key[11] = 0xff;
	inet_pton(AF_INET, "198.18.0.1", key + 12);
	if (bpf_map_update_elem(map_fd, key, &one, BPF_ANY) != 0)
		return -1;
	inet_pton(AF_INET6, "2001:2::1", key);
	if (bpf_map_update_elem(map_fd, key, &one, BPF_ANY) != 0)
		return -1;
	/* and "::": the list is complete, as droce-xdp-addrs leaves it */
	if (set_complete(map_fd, true) != 0)
		return -1;
	addrs_fd = map_fd;
	prog_fd = bpf_program__fd(prog);
	return 0;
}

static int
verdict(const uint8_t *frame, uint32_t len)
{
	uint8_t buf[256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = len, .repeat = 1);

	memcpy(buf, frame, len);
	if (load() != 0 || bpf_prog_test_run_opts(prog_fd, &o) != 0)
		return -1;
	return (int)o.retval;
}

/* Ethernet header with an optional 802.1Q tag; returns its length */
static uint32_t
eth(uint8_t *f, uint16_t type, int vlan)
{
	uint32_t off = 12;

	memset(f, 0, 128);
	memcpy(f, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02", 12);
	if (vlan) {
		f[off++] = 0x81;
		f[off++] = 0x00;
		f[off++] = 0x00;
		f[off++] = 0x05; /* VID 5 */
	}
	f[off++] = (uint8_t)(type >> 8);
	f[off++] = (uint8_t)type;
	return off;
}

/* IPv4 + 8-byte L4 header with destination port dport; ihl in 32-bit words */
static uint32_t
ip4(uint8_t *f, int vlan, uint8_t proto, uint16_t dport, uint8_t ihl, uint16_t frag)
{
	uint32_t o = eth(f, 0x0800, vlan);

	f[o] = (uint8_t)(0x40 | ihl);
	f[o + 6] = (uint8_t)(frag >> 8);
	f[o + 7] = (uint8_t)frag;
	f[o + 8] = 64;
	f[o + 9] = proto;
	inet_pton(AF_INET, "198.18.0.1", f + o + 16); /* droce's */
	o += ihl * 4u;
	f[o + 2] = (uint8_t)(dport >> 8);
	f[o + 3] = (uint8_t)dport;
	return o + 20;
}

static uint32_t
ip6(uint8_t *f, int vlan, uint8_t next, const char *dst)
{
	uint32_t o = eth(f, 0x86dd, vlan);

	f[o] = 0x60;
	f[o + 6] = next;
	f[o + 7] = 64;
	inet_pton(AF_INET6, dst, f + o + 24);
	return o;
}

static void
test_roce(void)
{
	uint8_t f[128];
	uint32_t n;

	n = ip4(f, 0, 17, 4791, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE);
	n = ip4(f, 1, 17, 4791, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE); /* 802.1Q */
	n = ip4(f, 0, 17, 4791, 7, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE); /* IPv4 options */
	n = ip6(f, 0, 17, "2001:2::1") + 40;
	f[n + 2] = 0x12;
	f[n + 3] = 0xb7;
	CU_ASSERT_EQUAL(verdict(f, n + 20), TO_DROCE);
	n = ip6(f, 1, 17, "2001:2::1") + 40;
	f[n + 2] = 0x12;
	f[n + 3] = 0xb7;
	CU_ASSERT_EQUAL(verdict(f, n + 20), TO_DROCE); /* 802.1Q + IPv6 */
}

static void
test_kernel_keeps(void)
{
	uint8_t f[128];
	uint32_t n;

	n = ip4(f, 0, 17, 53, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* other UDP */
	n = ip4(f, 0, 6, 4791, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* TCP to 4791 */
	n = ip4(f, 0, 1, 0, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* ICMP */
	n = ip4(f, 0, 17, 4791, 5, 0x0010);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* a later fragment */
	n = ip6(f, 0, 6, "2001:2::1") + 40;
	f[n + 2] = 0x12;
	f[n + 3] = 0xb7;
	CU_ASSERT_EQUAL(verdict(f, n + 20), TO_KERNEL); /* TCP over IPv6 */
	n = ip4(f, 0, 17, 4791, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, 14 + 20 + 4), TO_KERNEL); /* UDP header cut short */
	CU_ASSERT_EQUAL(verdict(f, 16), TO_KERNEL);	     /* runt */
	n = eth(f, 0x88cc, 0);
	CU_ASSERT_EQUAL(verdict(f, 60), TO_KERNEL); /* LLDP */
}

static uint32_t
arp(uint8_t *f, const char *tpa, int vlan)
{
	uint32_t o = eth(f, 0x0806, vlan);

	memcpy(f + o, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
	inet_pton(AF_INET, tpa, f + o + 24);
	return o + 28;
}

static void
test_neighbours(void)
{
	uint8_t f[128];
	uint32_t n;

	n = arp(f, "198.18.0.1", 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE); /* ARP for droce */
	n = arp(f, "198.19.0.1", 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* ARP for the kernel */
	n = ip6(f, 0, 58, "ff02::1:ff00:1") + 40;
	f[n] = 135; /* NS, target 2001:2::1 */
	inet_pton(AF_INET6, "2001:2::1", f + n + 8);
	CU_ASSERT_EQUAL(verdict(f, n + 24), TO_DROCE);
	inet_pton(AF_INET6, "2001:2::7", f + n + 8);
	CU_ASSERT_EQUAL(verdict(f, n + 24), TO_KERNEL); /* NS for someone else */
	n = ip6(f, 0, 58, "2001:2::1") + 40;
	f[n] = 136; /* NA to droce */
	CU_ASSERT_EQUAL(verdict(f, n + 24), TO_DROCE);
	n = ip6(f, 0, 58, "2001:2::9") + 40;
	f[n] = 136;
	CU_ASSERT_EQUAL(verdict(f, n + 24), TO_KERNEL); /* NA to another address */
	f[n] = 128;
	n = ip6(f, 0, 58, "2001:2::1") + 40;
	f[n] = 128; /* echo request to droce's address */
	CU_ASSERT_EQUAL(verdict(f, n + 24), TO_KERNEL);
}

/* RoCEv2 droce's engine would drop as misaddressed stays with the kernel: to another address
 * of the interface (the kernel's own, say its rxe), or to broadcast; a group's goes to droce
 * (the engine knows the groups joined). Before the address list is complete, all of it goes
 * to droce, whose engine drops what is not its own. */
static void
test_roce_addressed(void)
{
	uint8_t f[128];
	uint32_t n, l3 = 14;

	n = ip4(f, 0, 17, 4791, 5, 0);
	inet_pton(AF_INET, "198.19.0.1", f + l3 + 16);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* the kernel's address */
	inet_pton(AF_INET, "10.1.2.3", f + l3 + 16);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* no one's here */
	inet_pton(AF_INET, "239.1.2.3", f + l3 + 16);
	memcpy(f, "\x01\x00\x5e\x01\x02\x03", 6);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE); /* a group */
	n = ip4(f, 0, 17, 4791, 5, 0);
	memset(f, 0xff, 6);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* broadcast */
	n = ip6(f, 0, 17, "2001:2::7") + 40;
	f[n + 2] = 0x12;
	f[n + 3] = 0xb7;
	CU_ASSERT_EQUAL(verdict(f, n + 20), TO_KERNEL); /* IPv6, not droce's */
	n = ip6(f, 0, 17, "ff0e::1234") + 40;
	f[n + 2] = 0x12;
	f[n + 3] = 0xb7;
	CU_ASSERT_EQUAL(verdict(f, n + 20), TO_DROCE); /* IPv6 group */
	/* the list not complete yet: droce's engine decides */
	CU_ASSERT_EQUAL_FATAL(set_complete(addrs_fd, false), 0);
	n = ip4(f, 0, 17, 4791, 5, 0);
	inet_pton(AF_INET, "198.19.0.1", f + l3 + 16);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE);
	memset(f, 0xff, 6);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* broadcast never */
	CU_ASSERT_EQUAL_FATAL(set_complete(addrs_fd, true), 0);
}

/* droce's addresses as map keys */
static void
addr_keys(uint8_t k4[16], uint8_t k6[16])
{
	memset(k4, 0, 16);
	k4[10] = k4[11] = 0xff;
	inet_pton(AF_INET, "198.18.0.1", k4 + 12);
	inet_pton(AF_INET6, "2001:2::1", k6);
}

/* Host-address mode (droce-xdp-addrs --host): no address listed, "::" holds the owner with
 * DROCE_XDP_HOST (bit 31). Every RoCEv2 datagram to droce, whatever the interface address,
 * every ARP/ND and everything else to the kernel. */
static void
test_host_mode(void)
{
	uint8_t f[128], zero[16] = { 0 }, k4[16], k6[16];
	uint32_t n, l3 = 14, owner = 4242u | 0x80000000u, one = 1;

	CU_ASSERT_EQUAL_FATAL(load(), 0);
	addr_keys(k4, k6);
	CU_ASSERT_EQUAL_FATAL(bpf_map_delete_elem(addrs_fd, k4), 0);
	CU_ASSERT_EQUAL_FATAL(bpf_map_delete_elem(addrs_fd, k6), 0);
	CU_ASSERT_EQUAL_FATAL(bpf_map_update_elem(addrs_fd, zero, &owner, BPF_ANY), 0);
	n = ip4(f, 0, 17, 4791, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE);
	inet_pton(AF_INET, "198.19.0.1", f + l3 + 16);
	CU_ASSERT_EQUAL(verdict(f, n), TO_DROCE); /* any address of the interface */
	memset(f, 0xff, 6);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* broadcast never */
	n = ip6(f, 0, 17, "2001:2::7") + 40;
	f[n + 2] = 0x12;
	f[n + 3] = 0xb7;
	CU_ASSERT_EQUAL(verdict(f, n + 20), TO_DROCE);
	n = arp(f, "198.18.0.1", 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* the kernel answers ARP */
	n = ip6(f, 0, 58, "ff02::1:ff00:1") + 40;
	f[n] = 135;
	inet_pton(AF_INET6, "2001:2::1", f + n + 8);
	CU_ASSERT_EQUAL(verdict(f, n + 24), TO_KERNEL); /* and ND */
	n = ip4(f, 0, 6, 4791, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* TCP */
	n = ip4(f, 0, 17, 53, 5, 0);
	CU_ASSERT_EQUAL(verdict(f, n), TO_KERNEL); /* other UDP */
	/* back to own mode's map */
	CU_ASSERT_EQUAL(bpf_map_update_elem(addrs_fd, k4, &one, BPF_ANY), 0);
	CU_ASSERT_EQUAL(bpf_map_update_elem(addrs_fd, k6, &one, BPF_ANY), 0);
	CU_ASSERT_EQUAL(set_complete(addrs_fd, true), 0);
}

DROCE_TEST_MAIN("xdp_verdicts", DROCE_TEST(test_roce), DROCE_TEST(test_roce_addressed),
		DROCE_TEST(test_kernel_keeps), DROCE_TEST(test_neighbours),
		DROCE_TEST(test_host_mode))
