/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows: ibv_alloc_mw, ibv_dealloc_mw and ibv_bind_mw reach these through the
 * context's ops (verbs.h's inlines). ibv_bind_mw (type 1) posts a BIND_MW work request with the
 * window's next key, as rdma-core's rxe provider does; type 2 windows are bound by the
 * application's own BIND_MW (ibv_post_send, ibv_wr_bind_mw). The engine checks the bind when
 * the request executes and completes it with IBV_WC_MW_BIND_ERR if refused.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_rt.h"
#include "droce_shim.h"

struct shim_mw_req {
	struct droce_pd *pd;
	enum droce_mw_type type;
	struct droce_mw *mw;
};

static int
shim_mw_alloc_fn(struct droce_rt *rt, void *arg)
{
	struct shim_mw_req *r = arg;
	int err = 0;

	(void)rt;
	r->mw = droce_mw_alloc(r->pd, r->type, &err);
	return r->mw != NULL ? 0 : -err;
}

static int
shim_mw_dealloc_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return droce_mw_dealloc(((struct shim_mw_req *)arg)->mw);
}

static struct ibv_mw *
shim_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct shim_mw_req r = { .pd = ((struct droce_shim_pd *)pd)->epd };
	struct droce_shim_mw *mw;
	int rc;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return droce_shim_null(-EINVAL);
	r.type = type == IBV_MW_TYPE_1 ? DROCE_MW_TYPE_1 : DROCE_MW_TYPE_2;
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL)
		return droce_shim_null(-ENOMEM);
	rc = droce_shim_call(shim_mw_alloc_fn, &r);
	if (rc != 0) {
		free(mw);
		return droce_shim_null(rc); /* ENOMEM: max_mw windows exist already */
	}
	mw->emw = r.mw;
	mw->mw.context = pd->context;
	mw->mw.pd = pd;
	mw->mw.rkey = droce_mw_rkey(r.mw);
	mw->mw.type = type;
	return &mw->mw;
}

static int
shim_dealloc_mw(struct ibv_mw *mw)
{
	struct droce_shim_mw *m = (struct droce_shim_mw *)mw;
	struct shim_mw_req r = { .mw = m->emw };
	int rc = droce_shim_call(shim_mw_dealloc_fn, &r);

	if (rc != 0)
		return droce_shim_fail(-rc);
	free(m);
	return 0;
}

static int
shim_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	struct ibv_send_wr wr, *bad;
	int rc;

	/* Windows are keyed by virtual address, as MRs are (shim_pd_mr.c). */
	if (b->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return droce_shim_fail(EINVAL);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = b->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = b->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = b->bind_info;
	rc = droce_shim_post_send(qp, &wr, &bad);
	if (rc != 0)
		return rc;
	/* verbs: the new key is the window's from now on; an error completion leaves the
	 * application to restore the old one */
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

void
droce_shim_mw_ops(struct verbs_context *v)
{
	v->context.ops.alloc_mw = shim_alloc_mw;
	v->context.ops.dealloc_mw = shim_dealloc_mw;
	v->context.ops.bind_mw = shim_bind_mw;
}

/* A BIND_MW request's engine form; -EINVAL without a window. */
int
droce_shim_bind_wr(struct droce_send_wr *d, struct ibv_mw *mw, uint32_t rkey,
		   const struct ibv_mw_bind_info *info)
{
	if (mw == NULL)
		return -EINVAL;
	d->wr.bind_mw.mw = ((struct droce_shim_mw *)mw)->emw;
	d->wr.bind_mw.mr = info->mr != NULL ? ((struct droce_shim_mr *)info->mr)->emr : NULL;
	d->wr.bind_mw.addr = info->addr;
	d->wr.bind_mw.length = info->length;
	d->wr.bind_mw.rkey = rkey;
	d->wr.bind_mw.access = info->mw_access_flags; /* IBV_ACCESS_* equal DROCE_ACCESS_* */
	return 0;
}
