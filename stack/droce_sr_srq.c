/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat on a shared receive queue. A SEND packet past a gap names its receive
 * ordinal (stack/wire/README.md); on an SRQ the WQE it lands in is not known until it is taken,
 * so the responder takes the SRQ's next WQEs for this QP then, one per ordinal from the next
 * message's up to the packet's, and keeps them in ordinal order. Messages then consume them in
 * that order, in sequence as usual, so receive completions come in message order and each
 * message lands in the WQE its packets were placed in. At most DROCE_SR_SRQ_AHEAD are taken
 * ahead: a packet further ahead is dropped and resent, as is one when the SRQ is empty. In the
 * error state they complete on this QP with WR_FLUSH_ERR; a move straight to RESET drops them
 * without completions, as it does the QP's own receive queue.
 */
#include <string.h>

#include "droce_internal.h"
#include "droce_sr.h"

#define AHEAD_MASK (DROCE_SR_SRQ_AHEAD - 1)
_Static_assert((DROCE_SR_SRQ_AHEAD & AHEAD_MASK) == 0, "DROCE_SR_SRQ_AHEAD: a power of two");

const struct droce_rwqe *
droce_sr_srq_target(struct droce_qp *qp, uint32_t idx)
{
	struct droce_sr *sr = qp->sr;
	struct droce_rq *rq = &qp->srq->rq;

	if (idx >= DROCE_SR_SRQ_AHEAD)
		return NULL;
	while (sr->srq_n <= idx) {
		uint32_t i = (sr->srq_head + sr->srq_n) & AHEAD_MASK;
		const struct droce_rwqe *from;

		if (rq->head == rq->tail)
			return NULL;
		from = &rq->ring[rq->tail & rq->mask];
		sr->srq_wqe[i] = *from;
		sr->srq_wqe[i].sge = sr->srq_sge[i];
		memcpy(sr->srq_sge[i], from->sge, from->num_sge * sizeof(*from->sge));
		rq->tail++;
		sr->srq_n++;
		droce_srq_consumed(qp->srq);
	}
	return &sr->srq_wqe[(sr->srq_head + idx) & AHEAD_MASK];
}

bool
droce_sr_srq_pop(struct droce_qp *qp, struct droce_rwqe *out)
{
	struct droce_sr *sr = qp->sr;
	const struct droce_rwqe *w;

	if (sr->srq_n == 0)
		return false;
	w = &sr->srq_wqe[sr->srq_head & AHEAD_MASK];
	*out = *w;
	out->sge = qp->resp.sges;
	memcpy(qp->resp.sges, w->sge, w->num_sge * sizeof(*w->sge));
	sr->srq_head++;
	sr->srq_n--;
	return true;
}

/* They were this QP's once taken (the SRQ cannot have them back): flushed like its own. */
void
droce_sr_srq_flush(struct droce_qp *qp)
{
	struct droce_sr *sr = qp->sr;
	struct droce_wc wc;

	for (; sr->srq_n != 0; sr->srq_n--, sr->srq_head++) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = sr->srq_wqe[sr->srq_head & AHEAD_MASK].wr_id;
		wc.status = DROCE_WC_WR_FLUSH_ERR;
		wc.opcode = DROCE_WC_RECV;
		droce_qp_recv_cqe(qp, &wc, false);
	}
}
