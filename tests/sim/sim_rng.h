/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_RNG_H
#define SIM_RNG_H

/*
 * The simulator's only source of randomness: xoshiro256** seeded through splitmix64. One run seed
 * derives an independent stream per consumer (workload, each link, each device) so that changing
 * the network impairments leaves the workload of a seed unchanged, and a seed replays exactly.
 */
#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

static inline uint64_t
sim_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Stream `stream` of run seed `seed`. */
static inline void
sim_rng_seed(struct sim_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = sim_splitmix64(&x);
}

static inline uint64_t
sim_rng_rotl(uint64_t v, int k)
{
	return (v << k) | (v >> (64 - k));
}

static inline uint64_t
sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = sim_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = sim_rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, 1). */
static inline double
sim_rng_unit(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* True with probability p (never draws when p <= 0, so a zero knob does not shift the stream). */
static inline int
sim_rng_chance(struct sim_rng *r, double p)
{
	if (p <= 0)
		return 0;
	return sim_rng_unit(r) < p;
}

/* Uniform in [0, n); n == 0 gives 0. */
static inline uint64_t
sim_rng_below(struct sim_rng *r, uint64_t n)
{
	return n == 0 ? 0 : sim_rng_next(r) % n;
}

/* Uniform in [lo, hi] inclusive. */
static inline uint64_t
sim_rng_range(struct sim_rng *r, uint64_t lo, uint64_t hi)
{
	return hi <= lo ? lo : lo + sim_rng_below(r, hi - lo + 1);
}

#endif /* SIM_RNG_H */
