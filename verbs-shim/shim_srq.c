/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues on the engine (basic SRQs: XRC and tag matching are refused by
 * ibv_create_srq_ex's op). The engine has no query, so the shim keeps the attributes it set.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_shim.h"

struct shim_srq_req {
	struct droce_pd *pd;
	struct droce_srq *srq;
	struct droce_srq_attr attr;
	unsigned int mask;
	void *ctx;
	struct ibv_recv_wr *wr;
	struct ibv_recv_wr *bad;
};

static int
shim_srq_create_fn(struct droce_rt *rt, void *arg)
{
	struct shim_srq_req *r = arg;
	int err = 0;

	(void)rt;
	r->srq = droce_srq_create(r->pd, &r->attr, r->ctx, &err);
	return r->srq != NULL ? 0 : -err;
}

static int
shim_srq_modify_fn(struct droce_rt *rt, void *arg)
{
	struct shim_srq_req *r = arg;

	(void)rt;
	return droce_srq_modify(r->srq, &r->attr, r->mask);
}

static int
shim_srq_destroy_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return droce_srq_destroy(((struct shim_srq_req *)arg)->srq);
}

struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct shim_srq_req r = { .pd = ((struct droce_shim_pd *)pd)->epd };
	struct droce_shim_srq *srq;
	int rc;

	if (init->attr.max_wr == 0 || init->attr.max_wr > DROCE_SHIM_MAX_SRQ_WR ||
	    init->attr.max_sge > DROCE_SHIM_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	r.attr.max_wr = init->attr.max_wr;
	r.attr.max_sge = init->attr.max_sge;
	r.attr.srq_limit = init->attr.srq_limit;
	r.ctx = srq;
	rc = droce_shim_call(shim_srq_create_fn, &r);
	if (rc != 0) {
		free(srq);
		errno = -rc;
		return NULL;
	}
	srq->esrq = r.srq;
	srq->attr = init->attr;
	srq->srq.context = pd->context;
	srq->srq.srq_context = init->srq_context;
	srq->srq.pd = pd;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	srq->srq.events_completed = 0;
	droce_shim_track_srq(srq, true);
	return &srq->srq;
}

int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct droce_shim_srq *s = (struct droce_shim_srq *)srq;
	struct shim_srq_req r = { .srq = s->esrq, .mask = (unsigned int)mask };
	int rc;

	r.attr.max_wr = attr->max_wr;
	r.attr.max_sge = attr->max_sge;
	r.attr.srq_limit = attr->srq_limit;
	rc = droce_shim_call(shim_srq_modify_fn, &r); /* mask bits equal IBV_SRQ_* */
	if (rc != 0)
		return droce_shim_fail(-rc);
	if (mask & IBV_SRQ_MAX_WR)
		s->attr.max_wr = attr->max_wr;
	if (mask & IBV_SRQ_LIMIT)
		s->attr.srq_limit = attr->srq_limit;
	return 0;
}

int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	*attr = ((struct droce_shim_srq *)srq)->attr;
	return 0;
}

int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct droce_shim_srq *s = (struct droce_shim_srq *)srq;
	struct shim_srq_req r = { .srq = s->esrq };
	int rc = droce_shim_call(shim_srq_destroy_fn, &r);

	if (rc != 0) /* -EBUSY while a QP uses it */
		return droce_shim_fail(-rc);
	droce_shim_track_srq(s, false);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	free(s);
	return 0;
}

static int
shim_post_srq_recv_fn(struct droce_rt *rt, void *arg)
{
	struct shim_srq_req *r = arg;
	struct droce_sge sge[DROCE_SHIM_MAX_SGE];
	struct droce_recv_wr d, *dbad;
	struct ibv_recv_wr *w;
	int rc, i;

	(void)rt;
	for (w = r->wr; w != NULL; w = w->next) {
		r->bad = w;
		if (w->num_sge < 0 || w->num_sge > DROCE_SHIM_MAX_SGE)
			return -EINVAL;
		for (i = 0; i < w->num_sge; i++) {
			sge[i].addr = w->sg_list[i].addr;
			sge[i].length = w->sg_list[i].length;
			sge[i].lkey = w->sg_list[i].lkey;
		}
		d.wr_id = w->wr_id;
		d.next = NULL;
		d.sg_list = sge;
		d.num_sge = w->num_sge;
		rc = droce_post_srq_recv(r->srq, &d, &dbad);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
droce_shim_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct shim_srq_req r = { .srq = ((struct droce_shim_srq *)srq)->esrq, .wr = wr };
	int rc = droce_shim_call_send(shim_post_srq_recv_fn, &r);

	if (rc != 0)
		*bad_wr = r.bad;
	return -rc;
}
