/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RNG_H
#define DROCE_RNG_H

/*
 * xoshiro256** seeded through splitmix64: the engine never draws randomness itself (its caller
 * injects it), but the programs that feed it reproducible randomness (the simulator, the link
 * emulator) share this one generator. Fast, statistically good enough for impairments and
 * workloads, and fully determined by one 64-bit seed, so a run replays exactly.
 */
#include <stdint.h>

struct droce_rng {
	uint64_t s[4];
};

static inline uint64_t
droce_rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The state from one 64-bit seed (splitmix64 spreads it over the four words). */
static inline void
droce_rng_seed(struct droce_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = droce_rng_splitmix64(&seed);
}

static inline uint64_t
droce_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t
droce_rng_next(struct droce_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = droce_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = droce_rng_rotl(s[3], 45);
	return res;
}

/* Uniform in [0, 1), 53 bits. */
static inline double
droce_rng_unit(struct droce_rng *r)
{
	return (double)(droce_rng_next(r) >> 11) * 0x1.0p-53;
}

#endif /* DROCE_RNG_H */
