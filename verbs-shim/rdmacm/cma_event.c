/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event channels: a pipe per channel, one byte per queued event, so the application may block
 * in rdma_get_cm_event or poll the fd; events are freed when acked.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cma_priv.h"

/* Events handed out by rdma_get_cm_event and not acked yet (linked through next), so that an
 * event acked twice, or a pointer that never was one, is EINVAL rather than a double free. */
static struct cma_event *events_out;
/* Destroyed channels, kept (rdma_destroy_event_channel): listed, so still reachable. */
static struct cma_channel *channels_closed;

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cma_channel *ch = calloc(1, sizeof(*ch));
	int fds[2];

	if (ch == NULL)
		return NULL;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		free(ch);
		return NULL;
	}
	ch->ch.fd = fds[0];
	ch->wfd = fds[1];
	return &ch->ch;
}

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct cma_event *e;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&cma_lock);
	while ((e = ch->head) != NULL) {
		ch->head = e->next;
		free(e);
	}
	/* The pipe and the struct stay (two descriptors a channel): a thread that is in
	 * rdma_get_cm_event, or calls it a moment later (rping's CM thread at exit, racing main's
	 * destroy), then blocks for good, as on the real library's device fd, instead of reading
	 * EOF, a closed or reused descriptor, or freed memory. */
	if (!ch->closed) {
		ch->next_closed = channels_closed;
		channels_closed = ch;
	}
	__atomic_store_n(&ch->closed, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cma_lock);
}

/* A synchronous id's own channel: only this library's calls on that id ever read it, from the
 * thread that destroys it, so it can go whole. */
void
cma_channel_free(struct rdma_event_channel *channel)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct cma_event *e;

	while ((e = ch->head) != NULL) {
		ch->head = e->next;
		free(e);
	}
	close(ch->ch.fd);
	close(ch->wfd);
	free(ch);
}

_Static_assert(offsetof(struct rdma_conn_param, private_data) ==
			       offsetof(struct rdma_ud_param, private_data) &&
		       offsetof(struct rdma_conn_param, private_data_len) ==
			       offsetof(struct rdma_ud_param, private_data_len),
	       "param.conn / param.ud");

/* Lock held. The event carries m's private data from priv_off on (REQ: past the rdma_cm
 * addressing header) and, for CONNECT_REQUEST / ESTABLISHED, the peer's parameters; or, with
 * ud, UD parameters of our own making (a multicast join's). */
static int
queue_event(struct cma_id *c, enum rdma_cm_event_type type, int status,
	    const struct droce_cm_msg *m, unsigned int priv_off, const struct rdma_ud_param *ud)
{
	struct cma_channel *ch = (struct cma_channel *)c->id.channel;
	struct cma_event *e;
	const uint8_t one = 1;

	if (ch == NULL || c->destroyed)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->ev.id = &c->id;
	e->ev.listen_id = type == RDMA_CM_EVENT_CONNECT_REQUEST && c->listener != NULL ?
				  &c->listener->id :
				  NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (m != NULL) {
		unsigned int len =
			m->private_data_len > priv_off ? m->private_data_len - priv_off : 0;

		/* private_data and its length sit alike in param.conn and param.ud */
		memcpy(e->priv, m->private_data + priv_off, len);
		e->ev.param.conn.private_data = len != 0 ? e->priv : NULL;
		e->ev.param.conn.private_data_len = (uint8_t)len;
	}
	if (m != NULL && c->id.qp_type == IBV_QPT_UD) {
		struct rdma_ud_param *u = &e->ev.param.ud;

		/* SIDR_REP: the peer's QP and Q_Key, and an address handle's worth of path */
		u->qp_num = m->local_qpn;
		u->qkey = m->local_qkey;
		cma_ah_attr(c, &u->ah_attr);
	} else if (m != NULL) {
		struct rdma_conn_param *p = &e->ev.param.conn;

		/* The peer's offer seen from here: its initiator depth is what we serve. */
		p->responder_resources = m->initiator_depth;
		p->initiator_depth = m->responder_resources;
		p->flow_control = m->end_to_end_flow_control;
		p->retry_count = m->retry_count;
		p->rnr_retry_count = m->rnr_retry_count;
		p->srq = m->srq;
		p->qp_num = m->local_qpn;
	}
	if (ud != NULL)
		e->ev.param.ud = *ud;
	if (ch->tail != NULL)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	if (write(ch->wfd, &one, 1) != 1)
		return -errno;
	return 0;
}

int
cma_queue_event(struct cma_id *c, enum rdma_cm_event_type type, int status,
		const struct droce_cm_msg *m, unsigned int priv_off)
{
	return queue_event(c, type, status, m, priv_off, NULL);
}

int
cma_queue_ud_event(struct cma_id *c, enum rdma_cm_event_type type, int status,
		   const struct rdma_ud_param *u)
{
	return queue_event(c, type, status, NULL, 0, u);
}

/* A reader of a destroyed channel stays here for good (see rdma_destroy_event_channel). */
static void __attribute__((noreturn)) park(void)
{
	for (;;)
		pause();
}

int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct cma_event *e;
	int rerr = 0;
	uint8_t b;
	ssize_t r;

	if (ch == NULL || event == NULL)
		return cma_errno(-EINVAL);
	/* One byte per queued event; a non-blocking fd says EAGAIN as a read would. A byte
	 * without its event: the event went with its id (rdma_destroy_id): read on. */
	do {
		if (__atomic_load_n(&ch->closed, __ATOMIC_RELAXED))
			park();
		do
			r = read(ch->ch.fd, &b, 1);
		while (r < 0 && errno == EINTR);
		rerr = r < 0 ? errno : 0;
		pthread_mutex_lock(&cma_lock);
		if (ch->closed) {
			pthread_mutex_unlock(&cma_lock);
			park();
		}
		e = NULL;
		if (r == 1 && (e = ch->head) != NULL) {
			ch->head = e->next;
			if (ch->head == NULL)
				ch->tail = NULL;
			cma_id_of(e->ev.id)->events_out++;
			e->next = events_out;
			events_out = e;
		}
		pthread_mutex_unlock(&cma_lock);
		if (r != 1)
			return cma_errno(r == 0 ? -ENODATA : -rerr);
	} while (e == NULL);
	*event = &e->ev;
	return 0;
}

/* Lock held: the id goes; so do its events nobody has got yet (as the kernel's rdma_cm
 * drops them). Their bytes stay in the pipe: rdma_get_cm_event skips them. */
void
cma_drop_events(struct cma_id *c)
{
	struct cma_channel *ch = (struct cma_channel *)c->id.channel;
	struct cma_event **pp, *e;

	if (ch == NULL)
		return;
	ch->tail = NULL;
	for (pp = &ch->head; (e = *pp) != NULL;) {
		if (e->ev.id == &c->id) {
			*pp = e->next;
			free(e);
			continue;
		}
		ch->tail = e;
		pp = &e->next;
	}
}

/* Lock held: e goes, if it is an event handed out and not acked yet. */
int
cma_ack_locked(struct cma_event *e)
{
	struct cma_event **pp;
	struct cma_id *c;

	for (pp = &events_out; *pp != NULL && *pp != e; pp = &(*pp)->next)
		;
	if (*pp == NULL)
		return -EINVAL; /* acked already, or not an event of ours */
	*pp = e->next;
	c = cma_id_of(e->ev.id);
	if (--c->events_out == 0)
		pthread_cond_broadcast(&cma_acked); /* an rdma_destroy_id may wait for it */
	free(e);
	return 0;
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	int rc;

	pthread_mutex_lock(&cma_lock);
	rc = cma_ack_locked((struct cma_event *)event);
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED",	 "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED",	 "RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR",	 "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED",	 "RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED",	 "RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN",	 "RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE",	 "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]))
		return names[event];
	return "UNKNOWN EVENT";
}
