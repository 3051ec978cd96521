/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A pool of table slots: the lowest free slot in O(levels) (a bitmap of free slots with a summary
 * bitmap above each level, 64 slots a word: 4 levels cover 2^24), so creating the N-th object
 * costs the same as the first, and the slot each create takes is the one a scan from the bottom
 * would find.
 */
#ifndef DROCE_SLOTS_H
#define DROCE_SLOTS_H

#include <stdint.h>

#define DROCE_SLOTS_LEVELS 4

struct droce_slots {
	uint64_t *bits[DROCE_SLOTS_LEVELS]; /* bits[0]: one bit a slot, set = free */
	uint32_t levels;
	uint32_t lo, hi; /* slots lo .. hi - 1 are pooled */
};

/* 0 or -ENOMEM (-EINVAL beyond 2^24 slots); every slot in [lo, hi) starts free. */
int droce_slots_init(struct droce_slots *s, uint32_t lo, uint32_t hi);
void droce_slots_fini(struct droce_slots *s);
/* The lowest free slot, now taken; -1 when none is free. */
int64_t droce_slots_take(struct droce_slots *s);
/* Give back a slot droce_slots_take returned. */
void droce_slots_put(struct droce_slots *s, uint32_t slot);
/* The lowest taken slot at or above from, or -1: a walk over the bitmap's words, so that a
 * visit of the live objects touches none of the free slots' memory. */
int64_t droce_slots_next_taken(const struct droce_slots *s, uint32_t from);

#endif
