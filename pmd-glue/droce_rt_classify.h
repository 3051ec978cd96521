/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_CLASSIFY_H
#define DROCE_RT_CLASSIFY_H

/*
 * Where a received frame goes: the engine (RoCEv2, UDP 4791), the neighbour module (ARP,
 * ICMPv6 NS/NA), or the exception path / a named drop. Looks at headers only; the engine and
 * the neighbour module validate the rest. A refused frame is named with the engine's reasons
 * (droce_drop.h): the runtime and the engine share one vocabulary. Pure C, no EAL.
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_drop.h"

enum droce_rt_class {
	DROCE_RT_CLS_ROCE,
	DROCE_RT_CLS_NEIGH,
	DROCE_RT_CLS_OTHER, /* *drop says why: exception path or drop */
};

/*
 * Where frame goes on VLAN vlan (1..4094; 0: none, untagged and priority-tagged frames only):
 * frames of any other VLAN, or untagged when one is set, are dropped (DROCE_DROP_VLAN_*),
 * whatever they carry. The headers are read by the engine's parser (droce_parse_l4). A RoCE
 * frame also gets *dqpn, the BTH DestQP (IBTA 9.2), or UINT32_MAX when the frame ends before it
 * (the engine drops it, counted).
 */
enum droce_rt_class droce_rt_classify_vlan(const uint8_t *frame, uint32_t len, const uint8_t mac[6],
					   uint16_t vlan, enum droce_drop *drop, uint32_t *dqpn);

/* Reasons that drop a frame outright: it is not ours, or not an IP datagram anyone could read,
 * so it never goes to the exception ring. */
static inline bool
droce_rt_drop_final(enum droce_drop d)
{
	return d == DROCE_DROP_ETH_SHORT || d == DROCE_DROP_VLAN_SHORT ||
	       d == DROCE_DROP_IP_SHORT || d == DROCE_DROP_IP_VERSION || d == DROCE_DROP_IP_IHL ||
	       d == DROCE_DROP_UDP_SHORT || d == DROCE_DROP_DST_MAC || d == DROCE_DROP_VLAN_OTHER ||
	       d == DROCE_DROP_VLAN_UNTAGGED || d == DROCE_DROP_VLAN_TAGGED;
}

/* The shard owning a QPN: its top shard_bits bits (droce_dev_attr.shard_bits); a QPN naming no
 * shard of the nb_shards (or none) belongs to shard 0, whose engine drops it as unknown.
 * Multicast (0xFFFFFF) is shard 0's too: groups are joined on shard 0's device. */
static inline unsigned int
droce_rt_qpn_shard(uint32_t qpn, unsigned int shard_bits, unsigned int nb_shards)
{
	unsigned int s;

	if (shard_bits == 0 || qpn >= 0xFFFFFF)
		return 0;
	s = qpn >> (24 - shard_bits);
	return s < nb_shards ? s : 0;
}

/* The reasons the runtime itself counts (rt.drop_<name>): what the classifier names and the
 * runtime's own (class RUNTIME); the engine counts the rest (dev.drop_<name>). */
bool droce_rt_drop_counted(enum droce_drop d);

#endif /* DROCE_RT_CLASSIFY_H */
