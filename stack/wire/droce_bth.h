/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_BTH_H
#define DROCE_WIRE_BTH_H

/* Base Transport Header (IBTA 9.2). */
#include "../droce_byteorder.h"

struct droce_bth {
	uint8_t opcode;
	uint8_t flags; /* SE(1) MigReq(1) PadCnt(2) TVer(4) */
	droce_be16_t pkey;
	droce_be32_t fb_dqpn; /* FECN(1) BECN(1) resv(6) DestQP(24) */
	droce_be32_t ack_psn; /* AckReq(1) resv(7) PSN(24) */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_bth) == 12, "BTH is 12 bytes");

#define DROCE_BTH_SE	    0x80
#define DROCE_BTH_MIG	    0x40
#define DROCE_BTH_PAD_SHIFT 4
#define DROCE_BTH_PAD_MASK  0x30
#define DROCE_BTH_TVER_MASK 0x0F
#define DROCE_BTH_FECN	    0x80000000u
#define DROCE_BTH_BECN	    0x40000000u
/* droce's selective-repeat capability mark (stack/wire/README.md): the top bit of resv6, which
 * IBTA 9.2 has sent as 0 and ignored on receive, and which the ICRC masks (A17.4.2). */
#define DROCE_BTH_SRCAP	   0x20000000u
#define DROCE_BTH_QPN_MASK 0x00FFFFFFu
#define DROCE_BTH_ACKREQ   0x80000000u
#define DROCE_BTH_PSN_MASK 0x00FFFFFFu
#define DROCE_BTH_TVER	   0 /* IBTA 9.2.5: the only defined version */
#define DROCE_PKEY_DEFAULT 0xFFFF
/* Byte 4 of the BTH (FECN, BECN, resv6) is masked to all ones in the ICRC (IBTA A17.4.2). */
#define DROCE_BTH_ICRC_MASK_OFF 4

#endif /* DROCE_WIRE_BTH_H */
