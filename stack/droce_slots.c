/* SPDX-License-Identifier: BSD-3-Clause */
/* Free-slot pool for the object tables (droce_slots.h). */
#include <errno.h>
#include <stdlib.h>

#include "droce_slots.h"

static void
set_free(struct droce_slots *s, uint32_t slot)
{
	uint32_t l;

	for (l = 0; l < s->levels; l++) {
		uint64_t *w = &s->bits[l][slot >> 6];
		uint64_t was = *w;

		*w = was | (1ull << (slot & 63));
		if (was != 0)
			return; /* the levels above already say this word has a free slot */
		slot >>= 6;
	}
}

static void
set_taken(struct droce_slots *s, uint32_t slot)
{
	uint32_t l;

	for (l = 0; l < s->levels; l++) {
		uint64_t *w = &s->bits[l][slot >> 6];

		*w &= ~(1ull << (slot & 63));
		if (*w != 0)
			return;
		slot >>= 6;
	}
}

int
droce_slots_init(struct droce_slots *s, uint32_t lo, uint32_t hi)
{
	uint32_t l, n = hi;

	s->levels = 0;
	s->lo = lo;
	s->hi = hi;
	if (hi > (1u << (6 * DROCE_SLOTS_LEVELS)))
		return -EINVAL;
	/* enough levels that the top one is a single word */
	do {
		n = n > 64 ? (n + 63) >> 6 : 1;
		s->bits[s->levels] = calloc(n, sizeof(uint64_t));
		if (s->bits[s->levels++] == NULL) {
			droce_slots_fini(s);
			return -ENOMEM;
		}
	} while (n > 1);
	for (l = hi; l > lo; l--)
		set_free(s, l - 1);
	return 0;
}

void
droce_slots_fini(struct droce_slots *s)
{
	uint32_t l;

	for (l = 0; l < s->levels; l++) {
		free(s->bits[l]);
		s->bits[l] = NULL;
	}
	s->levels = 0;
}

int64_t
droce_slots_take(struct droce_slots *s)
{
	uint32_t idx = 0, l;

	if (s->levels == 0 || s->bits[s->levels - 1][0] == 0)
		return -1;
	for (l = s->levels; l > 0; l--)
		idx = (idx << 6) | (uint32_t)__builtin_ctzll(s->bits[l - 1][idx]);
	set_taken(s, idx);
	return idx;
}

void
droce_slots_put(struct droce_slots *s, uint32_t slot)
{
	if (slot >= s->lo && slot < s->hi)
		set_free(s, slot);
}

int64_t
droce_slots_next_taken(const struct droce_slots *s, uint32_t from)
{
	uint32_t w, last;
	uint64_t t;

	if (from < s->lo)
		from = s->lo;
	if (s->levels == 0 || from >= s->hi)
		return -1;
	last = (s->hi - 1) >> 6;
	w = from >> 6;
	/* a clear bit is a taken slot; bits below lo and from at or above hi are never set */
	t = ~s->bits[0][w] & (~0ull << (from & 63));
	while (t == 0) {
		if (++w > last)
			return -1;
		t = ~s->bits[0][w];
	}
	w = (w << 6) | (uint32_t)__builtin_ctzll(t);
	return w < s->hi ? (int64_t)w : -1;
}
