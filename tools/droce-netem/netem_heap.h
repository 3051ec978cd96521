/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_NETEM_HEAP_H
#define DROCE_NETEM_HEAP_H

/*
 * Frames held until their departure time: a binary min-heap over a caller-provided array, so
 * the bound is fixed at start and the hot path never allocates. Equal times leave in insertion
 * order (a sequence number breaks ties), which keeps a jitter-free link FIFO.
 */
#include <stdint.h>

struct droce_netem_held {
	uint64_t when_ns;
	uint64_t seq;
	void *item;
};

struct droce_netem_heap {
	struct droce_netem_held *v;
	uint32_t cap;
	uint32_t len;
	uint64_t next_seq;
};

void droce_netem_heap_init(struct droce_netem_heap *h, struct droce_netem_held *storage,
			   uint32_t cap);

/* Returns 0 or -ENOSPC when cap items are already held. */
int droce_netem_heap_push(struct droce_netem_heap *h, uint64_t when_ns, void *item);

/* The earliest item if it is due at now_ns (removed), else NULL. */
void *droce_netem_heap_pop_due(struct droce_netem_heap *h, uint64_t now_ns);

/* Departure time of the earliest item; UINT64_MAX when empty. */
static inline uint64_t
droce_netem_heap_next(const struct droce_netem_heap *h)
{
	return h->len != 0 ? h->v[0].when_ns : UINT64_MAX;
}

#endif /* DROCE_NETEM_HEAP_H */
