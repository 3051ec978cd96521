/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM (stack/cm) between five CM instances in virtual time, over a link that loses,
 * duplicates and reorders MADs. Each seed plays connection attempts between random pairs, each
 * with a plan: accept (at once, or after an MRA's worth of waiting), a listener that comes late
 * (REJ reason 8, retried) or never, the passive consumer's REJ, the active consumer's REJ of
 * the REP, a peer that never answers, a peer that falls silent once connected; then one side,
 * the other or both at once disconnect. A model checks every outcome: both sides agree, no
 * event twice, timeouts fire when IBTA's timers say, every slot free at the end. SIDR requests
 * ride along. A failing seed is printed; CM_SIM_SEED=S replays it alone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm/droce_cm.h"
#include "wire/droce_cm.h"
#include "droce_test.h"

#include "sim_heap.h"
#include "sim_rng.h"

#define MS		  1000000ull
#define NODES		  5
#define SILENT_NODE	  3 /* never answers */
#define FALLS_SILENT_NODE 4 /* silent once its connection is established */
#define CONNS		  6 /* connection attempts per seed */
#define SLOTS		  64
#define TICK_NS		  (1 * MS)
#define END_NS		  (90000 * MS)
#define RESP_TIMEOUT	  16 /* 268 ms */
#define MAX_RETRIES	  15
#define SERVICE_BASE	  0x1060000ull

enum plan_kind {
	PLAN_ACCEPT,	   /* accept, then disconnect */
	PLAN_LATE_LISTEN,  /* listener after a while: REJ 8 and retries, then as ACCEPT */
	PLAN_NO_LISTEN,	   /* never a listener: REJECTED 8 after the retries */
	PLAN_REJECT,	   /* passive consumer refuses (28) */
	PLAN_REJECT_REP,   /* active consumer refuses the REP */
	PLAN_SILENT,	   /* to SILENT_NODE: TIMEOUT */
	PLAN_SILENT_LATER, /* to FALLS_SILENT_NODE: connected, then the DREQ times out */
	PLAN_MAX,
};

enum { DISC_ACTIVE, DISC_PASSIVE, DISC_BOTH };

/* One side of an attempt: what the consumer heard, and when. */
struct side {
	struct droce_cm_conn *conn;
	unsigned int count[DROCE_CM_EV_MAX];
	uint64_t when[DROCE_CM_EV_MAX];
	uint16_t rej_reason;
	bool connected; /* active: RTU sent; passive: REP sent */
	bool released;
};

struct attempt {
	enum plan_kind kind;
	int a, p; /* nodes */
	uint64_t service_id;
	uint64_t start_ns, listen_ns, answer_delay_ns, disc_delay_ns;
	int disc;
	uint64_t accept_at, reject_at, disc_at, est_ns, dreq_ns;
	struct side as, ps;
};

struct sidr {
	int a, p;
	uint64_t start_ns;
	struct droce_cm_conn *conn;
	unsigned int reps, timeouts;
	uint32_t qpn;
};

struct world;

struct node {
	struct world *w;
	int id;
	uint8_t gid[16];
	struct droce_cm cm;
	struct droce_cm_conn conns[SLOTS];
	uint64_t silent_from; /* UINT64_MAX: never */
};

struct world {
	uint64_t seed;
	struct sim_rng rng;
	struct sim_heap heap;
	uint64_t now;
	double loss, dup;
	uint64_t lat_ns, jitter_ns;
	struct node nodes[NODES];
	struct attempt at[CONNS];
	struct sidr sidr;
	uint64_t delivered, lost, duplicated;
	bool trace; /* CM_SIM_TRACE: a line per MAD delivered */
	char fail[256];
};

static void fail(struct world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
fail(struct world *w, const char *fmt, ...)
{
	va_list ap;

	if (w->fail[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(w->fail, sizeof(w->fail), fmt, ap);
	va_end(ap);
}

static bool
silent(const struct node *n, uint64_t now)
{
	return now >= n->silent_from;
}

static void
net_send(void *ctx, struct droce_cm_conn *conn, const uint8_t gid[16],
	 const uint8_t mad[DROCE_MAD_SIZE])
{
	struct node *src = ctx;
	struct world *w = src->w;
	unsigned int copies = 1, i;

	(void)conn;
	if (gid[15] >= NODES) {
		fail(w, "MAD to an unknown GID %u", gid[15]);
		return;
	}
	if (silent(src, w->now))
		return;
	if (sim_rng_chance(&w->rng, w->loss)) {
		w->lost++;
		return;
	}
	if (sim_rng_chance(&w->rng, w->dup)) {
		copies = 2;
		w->duplicated++;
	}
	for (i = 0; i < copies; i++) {
		struct sim_event ev = {
			.t = w->now + w->lat_ns + sim_rng_below(&w->rng, w->jitter_ns + 1),
			.len = DROCE_MAD_SIZE,
			.node = gid[15],
			.pseq = (uint64_t)src->id, /* the sender */
		};

		ev.buf = malloc(DROCE_MAD_SIZE);
		CU_ASSERT_PTR_NOT_NULL_FATAL(ev.buf);
		memcpy(ev.buf, mad, DROCE_MAD_SIZE);
		CU_ASSERT_EQUAL_FATAL(sim_heap_push(&w->heap, &ev), 0);
	}
}

static struct attempt *
attempt_of(struct world *w, uint64_t service_id)
{
	uint64_t i = service_id - SERVICE_BASE;

	return i < CONNS ? &w->at[i] : NULL;
}

static void
note(struct world *w, struct attempt *t, struct side *s, enum droce_cm_event ev,
     const struct droce_cm_msg *m)
{
	if (s->count[ev]++ != 0)
		fail(w, "attempt %ld %s side: event %s twice", (long)(t - w->at),
		     s == &t->as ? "active" : "passive", droce_cm_event_name(ev));
	s->when[ev] = w->now;
	if (ev == DROCE_CM_EV_REJECTED)
		s->rej_reason = m->reason;
}

static int
cm_event(void *ctx, struct droce_cm_conn *c, enum droce_cm_event ev, const struct droce_cm_msg *m)
{
	struct node *n = ctx;
	struct world *w = n->w;
	struct attempt *t;
	struct side *s;

	if (ev == DROCE_CM_EV_SIDR_REQ) {
		struct droce_cm_msg r;

		memset(&r, 0, sizeof(r));
		r.tid = m->tid;
		r.local_comm_id = m->local_comm_id;
		r.service_id = m->service_id;
		r.local_qpn = 0x1234;
		r.local_qkey = 0x11;
		CU_ASSERT_EQUAL(droce_cm_sidr_reply(&n->cm, c->peer_gid, &r), 0);
		return 0;
	}
	if (ev == DROCE_CM_EV_SIDR_REP || ev == DROCE_CM_EV_SIDR_TIMEOUT) {
		if (c->user != &w->sidr) {
			fail(w, "SIDR event for a connection not the SIDR request's");
			return 0;
		}
		if (ev == DROCE_CM_EV_SIDR_REP) {
			w->sidr.reps++;
			w->sidr.qpn = m->local_qpn;
		} else {
			w->sidr.timeouts++;
		}
		droce_cm_release(&n->cm, c, w->now);
		return 0;
	}
	if (ev == DROCE_CM_EV_REQ) {
		t = attempt_of(w, m->service_id);
		if (t == NULL || t->p != n->id) {
			fail(w, "REQ for service %llx at node %d",
			     (unsigned long long)m->service_id, n->id);
			return -1;
		}
		/* a listener that is not there (yet): reason 8, as rdma_cm answers */
		if (t->kind == PLAN_NO_LISTEN || w->now < t->listen_ns)
			return DROCE_CM_REJ_INVALID_SERVICE_ID;
		if (t->ps.conn != NULL) {
			fail(w, "attempt %ld: a second connection for one REQ", (long)(t - w->at));
			return -1;
		}
		t->ps.conn = c;
		c->user = t;
		note(w, t, &t->ps, ev, m);
		if (t->kind == PLAN_REJECT)
			t->reject_at = w->now + t->answer_delay_ns;
		else
			t->accept_at = w->now + t->answer_delay_ns;
		return 0;
	}
	t = c->user;
	if (t == NULL || t < w->at || t >= w->at + CONNS) {
		fail(w, "event %s for a connection of no attempt", droce_cm_event_name(ev));
		return 0;
	}
	s = c == t->as.conn ? &t->as : &t->ps;
	note(w, t, s, ev, m);
	switch (ev) {
	case DROCE_CM_EV_REP:
		if (t->kind == PLAN_REJECT_REP) {
			CU_ASSERT_EQUAL(droce_cm_reject(&n->cm, c, DROCE_CM_REJ_CONSUMER_DEFINED,
							NULL, 0, NULL, 0, w->now),
					0);
			droce_cm_release(&n->cm, c, w->now);
			s->released = true;
			break;
		}
		CU_ASSERT_EQUAL(droce_cm_rtu(&n->cm, c, NULL, 0, w->now), 0);
		s->connected = true;
		t->est_ns = w->now;
		t->disc_at = w->now + t->disc_delay_ns;
		if (t->kind == PLAN_SILENT_LATER)
			w->nodes[t->p].silent_from = w->now;
		break;
	case DROCE_CM_EV_ESTABLISHED:
		break;
	default:
		/* an end: the consumer lets go (rdma_destroy_id) */
		droce_cm_release(&n->cm, c, w->now);
		s->released = true;
		break;
	}
	return 0;
}

static const struct droce_cm_ops sim_ops = { .send = net_send, .event = cm_event };

static void
start_attempt(struct world *w, struct attempt *t)
{
	struct node *a = &w->nodes[t->a];
	struct droce_cm_msg req;

	memset(&req, 0, sizeof(req));
	req.service_id = t->service_id;
	req.local_qpn = 0x100 + (uint32_t)(t - w->at);
	req.starting_psn = 1;
	req.remote_cm_response_timeout = RESP_TIMEOUT;
	req.local_cm_response_timeout = RESP_TIMEOUT;
	req.max_cm_retries = MAX_RETRIES;
	req.path_mtu = 3;
	req.pkey = 0xFFFF;
	CU_ASSERT_EQUAL(droce_cm_connect(&a->cm, w->nodes[t->p].gid, &req, t, w->now, &t->as.conn),
			0);
}

static void
disconnect(struct world *w, struct side *s, int node)
{
	if (s->conn == NULL || s->released)
		return;
	CU_ASSERT_EQUAL(droce_cm_disconnect(&w->nodes[node].cm, s->conn, NULL, 0, w->now), 0);
}

/* The consumers' timed actions. */
static void
actions(struct world *w)
{
	unsigned int i;

	for (i = 0; i < CONNS; i++) {
		struct attempt *t = &w->at[i];

		if (t->start_ns <= w->now && t->as.conn == NULL)
			start_attempt(w, t);
		if (t->accept_at != 0 && w->now >= t->accept_at) {
			struct droce_cm_msg rep;

			t->accept_at = 0;
			if (t->ps.released)
				continue; /* the active side gave up first */
			memset(&rep, 0, sizeof(rep));
			rep.local_qpn = 0x200 + i;
			rep.starting_psn = 2;
			if (droce_cm_accept(&w->nodes[t->p].cm, t->ps.conn, &rep, w->now) == 0)
				t->ps.connected = true;
		}
		if (t->reject_at != 0 && w->now >= t->reject_at) {
			t->reject_at = 0;
			if (!t->ps.released) {
				droce_cm_reject(&w->nodes[t->p].cm, t->ps.conn,
						DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0,
						w->now);
				t->ps.released = true;
				droce_cm_release(&w->nodes[t->p].cm, t->ps.conn, w->now);
			}
		}
		if (t->disc_at != 0 && w->now >= t->disc_at) {
			t->disc_at = 0;
			t->dreq_ns = w->now;
			if (t->disc != DISC_PASSIVE || t->kind == PLAN_SILENT_LATER)
				disconnect(w, &t->as, t->a);
			if ((t->disc != DISC_ACTIVE && t->kind != PLAN_SILENT_LATER) &&
			    t->ps.connected)
				disconnect(w, &t->ps, t->p);
		}
	}
	if (w->sidr.start_ns <= w->now && w->sidr.conn == NULL) {
		struct droce_cm_msg r;

		memset(&r, 0, sizeof(r));
		r.service_id = 0x1110000ull | 7;
		r.pkey = 0xFFFF;
		CU_ASSERT_EQUAL(droce_cm_sidr_req(&w->nodes[w->sidr.a].cm, w->nodes[w->sidr.p].gid,
						  &r, &w->sidr, w->now, &w->sidr.conn),
				0);
	}
}

static uint64_t
after(uint64_t t, uint64_t now, uint64_t best)
{
	return t != 0 && t >= now && t < best ? t : best;
}

/* When the consumers next act (UINT64_MAX: never). */
static uint64_t
next_action(const struct world *w)
{
	uint64_t best = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < CONNS; i++) {
		const struct attempt *t = &w->at[i];

		if (t->as.conn == NULL && t->start_ns < best)
			best = t->start_ns > w->now ? t->start_ns : w->now;
		best = after(t->accept_at, w->now, best);
		best = after(t->reject_at, w->now, best);
		best = after(t->disc_at, w->now, best);
	}
	if (w->sidr.conn == NULL && w->sidr.start_ns < best)
		best = w->sidr.start_ns > w->now ? w->sidr.start_ns : w->now;
	return best;
}

static void
plan(struct world *w)
{
	unsigned int i;

	for (i = 0; i < CONNS; i++) {
		struct attempt *t = &w->at[i];

		memset(t, 0, sizeof(*t));
		t->kind = (enum plan_kind)sim_rng_below(&w->rng, PLAN_MAX);
		t->a = (int)sim_rng_below(&w->rng, 3);
		t->p = (t->a + 1 + (int)sim_rng_below(&w->rng, 2)) % 3;
		if (t->kind == PLAN_SILENT)
			t->p = SILENT_NODE;
		if (t->kind == PLAN_SILENT_LATER) {
			/* one connection per seed to the node that falls silent */
			t->kind = w->nodes[FALLS_SILENT_NODE].silent_from == UINT64_MAX - 1 ?
					  PLAN_ACCEPT :
					  PLAN_SILENT_LATER;
			if (t->kind == PLAN_SILENT_LATER) {
				t->p = FALLS_SILENT_NODE;
				w->nodes[FALLS_SILENT_NODE].silent_from = UINT64_MAX - 1;
			}
		}
		t->service_id = SERVICE_BASE + i;
		t->start_ns = sim_rng_below(&w->rng, 200) * MS;
		t->listen_ns = t->kind == PLAN_LATE_LISTEN ?
				       t->start_ns + (100 + sim_rng_below(&w->rng, 1500)) * MS :
				       0;
		/* past the REQ's response timeout now and then: the passive side MRAs */
		t->answer_delay_ns = sim_rng_chance(&w->rng, 0.3) ?
					     (300 + sim_rng_below(&w->rng, 2000)) * MS :
					     sim_rng_below(&w->rng, 20) * MS;
		t->disc_delay_ns = sim_rng_below(&w->rng, 500) * MS;
		t->disc = (int)sim_rng_below(&w->rng, 3);
	}
	w->sidr.a = 0;
	w->sidr.p = sim_rng_chance(&w->rng, 0.2) ? SILENT_NODE : 1;
	w->sidr.start_ns = sim_rng_below(&w->rng, 100) * MS;
}

/* Over all seeds: how often the paths worth testing were taken. */
static struct {
	uint64_t plans[PLAN_MAX];
	uint64_t mra, rej8, dreq_crossed, dup_req, seeds_lossy;
} paths;

static void
count_paths(const struct node *d, const uint8_t *mad)
{
	struct droce_cm_msg m;
	unsigned int i;

	if (droce_cm_msg_parse(mad, DROCE_MAD_SIZE, &m) != 0)
		return;
	if (m.attr == DROCE_CM_ATTR_MRA)
		paths.mra++;
	if (m.attr == DROCE_CM_ATTR_REJ && m.reason == DROCE_CM_REJ_INVALID_SERVICE_ID)
		paths.rej8++;
	for (i = 0; i < SLOTS; i++) {
		const struct droce_cm_conn *c = &d->conns[i];

		if (c->state == DROCE_CM_IDLE)
			continue;
		/* a DREQ meets ours: both sides disconnect at once */
		if (m.attr == DROCE_CM_ATTR_DREQ && c->local_comm_id == m.remote_comm_id &&
		    c->state == DROCE_CM_DREQ_SENT)
			paths.dreq_crossed++;
		/* a REQ for a connection the passive side has: a duplicate */
		if (m.attr == DROCE_CM_ATTR_REQ && !c->active &&
		    c->remote_comm_id == m.local_comm_id)
			paths.dup_req++;
	}
}

static void
deliver(struct world *w, struct sim_event *ev)
{
	struct node *d = &w->nodes[ev->node];

	if (w->trace)
		printf("%llu.%06llu ms %d->%d %s%s\n", (unsigned long long)(w->now / MS),
		       (unsigned long long)(w->now % MS), (int)ev->pseq, ev->node,
		       droce_cm_attr_name((uint16_t)(ev->buf[16] << 8 | ev->buf[17])),
		       silent(d, w->now) ? " (silent)" : "");
	if (!silent(d, w->now)) {
		count_paths(d, ev->buf);
		w->delivered++;
		droce_cm_recv(&d->cm, ev->buf, ev->len, w->nodes[ev->pseq].gid, w->now);
	}
	free(ev->buf);
}

/* Both sides agree; events and their times as the plan and IBTA's timers say. */
static void
check_attempt(struct world *w, struct attempt *t)
{
	const uint64_t tmo = droce_cm_time_ns(RESP_TIMEOUT);
	const uint64_t give_up = (MAX_RETRIES + 1) * tmo;
	/* each wait starts at the tick that saw the previous one end */
	const uint64_t late = (MAX_RETRIES + 1) * TICK_NS;
	long i = (long)(t - w->at);
	struct side *a = &t->as, *p = &t->ps;
	unsigned int a_end = a->count[DROCE_CM_EV_REJECTED] + a->count[DROCE_CM_EV_TIMEOUT] +
			     a->count[DROCE_CM_EV_DISCONNECTED];
	unsigned int p_end = p->count[DROCE_CM_EV_REJECTED] + p->count[DROCE_CM_EV_TIMEOUT] +
			     p->count[DROCE_CM_EV_DISCONNECTED];

	if (a->conn == NULL) {
		fail(w, "attempt %ld: never started", i);
		return;
	}
	if (a_end != 1 && !(t->kind == PLAN_REJECT_REP && a_end == 0))
		fail(w, "attempt %ld (plan %d): the active side ended %u times", i, t->kind, a_end);
	switch (t->kind) {
	case PLAN_ACCEPT:
	case PLAN_LATE_LISTEN:
	case PLAN_SILENT_LATER:
		if (!a->connected || a->count[DROCE_CM_EV_DISCONNECTED] != 1)
			fail(w, "attempt %ld (plan %d): active connected %d, disconnected %u", i,
			     t->kind, a->connected, a->count[DROCE_CM_EV_DISCONNECTED]);
		if (t->kind == PLAN_SILENT_LATER) {
			/* IBTA 12.9.7: the DREQ's retries, then TimeWait */
			uint64_t due = t->dreq_ns + give_up;

			if (a->when[DROCE_CM_EV_DISCONNECTED] < due ||
			    a->when[DROCE_CM_EV_DISCONNECTED] > due + late)
				fail(w, "attempt %ld: DREQ gave up at %llu, due %llu", i,
				     (unsigned long long)a->when[DROCE_CM_EV_DISCONNECTED],
				     (unsigned long long)due);
			break;
		}
		if (p->count[DROCE_CM_EV_REQ] != 1 || !p->connected ||
		    p->count[DROCE_CM_EV_DISCONNECTED] != 1 || p_end != 1)
			fail(w,
			     "attempt %ld (plan %d): passive REQ %u connected %d disconnected %u "
			     "ends %u",
			     i, t->kind, p->count[DROCE_CM_EV_REQ], p->connected,
			     p->count[DROCE_CM_EV_DISCONNECTED], p_end);
		/* answered (a DREP, or the peer's DREQ) long before the DREQ's retries run out:
		 * 16 tries lost at 20 % loss each way would take one in 10^7 */
		if (a->when[DROCE_CM_EV_DISCONNECTED] >= t->dreq_ns + MAX_RETRIES * tmo ||
		    p->when[DROCE_CM_EV_DISCONNECTED] >= t->dreq_ns + MAX_RETRIES * tmo)
			fail(w, "attempt %ld: disconnected at %llu / %llu, DREQ at %llu", i,
			     (unsigned long long)a->when[DROCE_CM_EV_DISCONNECTED],
			     (unsigned long long)p->when[DROCE_CM_EV_DISCONNECTED],
			     (unsigned long long)t->dreq_ns);
		if (t->kind == PLAN_LATE_LISTEN && p->when[DROCE_CM_EV_REQ] < t->listen_ns)
			fail(w, "attempt %ld: REQ reported before the listener", i);
		break;
	case PLAN_NO_LISTEN: {
		/* 8 resends 250 ms apart after reason 8 (each REJ after a round trip) */
		uint64_t least = 8 * 250 * MS;

		if (a->count[DROCE_CM_EV_REJECTED] != 1 || a->rej_reason != 8 ||
		    p->count[DROCE_CM_EV_REQ] != 0)
			fail(w, "attempt %ld (no listener): rejected %u reason %u, passive REQ %u",
			     i, a->count[DROCE_CM_EV_REJECTED], a->rej_reason,
			     p->count[DROCE_CM_EV_REQ]);
		else if (a->when[DROCE_CM_EV_REJECTED] - t->start_ns < least ||
			 a->when[DROCE_CM_EV_REJECTED] - t->start_ns > 9 * (give_up + 250 * MS))
			fail(w, "attempt %ld (no listener): REJECTED after %llu ns", i,
			     (unsigned long long)(a->when[DROCE_CM_EV_REJECTED] - t->start_ns));
		break;
	}
	case PLAN_REJECT:
		if (a->count[DROCE_CM_EV_REJECTED] != 1 || a->rej_reason != 28 ||
		    p->count[DROCE_CM_EV_REQ] != 1 || p_end != 0 || a->connected)
			fail(w,
			     "attempt %ld (passive rejects): active rejected %u reason %u, "
			     "passive REQ %u ends %u",
			     i, a->count[DROCE_CM_EV_REJECTED], a->rej_reason,
			     p->count[DROCE_CM_EV_REQ], p_end);
		break;
	case PLAN_REJECT_REP:
		if (a->count[DROCE_CM_EV_REP] != 1 || a_end != 0 || a->connected ||
		    p->count[DROCE_CM_EV_REJECTED] != 1 || p->rej_reason != 28 || p_end != 1)
			fail(w,
			     "attempt %ld (active rejects REP): REP %u ends %u, passive rejected "
			     "%u reason %u ends %u",
			     i, a->count[DROCE_CM_EV_REP], a_end, p->count[DROCE_CM_EV_REJECTED],
			     p->rej_reason, p_end);
		break;
	case PLAN_SILENT: {
		uint64_t due = t->start_ns + give_up;

		if (a->count[DROCE_CM_EV_TIMEOUT] != 1 || a->when[DROCE_CM_EV_TIMEOUT] < due ||
		    a->when[DROCE_CM_EV_TIMEOUT] > due + late)
			fail(w, "attempt %ld (silent peer): TIMEOUT %u at %llu, due %llu", i,
			     a->count[DROCE_CM_EV_TIMEOUT],
			     (unsigned long long)a->when[DROCE_CM_EV_TIMEOUT],
			     (unsigned long long)due);
		break;
	}
	default:
		break;
	}
}

static void
check_end(struct world *w)
{
	unsigned int i, n;

	for (i = 0; i < CONNS; i++)
		check_attempt(w, &w->at[i]);
	if (w->sidr.p == SILENT_NODE ?
		    w->sidr.timeouts != 1 || w->sidr.reps != 0 :
		    w->sidr.reps != 1 || w->sidr.timeouts != 0 || w->sidr.qpn != 0x1234)
		fail(w, "SIDR to node %d: %u replies (QPN %x), %u timeouts", w->sidr.p,
		     w->sidr.reps, w->sidr.qpn, w->sidr.timeouts);
	/* every slot back: released, TimeWait over */
	for (n = 0; n < NODES; n++)
		for (i = 0; i < SLOTS; i++)
			if (w->nodes[n].conns[i].state != DROCE_CM_IDLE)
				fail(w, "node %u slot %u still %s at the end", n, i,
				     droce_cm_state_name(w->nodes[n].conns[i].state));
}

/* One seed; returns true if the model agreed. */
static bool
run_seed(uint64_t seed, bool verbose)
{
	static struct world w; /* large: not on the stack */
	struct droce_cm_params prm;
	struct sim_event ev;
	unsigned int i;
	uint64_t steps = 0;

	memset(&w, 0, sizeof(w));
	w.seed = seed;
	w.trace = verbose && getenv("CM_SIM_TRACE") != NULL;
	sim_rng_seed(&w.rng, seed, 17);
	sim_heap_init(&w.heap);
	w.loss = (double)sim_rng_below(&w.rng, 21) / 100.0; /* 0..20 % */
	w.dup = (double)sim_rng_below(&w.rng, 6) / 100.0;
	w.lat_ns = (10 + sim_rng_below(&w.rng, 1000)) * 1000;
	w.jitter_ns = sim_rng_below(&w.rng, 3) * MS; /* reorders */
	droce_cm_params_default(&prm);
	/* MRAs ask 4.3 s (not rdma_cm's 69 s): a REQ resent after that wait still finds the
	 * passive side's REJ in its TimeWait (5 s), so the model need not allow a second REQ */
	prm.mra_service_timeout = 20;
	for (i = 0; i < NODES; i++) {
		struct node *n = &w.nodes[i];

		n->w = &w;
		n->id = (int)i;
		n->gid[10] = 0xFF;
		n->gid[11] = 0xFF;
		n->gid[15] = (uint8_t)i;
		n->silent_from = i == SILENT_NODE ? 0 : UINT64_MAX;
		CU_ASSERT_EQUAL_FATAL(
			droce_cm_init(&n->cm, n->conns, SLOTS, &sim_ops, n, &prm, seed * 1000 + i),
			0);
	}
	plan(&w);
	for (i = 0; i < CONNS; i++)
		paths.plans[w.at[i].kind]++;
	if (w.loss > 0)
		paths.seeds_lossy++;
	if (w.nodes[FALLS_SILENT_NODE].silent_from == UINT64_MAX - 1)
		w.nodes[FALLS_SILENT_NODE].silent_from = UINT64_MAX;
	/* Virtual time on a 1 ms grid (the agent sleeps until the CM's next deadline, rounded up to
	 * whole ms), skipping where nothing is due. */
	for (w.now = 0; w.now <= END_NS && w.fail[0] == '\0';) {
		uint64_t next = UINT64_MAX, d;

		actions(&w);
		/* the MADs due by now, each at its own time */
		while (sim_heap_min_time(&w.heap) <= w.now && sim_heap_pop(&w.heap, &ev)) {
			uint64_t tick_now = w.now;

			w.now = ev.t;
			deliver(&w, &ev);
			w.now = tick_now;
			if (++steps > 10000000)
				fail(&w, "no end to the MADs");
		}
		for (i = 0; i < NODES; i++) {
			d = droce_cm_tick(&w.nodes[i].cm, w.now);
			if (d != 0 && d < next)
				next = d;
		}
		d = next_action(&w);
		if (d < next)
			next = d;
		if (sim_heap_min_time(&w.heap) < next)
			next = sim_heap_min_time(&w.heap);
		if (next == UINT64_MAX)
			break; /* nothing left to happen */
		next = next <= w.now ? w.now + TICK_NS : (next + TICK_NS - 1) / TICK_NS * TICK_NS;
		w.now = next;
	}
	while (sim_heap_pop(&w.heap, &ev))
		free(ev.buf);
	sim_heap_fini(&w.heap);
	if (w.fail[0] == '\0')
		check_end(&w);
	if (verbose || w.fail[0] != '\0')
		printf("cm seed %llu: loss %.2f dup %.2f lat %llu us jitter %llu ms: MADs %llu "
		       "delivered, %llu lost, %llu duplicated: %s\n",
		       (unsigned long long)seed, w.loss, w.dup,
		       (unsigned long long)(w.lat_ns / 1000),
		       (unsigned long long)(w.jitter_ns / MS), (unsigned long long)w.delivered,
		       (unsigned long long)w.lost, (unsigned long long)w.duplicated,
		       w.fail[0] != '\0' ? w.fail : "OK");
	return w.fail[0] == '\0';
}

static void
test_cm_seeds(void)
{
	const char *one = getenv("CM_SIM_SEED");
	unsigned int bad = 0;
	uint64_t s;

	if (one != NULL) {
		CU_ASSERT_TRUE(run_seed(strtoull(one, NULL, 0), true));
		return;
	}
	for (s = 1; s <= 300; s++)
		if (!run_seed(s, false))
			bad++;
	printf("cm: 300 seeds, %u mismatched; plans accept %llu late-listener %llu no-listener "
	       "%llu passive-REJ %llu active-REJ %llu silent %llu silent-later %llu; MRAs %llu, "
	       "REJ 8 %llu, crossed DREQs %llu, duplicate REQs %llu, lossy seeds %llu\n",
	       bad, (unsigned long long)paths.plans[PLAN_ACCEPT],
	       (unsigned long long)paths.plans[PLAN_LATE_LISTEN],
	       (unsigned long long)paths.plans[PLAN_NO_LISTEN],
	       (unsigned long long)paths.plans[PLAN_REJECT],
	       (unsigned long long)paths.plans[PLAN_REJECT_REP],
	       (unsigned long long)paths.plans[PLAN_SILENT],
	       (unsigned long long)paths.plans[PLAN_SILENT_LATER], (unsigned long long)paths.mra,
	       (unsigned long long)paths.rej8, (unsigned long long)paths.dreq_crossed,
	       (unsigned long long)paths.dup_req, (unsigned long long)paths.seeds_lossy);
	CU_ASSERT_EQUAL(bad, 0);
	/* the seeds took every path the test is for */
	for (s = 0; s < PLAN_MAX; s++)
		CU_ASSERT(paths.plans[s] >= 50);
	CU_ASSERT(paths.mra >= 50);
	CU_ASSERT(paths.rej8 >= 100);
	CU_ASSERT(paths.dreq_crossed >= 20);
	CU_ASSERT(paths.dup_req >= 100);
}

int
main(void)
{
	static const struct droce_test_case cases[] = {
		DROCE_TEST(test_cm_seeds),
	};

	return droce_test_run("sim_cm", cases, sizeof(cases) / sizeof(cases[0]));
}
