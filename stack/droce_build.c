/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame building from a struct droce_pkt, driven by the opcode table. */
#include <errno.h>
#include <string.h>

#include "droce_build_hdr.h"
#include "droce_icrc.h"
#include "droce_pkt.h"
#include "wire/droce_atomicacketh.h"
#include "wire/droce_atomiceth.h"
#include "wire/droce_deth.h"
#include "wire/droce_eth.h"
#include "wire/droce_ieth.h"
#include "wire/droce_immdt.h"
#include "wire/droce_ipv6.h"
#include "wire/droce_reth.h"

static uint32_t
l3_hdr_len(const struct droce_pkt *p)
{
	return p->ip_ver == 6 ? sizeof(struct droce_ipv6_hdr) : sizeof(struct droce_ipv4_hdr);
}

uint32_t
droce_build_hdr_len(const struct droce_pkt *p)
{
	return sizeof(struct droce_eth_hdr) + (p->has_vlan ? sizeof(struct droce_vlan_hdr) : 0) +
	       l3_hdr_len(p) + sizeof(struct droce_udp_hdr) + droce_opcode_info(p->opcode)->hdr_len;
}

uint32_t
droce_build_frame_len(const struct droce_pkt *p, uint32_t pay_len)
{
	return droce_build_hdr_len(p) + ((pay_len + 3) & ~3u) + DROCE_ICRC_LEN;
}

static uint32_t
build_l2(uint8_t *b, const struct droce_pkt *p)
{
	struct droce_eth_hdr *eth = (void *)b;
	struct droce_vlan_hdr *vlan = (void *)(eth + 1);
	uint16_t etype = p->ip_ver == 6 ? DROCE_ETHERTYPE_IPV6 : DROCE_ETHERTYPE_IPV4;

	memcpy(eth->dst, p->dmac, sizeof(eth->dst));
	memcpy(eth->src, p->smac, sizeof(eth->src));
	if (!p->has_vlan) {
		eth->ether_type = droce_cpu_to_be16(etype);
		return sizeof(*eth);
	}
	eth->ether_type = droce_cpu_to_be16(DROCE_ETHERTYPE_VLAN);
	vlan->tci = droce_cpu_to_be16(p->vlan_tci);
	vlan->ether_type = droce_cpu_to_be16(etype);
	return sizeof(*eth) + sizeof(*vlan);
}

/* ip_len: bytes from the IP header to the end of the ICRC. */
static void
build_ipv4(struct droce_ipv4_hdr *ip, const struct droce_pkt *p, uint32_t ip_len)
{
	ip->version_ihl = DROCE_IPV4_VERSION_IHL;
	ip->tos = p->tclass;
	ip->total_len = droce_cpu_to_be16((uint16_t)ip_len);
	ip->id = droce_cpu_to_be16(p->ip_id);
	/* DF: RoCEv2 relies on path MTU, never on fragmentation (IBTA A17.4.1). */
	ip->frag_off = droce_cpu_to_be16(DROCE_IPV4_DF);
	ip->ttl = p->hop_limit;
	ip->proto = DROCE_IPPROTO_UDP;
	ip->hdr_csum = 0;
	memcpy(&ip->src, p->sgid + 12, sizeof(ip->src));
	memcpy(&ip->dst, p->dgid + 12, sizeof(ip->dst));
	ip->hdr_csum = droce_cpu_to_be16(droce_ipv4_csum(ip, sizeof(*ip)));
}

static void
build_ipv6(struct droce_ipv6_hdr *ip, const struct droce_pkt *p, uint32_t ip_len)
{
	ip->vtc_flow = droce_cpu_to_be32((6u << 28) | ((uint32_t)p->tclass << DROCE_IPV6_TC_SHIFT) |
					 (p->flow_label & DROCE_IPV6_FLOW_MASK));
	ip->payload_len = droce_cpu_to_be16((uint16_t)(ip_len - sizeof(*ip)));
	ip->next_hdr = DROCE_IPPROTO_UDP;
	ip->hop_limit = p->hop_limit;
	memcpy(ip->src, p->sgid, sizeof(ip->src));
	memcpy(ip->dst, p->dgid, sizeof(ip->dst));
}

void
droce_build_ext(uint8_t *bth, const struct droce_opcode_info *op, const struct droce_pkt *p)
{
	if (op->hdrs & H_DETH) {
		struct droce_deth *h = (void *)(bth + op->off[DROCE_HDR_DETH]);

		h->qkey = droce_cpu_to_be32(p->deth_qkey);
		h->src_qp = droce_cpu_to_be32(p->deth_sqpn & DROCE_DETH_SQP_MASK);
	}
	if (op->hdrs & H_RETH) {
		struct droce_reth *h = (void *)(bth + op->off[DROCE_HDR_RETH]);

		h->va = droce_cpu_to_be64(p->reth_va);
		h->rkey = droce_cpu_to_be32(p->reth_rkey);
		h->dma_len = droce_cpu_to_be32(p->reth_len);
	}
	if (op->hdrs & H_ATMETH) {
		struct droce_atomiceth *h = (void *)(bth + op->off[DROCE_HDR_ATMETH]);

		h->va = droce_cpu_to_be64(p->atomic_va);
		h->rkey = droce_cpu_to_be32(p->atomic_rkey);
		h->swap_add = droce_cpu_to_be64(p->atomic_swap_add);
		h->compare = droce_cpu_to_be64(p->atomic_compare);
	}
	if (op->hdrs & H_AETH)
		droce_aeth_set((void *)(bth + op->off[DROCE_HDR_AETH]), p->aeth_syn, p->aeth_msn);
	if (op->hdrs & H_ATMACK) {
		struct droce_atomicacketh *h = (void *)(bth + op->off[DROCE_HDR_ATMACK]);

		h->orig = droce_cpu_to_be64(p->atomic_orig);
	}
	if (op->hdrs & H_IMMDT) {
		struct droce_immdt *h = (void *)(bth + op->off[DROCE_HDR_IMMDT]);

		h->imm = droce_cpu_to_be32(p->imm);
	}
	if (op->hdrs & H_IETH) {
		struct droce_ieth *h = (void *)(bth + op->off[DROCE_HDR_IETH]);

		h->rkey = droce_cpu_to_be32(p->ieth_rkey);
	}
	if (op->hdrs & H_CNP)
		memset(bth + op->off[DROCE_HDR_CNP], 0, droce_hdr_size[DROCE_HDR_CNP]);
}

int
droce_build_hdrs(uint8_t *b, uint32_t cap, struct droce_pkt *p, uint32_t pay_len)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	uint32_t frame_len;

	if (op->name == NULL || (pay_len != 0 && !(op->flags & DROCE_OPF_PAYLOAD)))
		return -EINVAL;
	/* IBTA 9.2.4 / C9-24..27: only the last (or only) packet of a message is padded; FIRST and
	 * MIDDLE carry a full path MTU, a multiple of 4, and the parser drops them otherwise. */
	if ((pay_len & 3) != 0 && !(op->flags & DROCE_OPF_LAST))
		return -EINVAL;
	if (p->ip_ver != 6 &&
	    (p->ip_ver != 4 || !droce_gid_is_v4(p->sgid) || !droce_gid_is_v4(p->dgid)))
		return -EINVAL;
	/* Bound pay_len first: droce_build_frame_len() would wrap for lengths near 2^32. */
	if (pay_len > 0xFFFF)
		return -ENOSPC;
	frame_len = droce_build_frame_len(p, pay_len);
	if (frame_len > cap || frame_len > 0xFFFF)
		return -ENOSPC;

	p->l3_off = (uint16_t)build_l2(b, p);
	p->l4_off = (uint16_t)(p->l3_off + l3_hdr_len(p));
	p->bth_off = (uint16_t)(p->l4_off + sizeof(struct droce_udp_hdr));
	p->pay_off = (uint16_t)(p->bth_off + op->hdr_len);
	p->pay_len = pay_len;
	p->padcnt = (uint8_t)((4 - (pay_len & 3)) & 3);
	p->tver = DROCE_BTH_TVER;
	p->frame_len = frame_len;
	if (p->ip_ver == 6)
		build_ipv6((void *)(b + p->l3_off), p, frame_len - p->l3_off);
	else
		build_ipv4((void *)(b + p->l3_off), p, frame_len - p->l3_off);
	droce_udp_set((void *)(b + p->l4_off), p->udp_sport, (uint16_t)(frame_len - p->l4_off));
	droce_bth_set((void *)(b + p->bth_off), p->opcode,
		      droce_bth_flags(p->se, p->mig, p->padcnt), p->pkey, p->fecn, p->becn, p->dqpn,
		      p->ackreq, p->psn);
	if (p->srcap)
		droce_bth_set_srcap((void *)(b + p->bth_off));
	droce_build_ext(b + p->bth_off, op, p);
	return (int)(p->pay_off);
}

/* RFC 8200 8.1: UDP over IPv6 must carry a checksum (pseudo-header + datagram). */
static uint16_t
udp6_csum(const struct droce_ipv6_hdr *ip6, const uint8_t *udp, uint32_t udp_len)
{
	const uint8_t *addrs = ip6->src; /* src then dst, 32 bytes */
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < 2 * sizeof(ip6->src); i += 2)
		sum += ((uint32_t)addrs[i] << 8) | addrs[i + 1];
	sum += udp_len + DROCE_IPPROTO_UDP;
	for (i = 0; i + 1 < udp_len; i += 2)
		sum += ((uint32_t)udp[i] << 8) | udp[i + 1];
	if (udp_len & 1)
		sum += (uint32_t)udp[udp_len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (~sum) & 0xFFFF;
	return sum == 0 ? 0xFFFF : (uint16_t)sum;
}

uint32_t
droce_build_finish(uint8_t *b, struct droce_pkt *p)
{
	uint32_t end = p->frame_len - DROCE_ICRC_LEN;

	memset(b + p->pay_off + p->pay_len, 0, p->padcnt);
	/* The UDP checksum is masked out of the ICRC but covers it: ICRC first. */
	p->icrc = droce_icrc(b + p->l3_off, end - p->l3_off);
	droce_icrc_put(b + end, p->icrc);
	if (p->ip_ver == 6) {
		struct droce_udp_hdr *udp = (void *)(b + p->l4_off);

		/* The sum covers the checksum field: clear it so a second finish gives the same. */
		udp->csum = 0;
		p->udp_csum = udp6_csum((const void *)(b + p->l3_off), b + p->l4_off,
					p->frame_len - p->l4_off);
		udp->csum = droce_cpu_to_be16(p->udp_csum);
	} else {
		p->udp_csum = 0;
	}
	return p->frame_len;
}

int
droce_build(uint8_t *b, uint32_t cap, struct droce_pkt *p, const void *payload, uint32_t pay_len)
{
	int r = droce_build_hdrs(b, cap, p, pay_len);

	if (r < 0)
		return r;
	if (pay_len != 0)
		memcpy(b + r, payload, pay_len);
	return (int)droce_build_finish(b, p);
}
