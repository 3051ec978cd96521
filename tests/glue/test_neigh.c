/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbour module over crafted frames: ARP, ND, retries, expiry, waiters. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "droce_byteorder.h"
#include "droce_neigh.h"
#include "droce_test.h"

#define MS 1000000ull

struct cap {
	uint8_t f[16][DROCE_NEIGH_FRAME_MAX];
	uint32_t len[16];
	unsigned int n;
	int fail;
};

static int
cap_tx(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct cap *c = ctx;

	if (c->fail)
		return -ENOBUFS;
	CU_ASSERT_FATAL(c->n < 16 && len <= DROCE_NEIGH_FRAME_MAX);
	memcpy(c->f[c->n], frame, len);
	c->len[c->n++] = len;
	return 0;
}

static const uint8_t my_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t zmac[6];
static const uint8_t my4[4] = { 198, 18, 0, 1 }, peer4[4] = { 198, 18, 0, 2 };
static const uint8_t my6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t peer6[16] = { 0x20, 0x01, 0x0d, 0xb8, [13] = 0xab, [14] = 0xcd, [15] = 2 };

static void
mapped(uint8_t out[16], const uint8_t v4[4])
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, v4, 4);
}

static void
setup(struct droce_neigh *n, struct cap *c, bool v6)
{
	struct droce_neigh_conf conf = {
		.has_ipv4 = true,
		.ipv4_prefix = 24,
		.timeout_ns = 1000 * MS,
		.retry_ns = 100 * MS,
		.tries = 3,
	};
	struct droce_neigh_ops ops = { .tx = cap_tx, .ctx = c };

	memset(c, 0, sizeof(*c));
	memcpy(conf.mac, my_mac, 6);
	memcpy(conf.ipv4, my4, 4);
	if (v6) {
		conf.has_ipv6 = true;
		conf.ipv6_prefix = 64;
		memcpy(conf.ipv6, my6, 16);
	}
	CU_ASSERT_FATAL(droce_neigh_init(n, &conf, &ops) == 0);
}

struct result {
	int calls, status;
	uint8_t mac[6];
};

static void
on_done(void *arg, int status, const uint8_t mac[6])
{
	struct result *r = arg;

	r->calls++;
	r->status = status;
	if (mac != NULL)
		memcpy(r->mac, mac, 6);
}

static void
test_arp_request_for_us(void)
{
	struct droce_neigh n;
	struct cap c;
	struct droce_neigh_msg m;
	uint8_t f[DROCE_NEIGH_FRAME_MAX], a[16], mac[6];
	uint32_t len;

	setup(&n, &c, false);
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, peer4, zmac, my4);
	CU_ASSERT_EQUAL(len, 60);
	CU_ASSERT_TRUE(droce_neigh_match(f, len));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), 0);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT_EQUAL(droce_neigh_parse(c.f[0], c.len[0], &m), 0);
	CU_ASSERT_TRUE(m.is_arp);
	CU_ASSERT_EQUAL(m.op, DROCE_ARP_REPLY);
	CU_ASSERT_EQUAL(memcmp(m.eth_dst, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.eth_src, my_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.sender_mac, my_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.sender_ip + 12, my4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(m.target_mac, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.target_ip + 12, peer4, 4), 0);
	CU_ASSERT_EQUAL(n.stats.arp_req_rx, 1);
	CU_ASSERT_EQUAL(n.stats.arp_rep_tx, 1);
	/* The requester was learned: resolving it sends nothing. */
	mapped(a, peer4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 1, mac, NULL, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(mac, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(c.n, 1);
}

static void
test_arp_not_for_us(void)
{
	static const uint8_t other4[4] = { 198, 18, 0, 77 };
	struct droce_neigh n;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX], a[16], mac[6];
	uint32_t len;

	setup(&n, &c, false);
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, peer4, zmac, other4);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), 0);
	CU_ASSERT_EQUAL(c.n, 0);
	CU_ASSERT_EQUAL(n.stats.ignored, 1);
	/* Not learned (RFC 826 creates entries only for packets to us). */
	mapped(a, peer4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 1, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 1);
}

static void
test_resolve_then_reply(void)
{
	struct droce_neigh n;
	struct cap c;
	struct droce_neigh_msg m;
	struct result r = { 0 };
	uint8_t f[DROCE_NEIGH_FRAME_MAX], a[16], mac[6];
	uint32_t len;

	setup(&n, &c, false);
	mapped(a, peer4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 10, mac, on_done, &r), -EAGAIN);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT_EQUAL(droce_neigh_parse(c.f[0], c.len[0], &m), 0);
	CU_ASSERT_EQUAL(m.op, DROCE_ARP_REQUEST);
	CU_ASSERT_EQUAL(memcmp(m.eth_dst, bcast, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.target_ip + 12, peer4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(m.sender_ip + 12, my4, 4), 0);
	/* A second resolve while pending sends no second request. */
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 11, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 1);
	CU_ASSERT_EQUAL(droce_neigh_next_deadline(&n), 10 + 100 * MS);
	len = droce_arp_build(f, DROCE_ARP_REPLY, my_mac, peer_mac, peer4, my_mac, my4);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 20), 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_EQUAL(memcmp(r.mac, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 30, mac, on_done, &r), 0);
	CU_ASSERT_EQUAL(memcmp(mac, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	/* A later reply is not a second callback. */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 40), 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	/* Ourselves resolve to our own MAC with no frame. */
	mapped(a, my4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 50, mac, NULL, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(mac, my_mac, 6), 0);
	CU_ASSERT_EQUAL(c.n, 1);
}

static void
test_retries_then_unreachable(void)
{
	struct droce_neigh n;
	struct cap c;
	struct result r = { 0 };
	uint8_t a[16], mac[6];
	uint64_t t = 1000, next;

	setup(&n, &c, false);
	mapped(a, peer4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, t, mac, on_done, &r), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 1);
	/* Before the retry interval nothing happens. */
	next = droce_neigh_timer(&n, t + 100 * MS - 1);
	CU_ASSERT_EQUAL(next, t + 100 * MS);
	CU_ASSERT_EQUAL(c.n, 1);
	next = droce_neigh_timer(&n, t + 100 * MS);
	CU_ASSERT_EQUAL(c.n, 2);
	next = droce_neigh_timer(&n, next);
	CU_ASSERT_EQUAL(c.n, 3);
	CU_ASSERT_EQUAL(r.calls, 0);
	next = droce_neigh_timer(&n, next);
	CU_ASSERT_EQUAL(c.n, 3); /* three tries, then the verdict */
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.status, -EHOSTUNREACH);
	CU_ASSERT_EQUAL(n.stats.unreachable, 1);
	CU_ASSERT_STRING_EQUAL(droce_neigh_strerror(&n),
			       "peer unreachable (no ARP reply from 198.18.0.2 after 3 tries)");
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, next - 1, mac, NULL, NULL), -EHOSTUNREACH);
	CU_ASSERT_EQUAL(c.n, 3);
	/* The verdict ages out and the next resolve asks again. */
	droce_neigh_timer(&n, next);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, next, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 4);
}

static void
test_expiry(void)
{
	struct droce_neigh n;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX], a[16], mac[6];
	uint32_t len;

	setup(&n, &c, false);
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, peer4, zmac, my4);
	droce_neigh_input(&n, f, len, 0);
	mapped(a, peer4);
	CU_ASSERT_EQUAL(droce_neigh_next_deadline(&n), 1000 * MS);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 1000 * MS - 1, mac, NULL, NULL), 0);
	droce_neigh_timer(&n, 1000 * MS);
	CU_ASSERT_EQUAL(n.stats.expired, 1);
	CU_ASSERT_EQUAL(droce_neigh_next_deadline(&n), UINT64_MAX);
	c.n = 0;
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 1000 * MS, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 1);
}

/* The link went down and came up (a peer process restarted, with another MAC): the old MAC is
 * not used again, nor a verdict of unreachable reached while nobody was there; a resolution
 * in progress goes on. */
static void
test_flush(void)
{
	static const uint8_t new_mac[6] = { 0x02, 0, 0, 0, 0, 0x22 };
	static const uint8_t other4[4] = { 198, 18, 0, 3 }, third4[4] = { 198, 18, 0, 4 };
	struct droce_neigh n;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX], a[16], b[16], d[16], mac[6];
	uint64_t t = 1000;
	uint32_t len;
	unsigned int i;

	setup(&n, &c, false);
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, peer4, zmac, my4);
	droce_neigh_input(&n, f, len, t);
	mapped(a, peer4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, t, mac, NULL, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(mac, peer_mac, 6), 0);
	/* 198.18.0.3 never answers: unreachable, and so it stays for a while */
	mapped(b, other4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, b, t, mac, NULL, NULL), -EAGAIN);
	for (i = 0; i < 3; i++) {
		t += 100 * MS;
		droce_neigh_timer(&n, t);
	}
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, b, t, mac, NULL, NULL), -EHOSTUNREACH);
	/* 198.18.0.4: a request out, no answer yet */
	mapped(d, third4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, d, t, mac, NULL, NULL), -EAGAIN);
	droce_neigh_flush(&n);
	CU_ASSERT_EQUAL(n.stats.flushed, 2);
	c.n = 0;
	/* Both are asked for again; the new peer's reply is what is used. */
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, t + 1, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, b, t + 1, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 2);
	len = droce_arp_build(f, DROCE_ARP_REPLY, my_mac, new_mac, peer4, my_mac, my4);
	droce_neigh_input(&n, f, len, t + 2);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, t + 3, mac, NULL, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(mac, new_mac, 6), 0);
	/* the one in progress was kept: no second request for it */
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, d, t + 3, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 2);
}

/* A group resolves at once, off-prefix too, with no request sent (RFC 1112 6.4, RFC 2464 7). */
static void
test_multicast(void)
{
	static const uint8_t g4[4] = { 239, 129, 2, 3 };
	static const uint8_t g6[16] = { 0xff, 0x0e, [12] = 0xde, 0xad, 0xbe, 0xef };
	static const uint8_t m4[6] = { 0x01, 0x00, 0x5e, 0x01, 2, 3 };
	static const uint8_t m6[6] = { 0x33, 0x33, 0xde, 0xad, 0xbe, 0xef };
	struct droce_neigh n;
	struct cap c;
	uint8_t a[16], mac[6];

	setup(&n, &c, false);
	mapped(a, g4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 0, mac, NULL, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(mac, m4, 6), 0); /* the 24th bit from the end is not mapped */
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, g6, 0, mac, NULL, NULL), -EAFNOSUPPORT);
	setup(&n, &c, true);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, g6, 0, mac, NULL, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(mac, m6, 6), 0);
	CU_ASSERT_EQUAL(c.n, 0);
}

static void
test_next_hop(void)
{
	static const uint8_t far4[4] = { 198, 19, 5, 5 }, gw4[4] = { 198, 18, 0, 254 };
	struct droce_neigh n;
	struct cap c;
	struct droce_neigh_msg m;
	uint8_t a[16], mac[6];

	setup(&n, &c, false);
	mapped(a, far4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 0, mac, NULL, NULL), -ENETUNREACH);
	n.conf.has_gw4 = true;
	memcpy(n.conf.gw4, gw4, 4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 0, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT_EQUAL(droce_neigh_parse(c.f[0], c.len[0], &m), 0);
	CU_ASSERT_EQUAL(memcmp(m.target_ip + 12, gw4, 4), 0);
	/* IPv6 without an IPv6 address */
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, peer6, 0, mac, NULL, NULL), -EAFNOSUPPORT);
}

static void
test_ipv6_ns_na(void)
{
	struct droce_neigh n;
	struct cap c;
	struct droce_neigh_msg m;
	struct result r = { 0 };
	uint8_t f[DROCE_NEIGH_FRAME_MAX], mac[6];
	uint32_t len;

	setup(&n, &c, true);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, peer6, 0, mac, on_done, &r), -EAGAIN);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT_EQUAL(c.len[0], 86);
	CU_ASSERT_TRUE(droce_neigh_match(c.f[0], c.len[0]));
	CU_ASSERT_EQUAL(droce_neigh_parse(c.f[0], c.len[0], &m), 0);
	CU_ASSERT_EQUAL(m.op, DROCE_ND_NS);
	CU_ASSERT_EQUAL(memcmp(m.target_ip, peer6, 16), 0);
	/* solicited-node ff02::1:ffab:cd02 behind 33:33:ff:ab:cd:02 */
	{
		static const uint8_t sn[16] = { 0xff, 0x02, [11] = 0x01, 0xff, 0xab, 0xcd, 0x02 };
		static const uint8_t sn_mac[6] = { 0x33, 0x33, 0xff, 0xab, 0xcd, 0x02 };

		CU_ASSERT_EQUAL(memcmp(m.ip_dst, sn, 16), 0);
		CU_ASSERT_EQUAL(memcmp(m.eth_dst, sn_mac, 6), 0);
	}
	CU_ASSERT_TRUE(m.has_lladdr);
	CU_ASSERT_EQUAL(memcmp(m.sender_mac, my_mac, 6), 0);
	/* The peer's solicited advertisement completes it. */
	len = droce_nd_build(f, DROCE_ND_NA, DROCE_NA_SOLICITED | DROCE_NA_OVERRIDE, my_mac,
			     peer_mac, peer6, my6, peer6);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 5), 0);
	CU_ASSERT_EQUAL(r.calls, 1);
	CU_ASSERT_EQUAL(r.status, 0);
	CU_ASSERT_EQUAL(memcmp(r.mac, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(n.stats.na_rx, 1);

	/* A solicitation for our address gets a solicited, override advertisement. */
	c.n = 0;
	len = droce_nd_build(f, DROCE_ND_NS, 0, bcast, peer_mac, peer6, my6, my6);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 6), 0);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT_EQUAL(droce_neigh_parse(c.f[0], c.len[0], &m), 0);
	CU_ASSERT_EQUAL(m.op, DROCE_ND_NA);
	CU_ASSERT_EQUAL(m.na_flags, DROCE_NA_SOLICITED | DROCE_NA_OVERRIDE);
	CU_ASSERT_EQUAL(memcmp(m.target_ip, my6, 16), 0);
	CU_ASSERT_EQUAL(memcmp(m.ip_dst, peer6, 16), 0);
	CU_ASSERT_EQUAL(memcmp(m.eth_dst, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.sender_mac, my_mac, 6), 0);
}

static void
test_ipv6_invalid(void)
{
	struct droce_neigh n;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	uint32_t len;

	setup(&n, &c, true);
	len = droce_nd_build(f, DROCE_ND_NS, 0, bcast, peer_mac, peer6, my6, my6);
	f[len - 1] ^= 1; /* checksum no longer matches */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EBADMSG);
	CU_ASSERT_EQUAL(n.stats.csum_bad, 1);
	f[len - 1] ^= 1;
	f[14 + 7] = 64; /* hop limit: forwarded, so not from the link */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EINVAL);
	f[14 + 7] = 255;
	f[14 + 40 + 25] = 0; /* zero option length, checksum made right again */
	f[14 + 40 + 2] = f[14 + 40 + 3] = 0;
	droce_put_be16(f + 14 + 40 + 2, droce_icmp6_csum(peer6, my6, f + 14 + 40, len - 54));
	CU_ASSERT_EQUAL(droce_icmp6_csum(peer6, my6, f + 14 + 40, len - 54), 0);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EINVAL);
	CU_ASSERT_EQUAL(n.stats.malformed, 2);
	CU_ASSERT_EQUAL(c.n, 0);
	/* An unsolicited NA for an unknown address creates nothing. */
	len = droce_nd_build(f, DROCE_ND_NA, DROCE_NA_OVERRIDE, bcast, peer_mac, peer6, my6, peer6);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), 0);
	CU_ASSERT_EQUAL(n.stats.learned, 0);
}

static void
test_arp_invalid(void)
{
	static const uint8_t mcast[6] = { 0x01, 0, 0x5e, 0, 0, 1 };
	struct droce_neigh n;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	uint32_t len;

	setup(&n, &c, false);
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, peer4, zmac, my4);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, 14 + 27, 0), -EINVAL);
	f[14 + 4] = 8; /* hardware length */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EINVAL);
	f[14 + 4] = 6;
	f[14 + 7] = 3; /* RARP opcode */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EINVAL);
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, mcast, peer4, zmac, my4);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EINVAL);
	CU_ASSERT_EQUAL(n.stats.malformed, 4);
	CU_ASSERT_EQUAL(c.n, 0);
	/* Somebody else using our address is counted, not learned, not answered. */
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, my4, zmac, my4);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), 0);
	CU_ASSERT_EQUAL(n.stats.conflict, 1);
	CU_ASSERT_EQUAL(c.n, 0);
	/* Not ARP nor ND */
	f[12] = 0x08;
	f[13] = 0x00;
	CU_ASSERT_FALSE(droce_neigh_match(f, len));
}

static void
test_announce(void)
{
	struct droce_neigh n;
	struct cap c;
	struct droce_neigh_msg m;

	setup(&n, &c, true);
	droce_neigh_announce(&n);
	CU_ASSERT_EQUAL_FATAL(c.n, 2);
	CU_ASSERT_EQUAL(droce_neigh_parse(c.f[0], c.len[0], &m), 0);
	CU_ASSERT_TRUE(m.is_arp);
	CU_ASSERT_EQUAL(memcmp(m.eth_dst, bcast, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.sender_ip + 12, my4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(m.target_ip + 12, my4, 4), 0);
	CU_ASSERT_EQUAL(droce_neigh_parse(c.f[1], c.len[1], &m), 0);
	CU_ASSERT_EQUAL(m.op, DROCE_ND_NA);
	CU_ASSERT_EQUAL(m.na_flags, DROCE_NA_OVERRIDE);
	CU_ASSERT_EQUAL(m.ip_dst[0], 0xff);
	CU_ASSERT_EQUAL(m.ip_dst[15], 0x01);
	CU_ASSERT_EQUAL(n.stats.garp_tx, 1);
	/* A failed transmit is counted, not lost silently. */
	c.fail = 1;
	droce_neigh_announce(&n);
	CU_ASSERT_EQUAL(n.stats.tx_fail, 2);
}

static void
test_table_full(void)
{
	struct droce_neigh n;
	struct cap c;
	uint8_t a[16], mac[6], ip[4] = { 198, 18, 0, 0 };
	unsigned int i;
	int rc = 0;

	setup(&n, &c, false);
	c.fail = 1; /* no capture needed */
	for (i = 0; i < DROCE_NEIGH_ENTRIES; i++) {
		ip[3] = (uint8_t)(10 + i);
		mapped(a, ip);
		rc |= droce_neigh_resolve(&n, a, 0, mac, NULL, NULL) != -EAGAIN;
	}
	CU_ASSERT_EQUAL(rc, 0);
	ip[3] = 200;
	mapped(a, ip);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 0, mac, NULL, NULL), -ENOSPC);
	CU_ASSERT_EQUAL(n.stats.table_full, 1);
}

DROCE_TEST_MAIN("neigh", DROCE_TEST(test_arp_request_for_us), DROCE_TEST(test_arp_not_for_us),
		DROCE_TEST(test_resolve_then_reply), DROCE_TEST(test_retries_then_unreachable),
		DROCE_TEST(test_expiry), DROCE_TEST(test_next_hop), DROCE_TEST(test_ipv6_ns_na),
		DROCE_TEST(test_ipv6_invalid), DROCE_TEST(test_arp_invalid),
		DROCE_TEST(test_announce), DROCE_TEST(test_table_full), DROCE_TEST(test_flush),
		DROCE_TEST(test_multicast))
