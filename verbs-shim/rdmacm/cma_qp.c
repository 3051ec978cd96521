/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An rdma_cm id's QP: created in INIT (as librdmacm does), moved to RTR and RTS with what the
 * handshake agreed (the peer's QPN and PSN, the path MTU, read/atomic depths), to ERR on
 * disconnect; rdma_init_qp_attr for applications that move their own QPs.
 */
#include <errno.h>
#include <string.h>

#include "cma_priv.h"

/* RC: INIT, the rest when the peer is known. UD: INIT with rdma_cm's Q_Key, then RTR and RTS
 * at once: it has no peer of its own (librdmacm does the same). */
static int
qp_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (qp->qp_type != IBV_QPT_UD)
		return -ibv_modify_qp(qp, &a,
				      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					      IBV_QP_ACCESS_FLAGS);
	a.qkey = RDMA_UDP_QKEY;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -errno;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? -errno : 0;
}

/* The id's path as an address: the peer's GID over our GID of its family, the id's ToS. */
void
cma_ah_attr(const struct cma_id *c, struct ibv_ah_attr *a)
{
	a->is_global = 1;
	memcpy(a->grh.dgid.raw, c->dgid, 16);
	a->grh.sgid_index = (uint8_t)c->sgid_index;
	a->grh.hop_limit = 64;
	a->grh.traffic_class = c->tos;
	a->port_num = 1;
}

static void
rtr_attr(const struct cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = c->mtu;
	a->dest_qp_num = c->remote_qpn;
	/* Each side's REQ/REP names the PSN it expects to receive (the kernel's cm.c sets
	 * rq_psn from the REQ it sends and sq_psn from the one it gets; rdma_cm forces
	 * rq_psn to what it announced). */
	a->rq_psn = c->local_psn;
	a->max_dest_rd_atomic = c->resp_res;
	a->min_rnr_timer = 12; /* 0.64 ms (the kernel's CM asks 0: 655 ms) */
	cma_ah_attr(c, &a->ah_attr);
	*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

static void
rts_attr(const struct cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = c->remote_psn;
	a->timeout = c->ack_timeout_set ? c->ack_timeout : CMA_ACK_TIMEOUT;
	a->retry_cnt = c->retry_count;
	a->rnr_retry = c->rnr_retry_count;
	a->max_rd_atomic = c->init_depth;
	*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
}

/* RTR then RTS, if the id has a QP (an application that made its own uses
 * rdma_init_qp_attr). */
int
cma_qp_connect(struct cma_id *c)
{
	struct ibv_qp_attr a;
	int mask, rc;

	if (c->id.qp == NULL)
		return 0;
	rtr_attr(c, &a, &mask);
	rc = ibv_modify_qp(c->id.qp, &a, mask);
	if (rc != 0)
		return -rc;
	rts_attr(c, &a, &mask);
	return -ibv_modify_qp(c->id.qp, &a, mask);
}

void
cma_qp_error(struct cma_id *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (c->id.qp != NULL)
		ibv_modify_qp(c->id.qp, &a, IBV_QP_STATE);
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct cma_id *c = cma_id_live(id);
	int rc = 0;

	if (c == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	switch (qp_attr->qp_state) {
	case IBV_QPS_INIT:
		memset(qp_attr, 0, sizeof(*qp_attr));
		if (c->id.qp_type == IBV_QPT_UD) {
			/* UD: rdma_cm's Q_Key, no access flags (the kernel's cma_ib_init_qp_attr) */
			qp_attr->qp_state = IBV_QPS_INIT;
			qp_attr->port_num = 1;
			qp_attr->qkey = RDMA_UDP_QKEY;
			*qp_attr_mask =
				IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
			break;
		}
		qp_attr->qp_state = IBV_QPS_INIT;
		qp_attr->port_num = 1;
		qp_attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		*qp_attr_mask =
			IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		if (c->id.qp_type == IBV_QPT_UD) {
			memset(qp_attr, 0, sizeof(*qp_attr)); /* no peer of its own */
			qp_attr->qp_state = IBV_QPS_RTR;
			*qp_attr_mask = IBV_QP_STATE;
		} else if (c->remote_qpn == 0) {
			rc = -EINVAL; /* the peer is not known yet */
		} else {
			rtr_attr(c, qp_attr, qp_attr_mask);
		}
		break;
	case IBV_QPS_RTS:
		if (c->id.qp_type == IBV_QPT_UD) {
			memset(qp_attr, 0, sizeof(*qp_attr));
			qp_attr->qp_state = IBV_QPS_RTS;
			*qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		} else {
			rts_attr(c, qp_attr, qp_attr_mask);
		}
		break;
	default:
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

/* The id's own CQ (and completion channel) for a direction the caller gave none, as
 * librdmacm makes them: cmtime passes no CQs at all. */
static int
own_cq(struct rdma_cm_id *id, struct ibv_cq **cq, struct ibv_comp_channel **ch, uint32_t size)
{
	*ch = ibv_create_comp_channel(id->verbs);
	if (*ch == NULL)
		return -errno;
	*cq = ibv_create_cq(id->verbs, size > 0 ? (int)size : 1, id, *ch, 0);
	if (*cq == NULL) {
		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		return -errno;
	}
	return 0;
}

static void
drop_own_cqs(struct rdma_cm_id *id)
{
	if (id->send_cq_channel != NULL) {
		ibv_destroy_cq(id->send_cq);
		ibv_destroy_comp_channel(id->send_cq_channel);
		id->send_cq_channel = NULL;
	}
	if (id->recv_cq_channel != NULL) {
		ibv_destroy_cq(id->recv_cq);
		ibv_destroy_comp_channel(id->recv_cq_channel);
		id->recv_cq_channel = NULL;
	}
	id->send_cq = id->recv_cq = NULL;
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp;
	int rc;

	if (cma_id_live(id) == NULL || attr == NULL)
		return cma_errno(-EINVAL);
	if (id->qp != NULL)
		return cma_errno(-EINVAL); /* one QP an id, as librdmacm */
	if (attr->qp_type != id->qp_type)
		return cma_errno(-EINVAL); /* RC for RDMA_PS_TCP ids, UD for RDMA_PS_UDP */
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		/* No PD given: the id's, made on first need as librdmacm does. */
		if (id->pd == NULL) {
			id->pd = ibv_alloc_pd(id->verbs);
			if (id->pd == NULL)
				return -1;
			cma_id_of(id)->own_pd = true; /* rdma_destroy_ep frees it */
		}
		attr->pd = id->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	rc = 0;
	if (attr->send_cq == NULL)
		rc = own_cq(id, &attr->send_cq, &id->send_cq_channel, attr->cap.max_send_wr);
	if (rc == 0 && attr->recv_cq == NULL && attr->srq == NULL)
		rc = own_cq(id, &attr->recv_cq, &id->recv_cq_channel, attr->cap.max_recv_wr);
	id->send_cq = attr->send_cq;
	id->recv_cq = attr->recv_cq;
	qp = rc == 0 ? ibv_create_qp_ex(id->verbs, attr) : NULL;
	if (qp == NULL) {
		rc = rc != 0 ? rc : -errno;
		drop_own_cqs(id);
		return cma_errno(rc);
	}
	rc = qp_init(qp);
	if (rc != 0) {
		ibv_destroy_qp(qp);
		drop_own_cqs(id);
		return cma_errno(rc);
	}
	id->qp = qp;
	id->srq = attr->srq;
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex x;
	int rc;

	if (cma_id_live(id) == NULL || qp_init_attr == NULL)
		return cma_errno(-EINVAL);
	memset(&x, 0, sizeof(x));
	memcpy(&x, qp_init_attr, sizeof(*qp_init_attr)); /* the _ex struct's head */
	x.pd = pd != NULL ? pd : id->pd;
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	rc = rdma_create_qp_ex(id, &x);
	if (rc == 0)
		qp_init_attr->cap = x.cap;
	return rc;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (cma_id_live(id) == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	drop_own_cqs(id);
}

enum ibv_mtu
cma_port_mtu(void)
{
	struct ibv_port_attr pa;

	return ibv_query_port(cma_verbs, 1, &pa) == 0 ? pa.active_mtu : IBV_MTU_1024;
}
