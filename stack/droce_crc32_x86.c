/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 (reflected IEEE, zlib semantics) by carry-less multiplication: fold the message into
 * 128-bit (or 512-bit) registers, a partial last block by shuffles, then one Barrett reduction
 * to 32 bits; buffers under 16 bytes go to slice-by-8. Per-function target attributes keep the
 * rest of the stack on the baseline ISA; droce_crc32.c calls these only on CPUs that have them.
 *
 * Constants: tests/unit/gen_crc32_consts.py derives every one and checks the scheme against zlib.
 * A 64-bit lane L stands for sum L_j x^(63-j); PCLMULQDQ of two lanes stands for x * a * b. To move
 * a register forward by D bits its low lane (high-degree half) is multiplied by a lane congruent
 * to x^(D+63) and its high lane by one congruent to x^(D-1), each stored as
 * x^32 * (x^(E-32) mod P), P = 0x104C11DB7, bit-reversed into the low 32 bits.
 */
#include <string.h>

#include "droce_crc32_impl.h"

#ifdef DROCE_CRC32_X86
#include <immintrin.h>

#define PCLMUL_TARGET  __attribute__((target("pclmul,ssse3,sse4.1")))
#define VPCLMUL_TARGET __attribute__((target("pclmul,ssse3,sse4.1,avx512f,vpclmulqdq")))

/* fold by D bits: { low lane: x^(D+63), high lane: x^(D-1) } */
#define K2048_LO 0xce3371cbu /* x^2111 */
#define K2048_HI 0xe95c1271u /* x^2047 */
#define K512_LO	 0x8f352d95u /* x^575 */
#define K512_HI	 0x1d9513d7u /* x^511 */
#define K384_LO	 0x3db1ecdcu /* x^447 */
#define K384_HI	 0xaf449247u /* x^383 */
#define K256_LO	 0xf1da05aau /* x^319 */
#define K256_HI	 0x81256527u /* x^255 */
#define K128_LO	 0xae689191u /* x^191 */
#define K128_HI	 0xccaa009eu /* x^127 */
/* final reduction: x^95 and x^63 mod P (bits 32..63); mu = x^64 / P and P (bits 31..63) */
#define KX95  0xccaa009e00000000ull
#define KX63  0xb8bc676500000000ull
#define KMU   0xfb808b2080000000ull
#define KPOLY 0xedb8832080000000ull

static inline PCLMUL_TARGET __m128i
crc32_load(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

static inline PCLMUL_TARGET __m128i
crc32_fold(__m128i r, __m128i k, __m128i next)
{
	return _mm_xor_si128(
		_mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00), _mm_clmulepi64_si128(r, k, 0x11)),
		next);
}

/* The CRC register (reflected, not inverted) of a 128-bit register: its value times x^32 mod P. */
static inline PCLMUL_TARGET uint32_t
crc32_reduce128(__m128i r)
{
	const __m128i k = _mm_set_epi64x((long long)KX63, (long long)KX95);
	const __m128i mu = _mm_cvtsi64_si128((long long)KMU);
	const __m128i poly = _mm_cvtsi64_si128((long long)KPOLY);
	__m128i x, u, v;
	uint64_t y, q;

	/* low lane * x^96 + high lane * x^32: degree < 96, in bits 32..127 */
	x = _mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00),
			  _mm_slli_si128(_mm_srli_si128(r, 8), 4));
	/* top 32 coefficients (bits 32..63) times x^64 mod P, added to the rest: degree < 64 */
	y = (uint64_t)_mm_extract_epi64(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x10), x), 1);
	/* Barrett: quotient q = floor(floor(y / x^32) * mu / x^32), then y - q * P */
	u = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)(y & 0xFFFFFFFFu)), mu, 0x00);
	q = (uint64_t)_mm_cvtsi128_si64(u) << 1;
	v = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)q), poly, 0x00);
	return (uint32_t)(y >> 32) ^ (uint32_t)((uint64_t)_mm_extract_epi64(v, 1) >> 31);
}

/* pshufb indices: at +16+r shift a register down by r bytes, at +r up by 16-r (0x80 zeroes). */
static const uint8_t crc32_shuf[48] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0,    1,    2,	  3,	4,    5,    6,	  7,
	8,    9,    10,	  11,	12,   13,   14,	  15,	0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

/*
 * Fold the whole 16-byte blocks left at p into x, then the last r < 16 bytes: x * x^(8r) + tail
 * is x's first r bytes moved 128 bits on, plus x's other bytes followed by the tail. The tail
 * comes from an overlapping load of the last 16 bytes, safe since x took at least 16 before p.
 * Returns the zlib-style (inverted) CRC.
 */
static inline PCLMUL_TARGET uint32_t
crc32_finish(__m128i x, const uint8_t *p, size_t len)
{
	const __m128i k = _mm_set_epi64x(K128_HI, K128_LO);
	__m128i down, up, rest;

	while (len >= 16) {
		x = crc32_fold(x, k, crc32_load(p));
		p += 16;
		len -= 16;
	}
	if (len != 0) {
		down = crc32_load(crc32_shuf + 16 + len);
		up = crc32_load(crc32_shuf + len);
		/* up's bytes with the top bit set are where x's shifted-down bytes go */
		rest = _mm_blendv_epi8(crc32_load(p + len - 16), _mm_shuffle_epi8(x, down), up);
		x = crc32_fold(_mm_shuffle_epi8(x, up), k, rest);
	}
	return ~crc32_reduce128(x);
}

PCLMUL_TARGET uint32_t
droce_crc32_pclmul(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	__m128i x0, x1, x2, x3, k;

	if (len < 16)
		return droce_crc32_slice8(crc, buf, len);
	/* the inverted seed enters as the first 32 message bits */
	x0 = _mm_xor_si128(crc32_load(p), _mm_cvtsi32_si128((int)~crc));
	p += 16;
	len -= 16;
	if (len >= 48) {
		x1 = crc32_load(p);
		x2 = crc32_load(p + 16);
		x3 = crc32_load(p + 32);
		p += 48;
		len -= 48;
		k = _mm_set_epi64x(K512_HI, K512_LO);
		while (len >= 64) {
			x0 = crc32_fold(x0, k, crc32_load(p));
			x1 = crc32_fold(x1, k, crc32_load(p + 16));
			x2 = crc32_fold(x2, k, crc32_load(p + 32));
			x3 = crc32_fold(x3, k, crc32_load(p + 48));
			p += 64;
			len -= 64;
		}
		k = _mm_set_epi64x(K128_HI, K128_LO);
		x0 = crc32_fold(x0, k, x1);
		x0 = crc32_fold(x0, k, x2);
		x0 = crc32_fold(x0, k, x3);
	}
	return crc32_finish(x0, p, len);
}

static inline VPCLMUL_TARGET __m512i
crc32_fold512(__m512i r, __m512i k, __m512i next)
{
	/* 0x96: three-way XOR */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(r, k, 0x00),
					 _mm512_clmulepi64_epi128(r, k, 0x11), next, 0x96);
}

/* Four registers from p, also stored at dst unless it is NULL; returns where dst goes on. */
static inline __attribute__((always_inline)) VPCLMUL_TARGET uint8_t *
crc32_load256(const uint8_t *p, uint8_t *dst, __m512i *d0, __m512i *d1, __m512i *d2, __m512i *d3)
{
	*d0 = _mm512_loadu_si512(p);
	*d1 = _mm512_loadu_si512(p + 64);
	*d2 = _mm512_loadu_si512(p + 128);
	*d3 = _mm512_loadu_si512(p + 192);
	if (dst == NULL)
		return NULL;
	_mm512_storeu_si512(dst, *d0);
	_mm512_storeu_si512(dst + 64, *d1);
	_mm512_storeu_si512(dst + 128, *d2);
	_mm512_storeu_si512(dst + 192, *d3);
	return dst + 256;
}

/*
 * The 512-bit fold over buf; with dst, every byte is also stored there (a copy that costs no
 * extra load: the data is in registers for the fold anyway). Inlined into both entry points so
 * the CRC-only one carries no test of dst.
 */
static inline __attribute__((always_inline)) VPCLMUL_TARGET uint32_t
crc32_vp(uint32_t crc, uint8_t *dst, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf;
	__m512i z0, z1, z2, z3, k;
	__m128i x;

	/* below four registers' worth the 128-bit code wins: no set-up, no lane merge */
	if (len < 256) {
		if (dst != NULL)
			memcpy(dst, buf, len);
		return droce_crc32_pclmul(crc, buf, len);
	}
	dst = crc32_load256(p, dst, &z0, &z1, &z2, &z3);
	z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	p += 256;
	len -= 256;
	k = _mm512_broadcast_i32x4(_mm_set_epi64x(K2048_HI, K2048_LO));
	while (len >= 256) {
		__m512i d0, d1, d2, d3;

		dst = crc32_load256(p, dst, &d0, &d1, &d2, &d3);
		z0 = crc32_fold512(z0, k, d0);
		z1 = crc32_fold512(z1, k, d1);
		z2 = crc32_fold512(z2, k, d2);
		z3 = crc32_fold512(z3, k, d3);
		p += 256;
		len -= 256;
	}
	/* the last bytes (under 256) are folded from the source below */
	if (dst != NULL)
		memcpy(dst, p, len);
	k = _mm512_broadcast_i32x4(_mm_set_epi64x(K512_HI, K512_LO));
	z0 = crc32_fold512(z0, k, z1);
	z0 = crc32_fold512(z0, k, z2);
	z0 = crc32_fold512(z0, k, z3);
	while (len >= 64) {
		z0 = crc32_fold512(z0, k, _mm512_loadu_si512(p));
		p += 64;
		len -= 64;
	}
	/* lanes 0..2 move forward by 384, 256, 128 bits onto lane 3; lane 3's constant is 0 */
	k = _mm512_set_epi64(0, 0, K128_HI, K128_LO, K256_HI, K256_LO, K384_HI, K384_LO);
	z1 = _mm512_xor_si512(_mm512_clmulepi64_epi128(z0, k, 0x00),
			      _mm512_clmulepi64_epi128(z0, k, 0x11));
	x = _mm_xor_si128(
		_mm_xor_si128(_mm512_extracti32x4_epi32(z1, 0), _mm512_extracti32x4_epi32(z1, 1)),
		_mm_xor_si128(_mm512_extracti32x4_epi32(z1, 2), _mm512_extracti32x4_epi32(z0, 3)));
	return crc32_finish(x, p, len);
}

VPCLMUL_TARGET uint32_t
droce_crc32_vpclmul(uint32_t crc, const void *buf, size_t len)
{
	return crc32_vp(crc, NULL, buf, len);
}

VPCLMUL_TARGET uint32_t
droce_crc32_copy_vpclmul(uint32_t crc, void *dst, const void *src, size_t len)
{
	return crc32_vp(crc, dst, src, len);
}

int
droce_crc32_pclmul_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3") &&
	       __builtin_cpu_supports("sse4.1");
}

int
droce_crc32_vpclmul_usable(void)
{
	return droce_crc32_pclmul_usable() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("vpclmulqdq");
}

#endif /* DROCE_CRC32_X86 */
