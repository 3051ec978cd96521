/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (IBTA 10.6.7): a window gives a peer remote access to part of an MR under a
 * key of its own, which can be rebound or invalidated without touching the MR. Type 1 belongs
 * to its PD; type 2 to the QP it was bound through. Both are bound by a BIND_MW work request,
 * executed by the requester in send-queue order (droce_req.c), as rxe and ConnectX do.
 */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"

#define KEY_BYTE 0xFFu

/* Random bits, the slot, a random key byte (never 0 as a whole: slot 0 is never used). */
static uint32_t
make_key(struct droce_dev *dev, uint32_t slot)
{
	uint64_t r = dev->io.rand64(dev->io.ctx);
	uint32_t fixed = (dev->mw_mask << DROCE_MW_SLOT_SHIFT) | KEY_BYTE;

	return DROCE_KEY_MW | ((uint32_t)r & ~(DROCE_KEY_MW | fixed)) |
	       (slot << DROCE_MW_SLOT_SHIFT) | (uint32_t)(r >> 40 & KEY_BYTE);
}

static struct droce_mw *
lookup(struct droce_dev *dev, uint32_t rkey)
{
	struct droce_mw *mw;

	if (!(rkey & DROCE_KEY_MW) || dev->mws == NULL)
		return NULL;
	mw = &dev->mws[(rkey >> DROCE_MW_SLOT_SHIFT) & dev->mw_mask];
	return mw->used && mw->rkey == rkey ? mw : NULL;
}

struct droce_mw *
droce_mw_alloc(struct droce_pd *pd, enum droce_mw_type type, int *err)
{
	struct droce_dev *dev;
	struct droce_mw *mw;
	uint32_t i;

	if (pd == NULL || !pd->used || (type != DROCE_MW_TYPE_1 && type != DROCE_MW_TYPE_2)) {
		if (err)
			*err = EINVAL;
		return NULL;
	}
	dev = pd->dev;
	for (i = 1; dev->mws != NULL && i <= dev->mw_mask && i <= dev->attr.max_mw; i++) {
		mw = &dev->mws[i];
		if (mw->used)
			continue;
		memset(mw, 0, sizeof(*mw));
		mw->pd = pd;
		mw->type = type;
		mw->rkey = make_key(dev, i);
		mw->used = true;
		pd->refs++;
		return mw;
	}
	if (err)
		*err = ENOMEM;
	return NULL;
}

static void
unbind(struct droce_mw *mw)
{
	if (mw->mr != NULL)
		mw->mr->mw_refs--;
	if (mw->qp != NULL)
		mw->qp->mw_n--;
	mw->mr = NULL;
	mw->qp = NULL;
	mw->addr = mw->length = 0;
	mw->access = 0;
}

int
droce_mw_dealloc(struct droce_mw *mw)
{
	if (mw == NULL || !mw->used)
		return -EINVAL;
	unbind(mw);
	mw->used = false;
	mw->rkey = 0;
	mw->pd->refs--;
	return 0;
}

uint32_t
droce_mw_rkey(const struct droce_mw *mw)
{
	return mw->rkey;
}

/* As droce_mr_check_remote, through a window: C9-86..C9-88 and 10.6.7.2.x (a type 2 window
 * serves only the QP it was bound through, a type 1 window any QP of its PD). */
struct droce_mr *
droce_mw_check_remote(struct droce_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
		      unsigned int access)
{
	struct droce_mw *mw = lookup(qp->dev, rkey);

	if (mw == NULL || mw->mr == NULL || mw->pd != qp->pd)
		return NULL;
	if (mw->type == DROCE_MW_TYPE_2 && mw->qp != qp)
		return NULL;
	if ((mw->access & access) != access || (qp->attr.qp_access_flags & access) != access)
		return NULL;
	return droce_range_in(mw->addr, mw->length, va, len) ? mw->mr : NULL;
}

/* The checks of 10.6.7.2.x on a bind, with the ordinal o10-/C10- items beside each. */
static bool
bind_ok(const struct droce_qp *qp, const struct droce_swqe *w)
{
	const unsigned int remote =
		DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC;
	const struct droce_mw *mw = w->mw;
	const struct droce_mr *mr = w->bind_mr;
	uint64_t len = w->compare_add;

	if (mw == NULL || !mw->used || mw->pd->dev != qp->dev)
		return false;
	/* 10.6.7.2: the consumer owns the key's low 8 bits only; the rest must be the window's.
	 * A bind posted for a window deallocated since, its slot taken by a new one (other
	 * random bits), fails rather than binding that one. (rxe takes the low byte alone.) */
	if ((w->rkey & ~KEY_BYTE) != (mw->rkey & ~KEY_BYTE))
		return false;
	/* C10-72: the window, the QP and the MR share one PD */
	if (mw->pd != qp->pd || (w->bind_access & ~remote) != 0)
		return false;
	if (mw->type == DROCE_MW_TYPE_2) {
		/* o10-37.2.30: only a free type 2 window binds; o10-37.2.40: not to nothing */
		if (mw->mr != NULL || mr == NULL || len == 0)
			return false;
	}
	if (len == 0)
		return mr == NULL || mr->used; /* type 1 unbind */
	if (mr == NULL || !mr->used || mr->pd != mw->pd)
		return false;
	/* C10-73: the MR allows windows */
	if (!(mr->access & DROCE_ACCESS_MW_BIND))
		return false;
	/* C10-74: remote write or atomic through the window needs local write on the MR */
	if ((w->bind_access & (DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & DROCE_ACCESS_LOCAL_WRITE))
		return false;
	/* C10-75: the window lies inside the MR (virtual addresses: no zero-based windows) */
	return droce_range_in(mr->addr, mr->length, w->raddr, len);
}

enum droce_wc_status
droce_mw_bind(struct droce_qp *qp, const struct droce_swqe *w)
{
	struct droce_mw *mw = w->mw;

	if (!bind_ok(qp, w))
		return DROCE_WC_MW_BIND_ERR;
	unbind(mw);
	mw->rkey = w->rkey; /* a new low byte (bind_ok: the rest is the window's) */
	if (w->compare_add == 0)
		return DROCE_WC_SUCCESS;
	mw->mr = w->bind_mr;
	mw->mr->mw_refs++;
	mw->addr = w->raddr;
	mw->length = w->compare_add;
	mw->access = w->bind_access;
	if (mw->type == DROCE_MW_TYPE_2) {
		mw->qp = qp;
		qp->mw_n++;
	}
	return DROCE_WC_SUCCESS;
}

/*
 * o10-37.2.26: a type 1 window cannot be invalidated; nor can an MR, since droce has no
 * fast-registered ones (10.6.3.x). The window must be bound and in the QP's PD (a peer must
 * not free another PD's window by naming its key).
 */
int
droce_mw_invalidate(struct droce_qp *qp, uint32_t rkey)
{
	struct droce_mw *mw = lookup(qp->dev, rkey);

	if (mw == NULL || mw->type != DROCE_MW_TYPE_2 || mw->mr == NULL || mw->pd != qp->pd)
		return -EINVAL;
	unbind(mw);
	return 0;
}

void
droce_mw_qp_gone(struct droce_qp *qp)
{
	struct droce_dev *dev = qp->dev;
	uint32_t i;

	/* no scan of the window table for the many QPs that have none bound */
	for (i = 1; dev->mws != NULL && i <= dev->mw_mask && qp->mw_n != 0; i++)
		if (dev->mws[i].used && dev->mws[i].qp == qp)
			unbind(&dev->mws[i]);
}
