/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NETEM_TEST_FRAMES_H
#define NETEM_TEST_FRAMES_H

/* Hand-made test frames: Ethernet + IPv4/IPv6 + UDP with a chosen ECN codepoint. */
#include <stdint.h>
#include <string.h>

#include "wire/droce_eth.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_ipv6.h"

/* An Ethernet/IPv4/UDP frame of len bytes (>= 42) with tos; returns len. */
static inline uint32_t
netem_test_ipv4(uint8_t *f, uint32_t len, uint8_t tos)
{
	struct droce_ipv4_hdr *ip = (struct droce_ipv4_hdr *)(f + 14);

	memset(f, 0, len);
	memset(f, 0x02, 12);
	droce_put_be16(f + 12, DROCE_ETHERTYPE_IPV4);
	ip->version_ihl = DROCE_IPV4_VERSION_IHL;
	ip->tos = tos;
	droce_put_be16(&ip->total_len, (uint16_t)(len - 14));
	droce_put_be16(&ip->id, 0x1234);
	droce_put_be16(&ip->frag_off, DROCE_IPV4_DF);
	ip->ttl = 64;
	ip->proto = DROCE_IPPROTO_UDP;
	droce_put_be32(&ip->src, 0x0A000001);
	droce_put_be32(&ip->dst, 0x0A000002);
	droce_put_be16(&ip->hdr_csum, droce_ipv4_csum(ip, 20));
	droce_put_be16(f + 34, 0xD0CE);
	droce_put_be16(f + 36, 4791);
	droce_put_be16(f + 38, (uint16_t)(len - 34));
	return len;
}

#endif /* NETEM_TEST_FRAMES_H */
