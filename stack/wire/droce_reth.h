/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_RETH_H
#define DROCE_WIRE_RETH_H

/* RDMA Extended Transport Header (IBTA 9.3.3): first packet of WRITE, READ request. */
#include "../droce_byteorder.h"

struct droce_reth {
	droce_be64_t va;
	droce_be32_t rkey;
	droce_be32_t dma_len; /* the whole message length, not this packet's */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_reth) == 16, "RETH is 16 bytes");

#endif /* DROCE_WIRE_RETH_H */
