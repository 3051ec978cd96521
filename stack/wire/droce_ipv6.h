/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_IPV6_H
#define DROCE_WIRE_IPV6_H

/* IPv6 fixed header (RFC 8200). RoCEv2 carries the GRH fields in it. */
#include "../droce_byteorder.h"

struct droce_ipv6_hdr {
	droce_be32_t vtc_flow;	  /* version(4) traffic class(8) flow label(20) */
	droce_be16_t payload_len; /* UDP datagram length */
	uint8_t next_hdr;	  /* 17 = UDP; RoCEv2 uses no extension headers */
	uint8_t hop_limit;
	uint8_t src[16];
	uint8_t dst[16];
} __attribute__((packed));
_Static_assert(sizeof(struct droce_ipv6_hdr) == 40, "IPv6 header is 40 bytes");

#define DROCE_IPV6_TC_SHIFT  20
#define DROCE_IPV6_FLOW_MASK 0x000FFFFF

#endif /* DROCE_WIRE_IPV6_H */
