/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_ETH_H
#define DROCE_WIRE_ETH_H

/* Ethernet II and IEEE 802.1Q. */
#include "../droce_byteorder.h"

#define DROCE_ETHER_ADDR_LEN 6
#define DROCE_ETHERTYPE_IPV4 0x0800
#define DROCE_ETHERTYPE_ARP  0x0806
#define DROCE_ETHERTYPE_VLAN 0x8100
#define DROCE_ETHERTYPE_IPV6 0x86DD

struct droce_eth_hdr {
	uint8_t dst[DROCE_ETHER_ADDR_LEN];
	uint8_t src[DROCE_ETHER_ADDR_LEN];
	droce_be16_t ether_type;
} __attribute__((packed));
_Static_assert(sizeof(struct droce_eth_hdr) == 14, "Ethernet header is 14 bytes");

/* 802.1Q tag, following the source MAC in place of the EtherType. */
struct droce_vlan_hdr {
	droce_be16_t tci;	 /* PCP(3) DEI(1) VID(12) */
	droce_be16_t ether_type; /* the encapsulated EtherType */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_vlan_hdr) == 4, "802.1Q tag is 4 bytes");

#define DROCE_VLAN_PCP_SHIFT 13
#define DROCE_VLAN_VID_MASK  0x0FFF

#endif /* DROCE_WIRE_ETH_H */
