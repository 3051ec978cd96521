/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_heap.h"

static bool
ev_before(const struct sim_event *a, const struct sim_event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void
sim_heap_init(struct sim_heap *h)
{
	memset(h, 0, sizeof(*h));
}

void
sim_heap_fini(struct sim_heap *h)
{
	uint32_t i;

	for (i = 0; i < h->n; i++)
		free(h->ev[i].buf);
	free(h->ev);
	memset(h, 0, sizeof(*h));
}

int
sim_heap_push(struct sim_heap *h, const struct sim_event *ev)
{
	struct sim_event tmp;
	uint32_t i;

	if (h->n == h->cap) {
		uint32_t cap = h->cap != 0 ? h->cap * 2 : 256;
		struct sim_event *nev = realloc(h->ev, (size_t)cap * sizeof(*nev));

		if (nev == NULL)
			return -ENOMEM;
		h->ev = nev;
		h->cap = cap;
	}
	i = h->n++;
	h->ev[i] = *ev;
	h->ev[i].seq = h->next_seq++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!ev_before(&h->ev[i], &h->ev[p]))
			break;
		tmp = h->ev[p];
		h->ev[p] = h->ev[i];
		h->ev[i] = tmp;
		i = p;
	}
	return 0;
}

bool
sim_heap_pop(struct sim_heap *h, struct sim_event *ev)
{
	struct sim_event tmp;
	uint32_t i = 0;

	if (h->n == 0)
		return false;
	*ev = h->ev[0];
	h->ev[0] = h->ev[--h->n];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && ev_before(&h->ev[l], &h->ev[m]))
			m = l;
		if (r < h->n && ev_before(&h->ev[r], &h->ev[m]))
			m = r;
		if (m == i)
			break;
		tmp = h->ev[m];
		h->ev[m] = h->ev[i];
		h->ev[i] = tmp;
		i = m;
	}
	return true;
}
