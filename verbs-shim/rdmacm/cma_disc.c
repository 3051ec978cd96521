/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Disconnecting an rdma_cm connection (IBTA 12.9.6-12.9.8): rdma_disconnect has the CM send a
 * DREQ (the QP to ERR first, as librdmacm does); the CM's DISCONNECTED (a DREP, the peer's
 * DREQ, or our DREQ's retries spent) ends the connection; an id destroyed with a connection
 * lets the CM end it.
 */
#include "cma_priv.h"

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_live(id);
	int rc = 0;

	if (c == NULL)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	switch (c->id.qp_type == IBV_QPT_UD ? CMA_IDLE : c->state) { /* UD: no connection */
	case CMA_ESTABLISHED:
	case CMA_REP_SENT:
		cma_qp_error(c);
		rc = droce_cm_disconnect(&cma_cm, c->conn, NULL, 0, cma_now_ns());
		c->state = CMA_DREQ_SENT;
		break;
	case CMA_DREQ_SENT:
	case CMA_DISCONNECTED:
		break; /* the peer's DREQ came first, or ours is out */
	default:
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

/* Lock held: the CM says the connection is over. */
void
cma_disconnected(struct cma_id *c)
{
	switch (c->state) {
	case CMA_ESTABLISHED:
	case CMA_REP_SENT:
	case CMA_DREQ_SENT:
		cma_qp_error(c);
		c->state = CMA_DISCONNECTED;
		cma_queue_event(c, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
		break;
	default:
		break;
	}
}

/* Lock held: the id goes away (rdma_destroy_id): the CM tells the peer and forgets it. */
void
cma_cm_release(struct cma_id *c)
{
	if (c->id.qp_type != IBV_QPT_UD &&
	    (c->state == CMA_ESTABLISHED || c->state == CMA_REP_SENT))
		cma_qp_error(c);
	if (c->conn != NULL) {
		/* the CM ends what is live (DREQ, or REJ of a REQ not answered) on its own */
		droce_cm_release(&cma_cm, c->conn, cma_now_ns());
		c->conn = NULL;
	}
	c->state = CMA_DISCONNECTED;
}
