/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_NETEM_RNG_H
#define DROCE_NETEM_RNG_H

/* The emulator's randomness: droce_rng (xoshiro256**), reproducible from one 64-bit seed so
 * a test (or a failing run) can be replayed exactly. */
#include <stdint.h>

#include "droce_rng.h"

struct droce_netem_rng {
	struct droce_rng g;
};

static inline void
droce_netem_rng_seed(struct droce_netem_rng *r, uint64_t seed)
{
	droce_rng_seed(&r->g, seed);
}

static inline uint64_t
droce_netem_rng_u64(struct droce_netem_rng *r)
{
	return droce_rng_next(&r->g);
}

/* Uniform in [0, 1), 53 bits. */
static inline double
droce_netem_rng_unit(struct droce_netem_rng *r)
{
	return droce_rng_unit(&r->g);
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
