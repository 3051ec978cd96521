/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_ATOMICACKETH_H
#define DROCE_WIRE_ATOMICACKETH_H

/* Atomic Acknowledge Extended Transport Header (IBTA 9.5.3). */
#include "../droce_byteorder.h"

struct droce_atomicacketh {
	droce_be64_t orig; /* the remote value before the operation */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_atomicacketh) == 8, "AtomicAckETH is 8 bytes");

#endif /* DROCE_WIRE_ATOMICACKETH_H */
