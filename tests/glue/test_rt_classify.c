/* SPDX-License-Identifier: BSD-3-Clause */
/* Received-frame classification over crafted headers. */
#include <string.h>

#include "droce_pkt.h"

#include "droce_byteorder.h"
#include "droce_neigh.h"
#include "droce_rt_classify.h"
#include "droce_test.h"

static const uint8_t me[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t other_mac[6] = { 0x02, 0, 0, 0, 0, 0x09 };

/* Ethernet + IPv4 (ihl words) + UDP to dport; returns the frame length. */
static uint32_t
v4(uint8_t *f, const uint8_t dst[6], uint8_t proto, uint16_t dport, unsigned int ihl, bool vlan)
{
	uint32_t off = 14;

	memset(f, 0, 128);
	memcpy(f, dst, 6);
	memcpy(f + 6, other_mac, 6);
	if (vlan) {
		droce_put_be16(f + 12, 0x8100);
		droce_put_be16(f + 14, 5);
		off = 18;
	}
	droce_put_be16(f + off - 2, 0x0800);
	f[off] = (uint8_t)(0x40 | ihl);
	f[off + 9] = proto;
	droce_put_be16(f + off + ihl * 4 + 2, dport);
	return off + ihl * 4 + 8 + 12 + 4;
}

static uint32_t
v6(uint8_t *f, uint8_t nh, uint16_t dport)
{
	memset(f, 0, 128);
	memcpy(f, me, 6);
	memcpy(f + 6, other_mac, 6);
	droce_put_be16(f + 12, 0x86DD);
	f[14] = 0x60;
	f[14 + 6] = nh;
	droce_put_be16(f + 54 + 2, dport);
	return 54 + 8 + 16;
}

/* Without a VLAN, as the runtime classifies when DROCE_VLAN is not set. */
static enum droce_rt_class
cls(const uint8_t *f, uint32_t len, enum droce_drop *why)
{
	uint32_t qpn;

	*why = DROCE_DROP_MAX;
	return droce_rt_classify_vlan(f, len, me, 0, why, &qpn);
}

static void
test_roce(void)
{
	uint8_t f[128];
	enum droce_drop why;
	uint32_t len;

	len = v4(f, me, 17, 4791, 5, false);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_ROCE);
	len = v4(f, me, 17, 4791, 6, false); /* options: the port is read past them */
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_ROCE);
	len = v4(f, me, 17, 4791, 5, true);
	droce_put_be16(f + 14, 3 << 13); /* priority tag: VID 0 is the untagged VLAN */
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_ROCE);
	len = v6(f, 17, 4791);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_ROCE);
	/* a group's MAC goes on to the engine (it knows the groups joined) */
	len = v4(f, (const uint8_t[6]){ 0x01, 0, 0x5e, 0, 0, 1 }, 17, 4791, 5, false);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_ROCE);
	/* RoCEv2 is never broadcast: dropped as the engine drops it, with its reason */
	len = v4(f, (const uint8_t[6]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, 17, 4791, 5, false);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_DST_MAC);
	CU_ASSERT_TRUE(droce_rt_drop_final(why));
}

static void
test_others(void)
{
	uint8_t f[128];
	enum droce_drop why;
	uint32_t len;

	len = v4(f, me, 17, 53, 5, false);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_NOT_ROCE_PORT);
	len = v4(f, me, 6, 4791, 5, false);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_NOT_UDP);
	len = v4(f, other_mac, 17, 4791, 5, false);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_DST_MAC);
	len = v4(f, me, 17, 4791, 5, false);
	droce_put_be16(f + 12, 0x88cc); /* LLDP */
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_NOT_IP);
	len = v6(f, 58, 0); /* ICMPv6, not ND */
	f[54] = 128;	    /* echo request */
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_NOT_UDP);
	/* one vocabulary: the engine's names, the runtime counts its own share of them */
	CU_ASSERT_STRING_EQUAL(droce_drop_name(DROCE_DROP_DST_MAC), "DST_MAC");
	CU_ASSERT_TRUE(droce_rt_drop_counted(DROCE_DROP_DST_MAC));
	CU_ASSERT_TRUE(droce_rt_drop_counted(DROCE_DROP_NOT_ROCE_PORT));
	CU_ASSERT_TRUE(droce_rt_drop_counted(DROCE_DROP_EXC_FULL));
	CU_ASSERT_FALSE(droce_rt_drop_counted(DROCE_DROP_ICRC));
	CU_ASSERT_FALSE(droce_rt_drop_counted(DROCE_DROP_SRC_GID));
}

static void
test_short(void)
{
	uint8_t f[128];
	enum droce_drop why;

	v4(f, me, 17, 4791, 5, false);
	CU_ASSERT_EQUAL(cls(f, 13, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_ETH_SHORT);
	CU_ASSERT_EQUAL(cls(f, 14 + 19, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_IP_SHORT);
	CU_ASSERT_EQUAL(cls(f, 14 + 20 + 7, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_UDP_SHORT);
	v4(f, me, 17, 4791, 5, true);
	CU_ASSERT_EQUAL(cls(f, 16, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_SHORT);
	v6(f, 17, 4791);
	CU_ASSERT_EQUAL(cls(f, 14 + 39, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_IP_SHORT);
}

static void
test_neighbours(void)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, zmac[6];
	static const uint8_t a[4] = { 198, 18, 0, 2 }, b[4] = { 198, 18, 0, 1 };
	static const uint8_t s6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	static const uint8_t t6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	enum droce_drop why;
	uint32_t len;

	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, other_mac, a, zmac, b);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_NEIGH);
	len = droce_nd_build(f, DROCE_ND_NS, 0, (const uint8_t[6]){ 0x33, 0x33, 0xff, 0, 0, 1 },
			     other_mac, s6, t6, t6);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_NEIGH);
	/* ARP unicast to another station is not ours either */
	len = droce_arp_build(f, DROCE_ARP_REPLY, other_mac, other_mac, a, other_mac, b);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_DST_MAC);
}

/* IEEE 802.1Q: one VLAN is ours, untagged (and VID 0) when none is configured. */
static void
test_vlan(void)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, zmac[6];
	static const uint8_t a[4] = { 198, 18, 0, 2 }, b[4] = { 198, 18, 0, 1 };
	uint8_t f[128];
	enum droce_drop why;
	uint32_t len, qpn;

	len = v4(f, me, 17, 4791, 5, true); /* VID 5, PCP 0 */
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_TAGGED);
	CU_ASSERT_FALSE(droce_rt_drop_final(DROCE_DROP_NOT_UDP));
	CU_ASSERT_TRUE(droce_rt_drop_final(why));
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 5, &why, &qpn), DROCE_RT_CLS_ROCE);
	droce_put_be16(f + 14, 5 << 13 | 5); /* PCP does not matter */
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 5, &why, &qpn), DROCE_RT_CLS_ROCE);
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 6, &why, &qpn), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_OTHER);
	CU_ASSERT_TRUE(droce_rt_drop_final(why));
	droce_put_be16(f + 14, 5 << 13); /* priority-tagged: not VLAN 5 */
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 5, &why, &qpn), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_UNTAGGED);
	len = v4(f, me, 17, 4791, 5, false);
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 5, &why, &qpn), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_UNTAGGED);
	CU_ASSERT_TRUE(droce_rt_drop_final(why));
	/* Not ours by MAC first, whatever the VLAN */
	len = v4(f, other_mac, 17, 4791, 5, true);
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 9, &why, &qpn), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_DST_MAC);
	/* Tagged ARP: ours on our VLAN, dropped on another or untagged */
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, other_mac, a, zmac, b);
	len = droce_neigh_vlan_insert(f, len, 3 << 13 | 100);
	CU_ASSERT_EQUAL(len, 64);
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 100, &why, &qpn), DROCE_RT_CLS_NEIGH);
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 200, &why, &qpn), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_OTHER);
	CU_ASSERT_EQUAL(cls(f, len, &why), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_TAGGED);
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, other_mac, a, zmac, b);
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, len, me, 100, &why, &qpn), DROCE_RT_CLS_OTHER);
	CU_ASSERT_EQUAL(why, DROCE_DROP_VLAN_UNTAGGED);
	CU_ASSERT_STRING_EQUAL(droce_drop_name(DROCE_DROP_VLAN_OTHER), "VLAN_OTHER");
}

/* The classifier reads headers with the engine's parser: a real RoCEv2 frame, then the same frame
 * made something else, gets from the classifier the reason droce_parse() names; a header no IP
 * stack could read (version, IHL) is dropped outright, by the runtime. */
static void
test_engine_reasons(void)
{
	static const struct {
		unsigned int off; /* from the IP header */
		uint8_t val;
	} cases[] = {
		{ 9, 6 },	  /* TCP: NOT_UDP */
		{ 20 + 3, 0xb8 }, /* UDP port 4792: NOT_ROCE_PORT */
		{ 0, 0x55 },	  /* version 5: IP_VERSION */
		{ 0, 0x44 },	  /* IHL 4: IP_IHL */
	};
	static const enum droce_drop want[] = { DROCE_DROP_NOT_UDP, DROCE_DROP_NOT_ROCE_PORT,
						DROCE_DROP_IP_VERSION, DROCE_DROP_IP_IHL };
	uint8_t f[256], pay[8] = { 0 };
	struct droce_pkt p;
	enum droce_drop why;
	unsigned int i, vlan;
	uint32_t qpn;
	int len;

	for (vlan = 0; vlan < 2; vlan++) {
		memset(&p, 0, sizeof(p));
		memcpy(p.dmac, me, 6);
		memcpy(p.smac, other_mac, 6);
		p.has_vlan = vlan != 0;
		p.vlan_tci = 7;
		p.ip_ver = 4;
		droce_gid_from_v4(p.sgid, 0xC6120002);
		droce_gid_from_v4(p.dgid, 0xC6120001);
		p.opcode = DROCE_OP_RC_SEND_ONLY;
		p.dqpn = 0x123456;
		len = droce_build(f, sizeof(f), &p, pay, sizeof(pay));
		CU_ASSERT_TRUE_FATAL(len > 0);
		CU_ASSERT_EQUAL(
			droce_rt_classify_vlan(f, (uint32_t)len, me, vlan ? 7 : 0, &why, &qpn),
			DROCE_RT_CLS_ROCE);
		CU_ASSERT_EQUAL(qpn, 0x123456);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			uint8_t keep = f[p.l3_off + cases[i].off];

			f[p.l3_off + cases[i].off] = cases[i].val;
			CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len, &p, DROCE_PARSE_NO_IPCSUM),
					want[i]);
			CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, (uint32_t)len, me, vlan ? 7 : 0,
							       &why, &qpn),
					DROCE_RT_CLS_OTHER);
			CU_ASSERT_EQUAL(why, want[i]);
			CU_ASSERT_TRUE(droce_rt_drop_counted(why));
			CU_ASSERT_EQUAL(droce_rt_drop_final(why), i >= 2);
			f[p.l3_off + cases[i].off] = keep;
		}
		/* what judges a RoCEv2 frame is the engine's: a bad checksum still goes there */
		f[p.l3_off + 10] ^= 1;
		CU_ASSERT_EQUAL(droce_parse(f, (uint32_t)len, &p, 0), DROCE_DROP_IP_CSUM);
		CU_ASSERT_EQUAL(
			droce_rt_classify_vlan(f, (uint32_t)len, me, vlan ? 7 : 0, &why, &qpn),
			DROCE_RT_CLS_ROCE);
	}
}

DROCE_TEST_MAIN("rt_classify", DROCE_TEST(test_engine_reasons), DROCE_TEST(test_roce),
		DROCE_TEST(test_others), DROCE_TEST(test_short), DROCE_TEST(test_neighbours),
		DROCE_TEST(test_vlan))
