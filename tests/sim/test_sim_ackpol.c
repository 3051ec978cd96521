/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's ACK policy on the simulated wire (stack/droce_ackpol.h): a held ACK rides with
 * the answer the application posts, ahead of it or after it as the order says, within one
 * transmit batch; a passive responder's ACKs coalesce up to the bound, none waits longer than
 * the delay (measured in simulated time, from the first request it answers arriving); over a
 * lossy, reordering, duplicating link every operation still completes, in order, with its data.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_ext.h"
#include "droce_opcode.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define US	1000ull
#define MS	1000000ull
#define MSG	64u
#define FIFO	4096u
#define NO_TIME UINT64_MAX

/* What the wire saw, per sending node. */
struct obs {
	uint64_t req[2]; /* request frames */
	uint64_t ack[2]; /* ACK frames (not NAKs) */
	/* arrival times at node n of the requests it has not acknowledged yet */
	uint64_t arr[2][FIFO];
	uint32_t arr_h[2], arr_t[2];
	uint64_t max_delay[2];
	/* the current batch: the frames of one engine call (rx_burst, process, or the verbs of
	 * an application step) */
	bool b_req, b_ack;
	uint64_t ack_after_req, req_after_ack; /* frames against the batch's order */
	uint64_t lone_acks;		       /* batches of ACKs only */
};

static struct obs obs;
static struct sim_trace *obs_trace;

static void
batch_end(void)
{
	if (obs.b_ack && !obs.b_req)
		obs.lone_acks++;
	obs.b_req = obs.b_ack = false;
}

static void
obs_hook(void *arg, unsigned int src, unsigned int dst, const uint8_t *f, uint32_t len,
	 unsigned int fate, uint64_t now, uint64_t arrive)
{
	int off = sim_frame_bth_off(f, len);
	const struct droce_opcode_info *op;
	uint8_t opc;

	sim_trace_hook(obs_trace, src, dst, f, len, fate, now, arrive);
	(void)arg;
	if (off < 0 || src > 1)
		return;
	opc = f[off];
	op = droce_opcode_info(opc);
	if (op->flags & DROCE_OPF_REQ) {
		obs.req[src]++;
		if (obs.b_ack)
			obs.req_after_ack++;
		obs.b_req = true;
		if (!(fate & SIM_FATE_LOST) && obs.arr_h[dst] - obs.arr_t[dst] < FIFO)
			obs.arr[dst][obs.arr_h[dst]++ % FIFO] = arrive;
		return;
	}
	/* an ACK: AETH syndrome 0b00x (IBTA 9.3.3.2), right after the 12-byte BTH */
	if (opc != DROCE_OP_RC_ACKNOWLEDGE || (f[off + 12] & 0x60) != 0)
		return;
	obs.ack[src]++;
	if (obs.b_req)
		obs.ack_after_req++;
	obs.b_ack = true;
	/* it answers every request that has arrived: the oldest waited longest */
	if (obs.arr_t[src] != obs.arr_h[src] && obs.arr[src][obs.arr_t[src] % FIFO] <= now &&
	    now - obs.arr[src][obs.arr_t[src] % FIFO] > obs.max_delay[src])
		obs.max_delay[src] = now - obs.arr[src][obs.arr_t[src] % FIFO];
	while (obs.arr_t[src] != obs.arr_h[src] && obs.arr[src][obs.arr_t[src] % FIFO] <= now)
		obs.arr_t[src]++;
}

/* Every engine call of a node ends a batch: the node's calls, wrapped. With app_turn, as the
 * DPDK runtime's inline loop: ACKs may wait from an Rx to the application's next step, and go
 * at the engine call after it (droce_dev_ack_hold). */
static const struct sim_node_ops *ep_ops;

static bool app_turn;

static void
obs_rx(void *ctx, const uint8_t *const *frames, const uint32_t *lens, unsigned int n, uint64_t now)
{
	if (app_turn) /* the runtime's Rx comes after its first droce_dev_process */
		droce_dev_ack_hold(((struct sim_ep *)ctx)->dev, true);
	ep_ops->rx(ctx, frames, lens, n, now);
	batch_end();
}

static unsigned int
obs_process(void *ctx, uint64_t now)
{
	unsigned int n = ep_ops->process(ctx, now);

	batch_end();
	if (app_turn)
		droce_dev_ack_hold(((struct sim_ep *)ctx)->dev, true);
	return n;
}

static uint64_t
obs_deadline(void *ctx)
{
	return ep_ops->deadline(ctx);
}

static void
obs_flush(void *ctx)
{
	ep_ops->flush(ctx);
	batch_end();
}

static const struct sim_node_ops obs_ops = { obs_rx, obs_process, obs_deadline, obs_flush };

/* The application: a SEND ping-pong of `rounds` (node 0 starts, each side answers what it
 * receives at once), or node 0 streaming `stream` WRITEs, 16 at most outstanding. */
struct app {
	struct scen *s;
	unsigned int rounds, stream;
	unsigned int sent[2], done[2], recvd[2];
	uint64_t next_wr[2];
	bool bad; /* a completion out of order or failed */
};

static void
post_send(struct app *a, unsigned int n)
{
	uint32_t off = (a->sent[n] % 64) * MSG;

	if (scen_post(a->s, n, DROCE_WR_SEND, a->sent[n], off, MSG, 0, 0, 0) == 0)
		a->sent[n]++;
	else
		a->bad = true;
}

static void
post_write(struct app *a)
{
	uint32_t off = (a->sent[0] % 4096) * MSG;

	if (scen_post(a->s, 0, DROCE_WR_RDMA_WRITE, a->sent[0], off, MSG, scen_addr(a->s, 1, off),
		      droce_mr_rkey(a->s->mr[1]), 0) == 0)
		a->sent[0]++;
	else
		a->bad = true;
}

static void
app_step(void *arg, uint64_t now)
{
	struct app *a = arg;
	struct droce_wc wc;
	unsigned int n;

	(void)now;
	for (n = 0; n < 2; n++) {
		while (droce_cq_poll(a->s->cq[n], 1, &wc) == 1) {
			if (wc.status != DROCE_WC_SUCCESS)
				a->bad = true;
			if (wc.opcode == DROCE_WC_RECV) {
				a->recvd[n]++;
				scen_post_recv(a->s, n, 0, 32768 + (a->recvd[n] % 64) * MSG, MSG);
				if (a->sent[n] < a->rounds)
					post_send(a, n);
				continue;
			}
			if (wc.wr_id != a->next_wr[n]++)
				a->bad = true; /* completions in posting order */
			a->done[n]++;
		}
	}
	while (a->stream != 0 && a->sent[0] < a->stream && a->sent[0] - a->done[0] < 16)
		post_write(a);
	for (n = 0; n < 2 && app_turn; n++)
		droce_dev_ack_hold(a->s->ep[n].dev, false);
}

static bool
app_done(void *arg)
{
	struct app *a = arg;

	if (a->bad)
		return true;
	if (a->stream != 0)
		return a->done[0] == a->stream;
	return a->done[0] == a->rounds && a->done[1] == a->rounds && a->recvd[0] == a->rounds;
}

/* Both ends hold (hold[n]) with policy pol; the run's outcome, obs filled. */
static enum sim_result
run(uint64_t seed, const struct sim_link_cfg *link, const struct droce_ack_policy *pol,
    const bool hold[2], struct app *a)
{
	struct sim_app sa = { app_step, app_done, a, UINT64_MAX };
	static struct scen s;
	struct sim_qp_params p;
	enum sim_result r;
	unsigned int n, i;

	sim_qp_params_default(&p);
	p.timeout = 10; /* 4 ms: the local ACK timer is not what a held ACK races */
	p.retry_cnt = 7;
	CU_ASSERT_EQUAL_FATAL(scen_init(&s, seed, link, DROCE_QPT_RC, &p, 256), 0);
	memset(&obs, 0, sizeof(obs));
	obs_trace = &s.trace;
	s.net.tx_hook = obs_hook;
	for (n = 0; n < 2; n++) {
		ep_ops = s.net.node[n].ops;
		s.net.node[n].ops = &obs_ops;
		CU_ASSERT_EQUAL(droce_dev_set_ack_policy(s.ep[n].dev, pol), 0);
		droce_dev_ack_hold(s.ep[n].dev, hold[n]);
		for (i = 0; i < 32; i++)
			scen_post_recv(&s, n, 0, 32768 + i * MSG, MSG);
	}
	a->s = &s;
	if (a->stream == 0)
		post_send(a, 0);
	else
		app_step(a, 0);
	s.net.time_limit = 2000 * MS;
	s.net.event_limit = 20000000;
	for (n = 0; n < 2; n++)
		s.net.node[n].ops->process(s.net.node[n].ctx, s.net.now);
	r = sim_net_run(&s.net, &sa);
	batch_end();
	if (a->stream != 0 && r == SIM_DONE && !a->bad &&
	    memcmp(s.mem[0], s.mem[1], (size_t)(a->stream < 4096 ? a->stream : 4096) * MSG) != 0)
		a->bad = true;
	scen_fini(&s);
	return r;
}

/* A ping-pong: each ACK waits for the answer and leaves in its batch, ahead of it (fifo) or
 * after it (requests first); one ACK per request, none left waiting past the delay. */
static void
pingpong(enum droce_ack_order order)
{
	const struct droce_ack_policy pol = { 15 * US, 0, order };
	const bool hold[2] = { true, true };
	struct app a = { .rounds = 200 };
	unsigned int n;

	CU_ASSERT_EQUAL_FATAL(run(1, &scen_clean_link, &pol, hold, &a), SIM_DONE);
	CU_ASSERT_FALSE(a.bad);
	for (n = 0; n < 2; n++) {
		CU_ASSERT_EQUAL(obs.req[n], 200);
		CU_ASSERT_EQUAL(obs.ack[n], 200); /* one answer between two requests */
		CU_ASSERT(obs.max_delay[n] <= pol.delay_ns);
	}
	/* only the last request's ACK has no answer to ride with: it goes on its timer */
	CU_ASSERT(obs.lone_acks <= 1);
	CU_ASSERT(obs.max_delay[0] >= pol.delay_ns); /* that one, at node 0 */
	if (order == DROCE_ACK_ORDER_REQUESTS_FIRST) {
		CU_ASSERT_EQUAL(obs.req_after_ack, 0);
		CU_ASSERT(obs.ack_after_req >= 398);
	} else {
		CU_ASSERT_EQUAL(obs.ack_after_req, 0);
		CU_ASSERT(obs.req_after_ack >= 398);
	}
}

static void
test_pingpong_requests_first(void)
{
	pingpong(DROCE_ACK_ORDER_REQUESTS_FIRST);
}

static void
test_pingpong_fifo(void)
{
	pingpong(DROCE_ACK_ORDER_FIFO);
}

/* The runtime's inline loop: the same, the last ACK going after the application's next step
 * instead of on its timer. */
static void
test_pingpong_app_turn(void)
{
	const struct droce_ack_policy pol = { 15 * US, 0, DROCE_ACK_ORDER_REQUESTS_FIRST };
	const bool hold[2] = { true, true };
	unsigned int k, n;

	app_turn = true;
	for (k = 0; k < 2; k++) {
		struct droce_ack_policy p = pol;
		struct app a = { .rounds = 200 };

		p.order = k == 0 ? DROCE_ACK_ORDER_REQUESTS_FIRST : DROCE_ACK_ORDER_FIFO;
		CU_ASSERT_EQUAL_FATAL(run(1, &scen_clean_link, &p, hold, &a), SIM_DONE);
		CU_ASSERT_FALSE(a.bad);
		for (n = 0; n < 2; n++) {
			CU_ASSERT_EQUAL(obs.ack[n], 200);
			CU_ASSERT_EQUAL(obs.max_delay[n], 0); /* no simulated time passes */
		}
		CU_ASSERT(obs.lone_acks <= 1);
		if (k == 0) {
			CU_ASSERT(obs.req_after_ack == 0 && obs.ack_after_req >= 398);
		} else {
			CU_ASSERT(obs.ack_after_req == 0 && obs.req_after_ack >= 398);
		}
	}
	app_turn = false;
}

/* Without holding (the default: a poll thread drives the engine) every ACK leaves at once. */
static void
test_pingpong_no_hold(void)
{
	const struct droce_ack_policy pol = { 15 * US, 0, DROCE_ACK_ORDER_REQUESTS_FIRST };
	const bool hold[2] = { false, false };
	struct app a = { .rounds = 200 };

	CU_ASSERT_EQUAL_FATAL(run(1, &scen_clean_link, &pol, hold, &a), SIM_DONE);
	CU_ASSERT_FALSE(a.bad);
	CU_ASSERT_EQUAL(obs.ack[1], 200);
	CU_ASSERT_EQUAL(obs.lone_acks, 400); /* each ACK its own batch, before the answer */
	CU_ASSERT_EQUAL(obs.max_delay[0], 0);
	CU_ASSERT_EQUAL(obs.max_delay[1], 0);
}

/* A passive responder: its ACKs coalesce up to the bound, or go when the delay ends. */
static void
test_stream_coalesce(void)
{
	const struct droce_ack_policy pol = { 20 * US, 8, DROCE_ACK_ORDER_REQUESTS_FIRST };
	const struct droce_ack_policy none = { 0, 0, DROCE_ACK_ORDER_REQUESTS_FIRST };
	const bool hold[2] = { false, true };
	struct app a = { .stream = 1024 }, b = { .stream = 1024 };
	uint64_t acks_none;

	CU_ASSERT_EQUAL_FATAL(run(1, &scen_clean_link, &none, hold, &b), SIM_DONE);
	CU_ASSERT_FALSE(b.bad);
	acks_none = obs.ack[1];
	CU_ASSERT_EQUAL(obs.max_delay[1], 0);
	CU_ASSERT_EQUAL_FATAL(run(1, &scen_clean_link, &pol, hold, &a), SIM_DONE);
	CU_ASSERT_FALSE(a.bad);
	CU_ASSERT_EQUAL(obs.req[0], 1024);
	/* at most 8 requests an ACK, so at least 128 ACKs; fewer than without holding */
	CU_ASSERT(obs.ack[1] >= 1024 / 8);
	CU_ASSERT(obs.ack[1] < acks_none);
	CU_ASSERT(obs.max_delay[1] <= pol.delay_ns);
	printf("\n    1024 WRITEs: %" PRIu64 " ACKs held (bound 8, delay 20 us: longest wait "
	       "%" PRIu64 " ns), %" PRIu64 " without holding ",
	       obs.ack[1], obs.max_delay[1], acks_none);
}

/* No bound: a passive responder's ACK goes when its delay ends, never later. */
static void
test_stream_delay(void)
{
	const struct droce_ack_policy pol = { 20 * US, 0, DROCE_ACK_ORDER_FIFO };
	const bool hold[2] = { false, true };
	struct app a = { .stream = 1024 };

	CU_ASSERT_EQUAL_FATAL(run(1, &scen_clean_link, &pol, hold, &a), SIM_DONE);
	CU_ASSERT_FALSE(a.bad);
	CU_ASSERT(obs.max_delay[1] <= pol.delay_ns);
	CU_ASSERT(obs.max_delay[1] >= pol.delay_ns - 2 * US); /* the timer, not the bound */
	CU_ASSERT(obs.ack[1] <= 1024 / 8); /* 16 outstanding, answered together */
	printf("\n    1024 WRITEs, 16 outstanding, delay 20 us: %" PRIu64 " ACKs, longest wait "
	       "%" PRIu64 " ns ",
	       obs.ack[1], obs.max_delay[1]);
}

/* Loss, reordering and duplication: every operation completes, in order, with its data. */
static void
test_lossy_seeds(void)
{
	struct sim_link_cfg link = scen_clean_link;
	struct droce_ack_policy pol = { 20 * US, 4, DROCE_ACK_ORDER_REQUESTS_FIRST };
	const bool hold[2] = { true, true };
	enum sim_result r;
	uint64_t seed;

	link.loss = 0.02;
	link.reorder = 0.01;
	link.reorder_ns = 3000;
	link.dup = 0.01;
	for (seed = 1; seed <= 40; seed++) {
		struct app pp = { .rounds = 60 }, st = { .stream = 256 };

		pol.order = seed & 1 ? DROCE_ACK_ORDER_REQUESTS_FIRST : DROCE_ACK_ORDER_FIFO;
		r = run(seed, &link, &pol, hold, &pp);
		if (r != SIM_DONE || pp.bad)
			printf("\n    ping-pong seed %" PRIu64
			       ": %s%s (replay: this test, seed %" PRIu64 ")\n",
			       seed, sim_result_name(r), pp.bad ? ", a bad completion" : "", seed);
		CU_ASSERT(r == SIM_DONE && !pp.bad);
		r = run(seed, &link, &pol, hold, &st);
		if (r != SIM_DONE || st.bad)
			printf("\n    stream seed %" PRIu64 ": %s%s\n", seed, sim_result_name(r),
			       st.bad ? ", a bad completion or data" : "");
		CU_ASSERT(r == SIM_DONE && !st.bad);
	}
}

DROCE_TEST_MAIN("sim_ackpol", DROCE_TEST(test_pingpong_requests_first),
		DROCE_TEST(test_pingpong_fifo), DROCE_TEST(test_pingpong_app_turn),
		DROCE_TEST(test_pingpong_no_hold), DROCE_TEST(test_stream_coalesce),
		DROCE_TEST(test_stream_delay), DROCE_TEST(test_lossy_seeds))
