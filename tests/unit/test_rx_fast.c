/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive path's parser (droce_parse_rx) against droce_parse(): on every opcode and payload
 * length, and on damaged frames, it names the same reason, and describes an accepted frame
 * identically once droce_parse_addrs() added the addresses it leaves out.
 * Untagged and 802.1Q-tagged, with and without the per-DestQP ICRC prefix cache. The common
 * shape (IPv4 without options) really takes the constant-offset case: only that case consults
 * the cache, so a cleared cache entry filled after the call shows it was taken.
 */
#include <string.h>

#include "droce_icrc.h"
#include "droce_opcode.h"
#include "droce_pkt.h"
#include "droce_test.h"
#include "wire/droce_ipv4.h"

static uint8_t f[9000];

/* ICRC prefix states for the fast path, when use_cache; fixed_conn keeps the fields of one
 * connection (addresses, UDP source port, P_Key, DestQP) from frame to frame. */
static struct droce_icrc_v4_cache cache[4];
static bool use_cache, fixed_conn;

static uint32_t rng = 12345;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* A valid frame of opcode op with random fields; 0 when the codec cannot build it. */
static int
build(uint8_t op, uint32_t pay, bool vlan, int ip_ver)
{
	const struct droce_opcode_info *oi = droce_opcode_info(op);
	uint8_t payload[4200];
	struct droce_pkt p;
	uint32_t i;

	memset(&p, 0, sizeof(p));
	for (i = 0; i < 6; i++) {
		p.dmac[i] = (uint8_t)rnd();
		p.smac[i] = (uint8_t)rnd();
	}
	p.has_vlan = vlan;
	p.vlan_tci = (uint16_t)rnd();
	p.ip_ver = (uint8_t)ip_ver;
	p.tclass = (uint8_t)rnd();
	p.hop_limit = (uint8_t)rnd();
	p.ip_id = (uint16_t)rnd();
	droce_gid_from_v4(p.sgid, fixed_conn ? 0xC6120001 : rnd());
	droce_gid_from_v4(p.dgid, fixed_conn ? 0xC6120002 : rnd());
	p.udp_sport = fixed_conn ? 0xC123 : (uint16_t)rnd();
	p.opcode = op;
	p.se = rnd() & 1;
	p.mig = rnd() & 1;
	p.pkey = fixed_conn ? 0xFFFF : (uint16_t)rnd();
	p.fecn = rnd() & 1;
	p.becn = rnd() & 1;
	p.srcap = p.fecn ^ p.becn; /* both values, the random sequence unchanged */
	p.dqpn = fixed_conn ? 0x11 : rnd() & 0xFFFFFF;
	p.ackreq = rnd() & 1;
	p.psn = rnd() & 0xFFFFFF;
	p.reth_va = (uint64_t)rnd() << 32 | rnd();
	p.reth_rkey = rnd();
	p.reth_len = rnd();
	p.aeth_syn = (uint8_t)rnd();
	p.aeth_msn = rnd() & 0xFFFFFF;
	p.atomic_va = (uint64_t)rnd() << 32 | rnd();
	p.atomic_rkey = rnd();
	p.atomic_swap_add = (uint64_t)rnd() << 32 | rnd();
	p.atomic_compare = (uint64_t)rnd() << 32 | rnd();
	p.atomic_orig = (uint64_t)rnd() << 32 | rnd();
	p.imm = rnd();
	p.ieth_rkey = rnd();
	p.deth_qkey = rnd();
	p.deth_sqpn = rnd() & 0xFFFFFF;
	if (!(oi->flags & DROCE_OPF_PAYLOAD))
		pay = 0;
	else if (!(oi->flags & DROCE_OPF_LAST))
		pay &= ~3u;
	for (i = 0; i < pay; i++)
		payload[i] = (uint8_t)rnd();
	return droce_build(f, sizeof(f), &p, payload, pay);
}

/* IPv4 of IHL 5, untagged or with one 802.1Q tag: the shape the constant-offset case takes. */
static bool
common_shape(uint32_t len)
{
	unsigned int l3 = 14;

	if (len >= 18 && f[12] == 0x81 && f[13] == 0x00)
		l3 = 18;
	return len >= l3 + 20 && f[l3 - 2] == 0x08 && f[l3 - 1] == 0x00 && f[l3] == 0x45;
}

/* droce_parse_rx() and droce_parse() on f[0..len): counts in *bad a different reason or, for
 * an accepted frame, a different description; in *missed an accepted frame of the common shape
 * whose ICRC did not go through the cache (when the cache and the ICRC check are on). Returns
 * droce_parse()'s reason. */
static enum droce_drop
compare(uint32_t len, unsigned int flags, unsigned int *bad, unsigned int *missed)
{
	struct droce_pkt a, b;
	enum droce_drop ra, rb;
	uint32_t slot = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	/* the cache slot: DestQP's low bits, BTH byte 7 */
	if (len >= 18 + 20 + 8 + 8)
		slot = (uint32_t)f[f[12] == 0x81 ? 18 + 20 + 8 + 7 : 14 + 20 + 8 + 7] & 3;
	if (use_cache)
		cache[slot].valid = false;
	ra = droce_parse_rx(f, len, &a, flags, use_cache ? cache : NULL, 3);
	rb = droce_parse(f, len, &b, flags);
	if (ra != rb) {
		(*bad)++;
		return rb;
	}
	if (rb != DROCE_DROP_NONE)
		return rb;
	droce_parse_addrs(f, &a);
	if (memcmp(&a, &b, sizeof(a)) != 0)
		(*bad)++;
	if (use_cache && !(flags & DROCE_PARSE_NO_ICRC) && common_shape(len) && !cache[slot].valid)
		(*missed)++;
	return rb;
}

static void
every_opcode(void)
{
	static const uint32_t pays[] = { 0, 1, 3, 4, 61, 64, 256, 1024, 1025, 4096 };
	unsigned int op, k, n = 0, bad = 0, missed = 0, ok = 0;

	for (op = 0; op < 256; op++) {
		if (droce_opcode_info((uint8_t)op)->name == NULL)
			continue;
		for (k = 0; k < 2 * sizeof(pays) / sizeof(pays[0]); k++) {
			int len = build((uint8_t)op, pays[k / 2], k & 1, 4);

			CU_ASSERT_TRUE_FATAL(len > 0);
			n++;
			ok += compare((uint32_t)len, 0, &bad, &missed) == DROCE_DROP_NONE;
			/* Ethernet padding after the datagram */
			memset(f + len, 0xA5, 40);
			ok += compare((uint32_t)len + 40, 0, &bad, &missed) == DROCE_DROP_NONE;
			/* IPv6 takes the general walk: the same answers */
			len = build((uint8_t)op, pays[k / 2], k & 1, 6);
			CU_ASSERT_TRUE_FATAL(len > 0);
			ok += compare((uint32_t)len, 0, &bad, &missed) == DROCE_DROP_NONE;
		}
	}
	CU_ASSERT(n > 600);
	CU_ASSERT_EQUAL(ok, 3 * n);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(missed, 0);
}

static void
test_every_opcode(void)
{
	use_cache = false;
	every_opcode();
	use_cache = true;
	every_opcode();
	fixed_conn = true;
	every_opcode();
	fixed_conn = false;
}

/* One connection's frames hit the cached prefix state: they still agree with droce_parse()
 * (lengths, IP ID, opcode, PSN vary), the cached base is really what is used (spoiling it makes
 * a valid frame fail its ICRC check), a damaged fixed byte is caught, and the state recovers. */
static void
test_icrc_cache(void)
{
	struct droce_icrc_v4_cache *c = &cache[0x11 & 3];
	struct droce_pkt a;
	unsigned int i, bad = 0, missed = 0, taken = 0;
	int len;

	use_cache = true;
	fixed_conn = true;
	memset(cache, 0, sizeof(cache));
	for (i = 0; i < 2000; i++) {
		len = build(
			(uint8_t)(i & 1 ? DROCE_OP_RC_ACKNOWLEDGE : DROCE_OP_RC_RDMA_WRITE_ONLY),
			rnd() % 2000, false, 4);
		CU_ASSERT_TRUE_FATAL(len > 0);
		if (compare((uint32_t)len, 0, &bad, &missed) == DROCE_DROP_NONE)
			taken++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(missed, 0);
	CU_ASSERT_EQUAL(taken, 2000);
	CU_ASSERT_TRUE(c->valid);

	len = build(DROCE_OP_RC_SEND_ONLY, 100, false, 4);
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_NONE);
	c->base ^= 1;
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_ICRC);
	c->base ^= 1;
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_NONE);
	/* the destination address, a fixed byte, damaged in flight */
	f[14 + 19] ^= 0x40;
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_IP_CSUM);
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, DROCE_PARSE_NO_IPCSUM, cache, 3),
			DROCE_DROP_ICRC);
	CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len, &a, DROCE_PARSE_NO_IPCSUM), DROCE_DROP_ICRC);
	f[14 + 19] ^= 0x40;
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_NONE);
	fixed_conn = false;
}

/* IPv6, IPv4 options and two 802.1Q tags are not the common shape: the general walk answers
 * (the cache stays untouched), with droce_parse()'s reason. */
static void
test_other_shapes(void)
{
	struct droce_pkt a;
	int len;

	memset(cache, 0, sizeof(cache));
	/* a second tag inside the first (QinQ): droce_parse reads one tag only, and drops it */
	len = build(DROCE_OP_RC_SEND_ONLY, 64, true, 4);
	memmove(f + 16, f + 12, (size_t)len - 12);
	len += 4;
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_NOT_IP);
	len = build(DROCE_OP_RC_SEND_ONLY, 64, false, 6);
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_NONE);
	/* IHL 6 with the option word inserted, checksum and ICRC right: accepted, the long way */
	len = build(DROCE_OP_RC_SEND_ONLY, 64, false, 4);
	memmove(f + 14 + 24, f + 14 + 20, (size_t)len - 34);
	memset(f + 14 + 20, 1, 4); /* four NOP options */
	len += 4;
	f[14] = 0x46;
	droce_put_be16(f + 14 + 2, (uint16_t)(droce_get_be16(f + 14 + 2) + 4));
	droce_put_be16(f + 14 + 10, 0);
	droce_put_be16(f + 14 + 10, droce_ipv4_csum(f + 14, 24));
	droce_icrc_put(f + len - 4, droce_icrc(f + 14, (uint32_t)len - 4 - 14));
	CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len, &a, 0), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(droce_parse_rx(f, (uint32_t)len, &a, 0, cache, 3), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(a.l4_off, 14 + 24);
	CU_ASSERT_FALSE(cache[0].valid || cache[1].valid || cache[2].valid || cache[3].valid);
}

/* Damaged frames (untagged and tagged): one to three random bytes changed, or a wrong length
 * handed in, with and without the offload flags: the same reason as droce_parse() every time. */
static void
test_damaged(void)
{
	static const unsigned int flag_sets[] = { 0, DROCE_PARSE_NO_ICRC, DROCE_PARSE_NO_IPCSUM,
						  DROCE_PARSE_NO_ICRC | DROCE_PARSE_NO_IPCSUM };
	unsigned int i, k, bad = 0, missed = 0, ok = 0, dropped = 0;
	unsigned int reasons[DROCE_DROP_MAX] = { 0 }, kinds = 0;

	for (i = 0; i < 60000; i++) {
		uint8_t op = (uint8_t)rnd();
		unsigned int flags = flag_sets[i & 3];
		enum droce_drop d;
		uint32_t len;
		int r;

		if (droce_opcode_info(op)->name == NULL)
			op = DROCE_OP_RC_RDMA_WRITE_ONLY;
		r = build(op, rnd() % 300, (i & 16) != 0, (i & 32) && (i & 64) ? 6 : 4);
		CU_ASSERT_TRUE_FATAL(r > 0);
		len = (uint32_t)r;
		switch (rnd() % 4) {
		case 0:
			len = rnd() % (len + 8);
			break;
		default:
			for (k = rnd() % 3 + 1; k > 0; k--)
				f[rnd() % 60] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		}
		use_cache = (i & 4) != 0;
		fixed_conn = (i & 8) != 0;
		d = compare(len, flags, &bad, &missed);
		if (d == DROCE_DROP_NONE)
			ok++;
		else
			dropped++;
		reasons[d]++;
	}
	fixed_conn = false;
	for (i = 0; i < DROCE_DROP_MAX; i++)
		kinds += reasons[i] != 0;
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(missed, 0);
	/* both sides of the comparison really happened, over many reasons */
	CU_ASSERT(ok > 1000);
	CU_ASSERT(dropped > 10000);
	CU_ASSERT(kinds >= 15);
}

DROCE_TEST_MAIN("rx_fast", DROCE_TEST(test_every_opcode), DROCE_TEST(test_icrc_cache),
		DROCE_TEST(test_other_shapes), DROCE_TEST(test_damaged))
