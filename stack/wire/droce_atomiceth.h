/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_ATOMICETH_H
#define DROCE_WIRE_ATOMICETH_H

/* Atomic Extended Transport Header (IBTA 9.3.4): CmpSwap and FetchAdd requests. */
#include "../droce_byteorder.h"

struct droce_atomiceth {
	droce_be64_t va; /* must be 8-byte aligned (IBTA 9.4.5) */
	droce_be32_t rkey;
	droce_be64_t swap_add; /* swap value, or the addend */
	droce_be64_t compare;  /* compare value; ignored by FetchAdd */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_atomiceth) == 28, "AtomicETH is 28 bytes");

#endif /* DROCE_WIRE_ATOMICETH_H */
