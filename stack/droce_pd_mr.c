/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains and memory regions. A key's low bits select the MR table slot (O(1) lookup);
 * its high bits are random (io->rand64), and lkey and rkey differ, so a peer cannot derive one key
 * from another (IBTA 10.6.3.2 leaves key values to the CI; guessing resistance is ours).
 */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"

struct droce_pd *
droce_pd_alloc(struct droce_dev *dev, int *err)
{
	uint32_t i;

	for (i = 0; i < dev->attr.max_pd; i++) {
		if (!dev->pds[i].used) {
			memset(&dev->pds[i], 0, sizeof(dev->pds[i]));
			dev->pds[i].dev = dev;
			dev->pds[i].used = true;
			return &dev->pds[i];
		}
	}
	if (err)
		*err = ENOMEM;
	return NULL;
}

int
droce_pd_dealloc(struct droce_pd *pd)
{
	if (pd == NULL || !pd->used)
		return -EINVAL;
	if (pd->refs != 0)
		return -EBUSY; /* verbs: objects still use it */
	pd->used = false;
	return 0;
}

static uint32_t
make_key(struct droce_dev *dev, uint32_t slot)
{
	return ((uint32_t)dev->io.rand64(dev->io.ctx) & ~(dev->mr_mask | DROCE_KEY_MW)) | slot;
}

struct droce_mr *
droce_mr_reg(struct droce_pd *pd, void *addr, size_t length, unsigned int access, int *err)
{
	const unsigned int known = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				   DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC |
				   DROCE_ACCESS_MW_BIND;
	struct droce_dev *dev;
	struct droce_mr *mr = NULL;
	int64_t slot;
	uint32_t i;
	int e = EINVAL;

	if (pd == NULL || !pd->used || (access & ~known) != 0)
		goto fail;
	/* IBTA 10.6.3.1: remote write or atomic access needs local write. */
	if ((access & (DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & DROCE_ACCESS_LOCAL_WRITE))
		goto fail;
	if ((uintptr_t)addr + length < (uintptr_t)addr || (addr == NULL && length != 0))
		goto fail;
	dev = pd->dev;
	slot = droce_slots_take(&dev->mr_slots); /* slots 1 .. max_mr */
	if (slot < 0) {
		e = ENOMEM;
		goto fail;
	}
	i = (uint32_t)slot;
	mr = &dev->mrs[i];
	mr->pd = pd;
	mr->addr = (uintptr_t)addr;
	mr->length = length;
	mr->access = access;
	mr->lkey = make_key(dev, i);
	do
		mr->rkey = make_key(dev, i);
	while (mr->rkey == mr->lkey);
	mr->used = true;
	pd->refs++;
	return mr;
fail:
	if (err)
		*err = e;
	return NULL;
}

int
droce_mr_dereg(struct droce_mr *mr)
{
	if (mr == NULL || !mr->used)
		return -EINVAL;
	if (mr->mw_refs != 0)
		return -EBUSY; /* verbs: memory windows are still bound to it */
	mr->used = false;
	mr->pd->refs--;
	droce_slots_put(&mr->pd->dev->mr_slots, (uint32_t)(mr - mr->pd->dev->mrs));
	mr->lkey = mr->rkey = 0;
	return 0;
}

uint32_t
droce_mr_lkey(const struct droce_mr *mr)
{
	return mr->lkey;
}

uint32_t
droce_mr_rkey(const struct droce_mr *mr)
{
	return mr->rkey;
}

/* A local SGE: L_Key valid, same PD, access, bounds (IBTA 10.6.3.x; verbs LOC_PROT_ERR). */
int
droce_mr_check_local(struct droce_pd *pd, const struct droce_sge *sge, unsigned int access)
{
	struct droce_mr *mr;

	if (sge->length == 0)
		return 0; /* nothing is touched */
	mr = droce_dev_mr(pd->dev, sge->lkey);
	if (mr == NULL || mr->lkey != sge->lkey || mr->pd != pd ||
	    (mr->access & access) != access ||
	    !droce_range_in(mr->addr, mr->length, sge->addr, sge->length))
		return -EACCES;
	return 0;
}

/*
 * A remote access (IBTA 9.7.4.1.3 C9-86..C9-88, 10.6.3.x): R_Key names a valid MR, the MR is in
 * the QP's PD, both the MR and the QP allow the access, and [va, va + len) lies inside the MR.
 */
struct droce_mr *
droce_mr_check_remote(struct droce_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
		      unsigned int access)
{
	struct droce_mr *mr;

	if (rkey & DROCE_KEY_MW)
		return droce_mw_check_remote(qp, rkey, va, len, access);
	mr = droce_dev_mr(qp->dev, rkey);
	if (mr == NULL || mr->rkey != rkey || mr->pd != qp->pd)
		return NULL;
	if ((mr->access & access) != access || (qp->attr.qp_access_flags & access) != access)
		return NULL;
	if (!droce_range_in(mr->addr, mr->length, va, len))
		return NULL;
	return mr;
}
