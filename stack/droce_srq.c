/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive queues: the per-QP RQ and the shared receive queue (IBTA 10.2.9) with its limit event. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_sr.h"

enum { DROCE_SRQ_MAX_WR = 1 << 0, DROCE_SRQ_LIMIT = 1 << 1 }; /* as ibv_srq_attr_mask */

int
droce_rq_post(struct droce_rq *rq, struct droce_recv_wr *wr, struct droce_recv_wr **bad_wr)
{
	for (; wr != NULL; wr = wr->next) {
		struct droce_rwqe *w;
		uint64_t len = 0;
		int i;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge ||
		    (wr->num_sge > 0 && wr->sg_list == NULL)) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (rq->head - rq->tail >= rq->max_wr) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		w = &rq->ring[rq->head & rq->mask];
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->sge = &rq->sges[(size_t)(rq->head & rq->mask) * rq->max_sge];
		for (i = 0; i < wr->num_sge; i++) {
			w->sge[i] = wr->sg_list[i];
			len += wr->sg_list[i].length;
		}
		w->length = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
		rq->head++;
	}
	return 0;
}

int
droce_rq_init(struct droce_rq *rq, uint32_t max_wr, uint32_t max_sge)
{
	uint32_t n = droce_pow2_at_least(max_wr);

	memset(rq, 0, sizeof(*rq));
	rq->max_wr = max_wr;
	rq->max_sge = max_sge ? max_sge : 1;
	rq->mask = n - 1;
	rq->ring = calloc(n, sizeof(*rq->ring));
	rq->sges = calloc((size_t)n * rq->max_sge, sizeof(*rq->sges));
	if (rq->ring == NULL || rq->sges == NULL) {
		free(rq->ring);
		free(rq->sges);
		rq->ring = NULL;
		rq->sges = NULL;
		return -ENOMEM;
	}
	return 0;
}

void
droce_rq_fini(struct droce_rq *rq)
{
	free(rq->ring);
	free(rq->sges);
	rq->ring = NULL;
	rq->sges = NULL;
}

struct droce_srq *
droce_srq_create(struct droce_pd *pd, const struct droce_srq_attr *attr, void *srq_context,
		 int *err)
{
	struct droce_dev *dev;
	struct droce_srq *srq = NULL;
	uint32_t i;

	if (pd == NULL || attr == NULL || attr->max_wr == 0 || attr->max_wr > DROCE_MAX_WR ||
	    attr->max_sge > DROCE_MAX_SGE) {
		if (err)
			*err = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	for (i = 0; i < dev->attr.max_srq; i++) {
		if (!dev->srqs[i].used) {
			srq = &dev->srqs[i];
			break;
		}
	}
	if (srq == NULL || droce_rq_init(&srq->rq, attr->max_wr, attr->max_sge) != 0) {
		if (err)
			*err = ENOMEM;
		return NULL;
	}
	srq->pd = pd;
	srq->limit = attr->srq_limit;
	srq->context = srq_context;
	srq->refs = 0;
	srq->used = true;
	pd->refs++;
	return srq;
}

int
droce_srq_modify(struct droce_srq *srq, const struct droce_srq_attr *attr, unsigned int mask)
{
	if (srq == NULL || !srq->used || attr == NULL ||
	    (mask & ~(unsigned int)(DROCE_SRQ_MAX_WR | DROCE_SRQ_LIMIT)) != 0)
		return -EINVAL;
	/* Resizing is not supported (verbs: EINVAL when the device lacks SRQ_RESIZE). */
	if (mask & DROCE_SRQ_MAX_WR)
		return -EINVAL;
	/* IBTA 11.2.3.3: the limit must not exceed the SRQ size. */
	if ((mask & DROCE_SRQ_LIMIT) && attr->srq_limit > srq->rq.max_wr)
		return -EINVAL;
	if (mask & DROCE_SRQ_LIMIT)
		srq->limit = attr->srq_limit;
	return 0;
}

int
droce_srq_destroy(struct droce_srq *srq)
{
	if (srq == NULL || !srq->used)
		return -EINVAL;
	if (srq->refs != 0)
		return -EBUSY;
	droce_rq_fini(&srq->rq);
	srq->used = false;
	srq->pd->refs--;
	return 0;
}

int
droce_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr, struct droce_recv_wr **bad_wr)
{
	return droce_rq_post(&srq->rq, wr, bad_wr);
}

/* IBTA 10.2.9.2: when the WQEs left drop below an armed limit, one event, then disarm. */
void
droce_srq_consumed(struct droce_srq *srq)
{
	if (srq->limit != 0 && srq->rq.head - srq->rq.tail < srq->limit) {
		srq->limit = 0;
		droce_dev_event(srq->pd->dev, DROCE_EVENT_SRQ_LIMIT_REACHED, srq);
	}
}

/* Take the next receive WQE of a QP (from its SRQ if it has one); its SGEs are copied to the
 * responder so that the slot can be reposted while the message is still arriving. */
bool
droce_rq_pop(struct droce_qp *qp, struct droce_rwqe *out)
{
	struct droce_rq *rq = qp->srq ? &qp->srq->rq : &qp->rq;
	const struct droce_rwqe *w;

	if (qp->sr != NULL && droce_sr_srq_pop(qp, out))
		return true;
	if (rq->head == rq->tail)
		return false;
	w = &rq->ring[rq->tail & rq->mask];
	*out = *w;
	out->sge = qp->resp.sges;
	memcpy(qp->resp.sges, w->sge, w->num_sge * sizeof(*w->sge));
	rq->tail++;
	if (qp->srq)
		droce_srq_consumed(qp->srq);
	return true;
}
