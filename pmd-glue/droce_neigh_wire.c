/* SPDX-License-Identifier: BSD-3-Clause */
/* ARP (RFC 826) and ICMPv6 Neighbor Solicitation/Advertisement (RFC 4861) frames. */
#include <errno.h>
#include <string.h>

#include "droce_neigh.h"
#include "wire/droce_eth.h"
#include "wire/droce_ipv6.h"

enum {
	ARP_LEN = 28,
	ETH_MIN = 60,		/* minimum Ethernet frame without FCS: short frames are padded */
	ICMP6_PROTO = 58,
	ND_LEN = 24,		/* type, code, csum, flags/reserved, target */
	ND_OPT_SLLA = 1,
	ND_OPT_TLLA = 2,
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
	sum += ICMP6_PROTO;
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
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	droce_put_be16(buf + 12, type);
	return 14;
}

uint32_t
droce_arp_build(uint8_t *buf, enum droce_arp_op op, const uint8_t eth_dst[6],
		const uint8_t smac[6], const uint8_t sip[4], const uint8_t tmac[6],
		const uint8_t tip[4])
{
	uint8_t *a = buf + put_eth(buf, eth_dst, smac, DROCE_ETHERTYPE_ARP);

	droce_put_be16(a, 1);			/* hardware: Ethernet */
	droce_put_be16(a + 2, DROCE_ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	droce_put_be16(a + 6, op);
	memcpy(a + 8, smac, 6);
	memcpy(a + 14, sip, 4);
	memcpy(a + 18, tmac, 6);
	memcpy(a + 24, tip, 4);
	memset(a + ARP_LEN, 0, ETH_MIN - 14 - ARP_LEN);
	return ETH_MIN;
}

uint32_t
droce_nd_build(uint8_t *buf, enum droce_nd_type type, uint8_t na_flags, const uint8_t eth_dst[6],
	       const uint8_t smac[6], const uint8_t src[16], const uint8_t dst[16],
	       const uint8_t target[16])
{
	uint8_t *ip = buf + put_eth(buf, eth_dst, smac, DROCE_ETHERTYPE_IPV6);
	uint8_t *icmp = ip + sizeof(struct droce_ipv6_hdr);
	uint32_t icmp_len = ND_LEN + 8;

	droce_put_be32(ip, 6u << 28);
	droce_put_be16(ip + 4, (uint16_t)icmp_len);
	ip[6] = ICMP6_PROTO;
	ip[7] = 255;		/* RFC 4861 7.1: receivers drop ND with any other hop limit */
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	memset(icmp, 0, icmp_len);
	icmp[0] = (uint8_t)type;
	if (type == DROCE_ND_NA)
		icmp[4] = na_flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == DROCE_ND_NS ? ND_OPT_SLLA : ND_OPT_TLLA;
	icmp[25] = 1;		/* option length in units of 8 bytes */
	memcpy(icmp + 26, smac, 6);
	droce_put_be16(icmp + 2, droce_icmp6_csum(src, dst, icmp, icmp_len));
	return (uint32_t)(icmp + icmp_len - buf);
}

static int
parse_arp(const uint8_t *a, uint32_t len, struct droce_neigh_msg *m)
{
	if (len < ARP_LEN)
		return -EINVAL;
	/* RFC 826: only Ethernet/IPv4 with 6- and 4-byte addresses is ours. */
	if (droce_get_be16(a) != 1 || droce_get_be16(a + 2) != DROCE_ETHERTYPE_IPV4 ||
	    a[4] != 6 || a[5] != 4)
		return -EINVAL;
	m->op = droce_get_be16(a + 6);
	if (m->op != DROCE_ARP_REQUEST && m->op != DROCE_ARP_REPLY)
		return -EINVAL;
	m->is_arp = true;
	memcpy(m->sender_mac, a + 8, 6);
	m->has_lladdr = true;
	memcpy(m->sender_ip, v4_mapped, 12);
	memcpy(m->sender_ip + 12, a + 14, 4);
	memcpy(m->target_mac, a + 18, 6);
	memcpy(m->target_ip, v4_mapped, 12);
	memcpy(m->target_ip + 12, a + 24, 4);
	/* A multicast sender hardware address is never a station (RFC 1812 3.3.2). */
	return (m->sender_mac[0] & 1) ? -EINVAL : 0;
}

static int
parse_nd(const uint8_t *ip, uint32_t len, struct droce_neigh_msg *m)
{
	const uint8_t *icmp = ip + sizeof(struct droce_ipv6_hdr), *opt;
	uint32_t plen, olen;

	if (len < sizeof(struct droce_ipv6_hdr))
		return -EINVAL;
	if ((ip[0] >> 4) != 6 || ip[6] != ICMP6_PROTO)
		return -ENOENT;
	plen = droce_get_be16(ip + 4);
	if (plen < 1 || plen > len - sizeof(struct droce_ipv6_hdr))
		return -EINVAL;
	if (icmp[0] != DROCE_ND_NS && icmp[0] != DROCE_ND_NA)
		return -ENOENT;
	/* RFC 4861 7.1.1 / 7.1.2: hop limit 255, code 0, ICMP length >= 24, valid checksum,
	 * target not multicast, every option length non-zero. */
	if (ip[7] != 255 || plen < ND_LEN || icmp[1] != 0 || icmp[8] == 0xff)
		return -EINVAL;
	if (droce_icmp6_csum(ip + 8, ip + 24, icmp, plen) != 0)
		return -EBADMSG;
	m->is_arp = false;
	m->op = icmp[0];
	m->na_flags = icmp[4] & 0xE0;
	memcpy(m->sender_ip, ip + 8, 16);
	memcpy(m->ip_dst, ip + 24, 16);
	memcpy(m->target_ip, icmp + 8, 16);
	m->has_lladdr = false;
	for (opt = icmp + ND_LEN; opt + 2 <= icmp + plen; opt += olen) {
		olen = (uint32_t)opt[1] * 8;
		if (olen == 0 || opt + olen > icmp + plen)
			return -EINVAL;
		if ((opt[0] == ND_OPT_SLLA && m->op == DROCE_ND_NS) ||
		    (opt[0] == ND_OPT_TLLA && m->op == DROCE_ND_NA)) {
			if (olen < 8)
				return -EINVAL;
			memcpy(m->sender_mac, opt + 2, 6);
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
	*tagged = false;
	if (len < sizeof(struct droce_eth_hdr))
		return 0;
	*type = droce_get_be16(frame + 12);
	if (*type != DROCE_ETHERTYPE_VLAN)
		return sizeof(struct droce_eth_hdr);
	if (len < sizeof(struct droce_eth_hdr) + sizeof(struct droce_vlan_hdr))
		return 0;
	*tagged = true;
	*tci = droce_get_be16(frame + 14);
	*type = droce_get_be16(frame + 16);
	return sizeof(struct droce_eth_hdr) + sizeof(struct droce_vlan_hdr);
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
	memcpy(m->eth_dst, frame, 6);
	memcpy(m->eth_src, frame + 6, 6);
	if (type == DROCE_ETHERTYPE_ARP)
		return parse_arp(frame + off, len - off, m);
	if (type == DROCE_ETHERTYPE_IPV6)
		return parse_nd(frame + off, len - off, m);
	return -ENOENT;
}

bool
droce_neigh_match(const uint8_t *frame, uint32_t len)
{
	uint16_t type = 0, tci;
	const uint8_t *ip;
	uint32_t off;
	bool tagged;

	off = ether_type(frame, len, &type, &tagged, &tci);
	if (off == 0)
		return false;
	if (type == DROCE_ETHERTYPE_ARP)
		return true;
	ip = frame + off;
	return type == DROCE_ETHERTYPE_IPV6 && len >= off + 40 + 1 && ip[6] == ICMP6_PROTO &&
	       (ip[40] == DROCE_ND_NS || ip[40] == DROCE_ND_NA);
}

uint32_t
droce_neigh_vlan_insert(uint8_t *frame, uint32_t len, uint16_t tci)
{
	memmove(frame + 16, frame + 12, len - 12);
	droce_put_be16(frame + 12, DROCE_ETHERTYPE_VLAN);
	droce_put_be16(frame + 14, tci);
	return len + 4;
}
