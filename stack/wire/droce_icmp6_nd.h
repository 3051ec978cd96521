/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_ICMP6_ND_H
#define DROCE_WIRE_ICMP6_ND_H

/*
 * ICMPv6 Neighbor Solicitation and Advertisement (RFC 4861 4.3, 4.4) with their link-layer
 * address option (4.6.1): the runtime resolves IPv6 RoCEv2 peers with them.
 */
#include "../droce_byteorder.h"

#define DROCE_IPPROTO_ICMPV6 58

struct droce_nd_hdr {
	uint8_t type;	   /* 135 NS, 136 NA */
	uint8_t code;	   /* 0 */
	droce_be16_t csum; /* over the IPv6 pseudo-header and the message */
	uint8_t flags;	   /* NA: Router(1) Solicited(1) Override(1) resv(5); NS: reserved */
	uint8_t rsvd[3];
	uint8_t target[16];
} __attribute__((packed));

_Static_assert(sizeof(struct droce_nd_hdr) == 24, "NS/NA before options is 24 bytes");

/* A link-layer address option for Ethernet: type, length in units of 8 bytes, the MAC. */
struct droce_nd_opt_lla {
	uint8_t type; /* 1 source, 2 target link-layer address */
	uint8_t len;  /* 1 */
	uint8_t mac[6];
} __attribute__((packed));

_Static_assert(sizeof(struct droce_nd_opt_lla) == 8, "Ethernet link-layer option is 8 bytes");

#define DROCE_ND_OPT_SLLA  1
#define DROCE_ND_OPT_TLLA  2
#define DROCE_ND_HOP_LIMIT 255 /* RFC 4861 7.1: anything else was forwarded, and is dropped */

#endif /* DROCE_WIRE_ICMP6_ND_H */
