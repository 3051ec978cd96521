/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_BYTEORDER_H
#define DROCE_BYTEORDER_H

/*
 * Big-endian field types and accessors. The stack keeps its own instead of
 * rte_byteorder.h so that it builds (and is fuzzed and simulated) with no DPDK.
 * The types are plain integers: the names document intent at each field.
 */
#include <stdint.h>
#include <string.h>

typedef uint16_t droce_be16_t;
typedef uint32_t droce_be32_t;
typedef uint64_t droce_be64_t;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define droce_cpu_to_be16(x) __builtin_bswap16(x)
#define droce_cpu_to_be32(x) __builtin_bswap32(x)
#define droce_cpu_to_be64(x) __builtin_bswap64(x)
#else
#define droce_cpu_to_be16(x) ((uint16_t)(x))
#define droce_cpu_to_be32(x) ((uint32_t)(x))
#define droce_cpu_to_be64(x) ((uint64_t)(x))
#endif
#define droce_be16_to_cpu(x) droce_cpu_to_be16(x)
#define droce_be32_to_cpu(x) droce_cpu_to_be32(x)
#define droce_be64_to_cpu(x) droce_cpu_to_be64(x)

/* Unaligned loads and stores: headers after a VLAN tag or in UD GRH areas are not aligned. */
static inline uint16_t
droce_get_be16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return droce_be16_to_cpu(v);
}

static inline uint32_t
droce_get_be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return droce_be32_to_cpu(v);
}

static inline uint64_t
droce_get_be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return droce_be64_to_cpu(v);
}

static inline void
droce_put_be16(void *p, uint16_t v)
{
	v = droce_cpu_to_be16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
droce_put_be32(void *p, uint32_t v)
{
	v = droce_cpu_to_be32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
droce_put_be64(void *p, uint64_t v)
{
	v = droce_cpu_to_be64(v);
	memcpy(p, &v, sizeof(v));
}

/* 24-bit fields (QPN, PSN, MSN) live in the low 3 bytes of a big-endian 32-bit word. */
static inline uint32_t
droce_get_be24(const void *p)
{
	const uint8_t *b = p;

	return ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
}

static inline void
droce_put_be24(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

#endif /* DROCE_BYTEORDER_H */
