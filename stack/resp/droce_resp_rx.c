/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder receive path per service type: RC (ePSN, duplicates, one sequence NAK per gap, RNR,
 * ACK coalescing; IBTA 9.7.5.1), UC (9.8.3: no ACK, a gap drops the message) and UD (9.6, 10.2.5:
 * Q_Key, GRH area).
 */
#include <string.h>

#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_resp.h"
#include "droce_sr.h"
#include "wire/droce_aeth.h"

/* Packets the read/atomic executes span (the READ response count). */
static uint32_t
req_span(const struct droce_qp *qp, const struct droce_pkt *p, const struct droce_opcode_info *op)
{
	if (op->flags & DROCE_OPF_READ)
		return droce_qp_npkts(qp, p->reth_len);
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
		if (droce_resp_read(qp, p, true) == RST_QUIET)
			droce_qp_cnt(qp, DROCE_CNT_READ_REEXECUTED);
		return;
	}
	if (op->flags & DROCE_OPF_ATOMIC) {
		for (i = 0; i < s->n_atomics; i++) {
			struct droce_atomic_res *res = &s->atomics[i];
			struct droce_resp_item *it;

			if (!res->valid || res->psn != p->psn)
				continue;
			it = droce_resp_push(qp);
			if (it == NULL)
				return;
			it->kind = DROCE_RESP_ATOMIC;
			it->syn = DROCE_AETH_TYPE_ACK | DROCE_AETH_CREDIT_INVALID;
			it->dup = true;
			it->psn = p->psn;
			it->msn = s->msn;
			it->orig = res->orig;
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
	const struct droce_pkt *orig = p;
	struct droce_pkt tmp;
	enum droce_rst st;

	if (d > 0 && qp->sr != NULL && p->srcap) {
		droce_sr_resp_ahead(qp, p, frame); /* kept, or dropped; a selective NAK */
		return;
	}
	if (d > 0) {
		/* IBTA 9.7.5.1.1: one PSN sequence error NAK per gap, then silence. */
		droce_qp_cnt(qp, DROCE_CNT_OUT_OF_SEQ_REQUEST);
		droce_dev_drop(qp->dev, DROCE_DROP_PSN_OUT_OF_SEQ);
		if (!s->nak_seq_sent) {
			/* The requests taken in order since the last sequence NAK are ACKed before
			 * the next NAK (a NAK acknowledges every earlier PSN anyway, 9.7.5.1.1;
			 * coalesced ACKs, 9.7.6.1.x): a requester may ignore a second sequence NAK
			 * until an ACK shows its retry got through (rxe's does, and stalls until
			 * its timeout). */
			if (s->nak_seq_unacked) {
				droce_qp_cnt(qp, DROCE_CNT_ACK_BEFORE_NAK);
				droce_resp_ack(qp, droce_psn_add(s->epsn, DROCE_PSN_MASK));
			}
			s->nak_seq_sent = true;
			s->nak_seq_unacked = true;
			droce_qp_cnt(qp, DROCE_CNT_SEND_SEQ_ERR);
			droce_resp_nak(qp, DROCE_AETH_TYPE_NAK | DROCE_NAK_PSN_SEQ_ERR, s->epsn);
		}
		return;
	}
	if (d < 0) {
		duplicate(qp, p, op);
		return;
	}
	if (droce_unlikely(qp->sr != NULL) && p->srcap) {
		p = droce_sr_strip(qp, p, &tmp); /* its placement header */
		if (p == NULL) {
			droce_resp_fatal(qp, RST_ERR_LENGTH, orig);
			return;
		}
	}
	st = droce_resp_execute(qp, p, op, frame);
	switch (st) {
	case RST_DONE:
	case RST_QUIET:
		s->nak_seq_sent = false;
		s->epsn = droce_psn_add(s->epsn, req_span(qp, p, op));
		if (st == RST_QUIET) /* a READ or atomic response answers it */
			s->nak_seq_unacked = false;
		else if (p->ackreq) {
			s->nak_seq_unacked = false;
			droce_resp_ack(qp, p->psn);
		}
		if (droce_unlikely(qp->sr != NULL))
			droce_sr_resp_advance(qp);
		break;
	case RST_RNR:
		/* IBTA 9.7.5.2.8: RNR NAK carries our min_rnr_timer; later packets of the burst are
		 * dropped without a sequence NAK until the retry. */
		droce_qp_cnt(qp, DROCE_CNT_SEND_RNR_ERR);
		droce_dev_drop(qp->dev, DROCE_DROP_NO_RWQE);
		s->nak_seq_sent = true;
		droce_resp_nak(qp, DROCE_AETH_TYPE_RNR_NAK | (qp->attr.min_rnr_timer & 0x1F),
			       p->psn);
		break;
	case RST_DROP:
		break;
	default:
		droce_resp_fatal(qp, st, p);
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
	enum droce_rst st;

	/* Behind ePSN: a duplicate the network made; it must not end the message in progress. */
	if (droce_psn_lt(p->psn, s->epsn)) {
		droce_qp_cnt(qp, DROCE_CNT_DUPLICATE_REQUEST);
		droce_dev_drop(qp->dev, DROCE_DROP_UC_GAP);
		return;
	}
	if (p->psn != s->epsn || s->uc_drop) {
		if (s->msg != DROCE_RMSG_NONE || s->uc_drop)
			droce_qp_cnt(qp, DROCE_CNT_UC_MSG_DROPPED);
		s->msg = DROCE_RMSG_NONE; /* a kept receive WQE is reused (have_rwqe) */
		s->uc_drop = false;
	}
	s->epsn = droce_psn_add(p->psn, 1);
	if (s->msg == DROCE_RMSG_NONE && !(op->flags & DROCE_OPF_FIRST)) {
		droce_dev_drop(qp->dev, DROCE_DROP_UC_GAP);
		return;
	}
	if (s->msg != DROCE_RMSG_NONE && (op->flags & DROCE_OPF_FIRST)) {
		droce_qp_cnt(qp, DROCE_CNT_UC_MSG_DROPPED); /* its LAST never came */
		s->msg = DROCE_RMSG_NONE;
	}
	st = droce_resp_execute(qp, p, op, frame);
	switch (st) {
	case RST_DONE:
	case RST_QUIET:
		break;
	case RST_ERR_LOCAL:
		droce_resp_fatal(qp, st, p); /* a receive WQE we cannot write: class A */
		break;
	case RST_ERR_LENGTH:
		/* Longer than the receive buffer, or a packet of the wrong size: dropped like any
		 * UC error, the WQE kept for the next message and the QP up (rxe's class D). */
		droce_qp_cnt(qp, DROCE_CNT_RESP_LOCAL_LENGTH_ERROR);
		droce_dev_drop(qp->dev, DROCE_DROP_LENGTH);
		s->msg = DROCE_RMSG_NONE;
		s->uc_drop = !(op->flags & DROCE_OPF_LAST);
		break;
	default:
		/* RNR, R_Key and sequence errors: the message is silently dropped. */
		droce_dev_drop(qp->dev, st == RST_RNR		? DROCE_DROP_NO_RWQE :
					st == RST_ERR_RKEY	? DROCE_DROP_RKEY :
					st == RST_ERR_QP_ACCESS ? DROCE_DROP_QP_ACCESS :
								  DROCE_DROP_OPCODE_SEQ);
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
	enum droce_rst st;

	/* C10-15: the DETH Q_Key must equal the QP's. */
	if (p->deth_qkey != qp->attr.qkey) {
		droce_dev_drop(qp->dev, DROCE_DROP_QKEY);
		return;
	}
	st = droce_resp_take_rwqe(qp);
	if (st == RST_RNR) {
		droce_dev_drop(qp->dev, DROCE_DROP_NO_RWQE); /* UD has no RNR NAK: dropped */
		return;
	}
	if (st != RST_DONE) {
		droce_resp_fatal(qp, st, p);
		return;
	}
	if ((uint64_t)DROCE_UD_GRH + p->pay_len > s->rwqe.length) {
		/* Too long for the receive buffer: that WQE completes with a local length error
		 * and the QP goes on (rxe's class D/E). A datagram anyone can send must not end a
		 * UD QP, QP1 (the CM's) included. */
		droce_qp_cnt(qp, DROCE_CNT_RESP_LOCAL_LENGTH_ERROR);
		droce_dev_drop(qp->dev, DROCE_DROP_LENGTH);
		droce_resp_complete(qp, DROCE_WC_LOC_LEN_ERR, NULL, 0, DROCE_WC_RECV);
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
	droce_resp_complete(qp, DROCE_WC_SUCCESS, p, s->cur.pos, DROCE_WC_RECV);
}

void
droce_resp_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame, uint64_t now)
{
	(void)now;
	/* IBTA 10.3.1: the receive side works from RTR on; RESET, INIT and ERR drop. */
	if (qp->state < DROCE_QPS_RTR || qp->state == DROCE_QPS_ERR ||
	    qp->resp.final_nak_pending) { /* a fatal error: ERR once its NAK is out */
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
