/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP (RFC 826) and ICMPv6 Neighbor Solicitation/Advertisement (RFC 4861) frames. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "droce_neigh.h"
#include "wire/droce_arp.h"
#include "wire/droce_eth.h"
#include "wire/droce_icmp6_nd.h"
#include "wire/droce_ipv6.h"

enum {
	ETH_MIN = 60, /* minimum Ethernet frame without FCS: short frames are padded */
};

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

uint16_t
droce_icmp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *msg, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 0; i < 16; i += 2)
		sum += ((uint32_t)src[i] << 8 | src[i + 1]) + ((uint32_t)dst[i] << 8 | dst[i + 1]);
	sum += len >> 16;
	sum += len & 0xFFFF;
	sum += DROCE_IPPROTO_ICMPV6;
	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)msg[i] << 8 | msg[i + 1];
	if (len & 1)
		sum += (uint32_t)msg[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t
put_eth(uint8_t *buf, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
	struct droce_eth_hdr *eth = (void *)buf;

	memcpy(eth->dst, dst, sizeof(eth->dst));
	memcpy(eth->src, src, sizeof(eth->src));
	eth->ether_type = droce_cpu_to_be16(type);
	return sizeof(*eth);
}

uint32_t
droce_arp_build(uint8_t *buf, enum droce_arp_op op, const uint8_t eth_dst[6], const uint8_t smac[6],
		const uint8_t sip[4], const uint8_t tmac[6], const uint8_t tip[4])
{
	struct droce_arp_hdr *a = (void *)(buf + put_eth(buf, eth_dst, smac, DROCE_ETHERTYPE_ARP));

	a->htype = droce_cpu_to_be16(DROCE_ARP_HTYPE_ETHER);
	a->ptype = droce_cpu_to_be16(DROCE_ETHERTYPE_IPV4);
	a->hlen = sizeof(a->sha);
	a->plen = sizeof(a->spa);
	a->op = droce_cpu_to_be16((uint16_t)op);
	memcpy(a->sha, smac, sizeof(a->sha));
	memcpy(a->spa, sip, sizeof(a->spa));
	memcpy(a->tha, tmac, sizeof(a->tha));
	memcpy(a->tpa, tip, sizeof(a->tpa));
	memset(a + 1, 0, ETH_MIN - sizeof(struct droce_eth_hdr) - sizeof(*a));
	return ETH_MIN;
}

uint32_t
droce_nd_build(uint8_t *buf, enum droce_nd_type type, uint8_t na_flags, const uint8_t eth_dst[6],
	       const uint8_t smac[6], const uint8_t src[16], const uint8_t dst[16],
	       const uint8_t target[16])
{
	struct droce_ipv6_hdr *ip =
		(void *)(buf + put_eth(buf, eth_dst, smac, DROCE_ETHERTYPE_IPV6));
	struct droce_nd_hdr *nd = (void *)(ip + 1);
	struct droce_nd_opt_lla *opt = (void *)(nd + 1);
	uint32_t icmp_len = sizeof(*nd) + sizeof(*opt);

	ip->vtc_flow = droce_cpu_to_be32(6u << 28);
	ip->payload_len = droce_cpu_to_be16((uint16_t)icmp_len);
	ip->next_hdr = DROCE_IPPROTO_ICMPV6;
	ip->hop_limit = DROCE_ND_HOP_LIMIT;
	memcpy(ip->src, src, sizeof(ip->src));
	memcpy(ip->dst, dst, sizeof(ip->dst));
	memset(nd, 0, icmp_len);
	nd->type = (uint8_t)type;
	if (type == DROCE_ND_NA)
		nd->flags = na_flags;
	memcpy(nd->target, target, sizeof(nd->target));
	opt->type = type == DROCE_ND_NS ? DROCE_ND_OPT_SLLA : DROCE_ND_OPT_TLLA;
	opt->len = sizeof(*opt) / 8;
	memcpy(opt->mac, smac, sizeof(opt->mac));
	nd->csum = droce_cpu_to_be16(droce_icmp6_csum(src, dst, (const uint8_t *)nd, icmp_len));
	return (uint32_t)((uint8_t *)(opt + 1) - buf);
}

static int
parse_arp(const uint8_t *b, uint32_t len, struct droce_neigh_msg *m)
{
	const struct droce_arp_hdr *a = (const void *)b;

	if (len < sizeof(*a))
		return -EINVAL;
	/* RFC 826: only Ethernet/IPv4 with 6- and 4-byte addresses is ours. */
	if (a->htype != droce_cpu_to_be16(DROCE_ARP_HTYPE_ETHER) ||
	    a->ptype != droce_cpu_to_be16(DROCE_ETHERTYPE_IPV4) || a->hlen != sizeof(a->sha) ||
	    a->plen != sizeof(a->spa))
		return -EINVAL;
	m->op = droce_be16_to_cpu(a->op);
	if (m->op != DROCE_ARP_REQUEST && m->op != DROCE_ARP_REPLY)
		return -EINVAL;
	m->is_arp = true;
	memcpy(m->sender_mac, a->sha, sizeof(a->sha));
	m->has_lladdr = true;
	memcpy(m->sender_ip, v4_mapped, 12);
	memcpy(m->sender_ip + 12, a->spa, sizeof(a->spa));
	memcpy(m->target_mac, a->tha, sizeof(a->tha));
	memcpy(m->target_ip, v4_mapped, 12);
	memcpy(m->target_ip + 12, a->tpa, sizeof(a->tpa));
	/* A multicast sender hardware address is never a station (RFC 1812 3.3.2). */
	return (m->sender_mac[0] & 1) ? -EINVAL : 0;
}

static int
parse_nd(const uint8_t *b, uint32_t len, struct droce_neigh_msg *m)
{
	const struct droce_ipv6_hdr *ip = (const void *)b;
	const struct droce_nd_hdr *nd = (const void *)(ip + 1);
	const uint8_t *icmp = (const uint8_t *)nd, *opt;
	uint32_t plen, olen;

	if (len < sizeof(*ip))
		return -EINVAL;
	if ((droce_be32_to_cpu(ip->vtc_flow) >> 28) != 6 || ip->next_hdr != DROCE_IPPROTO_ICMPV6)
		return -ENOENT;
	plen = droce_be16_to_cpu(ip->payload_len);
	if (plen < 1 || plen > len - sizeof(*ip))
		return -EINVAL;
	if (nd->type != DROCE_ND_NS && nd->type != DROCE_ND_NA)
		return -ENOENT;
	/* RFC 4861 7.1.1 / 7.1.2: hop limit 255, code 0, ICMP length >= 24, valid checksum,
	 * target not multicast, every option length non-zero. */
	if (ip->hop_limit != DROCE_ND_HOP_LIMIT || plen < sizeof(*nd) || nd->code != 0 ||
	    nd->target[0] == 0xff)
		return -EINVAL;
	if (droce_icmp6_csum(ip->src, ip->dst, icmp, plen) != 0)
		return -EBADMSG;
	m->is_arp = false;
	m->op = nd->type;
	m->na_flags = nd->flags & 0xE0;
	memcpy(m->sender_ip, ip->src, sizeof(ip->src));
	memcpy(m->ip_dst, ip->dst, sizeof(ip->dst));
	memcpy(m->target_ip, nd->target, sizeof(nd->target));
	m->has_lladdr = false;
	for (opt = icmp + sizeof(*nd); opt + 2 <= icmp + plen; opt += olen) {
		olen = (uint32_t)opt[1] * 8;
		if (olen == 0 || opt + olen > icmp + plen)
			return -EINVAL;
		if ((opt[0] == DROCE_ND_OPT_SLLA && m->op == DROCE_ND_NS) ||
		    (opt[0] == DROCE_ND_OPT_TLLA && m->op == DROCE_ND_NA)) {
			const struct droce_nd_opt_lla *lla = (const void *)opt;

			if (olen < sizeof(*lla))
				return -EINVAL;
			memcpy(m->sender_mac, lla->mac, sizeof(lla->mac));
			m->has_lladdr = true;
		}
	}
	return 0;
}

/* The EtherType and its payload offset, past one 802.1Q tag (IEEE 802.1Q 9.5); tci filled when
 * tagged. Returns 0 when the frame ends inside its headers. */
static uint32_t
ether_type(const uint8_t *frame, uint32_t len, uint16_t *type, bool *tagged, uint16_t *tci)
{
	const struct droce_eth_hdr *eth = (const void *)frame;
	const struct droce_vlan_hdr *vlan = (const void *)(eth + 1);

	*tagged = false;
	if (len < sizeof(*eth))
		return 0;
	*type = droce_be16_to_cpu(eth->ether_type);
	if (*type != DROCE_ETHERTYPE_VLAN)
		return sizeof(*eth);
	if (len < sizeof(*eth) + sizeof(*vlan))
		return 0;
	*tagged = true;
	*tci = droce_be16_to_cpu(vlan->tci);
	*type = droce_be16_to_cpu(vlan->ether_type);
	return sizeof(*eth) + sizeof(*vlan);
}

int
droce_neigh_parse(const uint8_t *frame, uint32_t len, struct droce_neigh_msg *m)
{
	uint16_t type = 0;
	uint32_t off;

	memset(m, 0, sizeof(*m));
	off = ether_type(frame, len, &type, &m->has_vlan, &m->vlan_tci);
	if (off == 0)
		return -EINVAL;
	memcpy(m->eth_dst, ((const struct droce_eth_hdr *)frame)->dst, sizeof(m->eth_dst));
	memcpy(m->eth_src, ((const struct droce_eth_hdr *)frame)->src, sizeof(m->eth_src));
	if (type == DROCE_ETHERTYPE_ARP)
		return parse_arp(frame + off, len - off, m);
	if (type == DROCE_ETHERTYPE_IPV6)
		return parse_nd(frame + off, len - off, m);
	return -ENOENT;
}

bool
droce_neigh_match(const uint8_t *frame, uint32_t len)
{
	const struct droce_ipv6_hdr *ip6;
	const struct droce_nd_hdr *nd;
	uint16_t type = 0, tci;
	uint32_t off;
	bool tagged;

	off = ether_type(frame, len, &type, &tagged, &tci);
	if (off == 0)
		return false;
	if (type == DROCE_ETHERTYPE_ARP)
		return true;
	ip6 = (const void *)(frame + off);
	nd = (const void *)(ip6 + 1); /* its type byte only is read */
	return type == DROCE_ETHERTYPE_IPV6 && len >= off + sizeof(*ip6) + 1 &&
	       ip6->next_hdr == DROCE_IPPROTO_ICMPV6 &&
	       (nd->type == DROCE_ND_NS || nd->type == DROCE_ND_NA);
}

uint32_t
droce_neigh_vlan_insert(uint8_t *frame, uint32_t len, uint16_t tci)
{
	struct droce_eth_hdr *eth = (void *)frame;
	struct droce_vlan_hdr *vlan = (void *)(eth + 1);
	const uint32_t addrs = offsetof(struct droce_eth_hdr, ether_type);

	/* the EtherType and what follows move up by the tag's length */
	memmove(frame + addrs + sizeof(*vlan), frame + addrs, len - addrs);
	eth->ether_type = droce_cpu_to_be16(DROCE_ETHERTYPE_VLAN);
	vlan->tci = droce_cpu_to_be16(tci);
	return len + (uint32_t)sizeof(*vlan);
}
