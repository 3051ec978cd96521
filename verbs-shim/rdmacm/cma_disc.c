/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Disconnecting an rdma_cm connection (IBTA 12.9.6-12.9.8): rdma_disconnect sends a DREQ (the
 * QP to ERR first, as librdmacm does), a DREQ received is answered with a DREP, either one
 * ends the connection with DISCONNECTED; an id destroyed with a connection tells its peer.
 */
#include <string.h>

#include "cma_priv.h"

static int
send_dreq(struct cma_id *c, bool owed)
{
	struct droce_cm_msg m;

	c->tid = cma_new_tid();
	cma_msg_start(&m, DROCE_CM_ATTR_DREQ, c->tid, c);
	m.local_qpn = c->remote_qpn;	/* DREQ names the receiver's QP */
	return cma_send_msg(c, &m, owed);
}

static void
send_drep(struct cma_id *c, const struct droce_cm_msg *dreq)
{
	struct droce_cm_msg m;

	cma_msg_start(&m, DROCE_CM_ATTR_DREP, dreq->tid, c);
	cma_send_msg(c, &m, false);
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_live(id);
	int rc = 0;

	if (c == NULL)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	switch (c->id.qp_type == IBV_QPT_UD ? CMA_IDLE : c->state) {	/* UD: no connection */
	case CMA_ESTABLISHED:
	case CMA_REP_SENT:
		cma_qp_error(c);
		rc = send_dreq(c, true);
		c->state = CMA_DREQ_SENT;
		break;
	case CMA_DREQ_SENT:
	case CMA_DISCONNECTED:
		break;		/* the peer's DREQ came first, or ours is out */
	default:
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

void
cma_dreq_rcvd(struct cma_id *c, const struct droce_cm_msg *m)
{
	switch (c->state) {
	case CMA_ESTABLISHED:
	case CMA_REP_SENT:
	case CMA_DREQ_SENT:
		cma_qp_error(c);
		send_drep(c, m);
		c->resend_ns = 0;
		c->state = CMA_DISCONNECTED;
		cma_queue_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
		break;
	case CMA_DISCONNECTED:
		send_drep(c, m);	/* our DREP was lost */
		break;
	default:
		break;
	}
}

void
cma_drep_rcvd(struct cma_id *c)
{
	if (c->state != CMA_DREQ_SENT)
		return;
	c->resend_ns = 0;
	c->state = CMA_DISCONNECTED;
	cma_queue_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
}

/* Lock held: the id goes away (rdma_destroy_id): the peer hears of it once, unanswered. */
void
cma_cm_release(struct cma_id *c)
{
	c->resend_ns = 0;
	switch (c->id.qp_type == IBV_QPT_UD ? CMA_IDLE : c->state) {	/* UD: nothing owed */
	case CMA_ESTABLISHED:
	case CMA_REP_SENT:
		cma_qp_error(c);
		send_dreq(c, false);
		break;
	case CMA_REQ_RCVD:
		cma_reject_req(c, NULL, 0);
		break;
	default:
		break;
	}
	c->state = CMA_DISCONNECTED;
}
