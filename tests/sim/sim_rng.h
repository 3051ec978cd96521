/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_RNG_H
#define SIM_RNG_H

/*
 * The simulator's only source of randomness: xoshiro256** seeded through splitmix64. One run seed
 * derives an independent stream per consumer (workload, each link, each device) so that changing
 * the network impairments leaves the workload of a seed unchanged, and a seed replays exactly.
 */
#include <stdint.h>

#include "droce_rng.h"

struct sim_rng {
	struct droce_rng g;
};

/* Stream `stream` of run seed `seed`. */
static inline void
sim_rng_seed(struct sim_rng *r, uint64_t seed, uint64_t stream)
{
	droce_rng_seed(&r->g, seed ^ (stream * 0xD1B54A32D192ED03ull));
}

static inline uint64_t
sim_rng_next(struct sim_rng *r)
{
	return droce_rng_next(&r->g);
}

/* Uniform in [0, 1). */
static inline double
sim_rng_unit(struct sim_rng *r)
{
	return droce_rng_unit(&r->g);
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
