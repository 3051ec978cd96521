/* SPDX-License-Identifier: BSD-3-Clause */
/* CE marking: IPv4 checksum right afterwards, IPv6 traffic class, VLAN, and RoCEv2 ICRC intact. */
#include <stdint.h>
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"
#include "droce_test.h"
#include "netem_model.h"
#include "netem_test_frames.h"

static void
test_ipv4_ect0_and_ect1_marked_checksum_valid(void)
{
	uint8_t f[128];
	uint8_t tos[] = { DROCE_ECN_ECT0, DROCE_ECN_ECT1, 0xB8 | DROCE_ECN_ECT0, 0xFC | 1 };
	unsigned int i;

	for (i = 0; i < sizeof(tos); i++) {
		netem_test_ipv4(f, sizeof(f), tos[i]);
		CU_ASSERT_EQUAL(droce_ipv4_csum(f + 14, 20), 0);
		CU_ASSERT_EQUAL(droce_netem_mark_ce(f, sizeof(f)), DROCE_NETEM_ECN_MARKED);
		CU_ASSERT_EQUAL(f[15], (tos[i] & 0xFC) | DROCE_ECN_CE); /* DSCP kept */
		CU_ASSERT_EQUAL(droce_ipv4_csum(f + 14, 20), 0);
		CU_ASSERT_EQUAL(droce_netem_mark_ce(f, sizeof(f)), DROCE_NETEM_ECN_ALREADY_CE);
	}
}

static void
test_ipv4_checksum_matches_full_recompute(void)
{
	uint8_t f[128], g[128];
	unsigned int tos;

	for (tos = 0; tos < 256; tos++) {
		if ((tos & 3) == 0 || (tos & 3) == 3)
			continue;
		netem_test_ipv4(f, sizeof(f), (uint8_t)tos);
		netem_test_ipv4(g, sizeof(g), (uint8_t)(tos | 3));
		droce_netem_mark_ce(f, sizeof(f));
		CU_ASSERT_EQUAL(memcmp(f, g, sizeof(f)), 0);
	}
}

static void
test_bad_checksum_stays_bad(void)
{
	uint8_t f[128];

	netem_test_ipv4(f, sizeof(f), DROCE_ECN_ECT0);
	f[24] ^= 0x40; /* damage the checksum field */
	CU_ASSERT_EQUAL(droce_netem_mark_ce(f, sizeof(f)), DROCE_NETEM_ECN_MARKED);
	CU_ASSERT_NOT_EQUAL(droce_ipv4_csum(f + 14, 20), 0);
}

static void
test_not_ect_and_not_ip_untouched(void)
{
	uint8_t f[128], g[128];

	netem_test_ipv4(f, sizeof(f), 0xB8);
	memcpy(g, f, sizeof(f));
	CU_ASSERT_EQUAL(droce_netem_mark_ce(f, sizeof(f)), DROCE_NETEM_ECN_NOT_ECT);
	CU_ASSERT_EQUAL(memcmp(f, g, sizeof(f)), 0);
	droce_put_be16(f + 12, DROCE_ETHERTYPE_ARP);
	f[15] = DROCE_ECN_ECT0;
	memcpy(g, f, sizeof(f));
	CU_ASSERT_EQUAL(droce_netem_mark_ce(f, sizeof(f)), DROCE_NETEM_ECN_NOT_IP);
	CU_ASSERT_EQUAL(memcmp(f, g, sizeof(f)), 0);
	CU_ASSERT_EQUAL(droce_netem_mark_ce(f, 20), DROCE_NETEM_ECN_NOT_IP); /* truncated */
	netem_test_ipv4(f, sizeof(f), DROCE_ECN_ECT0);
	CU_ASSERT_EQUAL(droce_netem_mark_ce(f, 30), DROCE_NETEM_ECN_NOT_IP); /* IP cut short */
}

static void
test_ipv6_and_vlan(void)
{
	uint8_t f[128];
	uint32_t vtc;

	memset(f, 0, sizeof(f));
	droce_put_be16(f + 12, DROCE_ETHERTYPE_VLAN);
	droce_put_be16(f + 14, 0x6005);
	droce_put_be16(f + 16, DROCE_ETHERTYPE_IPV6);
	/* version 6, traffic class 0x69 (DSCP 26, ECT(1)), flow label 0xABCDE */
	droce_put_be32(f + 18, (6u << 28) | (0x69u << DROCE_IPV6_TC_SHIFT) | 0xABCDE);
	CU_ASSERT_EQUAL(droce_netem_mark_ce(f, sizeof(f)), DROCE_NETEM_ECN_MARKED);
	vtc = droce_get_be32(f + 18);
	CU_ASSERT_EQUAL(vtc >> 28, 6);
	CU_ASSERT_EQUAL((vtc >> DROCE_IPV6_TC_SHIFT) & 0xFF, 0x6B);
	CU_ASSERT_EQUAL(vtc & DROCE_IPV6_FLOW_MASK, 0xABCDE);
	CU_ASSERT_EQUAL(droce_get_be16(f + 14), 0x6005);
}

/* A RoCEv2 packet built by the codec still parses (IPv4 checksum and ICRC) after marking. */
static void
test_rocev2_icrc_survives(void)
{
	static const uint8_t payload[64] = { 1, 2, 3 };
	uint8_t f[256];
	struct droce_pkt p, q;
	int ver, len;

	for (ver = 4; ver <= 6; ver += 2) {
		memset(&p, 0, sizeof(p));
		p.ip_ver = (uint8_t)ver;
		p.tclass = (26 << 2) | DROCE_ECN_ECT0;
		p.hop_limit = 64;
		p.udp_sport = 0xC000;
		p.opcode = 0x04; /* RC SEND Only */
		p.pkey = 0xFFFF;
		p.dqpn = 0x11;
		p.psn = 77;
		if (ver == 4) {
			droce_gid_from_v4(p.sgid, 0x0A000001);
			droce_gid_from_v4(p.dgid, 0x0A000002);
		} else {
			p.sgid[0] = 0xFE;
			p.sgid[1] = 0x80;
			p.sgid[15] = 1;
			memcpy(p.dgid, p.sgid, 16);
			p.dgid[15] = 2;
		}
		len = droce_build(f, sizeof(f), &p, payload, sizeof(payload));
		CU_ASSERT_FATAL(len > 0);
		CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len, &q, 0), DROCE_DROP_NONE);
		CU_ASSERT_EQUAL(droce_netem_mark_ce(f, (uint32_t)len), DROCE_NETEM_ECN_MARKED);
		CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len, &q, 0), DROCE_DROP_NONE);
		CU_ASSERT_EQUAL(q.tclass, (26 << 2) | DROCE_ECN_CE);
		CU_ASSERT_EQUAL(q.psn, 77);
	}
}

DROCE_TEST_MAIN("netem_ecn", DROCE_TEST(test_ipv4_ect0_and_ect1_marked_checksum_valid),
		DROCE_TEST(test_ipv4_checksum_matches_full_recompute),
		DROCE_TEST(test_bad_checksum_stays_bad),
		DROCE_TEST(test_not_ect_and_not_ip_untouched), DROCE_TEST(test_ipv6_and_vlan),
		DROCE_TEST(test_rocev2_icrc_survives))
