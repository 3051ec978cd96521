/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Received CM MADs (IBTA 12.9.2's state diagrams): each message to its connection, duplicates
 * answered with what was sent before, everything else dropped with a reason.
 */
#include <errno.h>
#include <string.h>

#include "droce_cm_int.h"
#include "../wire/droce_cm.h"

static enum droce_cm_drop
drop(struct droce_cm *cm, enum droce_cm_drop why)
{
	cm->drops[why]++;
	return why;
}

/* Passive: an MRA for the REQ the consumer has not answered yet (IBTA 12.6.6). */
static void
send_mra(struct droce_cm *cm, struct droce_cm_conn *c)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];

	droce_cm_msg_init(&m, DROCE_CM_ATTR_MRA, c->tid, c);
	m.msg_rejected = DROCE_CM_MSG_REQ; /* MessageMRAed */
	m.service_timeout = cm->p.mra_service_timeout;
	/* not kept in c->mad: nothing owed, and the REQ answer to come replaces it */
	if (droce_cm_msg_build(&m, mad) == 0) {
		cm->sent++;
		cm->ops.send(cm->ctx, c, c->peer_gid, mad);
	}
}

static void
stateless_rej(struct droce_cm *cm, const struct droce_cm_msg *req, const uint8_t gid[16],
	      uint16_t reason)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_REJ;
	m.tid = req->tid;
	m.remote_comm_id = req->local_comm_id;
	m.msg_rejected = DROCE_CM_MSG_REQ;
	m.reason = reason;
	if (droce_cm_msg_build(&m, mad) == 0) {
		cm->sent++;
		cm->ops.send(cm->ctx, NULL, gid, mad);
	}
}

static enum droce_cm_drop
req_rcvd(struct droce_cm *cm, const struct droce_cm_msg *m, const uint8_t gid[16])
{
	struct droce_cm_conn *c = droce_cm_by_peer(cm, m->local_comm_id, gid);
	int rc;

	if (c != NULL) {
		/* IBTA 12.9.8.1: a REQ again (our answer lost, or not given yet) */
		switch (c->state) {
		case DROCE_CM_REQ_RCVD:
			send_mra(cm, c);
			return DROCE_CM_DROP_NONE;
		case DROCE_CM_REP_SENT:
			droce_cm_resend(cm, c); /* the REP */
			return DROCE_CM_DROP_NONE;
		case DROCE_CM_TIMEWAIT:
			if (droce_cm_last_attr(c) != DROCE_CM_ATTR_REJ)
				return drop(cm, DROCE_CM_DROP_STATE);
			droce_cm_resend(cm, c); /* the REJ */
			return DROCE_CM_DROP_NONE;
		default:
			return drop(cm, DROCE_CM_DROP_STATE);
		}
	}
	c = droce_cm_conn_new(cm, gid);
	if (c == NULL)
		return drop(cm, DROCE_CM_DROP_NO_SLOT);
	c->state = DROCE_CM_REQ_RCVD;
	c->owned = true; /* until the consumer declines */
	c->tid = m->tid;
	c->remote_comm_id = m->local_comm_id;
	c->remote_qpn = m->local_qpn;
	/* IBTA 12.6.5: the active side answers our REP within its LocalCMResponseTimeout; we
	 * send the REP MaxCMRetries more times */
	c->timeout_ns = droce_cm_time_ns(m->local_cm_response_timeout);
	c->max_retries = m->max_cm_retries;
	droce_cm_hash_add(cm, c);
	rc = droce_cm_emit(cm, c, DROCE_CM_EV_REQ, m);
	if (rc == 0)
		return DROCE_CM_DROP_NONE;
	droce_cm_conn_free(cm, c);
	if (rc < 0)
		return drop(cm, DROCE_CM_DROP_CONSUMER);
	/* A REJ from no connection (IBTA 12.6.7, reason rc, e.g. 8): the REQ's resend asks the
	 * consumer again, which may listen by then (the kernel's cm_issue_rej likewise) */
	stateless_rej(cm, m, gid, (uint16_t)rc);
	return DROCE_CM_DROP_NONE;
}

static enum droce_cm_drop
rep_rcvd(struct droce_cm *cm, struct droce_cm_conn *c, const struct droce_cm_msg *m)
{
	if (c->state == DROCE_CM_ESTABLISHED && c->active &&
	    droce_cm_last_attr(c) == DROCE_CM_ATTR_RTU) {
		droce_cm_resend(cm, c); /* IBTA 12.9.8.2: our RTU was lost */
		return DROCE_CM_DROP_NONE;
	}
	if (c->state == DROCE_CM_TIMEWAIT && c->active &&
	    droce_cm_last_attr(c) == DROCE_CM_ATTR_REJ) {
		droce_cm_resend(cm, c); /* we refused this REP: the REJ was lost */
		return DROCE_CM_DROP_NONE;
	}
	if (c->state != DROCE_CM_REQ_SENT)
		return drop(cm, DROCE_CM_DROP_STATE);
	c->deadline_ns = 0;
	c->remote_comm_id = m->local_comm_id;
	c->remote_qpn = m->local_qpn;
	c->state = DROCE_CM_REP_RCVD;
	droce_cm_emit(cm, c, DROCE_CM_EV_REP, m);
	return DROCE_CM_DROP_NONE;
}

static enum droce_cm_drop
rej_rcvd(struct droce_cm *cm, struct droce_cm_conn *c, const struct droce_cm_msg *m,
	 uint64_t now_ns)
{
	switch (c->state) {
	case DROCE_CM_REQ_SENT:
		if (m->reason == DROCE_CM_REJ_INVALID_SERVICE_ID && c->no_listener_wait)
			return drop(cm, DROCE_CM_DROP_STATE); /* a second REJ of one REQ */
		if (m->reason == DROCE_CM_REJ_INVALID_SERVICE_ID && c->no_listener_left > 0) {
			/* nobody listens yet: the same REQ again after a while (the expiry
			 * sends it, the retries count afresh) */
			c->no_listener_left--;
			c->no_listener_wait = true;
			c->mra_rcvd = false;
			c->retries_left = (uint8_t)(c->max_retries + 1);
			c->deadline_ns = now_ns + cm->p.no_listener_delay_ns;
			return DROCE_CM_DROP_NONE;
		}
		/* fall through */
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_REP_SENT:
	case DROCE_CM_REP_RCVD:
		droce_cm_timewait(cm, c, now_ns);
		droce_cm_emit(cm, c, DROCE_CM_EV_REJECTED, m);
		return DROCE_CM_DROP_NONE;
	default:
		return drop(cm, DROCE_CM_DROP_STATE);
	}
}

static enum droce_cm_drop
dreq_rcvd(struct droce_cm *cm, struct droce_cm_conn *c, const struct droce_cm_msg *m,
	  uint64_t now_ns)
{
	struct droce_cm_msg r;

	switch (c->state) {
	case DROCE_CM_ESTABLISHED:
	case DROCE_CM_REP_SENT:	 /* the RTU lost: the DREQ says the peer was there */
	case DROCE_CM_DREQ_SENT: /* both disconnect at once (IBTA 12.9.7) */
		droce_cm_msg_init(&r, DROCE_CM_ATTR_DREP, m->tid, c);
		droce_cm_send(cm, c, &r, false, now_ns);
		droce_cm_timewait(cm, c, now_ns);
		droce_cm_emit(cm, c, DROCE_CM_EV_DISCONNECTED, m);
		return DROCE_CM_DROP_NONE;
	case DROCE_CM_TIMEWAIT:
	case DROCE_CM_CLOSED:
		/* IBTA 12.9.8.4: a DREQ in TimeWait is answered; c->mad keeps what TimeWait
		 * repeats, so this DREP is not kept */
		if (droce_cm_last_attr(c) == DROCE_CM_ATTR_REJ)
			return drop(cm, DROCE_CM_DROP_STATE); /* never connected */
		{
			uint8_t mad[DROCE_MAD_SIZE];

			droce_cm_msg_init(&r, DROCE_CM_ATTR_DREP, m->tid, c);
			if (droce_cm_msg_build(&r, mad) == 0) {
				cm->sent++;
				cm->ops.send(cm->ctx, c, c->peer_gid, mad);
			}
		}
		return DROCE_CM_DROP_NONE;
	default:
		return drop(cm, DROCE_CM_DROP_STATE);
	}
}

/* MRA: the peer needs longer; wait its Service Timeout on top of ours (IBTA 12.6.6). */
static enum droce_cm_drop
mra_rcvd(struct droce_cm *cm, struct droce_cm_conn *c, const struct droce_cm_msg *m,
	 uint64_t now_ns)
{
	if (!((c->state == DROCE_CM_REQ_SENT && m->msg_rejected == DROCE_CM_MSG_REQ) ||
	      (c->state == DROCE_CM_REP_SENT && m->msg_rejected == DROCE_CM_MSG_REP)) ||
	    c->deadline_ns == 0)
		return drop(cm, DROCE_CM_DROP_STATE);
	c->mra_rcvd = true;
	c->deadline_ns = now_ns + droce_cm_time_ns(m->service_timeout) + c->timeout_ns;
	return DROCE_CM_DROP_NONE;
}

static enum droce_cm_drop
conn_msg(struct droce_cm *cm, const struct droce_cm_msg *m, uint64_t now_ns)
{
	/* IBTA 12.6: every message after the REQ names our comm ID as its remote one */
	struct droce_cm_conn *c = droce_cm_by_comm_id(cm, m->remote_comm_id);

	if (c == NULL || c->state == DROCE_CM_SIDR_REQ_SENT)
		return drop(cm, DROCE_CM_DROP_UNKNOWN_COMM_ID);
	/* ...and its own as the local one, once known; a REJ may come from no connection */
	if (c->remote_comm_id != 0 && m->local_comm_id != c->remote_comm_id &&
	    m->attr != DROCE_CM_ATTR_REJ)
		return drop(cm, DROCE_CM_DROP_WRONG_PEER);
	switch (m->attr) {
	case DROCE_CM_ATTR_REP:
		return rep_rcvd(cm, c, m);
	case DROCE_CM_ATTR_RTU:
		if (c->state != DROCE_CM_REP_SENT)
			return drop(cm, DROCE_CM_DROP_STATE);
		c->deadline_ns = 0;
		c->state = DROCE_CM_ESTABLISHED;
		droce_cm_emit(cm, c, DROCE_CM_EV_ESTABLISHED, m);
		return DROCE_CM_DROP_NONE;
	case DROCE_CM_ATTR_REJ:
		return rej_rcvd(cm, c, m, now_ns);
	case DROCE_CM_ATTR_DREQ:
		return dreq_rcvd(cm, c, m, now_ns);
	case DROCE_CM_ATTR_DREP:
		if (c->state != DROCE_CM_DREQ_SENT)
			return drop(cm, DROCE_CM_DROP_STATE);
		droce_cm_timewait(cm, c, now_ns);
		droce_cm_emit(cm, c, DROCE_CM_EV_DISCONNECTED, m);
		return DROCE_CM_DROP_NONE;
	case DROCE_CM_ATTR_MRA:
		return mra_rcvd(cm, c, m, now_ns);
	default:
		return drop(cm, DROCE_CM_DROP_UNSUPPORTED);
	}
}

static enum droce_cm_drop
sidr_rep_rcvd(struct droce_cm *cm, const struct droce_cm_msg *m)
{
	/* IBTA 12.11.2: the SIDR_REP echoes our RequestID */
	struct droce_cm_conn *c = droce_cm_by_comm_id(cm, m->local_comm_id);

	if (c == NULL || c->state != DROCE_CM_SIDR_REQ_SENT)
		return drop(cm, DROCE_CM_DROP_UNKNOWN_COMM_ID);
	c->deadline_ns = 0;
	c->state = DROCE_CM_CLOSED;
	droce_cm_emit(cm, c, DROCE_CM_EV_SIDR_REP, m);
	if (!c->owned)
		droce_cm_conn_free(cm, c);
	return DROCE_CM_DROP_NONE;
}

enum droce_cm_drop
droce_cm_recv(struct droce_cm *cm, const uint8_t *mad, uint32_t len, const uint8_t src_gid[16],
	      uint64_t now_ns)
{
	struct droce_cm_msg m;
	int rc = droce_cm_msg_parse(mad, len, &m);

	if (rc == -EPROTONOSUPPORT)
		return drop(cm, DROCE_CM_DROP_UNSUPPORTED);
	if (rc != 0)
		return drop(cm, DROCE_CM_DROP_MALFORMED);
	cm->received++;
	switch (m.attr) {
	case DROCE_CM_ATTR_REQ:
		return req_rcvd(cm, &m, src_gid);
	case DROCE_CM_ATTR_SIDR_REQ: {
		/* stateless (IBTA 12.11): the consumer answers with droce_cm_sidr_reply */
		struct droce_cm_conn tmp;

		memset(&tmp, 0, sizeof(tmp));
		tmp.owned = true;
		tmp.tid = m.tid;
		memcpy(tmp.peer_gid, src_gid, 16);
		droce_cm_emit(cm, &tmp, DROCE_CM_EV_SIDR_REQ, &m);
		return DROCE_CM_DROP_NONE;
	}
	case DROCE_CM_ATTR_SIDR_REP:
		return sidr_rep_rcvd(cm, &m);
	default:
		return conn_msg(cm, &m, now_ns);
	}
}
