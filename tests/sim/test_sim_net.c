/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The simulator core on its own (no engine): PRNG determinism, the event heap order, and each
 * link impairment measured on frames sent between two recording nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_pkt.h"
#include "droce_test.h"

#include "sim_net.h"
#include "sim_rng.h"

struct rec_node {
	uint64_t frames;
	uint64_t icrc_bad;
	uint64_t ce;
	uint64_t last_t;
	uint64_t first_t;
	uint32_t last_psn;
	uint64_t out_of_order;
};

static void
rec_rx(void *ctx, const uint8_t *const *frames, const uint32_t *lens, unsigned int n, uint64_t now)
{
	struct rec_node *r = ctx;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct droce_pkt p;
		enum droce_drop d = droce_parse(frames[i], lens[i], &p, 0);

		if (r->frames == 0)
			r->first_t = now;
		r->frames++;
		r->last_t = now;
		if (d == DROCE_DROP_ICRC) {
			r->icrc_bad++;
			continue;
		}
		CU_ASSERT_EQUAL(d, DROCE_DROP_NONE);
		if ((p.tclass & 3) == 3)
			r->ce++;
		if (r->frames > 1 && p.psn < r->last_psn)
			r->out_of_order++;
		r->last_psn = p.psn;
	}
}

static unsigned int
rec_process(void *ctx, uint64_t now)
{
	(void)ctx;
	(void)now;
	return 0;
}

static uint64_t
rec_deadline(void *ctx)
{
	(void)ctx;
	return UINT64_MAX;
}

static const struct sim_node_ops rec_ops = { rec_rx, rec_process, rec_deadline, NULL };

static bool
never(void *arg)
{
	(void)arg;
	return false;
}

static void
nop_step(void *arg, uint64_t now)
{
	(void)arg;
	(void)now;
}

static const uint8_t mac0[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t mac1[6] = { 2, 0, 0, 0, 0, 2 };

/* A valid RC SEND_ONLY frame to mac1 carrying psn, ECT(0), pay bytes. */
static uint8_t *
make_frame(uint32_t psn, uint32_t pay, uint32_t *len)
{
	static uint8_t payload[4096];
	struct droce_pkt p;
	uint8_t *buf = malloc(pay + DROCE_HDR_ROOM_MAX);
	int n;

	memset(&p, 0, sizeof(p));
	memcpy(p.dmac, mac1, 6);
	memcpy(p.smac, mac0, 6);
	p.ip_ver = 4;
	p.tclass = 2;
	p.hop_limit = 64;
	droce_gid_from_v4(p.sgid, 0x0A000001);
	droce_gid_from_v4(p.dgid, 0x0A000002);
	p.udp_sport = 0xC000;
	p.opcode = DROCE_OP_RC_SEND_ONLY;
	p.pkey = 0xFFFF;
	p.dqpn = 0x12;
	p.psn = psn;
	n = droce_build(buf, pay + DROCE_HDR_ROOM_MAX, &p, payload, pay);
	CU_ASSERT_FATAL(n > 0);
	*len = (uint32_t)n;
	return buf;
}

/* Send `count` frames from node 0 to node 1 spaced `gap` ns apart over cfg; run to idle. */
static void
blast(const struct sim_link_cfg *cfg, unsigned int count, uint32_t pay, uint64_t gap, uint64_t seed,
      struct rec_node *r1, struct sim_port_stats *st)
{
	struct sim_net net;
	struct rec_node r0;
	struct sim_app app = { nop_step, never, NULL, UINT64_MAX };
	unsigned int i;
	uint32_t len;

	memset(r1, 0, sizeof(*r1));
	memset(&r0, 0, sizeof(r0));
	sim_net_init(&net, seed);
	CU_ASSERT_EQUAL(sim_net_add_node(&net, mac0, &rec_ops, &r0, NULL, seed), 0);
	CU_ASSERT_EQUAL(sim_net_add_node(&net, mac1, &rec_ops, r1, cfg, seed), 1);
	for (i = 0; i < count; i++) {
		uint8_t *f = make_frame(i, pay, &len);

		net.now = (uint64_t)i * gap;
		sim_net_send(&net, 0, f, len);
	}
	CU_ASSERT_EQUAL(sim_net_run(&net, &app), SIM_IDLE);
	*st = net.node[1].down.st;
	sim_net_fini(&net);
}

static void
test_rng_deterministic(void)
{
	struct sim_rng a, b, c;
	int i, same = 1, diff = 0;

	sim_rng_seed(&a, 42, 1);
	sim_rng_seed(&b, 42, 1);
	sim_rng_seed(&c, 42, 2);
	for (i = 0; i < 1000; i++) {
		uint64_t x = sim_rng_next(&a), y = sim_rng_next(&b), z = sim_rng_next(&c);

		same &= x == y;
		diff += x != z;
	}
	CU_ASSERT(same);
	CU_ASSERT(diff > 990);
}

static void
test_heap_order(void)
{
	struct sim_heap h;
	struct sim_event ev;
	struct sim_rng r;
	uint64_t last_t = 0, last_seq = 0;
	int i;

	sim_heap_init(&h);
	sim_rng_seed(&r, 7, 0);
	for (i = 0; i < 5000; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.t = sim_rng_below(&r, 100); /* many ties */
		CU_ASSERT_EQUAL(sim_heap_push(&h, &ev), 0);
	}
	for (i = 0; sim_heap_pop(&h, &ev); i++) {
		CU_ASSERT(ev.t > last_t || (ev.t == last_t && (i == 0 || ev.seq > last_seq)));
		last_t = ev.t;
		last_seq = ev.seq;
	}
	CU_ASSERT_EQUAL(i, 5000);
	sim_heap_fini(&h);
}

static void
test_clean_link_rate_and_delay(void)
{
	struct sim_link_cfg c = { .rate_bps = 10000000000ull, .delay_ns = 5000 };
	struct sim_port_stats st;
	struct rec_node r;
	uint32_t len;
	uint8_t *f = make_frame(0, 1000, &len);

	free(f);
	/* 100 back-to-back frames: the last leaves after 100 serialisation times. */
	blast(&c, 100, 1000, 0, 1, &r, &st);
	CU_ASSERT_EQUAL(r.frames, 100);
	CU_ASSERT_EQUAL(r.icrc_bad, 0);
	CU_ASSERT_EQUAL(r.out_of_order, 0);
	CU_ASSERT_EQUAL(r.first_t, 5000 + (len * 8 * 1000000000ull + c.rate_bps - 1) / c.rate_bps);
	CU_ASSERT(r.last_t >= 5000 + 100ull * len * 8 / 10);
	CU_ASSERT(r.last_t <= 5000 + 100ull * len * 8 / 10 + 100);
}

static void
test_loss_rate(void)
{
	struct sim_link_cfg c = { .delay_ns = 1000, .loss = 0.1 };
	struct sim_port_stats st;
	struct rec_node r;

	blast(&c, 20000, 64, 100, 3, &r, &st);
	CU_ASSERT_EQUAL(r.frames + st.lost, 20000);
	CU_ASSERT(st.lost > 1800 && st.lost < 2200);
}

static void
test_burst_loss(void)
{
	struct sim_link_cfg c = { .delay_ns = 1000 };
	struct sim_port_stats st;
	struct rec_node r;

	sim_link_burst_loss(&c, 0.05, 8);
	blast(&c, 40000, 64, 100, 4, &r, &st);
	CU_ASSERT_EQUAL(r.frames + st.burst_lost, 40000);
	CU_ASSERT(st.burst_lost > 1400 && st.burst_lost < 2600);
}

static void
test_reorder_dup(void)
{
	struct sim_link_cfg c = {
		.delay_ns = 1000, .reorder = 0.05, .reorder_ns = 5000, .dup = 0.05
	};
	struct sim_port_stats st;
	struct rec_node r;

	blast(&c, 4000, 64, 100, 5, &r, &st);
	CU_ASSERT_EQUAL(r.frames, 4000 + st.duplicated);
	CU_ASSERT(st.duplicated > 120 && st.duplicated < 280);
	CU_ASSERT(st.reordered > 120 && st.reordered < 280);
	CU_ASSERT(r.out_of_order > 0);
}

static void
test_corruption_caught_by_icrc(void)
{
	struct sim_link_cfg c = { .delay_ns = 1000, .corrupt = 0.2 };
	struct sim_port_stats st;
	struct rec_node r;

	blast(&c, 5000, 200, 100, 6, &r, &st);
	CU_ASSERT(st.corrupted > 800);
	/* Every corrupted frame fails the ICRC (bit flips under a CRC-32 never pass). */
	CU_ASSERT_EQUAL(r.icrc_bad, st.corrupted);
}

static void
test_red_marks_ce(void)
{
	struct sim_link_cfg c = { .rate_bps = 1000000000ull,
				  .delay_ns = 1000,
				  .red_kmin = 2000,
				  .red_kmax = 20000,
				  .red_pmax = 0.5 };
	struct sim_port_stats st;
	struct rec_node r;

	/* Offered at twice the rate: the queue grows past Kmax. */
	blast(&c, 1000, 1000, 4000, 8, &r, &st);
	CU_ASSERT(st.ce_marked > 100);
	CU_ASSERT_EQUAL(r.ce, st.ce_marked); /* marked frames still pass the IP checksum */
	CU_ASSERT_EQUAL(r.icrc_bad, 0);	     /* ECN bits are masked from the ICRC */
	/* Below Kmin nothing is marked. */
	blast(&c, 1000, 1000, 20000, 8, &r, &st);
	CU_ASSERT_EQUAL(st.ce_marked, 0);
}

static void
test_replay_same_seed(void)
{
	struct sim_link_cfg c = { .delay_ns = 1000,
				  .jitter_ns = 3000,
				  .loss = 0.05,
				  .dup = 0.02,
				  .corrupt = 0.02,
				  .reorder = 0.02 };
	struct sim_port_stats a, b, d;
	struct rec_node ra, rb, rd;

	blast(&c, 3000, 100, 100, 11, &ra, &a);
	blast(&c, 3000, 100, 100, 11, &rb, &b);
	blast(&c, 3000, 100, 100, 12, &rd, &d);
	CU_ASSERT(memcmp(&a, &b, sizeof(a)) == 0);
	CU_ASSERT(memcmp(&ra, &rb, sizeof(ra)) == 0);
	CU_ASSERT(memcmp(&a, &d, sizeof(a)) != 0);
}

/* A node that always has work now (a busy loop) and one with a timer every microsecond. */
static uint64_t spin_next;

static uint64_t
spin_deadline(void *ctx)
{
	(void)ctx;
	return spin_next;
}

static unsigned int
spin_process(void *ctx, uint64_t now)
{
	bool *tick = ctx;

	if (*tick)
		spin_next = now + 1000;
	return 0;
}

static const struct sim_node_ops spin_ops = { rec_rx, spin_process, spin_deadline, NULL };

static void
test_run_limits(void)
{
	struct sim_app app = { nop_step, never, NULL, UINT64_MAX };
	struct sim_net net;
	bool tick = false;

	/* Work that never goes away: the event limit reports the hang. */
	sim_net_init(&net, 1);
	spin_next = 0;
	CU_ASSERT_EQUAL(sim_net_add_node(&net, mac0, &spin_ops, &tick, NULL, 1), 0);
	net.event_limit = 1000;
	CU_ASSERT_EQUAL(sim_net_run(&net, &app), SIM_EVENT_LIMIT);
	CU_ASSERT_EQUAL(net.now, 0);
	sim_net_fini(&net);

	/* A periodic timer: virtual time advances to the limit, not past it. */
	sim_net_init(&net, 1);
	tick = true;
	spin_next = 0;
	CU_ASSERT_EQUAL(sim_net_add_node(&net, mac0, &spin_ops, &tick, NULL, 1), 0);
	net.time_limit = 50000;
	CU_ASSERT_EQUAL(sim_net_run(&net, &app), SIM_TIME_LIMIT);
	CU_ASSERT_EQUAL(net.events, 51);
	CU_ASSERT(net.now <= 50000);
	sim_net_fini(&net);
}

DROCE_TEST_MAIN("sim_net", DROCE_TEST(test_run_limits), DROCE_TEST(test_rng_deterministic),
		DROCE_TEST(test_heap_order), DROCE_TEST(test_clean_link_rate_and_delay),
		DROCE_TEST(test_loss_rate), DROCE_TEST(test_burst_loss),
		DROCE_TEST(test_reorder_dup), DROCE_TEST(test_corruption_caught_by_icrc),
		DROCE_TEST(test_red_marks_ce), DROCE_TEST(test_replay_same_seed))
