/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_IMMDT_H
#define DROCE_WIRE_IMMDT_H

/* Immediate Data Extended Transport Header (IBTA 9.3.6). */
#include "../droce_byteorder.h"

struct droce_immdt {
	droce_be32_t imm; /* opaque to the stack: handed to the receiver as is */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_immdt) == 4, "ImmDt is 4 bytes");

#endif /* DROCE_WIRE_IMMDT_H */
