/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RX_ADDR_H
#define DROCE_RX_ADDR_H

/*
 * Receive address checks: a frame is acted on only when it was addressed to this port and, on
 * a connected QP, came from that QP's peer. Linux rxe's check_addr (and the kernel's IP layer
 * in front of it) is the floor. IPv4 addresses are compared as the 32-bit numbers of the frame
 * with values precomputed per device and per QP: no GID is built per frame.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "droce_byteorder.h"
#include "droce_internal.h"
#include "wire/droce_ipv4.h"

/* Annex A17.4 (RoCEv2 rides IP on Ethernet, the link layer is IEEE 802.3): a frame for this
 * port carries its MAC; broadcast never; a multicast MAC only as a group's joined here. */
static inline bool
droce_rx_mac_ok(const struct droce_dev *dev, const uint8_t *dmac)
{
	if (droce_likely(memcmp(dmac, dev->attr.mac, 6) == 0))
		return true;
	return (dmac[0] & 1) && droce_mcast_mac_joined(dev, dmac);
}

/* IBTA 9.6.1 header validation with Annex A17.4 (the IP destination is the GRH's DGID): one of
 * this port's GIDs. An IPv6 datagram matches only IPv6 GIDs, an IPv4 one only IPv4 GIDs. */
static inline bool
droce_rx_dip_ours(const struct droce_dev *dev, const struct droce_pkt *p, const uint8_t *frame)
{
	unsigned int i;

	if (droce_likely(p->ip_ver == 4)) {
		const struct droce_ipv4_hdr *ip = (const void *)(frame + p->l3_off);
		uint32_t dip = droce_be32_to_cpu(ip->dst);

		for (i = 0; i < dev->n_gid_v4; i++)
			if (dev->gid_v4[i] == dip)
				return true;
		return false;
	}
	for (i = 0; i < dev->attr.num_gids; i++)
		if (!droce_gid_is_v4(dev->attr.gids[i]) &&
		    memcmp(dev->attr.gids[i], p->dgid, 16) == 0)
			return true;
	return false;
}

/* RC/UC, IBTA 9.6.1 with Annex A17.4 (a connected QP's packets carry its path's GIDs, as the
 * IP addresses), as rxe's check_addr: the destination is exactly the QP's own GID (its
 * sgid_index), the source exactly its remote GID (the AV's dgid). DROCE_DROP_NONE when both
 * hold. */
static inline enum droce_drop
droce_rx_path_check(const struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	if (droce_likely(p->ip_ver == 4)) {
		const struct droce_ipv4_hdr *ip = (const void *)(frame + p->l3_off);

		if (!qp->rx_v4 || droce_be32_to_cpu(ip->dst) != qp->rx_dip)
			return DROCE_DROP_DST_GID;
		if (droce_be32_to_cpu(ip->src) != qp->rx_sip)
			return DROCE_DROP_SRC_GID;
		return DROCE_DROP_NONE;
	}
	if (qp->rx_v4 || memcmp(p->dgid, qp->tmpl.sgid, 16) != 0)
		return DROCE_DROP_DST_GID;
	if (memcmp(p->sgid, qp->tmpl.dgid, 16) != 0)
		return DROCE_DROP_SRC_GID;
	return DROCE_DROP_NONE;
}

#endif /* DROCE_RX_ADDR_H */
