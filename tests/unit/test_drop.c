/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop reasons: each one in DROCE_DROP_LIST is reached by a frame crafted to break exactly that
 * check (a good frame with one defect, checksums and ICRC made right again where the defect allows),
 * and names, sentences and classes exist and are unique.
 */
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"
#include "droce_test.h"

#define CAP 2048

static uint8_t f[CAP];
static uint32_t flen;

/* Offsets in the frame being mutated. */
static uint32_t l3, l4, bth;

static void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t
get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* RFC 1071 over the IPv4 header, written out here rather than taken from the stack. */
static void
fix_ipv4_csum(void)
{
	uint8_t *ip = f + l3;
	uint32_t s = 0, n = (uint32_t)(ip[0] & 0x0F) * 4, i;

	if (n < 20)
		n = 20;
	ip[10] = ip[11] = 0;
	for (i = 0; i < n; i += 2)
		s += get16(ip + i);
	while (s > 0xFFFF)
		s = (s & 0xFFFF) + (s >> 16);
	put16(ip + 10, ~s & 0xFFFF);
}

/* ICRC over the datagram as the IP header now sizes it (A17.3.3), by the reference CRC. */
static void
fix_icrc(void)
{
	uint8_t *ip = f + l3;
	uint32_t end = (ip[0] >> 4) == 4 ? l3 + get16(ip + 2) : l4 + get16(ip + 4);

	end -= 4;
	droce_icrc_put(f + end, droce_icrc_ref(ip, end - l3));
}

/* A good frame: opcode, IP version, VLAN, payload bytes. */
static void
base(uint8_t opcode, int ip_ver, int vlan, uint32_t pay)
{
	static uint8_t payload[256];
	struct droce_pkt p;
	int len;

	memset(&p, 0, sizeof(p));
	memset(payload, 0x6B, sizeof(payload));
	memset(f, 0, sizeof(f));
	p.ip_ver = (uint8_t)ip_ver;
	p.has_vlan = vlan;
	p.vlan_tci = 3;
	p.hop_limit = 64;
	p.tclass = 2;
	if (ip_ver == 4) {
		droce_gid_from_v4(p.sgid, 0xC0A80001);
		droce_gid_from_v4(p.dgid, 0xC0A80002);
	} else {
		p.sgid[0] = 0xFE;
		p.sgid[1] = 0x80;
		p.sgid[15] = 1;
		p.dgid[0] = 0xFE;
		p.dgid[1] = 0x80;
		p.dgid[15] = 2;
	}
	p.udp_sport = 0xC123;
	p.opcode = opcode;
	p.pkey = 0xFFFF;
	p.dqpn = 0x11;
	p.psn = 0x100;
	len = droce_build(f, CAP, &p, payload, pay);
	CU_ASSERT_FATAL(len > 0);
	flen = (uint32_t)len;
	l3 = p.l3_off;
	l4 = p.l4_off;
	bth = p.bth_off;
	CU_ASSERT_EQUAL_FATAL(droce_parse(f, flen, &p, 0), DROCE_DROP_NONE);
}

/* what a receive path would count: one counter per reason */
static struct droce_drop_stats hits;

static void
expect(enum droce_drop want, unsigned int flags, const char *what)
{
	struct droce_pkt p;
	enum droce_drop got;

	memset(&p, 0, sizeof(p));
	got = droce_parse(f, flen, &p, flags);
	if (got != want)
		fprintf(stderr, "\n  %s: got %s, want %s", what, droce_drop_name(got),
			droce_drop_name(want));
	CU_ASSERT_EQUAL(got, want);
	if (got == want)
		hits.cnt[want]++;
}

static void
test_l2(void)
{
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	flen = 13;
	expect(DROCE_DROP_ETH_SHORT, 0, "13-byte frame");
	flen = 0;
	expect(DROCE_DROP_ETH_SHORT, 0, "empty frame");

	base(DROCE_OP_RC_SEND_ONLY, 4, 1, 8);
	flen = 17;
	expect(DROCE_DROP_VLAN_SHORT, 0, "frame ends in the 802.1Q tag");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + 12, 0x0806);
	expect(DROCE_DROP_NOT_IP, 0, "ARP");
	base(DROCE_OP_RC_SEND_ONLY, 6, 1, 8);
	put16(f + 16, 0x88CC);
	expect(DROCE_DROP_NOT_IP, 0, "LLDP inside 802.1Q");
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + 12, 0x88A8); /* QinQ outer tag: not supported */
	expect(DROCE_DROP_NOT_IP, 0, "802.1ad");
}

static void
test_ip(void)
{
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	flen = l3 + 19;
	expect(DROCE_DROP_IP_SHORT, 0, "IPv4 header cut");
	base(DROCE_OP_RC_SEND_ONLY, 6, 1, 8);
	flen = l3 + 39;
	expect(DROCE_DROP_IP_SHORT, 0, "IPv6 header cut");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	f[l3] = 0x65;
	expect(DROCE_DROP_IP_VERSION, 0, "version 6 under EtherType IPv4");
	base(DROCE_OP_RC_SEND_ONLY, 6, 0, 8);
	f[l3] = (uint8_t)(0x40 | (f[l3] & 0x0F));
	expect(DROCE_DROP_IP_VERSION, 0, "version 4 under EtherType IPv6");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	f[l3] = 0x44;
	fix_ipv4_csum();
	expect(DROCE_DROP_IP_IHL, 0, "IHL 4");
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 0); /* 58 bytes: shorter than a 60-byte IP header */
	f[l3] = 0x4F;
	expect(DROCE_DROP_IP_IHL, 0, "IHL past the frame");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + l3 + 2, flen - l3 + 1);
	fix_ipv4_csum();
	expect(DROCE_DROP_IP_LEN, 0, "IPv4 total length past the frame");
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + l3 + 2, 19);
	fix_ipv4_csum();
	expect(DROCE_DROP_IP_LEN, 0, "IPv4 total length below IHL");
	base(DROCE_OP_RC_SEND_ONLY, 6, 0, 8);
	put16(f + l3 + 4, get16(f + l3 + 4) + 1);
	expect(DROCE_DROP_IP_LEN, 0, "IPv6 payload length past the frame");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + l3 + 6, 0x2000);
	fix_ipv4_csum();
	expect(DROCE_DROP_IP_FRAG, 0, "MF set");
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + l3 + 6, 0x0001);
	fix_ipv4_csum();
	expect(DROCE_DROP_IP_FRAG, 0, "fragment offset 8");

	base(DROCE_OP_RC_SEND_ONLY, 4, 1, 8);
	f[l3 + 11] ^= 0x01;
	expect(DROCE_DROP_IP_CSUM, 0, "IPv4 checksum off by one");
	expect(DROCE_DROP_NONE, DROCE_PARSE_NO_IPCSUM, "same, checksum left to the NIC");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	f[l3 + 9] = 6;
	fix_ipv4_csum();
	expect(DROCE_DROP_NOT_UDP, 0, "IPv4 protocol TCP");
	base(DROCE_OP_RC_SEND_ONLY, 6, 0, 8);
	f[l3 + 6] = 0; /* hop-by-hop options header: RoCEv2 uses none (A17.4.2) */
	expect(DROCE_DROP_NOT_UDP, 0, "IPv6 extension header");
}

static void
test_udp(void)
{
	/* the IP datagram ends inside the UDP header; what follows is Ethernet padding */
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + l3 + 2, 20 + 7);
	fix_ipv4_csum();
	expect(DROCE_DROP_UDP_SHORT, 0, "IPv4 datagram of 7 UDP bytes");
	base(DROCE_OP_RC_SEND_ONLY, 6, 0, 8);
	put16(f + l3 + 4, 7);
	expect(DROCE_DROP_UDP_SHORT, 0, "IPv6 payload of 7 bytes");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + l4 + 2, 4792);
	expect(DROCE_DROP_NOT_ROCE_PORT, 0, "port 4792");
	base(DROCE_OP_RC_SEND_ONLY, 6, 1, 8);
	put16(f + l4 + 2, 0xB712); /* 4791 byte-swapped */
	expect(DROCE_DROP_NOT_ROCE_PORT, 0, "port 4791 in host order");

	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	put16(f + l4 + 4, get16(f + l4 + 4) + 1);
	expect(DROCE_DROP_UDP_LEN, 0, "UDP length one past");
	base(DROCE_OP_RC_SEND_ONLY, 6, 0, 8);
	put16(f + l4 + 4, get16(f + l4 + 4) - 4);
	expect(DROCE_DROP_UDP_LEN, 0, "UDP length short of the IPv6 payload");
}

static void
test_transport(void)
{
	/* 15 bytes of UDP payload: BTH + ICRC need 16 */
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 0);
	put16(f + l3 + 2, 20 + 8 + 15);
	put16(f + l4 + 4, 8 + 15);
	fix_ipv4_csum();
	expect(DROCE_DROP_BTH_SHORT, 0, "UDP payload 15 bytes");
	base(DROCE_OP_RC_SEND_ONLY, 6, 0, 0);
	put16(f + l3 + 4, 8 + 15);
	put16(f + l4 + 4, 8 + 15);
	expect(DROCE_DROP_BTH_SHORT, 0, "IPv6, UDP payload 15 bytes");

	/* C9-2 */
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	f[bth + 1] |= 0x01;
	fix_icrc();
	expect(DROCE_DROP_BTH_TVER, 0, "TVer 1");
	base(DROCE_OP_UD_SEND_ONLY, 6, 1, 8);
	f[bth + 1] |= 0x0F;
	fix_icrc();
	expect(DROCE_DROP_BTH_TVER, 0, "TVer 15");

	/* C9-3: reserved, RD, XRC and IB's own CNP opcode */
	{
		static const uint8_t bad[] = { 0x15, 0x18, 0x40, 0x4A, 0x80, 0xA0, 0xFF };
		unsigned int i;

		for (i = 0; i < sizeof(bad); i++) {
			base(DROCE_OP_RC_SEND_ONLY, 4, 0, 64);
			f[bth] = bad[i];
			fix_icrc();
			expect(DROCE_DROP_OPCODE, 0, "unsupported opcode");
		}
	}

	/* C9-4: too short for the opcode's headers */
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 0);
	f[bth] = DROCE_OP_RC_RDMA_READ_REQUEST; /* needs a RETH */
	fix_icrc();
	expect(DROCE_DROP_HDR_SHORT, 0, "READ request without RETH");
	base(DROCE_OP_RC_ACKNOWLEDGE, 6, 0, 0);
	f[bth] = DROCE_OP_RC_COMPARE_SWAP; /* AtomicETH 28 > AETH 4 */
	fix_icrc();
	expect(DROCE_DROP_HDR_SHORT, 0, "CmpSwap with 4 bytes of header");
	base(DROCE_OP_RC_SEND_ONLY, 4, 1, 12);
	f[bth] = DROCE_OP_CNP; /* 16 reserved bytes, 12 present */
	fix_icrc();
	expect(DROCE_DROP_HDR_SHORT, 0, "CNP short of its 16 bytes");

	/* 9.2.4: PadCnt */
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 0);
	f[bth + 1] |= 0x10;
	fix_icrc();
	expect(DROCE_DROP_PADCNT, 0, "pad of 1 with no payload");
	base(DROCE_OP_RC_SEND_FIRST, 6, 0, 4);
	f[bth + 1] |= 0x20;
	fix_icrc();
	expect(DROCE_DROP_PADCNT, 0, "pad on a FIRST packet");
	base(DROCE_OP_UC_RDMA_WRITE_MIDDLE, 4, 0, 8);
	f[bth + 1] |= 0x30;
	fix_icrc();
	expect(DROCE_DROP_PADCNT, 0, "pad on a MIDDLE packet");
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8); /* payload + pad not a multiple of 4 */
	flen += 2;
	put16(f + l3 + 2, get16(f + l3 + 2) + 2);
	put16(f + l4 + 4, get16(f + l4 + 4) + 2);
	fix_ipv4_csum();
	fix_icrc();
	expect(DROCE_DROP_PADCNT, 0, "payload + pad of 10 bytes");

	/* no payload allowed (table 38: ACK, READ request, atomics, CNP) */
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	f[bth] = DROCE_OP_RC_ACKNOWLEDGE; /* 4 bytes past the AETH */
	fix_icrc();
	expect(DROCE_DROP_PAYLOAD_LEN, 0, "ACK with payload");
	base(DROCE_OP_RC_SEND_ONLY, 6, 1, 20);
	f[bth] = DROCE_OP_CNP; /* 4 bytes past the CNP body */
	fix_icrc();
	expect(DROCE_DROP_PAYLOAD_LEN, 0, "CNP with payload");
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 20);
	f[bth] = DROCE_OP_RC_RDMA_READ_REQUEST; /* 4 bytes past the RETH */
	fix_icrc();
	expect(DROCE_DROP_PAYLOAD_LEN, 0, "READ request with payload");

	/* A17.3.3: the ICRC */
	base(DROCE_OP_RC_SEND_ONLY, 4, 0, 8);
	f[bth + 12] ^= 0x01;
	expect(DROCE_DROP_ICRC, 0, "payload bit flipped");
	expect(DROCE_DROP_NONE, DROCE_PARSE_NO_ICRC, "same, ICRC left to the NIC");
	base(DROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 6, 1, 5);
	f[flen - 4] ^= 0x80;
	expect(DROCE_DROP_ICRC, 0, "ICRC bit flipped");
	base(DROCE_OP_RC_RDMA_WRITE_FIRST, 4, 0, 16);
	f[bth + 2] = 0x7F; /* P_Key is covered */
	expect(DROCE_DROP_ICRC, 0, "P_Key changed");
}

/* The crafted frames together reach every parser reason but NONE (the transport's own reasons,
 * listed after ICRC, come from the engine and are tested there). */
static void
test_every_reason_reached(void)
{
	unsigned int r;

	for (r = 1; r <= DROCE_DROP_ICRC; r++) {
		if (hits.cnt[r] == 0)
			fprintf(stderr, "\n  no crafted frame reaches %s", droce_drop_name(r));
		CU_ASSERT_TRUE(hits.cnt[r] > 0);
	}
}

static void
test_names(void)
{
	unsigned int i, j;

	for (i = 0; i < DROCE_DROP_MAX; i++) {
		const char *n = droce_drop_name(i), *d = droce_drop_desc(i);

		CU_ASSERT_PTR_NOT_NULL_FATAL(n);
		CU_ASSERT_PTR_NOT_NULL_FATAL(d);
		CU_ASSERT_TRUE(strlen(n) > 0 && strlen(d) > 0);
		CU_ASSERT_STRING_NOT_EQUAL(n, "?");
		/* names are identifiers as tools print them: upper case, digits, underscores */
		for (j = 0; n[j] != '\0'; j++)
			CU_ASSERT_TRUE((n[j] >= 'A' && n[j] <= 'Z') ||
				       (n[j] >= '0' && n[j] <= '9') || n[j] == '_');
		for (j = i + 1; j < DROCE_DROP_MAX; j++) {
			CU_ASSERT_STRING_NOT_EQUAL(n, droce_drop_name(j));
			CU_ASSERT_STRING_NOT_EQUAL(d, droce_drop_desc(j));
		}
	}
	CU_ASSERT_STRING_EQUAL(droce_drop_name(DROCE_DROP_NONE), "NONE");
	CU_ASSERT_STRING_EQUAL(droce_drop_name(DROCE_DROP_ICRC), "ICRC");
	CU_ASSERT_STRING_EQUAL(droce_drop_name(DROCE_DROP_MAX), "?");
	CU_ASSERT_STRING_EQUAL(droce_drop_desc(DROCE_DROP_MAX), "?");
	CU_ASSERT_STRING_EQUAL(droce_drop_name((enum droce_drop) - 1), "?");
}

/* Frames that are simply not RoCEv2 are told apart from broken RoCEv2 frames. */
static void
test_classes(void)
{
	unsigned int r;

	for (r = 0; r < DROCE_DROP_MAX; r++) {
		enum droce_drop_class want = DROCE_DROP_CLASS_MALFORMED;

		if (r == DROCE_DROP_NONE)
			want = DROCE_DROP_CLASS_OK;
		else if (r >= DROCE_DROP_MULTISEG)
			want = DROCE_DROP_CLASS_RUNTIME;
		else if (r > DROCE_DROP_ICRC)
			want = DROCE_DROP_CLASS_TRANSPORT;
		else if (r == DROCE_DROP_NOT_IP || r == DROCE_DROP_NOT_UDP ||
			 r == DROCE_DROP_NOT_ROCE_PORT)
			want = DROCE_DROP_CLASS_NOT_ROCE;
		CU_ASSERT_EQUAL(droce_drop_class(r), want);
	}
	CU_ASSERT_EQUAL(droce_drop_class(DROCE_DROP_MAX), DROCE_DROP_CLASS_MALFORMED);
}

DROCE_TEST_MAIN("drop", DROCE_TEST(test_l2), DROCE_TEST(test_ip), DROCE_TEST(test_udp),
		DROCE_TEST(test_transport), DROCE_TEST(test_every_reason_reached),
		DROCE_TEST(test_names), DROCE_TEST(test_classes))
