/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder output: the queue of ACKs, NAKs, READ responses and atomic ACKs, sent in the order
 * the requests arrived. ACKs coalesce into the newest queued ACK (IBTA 9.7.5.1.x allows one ACK
 * for several requests); READ responses are data and follow the congestion-control pacing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_resp.h"
#include "wire/droce_aeth.h"

/*
 * Size the response ring and the atomic result cache for max_dest_rd_atomic responder
 * resources (at least one): each resource's response, a duplicate's replay of it and the ACKs
 * between them fit, so a requester within its max_rd_atomic is never dropped for want of a
 * slot. Only grows; what is queued stays queued, in order. 0 or -ENOMEM (nothing changed).
 */
int
droce_resp_reserve(struct droce_qp *qp, uint32_t max_dest_rd_atomic)
{
	struct droce_responder *s = &qp->resp;
	uint32_t nres = max_dest_rd_atomic ? max_dest_rd_atomic : 1;
	uint32_t n = droce_pow2_at_least(2 * nres + DROCE_RESP_RING_SPARE), i;
	struct droce_resp_item *ring;
	struct droce_atomic_res *at;

	if (s->ring != NULL && n <= s->ring_mask + 1 && nres <= s->n_atomics)
		return 0;
	if (s->ring != NULL && n < s->ring_mask + 1)
		n = s->ring_mask + 1;
	ring = calloc(n, sizeof(*ring));
	at = calloc(nres > s->n_atomics ? nres : s->n_atomics, sizeof(*at));
	if (ring == NULL || at == NULL) {
		free(ring);
		free(at);
		return -ENOMEM;
	}
	for (i = s->ring_tail; i != s->ring_head; i++)
		ring[i & (n - 1)] = s->ring[i & s->ring_mask];
	if (s->n_atomics)
		memcpy(at, s->atomics, s->n_atomics * sizeof(*at));
	droce_resp_free(qp);
	s->ring = ring;
	s->ring_mask = n - 1;
	s->atomics = at;
	s->n_atomics = nres > s->n_atomics ? nres : s->n_atomics;
	return 0;
}

void
droce_resp_free(struct droce_qp *qp)
{
	free(qp->resp.ring);
	free(qp->resp.atomics);
	qp->resp.ring = NULL;
	qp->resp.atomics = NULL;
}

static struct droce_resp_item *
ring_push(struct droce_qp *qp)
{
	struct droce_responder *s = &qp->resp;

	if (s->ring_head - s->ring_tail > s->ring_mask)
		return NULL;
	return &s->ring[s->ring_head++ & s->ring_mask];
}

/* A NAK, READ or atomic response: a held ACK ahead of it goes first (droce_ackpol.c). */
struct droce_resp_item *
droce_resp_push(struct droce_qp *qp)
{
	droce_ack_release(qp);
	droce_sched_ready(qp);
	return ring_push(qp);
}

/* Acknowledge up to psn, merging into a queued ACK that nothing follows yet (IBTA 9.7.5.1:
 * coalesced, one ACK answers every request up to its PSN); the ACK policy may hold it. */
void
droce_resp_ack(struct droce_qp *qp, uint32_t psn)
{
	struct droce_responder *s = &qp->resp;
	struct droce_resp_item *it;

	if (s->ring_head != s->ring_tail) {
		it = &s->ring[(s->ring_head - 1) & s->ring_mask];
		if (it->kind == DROCE_RESP_ACK) {
			it->psn = psn;
			it->msn = s->msn;
			droce_qp_cnt(qp, DROCE_CNT_ACK_COALESCED);
			droce_ack_note(qp);
			return;
		}
	}
	it = ring_push(qp);
	if (it == NULL)
		return; /* full of READ responses: the requester's timer recovers */
	it->kind = DROCE_RESP_ACK;
	it->syn = DROCE_AETH_TYPE_ACK | DROCE_AETH_CREDIT_INVALID;
	it->psn = psn;
	it->msn = s->msn;
	droce_ack_note(qp);
}

/* A responder with selective repeat marks what it sends (stack/wire/README.md), but for a PSN
 * sequence error NAK in the standard form: its MSN field is an MSN, not a PSN. */
static bool
srcap(const struct droce_qp *qp, const struct droce_resp_item *it)
{
	if (droce_likely(qp->sr == NULL))
		return false;
	return it->kind != DROCE_RESP_NAK || it->sel ||
	       it->syn != (DROCE_AETH_TYPE_NAK | DROCE_NAK_PSN_SEQ_ERR);
}

static int
send_ack(struct droce_qp *qp, const struct droce_resp_item *it)
{
	struct droce_pkt p;
	uint8_t *buf, *data;
	void *cookie;
	int r;

	if (it->kind != DROCE_RESP_ATOMIC && droce_likely(qp->htmpl.valid)) {
		r = droce_tx_ack(qp, it->psn, it->syn, it->msn, srcap(qp, it));
		if (r == 1)
			droce_qp_cnt(qp, it->kind == DROCE_RESP_NAK ? DROCE_CNT_NAKS_SENT :
								      DROCE_CNT_ACKS_SENT);
		return r;
	}
	droce_tx_pkt_init(qp, &p);
	p.opcode = it->kind == DROCE_RESP_ATOMIC ? DROCE_OP_RC_ATOMIC_ACKNOWLEDGE :
						   DROCE_OP_RC_ACKNOWLEDGE;
	p.psn = it->psn;
	p.aeth_syn = it->syn;
	p.aeth_msn = it->msn;
	p.atomic_orig = it->orig;
	p.srcap = srcap(qp, it);
	buf = droce_tx_begin(qp, &p, 0, &cookie, &data);
	if (buf == NULL)
		return -EAGAIN;
	droce_tx_end(qp, &p, buf, cookie);
	droce_qp_cnt(qp, it->kind == DROCE_RESP_NAK ? DROCE_CNT_NAKS_SENT : DROCE_CNT_ACKS_SENT);
	return 1;
}

static int
send_read(struct droce_qp *qp, struct droce_resp_item *it, uint64_t now)
{
	uint32_t pay = it->left < qp->mtu ? it->left : qp->mtu;
	bool last = it->left <= qp->mtu;
	struct droce_pkt p;
	uint8_t *buf, *data;
	void *cookie;
	struct droce_sge sge = { 0 };
	struct droce_cursor cur = { 0 };
	uint64_t t = qp->cc_ops->next_send_time(&qp->cc);

	if (t > now) {
		droce_qp_cnt(qp, DROCE_CNT_CC_DEFERRED);
		qp->cc.held = true;
		qp->cc_at = t;
		droce_sched_deadline(qp);
		return -EBUSY;
	}
	droce_tx_pkt_init(qp, &p);
	if (it->first)
		p.opcode = last ? DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
				  DROCE_OP_RC_RDMA_READ_RESPONSE_FIRST;
	else
		p.opcode = last ? DROCE_OP_RC_RDMA_READ_RESPONSE_LAST :
				  DROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
	p.psn = it->psn;
	/* MIDDLE carries no AETH (IBTA 9.3.5): written only where the opcode has one. */
	p.aeth_syn = DROCE_AETH_TYPE_ACK | DROCE_AETH_CREDIT_INVALID;
	p.aeth_msn = it->msn;
	p.srcap = qp->sr != NULL;
	buf = droce_tx_begin(qp, &p, pay, &cookie, &data);
	if (buf == NULL)
		return -EAGAIN;
	/* the READ's data as a one-entry list: the requester's path for the payload */
	sge.addr = it->va;
	sge.length = pay;
	droce_tx_payload_end(qp, &p, buf, cookie, data, &sge, &cur);
	qp->cc_ops->on_send(&qp->cc, p.frame_len, now);
	qp->cc.held = false;
	it->first = false;
	it->psn = droce_psn_add(it->psn, 1);
	it->va += pay;
	it->left -= pay;
	if (last) {
		qp->resp.ring_tail++;
		if (!it->dup)
			qp->resp.rd_pending--; /* its responder resource is free again */
	}
	return 1;
}

int
droce_resp_tx(struct droce_qp *qp, uint64_t now)
{
	struct droce_responder *s = &qp->resp;
	struct droce_resp_item *it;
	int r;

	if (droce_unlikely(qp->ack_held))
		return 0; /* it waits (droce_ackpol.c) */
	if (s->ring_head == s->ring_tail) {
		if (!s->final_nak_pending)
			return 0;
		/* The fatal NAK follows every earlier response (IBTA 9.5, 9.7.5.1); then ERR. */
		r = send_ack(qp, &s->final_nak);
		if (r == 1)
			droce_resp_fatal_end(qp);
		return r;
	}
	it = &s->ring[s->ring_tail & s->ring_mask];
	if (it->kind == DROCE_RESP_READ)
		return send_read(qp, it, now);
	r = send_ack(qp, it);
	if (r == 1) {
		if (it->kind == DROCE_RESP_ATOMIC && !it->dup)
			s->rd_pending--;
		s->ring_tail++;
	}
	return r;
}
