/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM handshake for rdma_cm's connected ids (IBTA 12.6, 12.9): active REQ -> REP -> RTU,
 * passive REQ -> CONNECT_REQUEST -> accept (REP) -> RTU -> ESTABLISHED, or REJ; the QP moved
 * INIT -> RTR -> RTS on the way as librdmacm does. Disconnection is cma_disc.c; received MADs
 * reach the handlers here, and resends are timed, in cma_recv.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"
#include "wire/droce_cm.h"

static uint64_t next_tid;

uint64_t
cma_new_tid(void)
{
	return (cma_now_ns() << 16) ^ ++next_tid;
}

static uint32_t
rand24(void)
{
	return (uint32_t)(cma_now_ns() * 2654435761u) & 0xFFFFFF;
}

/* Lock held: send m, keep it for resends while an answer is owed. */
int
cma_send_msg(struct cma_id *c, const struct droce_cm_msg *m, bool owed)
{
	int rc = droce_cm_msg_build(m, c->mad);

	if (rc != 0)
		return rc;
	c->retries = owed ? CMA_MAX_RETRIES : 0;
	c->resend_ns = owed ? cma_now_ns() + CMA_RETRY_MS * 1000000ull : 0;
	return cma_agent_send(c, c->mad);
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
		return cma_errno(-EINVAL);	/* 56 bytes after rdma_cm's address header */
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_ROUTE_OK) {
		pthread_mutex_unlock(&cma_lock);
		return cma_errno(-EINVAL);	/* rdma_resolve_route first */
	}
	memset(&m, 0, sizeof(m));
	c->local_psn = rand24();
	c->mtu = cma_port_mtu();
	c->resp_res = p->responder_resources > 16 ? 16 : p->responder_resources;
	c->init_depth = p->initiator_depth > 16 ? 16 : p->initiator_depth;
	c->retry_count = p->retry_count > 7 ? 7 : p->retry_count;
	c->rnr_retry_count = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
	c->tid = cma_new_tid();
	m.attr = DROCE_CM_ATTR_REQ;
	m.tid = c->tid;
	m.local_comm_id = c->local_comm_id;
	m.service_id = cma_service_id(RDMA_PS_TCP, cma_dst_port(c));
	m.local_ca_guid = cma_agent_guid();
	m.local_qpn = id->qp != NULL ? id->qp->qp_num : p->qp_num & 0xFFFFFF;
	m.starting_psn = c->local_psn;
	m.responder_resources = c->resp_res;
	m.initiator_depth = c->init_depth;
	m.remote_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.local_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.transport_type = 0;		/* RC */
	m.end_to_end_flow_control = p->flow_control != 0;
	m.retry_count = c->retry_count;
	m.rnr_retry_count = c->rnr_retry_count;
	m.max_cm_retries = CMA_MAX_RETRIES;
	m.path_mtu = (uint8_t)c->mtu;	/* verbs' enum is IBTA's encoding */
	m.srq = id->srq != NULL || p->srq != 0;
	m.pkey = 0xFFFF;
	m.primary_local_lid = 0xFFFF;	/* RoCE: no LIDs, the permissive one */
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
	rc = cma_hdr_build(m.private_data, &id->route.addr.src_addr, &id->route.addr.dst_addr);
	if (rc == 0) {
		if (p->private_data_len != 0)
			memcpy(m.private_data + CMA_HDR_SIZE, p->private_data,
			       p->private_data_len);
		m.private_data_len = (uint8_t)(CMA_HDR_SIZE + p->private_data_len);
		rc = cma_send_msg(c, &m, true);
	}
	if (rc == 0) {
		c->state = CMA_REQ_SENT;
		c->no_listener_left = CMA_NO_LISTENER_RETRIES;
	}
	pthread_mutex_unlock(&cma_lock);
	if (rc == 0 && c->own_ch != NULL)
		rc = cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	return cma_errno(rc);
}

/* A message of c's connection in transaction tid: the fields all but a REQ carry. */
void
cma_msg_start(struct droce_cm_msg *m, uint16_t attr, uint64_t tid, const struct cma_id *c)
{
	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = tid;
	m->local_comm_id = c->local_comm_id;
	m->remote_comm_id = c->remote_comm_id;
}

/* Lock held: RTU for the connection (REP received, or a duplicate REP: ours was lost). */
static int
send_rtu(struct cma_id *c)
{
	struct droce_cm_msg m;

	cma_msg_start(&m, DROCE_CM_ATTR_RTU, c->tid, c);
	return cma_send_msg(c, &m, false);
}

static void send_rej(const struct droce_cm_msg *req, uint32_t local_comm_id, uint16_t reason,
		     const void *ari, uint8_t ari_len, const void *priv, uint8_t len,
		     struct cma_id *via);

void
cma_rep_rcvd(struct cma_id *c, const struct droce_cm_msg *m)
{
	int rc;

	if (c->state == CMA_ESTABLISHED) {
		send_rtu(c);	/* our RTU was lost: the REP came again */
		return;
	}
	if (c->state != CMA_REQ_SENT)
		return;
	c->resend_ns = 0;
	c->remote_comm_id = m->local_comm_id;
	c->remote_qpn = m->local_qpn;
	c->remote_psn = m->starting_psn;
	c->rnr_retry_count = m->rnr_retry_count;	/* the passive side's to ask of us */
	/* We serve the reads the peer may have outstanding; we may have as many as it serves. */
	c->resp_res = m->initiator_depth < c->resp_res ? m->initiator_depth : c->resp_res;
	c->init_depth = m->responder_resources < c->init_depth ? m->responder_resources :
								  c->init_depth;
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
		send_rej(m, c->local_comm_id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0, c);
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

/* ari: the AdditionalRejectedInformation the reason calls for (IBTA 12.6.7.2), or NULL. */
static void
send_rej(const struct droce_cm_msg *req, uint32_t local_comm_id, uint16_t reason, const void *ari,
	 uint8_t ari_len, const void *priv, uint8_t len, struct cma_id *via)
{
	struct droce_cm_msg m;

	memset(&m, 0, sizeof(m));
	if (ari_len != 0) {
		memcpy(m.ari, ari, ari_len);
		m.ari_len = ari_len;
	}
	m.attr = DROCE_CM_ATTR_REJ;
	m.tid = req->tid;
	m.local_comm_id = local_comm_id;
	m.remote_comm_id = req->local_comm_id;
	m.msg_rejected = req->attr == DROCE_CM_ATTR_REP ? 1 : 0;
	m.reason = reason;
	if (len > droce_cm_msg_priv_max(DROCE_CM_ATTR_REJ))
		len = (uint8_t)droce_cm_msg_priv_max(DROCE_CM_ATTR_REJ);
	if (len != 0)
		memcpy(m.private_data, priv, len);
	m.private_data_len = len;
	cma_send_msg(via, &m, false);
}

/* "Message received, the answer takes longer" for a REQ the application has not accepted
 * yet, as kernel rdma_cm sends (CMA_CM_MRA_SETTING: Service Timeout 24, ~69 s): the peer
 * waits rather than run out of resends. */
static void
send_mra(struct cma_id *c, const struct droce_cm_msg *req)
{
	struct droce_cm_msg m;

	cma_msg_start(&m, DROCE_CM_ATTR_MRA, req->tid, c);
	m.msg_rejected = DROCE_CM_MSG_REQ;	/* MessageMRAed */
	m.service_timeout = CMA_MRA_SERVICE_TIMEOUT;
	cma_send_msg(c, &m, false);
}

void
cma_req_rcvd(const struct droce_cm_msg *m)
{
	struct sockaddr_storage src, dst;
	struct cma_id *l, *c, tmp;
	uint16_t port;
	int idx, err = 0;

	c = cma_find_peer(m->local_comm_id, m->primary_local_gid);
	if (c != NULL) {
		/* A resent REQ: our REP was lost, or the application has not answered yet. */
		if (c->state == CMA_REP_SENT)
			cma_agent_resend(c);
		else if (c->state == CMA_REQ_RCVD)
			send_mra(c, m);
		return;
	}
	memset(&tmp, 0, sizeof(tmp));
	if (cma_service_id_ps(m->service_id) != RDMA_PS_TCP || m->transport_type != 0 ||
	    m->private_data_len < CMA_HDR_SIZE ||
	    cma_hdr_parse(m->private_data, &src, &dst) != 0)
		return;	/* not rdma_cm's RC: nobody here to answer it */
	port = cma_service_id_port(m->service_id);
	l = cma_find_listener(RDMA_PS_TCP, port, (struct sockaddr *)&dst);
	idx = cma_sgid_index(m->primary_remote_gid);
	/* The REJ goes back over an AH to the sender (a temporary id carries it). */
	if (l == NULL && cma_park(m, RDMA_PS_TCP, port))
		return;
	if (l == NULL || idx < 0) {
		memcpy(tmp.dgid, m->primary_local_gid, 16);
		tmp.ah = cma_agent_ah(tmp.dgid, idx < 0 ? 0 : idx, &err);
		if (tmp.ah == NULL)
			return;
		/* Reason 8 has no ARI; reason 12's is a GID of ours (the kernel's cm_req_handler
		 * sends its index 0). */
		if (l == NULL) {
			cma_log("rejected REQ for port %u: no id listens on it (REJ reason 8)", port);
			send_rej(m, 0, DROCE_CM_REJ_INVALID_SERVICE_ID, NULL, 0, NULL, 0, &tmp);
		} else {
			union ibv_gid own;
			bool have = ibv_query_gid(cma_verbs, 1, 0, &own) == 0;

			cma_log("rejected REQ for port %u: its GID is not this device's (REJ reason 12)",
				port);
			send_rej(m, 0, DROCE_CM_REJ_INVALID_GID, own.raw, have ? 16 : 0, NULL, 0,
				 &tmp);
		}
		ibv_destroy_ah(tmp.ah);
		return;
	}
	c = cma_child(l);
	if (c == NULL)
		return;
	c->state = CMA_REQ_RCVD;
	c->tid = m->tid;
	c->remote_comm_id = m->local_comm_id;
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
		cma_free_id(c);	/* no route back: the active side's resends time out */
		return;
	}
	c->resp_res = m->initiator_depth;
	c->init_depth = m->responder_resources;
	cma_queue_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m, CMA_HDR_SIZE);
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cma_id *c = cma_id_live(id);
	struct rdma_conn_param none = { .rnr_retry_count = 7 };	/* librdmacm's with none */
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
		cma_msg_start(&m, DROCE_CM_ATTR_REP, c->tid, c);
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
		rc = cma_send_msg(c, &m, true);
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
	struct droce_cm_msg req;

	memset(&req, 0, sizeof(req));
	req.attr = DROCE_CM_ATTR_REQ;
	req.tid = c->tid;
	req.local_comm_id = c->remote_comm_id;
	send_rej(&req, c->local_comm_id, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, priv, len, c);
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
	c->resend_ns = 0;
	c->state = CMA_ESTABLISHED;
	cma_queue_event(c, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
}

/* REJECTED in any state, as the kernel's cma_ib_handler reports IB_CM_REJ_RECEIVED. */
void
cma_rej_rcvd(struct cma_id *c, const struct droce_cm_msg *m)
{
	if (c->state != CMA_REQ_SENT && c->state != CMA_REP_SENT)
		return;
	if (c->state == CMA_REQ_SENT && m->reason == DROCE_CM_REJ_INVALID_SERVICE_ID &&
	    c->no_listener_left > 0) {
		/* nobody listens yet: the same REQ again after a resend interval */
		c->no_listener_left--;
		c->retries = CMA_MAX_RETRIES;
		c->resend_ns = cma_now_ns() + CMA_RETRY_MS * 1000000ull;
		cma_log("REQ rejected, no listener at the peer yet (REJ reason 8): sent again in "
			"%u ms, %u more times", CMA_RETRY_MS, c->no_listener_left);
		return;
	}
	c->resend_ns = 0;
	c->state = CMA_DISCONNECTED;
	cma_qp_error(c);
	/* librdmacm's status for REJECTED is the REJ reason. */
	cma_queue_event(c, RDMA_CM_EVENT_REJECTED, m->reason, m, 0);
}
