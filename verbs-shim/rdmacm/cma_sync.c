/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Synchronous ids (rdma_create_id without a channel) and the endpoint calls built on them
 * (rdma_create_ep, rdma_get_request, rdma_destroy_ep: rdmacm-utils' rdma_client/rdma_server).
 * Such an id has a channel of its own; each call that would queue an event waits for it there
 * and returns its outcome, as librdmacm does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"

/* The outcome of c's next event: 0 for want (kept in *keep, else acked), else librdmacm's
 * errno for it: ECONNREFUSED for REJECTED, the event's status otherwise. */
int
cma_sync_wait(struct cma_id *c, enum rdma_cm_event_type want, struct rdma_cm_event **keep)
{
	struct rdma_cm_event *ev;
	int rc;

	for (;;) {
		if (rdma_get_cm_event(c->id.channel, &ev) != 0)
			return -errno;
		if (ev->id == &c->id || ev->listen_id == &c->id)
			break;
		rdma_ack_cm_event(ev); /* not ours: a channel of its own has none such */
	}
	if (ev->event == want) {
		if (keep != NULL)
			*keep = ev;
		else
			rdma_ack_cm_event(ev);
		return 0;
	}
	rc = ev->event == RDMA_CM_EVENT_REJECTED ? -ECONNREFUSED :
	     ev->status < 0			 ? ev->status :
	     ev->status > 0			 ? -ev->status :
						   -ECONNABORTED;
	rdma_ack_cm_event(ev);
	return rc;
}

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cma_id *c;
	int rc;

	if (id == NULL || res == NULL)
		return cma_errno(-EINVAL);
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	c = cma_id_of(cid);
	/* The QP's type is the address's (librdmacm sets it: rdma_client leaves it 0). */
	if (qp_init_attr != NULL)
		qp_init_attr->qp_type = cid->qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = res->ai_src_addr != NULL ? rdma_bind_addr(cid, res->ai_src_addr) : -1;
		if (rc == 0 && qp_init_attr != NULL) {
			/* rdma_get_request gives each new id a QP like this */
			c->ep_attr = malloc(sizeof(*qp_init_attr));
			if (c->ep_attr == NULL)
				rc = cma_errno(-ENOMEM);
			else
				*c->ep_attr = *qp_init_attr;
			c->ep_pd = pd;
		}
	} else {
		rc = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000);
		if (rc == 0)
			rc = rdma_resolve_route(cid, 2000);
		if (rc == 0 && qp_init_attr != NULL)
			rc = rdma_create_qp(cid, pd, qp_init_attr);
	}
	if (rc != 0) {
		rc = errno;
		rdma_destroy_ep(cid);
		errno = rc;
		return -1;
	}
	*id = cid;
	return 0;
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_live(id);

	if (c == NULL)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_id(id); /* and the PD made for it */
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id *l = cma_id_live(listen), *c;
	struct rdma_event_channel *own;
	struct rdma_cm_event *ev;
	int rc;

	if (l == NULL || id == NULL || l->own_ch == NULL)
		return cma_errno(-EINVAL); /* only a synchronous listener */
	rc = cma_sync_wait(l, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	if (rc != 0)
		return cma_errno(rc);
	c = cma_id_of(ev->id);
	/* The new id is synchronous too: its later events go to a channel of its own. */
	own = rdma_create_event_channel();
	if (own == NULL) {
		rdma_ack_cm_event(ev);
		return -1;
	}
	pthread_mutex_lock(&cma_lock);
	((struct cma_channel *)c->id.channel)->ids--;
	c->id.channel = own;
	c->own_ch = own;
	((struct cma_channel *)own)->ids++;
	pthread_mutex_unlock(&cma_lock);
	c->id.event = ev; /* acked when answered (rdma_accept / rdma_reject) */
	if (l->ep_attr != NULL) {
		struct ibv_qp_init_attr a = *l->ep_attr;

		if (rdma_create_qp(&c->id, l->ep_pd, &a) != 0) {
			rc = errno;
			rdma_reject(&c->id, NULL, 0);
			rdma_destroy_id(&c->id);
			errno = rc;
			return -1;
		}
	}
	*id = &c->id;
	return 0;
}
