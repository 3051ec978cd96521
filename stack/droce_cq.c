/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues. A full CQ is an overrun (IBTA 11.4.2.1): the completion is lost,
 * the CQ reports -EOVERFLOW from then on and a CQ error event is raised; memory stays intact.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_ext.h"
#include "droce_internal.h"

#define DROCE_MAX_CQE (1u << 22)

struct droce_cq *
droce_cq_create(struct droce_dev *dev, uint32_t cqe, void *cq_context, int *err)
{
	struct droce_cq *cq;
	int64_t slot;

	if (dev == NULL || cqe == 0 || cqe > DROCE_MAX_CQE) {
		if (err)
			*err = EINVAL;
		return NULL;
	}
	slot = droce_slots_take(&dev->cq_slots);
	if (slot < 0) {
		if (err)
			*err = ENOMEM;
		return NULL;
	}
	cq = &dev->cqs[slot];
	memset(cq, 0, sizeof(*cq));
	cq->ring = calloc(cqe, sizeof(*cq->ring));
	if (cq->ring == NULL) {
		droce_slots_put(&dev->cq_slots, (uint32_t)slot);
		if (err)
			*err = ENOMEM;
		return NULL;
	}
	cq->dev = dev;
	cq->cap = cqe;
	cq->context = cq_context;
	cq->used = true;
	return cq;
}

int
droce_cq_destroy(struct droce_cq *cq)
{
	if (cq == NULL || !cq->used)
		return -EINVAL;
	if (cq->refs != 0)
		return -EBUSY;
	free(cq->ring);
	cq->ring = NULL;
	cq->used = false;
	droce_slots_put(&cq->dev->cq_slots, (uint32_t)(cq - cq->dev->cqs));
	return 0;
}

int
droce_cq_resize(struct droce_cq *cq, uint32_t cqe)
{
	struct droce_wc *ring;
	uint32_t i, slot;

	if (cq == NULL || !cq->used || cqe == 0 || cqe > DROCE_MAX_CQE || cqe < cq->count)
		return -EINVAL;
	ring = calloc(cqe, sizeof(*ring));
	if (ring == NULL)
		return -ENOMEM;
	for (i = 0, slot = cq->head; i < cq->count; i++) {
		ring[i] = cq->ring[slot];
		if (++slot == cq->cap)
			slot = 0;
	}
	free(cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->cap = cqe;
	return 0;
}

struct droce_wc *
droce_cq_slot(struct droce_cq *cq)
{
	uint32_t slot;

	if (cq->overflow)
		return NULL;
	if (cq->count == cq->cap) {
		cq->overflow = true;
		droce_dev_event(cq->dev, DROCE_EVENT_CQ_ERR, cq);
		return NULL;
	}
	slot = cq->head + cq->count;
	if (slot >= cq->cap)
		slot -= cq->cap;
	return &cq->ring[slot];
}

void
droce_cq_push(struct droce_cq *cq, const struct droce_wc *wc, bool solicited)
{
	struct droce_wc *slot = droce_cq_slot(cq);

	if (slot == NULL)
		return;
	*slot = *wc;
	droce_cq_commit(cq, slot, solicited);
}

void
droce_cq_commit(struct droce_cq *cq, struct droce_wc *wc, bool solicited)
{
	wc->timestamp = cq->dev->now;
	cq->count++;
	/* IBTA 11.4.2.2: an armed CQ signals the next completion (solicited-only: the next
	 * solicited one or one in error). */
	if (cq->armed && (!cq->solicited_only || solicited || wc->status != DROCE_WC_SUCCESS)) {
		cq->armed = false;
		cq->events++;
	}
}

int
droce_cq_poll(struct droce_cq *cq, unsigned int n, struct droce_wc *wc)
{
	unsigned int i;

	if (cq->count == 0 && !cq->overflow)
		return 0;
	if (cq->overflow)
		return -EOVERFLOW;
	for (i = 0; i < n && cq->count > 0; i++) {
		wc[i] = cq->ring[cq->head];
		if (++cq->head == cq->cap)
			cq->head = 0;
		cq->count--;
	}
	return (int)i;
}

int
droce_cq_req_notify(struct droce_cq *cq, bool solicited_only)
{
	if (cq == NULL || !cq->used)
		return -EINVAL;
	/* A solicited-only request does not weaken an existing "any completion" arming. */
	if (!cq->armed)
		cq->solicited_only = solicited_only;
	else if (!solicited_only)
		cq->solicited_only = false;
	cq->armed = true;
	return 0;
}

uint64_t
droce_cq_events(const struct droce_cq *cq)
{
	return cq->events;
}
