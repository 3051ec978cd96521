/* SPDX-License-Identifier: BSD-3-Clause */
/* CE marking of an ECT frame in place, the way a RED switch queue would do it. */
#include <stdint.h>

#include "wire/droce_eth.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_ipv6.h"

#include "netem_model.h"

static enum droce_netem_ecn
droce_netem_mark_ipv4(uint8_t *ip, uint32_t len)
{
	struct droce_ipv4_hdr *h = (struct droce_ipv4_hdr *)ip;
	uint32_t m_old, m_new, sum;
	unsigned int ihl;
	uint8_t ecn;

	if (len < sizeof(*h) || (h->version_ihl >> 4) != 4)
		return DROCE_NETEM_ECN_NOT_IP;
	ihl = (h->version_ihl & 0x0F) * 4u;
	if (ihl < sizeof(*h) || ihl > len)
		return DROCE_NETEM_ECN_NOT_IP;
	ecn = h->tos & 0x03;
	if (ecn == DROCE_ECN_CE)
		return DROCE_NETEM_ECN_ALREADY_CE;
	if (ecn == DROCE_ECN_NOT_ECT)
		return DROCE_NETEM_ECN_NOT_ECT;
	/* Incremental update (RFC 1624 eqn. 3) like a switch does: a frame that arrived with a bad
	 * checksum keeps a bad one rather than being silently repaired. */
	m_old = ((uint32_t)h->version_ihl << 8) | h->tos;
	h->tos |= DROCE_ECN_CE;
	m_new = ((uint32_t)h->version_ihl << 8) | h->tos;
	sum = (uint16_t)~droce_get_be16(&h->hdr_csum) + (uint16_t)~m_old + m_new;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	droce_put_be16(&h->hdr_csum, (uint16_t)~sum);
	return DROCE_NETEM_ECN_MARKED;
}

static enum droce_netem_ecn
droce_netem_mark_ipv6(uint8_t *ip, uint32_t len)
{
	uint32_t vtc;
	uint8_t ecn;

	if (len < sizeof(struct droce_ipv6_hdr))
		return DROCE_NETEM_ECN_NOT_IP;
	vtc = droce_get_be32(ip);
	if ((vtc >> 28) != 6)
		return DROCE_NETEM_ECN_NOT_IP;
	ecn = (vtc >> DROCE_IPV6_TC_SHIFT) & 0x03;
	if (ecn == DROCE_ECN_CE)
		return DROCE_NETEM_ECN_ALREADY_CE;
	if (ecn == DROCE_ECN_NOT_ECT)
		return DROCE_NETEM_ECN_NOT_ECT;
	/* IPv6 has no header checksum; the UDP checksum does not cover the traffic class. */
	droce_put_be32(ip, vtc | ((uint32_t)DROCE_ECN_CE << DROCE_IPV6_TC_SHIFT));
	return DROCE_NETEM_ECN_MARKED;
}

enum droce_netem_ecn
droce_netem_mark_ce(uint8_t *frame, uint32_t len)
{
	uint32_t off = sizeof(struct droce_eth_hdr);
	uint16_t type;

	if (len < off)
		return DROCE_NETEM_ECN_NOT_IP;
	type = droce_get_be16(frame + 12);
	if (type == DROCE_ETHERTYPE_VLAN) {
		if (len < off + sizeof(struct droce_vlan_hdr))
			return DROCE_NETEM_ECN_NOT_IP;
		type = droce_get_be16(frame + off + 2);
		off += sizeof(struct droce_vlan_hdr);
	}
	if (type == DROCE_ETHERTYPE_IPV4)
		return droce_netem_mark_ipv4(frame + off, len - off);
	if (type == DROCE_ETHERTYPE_IPV6)
		return droce_netem_mark_ipv6(frame + off, len - off);
	return DROCE_NETEM_ECN_NOT_IP;
}
