/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion and asynchronous events. The engine counts a CQ's events (droce_cq_events) and
 * queues asynchronous ones (droce_dev_get_async_event) but calls nobody back, so a watcher
 * thread asks it, through droce_shim_call(), about the CQs armed on a completion channel and
 * for queued events: every 20 us while a CQ is armed, every millisecond otherwise. A fired CQ
 * goes down its channel's pipe (ibv_get_cq_event); a QP, CQ or SRQ event down its owner's
 * context's async pipe, a port event down every context's.
 * Until the engine offers a hook this costs up to ~20 us of latency per event.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "droce_ext.h"
#include "droce_rt.h"
#include "droce_shim.h"

enum { SHIM_EV_BATCH = 64, SHIM_EV_ASYNC = 16 };

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER; /* work arrived / round done */
static struct droce_shim_cq *ev_armed;			  /* armed CQs, linked by armed_next */
static bool ev_running;					  /* the watcher exists */
static bool ev_stop; /* the runtime is closing: the watcher must leave */
static pthread_t ev_tid;
static bool ev_busy;	    /* the watcher is using CQs it took from the list */
static uint32_t ev_kick;    /* futex word: bumped when the loop did work */
static uint32_t ev_napping; /* the watcher waits on ev_kick */

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
		r->qp_init[r->nasync].qp_context = NULL;
		if (ev->type != DROCE_EVENT_CQ_ERR && ev->type != DROCE_EVENT_PORT_ACTIVE &&
		    ev->type != DROCE_EVENT_SRQ_LIMIT_REACHED &&
		    droce_qp_query(ev->element.qp, &qa, &r->qp_init[r->nasync]) != 0)
			r->qp_init[r->nasync].qp_context = NULL;
	}
	return 0;
}

static struct droce_shim_ctx *ev_ctxs; /* open contexts, linked by reg_next */
static struct droce_shim_cq *ev_cqs;   /* engine-backed CQs */
static struct droce_shim_srq *ev_srqs; /* engine-backed SRQs */
static struct droce_shim_qp *ev_qps;   /* engine-backed QPs */

/* Hand the round's events to their owners' contexts (under ev_lock). */
static void
shim_ev_async(struct shim_ev_round *r)
{
	struct ibv_async_event ev;
	struct droce_shim_srq *srq;
	struct droce_shim_ctx *c;
	struct droce_shim_cq *cq;
	struct droce_shim_qp *qp;
	unsigned int i;

	for (i = 0; i < r->nasync; i++) {
		memset(&ev, 0, sizeof(ev)); /* all of it goes down a pipe: no stale union bytes */
		ev.event_type = (enum ibv_event_type)r->async[i].type; /* values equal */
		switch (r->async[i].type) {
		case DROCE_EVENT_CQ_ERR:
			for (cq = ev_cqs; cq != NULL; cq = cq->reg_next)
				if (cq->ecq == r->async[i].element.cq)
					break;
			if (cq == NULL)
				break;
			ev.element.cq = &cq->cq;
			droce_shim_post_async(cq->cq.context, &ev);
			break;
		case DROCE_EVENT_SRQ_LIMIT_REACHED:
			for (srq = ev_srqs; srq != NULL; srq = srq->reg_next)
				if (srq->esrq == r->async[i].element.srq)
					break;
			if (srq == NULL)
				break;
			ev.element.srq = &srq->srq;
			droce_shim_post_async(srq->srq.context, &ev);
			break;
		case DROCE_EVENT_PORT_ACTIVE:
			ev.element.port_num = r->async[i].element.port_num;
			for (c = ev_ctxs; c != NULL; c = c->reg_next)
				droce_shim_post_async(&c->vctx.context, &ev);
			break;
		default: /* a QP's context is the shim QP (droce_shim_create_qp_ex) */
			/* ...unless it was destroyed since the round read it: only a QP still
			 * tracked (untracked under ev_lock, before it is freed) is touched */
			for (qp = ev_qps; qp != NULL; qp = qp->reg_next)
				if (qp == r->qp_init[i].qp_context)
					break;
			if (qp == NULL)
				break;
			ev.element.qp = &qp->qp;
			droce_shim_post_async(qp->qp.context, &ev);
			break;
		}
	}
}

/* Link or unlink obj (its link field at offset off) in *head, under ev_lock. */
static void
shim_ev_list(void **head, void *obj, size_t off, bool add)
{
	void **pp;

	pthread_mutex_lock(&ev_lock);
	if (add) {
		*(void **)((char *)obj + off) = *head;
		*head = obj;
	} else {
		for (pp = head; *pp != NULL; pp = (void **)((char *)*pp + off))
			if (*pp == obj) {
				*pp = *(void **)((char *)obj + off);
				break;
			}
	}
	pthread_mutex_unlock(&ev_lock);
}

static bool
shim_ev_listed(void *head, const void *obj, size_t off)
{
	for (; head != NULL; head = *(void **)((char *)head + off))
		if (head == obj)
			return true;
	return false;
}

/* Wait (verbs: destroy waits) until the application acknowledged every event it read. */
static void
shim_ev_wait_acks(pthread_mutex_t *m, pthread_cond_t *cond, const uint32_t *acked,
		  const uint32_t *reported)
{
	pthread_mutex_lock(m);
	while (*acked != *reported)
		pthread_cond_wait(cond, m);
	pthread_mutex_unlock(m);
}

void
droce_shim_track_ctx(struct droce_shim_ctx *c, bool add)
{
	shim_ev_list((void **)&ev_ctxs, c, offsetof(struct droce_shim_ctx, reg_next), add);
}

void
droce_shim_track_cq(struct droce_shim_cq *cq, bool add)
{
	shim_ev_list((void **)&ev_cqs, cq, offsetof(struct droce_shim_cq, reg_next), add);
	if (!add)
		shim_ev_wait_acks(&cq->cq.mutex, &cq->cq.cond, &cq->cq.async_events_completed,
				  &cq->async_reported);
}

void
droce_shim_track_srq(struct droce_shim_srq *srq, bool add)
{
	shim_ev_list((void **)&ev_srqs, srq, offsetof(struct droce_shim_srq, reg_next), add);
	if (!add)
		shim_ev_wait_acks(&srq->srq.mutex, &srq->srq.cond, &srq->srq.events_completed,
				  &srq->async_reported);
}

void
droce_shim_track_qp(struct droce_shim_qp *qp, bool add)
{
	shim_ev_list((void **)&ev_qps, qp, offsetof(struct droce_shim_qp, reg_next), add);
	if (!add)
		shim_ev_wait_acks(&qp->qp.mutex, &qp->qp.cond, &qp->qp.events_completed,
				  &qp->async_reported);
}

/* Count an event read for a tracked object (true), or say it must be dropped (false). */
static bool
shim_ev_take(void **head, void *obj, size_t off, pthread_mutex_t *m, uint32_t *reported)
{
	bool ok;

	pthread_mutex_lock(&ev_lock);
	ok = shim_ev_listed(*head, obj, off);
	if (ok) {
		pthread_mutex_lock(m);
		++*reported;
		pthread_mutex_unlock(m);
	}
	pthread_mutex_unlock(&ev_lock);
	return ok;
}

bool
droce_shim_take_cq_event(struct ibv_cq *cq)
{
	struct droce_shim_cq *c = (struct droce_shim_cq *)cq;

	/* the pointer is only compared until it is known to be tracked */
	return shim_ev_take((void **)&ev_cqs, c, offsetof(struct droce_shim_cq, reg_next),
			    &cq->mutex, &c->ev_reported);
}

bool
droce_shim_take_async_event(const struct ibv_async_event *ev)
{
	struct droce_shim_srq *srq;
	struct droce_shim_cq *cq;
	struct droce_shim_qp *qp;

	switch (droce_shim_ev_obj(ev->event_type)) {
	case DROCE_SHIM_EV_CQ:
		cq = (struct droce_shim_cq *)ev->element.cq;
		return shim_ev_take((void **)&ev_cqs, cq, offsetof(struct droce_shim_cq, reg_next),
				    &ev->element.cq->mutex, &cq->async_reported);
	case DROCE_SHIM_EV_SRQ:
		srq = (struct droce_shim_srq *)ev->element.srq;
		return shim_ev_take((void **)&ev_srqs, srq,
				    offsetof(struct droce_shim_srq, reg_next),
				    &ev->element.srq->mutex, &srq->async_reported);
	case DROCE_SHIM_EV_QP:
		qp = (struct droce_shim_qp *)ev->element.qp;
		return shim_ev_take((void **)&ev_qps, qp, offsetof(struct droce_shim_qp, reg_next),
				    &ev->element.qp->mutex, &qp->async_reported);
	default: /* port and device events name no object */
		return true;
	}
}

static void *
shim_ev_thread(void *arg)
{
	static struct shim_ev_round r; /* one watcher: no need for stack space */
	struct timespec nap;
	struct droce_shim_cq *cq, **pp;
	uint32_t kick, seen = 0;
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

		if (droce_shim_call_deferred(shim_ev_round_fn, &r) != 0)
			r.n = r.nasync = 0;

		pthread_mutex_lock(&ev_lock);
		for (i = 0; i < r.n; i++) {
			if (!r.fired[i])
				continue;
			for (pp = &ev_armed; *pp != NULL; pp = &(*pp)->armed_next) {
				if (*pp == r.cq[i]) {
					*pp = r.cq[i]->armed_next;
					r.cq[i]->armed = false;
					droce_shim_cq_notify(&r.cq[i]->cq);
					break;
				}
			}
		}
		shim_ev_async(&r);
		ev_busy = false;
		pthread_cond_broadcast(&ev_cond);
		pthread_mutex_unlock(&ev_lock);

		/* Until the loop did some work (droce_shim_events_kick) or the period passed. */
		nap.tv_sec = 0;
		nap.tv_nsec = ev_armed != NULL ? 20000 : 1000000;
		kick = __atomic_load_n(&ev_kick, __ATOMIC_ACQUIRE);
		__atomic_store_n(&ev_napping, 1, __ATOMIC_SEQ_CST);
		if (kick == seen)
			syscall(SYS_futex, &ev_kick, FUTEX_WAIT_PRIVATE, kick, &nap, NULL, 0);
		__atomic_store_n(&ev_napping, 0, __ATOMIC_RELAXED);
		seen = kick;
	}
	return NULL;
}

/* The loop did work: a CQ armed on a channel may have fired, look now rather than at the
 * next period. Cheap when nothing is armed or the watcher is busy. */
void
droce_shim_events_kick(void)
{
	if (__atomic_load_n(&ev_armed, __ATOMIC_RELAXED) == NULL)
		return;
	__atomic_fetch_add(&ev_kick, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&ev_napping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &ev_kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
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
	r->events = droce_cq_events(r->cq); /* same closure: no event can slip between */
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

	if (!ev_running) /* no watcher thread: nobody could wake the channel */
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
