/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CRC32_IMPL_H
#define DROCE_CRC32_IMPL_H

/*
 * The CRC-32 implementations behind droce_crc32(), listed so that tests and benchmarks can run
 * each one. All have zlib's crc32() semantics (seeded, chainable).
 */
#include <stddef.h>
#include <stdint.h>

#include "droce_icrc.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DROCE_CRC32_X86 1
#endif

/* Portable: eight 256-entry tables, eight bytes per step. */
uint32_t droce_crc32_slice8(uint32_t crc, const void *buf, size_t len);

#ifdef DROCE_CRC32_X86
/* Carry-less multiply folding, 4 x 128 bits per step (needs PCLMULQDQ and SSE4.1). */
uint32_t droce_crc32_pclmul(uint32_t crc, const void *buf, size_t len);
/* The same over 4 x 512 bits per step (needs AVX-512F and VPCLMULQDQ). */
uint32_t droce_crc32_vpclmul(uint32_t crc, const void *buf, size_t len);
/* droce_crc32_vpclmul() that also copies buf to dst, from the registers it folds. */
uint32_t droce_crc32_copy_vpclmul(uint32_t crc, void *dst, const void *src, size_t len);
int droce_crc32_pclmul_usable(void);
int droce_crc32_vpclmul_usable(void);
#endif

struct droce_crc32_impl {
	const char *name;
	uint32_t (*fn)(uint32_t crc, const void *buf, size_t len);
	/* fn() fused with a copy of buf to dst; NULL: memcpy, then fn() */
	uint32_t (*copy)(uint32_t crc, void *dst, const void *src, size_t len);
	/* Non-zero when this CPU runs it. */
	int (*usable)(void);
};

/* The i-th implementation, slowest first, including ones this CPU cannot run; NULL past the end. */
const struct droce_crc32_impl *droce_crc32_impl_get(unsigned int i);

#endif /* DROCE_CRC32_IMPL_H */
