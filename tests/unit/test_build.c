/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frame builder: parse(build(p)) == p for every opcode over IPv4 and IPv6, with and without
 * 802.1Q; the checksums it writes (checked by an independent RFC 1071 sum); its errors; and the
 * CNP of Annex A17.9.3.
 */
#include <errno.h>
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"
#include "droce_test.h"

#define BUF_CAP 8192

static uint8_t buf[BUF_CAP];
static uint8_t payload[BUF_CAP];
static char ctx[128]; /* what is being tested, printed beside a failure */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t
rnd(void)
{
	/* xorshift64: deterministic field values, different per packet */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#define EQ(a, b) \
	do { \
		if ((uint64_t)(a) != (uint64_t)(b)) \
			fprintf(stderr, "\n  %s: %s = 0x%llx, want 0x%llx", ctx, #a, \
				(unsigned long long)(a), (unsigned long long)(b)); \
		CU_ASSERT_EQUAL((uint64_t)(a), (uint64_t)(b)); \
	} while (0)

/* RFC 1071 one's complement sum of big-endian 16-bit words, not folded to 16 bits yet. */
static uint32_t
sum16(const uint8_t *p, uint32_t n)
{
	uint32_t s = 0, i;

	for (i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s > 0xFFFF)
		s = (s & 0xFFFF) + (s >> 16);
	return (uint16_t)s;
}

static void
fill_pkt(struct droce_pkt *p, uint8_t opcode, int ip_ver, int vlan)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < 6; i++) {
		p->dmac[i] = (uint8_t)rnd();
		p->smac[i] = (uint8_t)rnd();
	}
	p->has_vlan = vlan;
	p->vlan_tci = vlan ? (uint16_t)rnd() : 0;
	p->ip_ver = (uint8_t)ip_ver;
	p->tclass = (uint8_t)rnd();
	p->hop_limit = (uint8_t)rnd();
	if (ip_ver == 6) {
		p->flow_label = (uint32_t)rnd() & 0xFFFFF;
		for (i = 0; i < 16; i++) {
			p->sgid[i] = (uint8_t)rnd();
			p->dgid[i] = (uint8_t)rnd();
		}
	} else {
		p->ip_id = (uint16_t)rnd();
		droce_gid_from_v4(p->sgid, (uint32_t)rnd());
		droce_gid_from_v4(p->dgid, (uint32_t)rnd());
	}
	p->udp_sport = (uint16_t)(0xC000 | rnd());
	p->opcode = opcode;
	p->se = rnd() & 1;
	p->mig = rnd() & 1;
	p->pkey = (uint16_t)rnd();
	p->fecn = rnd() & 1;
	p->becn = rnd() & 1;
	p->srcap = p->fecn ^ p->becn; /* both values, the random sequence unchanged */
	p->dqpn = (uint32_t)rnd() & 0xFFFFFF;
	p->ackreq = rnd() & 1;
	p->psn = (uint32_t)rnd() & 0xFFFFFF;
	p->reth_va = rnd();
	p->reth_rkey = (uint32_t)rnd();
	p->reth_len = (uint32_t)rnd();
	p->aeth_syn = (uint8_t)rnd();
	p->aeth_msn = (uint32_t)rnd() & 0xFFFFFF;
	p->atomic_va = rnd();
	p->atomic_rkey = (uint32_t)rnd();
	p->atomic_swap_add = rnd();
	p->atomic_compare = rnd();
	p->atomic_orig = rnd();
	p->imm = (uint32_t)rnd();
	p->ieth_rkey = (uint32_t)rnd();
	p->deth_qkey = (uint32_t)rnd();
	p->deth_sqpn = (uint32_t)rnd() & 0xFFFFFF;
}

/* Independent checks of the bytes the builder wrote, then the parsed struct field by field. */
static void
check_wire(const uint8_t *f, const struct droce_pkt *p, uint32_t n, uint32_t want_len)
{
	uint32_t l3 = 14 + (p->has_vlan ? 4 : 0);
	uint32_t l4 = l3 + (p->ip_ver == 6 ? 40 : 20);
	const uint8_t *ip = f + l3, *udp = f + l4, *bth = f + l4 + 8;
	uint32_t end = want_len - 4;

	EQ(f[12] << 8 | f[13], p->has_vlan ? 0x8100 : (p->ip_ver == 6 ? 0x86DD : 0x0800));
	EQ(udp[2] << 8 | udp[3], 4791);
	EQ(udp[4] << 8 | udp[5], want_len - l4);
	if (p->ip_ver == 4) {
		EQ(ip[0], 0x45);
		EQ(ip[2] << 8 | ip[3], want_len - l3);
		EQ(ip[6] << 8 | ip[7], 0x4000); /* DF, no fragment (A17.4.1) */
		EQ(ip[9], 17);
		/* a correct header sums to 0xFFFF (RFC 1071) */
		EQ(fold(sum16(ip, 20)), 0xFFFF);
		EQ(udp[6] << 8 | udp[7], 0); /* rxe and ConnectX send 0 */
	} else {
		uint32_t ulen = want_len - l4;
		uint32_t s =
			sum16(ip + 8, 32) + (ulen >> 16) + (ulen & 0xFFFF) + 17 + sum16(udp, ulen);

		EQ(ip[0] >> 4, 6);
		EQ(ip[4] << 8 | ip[5], want_len - l4);
		EQ(ip[6], 17);
		/* RFC 8200 8.1: pseudo-header + datagram sums to 0xFFFF; 0 is never sent */
		EQ(fold(s), 0xFFFF);
		CU_ASSERT_NOT_EQUAL(udp[6] << 8 | udp[7], 0);
	}
	EQ((bth[1] >> 4) & 3, (4 - (n & 3)) & 3); /* PadCnt */
	EQ(bth[1] & 0x0F, 0);			  /* TVer */
	EQ(droce_icrc_get(f + end), droce_icrc_ref(ip, end - l3));
}

static void
check_fields(const struct droce_pkt *g, const struct droce_pkt *w)
{
	const struct droce_opcode_info *op = droce_opcode_info(w->opcode);

	CU_ASSERT_EQUAL(memcmp(g->dmac, w->dmac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(g->smac, w->smac, 6), 0);
	EQ(g->has_vlan, w->has_vlan);
	EQ(g->vlan_tci, w->vlan_tci);
	EQ(g->ip_ver, w->ip_ver);
	EQ(g->tclass, w->tclass);
	EQ(g->hop_limit, w->hop_limit);
	EQ(g->flow_label, w->flow_label);
	EQ(g->ip_id, w->ip_id);
	CU_ASSERT_EQUAL(memcmp(g->sgid, w->sgid, 16), 0);
	CU_ASSERT_EQUAL(memcmp(g->dgid, w->dgid, 16), 0);
	EQ(g->udp_sport, w->udp_sport);
	EQ(g->udp_csum, w->udp_csum);
	EQ(g->opcode, w->opcode);
	EQ(g->se, w->se);
	EQ(g->mig, w->mig);
	EQ(g->padcnt, w->padcnt);
	EQ(g->tver, 0);
	EQ(g->pkey, w->pkey);
	EQ(g->fecn, w->fecn);
	EQ(g->becn, w->becn);
	EQ(g->srcap, w->srcap);
	EQ(g->dqpn, w->dqpn);
	EQ(g->ackreq, w->ackreq);
	EQ(g->psn, w->psn);
	EQ(g->l3_off, w->l3_off);
	EQ(g->l4_off, w->l4_off);
	EQ(g->bth_off, w->bth_off);
	EQ(g->pay_off, w->pay_off);
	EQ(g->pay_len, w->pay_len);
	EQ(g->frame_len, w->frame_len);
	EQ(g->icrc, w->icrc);
	if (op->hdrs & H_RETH) {
		EQ(g->reth_va, w->reth_va);
		EQ(g->reth_rkey, w->reth_rkey);
		EQ(g->reth_len, w->reth_len);
	}
	if (op->hdrs & H_AETH) {
		EQ(g->aeth_syn, w->aeth_syn);
		EQ(g->aeth_msn, w->aeth_msn);
	}
	if (op->hdrs & H_ATMETH) {
		EQ(g->atomic_va, w->atomic_va);
		EQ(g->atomic_rkey, w->atomic_rkey);
		EQ(g->atomic_swap_add, w->atomic_swap_add);
		EQ(g->atomic_compare, w->atomic_compare);
	}
	if (op->hdrs & H_ATMACK)
		EQ(g->atomic_orig, w->atomic_orig);
	if (op->hdrs & H_IMMDT)
		EQ(g->imm, w->imm);
	if (op->hdrs & H_IETH)
		EQ(g->ieth_rkey, w->ieth_rkey);
	if (op->hdrs & H_DETH) {
		EQ(g->deth_qkey, w->deth_qkey);
		EQ(g->deth_sqpn, w->deth_sqpn);
	}
}

static const uint32_t pay_sizes[] = { 0, 1, 2, 3, 4, 5, 256, 4096 };

static unsigned int
round_trip_one(uint8_t opcode, int ip_ver, int vlan, uint32_t n)
{
	const struct droce_opcode_info *op = droce_opcode_info(opcode);
	struct droce_pkt p, got;
	uint32_t want_len, i;
	enum droce_drop r;
	int len;

	snprintf(ctx, sizeof(ctx), "%s IPv%d%s payload %u", op->name, ip_ver, vlan ? " VLAN" : "",
		 n);
	fill_pkt(&p, opcode, ip_ver, vlan);
	for (i = 0; i < n; i++)
		payload[i] = (uint8_t)rnd();
	memset(buf, 0xA5, sizeof(buf));
	want_len = 14 + (vlan ? 4 : 0) + (ip_ver == 6 ? 40 : 20) + 8 + op->hdr_len +
		   ((n + 3) / 4) * 4 + 4;
	len = droce_build(buf, sizeof(buf), &p, payload, n);
	/* FIRST and MIDDLE carry a full path MTU: never padded (IBTA 9.2.4) */
	if ((n & 3) != 0 && !(op->flags & DROCE_OPF_LAST)) {
		EQ(len, -EINVAL);
		return 0;
	}
	EQ(len, want_len);
	EQ(droce_build_frame_len(&p, n), want_len);
	if (len != (int)want_len)
		return 0;
	EQ(p.padcnt, (4 - (n & 3)) & 3);
	check_wire(buf, &p, n, want_len);
	/* the pad is zeroed; nothing is written past the frame */
	for (i = 0; i < p.padcnt; i++)
		EQ(buf[p.pay_off + n + i], 0);
	EQ(buf[want_len], 0xA5);

	memset(&got, 0, sizeof(got));
	r = droce_parse(buf, (uint32_t)len, &got, 0);
	EQ(r, DROCE_DROP_NONE);
	check_fields(&got, &p);
	EQ(got.pay_len, n);
	CU_ASSERT_EQUAL(memcmp(buf + got.pay_off, payload, n), 0);
	return 1;
}

static void
test_round_trip_all_opcodes(void)
{
	unsigned int v, k, ip, vlan, ops = 0, built = 0;

	for (v = 0; v < 256; v++) {
		const struct droce_opcode_info *op = droce_opcode_info((uint8_t)v);

		if (op->name == NULL)
			continue;
		ops++;
		for (ip = 4; ip <= 6; ip += 2)
			for (vlan = 0; vlan < 2; vlan++)
				for (k = 0; k < sizeof(pay_sizes) / sizeof(pay_sizes[0]); k++) {
					if (pay_sizes[k] != 0 && !(op->flags & DROCE_OPF_PAYLOAD))
						continue;
					built += round_trip_one((uint8_t)v, (int)ip, (int)vlan,
								pay_sizes[k]);
				}
	}
	/* table 38's 37 opcodes, ATOMIC WRITE (1.5) and the CNP: 6 carry no payload, 23 padded
	 * LAST/ONLY ones take all 8 sizes, 10 FIRST/MIDDLE ones the 4 multiples of 4; times
	 * IPv4/IPv6 x VLAN or not */
	EQ(ops, 39);
	EQ(built, 4 * (6 * 1 + 23 * 8 + 10 * 4));
}

/* Bits above a field's width are not the builder's to send. */
static void
test_field_masks(void)
{
	struct droce_pkt p, got;
	int len;

	snprintf(ctx, sizeof(ctx), "masks");
	fill_pkt(&p, DROCE_OP_UD_SEND_ONLY, 6, 0);
	p.dqpn = 0xAB123456;
	p.psn = 0xCD654321;
	p.deth_sqpn = 0xEF000011;
	p.flow_label = 0xFFF12345;
	len = droce_build(buf, sizeof(buf), &p, payload, 8);
	CU_ASSERT_TRUE(len > 0);
	memset(&got, 0, sizeof(got));
	EQ(droce_parse(buf, (uint32_t)len, &got, 0), DROCE_DROP_NONE);
	EQ(got.dqpn, 0x123456);
	EQ(got.psn, 0x654321);
	EQ(got.deth_sqpn, 0x000011);
	EQ(got.flow_label, 0x12345);
	EQ(got.tclass, p.tclass); /* the flow label did not spill into the class */
}

static void
test_errors(void)
{
	static const uint8_t unknown[] = { 0x15, 0x18, 0x1F, 0x2C, 0x40, 0x60,
					   0x63, 0x66, 0x80, 0xA0, 0xFF };
	static const uint8_t no_pay[] = { 0x0C, 0x11, 0x12, 0x13, 0x14, 0x81 };
	static uint8_t before[BUF_CAP];
	struct droce_pkt p;
	uint32_t want;
	unsigned int i;

	snprintf(ctx, sizeof(ctx), "errors");
	for (i = 0; i < sizeof(unknown); i++) {
		fill_pkt(&p, unknown[i], 4, 0);
		EQ(droce_build(buf, sizeof(buf), &p, payload, 0), -EINVAL);
		EQ(droce_build_hdrs(buf, sizeof(buf), &p, 0), -EINVAL);
	}
	for (i = 0; i < sizeof(no_pay); i++) {
		fill_pkt(&p, no_pay[i], 6, 1);
		EQ(droce_build(buf, sizeof(buf), &p, payload, 1), -EINVAL);
		EQ(droce_build(buf, sizeof(buf), &p, payload, 4), -EINVAL);
		CU_ASSERT_TRUE(droce_build(buf, sizeof(buf), &p, payload, 0) > 0);
	}
	/* IPv4 needs both GIDs in ::ffff:a.b.c.d form; other versions are refused */
	fill_pkt(&p, DROCE_OP_RC_SEND_ONLY, 4, 0);
	p.sgid[10] = 0;
	EQ(droce_build(buf, sizeof(buf), &p, payload, 4), -EINVAL);
	fill_pkt(&p, DROCE_OP_RC_SEND_ONLY, 4, 0);
	p.dgid[0] = 0xFE;
	EQ(droce_build(buf, sizeof(buf), &p, payload, 4), -EINVAL);
	fill_pkt(&p, DROCE_OP_RC_SEND_ONLY, 4, 0);
	p.ip_ver = 5;
	EQ(droce_build(buf, sizeof(buf), &p, payload, 4), -EINVAL);
	p.ip_ver = 0;
	EQ(droce_build(buf, sizeof(buf), &p, payload, 4), -EINVAL);
	/* FIRST / MIDDLE with a payload that would need a pad */
	fill_pkt(&p, DROCE_OP_RC_RDMA_WRITE_MIDDLE, 4, 0);
	EQ(droce_build(buf, sizeof(buf), &p, payload, 1023), -EINVAL);
	CU_ASSERT_TRUE(droce_build(buf, sizeof(buf), &p, payload, 1024) > 0);

	/* -ENOSPC: one byte short, nothing written; exactly enough works */
	fill_pkt(&p, DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 6, 1);
	want = 14 + 4 + 40 + 8 + 32 + 8 + 4;
	memset(buf, 0x5A, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	EQ(droce_build(buf, want - 1, &p, payload, 7), -ENOSPC);
	EQ(droce_build(buf, 0, &p, payload, 7), -ENOSPC);
	EQ(droce_build_hdrs(buf, want - 1, &p, 7), -ENOSPC);
	CU_ASSERT_EQUAL(memcmp(buf, before, sizeof(buf)), 0);
	EQ(droce_build(buf, want, &p, payload, 7), want);
	/* an IP datagram is at most 64 KiB, and lengths near 2^32 must not wrap the sums */
	fill_pkt(&p, DROCE_OP_UC_SEND_LAST, 4, 0);
	EQ(droce_build_hdrs(buf, 0xFFFFFFFFu, &p, 0xFFFFFFFFu), -ENOSPC);
	EQ(droce_build_hdrs(buf, 0xFFFFFFFFu, &p, 0xFFFFFFFDu), -ENOSPC);
	EQ(droce_build_hdrs(buf, 0xFFFFFFFFu, &p, 0xFFFFFFF0u), -ENOSPC);
	EQ(droce_build_hdrs(buf, 0xFFFFFFFFu, &p, 0x10000), -ENOSPC);
	EQ(droce_build_hdrs(buf, 0xFFFFFFFFu, &p, 0xFFFF - 14 - 20 - 8 - 12 - 4 + 1), -ENOSPC);
	EQ(droce_build_hdrs(buf, 0xFFFFFFFFu, &p, 0xFFFF - 14 - 20 - 8 - 12 - 4 - 3),
	   14 + 20 + 8 + 12);
}

/* The split API (headers, payload in place, finish) gives the same frame, and finishing twice
 * (a retransmission re-finishing its buffer) changes nothing. */
static void
test_split_and_refinish(void)
{
	static uint8_t a[BUF_CAP], b[BUF_CAP];
	struct droce_pkt p, q;
	int ip, la, hl;
	uint32_t lb;

	for (ip = 4; ip <= 6; ip += 2) {
		snprintf(ctx, sizeof(ctx), "split IPv%d", ip);
		fill_pkt(&p, DROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE, ip, 1);
		memcpy(&q, &p, sizeof(p));
		memset(payload, 0x3C, 37);
		la = droce_build(a, sizeof(a), &p, payload, 37);
		hl = droce_build_hdrs(b, sizeof(b), &q, 37);
		EQ(hl, 14 + 4 + (ip == 6 ? 40 : 20) + 8 + 16);
		EQ(droce_build_hdr_len(&q), hl);
		memset(b + hl, 0x3C, 37);
		lb = droce_build_finish(b, &q);
		EQ(lb, la);
		CU_ASSERT_EQUAL(memcmp(a, b, lb), 0);
		lb = droce_build_finish(b, &q);
		EQ(lb, la);
		CU_ASSERT_EQUAL(memcmp(a, b, lb), 0);
		EQ(q.udp_csum, p.udp_csum);
	}
}

/* Annex A17.9.3: opcode 0x81, P_Key 0xFFFF, BECN set, DestQP the data sender's QP, PSN 0, 16
 * reserved zero bytes, then the ICRC. */
static void
test_cnp(void)
{
	struct droce_pkt p, got;
	const uint8_t *bth;
	int len, i;

	snprintf(ctx, sizeof(ctx), "CNP");
	fill_pkt(&p, DROCE_OP_CNP, 4, 0);
	p.pkey = 0xFFFF;
	p.becn = true;
	p.fecn = false;
	p.srcap = false; /* fill_pkt's random one */
	p.ackreq = false;
	p.se = false;
	p.mig = false;
	p.psn = 0;
	p.dqpn = 0x000123;
	memset(buf, 0xEE, sizeof(buf));
	len = droce_build(buf, sizeof(buf), &p, NULL, 0);
	EQ(len, 14 + 20 + 8 + 12 + 16 + 4);
	bth = buf + 14 + 20 + 8;
	EQ(bth[0], 0x81);
	EQ(bth[1], 0x00); /* no pad, TVer 0 */
	EQ(bth[2], 0xFF);
	EQ(bth[3], 0xFF);
	EQ(bth[4], 0x40); /* BECN, FECN clear, reserved 0 */
	EQ(bth[5] << 16 | bth[6] << 8 | bth[7], 0x000123);
	EQ(bth[8], 0);
	EQ(bth[9] << 16 | bth[10] << 8 | bth[11], 0);
	for (i = 0; i < 16; i++)
		EQ(bth[12 + i], 0);
	EQ(droce_icrc_get(bth + 28), droce_icrc_ref(buf + 14, len - 14 - 4));
	memset(&got, 0, sizeof(got));
	EQ(droce_parse(buf, (uint32_t)len, &got, 0), DROCE_DROP_NONE);
	EQ(got.opcode, DROCE_OP_CNP);
	EQ(got.becn, 1);
	EQ(got.pkey, 0xFFFF);
	EQ(got.pay_len, 0);
	EQ(got.pay_off, len - 4);
}

/* The IPv4 header of a fixed packet against a sum done by hand: 4500 0040 1234 4000 4011 csum
 * c612 0001 c612 0002. Words: 4500+0040+1234+4000+4011+c612+0001+c612+0002 = 0x263ac; folded
 * 0x63ac + 2 = 0x63ae; checksum ~0x63ae = 0x9c51. */
static void
test_ipv4_csum_known(void)
{
	struct droce_pkt p;
	int len;

	snprintf(ctx, sizeof(ctx), "IPv4 checksum vector");
	fill_pkt(&p, DROCE_OP_RC_SEND_ONLY, 4, 0);
	p.tclass = 0;
	p.hop_limit = 0x40;
	p.ip_id = 0x1234;
	droce_gid_from_v4(p.sgid, 0xC6120001); /* 198.18.0.1 */
	droce_gid_from_v4(p.dgid, 0xC6120002);
	/* total length 0x40 = 20 (IP) + 8 (UDP) + 12 (BTH) + 20 (payload) + 4 (ICRC) */
	len = droce_build(buf, sizeof(buf), &p, payload, 20);
	EQ(len, 14 + 0x40);
	EQ(buf[14 + 10] << 8 | buf[14 + 11], 0x9C51);
}

DROCE_TEST_MAIN("build", DROCE_TEST(test_round_trip_all_opcodes), DROCE_TEST(test_field_masks),
		DROCE_TEST(test_errors), DROCE_TEST(test_split_and_refinish), DROCE_TEST(test_cnp),
		DROCE_TEST(test_ipv4_csum_known))
