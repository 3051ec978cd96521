/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame validation and decoding, one check after another in wire order. One walk serves two
 * shapes: any frame (droce_parse) and, on the receive path, Ethernet (802.1Q or not) with IPv4
 * without options (droce_parse_rx), where the same checks are compiled with the header offsets
 * as constants. Both name the same reason for the same frame.
 */
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"
#include "wire/droce_aeth.h"
#include "wire/droce_atomicacketh.h"
#include "wire/droce_atomiceth.h"
#include "wire/droce_bth.h"
#include "wire/droce_deth.h"
#include "wire/droce_eth.h"
#include "wire/droce_ieth.h"
#include "wire/droce_immdt.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_ipv6.h"
#include "wire/droce_reth.h"
#include "wire/droce_udp.h"

static const uint8_t v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };

bool
droce_gid_is_v4(const uint8_t gid[16])
{
	return memcmp(gid, v4_mapped_prefix, sizeof(v4_mapped_prefix)) == 0;
}

bool
droce_gid_is_multicast(const uint8_t gid[16])
{
	if (droce_gid_is_v4(gid))
		return (gid[12] & 0xF0) == 0xE0; /* 224.0.0.0/4 (RFC 5771) */
	return gid[0] == 0xFF;			 /* ff00::/8 (RFC 4291 2.7) */
}

void
droce_gid_from_v4(uint8_t gid[16], uint32_t addr)
{
	memcpy(gid, v4_mapped_prefix, sizeof(v4_mapped_prefix));
	droce_put_be32(gid + 12, addr);
}

void
droce_gid_mcast_mac(const uint8_t gid[16], uint8_t mac[6])
{
	/* IPv4: 01:00:5e and the low 23 bits; IPv6: 33:33 and the low 32 bits */
	if (droce_gid_is_v4(gid)) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7F;
		mac[4] = gid[14];
		mac[5] = gid[15];
	} else {
		mac[0] = mac[1] = 0x33;
		memcpy(mac + 2, gid + 12, 4);
	}
}

/* Ethernet and optional 802.1Q; returns the L3 EtherType via *etype. addrs: the MAC addresses
 * too (the receive path compares the frame's own bytes instead). */
static inline __attribute__((always_inline)) enum droce_drop
parse_l2(const uint8_t *f, uint32_t len, struct droce_pkt *p, uint16_t *etype, const bool addrs)
{
	const struct droce_eth_hdr *eth = (const void *)f;
	const struct droce_vlan_hdr *vlan = (const void *)(eth + 1);
	uint32_t off = sizeof(*eth);

	if (len < off)
		return DROCE_DROP_ETH_SHORT;
	if (addrs) {
		memcpy(p->dmac, eth->dst, sizeof(p->dmac));
		memcpy(p->smac, eth->src, sizeof(p->smac));
	}
	*etype = droce_be16_to_cpu(eth->ether_type);
	p->has_vlan = false;
	p->vlan_tci = 0;
	if (*etype == DROCE_ETHERTYPE_VLAN) {
		if (len < off + sizeof(*vlan))
			return DROCE_DROP_VLAN_SHORT;
		p->has_vlan = true;
		p->vlan_tci = droce_be16_to_cpu(vlan->tci);
		*etype = droce_be16_to_cpu(vlan->ether_type);
		off += sizeof(*vlan);
	}
	p->l3_off = (uint16_t)off;
	return DROCE_DROP_NONE;
}

/* IPv4 (RFC 791) as RoCEv2 uses it (IBTA A17.4.1): no fragments, UDP inside. Sets *l3_end.
 * fixed_l3 (a constant where the caller inlines it): the header is at that offset and its first
 * byte was seen to be 0x45 (version 4, IHL 5), and the addresses are left out; 0: at
 * p->l3_off, any IHL. ident: only what finds the protocol (droce_parse_l4); the datagram then
 * runs to the frame's end. */
static inline __attribute__((always_inline)) enum droce_drop
parse_ipv4(const uint8_t *f, uint32_t len, struct droce_pkt *p, uint32_t *l3_end,
	   unsigned int flags, const uint32_t fixed_l3, const bool ident)
{
	const uint32_t l3 = fixed_l3 != 0 ? fixed_l3 : p->l3_off;
	const struct droce_ipv4_hdr *ip = (const void *)(f + l3);
	uint32_t ihl, tot;

	if (len < l3 + sizeof(*ip))
		return DROCE_DROP_IP_SHORT;
	if (fixed_l3 != 0) {
		ihl = sizeof(*ip);
	} else {
		if ((ip->version_ihl >> 4) != 4)
			return DROCE_DROP_IP_VERSION;
		ihl = (uint32_t)(ip->version_ihl & 0x0F) * 4;
		if (ihl < sizeof(*ip) || len < l3 + ihl)
			return DROCE_DROP_IP_IHL;
	}
	/* the header's fields before its length is judged: a capture that cut a frame still
	 * tells what it was (droce-pcap) */
	p->ip_ver = 4;
	p->tclass = ip->tos;
	p->hop_limit = ip->ttl;
	p->flow_label = 0;
	p->ip_id = droce_be16_to_cpu(ip->id);
	if (fixed_l3 == 0 && !ident) {
		droce_gid_from_v4(p->sgid, droce_be32_to_cpu(ip->src));
		droce_gid_from_v4(p->dgid, droce_be32_to_cpu(ip->dst));
	}
	tot = ident ? len - l3 : droce_be16_to_cpu(ip->total_len);
	if (!ident && (tot < ihl || len < l3 + tot))
		return DROCE_DROP_IP_LEN;
	/* A fragment cannot be checked (the ICRC spans the datagram): RFC 791, IBTA A17.4.1. */
	if (!ident && droce_be16_to_cpu(ip->frag_off) & (DROCE_IPV4_MF | DROCE_IPV4_OFF_MASK))
		return DROCE_DROP_IP_FRAG;
	if (!ident && !(flags & DROCE_PARSE_NO_IPCSUM) && droce_ipv4_csum(ip, ihl) != 0)
		return DROCE_DROP_IP_CSUM;
	if (ip->proto != DROCE_IPPROTO_UDP)
		return DROCE_DROP_NOT_UDP;
	p->l4_off = (uint16_t)(l3 + ihl);
	*l3_end = l3 + tot;
	return DROCE_DROP_NONE;
}

/* IPv6 (RFC 8200); RoCEv2 puts UDP directly after the fixed header (IBTA A17.4.2). ident: as
 * parse_ipv4's. */
static inline __attribute__((always_inline)) enum droce_drop
parse_ipv6(const uint8_t *f, uint32_t len, struct droce_pkt *p, uint32_t *l3_end, const bool ident)
{
	const struct droce_ipv6_hdr *ip = (const void *)(f + p->l3_off);
	uint32_t vtc, plen;

	if (len < p->l3_off + sizeof(*ip))
		return DROCE_DROP_IP_SHORT;
	vtc = droce_be32_to_cpu(ip->vtc_flow);
	if ((vtc >> 28) != 6)
		return DROCE_DROP_IP_VERSION;
	p->ip_ver = 6;
	p->tclass = (uint8_t)(vtc >> DROCE_IPV6_TC_SHIFT);
	p->flow_label = vtc & DROCE_IPV6_FLOW_MASK;
	p->hop_limit = ip->hop_limit;
	p->ip_id = 0;
	/* the GIDs are the addresses IPv6's checks read: always filled */
	memcpy(p->sgid, ip->src, sizeof(p->sgid));
	memcpy(p->dgid, ip->dst, sizeof(p->dgid));
	plen = ident ? len - p->l3_off - (uint32_t)sizeof(*ip) : droce_be16_to_cpu(ip->payload_len);
	if (len < p->l3_off + sizeof(*ip) + plen)
		return DROCE_DROP_IP_LEN;
	if (ip->next_hdr != DROCE_IPPROTO_UDP)
		return DROCE_DROP_NOT_UDP;
	p->l4_off = (uint16_t)(p->l3_off + sizeof(*ip));
	*l3_end = p->l4_off + plen;
	return DROCE_DROP_NONE;
}

/* UDP (RFC 768) as RoCEv2's carrier; [l4_off, l3_end) is the datagram. ident: the port only. */
static inline __attribute__((always_inline)) enum droce_drop
parse_udp(const uint8_t *f, uint32_t l3_end, struct droce_pkt *p, const bool ident)
{
	const struct droce_udp_hdr *udp = (const void *)(f + p->l4_off);

	if (l3_end < p->l4_off + sizeof(*udp))
		return DROCE_DROP_UDP_SHORT;
	p->udp_sport = droce_be16_to_cpu(udp->src_port);
	p->udp_csum = droce_be16_to_cpu(udp->csum);
	/* IBTA A17.2: RoCEv2 is identified by UDP destination port 4791. */
	if (udp->dst_port != droce_cpu_to_be16(DROCE_ROCEV2_UDP_PORT))
		return DROCE_DROP_NOT_ROCE_PORT;
	/* RFC 768: the UDP length spans exactly what the IP header says is left. */
	if (!ident && droce_be16_to_cpu(udp->len) != l3_end - p->l4_off)
		return DROCE_DROP_UDP_LEN;
	p->bth_off = (uint16_t)(p->l4_off + sizeof(*udp));
	return DROCE_DROP_NONE;
}

/* Extension headers named by the opcode table, in host order. */
static inline __attribute__((always_inline)) void
parse_ext(const uint8_t *bth, const struct droce_opcode_info *op, struct droce_pkt *p)
{
	if (op->hdrs & H_DETH) {
		const struct droce_deth *h = (const void *)(bth + op->off[DROCE_HDR_DETH]);

		p->deth_qkey = droce_be32_to_cpu(h->qkey);
		p->deth_sqpn = droce_be32_to_cpu(h->src_qp) & DROCE_DETH_SQP_MASK;
	}
	if (op->hdrs & H_RETH) {
		const struct droce_reth *h = (const void *)(bth + op->off[DROCE_HDR_RETH]);

		p->reth_va = droce_be64_to_cpu(h->va);
		p->reth_rkey = droce_be32_to_cpu(h->rkey);
		p->reth_len = droce_be32_to_cpu(h->dma_len);
	}
	if (op->hdrs & H_ATMETH) {
		const struct droce_atomiceth *h = (const void *)(bth + op->off[DROCE_HDR_ATMETH]);

		p->atomic_va = droce_be64_to_cpu(h->va);
		p->atomic_rkey = droce_be32_to_cpu(h->rkey);
		p->atomic_swap_add = droce_be64_to_cpu(h->swap_add);
		p->atomic_compare = droce_be64_to_cpu(h->compare);
	}
	if (op->hdrs & H_AETH) {
		const struct droce_aeth *h = (const void *)(bth + op->off[DROCE_HDR_AETH]);
		uint32_t v = droce_be32_to_cpu(h->syn_msn);

		p->aeth_syn = (uint8_t)(v >> DROCE_AETH_SYN_SHIFT);
		p->aeth_msn = v & DROCE_AETH_MSN_MASK;
	}
	if (op->hdrs & H_ATMACK) {
		const struct droce_atomicacketh *h =
			(const void *)(bth + op->off[DROCE_HDR_ATMACK]);

		p->atomic_orig = droce_be64_to_cpu(h->orig);
	}
	if (op->hdrs & H_IMMDT) {
		const struct droce_immdt *h = (const void *)(bth + op->off[DROCE_HDR_IMMDT]);

		p->imm = droce_be32_to_cpu(h->imm);
	}
	if (op->hdrs & H_IETH) {
		const struct droce_ieth *h = (const void *)(bth + op->off[DROCE_HDR_IETH]);

		p->ieth_rkey = droce_be32_to_cpu(h->rkey);
	}
}

void
droce_parse_ext(const uint8_t *bth, const struct droce_opcode_info *op, struct droce_pkt *p)
{
	parse_ext(bth, op, p);
}

/* BTH and what follows: [bth, end) is the UDP payload, ICRC included. v4_fixed: the IP header
 * is IPv4 of IHL 5, whose ICRC takes the constant-offset masking (through cache, if any:
 * cache_mask + 1 prefix states indexed by DestQP); the value is the same either way. */
static inline __attribute__((always_inline)) enum droce_drop
parse_transport(const uint8_t *f, uint32_t end, struct droce_pkt *p, unsigned int flags,
		struct droce_icrc_v4_cache *cache, uint32_t cache_mask, const bool v4_fixed)
{
	const struct droce_bth *bth = (const void *)(f + p->bth_off);
	const struct droce_opcode_info *op;
	uint32_t avail, w, n;

	if (end < p->bth_off + sizeof(*bth) + DROCE_ICRC_LEN)
		return DROCE_DROP_BTH_SHORT;
	p->opcode = bth->opcode;
	p->se = (bth->flags & DROCE_BTH_SE) != 0;
	p->mig = (bth->flags & DROCE_BTH_MIG) != 0;
	p->padcnt = (bth->flags & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
	p->tver = bth->flags & DROCE_BTH_TVER_MASK;
	p->pkey = droce_be16_to_cpu(bth->pkey);
	w = droce_be32_to_cpu(bth->fb_dqpn);
	p->fecn = (w & DROCE_BTH_FECN) != 0;
	p->becn = (w & DROCE_BTH_BECN) != 0;
	p->srcap = (w & DROCE_BTH_SRCAP) != 0;
	p->dqpn = w & DROCE_BTH_QPN_MASK;
	w = droce_be32_to_cpu(bth->ack_psn);
	p->ackreq = (w & DROCE_BTH_ACKREQ) != 0;
	p->psn = w & DROCE_BTH_PSN_MASK;
	p->icrc = droce_icrc_get(f + end - DROCE_ICRC_LEN);
	p->frame_len = end;

	/* IBTA C9-2 (9.6.1.2): TVer other than 0 is silently dropped. */
	if (p->tver != DROCE_BTH_TVER)
		return DROCE_DROP_BTH_TVER;
	/* IBTA C9-3: unsupported opcodes (RD, reserved, manufacturer-specific) are dropped. */
	op = droce_opcode_info(p->opcode);
	if (op->name == NULL)
		return DROCE_DROP_OPCODE;
	/* IBTA C9-4 (9.6.1.3): the packet must hold every header its opcode implies. */
	avail = end - p->bth_off - DROCE_ICRC_LEN;
	if (avail < op->hdr_len)
		return DROCE_DROP_HDR_SHORT;
	avail -= op->hdr_len;
	/* IBTA 9.2.4 and C9-24..C9-27: payload + pad is a multiple of 4 and the pad lies inside
	 * it; FIRST and MIDDLE packets are full path-MTU packets and carry no pad. */
	if ((avail & 3) != 0 || avail < p->padcnt)
		return DROCE_DROP_PADCNT;
	if (p->padcnt != 0 && !(op->flags & DROCE_OPF_LAST))
		return DROCE_DROP_PADCNT;
	if (avail != 0 && !(op->flags & DROCE_OPF_PAYLOAD))
		return DROCE_DROP_PAYLOAD_LEN;
	p->pay_off = (uint16_t)(p->bth_off + op->hdr_len);
	p->pay_len = avail - p->padcnt;
	if (op->hdrs)
		parse_ext((const uint8_t *)bth, op, p);
	/* IBTA A17.3.3 / 7.8.1: the ICRC covers the packet from the IP header on. */
	if (!(flags & DROCE_PARSE_NO_ICRC)) {
		n = end - DROCE_ICRC_LEN - p->l3_off;
		if (!v4_fixed)
			w = droce_icrc(f + p->l3_off, n);
		else if (cache == NULL)
			w = droce_icrc_v4(f + p->l3_off, n);
		else
			w = droce_icrc_v4_cached(&cache[p->dqpn & cache_mask], f + p->l3_off, n);
		if (w != p->icrc)
			return DROCE_DROP_ICRC;
	}
	return DROCE_DROP_NONE;
}

/* Everything after the L2 step, for any shape. */
static enum droce_drop
parse_l3(const uint8_t *f, uint32_t len, struct droce_pkt *p, unsigned int flags, uint16_t etype)
{
	enum droce_drop r;
	uint32_t l3_end;

	if (etype == DROCE_ETHERTYPE_IPV4)
		r = parse_ipv4(f, len, p, &l3_end, flags, 0, false);
	else if (etype == DROCE_ETHERTYPE_IPV6)
		r = parse_ipv6(f, len, p, &l3_end, false);
	else
		return DROCE_DROP_NOT_IP;
	if (r != DROCE_DROP_NONE)
		return r;
	r = parse_udp(f, l3_end, p, false);
	if (r != DROCE_DROP_NONE)
		return r;
	return parse_transport(f, l3_end, p, flags, NULL, 0, false);
}

enum droce_drop
droce_parse(const uint8_t *f, uint32_t len, struct droce_pkt *p, unsigned int flags)
{
	enum droce_drop r;
	uint16_t etype;

	r = parse_l2(f, len, p, &etype, true);
	if (r != DROCE_DROP_NONE)
		return r;
	return parse_l3(f, len, p, flags, etype);
}

/* parse_l3() for IPv4 of IHL 5 at the constant offset l3 (p->l3_off). */
static inline __attribute__((always_inline)) enum droce_drop
parse_v4_at(const uint8_t *f, uint32_t len, struct droce_pkt *p, unsigned int flags,
	    struct droce_icrc_v4_cache *cache, uint32_t cache_mask, const uint32_t l3)
{
	enum droce_drop r;
	uint32_t l3_end;

	r = parse_ipv4(f, len, p, &l3_end, flags, l3, false);
	if (r != DROCE_DROP_NONE)
		return r;
	r = parse_udp(f, l3_end, p, false);
	if (r != DROCE_DROP_NONE)
		return r;
	return parse_transport(f, l3_end, p, flags, cache, cache_mask, true);
}

enum droce_drop
droce_parse_rx(const uint8_t *f, uint32_t len, struct droce_pkt *p, unsigned int flags,
	       struct droce_icrc_v4_cache *cache, uint32_t cache_mask)
{
	const uint32_t l2 = sizeof(struct droce_eth_hdr);
	enum droce_drop r;
	uint16_t etype;

	r = parse_l2(f, len, p, &etype, false);
	if (r != DROCE_DROP_NONE)
		return r;
	/* The common shape, IPv4 without options right after Ethernet or one 802.1Q tag: the
	 * same checks with every offset a constant. Anything else takes the general walk. */
	if (__builtin_expect(etype == DROCE_ETHERTYPE_IPV4 &&
				     len >= p->l3_off + sizeof(struct droce_ipv4_hdr) &&
				     f[p->l3_off] == DROCE_IPV4_VERSION_IHL,
			     1))
		return p->l3_off == l2 ? parse_v4_at(f, len, p, flags, cache, cache_mask, l2) :
					 parse_v4_at(f, len, p, flags, cache, cache_mask,
						     l2 + sizeof(struct droce_vlan_hdr));
	return parse_l3(f, len, p, flags, etype);
}

enum droce_drop
droce_parse_l4(const uint8_t *f, uint32_t len, struct droce_pkt *p)
{
	enum droce_drop r;
	uint32_t l3_end;
	uint16_t etype;

	r = parse_l2(f, len, p, &etype, false);
	if (r != DROCE_DROP_NONE)
		return r;
	if (etype == DROCE_ETHERTYPE_IPV4)
		r = parse_ipv4(f, len, p, &l3_end, 0, 0, true);
	else if (etype == DROCE_ETHERTYPE_IPV6)
		r = parse_ipv6(f, len, p, &l3_end, true);
	else
		return DROCE_DROP_NOT_IP;
	if (r != DROCE_DROP_NONE)
		return r;
	return parse_udp(f, l3_end, p, true);
}

void
droce_parse_addrs(const uint8_t *f, struct droce_pkt *p)
{
	const struct droce_eth_hdr *eth = (const void *)f;
	const struct droce_ipv4_hdr *ip = (const void *)(f + p->l3_off);

	memcpy(p->dmac, eth->dst, sizeof(p->dmac));
	memcpy(p->smac, eth->src, sizeof(p->smac));
	/* IPv6's GIDs are never left out (parse_ipv6); IPv4 options' are filled (parse_l3) */
	if (p->ip_ver == 4) {
		droce_gid_from_v4(p->sgid, droce_be32_to_cpu(ip->src));
		droce_gid_from_v4(p->dgid, droce_be32_to_cpu(ip->dst));
	}
}
