/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * REQs (and SIDR_REQs) for a port nobody listens on yet. A client that syncs with its server
 * out of band and then connects (perftest -R does, between its exchange and its test QPs)
 * races the server's rdma_listen: on a kernel stack the listener is usually first, here the
 * REQ can be, when the server's thread has lost its CPU to a poller. The active side waits
 * its Remote CM Response Timeout for an answer (IBTA 12.6.5; rdma_cm asks ~4 s), so the
 * request may wait a little here: delivered if a listener comes, answered as before (REJ
 * reason 8, SIDR_REP "unsupported") when the wait is over. DROCE_RDMACM_LISTEN_WAIT_MS sets
 * the wait (default 1000; 0: answer at once, as the kernel does). All calls: cma_lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"

enum {
	PARK_SLOTS = 32, /* requests waiting at once; more are answered at once */
	PARK_DEFAULT_MS = 1000,
};

struct parked {
	bool used;
	uint16_t ps, port;
	uint64_t deadline_ns;
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE]; /* as received, to give the CM again */
	uint8_t gid[16];
};

static struct parked park[PARK_SLOTS];
static struct parked *replaying; /* the request cma_park_listen hands on now */
static bool reparked;		 /* ...and it came back: still no listener for it */
static bool expiring;		 /* cma_park_timers hands one on: it is answered now */
static long wait_ms = -1;

static long
park_wait_ms(void)
{
	const char *e;
	char *end;

	if (wait_ms >= 0)
		return wait_ms;
	wait_ms = PARK_DEFAULT_MS;
	e = getenv("DROCE_RDMACM_LISTEN_WAIT_MS");
	if (e != NULL && *e != '\0') {
		long v = strtol(e, &end, 10);

		if (*end == '\0' && v >= 0 && v <= 60000)
			wait_ms = v;
		else
			cma_log("DROCE_RDMACM_LISTEN_WAIT_MS=%s is not 0..60000: %d ms", e,
				PARK_DEFAULT_MS);
	}
	return wait_ms;
}

/* The same request: its resends keep the transaction ID and the sender's comm ID. */
static bool
same_req(const struct droce_cm_msg *a, const struct droce_cm_msg *b)
{
	return a->attr == b->attr && a->tid == b->tid && a->local_comm_id == b->local_comm_id;
}

/* A request found no listener: true if it waits (the caller answers nothing now). */
bool
cma_park(const struct droce_cm_msg *m, uint16_t ps, uint16_t port)
{
	struct parked *free_slot = NULL;
	unsigned int i;

	if (replaying != NULL && same_req(&replaying->m, m)) {
		reparked = true; /* a listener came, but not for this one's address */
		return true;
	}
	for (i = 0; i < PARK_SLOTS; i++) {
		if (!park[i].used) {
			if (free_slot == NULL)
				free_slot = &park[i];
		} else if (same_req(&park[i].m, m)) {
			return true; /* a resend of one already waiting */
		}
	}
	if (expiring || park_wait_ms() == 0 || free_slot == NULL || cma_rx_mad() == NULL)
		return false;
	free_slot->used = true;
	free_slot->ps = ps;
	free_slot->port = port;
	free_slot->deadline_ns = cma_now_ns() + (uint64_t)park_wait_ms() * 1000000ull;
	free_slot->m = *m;
	memcpy(free_slot->mad, cma_rx_mad(), DROCE_MAD_SIZE);
	memcpy(free_slot->gid, cma_rx_gid(), 16);
	cma_log("%s for port %u: no id listens on it yet, it waits up to %ld ms",
		droce_cm_attr_name(m->attr), port, park_wait_ms());
	return true;
}

/* An id listens on ps/port now: the requests waiting for it are received again. */
void
cma_park_listen(uint16_t ps, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < PARK_SLOTS; i++) {
		if (!park[i].used || park[i].ps != ps || park[i].port != port)
			continue;
		replaying = &park[i];
		reparked = false;
		cma_cm_rerecv(park[i].mad, park[i].gid);
		if (!reparked)
			park[i].used = false;
		replaying = NULL;
	}
}

/* Requests whose wait is over get the answer they would have had on arrival. */
void
cma_park_timers(uint64_t now)
{
	unsigned int i;

	for (i = 0; i < PARK_SLOTS; i++) {
		if (!park[i].used || now < park[i].deadline_ns)
			continue;
		park[i].used = false;
		cma_log("%s for port %u: no id listened on it within %ld ms",
			droce_cm_attr_name(park[i].m.attr), park[i].port, park_wait_ms());
		expiring = true;
		cma_cm_rerecv(park[i].mad, park[i].gid);
		expiring = false;
	}
}

/* The earliest wait that ends (0: none waits). */
uint64_t
cma_park_next(void)
{
	uint64_t next = 0;
	unsigned int i;

	for (i = 0; i < PARK_SLOTS; i++)
		if (park[i].used && (next == 0 || park[i].deadline_ns < next))
			next = park[i].deadline_ns;
	return next;
}
