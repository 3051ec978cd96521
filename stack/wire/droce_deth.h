/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_DETH_H
#define DROCE_WIRE_DETH_H

/* Datagram Extended Transport Header (IBTA 9.3.2): UD. */
#include "../droce_byteorder.h"

struct droce_deth {
	droce_be32_t qkey;
	droce_be32_t src_qp; /* resv(8) SrcQP(24) */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_deth) == 8, "DETH is 8 bytes");

#define DROCE_DETH_SQP_MASK 0x00FFFFFFu
/* Q_Keys with the high bit set are privileged: a non-privileged sender uses its QP's own (IBTA 10.2.4). */
#define DROCE_QKEY_PRIVILEGED 0x80000000u

#endif /* DROCE_WIRE_DETH_H */
