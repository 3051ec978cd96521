/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_CNP_H
#define DROCE_WIRE_CNP_H

/*
 * RoCEv2 Congestion Notification Packet (IBTA Annex A17.9.3): BTH opcode 0x81, P_Key 0xFFFF,
 * BECN 1, DestQP the data sender's QP, PSN 0, then 16 reserved zero bytes before the ICRC.
 */
#include "../droce_byteorder.h"

struct droce_cnp {
	uint8_t rsvd[16];
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cnp) == 16, "CNP body is 16 bytes");

#define DROCE_CNP_DSCP	    48 /* what ConnectX sends */
#define DROCE_CNP_VLAN_PRIO 6

#endif /* DROCE_WIRE_CNP_H */
