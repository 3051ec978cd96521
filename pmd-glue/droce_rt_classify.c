/* SPDX-License-Identifier: BSD-3-Clause */
/* Received-frame dispatch by headers: engine, neighbours, or exception/drop. */
#include <string.h>

#include "droce_neigh.h"
#include "droce_rt_classify.h"
#include "wire/droce_eth.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_udp.h"

enum { ICMP6_PROTO = 58 };

static const uint8_t droce_rt_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

bool
droce_rt_drop_counted(enum droce_drop d)
{
	return droce_drop_class(d) == DROCE_DROP_CLASS_NOT_ROCE ||
	       droce_drop_class(d) == DROCE_DROP_CLASS_RUNTIME || droce_rt_drop_final(d);
}

static enum droce_rt_class
other(enum droce_drop *drop, enum droce_drop why)
{
	*drop = why;
	return DROCE_RT_CLS_OTHER;
}

enum droce_rt_class
droce_rt_classify(const uint8_t *frame, uint32_t len, const uint8_t mac[6],
		  enum droce_drop *drop)
{
	uint32_t dqpn;

	return droce_rt_classify_qpn(frame, len, mac, drop, &dqpn);
}

enum droce_rt_class
droce_rt_classify_qpn(const uint8_t *frame, uint32_t len, const uint8_t mac[6],
		      enum droce_drop *drop, uint32_t *dqpn)
{
	return droce_rt_classify_vlan(frame, len, mac, 0, drop, dqpn);
}

/* From the IP header at off (EtherType type): where the BTH starts, or why the frame is not
 * RoCEv2 (DROCE_DROP_NONE: it is). The BTH itself may still be cut short. */
static enum droce_drop
bth_offset(const uint8_t *frame, uint32_t len, uint32_t off, uint16_t type, uint32_t *bth)
{
	uint32_t l4;
	uint8_t proto;

	if (type == DROCE_ETHERTYPE_IPV4) {
		if (len < off + sizeof(struct droce_ipv4_hdr))
			return DROCE_DROP_IP_SHORT;
		proto = frame[off + 9];
		l4 = off + (uint32_t)(frame[off] & 0x0F) * 4;
	} else if (type == DROCE_ETHERTYPE_IPV6) {
		if (len < off + 40)
			return DROCE_DROP_IP_SHORT;
		proto = frame[off + 6];
		l4 = off + 40;
	} else {
		return DROCE_DROP_NOT_IP;
	}
	if (proto != DROCE_IPPROTO_UDP)
		return DROCE_DROP_NOT_UDP;
	if (len < l4 + sizeof(struct droce_udp_hdr))
		return DROCE_DROP_UDP_SHORT;
	/* IBTA Annex A17.2: RoCEv2 is UDP destination port 4791; the BTH follows UDP. */
	if (droce_get_be16(frame + l4 + 2) != DROCE_ROCEV2_UDP_PORT)
		return DROCE_DROP_NOT_ROCE_PORT;
	*bth = l4 + sizeof(struct droce_udp_hdr);
	return DROCE_DROP_NONE;
}

enum droce_rt_class
droce_rt_classify_vlan(const uint8_t *frame, uint32_t len, const uint8_t mac[6], uint16_t vlan,
		       enum droce_drop *drop, uint32_t *dqpn)
{
	uint32_t off = sizeof(struct droce_eth_hdr), bth;
	enum droce_drop why;
	uint16_t type, vid = 0;

	if (len < off)
		return other(drop, DROCE_DROP_ETH_SHORT);
	/* Group addresses (broadcast, IPv6 multicast) pass; other stations' unicast does not. */
	if (!(frame[0] & 1) && memcmp(frame, mac, 6) != 0)
		return other(drop, DROCE_DROP_DST_MAC);
	type = droce_get_be16(frame + 12);
	if (type == DROCE_ETHERTYPE_VLAN) {
		if (len < off + sizeof(struct droce_vlan_hdr))
			return other(drop, DROCE_DROP_VLAN_SHORT);
		vid = droce_get_be16(frame + 14) & DROCE_VLAN_VID_MASK;
		type = droce_get_be16(frame + 16);
		off += sizeof(struct droce_vlan_hdr);
	}
	/* One VLAN is ours (untagged when none is set). VID 0 is a priority tag, which belongs
	 * to the untagged VLAN (IEEE 802.1Q 9.6). */
	if (vid != vlan)
		return other(drop, vlan == 0 ? DROCE_DROP_VLAN_TAGGED :
			     vid == 0 ? DROCE_DROP_VLAN_UNTAGGED : DROCE_DROP_VLAN_OTHER);
	if (droce_neigh_match(frame, len))
		return DROCE_RT_CLS_NEIGH;
	why = bth_offset(frame, len, off, type, &bth);
	if (why != DROCE_DROP_NONE)
		return other(drop, why);
	/* Annex A17.4 (as the engine, droce_rx_addr.h): RoCEv2 is never broadcast; a group's
	 * MAC goes on to the engine, which knows the groups joined */
	if (memcmp(frame, droce_rt_bcast, 6) == 0)
		return other(drop, DROCE_DROP_DST_MAC);
	/* IBTA 9.2: DestQP is the BTH's bytes 5..7. */
	*dqpn = len >= bth + 12 ? (uint32_t)frame[bth + 5] << 16 |
				  (uint32_t)frame[bth + 6] << 8 | frame[bth + 7] : UINT32_MAX;
	return DROCE_RT_CLS_ROCE;
}

int
droce_rt_frame_opcode(const uint8_t *frame, uint32_t len)
{
	uint32_t off = sizeof(struct droce_eth_hdr), bth;
	uint16_t type;

	if (len < off + sizeof(struct droce_vlan_hdr))
		return -1;
	type = droce_get_be16(frame + 12);
	if (type == DROCE_ETHERTYPE_VLAN) {
		type = droce_get_be16(frame + 16);
		off += sizeof(struct droce_vlan_hdr);
	}
	if (bth_offset(frame, len, off, type, &bth) != DROCE_DROP_NONE || len <= bth)
		return -1;
	return frame[bth];
}
