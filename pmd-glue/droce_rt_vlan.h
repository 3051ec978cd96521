/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_VLAN_H
#define DROCE_RT_VLAN_H

/*
 * The configured 802.1Q VLAN on transmit. droce_rt_resolve_av() puts the tag in the address
 * vectors it resolves, so the engine builds those frames tagged; an application that builds its
 * own vector (droce-perf: droce_rt_resolve() then droce_qp_modify()) sends untagged frames, which
 * get the tag here. Safe after the build: RoCEv2's ICRC starts at the IP header (IBTA A17.3.3).
 */
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "droce_rt_config.h"
#include "wire/droce_eth.h"

static inline uint16_t
droce_rt_vlan_tci(const struct droce_rt_config *cfg)
{
	return (uint16_t)(cfg->vlan_pcp << DROCE_VLAN_PCP_SHIFT | cfg->vlan);
}

/* Tag m (an untagged frame of ours, headroom untouched) with cfg's VLAN; returns its length.
 * Engine frames from droce_rt_resolve_av() AVs are built tagged already (one compare here);
 * this catches the rest: AVs an application filled itself, frames sent as they are. */
static inline uint32_t
droce_rt_vlan_tx(struct rte_mbuf *m, const struct droce_rt_config *cfg)
{
	const struct droce_eth_hdr *eth = rte_pktmbuf_mtod(m, const struct droce_eth_hdr *);

	if (m->data_len >= sizeof(*eth) &&
	    eth->ether_type != droce_cpu_to_be16(DROCE_ETHERTYPE_VLAN)) {
		m->vlan_tci = droce_rt_vlan_tci(cfg);
		rte_vlan_insert(&m); /* only fails on an indirect or shared mbuf: not ours */
	}
	return rte_pktmbuf_pkt_len(m);
}

#endif /* DROCE_RT_VLAN_H */
