/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_IETH_H
#define DROCE_WIRE_IETH_H

/* Invalidate Extended Transport Header (IBTA 9.3.7): SEND with invalidate. */
#include "../droce_byteorder.h"

struct droce_ieth {
	droce_be32_t rkey; /* the R_Key the responder invalidates */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_ieth) == 4, "IETH is 4 bytes");

#endif /* DROCE_WIRE_IETH_H */
