/* SPDX-License-Identifier: BSD-3-Clause */
/* Binary min-heap of held frames keyed by (departure time, arrival sequence). */
#include <errno.h>
#include <stddef.h>

#include "netem_heap.h"

static int
before(const struct droce_netem_held *a, const struct droce_netem_held *b)
{
	return a->when_ns < b->when_ns || (a->when_ns == b->when_ns && a->seq < b->seq);
}

void
droce_netem_heap_init(struct droce_netem_heap *h, struct droce_netem_held *storage, uint32_t cap)
{
	h->v = storage;
	h->cap = cap;
	h->len = 0;
	h->next_seq = 0;
}

int
droce_netem_heap_push(struct droce_netem_heap *h, uint64_t when_ns, void *item)
{
	struct droce_netem_held x = { when_ns, h->next_seq, item };
	uint32_t i, parent;

	if (h->len == h->cap)
		return -ENOSPC;
	h->next_seq++;
	i = h->len++;
	while (i > 0) {
		parent = (i - 1) / 2;
		if (!before(&x, &h->v[parent]))
			break;
		h->v[i] = h->v[parent];
		i = parent;
	}
	h->v[i] = x;
	return 0;
}

void *
droce_netem_heap_pop_due(struct droce_netem_heap *h, uint64_t now_ns)
{
	struct droce_netem_held last;
	uint32_t i = 0, c;
	void *item;

	if (h->len == 0 || h->v[0].when_ns > now_ns)
		return NULL;
	item = h->v[0].item;
	last = h->v[--h->len];
	/* Sift the last element down from the root. */
	for (;;) {
		c = 2 * i + 1;
		if (c >= h->len)
			break;
		if (c + 1 < h->len && before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->len != 0)
		h->v[i] = last;
	return item;
}
