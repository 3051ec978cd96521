/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_SRH_H
#define DROCE_WIRE_SRH_H

/*
 * Selective-repeat placement headers: droce's own extension, used only on an RC connection whose
 * both ends enabled selective repeat (droce_qp_set_recovery), in packets whose BTH carries the
 * capability mark (DROCE_BTH_SRCAP, stack/wire/README.md). They ride at the start of the
 * payload, after the standard headers, so every frame stays a valid RoCEv2 frame that tshark and
 * droce-pcap decode (the header shows as the first payload bytes). They let a responder place a
 * packet that arrives past a gap before the packets in front of it (IBTA 9.7.5.1.1 would drop it).
 *
 * - RDMA WRITE MIDDLE, LAST, LAST with Immediate: a RETH (struct droce_reth, IBTA 9.3.3 layout)
 *   whose VA is this packet's first byte, R_Key the message's, DMA length the whole message's.
 *   (FIRST and ONLY carry their own RETH and no placement header.)
 * - SEND FIRST, MIDDLE, LAST, ONLY (all variants): struct droce_srh_send below.
 * No other opcode carries one. Every data packet of a message then carries the path MTU less
 * DROCE_SRH_ROOM bytes of data, so a frame never exceeds the path MTU.
 */
#include "../droce_byteorder.h"

struct droce_srh_send {
	droce_be32_t ord; /* receive ordinal: receive WQEs this QP's messages consumed before */
	droce_be32_t off; /* byte offset of this packet's data in the message */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_srh_send) == 8, "SEND placement header is 8 bytes");

#define DROCE_SRH_WRITE_LEN 16 /* a RETH */
#define DROCE_SRH_SEND_LEN  8
#define DROCE_SRH_ROOM	    16 /* data bytes per packet: path MTU minus this */

#endif /* DROCE_WIRE_SRH_H */
