/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The adapter between the engine's CM (stack/cm) and rdma_cm ids: received MADs go to the CM,
 * and the CM's events become the ids' (the handshake's in cma_conn.c, disconnection's in
 * cma_disc.c, SIDR's in cma_ud.c). Resends, timeouts, MRAs and duplicates are the CM's.
 */
#include <errno.h>
#include <string.h>

#include "cma_priv.h"
#include "wire/droce_cm.h"

static const uint8_t *rx_mad; /* the MAD the CM is reading now, for cma_park */
static const uint8_t *rx_gid;
static bool rx_rejected; /* a REJ ended a connection while it was read */

const uint8_t *
cma_rx_mad(void)
{
	return rx_mad;
}

const uint8_t *
cma_rx_gid(void)
{
	return rx_gid;
}

/* Lock held: a MAD to the CM (also a parked one, received again). */
void
cma_cm_rerecv(const uint8_t *mad, const uint8_t src_gid[16])
{
	const uint8_t *save_mad = rx_mad, *save_gid = rx_gid;
	struct droce_cm_msg m;

	rx_mad = mad;
	rx_gid = src_gid;
	rx_rejected = false;
	if (droce_cm_recv(&cma_cm, mad, DROCE_MAD_SIZE, src_gid, cma_now_ns()) ==
		    DROCE_CM_DROP_NONE &&
	    !rx_rejected && droce_cm_msg_parse(mad, DROCE_MAD_SIZE, &m) == 0 &&
	    m.attr == DROCE_CM_ATTR_REJ && m.reason == DROCE_CM_REJ_INVALID_SERVICE_ID)
		cma_log("REQ rejected, no listener at the peer yet (REJ reason 8): sent again in "
			"%llu ms",
			(unsigned long long)(cma_cm.p.no_listener_delay_ns / 1000000));
	rx_mad = save_mad;
	rx_gid = save_gid;
}

void
cma_cm_recv(const uint8_t *mad, size_t len, const uint8_t src_gid[16])
{
	if (len < DROCE_MAD_SIZE)
		return;
	pthread_mutex_lock(&cma_lock);
	cma_cm_rerecv(mad, src_gid);
	pthread_mutex_unlock(&cma_lock);
}

/* The peer never answered (REQ, REP or SIDR_REQ): UNREACHABLE, as the kernel reports
 * IB_CM_REQ_ERROR / IB_CM_REP_ERROR / IB_CM_SIDR_REQ_ERROR. */
static void
timed_out(struct cma_id *c)
{
	if (c->state == CMA_REP_SENT)
		cma_qp_error(c);
	c->state = CMA_DISCONNECTED;
	cma_queue_event(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
}

/* Lock held (the CM runs under cma_lock). */
static int
cm_event(void *ctx, struct droce_cm_conn *conn, enum droce_cm_event ev,
	 const struct droce_cm_msg *m)
{
	struct cma_id *c = conn != NULL ? conn->user : NULL;

	(void)ctx;
	if (ev == DROCE_CM_EV_REQ)
		return cma_req_rcvd(conn, m);
	if (ev == DROCE_CM_EV_SIDR_REQ) {
		cma_ud_req_rcvd(m);
		return 0;
	}
	if (c == NULL || c->destroyed)
		return 0;
	switch (ev) {
	case DROCE_CM_EV_REP:
		cma_rep_rcvd(c, m);
		break;
	case DROCE_CM_EV_ESTABLISHED:
		cma_rtu_rcvd(c);
		break;
	case DROCE_CM_EV_REJECTED:
		rx_rejected = true;
		cma_rej_rcvd(c, m);
		break;
	case DROCE_CM_EV_TIMEOUT:
	case DROCE_CM_EV_SIDR_TIMEOUT:
		timed_out(c);
		break;
	case DROCE_CM_EV_DISCONNECTED:
		cma_disconnected(c);
		break;
	case DROCE_CM_EV_SIDR_REP:
		cma_ud_rep_rcvd(c, m);
		break;
	default:
		break;
	}
	return 0;
}

static void
cm_send(void *ctx, struct droce_cm_conn *conn, const uint8_t gid[16],
	const uint8_t mad[DROCE_MAD_SIZE])
{
	(void)ctx;
	cma_agent_send(conn, gid, mad);
}

const struct droce_cm_ops cma_cm_ops = { .send = cm_send, .event = cm_event };
