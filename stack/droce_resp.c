/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder (IBTA 9.7.5.1, 9.8 for UC, 9.6/10.2.5 for UD). A request runs through small steps,
 * each returning the next state; error states map one-to-one to the NAK they send.
 */
#include <errno.h>
#include <string.h>

#include "droce_byteorder.h"
#include "droce_internal.h"
#include "droce_psn.h"
#include "wire/droce_aeth.h"

enum rst {
	RST_DONE,		/* executed; ACK if asked */
	RST_QUIET,		/* executed, no ACK (READ/atomic answer with data) */
	RST_RNR,		/* no receive WQE: RNR NAK, nothing consumed (9.7.5.2.8) */
	RST_DROP,		/* silently dropped */
	RST_ERR_OPSEQ,		/* NAK invalid request (opcode sequence, IBTA 9.7.5.1.3) */
	RST_ERR_LENGTH,		/* NAK invalid request; receive WQE LOC_LEN_ERR (9.7.5.1.x) */
	RST_ERR_RKEY,		/* NAK remote access error (C9-86..88) */
	RST_ERR_LOCAL,		/* NAK remote operational error (receive WQE LOC_PROT_ERR) */
	RST_ERR_INV,		/* NAK invalid request (misaligned atomic, bad length) */
};

static const struct {
	uint8_t nak;
	enum droce_event_type ev;
} rst_err[] = {
	[RST_ERR_OPSEQ] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR },
	[RST_ERR_LENGTH] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR },
	[RST_ERR_RKEY] = { DROCE_NAK_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR },
	[RST_ERR_LOCAL] = { DROCE_NAK_REM_OP_ERR, DROCE_EVENT_QP_FATAL },
	[RST_ERR_INV] = { DROCE_NAK_INVALID_REQ, DROCE_EVENT_QP_REQ_ERR },
};

static void
complete_rwqe(struct droce_qp *qp, enum droce_wc_status st, const struct droce_pkt *p,
	      uint32_t byte_len, enum droce_wc_opcode opc)
{
	struct droce_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = qp->resp.rwqe.wr_id;
	wc.status = st;
	wc.opcode = opc;
	wc.byte_len = byte_len;
	if (p != NULL) {
		const struct droce_opcode_info *op = droce_opcode_info(p->opcode);

		if (op->flags & DROCE_OPF_IMM) {
			wc.wc_flags |= DROCE_WC_WITH_IMM;
			wc.imm_data = droce_cpu_to_be32(p->imm);
		} else if (op->flags & DROCE_OPF_INV) {
			/* verbs reports the invalidated R_Key where the immediate goes */
			wc.wc_flags |= DROCE_WC_WITH_INV;
			wc.imm_data = p->ieth_rkey;
		}
		if (qp->type == DROCE_QPT_UD) {
			wc.wc_flags |= DROCE_WC_GRH;
			wc.src_qp = p->deth_sqpn;
		}
	}
	qp->resp.have_rwqe = false;
	droce_qp_recv_cqe(qp, &wc, p != NULL && p->se);
}

/* A fatal responder error: the receive WQE in use (if any) completes in error, the QP goes to
 * ERR (IBTA 10.3.1, "responder class C/D"), and for RC one NAK tells the requester. */
static void
fatal(struct droce_qp *qp, enum rst st, const struct droce_pkt *p)
{
	struct droce_responder *s = &qp->resp;

	if (st == RST_ERR_RKEY)
		droce_qp_cnt(qp, DROCE_CNT_RESP_REMOTE_ACCESS_ERRORS);
	else
		droce_qp_cnt(qp, DROCE_CNT_RESP_REMOTE_INVALID_REQUEST);
	droce_dev_drop(qp->dev, st == RST_ERR_RKEY ? DROCE_DROP_RKEY :
				st == RST_ERR_LENGTH ? DROCE_DROP_LENGTH : DROCE_DROP_OPCODE_SEQ);
	if (s->have_rwqe) {
		enum droce_wc_status ws = st == RST_ERR_LENGTH ? DROCE_WC_LOC_LEN_ERR :
					  st == RST_ERR_LOCAL ? DROCE_WC_LOC_PROT_ERR :
					  st == RST_ERR_RKEY ? DROCE_WC_REM_ACCESS_ERR :
							       DROCE_WC_REM_INV_REQ_ERR;

		if (st == RST_ERR_LENGTH)
			droce_qp_cnt(qp, DROCE_CNT_RESP_LOCAL_LENGTH_ERROR);
		complete_rwqe(qp, ws, NULL, s->cur.pos, DROCE_WC_RECV);
	}
	droce_qp_error(qp);
	droce_dev_event(qp->dev, rst_err[st].ev, qp);
	if (qp->type == DROCE_QPT_RC) {
		s->final_nak.kind = DROCE_RESP_NAK;
		s->final_nak.syn = DROCE_AETH_TYPE_NAK | rst_err[st].nak;
		s->final_nak.psn = p->psn;
		s->final_nak.msn = s->msn;
		s->final_nak_pending = true;
		droce_sched_ready(qp);
	}
}

static void
queue_nak(struct droce_qp *qp, uint8_t syn, uint32_t psn)
{
	struct droce_resp_item *it = droce_resp_push(qp);

	if (it == NULL)
		return;
	it->kind = DROCE_RESP_NAK;
	it->syn = syn;
	it->psn = psn;
	it->msn = qp->resp.msn;
}

/* IBTA 9.7.5.1.3: inside a message only its MIDDLE/LAST may come, outside only FIRST
 * or ONLY. */
static enum rst
check_opseq(struct droce_qp *qp, const struct droce_opcode_info *op)
{
	struct droce_responder *s = &qp->resp;

	if (s->msg == DROCE_RMSG_NONE)
		return (op->flags & DROCE_OPF_FIRST) ? RST_DONE : RST_ERR_OPSEQ;
	if (op->flags & DROCE_OPF_FIRST)
		return RST_ERR_OPSEQ;
	if (s->msg == DROCE_RMSG_SEND && !(op->flags & DROCE_OPF_SEND && !(op->flags & DROCE_OPF_WRITE)))
		return RST_ERR_OPSEQ;
	if (s->msg == DROCE_RMSG_WRITE && !(op->flags & DROCE_OPF_WRITE))
		return RST_ERR_OPSEQ;
	return RST_DONE;
}

/* IBTA 9.7.5.1.x: FIRST and MIDDLE carry exactly the path MTU, LAST/ONLY at most that. */
static bool
len_ok(const struct droce_qp *qp, const struct droce_opcode_info *op, uint32_t len)
{
	return (op->flags & DROCE_OPF_LAST) ? len <= qp->mtu : len == qp->mtu;
}

static enum rst
take_rwqe(struct droce_qp *qp)
{
	struct droce_responder *s = &qp->resp;
	uint32_t i;

	if (s->have_rwqe) {	/* UC: kept from an aborted message */
		s->cur.sge = s->cur.off = s->cur.pos = 0;
		return RST_DONE;
	}
	if (!droce_rq_pop(qp, &s->rwqe)) {
		droce_qp_cnt(qp, DROCE_CNT_OUT_OF_BUFFER);
		return RST_RNR;
	}
	s->have_rwqe = true;
	s->cur.sge = s->cur.off = s->cur.pos = 0;
	for (i = 0; i < s->rwqe.num_sge; i++)
		if (droce_mr_check_local(qp->pd, &s->rwqe.sge[i], DROCE_ACCESS_LOCAL_WRITE) != 0)
			return RST_ERR_LOCAL;
	droce_cursor_seek(&s->cur, s->rwqe.sge, s->rwqe.num_sge, 0);
	return RST_DONE;
}

static enum rst
exec_send(struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op,
	  const uint8_t *frame)
{
	struct droce_responder *s = &qp->resp;
	enum rst st;

	if (!len_ok(qp, op, p->pay_len))
		return RST_ERR_LENGTH;
	if (op->flags & DROCE_OPF_FIRST) {
		st = take_rwqe(qp);
		if (st != RST_DONE)
			return st;
		s->msg = DROCE_RMSG_SEND;
	}
	if ((uint64_t)s->cur.pos + p->pay_len > s->rwqe.length)
		return RST_ERR_LENGTH;
	if (p->pay_len)
		droce_copy_in(s->rwqe.sge, &s->cur, frame + p->pay_off, p->pay_len);
	if (op->flags & DROCE_OPF_LAST) {
		s->msg = DROCE_RMSG_NONE;
		s->msn = droce_psn_add(s->msn, 1);
		complete_rwqe(qp, DROCE_WC_SUCCESS, p, s->cur.pos, DROCE_WC_RECV);
	}
	return RST_DONE;
}

static enum rst
exec_write(struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op,
	   const uint8_t *frame)
{
	struct droce_responder *s = &qp->resp;
	bool first = op->flags & DROCE_OPF_FIRST;
	uint32_t left = first ? p->reth_len : s->wr_left;

	if (!len_ok(qp, op, p->pay_len))
		return RST_ERR_LENGTH;
	/* C9-88 note: a zero-length RDMA WRITE checks no R_Key. */
	if (first && p->reth_len != 0 &&
	    droce_mr_check_remote(qp, p->reth_rkey, p->reth_va, p->reth_len,
				  DROCE_ACCESS_REMOTE_WRITE) == NULL)
		return RST_ERR_RKEY;
	/* The payload must fill the RETH length exactly (IBTA 9.7.5.1.x length checks). */
	if (p->pay_len > left || ((op->flags & DROCE_OPF_LAST) && p->pay_len != left))
		return RST_ERR_LENGTH;
	/* With immediate, a receive WQE is consumed: take it before any state or byte changes,
	 * so that an RNR retry finds the responder as it was. */
	if (op->flags & DROCE_OPF_IMM) {
		enum rst st = take_rwqe(qp);

		if (st != RST_DONE)
			return st;
	}
	if (first) {
		droce_qp_cnt(qp, DROCE_CNT_RX_WRITE_REQUESTS);
		s->wr_va = (uintptr_t)p->reth_va;
		s->wr_left = p->reth_len;
		s->wr_len = p->reth_len;
		s->msg = DROCE_RMSG_WRITE;
	}
	if (p->pay_len) {
		memcpy((void *)s->wr_va, frame + p->pay_off, p->pay_len);
		s->wr_va += p->pay_len;
		s->wr_left -= p->pay_len;
	}
	if (op->flags & DROCE_OPF_LAST) {
		s->msg = DROCE_RMSG_NONE;
		s->msn = droce_psn_add(s->msn, 1);
		if (op->flags & DROCE_OPF_IMM)
			complete_rwqe(qp, DROCE_WC_SUCCESS, p, s->wr_len, DROCE_WC_RECV_RDMA_WITH_IMM);
	}
	return RST_DONE;
}

static enum rst
queue_read(struct droce_qp *qp, const struct droce_pkt *p, bool dup)
{
	struct droce_resp_item *it;

	if (p->reth_len != 0 &&
	    droce_mr_check_remote(qp, p->reth_rkey, p->reth_va, p->reth_len,
				  DROCE_ACCESS_REMOTE_READ) == NULL)
		return dup ? RST_DROP : RST_ERR_RKEY;
	it = droce_resp_push(qp);
	if (it == NULL) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESOURCE);
		return RST_DROP;	/* the requester's retry asks again */
	}
	if (!dup)
		qp->resp.msn = droce_psn_add(qp->resp.msn, 1);
	it->kind = DROCE_RESP_READ;
	it->first = true;
	it->psn = p->psn;
	it->msn = qp->resp.msn;
	it->va = (uintptr_t)p->reth_va;
	it->left = p->reth_len;
	qp->resp.rd_pending++;
	return RST_QUIET;
}

static enum rst
exec_atomic(struct droce_qp *qp, const struct droce_pkt *p)
{
	struct droce_responder *s = &qp->resp;
	struct droce_resp_item *it;
	struct droce_atomic_res *res;
	uint64_t *ptr, orig;

	if (droce_mr_check_remote(qp, p->atomic_rkey, p->atomic_va, 8,
				  DROCE_ACCESS_REMOTE_ATOMIC) == NULL)
		return RST_ERR_RKEY;
	/* IBTA 9.4.5: the target must be 8-byte aligned, else invalid request. */
	if (p->atomic_va & 7)
		return RST_ERR_INV;
	if (s->ring_head - s->ring_tail >= DROCE_RESP_RING) {
		droce_dev_drop(qp->dev, DROCE_DROP_RESOURCE);
		return RST_DROP;	/* not executed: the retry will find it new */
	}
	ptr = (uint64_t *)(uintptr_t)p->atomic_va;
	orig = *ptr;
	if (p->opcode == DROCE_OP_RC_COMPARE_SWAP) {
		if (orig == p->atomic_compare)
			*ptr = p->atomic_swap_add;
	} else {
		*ptr = orig + p->atomic_swap_add;
	}
	droce_qp_cnt(qp, DROCE_CNT_RX_ATOMIC_REQUESTS);
	/* Remember the result: a duplicate replays it, never executes again (IBTA 9.7.5.1.x). */
	res = &s->atomics[s->atomic_next++ % DROCE_MAX_RD_ATOMIC];
	res->psn = p->psn;
	res->orig = orig;
	res->valid = true;
	s->msn = droce_psn_add(s->msn, 1);
	it = droce_resp_push(qp);
	it->kind = DROCE_RESP_ATOMIC;
	it->syn = DROCE_AETH_TYPE_ACK | DROCE_AETH_CREDIT_INVALID;
	it->psn = p->psn;
	it->msn = s->msn;
	it->orig = orig;
	s->rd_pending++;
	return RST_QUIET;
}

static enum rst
execute(struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op,
	const uint8_t *frame)
{
	enum rst st = check_opseq(qp, op);

	if (st != RST_DONE)
		return st;
	if (op->flags & DROCE_OPF_READ) {
		droce_qp_cnt(qp, DROCE_CNT_RX_READ_REQUESTS);
		return queue_read(qp, p, false);
	}
	if (op->flags & DROCE_OPF_ATOMIC)
		return exec_atomic(qp, p);
	if (op->flags & DROCE_OPF_WRITE)
		return exec_write(qp, p, op, frame);
	return exec_send(qp, p, op, frame);
}

/* Packets the read/atomic executes span (the READ response count). */
static uint32_t
req_span(const struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op)
{
	if (op->flags & DROCE_OPF_READ)
		return p->reth_len == 0 ? 1 : (uint32_t)(((uint64_t)p->reth_len + qp->mtu - 1) / qp->mtu);
	return 1;
}

/* IBTA 9.7.5.1.2: a duplicate SEND/WRITE is ACKed again, a READ re-executed, an atomic replied
 * from the result cache (never executed twice). */
static void
duplicate(struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op)
{
	struct droce_responder *s = &qp->resp;
	uint32_t i;

	droce_qp_cnt(qp, DROCE_CNT_DUPLICATE_REQUEST);
	if (op->flags & DROCE_OPF_READ) {
		if (queue_read(qp, p, true) == RST_QUIET)
			droce_qp_cnt(qp, DROCE_CNT_READ_REEXECUTED);
		return;
	}
	if (op->flags & DROCE_OPF_ATOMIC) {
		for (i = 0; i < DROCE_MAX_RD_ATOMIC; i++) {
			struct droce_atomic_res *res = &s->atomics[i];
			struct droce_resp_item *it;

			if (!res->valid || res->psn != p->psn)
				continue;
			it = droce_resp_push(qp);
			if (it == NULL)
				return;
			it->kind = DROCE_RESP_ATOMIC;
			it->syn = DROCE_AETH_TYPE_ACK | DROCE_AETH_CREDIT_INVALID;
			it->psn = p->psn;
			it->msn = s->msn;
			it->orig = res->orig;
			s->rd_pending++;
			droce_qp_cnt(qp, DROCE_CNT_ATOMIC_REPLAYED);
			return;
		}
		droce_dev_drop(qp->dev, DROCE_DROP_DUP_NO_REPLAY);
		return;
	}
	droce_resp_ack(qp, droce_psn_add(s->epsn, DROCE_PSN_MASK));
}

static void
rc_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	struct droce_responder *s = &qp->resp;
	int32_t d = droce_psn_diff(p->psn, s->epsn);
	enum rst st;

	if (d > 0) {
		/* IBTA 9.7.5.1.1: one PSN sequence error NAK per gap, then silence. */
		droce_qp_cnt(qp, DROCE_CNT_OUT_OF_SEQ_REQUEST);
		droce_dev_drop(qp->dev, DROCE_DROP_PSN_OUT_OF_SEQ);
		if (!s->nak_seq_sent) {
			s->nak_seq_sent = true;
			droce_qp_cnt(qp, DROCE_CNT_SEND_SEQ_ERR);
			queue_nak(qp, DROCE_AETH_TYPE_NAK | DROCE_NAK_PSN_SEQ_ERR, s->epsn);
		}
		return;
	}
	if (d < 0) {
		duplicate(qp, p, op);
		return;
	}
	st = execute(qp, p, op, frame);
	switch (st) {
	case RST_DONE:
	case RST_QUIET:
		s->nak_seq_sent = false;
		s->epsn = droce_psn_add(s->epsn, req_span(qp, p, op));
		if (st == RST_DONE && p->ackreq)
			droce_resp_ack(qp, p->psn);
		break;
	case RST_RNR:
		/* IBTA 9.7.5.2.8: RNR NAK carries our min_rnr_timer; later packets of the burst are
		 * dropped without a sequence NAK until the retry. */
		droce_qp_cnt(qp, DROCE_CNT_SEND_RNR_ERR);
		droce_dev_drop(qp->dev, DROCE_DROP_NO_RWQE);
		s->nak_seq_sent = true;
		queue_nak(qp, DROCE_AETH_TYPE_RNR_NAK | (qp->attr.min_rnr_timer & 0x1F), p->psn);
		break;
	case RST_DROP:
		break;
	default:
		fatal(qp, st, p);
		break;
	}
}

/* UC (IBTA 9.8.3): no ACK, no NAK; a PSN gap or any error discards the message in progress
 * and the responder waits for the next FIRST/ONLY. */
static void
uc_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	struct droce_responder *s = &qp->resp;
	enum rst st;

	/* Behind ePSN: a duplicate the network made; it must not end the message in progress. */
	if (droce_psn_lt(p->psn, s->epsn)) {
		droce_qp_cnt(qp, DROCE_CNT_DUPLICATE_REQUEST);
		droce_dev_drop(qp->dev, DROCE_DROP_UC_GAP);
		return;
	}
	if (p->psn != s->epsn || s->uc_drop) {
		if (s->msg != DROCE_RMSG_NONE || s->uc_drop)
			droce_qp_cnt(qp, DROCE_CNT_UC_MSG_DROPPED);
		s->msg = DROCE_RMSG_NONE;	/* a kept receive WQE is reused (have_rwqe) */
		s->uc_drop = false;
	}
	s->epsn = droce_psn_add(p->psn, 1);
	if (s->msg == DROCE_RMSG_NONE && !(op->flags & DROCE_OPF_FIRST)) {
		droce_dev_drop(qp->dev, DROCE_DROP_UC_GAP);
		return;
	}
	if (s->msg != DROCE_RMSG_NONE && (op->flags & DROCE_OPF_FIRST)) {
		droce_qp_cnt(qp, DROCE_CNT_UC_MSG_DROPPED);	/* its LAST never came */
		s->msg = DROCE_RMSG_NONE;
	}
	st = execute(qp, p, op, frame);
	switch (st) {
	case RST_DONE:
	case RST_QUIET:
		break;
	case RST_ERR_LENGTH:
	case RST_ERR_LOCAL:
		fatal(qp, st, p);
		break;
	default:
		/* RNR, R_Key and sequence errors: the message is silently dropped. */
		droce_dev_drop(qp->dev, st == RST_RNR ? DROCE_DROP_NO_RWQE :
					st == RST_ERR_RKEY ? DROCE_DROP_RKEY : DROCE_DROP_OPCODE_SEQ);
		if (st == RST_ERR_RKEY)
			droce_qp_cnt(qp, DROCE_CNT_RESP_REMOTE_ACCESS_ERRORS);
		s->msg = DROCE_RMSG_NONE;
		s->uc_drop = !(op->flags & DROCE_OPF_LAST);
		break;
	}
}

/* UD (IBTA 9.6.x, 10.2.5): Q_Key check, the 40-byte GRH area first in the receive buffer (the
 * IPv4 header in its last 20 bytes for RoCEv2 over IPv4, as rxe and ConnectX), then the payload. */
static void
ud_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame)
{
	struct droce_responder *s = &qp->resp;
	uint8_t grh[DROCE_UD_GRH];
	enum rst st;

	/* C10-15: the DETH Q_Key must equal the QP's. */
	if (p->deth_qkey != qp->attr.qkey) {
		droce_dev_drop(qp->dev, DROCE_DROP_QKEY);
		return;
	}
	st = take_rwqe(qp);
	if (st == RST_RNR) {
		droce_dev_drop(qp->dev, DROCE_DROP_NO_RWQE);	/* UD has no RNR NAK: dropped */
		return;
	}
	if (st != RST_DONE) {
		fatal(qp, st, p);
		return;
	}
	if ((uint64_t)DROCE_UD_GRH + p->pay_len > s->rwqe.length) {
		fatal(qp, RST_ERR_LENGTH, p);
		return;
	}
	memset(grh, 0, sizeof(grh));
	if (p->ip_ver == 4)
		memcpy(grh + 20, frame + p->l3_off, 20);
	else
		memcpy(grh, frame + p->l3_off, 40);
	droce_copy_in(s->rwqe.sge, &s->cur, grh, sizeof(grh));
	if (p->pay_len)
		droce_copy_in(s->rwqe.sge, &s->cur, frame + p->pay_off, p->pay_len);
	complete_rwqe(qp, DROCE_WC_SUCCESS, p, s->cur.pos, DROCE_WC_RECV);
}

void
droce_resp_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame, uint64_t now)
{
	(void)now;
	/* IBTA 10.3.1: the receive side works from RTR on; RESET, INIT and ERR drop. */
	if (qp->state < DROCE_QPS_RTR || qp->state == DROCE_QPS_ERR) {
		droce_dev_drop(qp->dev, DROCE_DROP_QP_STATE);
		return;
	}
	/* IBTA 11.6.3: the first packet a QP receives in RTR is the communication-established
	 * event (the requester side may not be in RTS yet). */
	if (qp->state == DROCE_QPS_RTR && !qp->resp.comm_est) {
		qp->resp.comm_est = true;
		droce_dev_event(qp->dev, DROCE_EVENT_COMM_EST, qp);
	}
	if (qp->type == DROCE_QPT_RC)
		rc_rx(qp, p, frame);
	else if (qp->type == DROCE_QPT_UC)
		uc_rx(qp, p, frame);
	else
		ud_rx(qp, p, frame);
}
