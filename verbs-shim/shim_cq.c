/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues on the engine: ibv_create_cq and ibv_create_cq_ex objects (one layout),
 * polling in both forms, arming, the clock of their timestamps (ibv_query_rt_values_ex). Engine
 * calls run as closures through droce_shim_call().
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce_rt.h"
#include "droce_shim.h"

/* A closure's arguments: the objects it works on, and where it leaves a new one. */
struct shim_req {
	struct droce_shim_dev *dev;
	struct droce_cq *cq;
	uint32_t n;
	void *ctx;
	struct droce_wc *wc;
	void *out;
};

static int
shim_cq_create_fn(struct droce_rt *rt, void *arg)
{
	struct shim_req *r = arg;
	int err = 0;

	r->out = droce_cq_create(droce_rt_dev(rt), r->n, r->ctx, &err);
	return r->out != NULL ? 0 : -err;
}

static int
shim_cq_destroy_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return droce_cq_destroy(((struct shim_req *)arg)->cq);
}

static int
shim_cq_poll_fn(struct droce_rt *rt, void *arg)
{
	struct shim_req *r = arg;

	(void)rt;
	return droce_cq_poll(r->cq, r->n, r->wc);
}

static int
shim_cq_resize_fn(struct droce_rt *rt, void *arg)
{
	struct shim_req *r = arg;

	(void)rt;
	return droce_cq_resize(r->cq, r->n);
}

static int
shim_cq_notify_fn(struct droce_rt *rt, void *arg)
{
	struct shim_req *r = arg;

	(void)rt;
	return droce_cq_req_notify(r->cq, r->n != 0);
}

static struct droce_shim_cq *
shim_cq_create(struct ibv_context *context, int cqe, void *cq_context,
	       struct ibv_comp_channel *channel, uint32_t comp_vector)
{
	struct droce_shim_ctx *sc = droce_shim_ctx(context);
	struct shim_req r = { .dev = sc->dev };
	struct droce_shim_cq *cq;
	int rc;

	if (cqe < 1 || cqe > DROCE_SHIM_MAX_CQE || comp_vector != 0)
		return droce_shim_null(-EINVAL);
	if (droce_shim_rt(sc->dev) == NULL)
		return NULL;
	cq = malloc(sizeof(*cq));
	if (cq == NULL)
		return droce_shim_null(-ENOMEM);
	droce_shim_init_cq(cq, context, channel, cq_context, cqe);
	r.n = (uint32_t)cqe;
	r.ctx = cq;
	rc = droce_shim_call(shim_cq_create_fn, &r);
	if (rc != 0) {
		if (channel != NULL)
			channel->refcnt--;
		free(cq);
		return droce_shim_null(rc);
	}
	cq->ecq = r.out;
	droce_shim_track_cq(cq, true);
	return cq;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct droce_shim_cq *cq;

	if (comp_vector < 0)
		return droce_shim_null(-EINVAL);
	cq = shim_cq_create(context, cqe, cq_context, channel, (uint32_t)comp_vector);
	return cq != NULL ? &cq->cq : NULL;
}

/* Completions carry no VLAN, flow tag or tag-matching data. Their timestamps are the engine's
 * clock when it made them (ns); the wall clock adds the offset of CLOCK_REALTIME to it. */
struct ibv_cq_ex *
droce_shim_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *a)
{
	const uint64_t flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	const uint32_t masks = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	struct droce_shim_cq *cq;
	struct timespec ts;

	if ((a->wc_flags & ~flags) != 0 || (a->comp_mask & ~masks) ||
	    ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (a->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)))
		return droce_shim_null(-EOPNOTSUPP);
	if (a->cqe > INT32_MAX)
		return droce_shim_null(-EINVAL);
	cq = shim_cq_create(context, (int)a->cqe, a->cq_context, a->channel, a->comp_vector);
	if (cq == NULL)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	cq->wall_off = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec -
		       droce_rt_now(droce_shim_rt(droce_shim_ctx(context)->dev));
	return &cq->cq_ex;
}

/* The clock completion timestamps are read on, as mlx5 reports it: ticks in tv_nsec. */
int
droce_shim_query_rt_values(struct ibv_context *c, struct ibv_values_ex *v)
{
	struct droce_rt *rt;

	if (v->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		rt = droce_shim_rt(droce_shim_ctx(c)->dev);
		if (rt == NULL)
			return errno;
		v->raw_clock.tv_sec = 0;
		v->raw_clock.tv_nsec = (long)droce_rt_now(rt);
	}
	v->comp_mask &= IBV_VALUES_MASK_RAW_CLOCK;
	return 0;
}

/* Exactly cqe slots (verbs asks at least that many), the waiting completions kept; EINVAL when
 * more are waiting than cqe. 0 or an errno value, as libibverbs. */
int
ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct droce_shim_cq *c = (struct droce_shim_cq *)cq;
	struct shim_req r = { .cq = c->ecq };
	int rc;

	if (cqe < 1 || cqe > DROCE_SHIM_MAX_CQE)
		return droce_shim_fail(EINVAL);
	r.n = (uint32_t)cqe;
	rc = droce_shim_call(shim_cq_resize_fn, &r);
	if (rc != 0)
		return droce_shim_fail(-rc);
	cq->cqe = cqe;
	return 0;
}

int
ibv_destroy_cq(struct ibv_cq *cq)
{
	struct droce_shim_cq *c = (struct droce_shim_cq *)cq;
	struct shim_req r = { .cq = c->ecq };
	int rc;

	droce_shim_cq_disarm(c);
	rc = droce_shim_call(shim_cq_destroy_fn, &r);
	if (rc != 0) /* -EBUSY while a QP uses it */
		return droce_shim_fail(-rc);
	droce_shim_track_cq(c, false);
	if (cq->channel != NULL)
		cq->channel->refcnt--;
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	free(c);
	return 0;
}

/* WITH_INV differs: the engine's bit 2 is verbs' IP_CSUM_OK, verbs' WITH_INV is bit 3. */
unsigned int
droce_shim_wc_flags(unsigned int f)
{
	return (f & DROCE_WC_GRH ? IBV_WC_GRH : 0) | (f & DROCE_WC_WITH_IMM ? IBV_WC_WITH_IMM : 0) |
	       (f & DROCE_WC_WITH_INV ? IBV_WC_WITH_INV : 0);
}

static void
shim_wc(struct ibv_wc *w, const struct droce_wc *d)
{
	w->wr_id = d->wr_id;
	w->status = (enum ibv_wc_status)d->status;
	w->opcode = (enum ibv_wc_opcode)d->opcode;
	w->vendor_err = d->vendor_err;
	w->byte_len = d->byte_len;
	w->imm_data = d->imm_data;
	w->qp_num = d->qp_num;
	w->src_qp = d->src_qp;
	w->wc_flags = droce_shim_wc_flags(d->wc_flags);
	w->pkey_index = d->pkey_index;
	w->slid = d->slid;
	w->sl = d->sl;
	w->dlid_path_bits = d->dlid_path_bits;
}

enum { SHIM_POLL_CHUNK = 16 };

int
droce_shim_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct droce_wc tmp[SHIM_POLL_CHUNK];
	struct shim_req r = { .cq = ((struct droce_shim_cq *)cq)->ecq, .wc = tmp };
	int total = 0, rc, i;

	droce_shim_progress();
	while (total < num_entries) {
		r.n = (uint32_t)(num_entries - total < SHIM_POLL_CHUNK ? num_entries - total :
									 SHIM_POLL_CHUNK);
		rc = droce_shim_call(shim_cq_poll_fn, &r);
		if (rc < 0)
			return total > 0 ? total : rc; /* -EOVERFLOW after an overrun */
		for (i = 0; i < rc; i++)
			shim_wc(&wc[total + i], &tmp[i]);
		total += rc;
		if ((uint32_t)rc < r.n)
			break;
	}
	return total;
}

/* One completion into cq->cur for ibv_start_poll / ibv_next_poll: 0, ENOENT or an errno. */
int
droce_shim_cq_poll_one(struct droce_shim_cq *cq)
{
	struct shim_req r = { .cq = cq->ecq, .wc = &cq->cur, .n = 1 };
	int rc = droce_shim_call(shim_cq_poll_fn, &r);

	if (rc < 0)
		return -rc;
	if (rc == 0)
		return ENOENT;
	cq->cq_ex.wr_id = cq->cur.wr_id;
	cq->cq_ex.status = (enum ibv_wc_status)cq->cur.status;
	return 0;
}

int
droce_shim_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct shim_req r = { .cq = ((struct droce_shim_cq *)cq)->ecq, .n = solicited_only != 0 };

	/* On a channel the watcher must see the event (without a watcher thread nothing would
	 * wake ibv_get_cq_event(), so that fails with EOPNOTSUPP). */
	if (cq->channel != NULL)
		return -droce_shim_cq_arm((struct droce_shim_cq *)cq, solicited_only != 0);
	return -droce_shim_call(shim_cq_notify_fn, &r);
}
