/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame building from a struct droce_pkt, driven by the opcode table. */
#include <errno.h>
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"
#include "wire/droce_aeth.h"
#include "wire/droce_bth.h"
#include "wire/droce_deth.h"
#include "wire/droce_eth.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_ipv6.h"
#include "wire/droce_udp.h"

static uint32_t
l3_hdr_len(const struct droce_pkt *p)
{
	return p->ip_ver == 6 ? sizeof(struct droce_ipv6_hdr) : sizeof(struct droce_ipv4_hdr);
}

uint32_t
droce_build_hdr_len(const struct droce_pkt *p)
{
	return sizeof(struct droce_eth_hdr) + (p->has_vlan ? sizeof(struct droce_vlan_hdr) : 0) +
	       l3_hdr_len(p) + sizeof(struct droce_udp_hdr) +
	       droce_opcode_info(p->opcode)->hdr_len;
}

uint32_t
droce_build_frame_len(const struct droce_pkt *p, uint32_t pay_len)
{
	return droce_build_hdr_len(p) + ((pay_len + 3) & ~3u) + DROCE_ICRC_LEN;
}

static uint32_t
build_l2(uint8_t *b, const struct droce_pkt *p)
{
	uint16_t etype = p->ip_ver == 6 ? DROCE_ETHERTYPE_IPV6 : DROCE_ETHERTYPE_IPV4;
	uint32_t off = 12;

	memcpy(b, p->dmac, 6);
	memcpy(b + 6, p->smac, 6);
	if (p->has_vlan) {
		droce_put_be16(b + off, DROCE_ETHERTYPE_VLAN);
		droce_put_be16(b + off + 2, p->vlan_tci);
		off += sizeof(struct droce_vlan_hdr);
	}
	droce_put_be16(b + off, etype);
	return off + 2;
}

/* ip_len: bytes from the IP header to the end of the ICRC. */
static void
build_ipv4(uint8_t *ip, const struct droce_pkt *p, uint32_t ip_len)
{
	ip[0] = DROCE_IPV4_VERSION_IHL;
	ip[1] = p->tclass;
	droce_put_be16(ip + 2, (uint16_t)ip_len);
	droce_put_be16(ip + 4, p->ip_id);
	/* DF: RoCEv2 relies on path MTU, never on fragmentation (IBTA A17.4.1). */
	droce_put_be16(ip + 6, DROCE_IPV4_DF);
	ip[8] = p->hop_limit;
	ip[9] = DROCE_IPPROTO_UDP;
	droce_put_be16(ip + 10, 0);
	memcpy(ip + 12, p->sgid + 12, 4);
	memcpy(ip + 16, p->dgid + 12, 4);
	droce_put_be16(ip + 10, droce_ipv4_csum(ip, sizeof(struct droce_ipv4_hdr)));
}

static void
build_ipv6(uint8_t *ip, const struct droce_pkt *p, uint32_t ip_len)
{
	droce_put_be32(ip, (6u << 28) | ((uint32_t)p->tclass << DROCE_IPV6_TC_SHIFT) |
				   (p->flow_label & DROCE_IPV6_FLOW_MASK));
	droce_put_be16(ip + 4, (uint16_t)(ip_len - sizeof(struct droce_ipv6_hdr)));
	ip[6] = DROCE_IPPROTO_UDP;
	ip[7] = p->hop_limit;
	memcpy(ip + 8, p->sgid, 16);
	memcpy(ip + 24, p->dgid, 16);
}

void
droce_build_ext(uint8_t *bth, const struct droce_opcode_info *op, const struct droce_pkt *p)
{
	uint8_t *h;

	if (op->hdrs & H_DETH) {
		h = bth + op->off[DROCE_HDR_DETH];
		droce_put_be32(h, p->deth_qkey);
		droce_put_be32(h + 4, p->deth_sqpn & DROCE_DETH_SQP_MASK);
	}
	if (op->hdrs & H_RETH) {
		h = bth + op->off[DROCE_HDR_RETH];
		droce_put_be64(h, p->reth_va);
		droce_put_be32(h + 8, p->reth_rkey);
		droce_put_be32(h + 12, p->reth_len);
	}
	if (op->hdrs & H_ATMETH) {
		h = bth + op->off[DROCE_HDR_ATMETH];
		droce_put_be64(h, p->atomic_va);
		droce_put_be32(h + 8, p->atomic_rkey);
		droce_put_be64(h + 12, p->atomic_swap_add);
		droce_put_be64(h + 20, p->atomic_compare);
	}
	if (op->hdrs & H_AETH)
		droce_put_be32(bth + op->off[DROCE_HDR_AETH],
			((uint32_t)p->aeth_syn << DROCE_AETH_SYN_SHIFT) |
				(p->aeth_msn & DROCE_AETH_MSN_MASK));
	if (op->hdrs & H_ATMACK)
		droce_put_be64(bth + op->off[DROCE_HDR_ATMACK], p->atomic_orig);
	if (op->hdrs & H_IMMDT)
		droce_put_be32(bth + op->off[DROCE_HDR_IMMDT], p->imm);
	if (op->hdrs & H_IETH)
		droce_put_be32(bth + op->off[DROCE_HDR_IETH], p->ieth_rkey);
	if (op->hdrs & H_CNP)
		memset(bth + op->off[DROCE_HDR_CNP], 0, droce_hdr_size[DROCE_HDR_CNP]);
}

int
droce_build_hdrs(uint8_t *b, uint32_t cap, struct droce_pkt *p, uint32_t pay_len)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	uint32_t frame_len, udp_len;
	uint8_t *bth;

	if (op->name == NULL || (pay_len != 0 && !(op->flags & DROCE_OPF_PAYLOAD)))
		return -EINVAL;
	/* IBTA 9.2.4 / C9-24..27: only the last (or only) packet of a message is padded; FIRST and
	 * MIDDLE carry a full path MTU, a multiple of 4, and the parser drops them otherwise. */
	if ((pay_len & 3) != 0 && !(op->flags & DROCE_OPF_LAST))
		return -EINVAL;
	if (p->ip_ver != 6 && (p->ip_ver != 4 || !droce_gid_is_v4(p->sgid) ||
				      !droce_gid_is_v4(p->dgid)))
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
	udp_len = frame_len - p->l4_off;
	if (p->ip_ver == 6)
		build_ipv6(b + p->l3_off, p, frame_len - p->l3_off);
	else
		build_ipv4(b + p->l3_off, p, frame_len - p->l3_off);

	droce_put_be16(b + p->l4_off, p->udp_sport);
	droce_put_be16(b + p->l4_off + 2, DROCE_ROCEV2_UDP_PORT);
	droce_put_be16(b + p->l4_off + 4, (uint16_t)udp_len);
	droce_put_be16(b + p->l4_off + 6, 0);

	bth = b + p->bth_off;
	bth[0] = p->opcode;
	bth[1] = (uint8_t)((p->se ? DROCE_BTH_SE : 0) | (p->mig ? DROCE_BTH_MIG : 0) |
			   (p->padcnt << DROCE_BTH_PAD_SHIFT) | DROCE_BTH_TVER);
	droce_put_be16(bth + 2, p->pkey);
	droce_put_be32(bth + 4, (p->fecn ? DROCE_BTH_FECN : 0) | (p->becn ? DROCE_BTH_BECN : 0) |
					(p->srcap ? DROCE_BTH_SRCAP : 0) | (p->dqpn & DROCE_BTH_QPN_MASK));
	droce_put_be32(bth + 8, (p->ackreq ? DROCE_BTH_ACKREQ : 0) | (p->psn & DROCE_BTH_PSN_MASK));
	droce_build_ext(bth, op, p);
	return (int)(p->pay_off);
}

/* RFC 8200 8.1: UDP over IPv6 must carry a checksum (pseudo-header + datagram). */
static uint16_t
udp6_csum(const uint8_t *ip6, const uint8_t *udp, uint32_t udp_len)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < 32; i += 2)
		sum += ((uint32_t)ip6[8 + i] << 8) | ip6[9 + i];
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
		/* The sum covers the checksum field: clear it so a second finish gives the same. */
		droce_put_be16(b + p->l4_off + 6, 0);
		p->udp_csum = udp6_csum(b + p->l3_off, b + p->l4_off, p->frame_len - p->l4_off);
		droce_put_be16(b + p->l4_off + 6, p->udp_csum);
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
