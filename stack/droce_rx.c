/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive fast path for the frame connected QPs exchange: Ethernet (with or without one 802.1Q
 * tag), IPv4 without options, RoCEv2. It makes droce_parse()'s checks, each one, at fixed offsets
 * from the IP header. It never decides a drop: a frame that fails any check (or any other
 * frame) goes to droce_parse(), which names the reason and counts it.
 */
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"
#include "wire/droce_bth.h"
#include "wire/droce_eth.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_udp.h"

/* Offsets from the IP header. */
enum {
	RX_L4 = sizeof(struct droce_ipv4_hdr),
	RX_BTH = RX_L4 + sizeof(struct droce_udp_hdr),
	/* IPv4 + UDP + BTH + ICRC: the shortest RoCEv2 datagram */
	RX_MIN_TOT = RX_BTH + sizeof(struct droce_bth) + DROCE_ICRC_LEN,
};

/* The IPv4 frame from its IP header at l3, a constant in each caller below (so each copy works
 * at fixed offsets). */
static inline __attribute__((always_inline)) bool
parse_v4(const uint8_t *f, uint32_t len, struct droce_pkt *p, unsigned int flags,
	 struct droce_icrc_v4_cache *cache, uint32_t cache_mask, const uint32_t l3, uint16_t tci)
{
	const uint8_t *ip = f + l3, *udp = ip + RX_L4, *bth = ip + RX_BTH;
	const struct droce_opcode_info *op;
	uint32_t tot, avail, w;
	uint8_t b1, pad;

	if (len < l3 + RX_MIN_TOT)
		return false;
	/* RFC 791: version 4, IHL 5 (options take the full parser); the total length covers
	 * UDP, BTH and ICRC and lies inside the frame. */
	if (ip[0] != DROCE_IPV4_VERSION_IHL)
		return false;
	tot = droce_get_be16(ip + 2);
	if (tot < RX_MIN_TOT || l3 + tot > len)
		return false;
	/* IBTA A17.4.1: no fragments; UDP inside; RFC 791 header checksum */
	if ((droce_get_be16(ip + 6) & (DROCE_IPV4_MF | DROCE_IPV4_OFF_MASK)) ||
	    ip[9] != DROCE_IPPROTO_UDP)
		return false;
	if (!(flags & DROCE_PARSE_NO_IPCSUM) && droce_ipv4_csum(ip, 20) != 0)
		return false;
	/* IBTA A17.2: UDP port 4791; RFC 768: the UDP length is what IP leaves */
	if (droce_get_be16(udp + 2) != DROCE_ROCEV2_UDP_PORT ||
	    droce_get_be16(udp + 4) != tot - RX_L4)
		return false;
	b1 = bth[1];
	/* IBTA C9-2: TVer 0; C9-3: a supported opcode; C9-4: all its headers present */
	if ((b1 & DROCE_BTH_TVER_MASK) != DROCE_BTH_TVER)
		return false;
	op = droce_opcode_info(bth[0]);
	if (op->name == NULL)
		return false;
	avail = tot - RX_BTH - DROCE_ICRC_LEN;
	if (avail < op->hdr_len)
		return false;
	avail -= op->hdr_len;
	/* IBTA 9.2.4, C9-24..27: pad inside a multiple-of-4 payload, on LAST/ONLY only */
	pad = (b1 & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
	if ((avail & 3) != 0 || avail < pad || (pad != 0 && !(op->flags & DROCE_OPF_LAST)) ||
	    (avail != 0 && !(op->flags & DROCE_OPF_PAYLOAD)))
		return false;
	/* IBTA A17.3.3: the ICRC from the IP header on; the prefix of a connection's frames is
	 * folded once per DestQP slot (droce_icrc_v4_cached gives the same value) */
	p->icrc = droce_icrc_get(ip + tot - DROCE_ICRC_LEN);
	if (!(flags & DROCE_PARSE_NO_ICRC)) {
		uint32_t icrc = cache == NULL ? droce_icrc_v4(ip, tot - DROCE_ICRC_LEN) :
			droce_icrc_v4_cached(&cache[droce_get_be32(bth + 4) & cache_mask], ip,
					     tot - DROCE_ICRC_LEN);

		if (icrc != p->icrc)
			return false;
	}

	p->l3_off = (uint16_t)l3;
	p->l4_off = (uint16_t)(l3 + RX_L4);
	p->bth_off = (uint16_t)(l3 + RX_BTH);
	p->pay_off = (uint16_t)(l3 + RX_BTH + op->hdr_len);
	p->pay_len = avail - pad;
	p->frame_len = l3 + tot;
	p->has_vlan = l3 != sizeof(struct droce_eth_hdr);
	p->vlan_tci = tci;
	p->ip_ver = 4;
	p->tclass = ip[1];
	p->hop_limit = ip[8];
	p->flow_label = 0;
	p->ip_id = droce_get_be16(ip + 4);
	p->udp_sport = droce_get_be16(udp);
	p->udp_csum = droce_get_be16(udp + 6);
	p->opcode = bth[0];
	p->se = (b1 & DROCE_BTH_SE) != 0;
	p->mig = (b1 & DROCE_BTH_MIG) != 0;
	p->padcnt = pad;
	p->tver = DROCE_BTH_TVER;
	p->pkey = droce_get_be16(bth + 2);
	w = droce_get_be32(bth + 4);
	p->fecn = (w & DROCE_BTH_FECN) != 0;
	p->becn = (w & DROCE_BTH_BECN) != 0;
	p->srcap = (w & DROCE_BTH_SRCAP) != 0;
	p->dqpn = w & DROCE_BTH_QPN_MASK;
	w = droce_get_be32(bth + 8);
	p->ackreq = (w & DROCE_BTH_ACKREQ) != 0;
	p->psn = w & DROCE_BTH_PSN_MASK;
	if (op->hdrs)
		droce_parse_ext(bth, op, p);
	return true;
}

bool
droce_parse_fast(const uint8_t *f, uint32_t len, struct droce_pkt *p, unsigned int flags,
		 struct droce_icrc_v4_cache *cache, uint32_t cache_mask)
{
	const uint32_t l2 = sizeof(struct droce_eth_hdr);

	/* Ethernet, one optional 802.1Q tag (as droce_parse reads it), IPv4 */
	if (len < l2 + sizeof(struct droce_vlan_hdr))
		return false;
	if (droce_get_be16(f + 12) == DROCE_ETHERTYPE_IPV4)
		return parse_v4(f, len, p, flags, cache, cache_mask, l2, 0);
	if (droce_get_be16(f + 12) == DROCE_ETHERTYPE_VLAN &&
	    droce_get_be16(f + l2 + 2) == DROCE_ETHERTYPE_IPV4)
		return parse_v4(f, len, p, flags, cache, cache_mask,
				l2 + sizeof(struct droce_vlan_hdr), droce_get_be16(f + l2));
	return false;
}

void
droce_parse_fast_addrs(const uint8_t *f, struct droce_pkt *p)
{
	memcpy(p->dmac, f, 6);
	memcpy(p->smac, f + 6, 6);
	droce_gid_from_v4(p->sgid, droce_get_be32(f + p->l3_off + 12));
	droce_gid_from_v4(p->dgid, droce_get_be32(f + p->l3_off + 16));
}
