/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat, responder side (droce_sr.h): requests past a gap are kept (their data placed
 * at once), each answered by a selective NAK; once the gap fills they execute in PSN order.
 */
#include <errno.h>
#include <string.h>

#include "droce_byteorder.h"
#include "droce_internal.h"
#include "droce_psn.h"
#include "resp/droce_resp.h"
#include "droce_sr.h"
#include "wire/droce_aeth.h"
#include "wire/droce_srh.h"

#define SR_MASK (DROCE_SR_WIN - 1)

const struct droce_pkt *
droce_sr_strip(const struct droce_qp *qp, const struct droce_pkt *p, struct droce_pkt *tmp)
{
	uint32_t h = droce_sr_hdr_len(p->opcode);

	(void)qp;
	if (h == 0)
		return p;
	if (p->pay_len < h)
		return NULL;
	*tmp = *p;
	tmp->pay_off = (uint16_t)(tmp->pay_off + h);
	tmp->pay_len -= h;
	return tmp;
}

/* A PSN sequence error NAK for the first missing PSN, its MSN field the PSN kept (droce_sr.h);
 * not coalesced: each one reports a different PSN. */
static void
sel_nak(struct droce_qp *qp, uint32_t got)
{
	struct droce_resp_item *it = droce_resp_push(qp);

	if (it == NULL)
		return; /* the next one, or the requester's timer, tells it */
	droce_qp_cnt(qp, DROCE_CNT_SEND_SEQ_ERR);
	it->kind = DROCE_RESP_NAK;
	it->sel = true;
	it->syn = DROCE_AETH_TYPE_NAK | DROCE_NAK_PSN_SEQ_ERR;
	it->psn = qp->resp.epsn;
	it->msn = got & DROCE_AETH_MSN_MASK;
}

/* The receive WQE SEND data of ordinal ord goes to: the one in use, or one posted behind it
 * (on a shared receive queue, taken from it now: droce_sr_srq.c). */
static const struct droce_rwqe *
send_target(struct droce_qp *qp, uint32_t ord)
{
	struct droce_responder *s = &qp->resp;
	struct droce_sr *sr = qp->sr;
	uint32_t idx = ord - sr->ord;

	if (ord == sr->ord - 1 && s->have_rwqe && s->msg == DROCE_RMSG_SEND)
		return &s->rwqe;
	if (qp->srq != NULL)
		return droce_sr_srq_target(qp, idx);
	if (idx >= qp->rq.head - qp->rq.tail)
		return NULL;
	return &qp->rq.ring[(qp->rq.tail + idx) & qp->rq.mask];
}

/* SEND data at its place in the receive WQE (the checks its in-order arrival would make on the
 * buffer: L_Key and length, IBTA 9.7.5.1.x; the rest wait for execution). */
static int
place_send(struct droce_qp *qp, const struct droce_pkt *q, const uint8_t *frame, const uint8_t *hdr)
{
	uint32_t ord = droce_get_be32(hdr), off = droce_get_be32(hdr + 4), i;
	const struct droce_rwqe *rw = send_target(qp, ord);
	struct droce_cursor c = { 0 };

	if (rw == NULL || (uint64_t)off + q->pay_len > rw->length)
		return -ENOENT;
	for (i = 0; i < rw->num_sge; i++)
		if (droce_mr_check_local(qp->pd, &rw->sge[i], DROCE_ACCESS_LOCAL_WRITE) != 0)
			return -EACCES;
	if (q->pay_len != 0) {
		droce_cursor_seek(&c, rw->sge, rw->num_sge, off);
		droce_copy_in(rw->sge, &c, frame + q->pay_off, q->pay_len);
	}
	return 0;
}

/* WRITE data at its VA: the RETH's for FIRST/ONLY, the placement header's after (C9-88: the
 * R_Key and the range are checked for this packet's bytes). */
static int
place_write(struct droce_qp *qp, const struct droce_pkt *q, const uint8_t *frame,
	    const struct droce_opcode_info *op, const uint8_t *hdr)
{
	uint64_t va = (op->flags & DROCE_OPF_FIRST) ? q->reth_va : droce_get_be64(hdr);
	uint32_t rkey = (op->flags & DROCE_OPF_FIRST) ? q->reth_rkey : droce_get_be32(hdr + 8);

	if (q->pay_len == 0)
		return 0;
	if (!(qp->attr.qp_access_flags & DROCE_ACCESS_REMOTE_WRITE) ||
	    droce_mr_check_remote(qp, rkey, va, q->pay_len, DROCE_ACCESS_REMOTE_WRITE) == NULL)
		return -EACCES;
	droce_sr_write(qp, q->psn, (uint8_t *)(uintptr_t)va, frame + q->pay_off, q->pay_len);
	qp->sr->slot[q->psn & SR_MASK].pva = va;
	if (qp->sr->kept_n == 0 || va < qp->sr->kmin)
		qp->sr->kmin = (uintptr_t)va;
	if (qp->sr->kept_n == 0 || va + q->pay_len > qp->sr->kmax)
		qp->sr->kmax = (uintptr_t)(va + q->pay_len);
	return 0;
}

void
droce_sr_write(struct droce_qp *qp, uint32_t psn, uint8_t *dst, const uint8_t *src, uint32_t n)
{
	struct droce_sr *sr = qp->sr;
	uintptr_t a = (uintptr_t)dst;
	uint64_t mask[DROCE_SR_MAX_PAY / 64];
	uint32_t q, i, run;
	bool any = false;

	if (sr->kept_n == 0 || a + n <= sr->kmin || a >= sr->kmax || n > DROCE_SR_MAX_PAY) {
		memcpy(dst, src, n);
		return;
	}
	memset(mask, 0, (n + 63) / 64 * 8);
	for (q = droce_psn_add(psn, 1); droce_psn_lt(q, sr->kept_hi); q = droce_psn_add(q, 1)) {
		const struct droce_sr_slot *sl = &sr->slot[q & SR_MASK];
		uintptr_t lo, hi;

		if (!droce_sr_bit(sr->kept, q) || sl->pay_len == 0 || sl->pva == 0)
			continue;
		lo = sl->pva > a ? sl->pva : a;
		hi = sl->pva + sl->pay_len < a + n ? sl->pva + sl->pay_len : a + n;
		for (; lo < hi; lo++) {
			mask[(lo - a) >> 6] |= 1ull << ((lo - a) & 63);
			any = true;
		}
	}
	if (!any) {
		memcpy(dst, src, n);
		return;
	}
	for (i = 0; i < n; i += run) {
		bool skip = (mask[i >> 6] >> (i & 63)) & 1;

		for (run = 1;
		     i + run < n && (((mask[(i + run) >> 6] >> ((i + run) & 63)) & 1) == skip);
		     run++)
			;
		if (!skip)
			memcpy(dst + i, src + i, run);
	}
}

static int
keep(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	struct droce_sr_slot *sl = &qp->sr->slot[p->psn & SR_MASK];
	const uint8_t *hdr = frame + p->pay_off;
	const struct droce_pkt *q;
	struct droce_pkt tmp;
	int rc = 0;

	sl->pva = 0;
	q = droce_sr_strip(qp, p, &tmp);
	if (q == NULL || q->pay_len > qp->seg)
		return -EINVAL;
	if (op->flags & DROCE_OPF_ATOMIC_WRITE) {
		if (q->pay_len != sizeof(sl->swap))
			return -EINVAL;
		memcpy(&sl->swap, frame + q->pay_off, sizeof(sl->swap));
	} else if (op->flags & DROCE_OPF_WRITE) {
		rc = place_write(qp, q, frame, op, hdr);
	} else if (op->flags & DROCE_OPF_SEND) {
		rc = place_send(qp, q, frame, hdr);
	} else if (op->flags & DROCE_OPF_ATOMIC) {
		sl->swap = q->atomic_swap_add;
		sl->compare = q->atomic_compare;
	}
	if (rc != 0)
		return rc;
	sl->opcode = p->opcode;
	sl->se = p->se;
	sl->pay_len = (uint16_t)q->pay_len;
	sl->imm = (op->flags & DROCE_OPF_INV) ? p->ieth_rkey : p->imm;
	if (op->flags & DROCE_OPF_ATOMIC) {
		sl->va = p->atomic_va;
		sl->rkey = p->atomic_rkey;
	} else {
		sl->va = p->reth_va;
		sl->rkey = p->reth_rkey;
		sl->len = p->reth_len;
	}
	return 0;
}

/* A request d PSNs past the expected one (IBTA 9.7.5.1.1 would drop it and NAK once). */
void
droce_sr_resp_ahead(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	struct droce_responder *s = &qp->resp;
	struct droce_sr *sr = qp->sr;
	uint32_t d = (uint32_t)droce_psn_diff(p->psn, s->epsn);

	droce_qp_cnt(qp, DROCE_CNT_OUT_OF_SEQ_REQUEST);
	if (sr->kept_n != 0 && droce_sr_bit(sr->kept, p->psn)) {
		droce_qp_cnt(qp, DROCE_CNT_DUPLICATE_REQUEST); /* kept already */
		sel_nak(qp, p->psn);
		return;
	}
	if (d >= DROCE_SR_WIN || s->final_nak_pending || keep(qp, p, frame) != 0) {
		droce_dev_drop(qp->dev, DROCE_DROP_PSN_OUT_OF_SEQ);
		sel_nak(qp, s->epsn); /* nothing kept: only the first missing PSN */
		return;
	}
	droce_sr_bit_set(sr->kept, p->psn);
	if (sr->kept_n++ == 0 || droce_psn_lt(sr->kept_hi, droce_psn_add(p->psn, 1)))
		sr->kept_hi = droce_psn_add(p->psn, 1);
	droce_qp_cnt(qp, DROCE_CNT_SR_KEPT);
	sel_nak(qp, p->psn);
}

/* Execute kept request psn as if it had just arrived; its data is in place already. */
static enum droce_rst
replay(struct droce_qp *qp, uint32_t psn, struct droce_pkt *pk)
{
	struct droce_sr *sr = qp->sr;
	const struct droce_sr_slot *sl = &sr->slot[psn & SR_MASK];
	const struct droce_opcode_info *op = droce_opcode_info(sl->opcode);
	enum droce_rst st;

	memset(pk, 0, sizeof(*pk));
	pk->opcode = sl->opcode;
	pk->psn = psn;
	pk->se = sl->se;
	pk->pay_len = sl->pay_len;
	pk->imm = sl->imm;
	pk->ieth_rkey = sl->imm;
	pk->reth_va = sl->va;
	pk->reth_rkey = sl->rkey;
	pk->reth_len = sl->len;
	pk->atomic_va = sl->va;
	pk->atomic_rkey = sl->rkey;
	pk->atomic_swap_add = sl->swap;
	pk->atomic_compare = sl->compare;
	pk->srcap = true; /* only marked requests are kept */
	sr->replay = true;
	/* the "frame" of an ATOMIC WRITE is its kept 8 bytes (pay_off 0) */
	st = droce_resp_execute(qp, pk, op, (const uint8_t *)&sl->swap);
	sr->replay = false;
	return st;
}

/* The expected PSN moved: kept requests now in sequence execute in order; then an ACK, or a
 * selective NAK for the next gap. */
void
droce_sr_resp_advance(struct droce_qp *qp)
{
	struct droce_responder *s = &qp->resp;
	struct droce_sr *sr = qp->sr;
	struct droce_pkt pk;
	bool moved = false;

	if (sr->kept_n == 0)
		return;
	while (sr->kept_n != 0 && droce_sr_bit(sr->kept, s->epsn)) {
		uint32_t psn = s->epsn;
		enum droce_rst st;

		droce_sr_bit_clear(sr->kept, psn);
		sr->kept_n--;
		st = replay(qp, psn, &pk);
		if (st == RST_DONE || st == RST_QUIET) {
			s->epsn = droce_psn_add(
				s->epsn, (droce_opcode_info(pk.opcode)->flags & DROCE_OPF_READ) ?
						 droce_qp_npkts(qp, pk.reth_len) :
						 1);
			moved = true;
			continue;
		}
		/* Not executed: the requester sends it again, and it is handled then. */
		if (st == RST_RNR) {
			droce_qp_cnt(qp, DROCE_CNT_SEND_RNR_ERR);
			droce_dev_drop(qp->dev, DROCE_DROP_NO_RWQE);
			s->nak_seq_sent = true;
			if (moved)
				droce_resp_ack(qp, droce_psn_add(psn, DROCE_PSN_MASK));
			droce_resp_nak(
				qp, DROCE_AETH_TYPE_RNR_NAK | (qp->attr.min_rnr_timer & 0x1F), psn);
		} else if (st != RST_DROP) {
			droce_resp_fatal(qp, st, &pk);
		}
		return;
	}
	if (sr->kept_n != 0)
		sel_nak(qp, droce_psn_add(sr->kept_hi, DROCE_PSN_MASK));
	else if (moved)
		droce_resp_ack(qp, droce_psn_add(s->epsn, DROCE_PSN_MASK));
}
