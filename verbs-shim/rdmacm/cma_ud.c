/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm's UD port space (RDMA_PS_UDP): no connection, only Service ID Resolution (IBTA
 * 12.11). The active side's rdma_connect sends SIDR_REQ (rdma_cm's IP header first in its
 * private data); the passive side hears CONNECT_REQUEST and answers with rdma_accept (SIDR_REP:
 * its QPN and Q_Key) or rdma_reject; the active side gets ESTABLISHED with the peer's QPN, Q_Key
 * and address handle attributes in param.ud, or UNREACHABLE with the SIDR status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"

enum {
	SIDR_SUCCESS = 0,
	SIDR_UNSUPPORTED = 1, /* no listener for the service ID */
	SIDR_REJECT = 2,      /* the application rejected */
};

int
cma_ud_connect(struct cma_id *c, const struct rdma_conn_param *p)
{
	struct droce_cm_msg m;
	int rc;

	if (p->private_data_len > droce_cm_msg_priv_max(DROCE_CM_ATTR_SIDR_REQ) - CMA_HDR_SIZE)
		return -EINVAL;
	if (c->state != CMA_ROUTE_OK)
		return -EINVAL; /* rdma_resolve_route first */
	memset(&m, 0, sizeof(m));
	m.pkey = 0xFFFF;
	m.service_id = cma_service_id(RDMA_PS_UDP, cma_dst_port(c));
	rc = cma_req_prepare(c, &m, p);
	if (rc != 0)
		return rc;
	rc = droce_cm_sidr_req(&cma_cm, c->dgid, &m, c, cma_now_ns(), &c->conn);
	if (rc == 0)
		c->state = CMA_REQ_SENT;
	return rc;
}

/* A SIDR_REP for request request_id to dgid; kept in *keep (if given) for a resent SIDR_REQ. */
static int
send_rep(const uint8_t dgid[16], uint64_t tid, uint32_t request_id, uint64_t service_id,
	 uint8_t status, uint32_t qpn, const void *priv, uint8_t len, struct droce_cm_msg **keep)
{
	struct droce_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_SIDR_REP;
	m.tid = tid;
	m.local_comm_id = request_id;
	m.service_id = service_id;
	m.sidr_status = status;
	m.local_qpn = qpn;
	m.local_qkey = status == SIDR_SUCCESS ? RDMA_UDP_QKEY : 0;
	if (len > droce_cm_msg_priv_max(DROCE_CM_ATTR_SIDR_REP))
		len = (uint8_t)droce_cm_msg_priv_max(DROCE_CM_ATTR_SIDR_REP);
	if (len != 0)
		memcpy(m.private_data, priv, len);
	m.private_data_len = len;
	if (keep != NULL) {
		if (*keep == NULL)
			*keep = malloc(sizeof(**keep));
		if (*keep != NULL)
			**keep = m;
	}
	return droce_cm_sidr_reply(&cma_cm, dgid, &m);
}

void
cma_ud_req_rcvd(const struct droce_cm_msg *m)
{
	struct sockaddr_storage src, dst;
	struct cma_id *l, *c;
	uint8_t dgid[16], sgid[16];
	uint16_t port;
	int idx;

	/* SIDR_REQ names no GIDs: rdma_cm's header carries both addresses. */
	if (cma_service_id_ps(m->service_id) != RDMA_PS_UDP || m->private_data_len < CMA_HDR_SIZE ||
	    cma_hdr_parse(m->private_data, &src, &dst) != 0 ||
	    cma_gid_of((struct sockaddr *)&src, dgid) != 0 ||
	    cma_gid_of((struct sockaddr *)&dst, sgid) != 0)
		return;
	c = cma_find_peer(m->local_comm_id, dgid);
	if (c != NULL) {
		if (c->state == CMA_ESTABLISHED && c->sidr_rep != NULL)
			droce_cm_sidr_reply(&cma_cm, c->dgid, c->sidr_rep); /* ours was lost */
		return;
	}
	port = cma_service_id_port(m->service_id);
	l = cma_find_listener(RDMA_PS_UDP, port, (struct sockaddr *)&dst);
	idx = cma_sgid_index(sgid);
	if (l == NULL && cma_park(m, RDMA_PS_UDP, port))
		return;
	if (l == NULL || idx < 0) {
		send_rep(dgid, m->tid, m->local_comm_id, m->service_id, SIDR_UNSUPPORTED, 0, NULL,
			 0, NULL);
		return;
	}
	c = cma_child(l);
	if (c == NULL)
		return;
	c->state = CMA_REQ_RCVD;
	c->tid = m->tid;
	c->remote_comm_id = m->local_comm_id; /* the RequestID the SIDR_REP echoes */
	c->service_id = m->service_id;
	memcpy(c->dgid, dgid, 16);
	memcpy(c->sgid, sgid, 16);
	c->sgid_index = idx;
	if (cma_child_route(c, &src, &dst, port) != 0) {
		cma_free_id(c);
		return;
	}
	/* The event's ah_attr and QPN point back at the requester's QP. */
	{
		struct droce_cm_msg ev = *m;

		ev.local_qpn = 0;
		ev.local_qkey = 0;
		cma_queue_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, CMA_HDR_SIZE);
	}
}

int
cma_ud_accept(struct cma_id *c, const struct rdma_conn_param *p)
{
	uint32_t qpn;
	int rc;

	if (c->state != CMA_REQ_RCVD)
		return -EINVAL;
	if (p->private_data_len > droce_cm_msg_priv_max(DROCE_CM_ATTR_SIDR_REP))
		return -EINVAL;
	qpn = c->id.qp != NULL ? c->id.qp->qp_num : p->qp_num & 0xFFFFFF;
	rc = send_rep(c->dgid, c->tid, c->remote_comm_id, c->service_id, SIDR_SUCCESS, qpn,
		      p->private_data, p->private_data_len, &c->sidr_rep);
	if (rc == 0)
		c->state = CMA_ESTABLISHED; /* c->sidr_rep again for a resent SIDR_REQ */
	return rc;
}

int
cma_ud_reject(struct cma_id *c, const void *priv, uint8_t len)
{
	int rc = send_rep(c->dgid, c->tid, c->remote_comm_id, c->service_id, SIDR_REJECT, 0, priv,
			  len, NULL);

	c->state = CMA_DISCONNECTED;
	return rc;
}

void
cma_ud_rep_rcvd(struct cma_id *c, const struct droce_cm_msg *m)
{
	if (c->id.qp_type != IBV_QPT_UD || c->state != CMA_REQ_SENT)
		return;
	if (m->sidr_status != SIDR_SUCCESS) {
		c->state = CMA_DISCONNECTED;
		/* librdmacm's status for a refused SIDR is the SIDR status */
		cma_queue_event(c, RDMA_CM_EVENT_UNREACHABLE, m->sidr_status, m, 0);
		return;
	}
	c->remote_qpn = m->local_qpn;
	c->state = CMA_ESTABLISHED;
	cma_queue_event(c, RDMA_CM_EVENT_ESTABLISHED, 0, m, 0);
}
