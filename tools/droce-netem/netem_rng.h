/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_NETEM_RNG_H
#define DROCE_NETEM_RNG_H

/*
 * xoshiro256** seeded through splitmix64: fast, good enough for impairment statistics, and
 * reproducible from one 64-bit seed so a test (or a failing run) can be replayed exactly.
 */
#include <stdint.h>

struct droce_netem_rng {
	uint64_t s[4];
};

static inline uint64_t
droce_netem_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline void
droce_netem_rng_seed(struct droce_netem_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = droce_netem_splitmix64(&seed);
}

static inline uint64_t
droce_netem_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t
droce_netem_rng_u64(struct droce_netem_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = droce_netem_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = droce_netem_rotl(s[3], 45);
	return res;
}

/* Uniform in [0, 1), 53 bits. */
static inline double
droce_netem_rng_unit(struct droce_netem_rng *r)
{
	return (double)(droce_netem_rng_u64(r) >> 11) * 0x1.0p-53;
}

/* True with probability p; p <= 0 never draws, so a disabled impairment costs no randomness. */
static inline int
droce_netem_rng_chance(struct droce_netem_rng *r, double p)
{
	if (p <= 0.0)
		return 0;
	if (p >= 1.0)
		return 1;
	return droce_netem_rng_unit(r) < p;
}

/* Uniform in [0, n) for n > 0 (multiply-shift; the bias is below 2^-32 for the n used here). */
static inline uint64_t
droce_netem_rng_below(struct droce_netem_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)droce_netem_rng_u64(r) * n) >> 64);
}

#endif /* DROCE_NETEM_RNG_H */
