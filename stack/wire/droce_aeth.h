/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_AETH_H
#define DROCE_WIRE_AETH_H

/* ACK Extended Transport Header (IBTA 9.3.5). */
#include "../droce_byteorder.h"

struct droce_aeth {
	droce_be32_t syn_msn; /* syndrome(8) MSN(24) */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_aeth) == 4, "AETH is 4 bytes");

#define DROCE_AETH_MSN_MASK  0x00FFFFFFu
#define DROCE_AETH_SYN_SHIFT 24
/* Syndrome: top three bits give the type (IBTA table 44), low five the value. */
#define DROCE_AETH_TYPE_MASK	  0xE0
#define DROCE_AETH_VALUE_MASK	  0x1F
#define DROCE_AETH_TYPE_ACK	  0x00
#define DROCE_AETH_TYPE_RNR_NAK	  0x20
#define DROCE_AETH_TYPE_NAK	  0x60
#define DROCE_AETH_CREDIT_INVALID 0x1F /* end-to-end credits not used */

enum droce_nak_code {
	DROCE_NAK_PSN_SEQ_ERR = 0,
	DROCE_NAK_INVALID_REQ = 1,
	DROCE_NAK_REM_ACCESS_ERR = 2,
	DROCE_NAK_REM_OP_ERR = 3,
	DROCE_NAK_INVALID_RD_REQ = 4,
};

#endif /* DROCE_WIRE_AETH_H */
