/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains and memory regions on the engine. Each engine call runs as a closure
 * through droce_shim_call() (on the poll lcore in lcore mode); verbs return a positive errno
 * (and set errno), constructors NULL with errno.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_rt.h"
#include "droce_shim.h"

/* A closure's arguments: the objects it works on, and where it leaves a new one. */
struct shim_req {
	struct droce_shim_dev *dev;
	struct droce_pd *pd;
	void *addr;
	size_t len;
	unsigned int access;
	void *out;
};

static int
shim_pd_alloc_fn(struct droce_rt *rt, void *arg)
{
	struct shim_req *r = arg;
	int err = 0;

	r->out = droce_pd_alloc(droce_rt_dev(rt), &err);
	return r->out != NULL ? 0 : -err;
}

static int
shim_pd_dealloc_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return droce_pd_dealloc(((struct shim_req *)arg)->pd);
}

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *context)
{
	struct droce_shim_ctx *sc = droce_shim_ctx(context);
	struct shim_req r = { .dev = sc->dev };
	struct droce_shim_pd *pd;
	int rc;

	if (droce_shim_rt(sc->dev) == NULL)
		return NULL;
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return droce_shim_null(-ENOMEM);
	rc = droce_shim_call(shim_pd_alloc_fn, &r);
	if (rc != 0) {
		free(pd);
		return droce_shim_null(rc);
	}
	pd->epd = r.out;
	pd->pd.context = context;
	pd->pd.handle = 0;
	return &pd->pd;
}

int
ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct droce_shim_pd *p = (struct droce_shim_pd *)pd;
	struct shim_req r = { .pd = p->epd };
	int rc = droce_shim_call(shim_pd_dealloc_fn, &r);

	if (rc != 0) /* -EBUSY while MRs, QPs or AHs still use it */
		return droce_shim_fail(-rc);
	free(p);
	return 0;
}

static int
shim_mr_reg_fn(struct droce_rt *rt, void *arg)
{
	struct shim_req *r = arg;
	int err = 0;

	(void)rt;
	r->out = droce_mr_reg(r->pd, r->addr, r->len, r->access, &err);
	return r->out != NULL ? 0 : -err;
}

static int
shim_mr_dereg_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return droce_mr_dereg(((struct shim_req *)arg)->out);
}

/*
 * The engine keys a region by its virtual address: a different iova (ZERO_BASED, or
 * ibv_reg_mr_iova) is not supported, nor is on-demand paging.
 */
/* The access flags the engine takes (DROCE_ACCESS_* equal IBV_ACCESS_*), or -errno. */
static int
shim_mr_access(unsigned int access)
{
	const unsigned int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				   IBV_ACCESS_MW_BIND;

	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE; /* hints: may be ignored */
	if ((access & ~known) != 0)
		return -EOPNOTSUPP;
	/* IBTA 10.6.3.1: remote write or atomic access requires local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return (int)access;
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct droce_shim_pd *p = (struct droce_shim_pd *)pd;
	struct shim_req r = { .pd = p->epd, .addr = addr, .len = length };
	struct droce_shim_mr *mr;
	int rc = shim_mr_access(access);

	if (iova != (uintptr_t)addr)
		return droce_shim_null(-EOPNOTSUPP);
	if (rc < 0)
		return droce_shim_null(rc);
	r.access = (unsigned int)rc;
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return droce_shim_null(-ENOMEM);
	rc = droce_shim_call(shim_mr_reg_fn, &r);
	if (rc != 0) {
		free(mr);
		return droce_shim_null(rc);
	}
	mr->emr = r.out;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.lkey = droce_mr_lkey(mr->emr);
	mr->mr.rkey = droce_mr_rkey(mr->emr);
	mr->access = r.access;
	return &mr->mr;
}

/*
 * A new engine region with the changed PD, range or access, then the old one goes: the keys
 * change (verbs allows it). Any failure leaves the old region as it was
 * (IBV_REREG_MR_ERR_INPUT: "old MR is valid").
 */
int
ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct droce_shim_mr *m = (struct droce_shim_mr *)mr;
	struct shim_req r, old = { .out = m->emr };
	int rc;

	if (flags == 0 || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && pd == NULL)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (!(flags & IBV_REREG_MR_CHANGE_PD))
		pd = mr->pd;
	if (!(flags & IBV_REREG_MR_CHANGE_TRANSLATION)) {
		addr = mr->addr;
		length = mr->length;
	}
	rc = shim_mr_access(flags & IBV_REREG_MR_CHANGE_ACCESS ? (unsigned int)access : m->access);
	if (rc >= 0) {
		r = (struct shim_req){ .pd = ((struct droce_shim_pd *)pd)->epd,
				       .addr = addr,
				       .len = length,
				       .access = (unsigned int)rc };
		rc = droce_shim_call(shim_mr_reg_fn, &r);
	}
	if (rc < 0) {
		errno = -rc;
		return IBV_REREG_MR_ERR_INPUT;
	}
	rc = droce_shim_call(shim_mr_dereg_fn, &old);
	if (rc != 0) {
		droce_shim_call(shim_mr_dereg_fn, &r);
		errno = -rc;
		return IBV_REREG_MR_ERR_INPUT;
	}
	m->emr = r.out;
	m->access = r.access;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = droce_mr_lkey(m->emr);
	mr->rkey = droce_mr_rkey(m->emr);
	return 0;
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				 int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int
ibv_dereg_mr(struct ibv_mr *mr)
{
	struct droce_shim_mr *m = (struct droce_shim_mr *)mr;
	struct shim_req r = { .out = m->emr };
	int rc = droce_shim_call(shim_mr_dereg_fn, &r);

	if (rc != 0)
		return droce_shim_fail(-rc);
	free(m);
	return 0;
}
