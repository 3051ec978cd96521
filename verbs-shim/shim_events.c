/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion and asynchronous events. The engine counts a CQ's events (droce_cq_events) and
 * queues asynchronous ones (droce_dev_get_async_event) but calls nobody back, so a watcher
 * thread asks it, through droce_rt_call(), about the CQs armed on a completion channel and
 * for queued events: every 20 us while a CQ is armed, every millisecond otherwise. A fired CQ
 * goes down its channel's pipe (ibv_get_cq_event); a QP event down its context's async pipe.
 * Lcore mode only: in inline mode no thread but the application's may touch the runtime.
 * Until the engine offers a hook (/work/notes/api-changes.md) this costs up to ~20 us of
 * latency per event.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "droce_ext.h"
#include "droce_rt.h"
#include "droce_shim.h"

enum { SHIM_EV_BATCH = 64, SHIM_EV_ASYNC = 16 };

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;	/* work arrived / round done */
static struct droce_shim_cq *ev_armed;	/* armed CQs, linked by armed_next */
static bool ev_running;			/* the watcher exists */
static bool ev_stop;			/* the runtime is closing: the watcher must leave */
static pthread_t ev_tid;
static bool ev_busy;			/* the watcher is using CQs it took from the list */

struct shim_ev_round {
	struct droce_shim_cq *cq[SHIM_EV_BATCH];
	bool fired[SHIM_EV_BATCH];
	unsigned int n;
	struct droce_async_event async[SHIM_EV_ASYNC];
	struct droce_qp_init_attr qp_init[SHIM_EV_ASYNC];
	unsigned int nasync;
};

static int
shim_ev_round_fn(struct droce_rt *rt, void *arg)
{
	struct shim_ev_round *r = arg;
	struct droce_qp_attr qa;
	unsigned int i;

	for (i = 0; i < r->n; i++)
		r->fired[i] = droce_cq_events(r->cq[i]->ecq) != r->cq[i]->ev_base;
	for (r->nasync = 0; r->nasync < SHIM_EV_ASYNC; r->nasync++) {
		struct droce_async_event *ev = &r->async[r->nasync];

		if (droce_dev_get_async_event(droce_rt_dev(rt), ev) != 0)
			break;
		/* a QP's context is the shim QP (droce_shim_create_qp_ex) */
		if (ev->type != DROCE_EVENT_CQ_ERR && ev->type != DROCE_EVENT_PORT_ACTIVE &&
		    ev->type != DROCE_EVENT_SRQ_LIMIT_REACHED)
			droce_qp_query(ev->element.qp, &qa, &r->qp_init[r->nasync]);
	}
	return 0;
}

/* Hand the round's QP events to their contexts; CQ, SRQ and port events have no owner the
 * engine can name yet and are dropped. */
static void
shim_ev_async(struct shim_ev_round *r)
{
	struct ibv_async_event ev;
	struct ibv_qp *qp;
	unsigned int i;

	for (i = 0; i < r->nasync; i++) {
		if (r->async[i].type == DROCE_EVENT_CQ_ERR ||
		    r->async[i].type == DROCE_EVENT_PORT_ACTIVE ||
		    r->async[i].type == DROCE_EVENT_SRQ_LIMIT_REACHED ||
		    r->qp_init[i].qp_context == NULL)
			continue;
		qp = &((struct droce_shim_qp *)r->qp_init[i].qp_context)->qp;
		ev.element.qp = qp;
		ev.event_type = (enum ibv_event_type)r->async[i].type;	/* values equal */
		droce_shim_post_async(qp->context, &ev);
	}
}

static void *
shim_ev_thread(void *arg)
{
	static struct shim_ev_round r;	/* one watcher: no need for stack space */
	struct timespec nap;
	struct droce_shim_cq *cq, **pp;
	unsigned int i;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&ev_lock);
		if (ev_stop) {
			pthread_mutex_unlock(&ev_lock);
			return NULL;
		}
		r.n = 0;
		for (cq = ev_armed; cq != NULL && r.n < SHIM_EV_BATCH; cq = cq->armed_next)
			r.cq[r.n++] = cq;
		ev_busy = true;
		pthread_mutex_unlock(&ev_lock);

		if (droce_shim_call(shim_ev_round_fn, &r) != 0)
			r.n = r.nasync = 0;

		pthread_mutex_lock(&ev_lock);
		for (i = 0; i < r.n; i++) {
			if (!r.fired[i])
				continue;
			for (pp = &ev_armed; *pp != NULL; pp = &(*pp)->armed_next) {
				if (*pp == r.cq[i]) {
					*pp = r.cq[i]->armed_next;
					r.cq[i]->armed = false;
					pthread_mutex_lock(&r.cq[i]->cq.mutex);
					r.cq[i]->ev_reported++;
					pthread_mutex_unlock(&r.cq[i]->cq.mutex);
					droce_shim_cq_notify(&r.cq[i]->cq);
					break;
				}
			}
		}
		ev_busy = false;
		pthread_cond_broadcast(&ev_cond);
		pthread_mutex_unlock(&ev_lock);
		shim_ev_async(&r);

		nap.tv_sec = 0;
		nap.tv_nsec = ev_armed != NULL ? 20000 : 1000000;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

struct shim_arm_req {
	struct droce_cq *cq;
	bool solicited;
	uint64_t events;
};

static int
shim_arm_fn(struct droce_rt *rt, void *arg)
{
	struct shim_arm_req *r = arg;
	int rc;

	(void)rt;
	rc = droce_cq_req_notify(r->cq, r->solicited);
	r->events = droce_cq_events(r->cq);	/* same closure: no event can slip between */
	return rc;
}

/* Start the watcher once the runtime runs its loop on its own lcore. */
int
droce_shim_events_start(void)
{
	int rc = 0;

	pthread_mutex_lock(&ev_lock);
	if (!ev_running) {
		rc = pthread_create(&ev_tid, NULL, shim_ev_thread, NULL);
		ev_running = rc == 0;
	}
	pthread_mutex_unlock(&ev_lock);
	return -rc;
}

/* Before the runtime closes: the watcher calls into it. */
void
droce_shim_events_stop(void)
{
	pthread_mutex_lock(&ev_lock);
	if (!ev_running) {
		pthread_mutex_unlock(&ev_lock);
		return;
	}
	ev_stop = true;
	pthread_mutex_unlock(&ev_lock);
	pthread_join(ev_tid, NULL);
	ev_running = false;
}

int
droce_shim_cq_arm(struct droce_shim_cq *cq, bool solicited_only)
{
	struct shim_arm_req r = { .cq = cq->ecq, .solicited = solicited_only };
	int rc;

	if (!ev_running)	/* inline mode: nobody could wake the channel */
		return -EOPNOTSUPP;
	rc = droce_shim_call(shim_arm_fn, &r);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&ev_lock);
	if (!cq->armed) {
		cq->ev_base = r.events;
		cq->armed = true;
		cq->armed_next = ev_armed;
		ev_armed = cq;
	}
	pthread_mutex_unlock(&ev_lock);
	return 0;
}

/*
 * Before a CQ goes: off the armed list, not in the watcher's hands, and every event written to
 * its channel acknowledged (verbs: ibv_destroy_cq waits for ibv_ack_cq_events), so that no
 * ibv_get_cq_event() can return it afterwards.
 */
void
droce_shim_cq_disarm(struct droce_shim_cq *cq)
{
	struct droce_shim_cq **pp;

	pthread_mutex_lock(&ev_lock);
	for (pp = &ev_armed; *pp != NULL; pp = &(*pp)->armed_next) {
		if (*pp == cq) {
			*pp = cq->armed_next;
			break;
		}
	}
	cq->armed = false;
	while (ev_busy)
		pthread_cond_wait(&ev_cond, &ev_lock);
	pthread_mutex_unlock(&ev_lock);
	pthread_mutex_lock(&cq->cq.mutex);
	while (cq->cq.comp_events_completed != cq->ev_reported)
		pthread_cond_wait(&cq->cq.cond, &cq->cq.mutex);
	pthread_mutex_unlock(&cq->cq.mutex);
}
