/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): the bitwise reference, byte table and
 * slice-by-8 versions, and the choice of the fastest one this CPU runs.
 */
#include <string.h>

#include "droce_crc32_impl.h"
#include "droce_crc_tables.h"

#define CRC32_POLY_REFLECTED 0xEDB88320u

uint32_t
droce_crc32_bitwise(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int k;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (CRC32_POLY_REFLECTED & (0u - (crc & 1)));
	}
	return ~crc;
}

/* crc32_tab[0] is the byte table; crc32_tab[k][b] is byte b followed by k zero bytes (const,
 * generated at build time: droce_crc_tables.h). */
#define crc32_tab droce_crc32_tab

uint32_t
droce_crc32_table(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--)
		crc = (crc >> 8) ^ crc32_tab[0][(crc ^ *p++) & 0xFF];
	return ~crc;
}

/* Little-endian load whatever the host order and alignment; compilers turn it into one mov. */
static inline uint32_t
crc32_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

uint32_t
droce_crc32_slice8(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t lo, hi;

	crc = ~crc;
	while (len >= 8) {
		lo = crc ^ crc32_le32(p);
		hi = crc32_le32(p + 4);
		crc = crc32_tab[7][lo & 0xFF] ^ crc32_tab[6][(lo >> 8) & 0xFF] ^
		      crc32_tab[5][(lo >> 16) & 0xFF] ^ crc32_tab[4][lo >> 24] ^
		      crc32_tab[3][hi & 0xFF] ^ crc32_tab[2][(hi >> 8) & 0xFF] ^
		      crc32_tab[1][(hi >> 16) & 0xFF] ^ crc32_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		/* four table reads at once, not four in a row: an AETH, a DETH half, a tail */
		lo = crc ^ crc32_le32(p);
		crc = crc32_tab[3][lo & 0xFF] ^ crc32_tab[2][(lo >> 8) & 0xFF] ^
		      crc32_tab[1][(lo >> 16) & 0xFF] ^ crc32_tab[0][lo >> 24];
		p += 4;
		len -= 4;
	}
	while (len--)
		crc = (crc >> 8) ^ crc32_tab[0][(crc ^ *p++) & 0xFF];
	return ~crc;
}

static const struct droce_crc32_impl crc32_impls[] = {
	{ "bitwise", droce_crc32_bitwise, NULL, NULL },
	{ "table", droce_crc32_table, NULL, NULL },
	{ "slice8", droce_crc32_slice8, NULL, NULL },
#ifdef DROCE_CRC32_X86
	{ "pclmul", droce_crc32_pclmul, NULL, droce_crc32_pclmul_usable },
	{ "vpclmul", droce_crc32_vpclmul, droce_crc32_copy_vpclmul, droce_crc32_vpclmul_usable },
#endif
};

const struct droce_crc32_impl *
droce_crc32_impl_get(unsigned int i)
{
	if (i >= sizeof(crc32_impls) / sizeof(crc32_impls[0]))
		return NULL;
	return &crc32_impls[i];
}

/*
 * The fastest implementation this CPU runs: the last usable one of the list (slowest first; the
 * unit tests check that this picks the same). Asked on each call rather than remembered, so
 * the engine keeps no writable state: the tests read the CPU's feature bits that libgcc fills
 * before main (until then they read 0, and slice-by-8 is right anyway), a load and a test each,
 * inline here.
 */
static inline const struct droce_crc32_impl *
crc32_best(void)
{
#ifdef DROCE_CRC32_X86
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3") &&
	    __builtin_cpu_supports("sse4.1")) {
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq"))
			return &crc32_impls[4];
		return &crc32_impls[3];
	}
#endif
	return &crc32_impls[2];
}

uint32_t
droce_crc32(uint32_t crc, const void *buf, size_t len)
{
	/* What follows the headers of an ACK, a small WRITE or SEND: no indirect call for it
	 * (the carry-less versions hand anything under 16 bytes to slice-by-8 anyway). */
	if (len < 16)
		return droce_crc32_slice8(crc, buf, len);
	return crc32_best()->fn(crc, buf, len);
}

uint32_t
droce_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
	const struct droce_crc32_impl *im = crc32_best();

	if (im->copy != NULL)
		return im->copy(crc, dst, src, len);
	memcpy(dst, src, len);
	return im->fn(crc, dst, len);
}

const char *
droce_crc32_impl_name(void)
{
	return crc32_best()->name;
}
