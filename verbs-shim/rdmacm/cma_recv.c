/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the agent hands over: each received CM MAD to its handler (the handshake's in
 * cma_conn.c, disconnection's in cma_disc.c, SIDR's in cma_ud.c), an MRA's longer wait, and
 * the timers: resends while an answer is owed, then the event for giving up.
 */
#include <errno.h>

#include "cma_priv.h"

void
cma_cm_recv(const uint8_t *mad, size_t len)
{
	struct droce_cm_msg m;

	if (droce_cm_msg_parse(mad, len, &m) != 0)
		return;
	pthread_mutex_lock(&cma_lock);
	cma_cm_dispatch(&m);
	pthread_mutex_unlock(&cma_lock);
}

/* The peer needs longer (an MRA): the next resend waits its Service Timeout, 4.096 us *
 * 2^t, and one retry period more, as the kernel's cm_mra_handler waits (a kernel passive
 * side whose application has not accepted yet asks 2^24: ~69 s). */
static void
mra_rcvd(struct cma_id *c, const struct droce_cm_msg *m)
{
	if (c->resend_ns == 0)
		return;	/* nothing of ours is waiting for an answer */
	c->resend_ns = cma_now_ns() + (4096ull << m->service_timeout) +
		       CMA_RETRY_MS * 1000000ull;
	cma_log("received MRA: the peer asks %llu ms more",
		(unsigned long long)((4096ull << m->service_timeout) / 1000000u));
}

/* Lock held: a received message to its handler (also a parked REQ, received again). */
void
cma_cm_dispatch(const struct droce_cm_msg *m)
{
	struct cma_id *c;

	if (m->attr == DROCE_CM_ATTR_REQ) {
		cma_req_rcvd(m);
	} else if (m->attr == DROCE_CM_ATTR_SIDR_REQ) {
		cma_ud_req_rcvd(m);
	} else if (m->attr == DROCE_CM_ATTR_SIDR_REP) {
		cma_ud_rep_rcvd(m);
	} else {
		/* Every other message names our comm ID as its remote one. */
		c = cma_find_comm(m->remote_comm_id);
		if (c != NULL && (c->remote_comm_id == 0 ||
				  c->remote_comm_id == m->local_comm_id || m->attr == DROCE_CM_ATTR_REJ)) {
			switch (m->attr) {
			case DROCE_CM_ATTR_REP:
				cma_rep_rcvd(c, m);
				break;
			case DROCE_CM_ATTR_RTU:
				cma_rtu_rcvd(c);
				break;
			case DROCE_CM_ATTR_REJ:
				cma_rej_rcvd(c, m);
				break;
			case DROCE_CM_ATTR_DREQ:
				cma_dreq_rcvd(c, m);
				break;
			case DROCE_CM_ATTR_DREP:
				cma_drep_rcvd(c);
				break;
			case DROCE_CM_ATTR_MRA:
				mra_rcvd(c, m);
				break;
			default:
				break;
			}
		}
	}
}

/* Lock held: resend what is owed an answer; give up after CMA_MAX_RETRIES. */
void
cma_cm_timers(uint64_t now)
{
	struct cma_id *c;

	cma_park_timers(now);
	for (c = cma_ids; c != NULL; c = c->next) {
		if (c->resend_ns == 0 || now < c->resend_ns || c->destroyed)
			continue;
		if (c->retries > 0) {
			c->retries--;
			c->resend_ns = now + CMA_RETRY_MS * 1000000ull;
			cma_agent_resend(c);
			continue;
		}
		c->resend_ns = 0;
		switch (c->state) {
		case CMA_REQ_SENT:
			c->state = CMA_DISCONNECTED;
			cma_queue_event(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
			break;
		case CMA_REP_SENT:
			/* no RTU: UNREACHABLE, as the kernel reports IB_CM_REP_ERROR */
			c->state = CMA_DISCONNECTED;
			cma_qp_error(c);
			cma_queue_event(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
			break;
		case CMA_DREQ_SENT:
			c->state = CMA_DISCONNECTED;
			cma_queue_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
			break;
		default:
			break;
		}
	}
}
