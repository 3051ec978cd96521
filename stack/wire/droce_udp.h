/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_UDP_H
#define DROCE_WIRE_UDP_H

/* UDP header (RFC 768). RoCEv2 is UDP destination port 4791 (IBTA Annex A17.2). */
#include "../droce_byteorder.h"

struct droce_udp_hdr {
	droce_be16_t src_port; /* 0xC000..0xFFFF: per-QP flow entropy */
	droce_be16_t dst_port; /* 4791 */
	droce_be16_t len;      /* header + payload */
	droce_be16_t csum;     /* 0 over IPv4 (rxe, ConnectX) */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_udp_hdr) == 8, "UDP header is 8 bytes");

#define DROCE_ROCEV2_UDP_PORT 4791
#define DROCE_UDP_SPORT_MIN   0xC000

#endif /* DROCE_WIRE_UDP_H */
