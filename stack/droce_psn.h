/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_PSN_H
#define DROCE_PSN_H

/* 24-bit packet sequence number arithmetic (IBTA 9.7.1: PSNs wrap modulo 2^24). */
#include <stdbool.h>
#include <stdint.h>

#define DROCE_PSN_MASK	 0x00FFFFFFu
#define DROCE_PSN_WINDOW (1u << 23) /* half the space: how far ahead or behind is meaningful */

static inline uint32_t
droce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & DROCE_PSN_MASK;
}

/* Signed distance a - b in (-2^23, 2^23]: shifting the 24-bit difference into the top of a
 * 32-bit word makes the sign bit the PSN's bit 23. */
static inline int32_t
droce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline bool
droce_psn_lt(uint32_t a, uint32_t b)
{
	return droce_psn_diff(a, b) < 0;
}

static inline bool
droce_psn_le(uint32_t a, uint32_t b)
{
	return droce_psn_diff(a, b) <= 0;
}

/* True when psn lies in [lo, hi], both inclusive, on the circle. */
static inline bool
droce_psn_in(uint32_t psn, uint32_t lo, uint32_t hi)
{
	return droce_psn_diff(psn, lo) >= 0 && droce_psn_diff(hi, psn) >= 0;
}

#endif /* DROCE_PSN_H */
