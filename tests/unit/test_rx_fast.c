/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive fast path (droce_parse_fast) against the full parser: on every opcode and payload
 * length it accepts what droce_parse() accepts (IPv4 without options or VLAN) and describes it
 * identically; on damaged frames it never accepts what droce_parse() drops, so every drop keeps
 * its named reason; anything else (IPv6, IPv4 options) it leaves to droce_parse(). Untagged and
 * 802.1Q-tagged, with and without the per-DestQP ICRC prefix cache.
 */
#include <string.h>

#include "droce_icrc.h"
#include "droce_opcode.h"
#include "droce_pkt.h"
#include "droce_test.h"

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
	p.srcap = p.fecn ^ p.becn;	/* both values, the random sequence unchanged */
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

/* Fast and full parse of f[0..len): returns true when the fast path took it; asserts that it
 * then agrees with droce_parse() on every field. */
static bool
compare(uint32_t len, unsigned int flags, unsigned int *bad)
{
	struct droce_pkt a, b;
	enum droce_drop d;
	bool fast;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	fast = droce_parse_fast(f, len, &a, flags, use_cache ? cache : NULL, 3);
	d = droce_parse(f, len, &b, flags);
	if (!fast)
		return false;
	droce_parse_fast_addrs(f, &a);
	if (d != DROCE_DROP_NONE || memcmp(&a, &b, sizeof(a)) != 0)
		(*bad)++;
	return true;
}

static void
every_opcode(void)
{
	static const uint32_t pays[] = { 0, 1, 3, 4, 61, 64, 256, 1024, 1025, 4096 };
	unsigned int op, k, n = 0, bad = 0, missed = 0;

	for (op = 0; op < 256; op++) {
		if (droce_opcode_info((uint8_t)op)->name == NULL)
			continue;
		for (k = 0; k < 2 * sizeof(pays) / sizeof(pays[0]); k++) {
			int len = build((uint8_t)op, pays[k / 2], k & 1, 4);

			CU_ASSERT_TRUE_FATAL(len > 0);
			n++;
			if (!compare((uint32_t)len, 0, &bad))
				missed++;
			/* Ethernet padding after the datagram */
			memset(f + len, 0xA5, 40);
			if (!compare((uint32_t)len + 40, 0, &bad))
				missed++;
		}
	}
	CU_ASSERT(n > 600);
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
 * a valid frame fail the fast path), a damaged fixed byte is caught, and the state recovers. */
static void
test_icrc_cache(void)
{
	struct droce_icrc_v4_cache *c = &cache[0x11 & 3];
	struct droce_pkt a;
	unsigned int i, bad = 0, taken = 0;
	int len;

	use_cache = true;
	fixed_conn = true;
	memset(cache, 0, sizeof(cache));
	for (i = 0; i < 2000; i++) {
		len = build((uint8_t)(i & 1 ? DROCE_OP_RC_ACKNOWLEDGE : DROCE_OP_RC_RDMA_WRITE_ONLY),
			    rnd() % 2000, false, 4);
		CU_ASSERT_TRUE_FATAL(len > 0);
		if (compare((uint32_t)len, 0, &bad))
			taken++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(taken, 2000);
	CU_ASSERT_TRUE(c->valid);

	len = build(DROCE_OP_RC_SEND_ONLY, 100, false, 4);
	c->base ^= 1;
	CU_ASSERT_FALSE(droce_parse_fast(f, (uint32_t)len, &a, 0, cache, 3));
	c->base ^= 1;
	CU_ASSERT_TRUE(droce_parse_fast(f, (uint32_t)len, &a, 0, cache, 3));
	/* the destination address, a fixed byte, damaged in flight */
	f[14 + 19] ^= 0x40;
	CU_ASSERT_FALSE(droce_parse_fast(f, (uint32_t)len, &a, 0, cache, 3));
	CU_ASSERT_NOT_EQUAL(droce_parse(f, (uint32_t)len, &a, 0), DROCE_DROP_NONE);
	f[14 + 19] ^= 0x40;
	CU_ASSERT_TRUE(droce_parse_fast(f, (uint32_t)len, &a, 0, cache, 3));
	fixed_conn = false;
}

/* IPv6, IPv4 options and two 802.1Q tags are valid but not the fast path's: it declines them. */
static void
test_declines_others(void)
{
	struct droce_pkt a;
	int len;

	/* a second tag inside the first (QinQ): droce_parse reads one tag only, and drops it */
	len = build(DROCE_OP_RC_SEND_ONLY, 64, true, 4);
	memmove(f + 16, f + 12, (size_t)len - 12);
	len += 4;
	CU_ASSERT_FALSE(droce_parse_fast(f, (uint32_t)len, &a, 0, NULL, 0));
	len = build(DROCE_OP_RC_SEND_ONLY, 64, false, 6);
	CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len, &a, 0), DROCE_DROP_NONE);
	CU_ASSERT_FALSE(droce_parse_fast(f, (uint32_t)len, &a, 0, NULL, 0));
	/* IHL 6: droce_parse accepts it only with a right checksum and ICRC; the fast path
	 * never looks further than the version/IHL byte */
	len = build(DROCE_OP_RC_SEND_ONLY, 64, false, 4);
	f[14] = 0x46;
	CU_ASSERT_FALSE(droce_parse_fast(f, (uint32_t)len, &a, 0, NULL, 0));
}

/* Damaged frames (untagged and tagged): one to three random bytes changed, or a wrong length
 * handed in, with and without the offload flags. The fast path must never take a frame
 * droce_parse() drops, and must take every frame droce_parse() accepts that is IPv4 (IHL 5). */
static void
test_damaged(void)
{
	static const unsigned int flag_sets[] = { 0, DROCE_PARSE_NO_ICRC, DROCE_PARSE_NO_IPCSUM,
						  DROCE_PARSE_NO_ICRC | DROCE_PARSE_NO_IPCSUM };
	unsigned int i, k, bad = 0, fast = 0, missed = 0, dropped = 0;
	struct droce_pkt b;

	for (i = 0; i < 60000; i++) {
		uint8_t op = (uint8_t)rnd();
		unsigned int flags = flag_sets[i & 3];
		uint32_t len;
		int r;

		if (droce_opcode_info(op)->name == NULL)
			op = DROCE_OP_RC_RDMA_WRITE_ONLY;
		r = build(op, rnd() % 300, (i & 16) != 0, 4);
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
		if (compare(len, flags, &bad)) {
			fast++;
		} else if (droce_parse(f, len, &b, flags) == DROCE_DROP_NONE) {
			unsigned int l3 = 14;

			if (len >= 18 && f[12] == 0x81 && f[13] == 0x00)
				l3 = 18;
			if (len >= l3 && f[l3 - 2] == 0x08 && f[l3 - 1] == 0x00 && f[l3] == 0x45)
				missed++;
		} else {
			dropped++;
		}
	}
	fixed_conn = false;
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(missed, 0);
	/* both sides of the comparison really happened */
	CU_ASSERT(fast > 1000);
	CU_ASSERT(dropped > 10000);
}

DROCE_TEST_MAIN("rx_fast",
	DROCE_TEST(test_every_opcode),
	DROCE_TEST(test_icrc_cache),
	DROCE_TEST(test_declines_others),
	DROCE_TEST(test_damaged))
