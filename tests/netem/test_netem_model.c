/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics of the impairment model over fixed-seed runs of 100k frames. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "droce_test.h"
#include "netem_model.h"
#include "netem_test_frames.h"

#define N    100000
#define SEED 42

static uint8_t frame[1600];

static void
setup(struct droce_netem *n, const struct droce_netem_cfg *c)
{
	char err[128];

	CU_ASSERT_EQUAL_FATAL(droce_netem_cfg_check(c, err, sizeof(err)), 0);
	droce_netem_init(n, c, SEED);
}

static void
test_no_impairment_passes_all(void)
{
	struct droce_netem_cfg c = { 0 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint32_t i, passed = 0;

	setup(&n, &c);
	for (i = 0; i < 1000; i++)
		if (droce_netem_submit(&n, frame, 100, i * 10ull, &out) == 1 &&
		    out.depart_ns[0] == i * 10ull)
			passed++;
	CU_ASSERT_EQUAL(passed, 1000);
	CU_ASSERT_EQUAL(n.st.out, 1000);
}

static void
test_loss_rate(void)
{
	struct droce_netem_cfg c = { .loss = 0.05 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint32_t i, lost = 0;

	setup(&n, &c);
	for (i = 0; i < N; i++)
		if (droce_netem_submit(&n, frame, 100, i, &out) == 0) {
			CU_ASSERT_EQUAL(out.drop, DROCE_NETEM_DROP_LOSS);
			lost++;
		}
	/* sigma = sqrt(N p (1-p)) = 69 frames; +-400 is almost 6 sigma. */
	CU_ASSERT(lost > 5000 - 400 && lost < 5000 + 400);
	CU_ASSERT_EQUAL(n.st.drop[DROCE_NETEM_DROP_LOSS], lost);
}

static void
test_seed_reproducible(void)
{
	struct droce_netem_cfg c = { .loss = 0.3 };
	struct droce_netem a, b;
	struct droce_netem_out oa, ob;
	uint32_t i, same = 0;

	droce_netem_init(&a, &c, 7);
	droce_netem_init(&b, &c, 7);
	for (i = 0; i < 1000; i++)
		same += droce_netem_submit(&a, frame, 64, i, &oa) ==
			droce_netem_submit(&b, frame, 64, i, &ob);
	CU_ASSERT_EQUAL(same, 1000);
	droce_netem_init(&b, &c, 8);
	droce_netem_init(&a, &c, 7);
	for (i = 0, same = 0; i < 1000; i++)
		same += droce_netem_submit(&a, frame, 64, i, &oa) ==
			droce_netem_submit(&b, frame, 64, i, &ob);
	CU_ASSERT(same < 1000);
}

/* Gilbert-Elliott: loss = p / (p + r) with loss_bad 1; bursts last 1 / r frames on average. */
static void
test_gilbert_elliott(void)
{
	struct droce_netem_cfg c = { .ge = { .on = true, .p = 0.01, .r = 0.25, .loss_bad = 1.0 } };
	struct droce_netem n;
	struct droce_netem_out out;
	uint32_t i, lost = 0, bursts = 0;
	int prev_lost = 0, l;
	double rate, mean_burst;

	setup(&n, &c);
	for (i = 0; i < N; i++) {
		l = droce_netem_submit(&n, frame, 100, i, &out) == 0;
		lost += l;
		bursts += l && !prev_lost;
		prev_lost = l;
	}
	rate = (double)lost / N;
	mean_burst = (double)lost / bursts;
	CU_ASSERT(rate > 0.030 && rate < 0.047);	 /* 0.0385 expected */
	CU_ASSERT(mean_burst > 3.4 && mean_burst < 4.6); /* 4 expected */
	CU_ASSERT_EQUAL(n.st.drop[DROCE_NETEM_DROP_GE], lost);
}

static void
test_delay_exact_and_order_kept(void)
{
	struct droce_netem_cfg c = { .delay_ns = 123456 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint64_t prev = 0;
	uint32_t i, exact = 0, inversions = 0;

	setup(&n, &c);
	for (i = 0; i < N; i++) {
		droce_netem_submit(&n, frame, 100, i * 7ull, &out);
		exact += out.n == 1 && out.depart_ns[0] == i * 7ull + 123456;
		inversions += out.depart_ns[0] < prev;
		prev = out.depart_ns[0];
	}
	CU_ASSERT_EQUAL(exact, N);
	CU_ASSERT_EQUAL(inversions, 0);
}

static void
test_jitter_bounds_and_keep_order(void)
{
	struct droce_netem_cfg c = { .delay_ns = 100000, .jitter_ns = 20000 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint64_t prev = 0, d, lo = UINT64_MAX, hi = 0;
	uint32_t i, inversions = 0, within = 0;
	double sum = 0;

	setup(&n, &c);
	for (i = 0; i < N; i++) {
		droce_netem_submit(&n, frame, 100, i * 100ull, &out);
		d = out.depart_ns[0] - i * 100ull;
		within += d >= 80000 && d <= 120000;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		sum += (double)d;
		inversions += out.depart_ns[0] < prev;
		prev = out.depart_ns[0];
	}
	CU_ASSERT_EQUAL(within, N);
	CU_ASSERT(lo < 80500 && hi > 119500); /* the whole range is used */
	CU_ASSERT(fabs(sum / N - 100000) < 300);
	CU_ASSERT(inversions > 1000); /* 100 ns apart, +-20 us: jitter reorders */

	c.keep_order = true;
	setup(&n, &c);
	for (i = 0, inversions = 0, prev = 0; i < N; i++) {
		droce_netem_submit(&n, frame, 100, i * 100ull, &out);
		inversions += out.depart_ns[0] < prev;
		CU_ASSERT(out.depart_ns[0] >= i * 100ull + 80000);
		prev = out.depart_ns[0];
	}
	CU_ASSERT_EQUAL(inversions, 0);
}

static void
test_reorder(void)
{
	struct droce_netem_cfg c = { .delay_ns = 10000, .reorder = 0.1, .reorder_delay_ns = 50000 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint64_t prev = 0;
	uint32_t i, late = 0, on_time = 0, inversions = 0;

	setup(&n, &c);
	for (i = 0; i < N; i++) {
		droce_netem_submit(&n, frame, 100, i * 1000ull, &out);
		if (out.depart_ns[0] == i * 1000ull + 60000)
			late++;
		else if (out.depart_ns[0] == i * 1000ull + 10000)
			on_time++;
		inversions += out.depart_ns[0] < prev;
		prev = out.depart_ns[0];
	}
	CU_ASSERT_EQUAL(late + on_time, N);
	CU_ASSERT(late > 9000 && late < 11000);
	CU_ASSERT_EQUAL(n.st.reordered, late);
	/* A held frame is overtaken by the next 50 (1 us apart): departures go back after it. */
	CU_ASSERT(inversions > 8000);
}

/* Back-to-back arrivals leave one serialisation time apart: (1000 + 24) B at 1 Gbit/s = 8192 ns. */
static void
test_rate_spacing(void)
{
	struct droce_netem_cfg c = { .rate_bps = 1000000000ull, .overhead = 24, .delay_ns = 500 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint32_t i, exact = 0;

	setup(&n, &c);
	for (i = 0; i < 1000; i++) {
		droce_netem_submit(&n, frame, 1000, 0, &out);
		exact += out.n == 1 && out.depart_ns[0] == (i + 1) * 8192ull + 500;
	}
	CU_ASSERT_EQUAL(exact, 1000);
	CU_ASSERT_EQUAL(droce_netem_backlog(&n, 0), 1024000); /* overhead counts as queue */
	/* Arrivals slower than the rate never queue: depart = arrival + serialisation + delay. */
	setup(&n, &c);
	for (i = 0, exact = 0; i < 1000; i++) {
		droce_netem_submit(&n, frame, 1000, i * 10000ull, &out);
		exact += out.depart_ns[0] == i * 10000ull + 8192 + 500;
	}
	CU_ASSERT_EQUAL(exact, 1000);
}

static void
test_queue_limit(void)
{
	struct droce_netem_cfg c = { .rate_bps = 8000000000ull, .limit_bytes = 5000 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint32_t i, passed = 0;

	setup(&n, &c);
	for (i = 0; i < 100; i++)
		passed += droce_netem_submit(&n, frame, 100, 0, &out);
	CU_ASSERT_EQUAL(passed, 50);
	CU_ASSERT_EQUAL(n.st.drop[DROCE_NETEM_DROP_QUEUE], 50);
	CU_ASSERT_EQUAL(n.st.max_backlog, 5000);
	/* 8 Gbit/s drains a byte per ns: after 1 us, 10 frames fit again. */
	for (i = 0, passed = 0; i < 20; i++)
		passed += droce_netem_submit(&n, frame, 100, 1000, &out);
	CU_ASSERT_EQUAL(passed, 10);
}

/* The queue each frame found: frame i of a burst at one instant finds i frames ahead. */
static void
test_queue_percentiles(void)
{
	struct droce_netem_cfg c = { .rate_bps = 8000000000ull };
	struct droce_netem n;
	struct droce_netem_out out;
	uint32_t i;

	setup(&n, &c);
	CU_ASSERT_EQUAL(droce_netem_queue_pct(&n.st, 50), 0); /* no frame yet */
	for (i = 0; i < 100; i++)
		droce_netem_submit(&n, frame, 1024, 0, &out);
	CU_ASSERT_EQUAL(droce_netem_queue_pct(&n.st, 0), 0);
	CU_ASSERT_EQUAL(droce_netem_queue_pct(&n.st, 50), 49 * 1024);
	CU_ASSERT_EQUAL(droce_netem_queue_pct(&n.st, 99), 98 * 1024);
	CU_ASSERT_EQUAL(droce_netem_queue_pct(&n.st, 100), 99 * 1024);
	/* past the histogram's 4 MiB the frames count in its last bucket */
	for (i = 0; i < 8000; i++)
		droce_netem_submit(&n, frame, 1024, 0, &out);
	CU_ASSERT_EQUAL(droce_netem_queue_pct(&n.st, 100), 4095ull * 1024);
	/* without a rate there is no queue, and nothing is counted */
	c.rate_bps = 0;
	setup(&n, &c);
	droce_netem_submit(&n, frame, 1024, 0, &out);
	CU_ASSERT_EQUAL(droce_netem_queue_pct(&n.st, 99), 0);
	CU_ASSERT_EQUAL(n.st.qhist[0], 0);
}

/* The queue over time: each frame counted in its period, with the queue it found and its mark;
 * past the last period only counted. */
static void
test_series(void)
{
	struct droce_netem_cfg c = { .rate_bps = 8000000000ull,
				     .red_on = true,
				     .red_kmin = 500,
				     .red_kmax = 600,
				     .red_pmax = 1.0 };
	struct droce_netem_sample s[4];
	struct droce_netem_series se = { .s = s, .cap = 4, .period_ns = 1000 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint8_t ect[1000];
	int i;

	memset(s, 0, sizeof(s));
	netem_test_ipv4(ect, sizeof(ect), DROCE_ECN_ECT0);
	setup(&n, &c);
	n.series = &se;
	/* 8 Gbit/s: a byte a ns. Three at 0 find 0, 1000 and 2000 bytes (the last two above
	 * Kmax: marked); one at 2500 ns finds 500 (Kmin: not). */
	for (i = 0; i < 3; i++) {
		memcpy(frame, ect, sizeof(ect));
		droce_netem_submit(&n, frame, sizeof(ect), 0, &out);
	}
	memcpy(frame, ect, sizeof(ect));
	droce_netem_submit(&n, frame, sizeof(ect), 2500, &out);
	CU_ASSERT_EQUAL(se.len, 3);
	CU_ASSERT_EQUAL(s[0].frames, 3);
	CU_ASSERT_EQUAL(s[0].ce, 2);
	CU_ASSERT_EQUAL(s[0].q_sum, 3000);
	CU_ASSERT_EQUAL(s[0].q_max, 2000);
	CU_ASSERT_EQUAL(s[1].frames, 0); /* an idle period stays in the series */
	CU_ASSERT_EQUAL(s[2].frames, 1);
	CU_ASSERT_EQUAL(s[2].ce, 0);
	CU_ASSERT_EQUAL(s[2].q_max, 500);
	droce_netem_submit(&n, frame, 100, 4000, &out); /* period 4: past the last */
	CU_ASSERT_EQUAL(se.beyond, 1);
	CU_ASSERT_EQUAL(se.len, 3);
	CU_ASSERT_EQUAL(n.st.ce_marked, 2);
}

static void
test_duplicate_and_corrupt(void)
{
	struct droce_netem_cfg c = { .duplicate = 0.02, .corrupt = 0.03 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint8_t orig[200];
	uint32_t i, j, dup = 0, corrupted = 0, bits, bad = 0;

	setup(&n, &c);
	netem_test_ipv4(orig, sizeof(orig), 0);
	for (i = 0; i < N; i++) {
		memcpy(frame, orig, sizeof(orig));
		dup += droce_netem_submit(&n, frame, sizeof(orig), i, &out) == 2;
		for (j = 0, bits = 0; j < sizeof(orig); j++)
			bits += (uint32_t)__builtin_popcount(frame[j] ^ orig[j]);
		bad += out.corrupted ? bits != 1 || memcmp(frame, orig, 14) != 0 : bits != 0;
		corrupted += out.corrupted;
	}
	CU_ASSERT(dup > 1700 && dup < 2300);
	CU_ASSERT(corrupted > 2600 && corrupted < 3400);
	CU_ASSERT_EQUAL(bad, 0); /* exactly one bit, never in the Ethernet header */
	CU_ASSERT_EQUAL(n.st.out, N + dup);
}

static void
test_red_prob_curve(void)
{
	struct droce_netem_cfg c = {
		.red_on = true, .rate_bps = 1, .red_kmin = 10000, .red_kmax = 30000, .red_pmax = 0.2
	};

	CU_ASSERT_DOUBLE_EQUAL(droce_netem_red_prob(&c, 0), 0.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(droce_netem_red_prob(&c, 9999), 0.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(droce_netem_red_prob(&c, 10000), 0.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(droce_netem_red_prob(&c, 20000), 0.1, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(droce_netem_red_prob(&c, 29999), 0.2 * 19999 / 20000, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(droce_netem_red_prob(&c, 30000), 1.0, 1e-12);
}

/*
 * Hold the queue at a fixed length: at 8 Gbit/s (a byte per ns), 100-byte frames every 100 ns
 * after a burst of 201 keep the backlog seen by each arrival at exactly 20000 bytes, where
 * p = 0.2 * (20000 - 10000) / (30000 - 10000) = 0.1.
 */
static void
test_red_marking_rate(void)
{
	struct droce_netem_cfg c = { .rate_bps = 8000000000ull,
				     .red_on = true,
				     .red_kmin = 10000,
				     .red_kmax = 30000,
				     .red_pmax = 0.2 };
	struct droce_netem n;
	struct droce_netem_out out;
	uint8_t orig[100];
	uint32_t i, marked = 0, wrong_q = 0;

	setup(&n, &c);
	netem_test_ipv4(orig, sizeof(orig), DROCE_ECN_ECT0);
	for (i = 0; i < 201; i++) {
		memcpy(frame, orig, sizeof(orig));
		droce_netem_submit(&n, frame, sizeof(orig), 0, &out);
	}
	for (i = 1; i <= N; i++) {
		memcpy(frame, orig, sizeof(orig));
		wrong_q += droce_netem_backlog(&n, i * 100ull) != 20000;
		droce_netem_submit(&n, frame, sizeof(orig), i * 100ull, &out);
		marked += out.ce_marked;
		if (out.ce_marked) {
			CU_ASSERT_EQUAL(frame[15] & 3, DROCE_ECN_CE);
			CU_ASSERT_EQUAL(droce_ipv4_csum(frame + 14, 20), 0);
		}
	}
	CU_ASSERT_EQUAL(wrong_q, 0);
	/* sigma = sqrt(N * 0.1 * 0.9) = 95 */
	CU_ASSERT(marked > 10000 - 500 && marked < 10000 + 500);

	/* Not-ECT frames pass unmarked, or are dropped with --red-drop. */
	netem_test_ipv4(orig, sizeof(orig), 0);
	c.red_drop_not_ect = true;
	setup(&n, &c);
	for (i = 0; i < 1000; i++) {
		memcpy(frame, orig, sizeof(orig));
		droce_netem_submit(&n, frame, sizeof(orig), 0, &out);
	}
	CU_ASSERT_EQUAL(n.st.ce_marked, 0);
	CU_ASSERT(n.st.drop[DROCE_NETEM_DROP_RED] > 500);
}

static void
test_cfg_check(void)
{
	struct droce_netem_cfg c = { .red_on = true, .red_kmin = 1, .red_kmax = 2 };
	char err[128];

	CU_ASSERT_EQUAL(droce_netem_cfg_check(&c, err, sizeof(err)), -EINVAL); /* no rate */
	c.rate_bps = 1000;
	CU_ASSERT_EQUAL(droce_netem_cfg_check(&c, err, sizeof(err)), 0);
	c.red_kmin = 2;
	CU_ASSERT_EQUAL(droce_netem_cfg_check(&c, err, sizeof(err)), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.loss = 1.5;
	CU_ASSERT_EQUAL(droce_netem_cfg_check(&c, err, sizeof(err)), -EINVAL);
	memset(&c, 0, sizeof(c));
	c.reorder = 0.1;
	CU_ASSERT_EQUAL(droce_netem_cfg_check(&c, err, sizeof(err)), -EINVAL);
}

DROCE_TEST_MAIN("netem_model", DROCE_TEST(test_no_impairment_passes_all),
		DROCE_TEST(test_loss_rate), DROCE_TEST(test_seed_reproducible),
		DROCE_TEST(test_gilbert_elliott), DROCE_TEST(test_delay_exact_and_order_kept),
		DROCE_TEST(test_jitter_bounds_and_keep_order), DROCE_TEST(test_reorder),
		DROCE_TEST(test_rate_spacing), DROCE_TEST(test_queue_limit),
		DROCE_TEST(test_queue_percentiles), DROCE_TEST(test_series),
		DROCE_TEST(test_duplicate_and_corrupt), DROCE_TEST(test_red_prob_curve),
		DROCE_TEST(test_red_marking_rate), DROCE_TEST(test_cfg_check))
