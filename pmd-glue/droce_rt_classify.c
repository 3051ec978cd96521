/* SPDX-License-Identifier: BSD-3-Clause */
/* Received-frame dispatch by headers: engine, neighbours, or exception/drop. */
#include <string.h>

#include "droce_neigh.h"
#include "droce_rt_classify.h"
#include "droce_pkt.h"
#include "wire/droce_bth.h"
#include "wire/droce_eth.h"

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
droce_rt_classify_vlan(const uint8_t *frame, uint32_t len, const uint8_t mac[6], uint16_t vlan,
		       enum droce_drop *drop, uint32_t *dqpn)
{
	const struct droce_eth_hdr *eth = (const void *)frame;
	const struct droce_bth *bth;
	struct droce_pkt p;
	enum droce_drop why;
	uint16_t vid;

	/* the engine's own first steps: L2, the IP protocol, the UDP port */
	why = droce_parse_l4(frame, len, &p);
	if (why == DROCE_DROP_ETH_SHORT)
		return other(drop, why);
	/* Group addresses (broadcast, IPv6 multicast) pass; other stations' unicast does not. */
	if (!(eth->dst[0] & 1) && memcmp(eth->dst, mac, 6) != 0)
		return other(drop, DROCE_DROP_DST_MAC);
	if (why == DROCE_DROP_VLAN_SHORT)
		return other(drop, why);
	/* One VLAN is ours (untagged when none is set). VID 0 is a priority tag, which belongs
	 * to the untagged VLAN (IEEE 802.1Q 9.6). */
	vid = p.has_vlan ? p.vlan_tci & DROCE_VLAN_VID_MASK : 0;
	if (vid != vlan)
		return other(drop, vlan == 0 ? DROCE_DROP_VLAN_TAGGED :
				   vid == 0  ? DROCE_DROP_VLAN_UNTAGGED :
					       DROCE_DROP_VLAN_OTHER);
	if (droce_neigh_match(frame, len))
		return DROCE_RT_CLS_NEIGH;
	if (why != DROCE_DROP_NONE)
		return other(drop, why);
	/* Annex A17.4 (as the engine, droce_rx_addr.h): RoCEv2 is never broadcast; a group's
	 * MAC goes on to the engine, which knows the groups joined */
	if (memcmp(eth->dst, droce_rt_bcast, 6) == 0)
		return other(drop, DROCE_DROP_DST_MAC);
	/* IBTA 9.2: the BTH's DestQP, when the frame holds it (else the engine drops it) */
	bth = (const void *)(frame + p.bth_off);
	*dqpn = len >= p.bth_off + sizeof(*bth) ?
			droce_be32_to_cpu(bth->fb_dqpn) & DROCE_BTH_QPN_MASK :
			UINT32_MAX;
	return DROCE_RT_CLS_ROCE;
}
