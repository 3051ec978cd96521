/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parser on frames it did not build: Linux rxe captures (fields as Wireshark decodes them),
 * Ethernet padding, IPv4 options, the fields the ICRC masks, reserved bits, and the parse flags.
 */
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"
#include "droce_test.h"

/* ib_read_bw.pcap frame 22: RC RDMA READ Request, 198.18.0.2 -> 198.18.0.1. */
static const uint8_t rxe_read_req[] = {
	0x52, 0x54, 0x00, 0xc6, 0x00, 0x01, 0x52, 0x54, 0x00, 0xc6, 0x00, 0x02, 0x08, 0x00, 0x45,
	0x00, 0x00, 0x3c, 0x21, 0xee, 0x40, 0x00, 0x40, 0x11, 0x8c, 0x9b, 0xc6, 0x12, 0x00, 0x02,
	0xc6, 0x12, 0x00, 0x01, 0xc2, 0x71, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x0c, 0x00, 0xff,
	0xff, 0x00, 0x00, 0x00, 0x19, 0x80, 0xec, 0xdb, 0x2a, 0x00, 0x00, 0x55, 0xa2, 0xb2, 0x4e,
	0xd0, 0x00, 0x00, 0x00, 0x07, 0x33, 0x00, 0x00, 0x10, 0x00, 0x20, 0xa1, 0x4f, 0xd2,
};

/* ib_atomic_bw_fadd.pcap frame 20: RC FetchAdd. */
static const uint8_t rxe_fadd[] = {
	0x52, 0x54, 0x00, 0xc6, 0x00, 0x01, 0x52, 0x54, 0x00, 0xc6, 0x00, 0x02, 0x08, 0x00, 0x45,
	0x00, 0x00, 0x48, 0x29, 0x11, 0x40, 0x00, 0x40, 0x11, 0x85, 0x6c, 0xc6, 0x12, 0x00, 0x02,
	0xc6, 0x12, 0x00, 0x01, 0xc2, 0xd9, 0x12, 0xb7, 0x00, 0x34, 0x00, 0x00, 0x14, 0x00, 0xff,
	0xff, 0x00, 0x00, 0x00, 0x1b, 0x80, 0x42, 0x3e, 0xb6, 0x00, 0x00, 0x55, 0xa9, 0x36, 0xd0,
	0x40, 0x00, 0x00, 0x00, 0x09, 0xc3, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x99, 0xf0, 0xcc, 0x33,
};

/* ib_atomic_bw_fadd.pcap frame 27: RC Atomic Acknowledge. */
static const uint8_t rxe_atomic_ack[] = {
	0x52, 0x54, 0x00, 0xc6, 0x00, 0x02, 0x52, 0x54, 0x00, 0xc6, 0x00, 0x01, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x38, 0x1c, 0xea, 0x40, 0x00, 0x40, 0x11, 0x91, 0xa3, 0xc6, 0x12,
	0x00, 0x01, 0xc6, 0x12, 0x00, 0x02, 0xc2, 0xd9, 0x12, 0xb7, 0x00, 0x24, 0x00, 0x00,
	0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x1b, 0x00, 0x42, 0x3e, 0xb6, 0x1f, 0x00,
	0x00, 0x01, 0xb5, 0x04, 0x7a, 0xf4, 0x69, 0x1e, 0x18, 0x71, 0x98, 0x17, 0xd9, 0xe2,
};

static uint8_t f[2048];

static const uint8_t mac1[6] = { 0x52, 0x54, 0x00, 0xc6, 0x00, 0x01 };
static const uint8_t mac2[6] = { 0x52, 0x54, 0x00, 0xc6, 0x00, 0x02 };

static void
check_v4_gid(const uint8_t gid[16], uint32_t addr)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

	CU_ASSERT_EQUAL(memcmp(gid, pfx, 12), 0);
	CU_ASSERT_EQUAL((uint32_t)gid[12] << 24 | gid[13] << 16 | gid[14] << 8 | gid[15], addr);
}

static void
test_rxe_read_request(void)
{
	struct droce_pkt p;

	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(droce_parse(rxe_read_req, sizeof(rxe_read_req), &p, 0), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(memcmp(p.dmac, mac1, 6), 0);
	CU_ASSERT_EQUAL(memcmp(p.smac, mac2, 6), 0);
	CU_ASSERT_FALSE(p.has_vlan);
	CU_ASSERT_EQUAL(p.ip_ver, 4);
	CU_ASSERT_EQUAL(p.tclass, 0);
	CU_ASSERT_EQUAL(p.ip_id, 0x21ee);
	CU_ASSERT_EQUAL(p.hop_limit, 64);
	check_v4_gid(p.sgid, 0xC6120002);
	check_v4_gid(p.dgid, 0xC6120001);
	CU_ASSERT_EQUAL(p.udp_sport, 49777);
	CU_ASSERT_EQUAL(p.udp_csum, 0);
	CU_ASSERT_EQUAL(p.opcode, DROCE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_FALSE(p.se);
	CU_ASSERT_FALSE(p.mig);
	CU_ASSERT_EQUAL(p.padcnt, 0);
	CU_ASSERT_EQUAL(p.pkey, 0xFFFF);
	CU_ASSERT_FALSE(p.fecn);
	CU_ASSERT_FALSE(p.becn);
	CU_ASSERT_EQUAL(p.dqpn, 0x19);
	CU_ASSERT_TRUE(p.ackreq);
	CU_ASSERT_EQUAL(p.psn, 15522602);
	CU_ASSERT_EQUAL(p.reth_va, 0x000055a2b24ed000ull);
	CU_ASSERT_EQUAL(p.reth_rkey, 0x733);
	CU_ASSERT_EQUAL(p.reth_len, 4096);
	CU_ASSERT_EQUAL(p.l3_off, 14);
	CU_ASSERT_EQUAL(p.l4_off, 34);
	CU_ASSERT_EQUAL(p.bth_off, 42);
	CU_ASSERT_EQUAL(p.pay_off, 70);
	CU_ASSERT_EQUAL(p.pay_len, 0);
	CU_ASSERT_EQUAL(p.frame_len, sizeof(rxe_read_req));
	CU_ASSERT_EQUAL(p.icrc, 0xd24fa120); /* wire bytes 20 a1 4f d2, LSB first */
}

static void
test_rxe_atomics(void)
{
	struct droce_pkt p;

	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(droce_parse(rxe_fadd, sizeof(rxe_fadd), &p, 0), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(p.opcode, DROCE_OP_RC_FETCH_ADD);
	CU_ASSERT_EQUAL(p.dqpn, 0x1b);
	CU_ASSERT_EQUAL(p.psn, 4341430);
	CU_ASSERT_TRUE(p.ackreq);
	CU_ASSERT_EQUAL(p.atomic_va, 0x000055a936d04000ull);
	CU_ASSERT_EQUAL(p.atomic_rkey, 0x9c3);
	CU_ASSERT_EQUAL(p.atomic_swap_add, 1);
	CU_ASSERT_EQUAL(p.atomic_compare, 0);
	CU_ASSERT_EQUAL(p.pay_len, 0);
	CU_ASSERT_EQUAL(p.udp_sport, 49881);

	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(droce_parse(rxe_atomic_ack, sizeof(rxe_atomic_ack), &p, 0),
			DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(p.opcode, DROCE_OP_RC_ATOMIC_ACKNOWLEDGE);
	CU_ASSERT_FALSE(p.ackreq);
	CU_ASSERT_EQUAL(p.psn, 4341430);
	CU_ASSERT_EQUAL(p.aeth_syn, 0x1f); /* ACK, credits not used */
	CU_ASSERT_EQUAL(p.aeth_msn, 1);
	CU_ASSERT_EQUAL(p.atomic_orig, 13043685610925987953ull);
	check_v4_gid(p.sgid, 0xC6120001);
	CU_ASSERT_EQUAL(p.ip_id, 0x1cea);
}

/* RFC 1071, written again here: the checksum of an IPv4 header of n bytes. */
static void
fix_ipv4_csum(uint8_t *ip, unsigned int n)
{
	uint32_t s = 0;
	unsigned int i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < n; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (s > 0xFFFF)
		s = (s & 0xFFFF) + (s >> 16);
	ip[10] = (uint8_t)(~s >> 8);
	ip[11] = (uint8_t)~s;
}

/* Bytes after the IP datagram (Ethernet minimum-size padding, or a trailer) are not the packet. */
static void
test_ethernet_padding_ignored(void)
{
	const uint8_t *src[] = { rxe_read_req, rxe_atomic_ack };
	const uint32_t n[] = { sizeof(rxe_read_req), sizeof(rxe_atomic_ack) };
	struct droce_pkt a, b;
	unsigned int i, pad;

	for (i = 0; i < 2; i++)
		for (pad = 1; pad <= 64; pad *= 4) {
			memcpy(f, src[i], n[i]);
			memset(f + n[i], 0xC3, pad);
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			CU_ASSERT_EQUAL(droce_parse(src[i], n[i], &a, 0), DROCE_DROP_NONE);
			CU_ASSERT_EQUAL(droce_parse(f, n[i] + pad, &b, 0), DROCE_DROP_NONE);
			CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof(a)), 0);
			CU_ASSERT_EQUAL(b.frame_len, n[i]);
		}

	/* a short built frame (an IPv6 ACK with VLAN) padded the way a NIC pads to 60 bytes and
	 * beyond; and an IPv4 one padded to 60 */
	{
		struct droce_pkt p;
		int len, ip;

		for (ip = 4; ip <= 6; ip += 2) {
			memset(&p, 0, sizeof(p));
			p.ip_ver = (uint8_t)ip;
			p.has_vlan = ip == 6;
			p.vlan_tci = 0x6005;
			p.hop_limit = 64;
			droce_gid_from_v4(p.sgid, 0x0A000001);
			droce_gid_from_v4(p.dgid, 0x0A000002);
			p.opcode = DROCE_OP_RC_ACKNOWLEDGE;
			p.aeth_syn = 0x1F;
			p.aeth_msn = 7;
			p.psn = 99;
			memset(f, 0xEE, sizeof(f));
			len = droce_build(f, sizeof(f), &p, NULL, 0);
			CU_ASSERT_TRUE(len > 0);
			memset(&a, 0, sizeof(a));
			CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len + 30, &a, 0), DROCE_DROP_NONE);
			CU_ASSERT_EQUAL(a.frame_len, (uint32_t)len);
			CU_ASSERT_EQUAL(a.pay_len, 0);
			CU_ASSERT_EQUAL(a.aeth_msn, 7);
			CU_ASSERT_EQUAL(a.psn, 99);
		}
	}
}

/* IPv4 options: RoCEv2 senders use none, but the receiver honours IHL (RFC 791). */
static void
test_ipv4_options(void)
{
	uint32_t n = sizeof(rxe_read_req), l3 = 14, end;
	struct droce_pkt p;

	memcpy(f, rxe_read_req, l3 + 20);
	f[l3 + 20] = 0x01; /* NOP */
	f[l3 + 21] = 0x01;
	f[l3 + 22] = 0x01;
	f[l3 + 23] = 0x00; /* end of options */
	memcpy(f + l3 + 24, rxe_read_req + l3 + 20, n - l3 - 20);
	n += 4;
	f[l3] = 0x46;
	f[l3 + 3] += 4;
	fix_ipv4_csum(f + l3, 24);
	end = n - 4;
	droce_icrc_put(f + end, droce_icrc_ref(f + l3, end - l3));
	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(p.l4_off, l3 + 24);
	CU_ASSERT_EQUAL(p.bth_off, l3 + 32);
	CU_ASSERT_EQUAL(p.opcode, DROCE_OP_RC_RDMA_READ_REQUEST);
	CU_ASSERT_EQUAL(p.reth_len, 4096);
	CU_ASSERT_EQUAL(p.psn, 15522602);
	check_v4_gid(p.dgid, 0xC6120001);
}

/* A17.3.3: the ICRC does not cover ToS, TTL, the IPv4 checksum, the UDP checksum nor BTH byte 4
 * (FECN, BECN): a switch may change them. Everything else it does cover. */
static void
test_icrc_masked_fields(void)
{
	uint32_t n = sizeof(rxe_read_req);
	uint8_t *ip = f + 14, *udp = f + 34, *bth = f + 42;
	struct droce_pkt p;

	memcpy(f, rxe_read_req, n);
	ip[1] = 0x03; /* CE mark */
	ip[8] = 1;    /* TTL */
	fix_ipv4_csum(ip, 20);
	udp[6] = 0x12;	/* checksum */
	bth[4] |= 0xC0; /* FECN, BECN */
	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(p.tclass, 0x03);
	CU_ASSERT_EQUAL(p.hop_limit, 1);
	CU_ASSERT_EQUAL(p.udp_csum, 0x1200);
	CU_ASSERT_TRUE(p.fecn);
	CU_ASSERT_TRUE(p.becn);
	CU_ASSERT_EQUAL(p.dqpn, 0x19);

	/* covered: P_Key, the IP identification, a RETH byte, the UDP source port */
	memcpy(f, rxe_read_req, n);
	bth[3] = 0xFE;
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_ICRC);
	memcpy(f, rxe_read_req, n);
	ip[5] ^= 1;
	fix_ipv4_csum(ip, 20);
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_ICRC);
	memcpy(f, rxe_read_req, n);
	bth[20] ^= 0x80;
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_ICRC);
	memcpy(f, rxe_read_req, n);
	udp[1] ^= 1;
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_ICRC);
}

/* The BTH's reserved bits and MigReq are not checked (reserved fields are ignored on receipt;
 * ConnectX sets M on ACKs where rxe does not), so a frame with them set is still accepted. */
static void
test_reserved_bits_ignored(void)
{
	uint32_t n = sizeof(rxe_atomic_ack), end = n - 4;
	struct droce_pkt p;

	memcpy(f, rxe_atomic_ack, n);
	f[43] |= 0x40; /* MigReq */
	f[50] |= 0x7F; /* reserved 7 bits after AckReq */
	droce_icrc_put(f + end, droce_icrc_ref(f + 14, end - 14));
	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_NONE);
	CU_ASSERT_TRUE(p.mig);
	CU_ASSERT_FALSE(p.ackreq);
	CU_ASSERT_EQUAL(p.psn, 4341430);
}

static void
test_parse_flags(void)
{
	uint32_t n = sizeof(rxe_fadd);
	struct droce_pkt p;

	/* NO_IPCSUM: a wrong IPv4 header checksum (not covered by the ICRC) passes */
	memcpy(f, rxe_fadd, n);
	f[14 + 10] ^= 0x55;
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_IP_CSUM);
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, DROCE_PARSE_NO_IPCSUM), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, DROCE_PARSE_NO_ICRC), DROCE_DROP_IP_CSUM);

	/* NO_ICRC: a wrong ICRC passes, and the ICRC read is still reported */
	memcpy(f, rxe_fadd, n);
	f[n - 1] ^= 0x01;
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, 0), DROCE_DROP_ICRC);
	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, DROCE_PARSE_NO_ICRC), DROCE_DROP_NONE);
	CU_ASSERT_EQUAL(p.icrc, 0x33ccf099u ^ 0x01000000u); /* wire 99 f0 cc 33, last flipped */
	CU_ASSERT_EQUAL(p.atomic_swap_add, 1);
	/* the flags skip only their own check */
	f[42 + 1] |= 0x01; /* TVer 1 */
	CU_ASSERT_EQUAL(droce_parse(f, n, &p, DROCE_PARSE_NO_ICRC | DROCE_PARSE_NO_IPCSUM),
			DROCE_DROP_BTH_TVER);
}

/* Every prefix of a good frame is rejected, and none reads past the length it is given. */
static void
test_truncations(void)
{
	uint32_t n = sizeof(rxe_atomic_ack), k;
	struct droce_pkt p;

	for (k = 0; k < n; k++) {
		uint8_t *copy = malloc(k ? k : 1); /* exact size: a sanitizer sees overreads */

		memcpy(copy, rxe_atomic_ack, k);
		CU_ASSERT_NOT_EQUAL(droce_parse(copy, k, &p, 0), DROCE_DROP_NONE);
		free(copy);
	}
}

DROCE_TEST_MAIN("parse", DROCE_TEST(test_rxe_read_request), DROCE_TEST(test_rxe_atomics),
		DROCE_TEST(test_ethernet_padding_ignored), DROCE_TEST(test_ipv4_options),
		DROCE_TEST(test_icrc_masked_fields), DROCE_TEST(test_reserved_bits_ignored),
		DROCE_TEST(test_parse_flags), DROCE_TEST(test_truncations))
