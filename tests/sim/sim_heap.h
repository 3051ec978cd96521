/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

/*
 * Binary min-heap of timed events, ordered by (time, insertion sequence) so that events due at
 * the same virtual time fire in the order they were scheduled: the run is a function of the seed.
 */
#include <stdbool.h>
#include <stdint.h>

struct sim_event {
	uint64_t t;
	uint64_t seq;
	uint8_t *buf; /* the frame (owned by the event) */
	uint32_t len;
	uint32_t node; /* receiving node */
	uint64_t pseq; /* order the frame entered its port (a duplicate shares its original's) */
};

struct sim_heap {
	struct sim_event *ev;
	uint32_t n;
	uint32_t cap;
	uint64_t next_seq;
};

void sim_heap_init(struct sim_heap *h);
void sim_heap_fini(struct sim_heap *h);
/* Returns 0 or -ENOMEM; ev->seq is assigned here. */
int sim_heap_push(struct sim_heap *h, const struct sim_event *ev);
bool sim_heap_pop(struct sim_heap *h, struct sim_event *ev);

static inline uint64_t
sim_heap_min_time(const struct sim_heap *h)
{
	return h->n != 0 ? h->ev[0].t : UINT64_MAX;
}

#endif /* SIM_HEAP_H */
