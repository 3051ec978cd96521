/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame validation and decoding, one check after another in wire order. */
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
		return (gid[12] & 0xF0) == 0xE0;	/* 224.0.0.0/4 (RFC 5771) */
	return gid[0] == 0xFF;				/* ff00::/8 (RFC 4291 2.7) */
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

/* Ethernet and optional 802.1Q; returns the L3 EtherType via *etype. */
static enum droce_drop
parse_l2(const uint8_t *f, uint32_t len, struct droce_pkt *p, uint16_t *etype)
{
	uint32_t off = sizeof(struct droce_eth_hdr);

	if (len < off)
		return DROCE_DROP_ETH_SHORT;
	memcpy(p->dmac, f, 6);
	memcpy(p->smac, f + 6, 6);
	*etype = droce_get_be16(f + 12);
	p->has_vlan = false;
	p->vlan_tci = 0;
	if (*etype == DROCE_ETHERTYPE_VLAN) {
		if (len < off + sizeof(struct droce_vlan_hdr))
			return DROCE_DROP_VLAN_SHORT;
		p->has_vlan = true;
		p->vlan_tci = droce_get_be16(f + off);
		*etype = droce_get_be16(f + off + 2);
		off += sizeof(struct droce_vlan_hdr);
	}
	p->l3_off = (uint16_t)off;
	return DROCE_DROP_NONE;
}

/* IPv4 (RFC 791) as RoCEv2 uses it (IBTA A17.4.1): no fragments, UDP inside. Sets *l3_end. */
static enum droce_drop
parse_ipv4(const uint8_t *f, uint32_t len, struct droce_pkt *p, uint32_t *l3_end,
	   unsigned int flags)
{
	const uint8_t *ip = f + p->l3_off;
	uint32_t ihl, tot;

	if (len < p->l3_off + sizeof(struct droce_ipv4_hdr))
		return DROCE_DROP_IP_SHORT;
	if ((ip[0] >> 4) != 4)
		return DROCE_DROP_IP_VERSION;
	ihl = (uint32_t)(ip[0] & 0x0F) * 4;
	if (ihl < sizeof(struct droce_ipv4_hdr) || len < p->l3_off + ihl)
		return DROCE_DROP_IP_IHL;
	/* the header's fields before its length is judged: a capture that cut a frame still
	 * tells what it was (droce-pcap) */
	p->ip_ver = 4;
	p->tclass = ip[1];
	p->hop_limit = ip[8];
	p->flow_label = 0;
	p->ip_id = droce_get_be16(ip + 4);
	droce_gid_from_v4(p->sgid, droce_get_be32(ip + 12));
	droce_gid_from_v4(p->dgid, droce_get_be32(ip + 16));
	tot = droce_get_be16(ip + 2);
	if (tot < ihl || len < p->l3_off + tot)
		return DROCE_DROP_IP_LEN;
	/* A fragment cannot be checked (the ICRC spans the datagram): RFC 791, IBTA A17.4.1. */
	if (droce_get_be16(ip + 6) & (DROCE_IPV4_MF | DROCE_IPV4_OFF_MASK))
		return DROCE_DROP_IP_FRAG;
	if (!(flags & DROCE_PARSE_NO_IPCSUM) && droce_ipv4_csum(ip, ihl) != 0)
		return DROCE_DROP_IP_CSUM;
	if (ip[9] != DROCE_IPPROTO_UDP)
		return DROCE_DROP_NOT_UDP;
	p->l4_off = (uint16_t)(p->l3_off + ihl);
	*l3_end = p->l3_off + tot;
	return DROCE_DROP_NONE;
}

/* IPv6 (RFC 8200); RoCEv2 puts UDP directly after the fixed header (IBTA A17.4.2). */
static enum droce_drop
parse_ipv6(const uint8_t *f, uint32_t len, struct droce_pkt *p, uint32_t *l3_end)
{
	const uint8_t *ip = f + p->l3_off;
	uint32_t vtc, plen;

	if (len < p->l3_off + sizeof(struct droce_ipv6_hdr))
		return DROCE_DROP_IP_SHORT;
	vtc = droce_get_be32(ip);
	if ((vtc >> 28) != 6)
		return DROCE_DROP_IP_VERSION;
	p->ip_ver = 6;
	p->tclass = (uint8_t)(vtc >> DROCE_IPV6_TC_SHIFT);
	p->flow_label = vtc & DROCE_IPV6_FLOW_MASK;
	p->hop_limit = ip[7];
	p->ip_id = 0;
	memcpy(p->sgid, ip + 8, 16);
	memcpy(p->dgid, ip + 24, 16);
	plen = droce_get_be16(ip + 4);
	if (len < p->l3_off + sizeof(struct droce_ipv6_hdr) + plen)
		return DROCE_DROP_IP_LEN;
	if (ip[6] != DROCE_IPPROTO_UDP)
		return DROCE_DROP_NOT_UDP;
	p->l4_off = (uint16_t)(p->l3_off + sizeof(struct droce_ipv6_hdr));
	*l3_end = p->l4_off + plen;
	return DROCE_DROP_NONE;
}

/* Extension headers named by the opcode table, in host order. */
void
droce_parse_ext(const uint8_t *bth, const struct droce_opcode_info *op, struct droce_pkt *p)
{
	const uint8_t *h;

	if (op->hdrs & H_DETH) {
		h = bth + op->off[DROCE_HDR_DETH];
		p->deth_qkey = droce_get_be32(h);
		p->deth_sqpn = droce_get_be32(h + 4) & DROCE_DETH_SQP_MASK;
	}
	if (op->hdrs & H_RETH) {
		h = bth + op->off[DROCE_HDR_RETH];
		p->reth_va = droce_get_be64(h);
		p->reth_rkey = droce_get_be32(h + 8);
		p->reth_len = droce_get_be32(h + 12);
	}
	if (op->hdrs & H_ATMETH) {
		h = bth + op->off[DROCE_HDR_ATMETH];
		p->atomic_va = droce_get_be64(h);
		p->atomic_rkey = droce_get_be32(h + 8);
		p->atomic_swap_add = droce_get_be64(h + 12);
		p->atomic_compare = droce_get_be64(h + 20);
	}
	if (op->hdrs & H_AETH) {
		uint32_t v = droce_get_be32(bth + op->off[DROCE_HDR_AETH]);

		p->aeth_syn = (uint8_t)(v >> DROCE_AETH_SYN_SHIFT);
		p->aeth_msn = v & DROCE_AETH_MSN_MASK;
	}
	if (op->hdrs & H_ATMACK)
		p->atomic_orig = droce_get_be64(bth + op->off[DROCE_HDR_ATMACK]);
	if (op->hdrs & H_IMMDT)
		p->imm = droce_get_be32(bth + op->off[DROCE_HDR_IMMDT]);
	if (op->hdrs & H_IETH)
		p->ieth_rkey = droce_get_be32(bth + op->off[DROCE_HDR_IETH]);
}

/* BTH and what follows: [bth, end) is the UDP payload, ICRC included. */
static enum droce_drop
parse_transport(const uint8_t *f, uint32_t end, struct droce_pkt *p, unsigned int flags)
{
	const uint8_t *bth = f + p->bth_off;
	const struct droce_opcode_info *op;
	uint32_t avail, w;

	if (end < p->bth_off + sizeof(struct droce_bth) + DROCE_ICRC_LEN)
		return DROCE_DROP_BTH_SHORT;
	p->opcode = bth[0];
	p->se = (bth[1] & DROCE_BTH_SE) != 0;
	p->mig = (bth[1] & DROCE_BTH_MIG) != 0;
	p->padcnt = (bth[1] & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT;
	p->tver = bth[1] & DROCE_BTH_TVER_MASK;
	p->pkey = droce_get_be16(bth + 2);
	w = droce_get_be32(bth + 4);
	p->fecn = (w & DROCE_BTH_FECN) != 0;
	p->becn = (w & DROCE_BTH_BECN) != 0;
	p->srcap = (w & DROCE_BTH_SRCAP) != 0;
	p->dqpn = w & DROCE_BTH_QPN_MASK;
	w = droce_get_be32(bth + 8);
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
	droce_parse_ext(bth, op, p);
	/* IBTA A17.3.3 / 7.8.1: the ICRC covers the packet from the IP header on. */
	if (!(flags & DROCE_PARSE_NO_ICRC) &&
	    droce_icrc(f + p->l3_off, end - DROCE_ICRC_LEN - p->l3_off) != p->icrc)
		return DROCE_DROP_ICRC;
	return DROCE_DROP_NONE;
}

enum droce_drop
droce_parse(const uint8_t *f, uint32_t len, struct droce_pkt *p, unsigned int flags)
{
	enum droce_drop r;
	uint32_t l3_end, udp_len;
	uint16_t etype;

	r = parse_l2(f, len, p, &etype);
	if (r != DROCE_DROP_NONE)
		return r;
	if (etype == DROCE_ETHERTYPE_IPV4)
		r = parse_ipv4(f, len, p, &l3_end, flags);
	else if (etype == DROCE_ETHERTYPE_IPV6)
		r = parse_ipv6(f, len, p, &l3_end);
	else
		return DROCE_DROP_NOT_IP;
	if (r != DROCE_DROP_NONE)
		return r;
	if (l3_end < p->l4_off + sizeof(struct droce_udp_hdr))
		return DROCE_DROP_UDP_SHORT;
	p->udp_sport = droce_get_be16(f + p->l4_off);
	p->udp_csum = droce_get_be16(f + p->l4_off + 6);
	/* IBTA A17.2: RoCEv2 is identified by UDP destination port 4791. */
	if (droce_get_be16(f + p->l4_off + 2) != DROCE_ROCEV2_UDP_PORT)
		return DROCE_DROP_NOT_ROCE_PORT;
	/* RFC 768: the UDP length spans exactly what the IP header says is left. */
	udp_len = droce_get_be16(f + p->l4_off + 4);
	if (udp_len != l3_end - p->l4_off)
		return DROCE_DROP_UDP_LEN;
	p->bth_off = (uint16_t)(p->l4_off + sizeof(struct droce_udp_hdr));
	return parse_transport(f, l3_end, p, flags);
}
