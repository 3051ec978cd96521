/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM handshake for rdma_cm's connected ids (IBTA 12.6, 12.9): active REQ -> REP -> RTU,
 * passive REQ -> CONNECT_REQUEST -> accept (REP) -> RTU -> ESTABLISHED, or REJ; the QP moved
 * INIT -> RTR -> RTS on the way as librdmacm does. The messages, their resends and duplicates
 * are the engine's CM (stack/cm); its events reach the handlers here through cma_recv.c.
 * Disconnection is cma_disc.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"
#include "wire/droce_cm.h"

static uint32_t
rand24(void)
{
	return (uint32_t)(cma_now_ns() * 2654435761u) & 0xFFFFFF;
}

/* ---- active side ---- */

/* librdmacm's conn_param where the caller gives none (ucma_copy_conn_param_to_kern): 7
 * retries of each kind, the device's read/atomic depths. */
static void
default_conn_param(struct rdma_conn_param *p)
{
	struct ibv_device_attr a;

	memset(p, 0, sizeof(*p));
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	if (cma_verbs != NULL && ibv_query_device(cma_verbs, &a) == 0) {
		p->responder_resources = (uint8_t)a.max_qp_rd_atom;
		p->initiator_depth = (uint8_t)a.max_qp_init_rd_atom;
	}
}

/*
 * The private data of a REQ or SIDR_REQ: rdma_cm's header (the addresses), then the program's.
 * A connect after a REJ or a timeout releases the old connection first.
 */
int
cma_req_prepare(struct cma_id *c, struct droce_cm_msg *m, const struct rdma_conn_param *p)
{
	int rc = cma_hdr_build(m->private_data, &c->id.route.addr.src_addr,
			       &c->id.route.addr.dst_addr);

	if (rc != 0)
		return rc;
	if (p->private_data_len != 0)
		memcpy(m->private_data + CMA_HDR_SIZE, p->private_data, p->private_data_len);
	m->private_data_len = (uint8_t)(CMA_HDR_SIZE + p->private_data_len);
	if (c->conn != NULL) {
		droce_cm_release(&cma_cm, c->conn, cma_now_ns());
		c->conn = NULL;
	}
	return 0;
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = cma_id_live(id);
	struct rdma_conn_param none;
	const struct rdma_conn_param *p = conn_param != NULL ? conn_param : &none;
	struct droce_cm_msg m;
	int rc;

	if (c == NULL)
		return cma_errno(-EINVAL);
	if (conn_param == NULL)
		default_conn_param(&none);
	if (c->id.qp_type == IBV_QPT_UD) {
		pthread_mutex_lock(&cma_lock);
		rc = cma_ud_connect(c, p);
		pthread_mutex_unlock(&cma_lock);
		if (rc == 0 && c->own_ch != NULL)
			rc = cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
		return cma_errno(rc);
	}
	if (p->private_data_len > droce_cm_msg_priv_max(DROCE_CM_ATTR_REQ) - CMA_HDR_SIZE)
		return cma_errno(-EINVAL); /* 56 bytes after rdma_cm's address header */
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_ROUTE_OK) {
		pthread_mutex_unlock(&cma_lock);
		return cma_errno(-EINVAL); /* rdma_resolve_route first */
	}
	memset(&m, 0, sizeof(m));
	c->local_psn = rand24();
	c->mtu = cma_port_mtu();
	c->resp_res = p->responder_resources > 16 ? 16 : p->responder_resources;
	c->init_depth = p->initiator_depth > 16 ? 16 : p->initiator_depth;
	c->retry_count = p->retry_count > 7 ? 7 : p->retry_count;
	c->rnr_retry_count = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
	m.service_id = cma_service_id(RDMA_PS_TCP, cma_dst_port(c));
	m.local_ca_guid = cma_agent_guid();
	m.local_qpn = id->qp != NULL ? id->qp->qp_num : p->qp_num & 0xFFFFFF;
	m.starting_psn = c->local_psn;
	m.responder_resources = c->resp_res;
	m.initiator_depth = c->init_depth;
	m.remote_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.local_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.transport_type = 0; /* RC */
	m.end_to_end_flow_control = p->flow_control != 0;
	m.retry_count = c->retry_count;
	m.rnr_retry_count = c->rnr_retry_count;
	m.max_cm_retries = CMA_MAX_RETRIES;
	m.path_mtu = (uint8_t)c->mtu; /* verbs' enum is IBTA's encoding */
	m.srq = id->srq != NULL || p->srq != 0;
	m.pkey = 0xFFFF;
	m.primary_local_lid = 0xFFFF; /* RoCE: no LIDs, the permissive one */
	m.primary_remote_lid = 0xFFFF;
	memcpy(m.primary_local_gid, c->sgid, 16);
	memcpy(m.primary_remote_gid, c->dgid, 16);
	/* 0, "the port's current rate", as kernel rdma_cm sends on RoCE: a kernel peer makes
	 * the field its QP's static rate, and 2 would be 2.5 Gb/s. */
	m.primary_packet_rate = 0;
	m.primary_traffic_class = c->tos;
	m.primary_hop_limit = 64;
	/* As a kernel stack over a routed hop limit: SubnetLocal 0, so a kernel peer takes the
	 * LIDs and SL from what it received (cm_process_routed_req). */
	m.primary_subnet_local = 0;
	m.primary_local_ack_timeout = CMA_ACK_TIMEOUT;
	rc = cma_req_prepare(c, &m, p);
	if (rc == 0)
		rc = droce_cm_connect(&cma_cm, c->dgid, &m, c, cma_now_ns(), &c->conn);
	if (rc == 0)
		c->state = CMA_REQ_SENT;
	pthread_mutex_unlock(&cma_lock);
	if (rc == 0 && c->own_ch != NULL)
		rc = cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	return cma_errno(rc);
}

/* Lock held: RTU for the connection. */
static int
send_rtu(struct cma_id *c)
{
	return droce_cm_rtu(&cma_cm, c->conn, NULL, 0, cma_now_ns());
}

void
cma_rep_rcvd(struct cma_id *c, const struct droce_cm_msg *m)
{
	int rc;

	if (c->state != CMA_REQ_SENT)
		return;
	c->remote_qpn = m->local_qpn;
	c->remote_psn = m->starting_psn;
	c->rnr_retry_count = m->rnr_retry_count; /* the passive side's to ask of us */
	/* We serve the reads the peer may have outstanding; we may have as many as it serves. */
	c->resp_res = m->initiator_depth < c->resp_res ? m->initiator_depth : c->resp_res;
	c->init_depth =
		m->responder_resources < c->init_depth ? m->responder_resources : c->init_depth;
	if (c->id.qp == NULL) {
		/* The application connects its own QP, then calls rdma_establish(). */
		c->state = CMA_REP_SENT;
		cma_queue_event(c, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, m, 0);
		return;
	}
	rc = cma_qp_connect(c);
	if (rc != 0) {
		/* As the kernel's cma_rep_recv: the peer hears a REJ rather than resending. */
		c->state = CMA_DISCONNECTED;
		cma_qp_error(c);
		droce_cm_reject(&cma_cm, c->conn, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0,
				cma_now_ns());
		cma_queue_event(c, RDMA_CM_EVENT_CONNECT_ERROR, rc, NULL, 0);
		return;
	}
	send_rtu(c);
	c->state = CMA_ESTABLISHED;
	cma_queue_event(c, RDMA_CM_EVENT_ESTABLISHED, 0, m, 0);
}

int
rdma_establish(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_live(id);
	int rc = -EINVAL;

	if (c == NULL)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (c->state == CMA_REP_SENT && c->listener == NULL) {
		rc = send_rtu(c);
		c->state = CMA_ESTABLISHED;
		if (rc == 0)
			rc = cma_queue_event(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	}
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

/* ---- passive side ---- */

/* rdma_get_request's event stays with the id until it is answered. */
static void
ack_request(struct rdma_cm_id *id)
{
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
}

/* A new REQ (the CM answers resent ones): a CONNECT_REQUEST for its listener's child id, or
 * what the CM is to answer: a REJ reason, or nothing (-1: not ours, or parked). */
int
cma_req_rcvd(struct droce_cm_conn *conn, const struct droce_cm_msg *m)
{
	struct sockaddr_storage src, dst;
	struct cma_id *l, *c;
	uint16_t port;
	int idx;

	if (cma_service_id_ps(m->service_id) != RDMA_PS_TCP || m->transport_type != 0 ||
	    m->private_data_len < CMA_HDR_SIZE || cma_hdr_parse(m->private_data, &src, &dst) != 0)
		return -1; /* not rdma_cm's RC: nobody here to answer it */
	port = cma_service_id_port(m->service_id);
	l = cma_find_listener(RDMA_PS_TCP, port, (struct sockaddr *)&dst);
	idx = cma_sgid_index(m->primary_remote_gid);
	if (l == NULL && cma_park(m, RDMA_PS_TCP, port))
		return -1;
	if (l == NULL) {
		cma_log("rejected REQ for port %u: no id listens on it (REJ reason 8)", port);
		return DROCE_CM_REJ_INVALID_SERVICE_ID;
	}
	if (idx < 0) {
		/* Reason 12's ARI is a GID of ours (the kernel's cm_req_handler sends its index
		 * 0): a REJ of the CM's connection, which it keeps for the REQ's resends. */
		union ibv_gid own;
		bool have = ibv_query_gid(cma_verbs, 1, 0, &own) == 0;

		cma_log("rejected REQ for port %u: its GID is not this device's (REJ reason 12)",
			port);
		droce_cm_reject(&cma_cm, conn, DROCE_CM_REJ_INVALID_GID, own.raw, have ? 16 : 0,
				NULL, 0, cma_now_ns());
		droce_cm_release(&cma_cm, conn, cma_now_ns());
		return 0;
	}
	c = cma_child(l);
	if (c == NULL)
		return -1;
	c->state = CMA_REQ_RCVD;
	c->conn = conn;
	conn->user = c;
	c->remote_qpn = m->local_qpn;
	c->remote_psn = m->starting_psn;
	c->retry_count = m->retry_count;
	c->rnr_retry_count = m->rnr_retry_count;
	c->mtu = m->path_mtu < (uint8_t)cma_port_mtu() ? (enum ibv_mtu)m->path_mtu : cma_port_mtu();
	c->tos = m->primary_traffic_class;
	memcpy(c->dgid, m->primary_local_gid, 16);
	memcpy(c->sgid, m->primary_remote_gid, 16);
	c->sgid_index = idx;
	if (cma_child_route(c, &src, &dst, port) != 0) {
		conn->user = NULL;
		cma_free_id(c); /* no route back: the active side's resends time out */
		return -1;
	}
	c->resp_res = m->initiator_depth;
	c->init_depth = m->responder_resources;
	cma_queue_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m, CMA_HDR_SIZE);
	return 0;
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = cma_id_live(id);
	struct rdma_conn_param none = { .rnr_retry_count = 7 }; /* librdmacm's with none */
	const struct rdma_conn_param *p = conn_param != NULL ? conn_param : &none;
	struct droce_cm_msg m;
	int rc;

	if (c == NULL)
		return cma_errno(-EINVAL);
	ack_request(id);
	if (c->id.qp_type == IBV_QPT_UD) {
		pthread_mutex_lock(&cma_lock);
		rc = cma_ud_accept(c, p);
		pthread_mutex_unlock(&cma_lock);
		return cma_errno(rc);
	}
	if (p->private_data_len > droce_cm_msg_priv_max(DROCE_CM_ATTR_REP))
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_REQ_RCVD) {
		pthread_mutex_unlock(&cma_lock);
		return cma_errno(-EINVAL);
	}
	/* No more than the peer asked for, nor than the device has. */
	if (conn_param != NULL) {
		if (p->responder_resources < c->resp_res)
			c->resp_res = p->responder_resources;
		if (p->initiator_depth < c->init_depth)
			c->init_depth = p->initiator_depth;
	}
	/* For the peer's QP; ours keeps the REQ's (the kernel's cm_req_handler). */
	c->rep_rnr_retry = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
	if (c->resp_res > 16)
		c->resp_res = 16;
	if (c->init_depth > 16)
		c->init_depth = 16;
	c->local_psn = rand24();
	rc = cma_qp_connect(c);
	if (rc == 0) {
		memset(&m, 0, sizeof(m));
		m.local_qpn = id->qp != NULL ? id->qp->qp_num : p->qp_num & 0xFFFFFF;
		m.starting_psn = c->local_psn;
		m.responder_resources = c->resp_res;
		m.initiator_depth = c->init_depth;
		m.target_ack_delay = 0;
		m.failover_accepted = 0;
		m.end_to_end_flow_control = p->flow_control != 0;
		m.rnr_retry_count = c->rep_rnr_retry;
		m.srq = id->srq != NULL || p->srq != 0;
		m.local_ca_guid = cma_agent_guid();
		if (p->private_data_len != 0)
			memcpy(m.private_data, p->private_data, p->private_data_len);
		m.private_data_len = p->private_data_len;
		rc = droce_cm_accept(&cma_cm, c->conn, &m, cma_now_ns());
	}
	if (rc == 0)
		c->state = CMA_REP_SENT;
	pthread_mutex_unlock(&cma_lock);
	if (rc == 0 && c->own_ch != NULL)
		rc = cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	return cma_errno(rc);
}

/* Lock held: REJ (the consumer's, reason 28) for the REQ c received and has not answered. */
void
cma_reject_req(struct cma_id *c, const void *priv, uint8_t len)
{
	droce_cm_reject(&cma_cm, c->conn, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, priv, len,
			cma_now_ns());
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	struct cma_id *c = cma_id_live(id);

	if (c == NULL)
		return cma_errno(-EINVAL);
	ack_request(id);
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_REQ_RCVD) {
		pthread_mutex_unlock(&cma_lock);
		return cma_errno(-EINVAL);
	}
	if (c->id.qp_type == IBV_QPT_UD) {
		int rc = cma_ud_reject(c, private_data, private_data_len);

		pthread_mutex_unlock(&cma_lock);
		return cma_errno(rc);
	}
	cma_reject_req(c, private_data, private_data_len);
	c->state = CMA_DISCONNECTED;
	pthread_mutex_unlock(&cma_lock);
	return 0;
}

void
cma_rtu_rcvd(struct cma_id *c)
{
	if (c->state != CMA_REP_SENT || c->listener == NULL)
		return;
	c->state = CMA_ESTABLISHED;
	cma_queue_event(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
}

/* REJECTED in any state, as the kernel's cma_ib_handler reports IB_CM_REJ_RECEIVED. */
void
cma_rej_rcvd(struct cma_id *c, const struct droce_cm_msg *m)
{
	if (c->state != CMA_REQ_SENT && c->state != CMA_REP_SENT && c->state != CMA_REQ_RCVD)
		return;
	c->state = CMA_DISCONNECTED;
	cma_qp_error(c);
	/* librdmacm's status for REJECTED is the REJ reason. */
	cma_queue_event(c, RDMA_CM_EVENT_REJECTED, m->reason, m, 0);
}
