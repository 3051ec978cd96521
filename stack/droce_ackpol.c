/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ACK holding (droce_ackpol.h): a pure ACK that is all its responder has to send waits, unbuilt,
 * on a device list until other frames go (it rides with them), its delay ends (the QP's timer
 * in the device heap), it answers `coalesce` requests, or the caller turns holding off. It stays
 * the newest item of the response ring meanwhile: later ACKs merge into it (IBTA 9.7.5.1: one
 * ACK for every request up to its PSN), and anything else queued behind it (a NAK, a READ or
 * atomic response) releases it first, so responses keep their order.
 */
#include <errno.h>

#include "droce_internal.h"

static const struct droce_ack_policy *
qp_policy(const struct droce_qp *qp)
{
	return qp->ackpol_own ? &qp->ackpol : &qp->dev->ackpol;
}

static void
held_unlink(struct droce_qp *qp)
{
	struct droce_dev *dev = qp->dev;

	if (qp->hprev)
		qp->hprev->hnext = qp->hnext;
	else
		dev->held_head = qp->hnext;
	if (qp->hnext)
		qp->hnext->hprev = qp->hprev;
	qp->hnext = qp->hprev = NULL;
	qp->ack_held = false;
	qp->ack_due = UINT64_MAX;
	dev->n_held--;
}

void
droce_ack_drop(struct droce_qp *qp)
{
	if (!qp->ack_held)
		return;
	held_unlink(qp);
	droce_sched_deadline(qp);
}

void
droce_ack_release(struct droce_qp *qp)
{
	if (!qp->ack_held)
		return;
	droce_ack_drop(qp);
	droce_sched_ready(qp);
}

/* The ACK ring tail was queued or merged into: hold it, or let it go. */
void
droce_ack_note(struct droce_qp *qp)
{
	const struct droce_ack_policy *pol = qp_policy(qp);
	struct droce_dev *dev = qp->dev;
	struct droce_responder *s = &qp->resp;

	if (qp->ack_held) {
		if (pol->coalesce != 0 && ++qp->ack_reqs >= pol->coalesce)
			droce_ack_release(qp);
		return;
	}
	/* only an ACK that is all the responder owes: nothing is queued ahead of it */
	if (!dev->ack_hold || pol->delay_ns == 0 || s->ring_head - s->ring_tail != 1 ||
	    s->final_nak_pending || pol->coalesce == 1) {
		droce_sched_ready(qp);
		return;
	}
	qp->ack_held = true;
	qp->ack_reqs = 1;
	qp->ack_due = dev->now + pol->delay_ns;
	qp->hprev = NULL;
	qp->hnext = dev->held_head;
	if (dev->held_head)
		dev->held_head->hprev = qp;
	dev->held_head = qp;
	dev->n_held++;
	droce_qp_cnt(qp, DROCE_CNT_ACK_HELD);
	droce_sched_deadline(qp);
}

void
droce_ack_timer(struct droce_qp *qp, uint64_t now)
{
	if (!qp->ack_held || qp->ack_due > now)
		return;
	droce_qp_cnt(qp, DROCE_CNT_ACK_HELD_TIMEOUT);
	held_unlink(qp);
	droce_sched_ready(qp);
}

/* Every waiting ACK to the ready list: at its head (they lead the frames of this pass) or at
 * its tail (they follow them). */
void
droce_ack_release_all(struct droce_dev *dev, bool lead)
{
	struct droce_qp *qp;

	while ((qp = dev->held_head) != NULL) {
		held_unlink(qp);
		droce_sched_deadline(qp);
		if (qp->ready)
			continue;
		if (!lead || dev->ready_head == NULL) {
			droce_sched_ready(qp);
			continue;
		}
		qp->ready = true;
		qp->rprev = NULL;
		qp->rnext = dev->ready_head;
		dev->ready_head->rprev = qp;
		dev->ready_head = qp;
	}
}

int
droce_dev_set_ack_policy(struct droce_dev *dev, const struct droce_ack_policy *pol)
{
	if (dev == NULL || pol == NULL ||
	    (pol->order != DROCE_ACK_ORDER_FIFO && pol->order != DROCE_ACK_ORDER_REQUESTS_FIRST))
		return -EINVAL;
	dev->ackpol = *pol;
	return 0;
}

void
droce_dev_ack_policy(const struct droce_dev *dev, struct droce_ack_policy *pol)
{
	*pol = dev->ackpol;
}

int
droce_qp_set_ack_policy(struct droce_qp *qp, const struct droce_ack_policy *pol)
{
	if (qp == NULL || !qp->used)
		return -EINVAL;
	qp->ackpol_own = pol != NULL;
	if (pol != NULL)
		qp->ackpol = *pol;
	return 0;
}

void
droce_dev_ack_hold(struct droce_dev *dev, bool on)
{
	dev->ack_hold = on;
}

unsigned int
droce_dev_acks_held(const struct droce_dev *dev)
{
	return dev->n_held;
}
