/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_ARP_H
#define DROCE_WIRE_ARP_H

/* ARP (RFC 826) for Ethernet and IPv4: the runtime resolves RoCEv2 peers with it. */
#include "../droce_byteorder.h"

struct droce_arp_hdr {
	droce_be16_t htype; /* 1: Ethernet */
	droce_be16_t ptype; /* 0x0800: IPv4 */
	uint8_t hlen;	    /* 6 */
	uint8_t plen;	    /* 4 */
	droce_be16_t op;    /* 1 request, 2 reply */
	uint8_t sha[6];
	uint8_t spa[4];
	uint8_t tha[6];
	uint8_t tpa[4];
} __attribute__((packed));

_Static_assert(sizeof(struct droce_arp_hdr) == 28, "ARP for Ethernet/IPv4 is 28 bytes");

#define DROCE_ARP_HTYPE_ETHER 1

#endif /* DROCE_WIRE_ARP_H */
