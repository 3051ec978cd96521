/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN reaction point (stack/droce_cc_dcqcn.c) against the paper's rules (Zhu et al., SIGCOMM 2015) and mlx5's:
 * the cut on a CNP and its floor, one cut per monitor period and per round trip, alpha's rise and decay, the timer
 * and byte-counter stages (fast recovery, additive, hyper increase), pacing at the current
 * rate, recovery to line rate, parameter checks; then end to end: CE-marked data makes the
 * receiver send CNPs and the sender's QP slows down, every byte still arriving.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "droce_test.h"
#include "engine_harness.h"

/* The parameters the state blocks and the device of a test run with. */
static union droce_cc_params tp;

static int
configure(const struct droce_dcqcn_params *p)
{
	tp.dcqcn = *p;
	return droce_cc_dcqcn_check(p);
}

static void
start(struct droce_cc_state *s, uint64_t now)
{
	eh_cc_start(&droce_cc_dcqcn, s, &tp, now);
}

static struct droce_dcqcn_params
params(void)
{
	struct droce_dcqcn_params p;

	droce_cc_dcqcn_defaults(&p, 0);
	p.line_rate_bps = p.max_rate_bps = 10000000000ull; /* 10G: round numbers */
	p.min_rate_bps = 100000000ull;			   /* 100M */
	p.ai_rate_bps = 40000000ull;			   /* paper values */
	p.hai_rate_bps = 200000000ull;
	p.time_reset_ns = 55000;
	p.byte_reset = 10000;
	p.threshold = 5;
	p.reduce_period_ns = 4000;
	p.alpha_period_ns = 55000;
	p.g = 1019;	      /* mlx5's dce_tcp_g */
	p.clamp_tgt_rate = 1; /* the paper's: every cut sets RT, to the rate cut from */
	p.target_cut_pct = 0;
	p.ai_rate_ppm = 0;
	p.level_cut_pct = 0;
	p.first_cut_pct = 0;
	p.paced_cut_pct = 0;
	return p;
}

/* The paper's rules with alpha in 1/2^20 (the stats show it in mlx5's 1/1024): alpha on a
 * CNP, and the rate a cut leaves. */
#define A_ONE (1ull << 20)

static uint64_t
alpha_on_cnp(const struct droce_dcqcn_params *p, uint64_t a)
{
	return (a * p->g + (1024 - p->g) * A_ONE) / 1024;
}

static uint64_t
cut(const struct droce_dcqcn_params *p, uint64_t rc, uint64_t a)
{
	uint64_t r = rc - rc / 2 * a / A_ONE, floor = rc / 100 * p->min_dec_fac;

	r = r < floor ? floor : r;
	return r < p->min_rate_bps ? p->min_rate_bps : r;
}

static struct droce_dcqcn_stats
stats(const struct droce_cc_state *s)
{
	struct droce_dcqcn_stats st;

	droce_cc_dcqcn_stats(s, &st);
	return st;
}

static void
test_cut_and_monitor_period(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t a, r;

	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 1000);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.rate_bps, p.max_rate_bps);
	CU_ASSERT_EQUAL(st.alpha, p.initial_alpha);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s), 1000);
	/* first CNP: alpha = G alpha + (1 - G), RC = RC (1 - alpha / 2), RT = the rate before */
	droce_cc_dcqcn.on_cnp(&s, 2000);
	st = stats(&s);
	a = alpha_on_cnp(&p, (uint64_t)p.initial_alpha << 10);
	r = cut(&p, p.max_rate_bps, a);
	CU_ASSERT_EQUAL(st.alpha, a >> 10);
	CU_ASSERT_EQUAL(st.target_bps, p.max_rate_bps);
	CU_ASSERT_EQUAL(st.rate_bps, r);
	CU_ASSERT(r < p.max_rate_bps * 51 / 100 && r > p.max_rate_bps / 2); /* alpha ~ 1 */
	CU_ASSERT_EQUAL(st.cuts, 1);
	/* within rate_reduce_monitor_period: alpha still rises, no cut */
	droce_cc_dcqcn.on_cnp(&s, 5000);
	a = alpha_on_cnp(&p, a);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.cuts, 1);
	CU_ASSERT_EQUAL(st.cnp_ignored, 1);
	CU_ASSERT_EQUAL(st.rate_bps, r);
	/* after it: the next cut, from the current rate */
	droce_cc_dcqcn.on_cnp(&s, 6000);
	a = alpha_on_cnp(&p, a);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.cuts, 2);
	CU_ASSERT_EQUAL(st.target_bps, r);
	CU_ASSERT_EQUAL(st.rate_bps, cut(&p, r, a));
	/* never below min_rate */
	for (int i = 0; i < 40; i++)
		droce_cc_dcqcn.on_cnp(&s, 10000 + (uint64_t)i * 5000);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, p.min_rate_bps);
	/* rpg_min_dec_fac: a cut keeps at least that share of the rate */
	p.min_dec_fac = 70;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, p.max_rate_bps / 100 * 70);
}

/* A cut starts from what the QP sent since the last cut when that is below RC: a QP held to
 * 2 Gbit/s by something else (its window, a slower path) while its limiter allows 5 is cut
 * from 2, not from 5 (RC alone stayed far above a live bottleneck). A span shorter than a
 * timer period, or a QP that sends at RC, cuts from RC. */
static void
test_cut_from_sent_rate(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t t = 1000, r;
	int i;

	p.cut_per_rtt = 0;
	p.cut_from_sent = 1;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, t); /* no cut before: from RC, 10G to ~5G */
	r = stats(&s).rate_bps;
	CU_ASSERT(r > 4900000000ull && r < 5100000000ull);
	/* 1 ms of 1000 B frames 4 us apart: 2 Gbit/s */
	for (i = 1; i <= 250; i++)
		droce_cc_dcqcn.on_send(&s, 1000, t + (uint64_t)i * 4000);
	t += 250 * 4000;
	droce_cc_dcqcn.on_cnp(&s, t);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.cuts, 2);
	CU_ASSERT(st.target_bps >= 1990000000ull && st.target_bps <= 2000000000ull);
	CU_ASSERT(st.rate_bps < st.target_bps && st.rate_bps >= st.target_bps / 2);
	/* within a timer period of that cut: one frame is no rate, RC stands */
	r = st.rate_bps;
	droce_cc_dcqcn.on_send(&s, 1000, t + 1000);
	droce_cc_dcqcn.on_cnp(&s, t + 10000);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.cuts, 3);
	CU_ASSERT_EQUAL(st.target_bps, r);
	/* sending faster than RC (a burst the wire took): from RC (one timer stage raised it
	 * meanwhile), not from the burst's rate */
	t += 10000;
	r = st.rate_bps;
	for (i = 1; i <= 100; i++)
		droce_cc_dcqcn.on_send(&s, 4000, t + (uint64_t)i * 1000); /* 32 Gbit/s */
	droce_cc_dcqcn.on_cnp(&s, t + 100000);
	st = stats(&s);
	CU_ASSERT(st.target_bps > r && st.target_bps < p.max_rate_bps);
	/* a QP that sent nothing for a millisecond (its window full behind a deep queue) is
	 * cut from min_rate, not from 0: the rate left no room under the cut's floor and the
	 * target wrapped to 2^64 */
	t += 100000;
	droce_cc_dcqcn.on_cnp(&s, t + 1000000);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, p.min_rate_bps);
	CU_ASSERT_EQUAL(st.rate_bps, p.min_rate_bps);
}

/* cut_per_rtt: after a cut, CNPs within the smoothed round trip (at most F timer stages) raise
 * alpha and restart the recovery stages but do not cut; mlx5's values (0) cut on each. */
static void
test_cut_per_rtt(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t r;

	p.cut_per_rtt = 1;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_rtt(&s, 100000, 0); /* 100 us, under F x T = 275 us */
	droce_cc_dcqcn.on_cnp(&s, 10000);
	r = stats(&s).rate_bps;
	/* 40 us on (past the monitor period, inside the round trip): no cut; and the timer
	 * stage that would have ended 55 us after the cut starts again from this CNP */
	droce_cc_dcqcn.on_cnp(&s, 50000);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.cuts, 1);
	CU_ASSERT_EQUAL(st.cnp_ignored, 1);
	CU_ASSERT_EQUAL(st.rate_bps, r);
	droce_cc_dcqcn.on_send(&s, 1, 50000 + p.time_reset_ns - 1);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, r);
	droce_cc_dcqcn.on_send(&s, 1, 50000 + p.time_reset_ns);
	CU_ASSERT(stats(&s).rate_bps > r);
	/* a round trip after the cut: the next one */
	droce_cc_dcqcn.on_cnp(&s, 110000);
	CU_ASSERT_EQUAL(stats(&s).cuts, 2);
	/* a round trip longer than F timer stages waits those only */
	droce_cc_dcqcn.on_rtt(&s, 10000000, 110000);
	droce_cc_dcqcn.on_cnp(&s, 110000 + p.threshold * p.time_reset_ns - 1);
	CU_ASSERT_EQUAL(stats(&s).cuts, 2);
	droce_cc_dcqcn.on_cnp(&s, 110000 + 2 * p.threshold * p.time_reset_ns);
	CU_ASSERT_EQUAL(stats(&s).cuts, 3);
	/* off: each CNP past the monitor period cuts */
	p.cut_per_rtt = 0;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_rtt(&s, 100000, 0);
	droce_cc_dcqcn.on_cnp(&s, 10000);
	droce_cc_dcqcn.on_cnp(&s, 70000);
	CU_ASSERT_EQUAL(stats(&s).cuts, 2);
	p.cut_per_rtt = 2;
	CU_ASSERT_EQUAL(configure(&p), -EINVAL);
}

static void
test_alpha_decays_without_cnp(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	uint64_t a;
	int i;

	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	a = alpha_on_cnp(&p, (uint64_t)p.initial_alpha << 10);
	CU_ASSERT_EQUAL(stats(&s).alpha, a >> 10);
	/* the period of the CNP keeps its value; each later period without one multiplies by G */
	droce_cc_dcqcn.on_send(&s, 100, 55000 + 1);
	CU_ASSERT_EQUAL(stats(&s).alpha, a >> 10);
	droce_cc_dcqcn.on_send(&s, 100, 4 * 55000 + 1);
	for (i = 0; i < 3; i++)
		a = a * p.g / 1024;
	CU_ASSERT_EQUAL(stats(&s).alpha, a >> 10);
	/* mlx5's 1 us period: 500 periods of 1019/1024 leave alpha about 8 % of itself, not 0 (a
	 * 10-bit alpha truncates to 0 long before) */
	p.alpha_period_ns = 1000;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	droce_cc_dcqcn.on_send(&s, 100, 501000);
	CU_ASSERT(stats(&s).alpha >= 70 && stats(&s).alpha <= 90);
	/* a long idle decays it to nothing, in bounded work */
	droce_cc_dcqcn.on_send(&s, 100, 10000000000ull);
	CU_ASSERT_EQUAL(stats(&s).alpha, 0);
}

/* Configure p, start a QP and cut it twice: RT is then the rate after the first cut, below
 * line rate, so that increases show. Returns RC and RT. */
static void
cut_twice(const struct droce_dcqcn_params *p, struct droce_cc_state *s, uint64_t *rc, uint64_t *rt)
{
	CU_ASSERT_EQUAL_FATAL(configure(p), 0);
	start(s, 0);
	droce_cc_dcqcn.on_cnp(s, 0);
	droce_cc_dcqcn.on_cnp(s, p->reduce_period_ns);
	*rc = stats(s).rate_bps;
	*rt = stats(s).target_bps;
}

/* A timer stage ends at t: RT is what the caller expects it to be after the stage, RC climbs
 * half way to it (rounded up, so that it reaches RT); the limiter must show both. */
static void
expect_stage(struct droce_cc_state *s, uint64_t t, uint64_t rt, uint64_t *rc)
{
	struct droce_dcqcn_stats st;

	droce_cc_dcqcn.on_send(s, 1, t);
	*rc = (rt + *rc + 1) / 2;
	st = stats(s);
	CU_ASSERT_EQUAL(st.target_bps, rt);
	CU_ASSERT_EQUAL(st.rate_bps, *rc);
}

static void
test_increase_stages(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t rc, rt;
	int i;

	cut_twice(&p, &s, &rc, &rt);
	CU_ASSERT_FATAL(rt < p.max_rate_bps * 6 / 10);
	/* fast recovery while both stage counts are under F: RC = (RT + RC) / 2, RT kept; then
	 * timer stages F and F + 1: additive increase, RT += AI */
	for (i = 1; i <= 6; i++) {
		if (i >= 5)
			rt += p.ai_rate_bps;
		expect_stage(&s, p.reduce_period_ns + (uint64_t)i * p.time_reset_ns, rt, &rc);
	}
	/* byte stages: additive while they are under F, then with both at F or more, hyper
	 * increase RT += (min - F + 1) HAI */
	for (i = 1; i <= 5; i++) {
		droce_cc_dcqcn.on_send(&s, (uint32_t)p.byte_reset,
				       p.reduce_period_ns + 6 * p.time_reset_ns + i);
		rt += i < 5 ? p.ai_rate_bps : p.hai_rate_bps;
		rc = (rt + rc + 1) / 2;
	}
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, rt);
	CU_ASSERT_EQUAL(st.rate_bps, rc);
	/* a long quiet time: back to line rate, and no pacing there */
	droce_cc_dcqcn.on_send(&s, 1000, 1000000000ull);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.rate_bps, p.max_rate_bps);
	CU_ASSERT_EQUAL(st.target_bps, p.max_rate_bps);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s), 1000000000ull);
	/* after an idle far longer than any recovery, at once (no walk of every stage) */
	droce_cc_dcqcn.on_cnp(&s, 2000000000ull);
	droce_cc_dcqcn.on_send(&s, 1000, 2000000000000ull);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, p.max_rate_bps);
}

/* ai_rate_ppm: the additive step adds that share of RT to R_AI, so two QPs at different
 * targets step by different amounts; the fast recovery before it is unchanged. */
static void
test_increase_share(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	uint64_t rc, rt;
	int i;

	p.ai_rate_ppm = 500;
	cut_twice(&p, &s, &rc, &rt);
	for (i = 1; i <= 6; i++) {
		if (i >= 5) /* from stage F on: R_AI and 500 millionths of RT */
			rt += p.ai_rate_bps + rt / 1000000 * 500;
		expect_stage(&s, p.reduce_period_ns + (uint64_t)i * p.time_reset_ns, rt, &rc);
	}
	/* a target of several Gbit/s: the share adds some Mbit/s to each step */
	CU_ASSERT(rt / 1000000 * 500 > 1000000);
}

/* target_cut_pct: RT takes that share of each cut, so fast recovery stops short of the rate
 * cut from, by that share of the cut, and so does each later cut's */
static void
test_target_cut(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t rc, rt;
	int i;

	p.target_cut_pct = 10;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	st = stats(&s);
	rc = st.rate_bps;
	rt = p.max_rate_bps - (p.max_rate_bps - rc) / 100 * 10;
	CU_ASSERT_EQUAL(st.target_bps, rt);
	CU_ASSERT(rt < p.max_rate_bps * 96 / 100 && rt > p.max_rate_bps * 94 / 100); /* alpha ~ 1 */
	/* fast recovery climbs towards that target, not towards the rate cut from */
	for (i = 1; i < 5; i++)
		expect_stage(&s, (uint64_t)i * p.time_reset_ns, rt, &rc);
	/* the next cut takes its share of the target again, from the rate it cuts */
	droce_cc_dcqcn.on_cnp(&s, 5 * p.time_reset_ns);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, rc - (rc - st.rate_bps) / 100 * 10);
	CU_ASSERT(st.target_bps < rt);
	/* 0: RT is the rate cut from (the paper's) */
	p = params();
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	CU_ASSERT_EQUAL(stats(&s).target_bps, p.max_rate_bps);
}

/* level_cut_pct: a QP among few (target >= max / level_min_share) past the start (alpha under
 * level_max_alpha) lowers its target by that share of the way from it to the new rate, also
 * when the CNP lands early in its recovery; otherwise target_cut_pct's rule holds */
static void
test_level_cut(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t a, r, rt, rc;

	p.target_cut_pct = 3;
	p.level_cut_pct = 5;
	p.level_min_share = 6;
	p.level_max_alpha = 716;
	p.initial_alpha = 100; /* past the start */
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	a = alpha_on_cnp(&p, (uint64_t)p.initial_alpha << 10);
	r = cut(&p, p.max_rate_bps, a);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.rate_bps, r);
	rt = p.max_rate_bps - (p.max_rate_bps - r) / 100 * 5;
	CU_ASSERT_EQUAL(st.target_bps, rt);
	/* one stage into the recovery, RC half way back: the next cut lowers the target from
	 * its level, where the rule of target_cut_pct would take it down to about RC */
	rc = r;
	expect_stage(&s, p.time_reset_ns, rt, &rc);
	droce_cc_dcqcn.on_cnp(&s, p.time_reset_ns + 1);
	a = alpha_on_cnp(&p, a);
	r = cut(&p, rc, a);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.rate_bps, r);
	CU_ASSERT_EQUAL(st.target_bps, rt - (rt - r) / 100 * 5);
	CU_ASSERT(st.target_bps > rc);
	/* alpha at or over level_max_alpha (the start): target_cut_pct's rule */
	p.initial_alpha = 1023;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, p.max_rate_bps - (p.max_rate_bps - st.rate_bps) / 100 * 3);
	/* a target under max / level_min_share (one of many): the same */
	p.initial_alpha = 100;
	p.level_min_share = 1;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0); /* from max: a level cut */
	rc = stats(&s).rate_bps;
	expect_stage(&s, p.time_reset_ns, stats(&s).target_bps, &rc);
	droce_cc_dcqcn.on_cnp(&s, p.time_reset_ns + 1);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, rc - (rc - st.rate_bps) / 100 * 3);
}

/* first_cut_pct: the cut from line rate of a QP its window held takes the target down with
 * the rate, so a second CNP before any recovery leaves the target where one cut did; the
 * paper's first cut keeps the target at line rate and the second takes it to the first's
 * rate: a QP whose second CNP came early then sits a cut below the others. A QP that sent
 * at its rate keeps line rate as its target. */
static void
test_first_cut(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t r, t = p.time_reset_ns; /* a timer period: a rate to judge */
	int i;

	p.first_cut_pct = 100;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, t); /* nothing sent: its window held it */
	st = stats(&s);
	r = st.rate_bps;
	CU_ASSERT(r < p.max_rate_bps * 51 / 100);
	CU_ASSERT_EQUAL(st.target_bps, r);
	droce_cc_dcqcn.on_cnp(&s, t + 5000); /* past the monitor period, no stage since */
	st = stats(&s);
	CU_ASSERT_EQUAL(st.cuts, 2);
	CU_ASSERT_EQUAL(st.target_bps, r);
	CU_ASSERT(st.rate_bps < r);
	/* a CNP within the first timer period: no rate to judge, the paper's rule */
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, t - 1);
	CU_ASSERT_EQUAL(stats(&s).target_bps, p.max_rate_bps);
	/* sending at its rate (10 Gbit/s: 4000 B every 3.2 us) */
	start(&s, 0);
	for (i = 1; i <= 20; i++)
		droce_cc_dcqcn.on_send(&s, 4000, (uint64_t)i * 3200);
	droce_cc_dcqcn.on_cnp(&s, 20 * 3200 + 1);
	st = stats(&s);
	CU_ASSERT(st.rate_bps < p.max_rate_bps * 51 / 100);
	CU_ASSERT_EQUAL(st.target_bps, p.max_rate_bps);
	/* half of it: half way down */
	p.first_cut_pct = 50;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, t);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, p.max_rate_bps - (p.max_rate_bps - st.rate_bps) * 50 / 100);
	/* 0, the paper's: line rate stays the target */
	p.first_cut_pct = 0;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, t);
	CU_ASSERT_EQUAL(stats(&s).target_bps, p.max_rate_bps);
}

/* paced_cut_pct: a QP that since its last cut sent at least the rate that cut set (its
 * limiter holds it) lowers its target by that share of the way from its level to the new
 * rate; one that sent less (its window holds it) or whose target is under max /
 * paced_min_share keeps target_cut_pct's rule */
static void
test_paced_cut(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t a, a1, r, rc, rt, level;
	int i;

	p.target_cut_pct = 3;
	p.paced_cut_pct = 15;
	p.paced_min_share = 10;
	p.byte_reset = 10000000; /* the timer's stages alone within these 100 us */
	for (int held = 1; held >= 0; held--) {
		CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
		start(&s, 0);
		droce_cc_dcqcn.on_cnp(&s, 0);
		a1 = alpha_on_cnp(&p, (uint64_t)p.initial_alpha << 10);
		r = stats(&s).rate_bps;
		/* 100 us of 4000 B frames 5 us apart (6.4 Gbit/s, over the cut's ~5), or of
		 * 1000 B frames (1.6 Gbit/s) */
		for (i = 1; i <= 20; i++)
			droce_cc_dcqcn.on_send(&s, held ? 4000 : 1000, (uint64_t)i * 5000);
		st = stats(&s);
		rc = st.rate_bps;
		rt = st.target_bps;
		CU_ASSERT(rc > r); /* one stage of recovery at 55 us */
		droce_cc_dcqcn.on_cnp(&s, 100001);
		a = alpha_on_cnp(&p, a1);
		st = stats(&s);
		CU_ASSERT_EQUAL(st.rate_bps, cut(&p, rc, a));
		level = rt > rc ? rt : rc;
		if (held) {
			CU_ASSERT_EQUAL(st.target_bps, level - (level - st.rate_bps) / 100 * 15);
		} else {
			CU_ASSERT_EQUAL(st.target_bps, rc - (rc - st.rate_bps) / 100 * 3);
		}
	}
	/* a target under max / paced_min_share: target_cut_pct's rule */
	p.paced_min_share = 1;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	for (i = 1; i <= 20; i++)
		droce_cc_dcqcn.on_send(&s, 4000, (uint64_t)i * 5000);
	rc = stats(&s).rate_bps;
	droce_cc_dcqcn.on_cnp(&s, 100001);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, rc - (rc - st.rate_bps) / 100 * 3);
}

/*
 * The defaults' byte stage: a lone QP whose first CNP came while its window held it (its
 * target went down with the rate, to half of its 40 Gbit/s) and that then sends at its rate
 * climbs past 25 Gbit/s (the bottleneck of droce-sim-cc's case) within 5 ms by hyper
 * increase. At the paper's 10 MB, or 2 MB, it is at 21-23 Gbit/s then, on additive steps.
 */
static void
test_lone_flow_regains(void)
{
	struct droce_dcqcn_params p;
	struct droce_cc_state s;
	uint64_t now, next, half;

	droce_cc_dcqcn_defaults(&p, 40000000000ull);
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, p.time_reset_ns); /* nothing sent yet: its window held it */
	half = stats(&s).rate_bps;
	CU_ASSERT_FATAL(half < p.max_rate_bps * 51 / 100);
	CU_ASSERT_EQUAL(stats(&s).target_bps, half);
	for (now = p.time_reset_ns; now < 5000000; now = next) {
		droce_cc_dcqcn.on_send(&s, 4096, now);
		next = droce_cc_dcqcn.next_send_time(&s);
		if (next < now + 820) /* at line rate the wire paces: 4096 B in 819 ns */
			next = now + 820;
	}
	printf("\n  from %" PRIu64 " Mbit/s: %" PRIu64 " Mbit/s after 5 ms ", half / 1000000,
	       stats(&s).rate_bps / 1000000);
	CU_ASSERT(stats(&s).rate_bps > 26000000000ull);
}

/* mlx5's clamp_tgt_rate 0 (with clamp_tgt_rate_after_time_inc 1): a train of cuts with no
 * timer stage between them keeps RT at the rate before the first, so the recovery aims
 * there; a cut after a timer stage sets RT again. And with byte_reset 0 the timer alone
 * drives the increase: F stages of fast recovery, one additive step, then hyper steps. */
static void
test_clamp_and_timer_only(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	struct droce_dcqcn_stats st;
	uint64_t rc, rt, t0;
	int i;

	p.clamp_tgt_rate = 0;
	p.byte_reset = 0;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, 0);
	droce_cc_dcqcn.on_cnp(&s, p.reduce_period_ns);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.cuts, 2);
	CU_ASSERT_EQUAL(st.target_bps, p.max_rate_bps); /* not clamped: no timer stage yet */
	CU_ASSERT(st.rate_bps < p.max_rate_bps * 6 / 10);
	/* bytes alone never raise the rate with no byte counter */
	droce_cc_dcqcn.on_send(&s, 1u << 30, p.reduce_period_ns + 1);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, st.rate_bps);
	/* one timer stage (fast recovery towards line rate), then a cut: now RT = RC */
	t0 = p.reduce_period_ns;
	droce_cc_dcqcn.on_send(&s, 1, t0 + p.time_reset_ns);
	rc = (p.max_rate_bps + st.rate_bps + 1) / 2;
	CU_ASSERT_EQUAL(stats(&s).rate_bps, rc);
	t0 += p.time_reset_ns;
	droce_cc_dcqcn.on_cnp(&s, t0);
	st = stats(&s);
	CU_ASSERT_EQUAL(st.target_bps, rc);
	rt = rc;
	rc = st.rate_bps;
	/* F = 5 stages of fast recovery, one additive, then hyper steps of HAI each */
	for (i = 1; i <= 8; i++) {
		if (i == 6)
			rt += p.ai_rate_bps;
		else if (i > 6)
			rt += p.hai_rate_bps;
		expect_stage(&s, t0 + (uint64_t)i * p.time_reset_ns, rt, &rc);
	}
}

static void
test_pacing(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	uint64_t t0 = 1000000, r, gap;

	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, t0);
	/* at line rate the wire paces: a send leaves no gap */
	droce_cc_dcqcn.on_send(&s, 1000, t0);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s), t0);
	droce_cc_dcqcn.on_cnp(&s, t0);
	r = stats(&s).rate_bps;
	gap = 1000ull * 8 * 1000000000ull / r; /* 1000 B at about 5 Gbit/s: ~1600 ns */
	CU_ASSERT(gap > 1590 && gap < 1610);
	droce_cc_dcqcn.on_send(&s, 1000, t0);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s), t0 + gap);
	/* back to back: the next one queues behind */
	droce_cc_dcqcn.on_send(&s, 1000, t0 + gap);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s), t0 + 2 * gap);
	/* after a pause it starts from its own time */
	droce_cc_dcqcn.on_send(&s, 500, t0 + 10000);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s), t0 + 10000 + gap / 2);
	/* a packet the limiter held, sent 20 us late (a loop's sleep overshooting): the
	 * schedule keeps its place, so what follows catches up back to back */
	s.held = true;
	droce_cc_dcqcn.on_send(&s, 1000, t0 + 10000 + gap / 2 + 20000);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s), t0 + 10000 + gap / 2 + gap);
	/* ... by DROCE_CC_PACE_BURST bytes at most */
	droce_cc_dcqcn.on_send(&s, 1000, t0 + 1000000);
	r = stats(&s).rate_bps;
	CU_ASSERT_EQUAL(droce_cc_dcqcn.next_send_time(&s),
			t0 + 1000000 - (uint64_t)DROCE_CC_PACE_BURST * 8 * 1000000000ull / r +
				1000ull * 8 * 1000000000ull / r);
}

/*
 * A QP cut far down recovers by its timer while it waits to send: the gap after a packet drains
 * at the rates the timer stages give on the way, not only at the rate of the moment (at 40
 * Mbit/s a 4 KiB packet would hold the next for 800 us, fifteen stages of recovery).
 */
static void
test_pacing_across_stages(void)
{
	struct droce_dcqcn_params p = params();
	struct droce_cc_state s;
	uint64_t next, slow, rc;
	int i;

	p.min_rate_bps = 1000000;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	for (i = 0; i < 8; i++) /* alpha near 1: each cut halves, 10G to ~40M */
		droce_cc_dcqcn.on_cnp(&s, (uint64_t)i * p.reduce_period_ns);
	rc = stats(&s).rate_bps;
	CU_ASSERT_FATAL(rc < 60000000 && rc > 30000000);
	droce_cc_dcqcn.on_send(&s, 4096, 40000);
	next = droce_cc_dcqcn.next_send_time(&s);
	slow = 40000 + 4096ull * 8 * 1000000000 / rc;
	printf("\n  4 KiB at %" PRIu64 " Mbit/s: next packet after %" PRIu64 " us, not %" PRIu64
	       " ",
	       rc / 1000000, (next - 40000) / 1000, (slow - 40000) / 1000);
	CU_ASSERT(next < 40000 + (slow - 40000) * 3 / 4);
	CU_ASSERT(next > 40000 + (slow - 40000) / 3); /* at most RT's, twice the rate */
	/* when that time comes the stages have happened: the rate is above the cut's */
	droce_cc_dcqcn.on_send(&s, 4096, next);
	CU_ASSERT(stats(&s).rate_bps > rc * 3 / 2);
}

static void
test_configure_checks(void)
{
	struct droce_dcqcn_params p, d;

	/* one field out of range, the rest the test's values: refused */
#define REFUSED(field, value) \
	do { \
		p = params(); \
		p.field = value; \
		CU_ASSERT_EQUAL(configure(&p), -EINVAL); \
	} while (0)
	REFUSED(min_rate_bps, p.max_rate_bps + 1);
	REFUSED(g, 2000);
	REFUSED(time_reset_ns, 0);
	REFUSED(ai_rate_ppm, 1000001);
	REFUSED(target_cut_pct, 101);
	REFUSED(level_cut_pct, 101);
	REFUSED(level_max_alpha, 1025);
	REFUSED(first_cut_pct, 101);
	REFUSED(paced_cut_pct, 101);
#undef REFUSED
	CU_ASSERT_EQUAL(droce_cc_dcqcn_check(NULL), -EINVAL);
	droce_cc_dcqcn_defaults(&d, 0);
	CU_ASSERT_EQUAL(configure(&d), 0);
	CU_ASSERT_EQUAL(tp.dcqcn.max_rate_bps, 100000000000ull); /* link unknown: 100G */
	CU_ASSERT_EQUAL(tp.dcqcn.time_reset_ns, 35000);
	CU_ASSERT_EQUAL(tp.dcqcn.alpha_period_ns, 50000);   /* the CNP interval */
	CU_ASSERT_EQUAL(tp.dcqcn.ai_rate_bps, 10000000ull); /* link / 10000 */
	CU_ASSERT_EQUAL(tp.dcqcn.byte_reset, 1000000);
	CU_ASSERT_EQUAL(tp.dcqcn.cut_per_rtt, 1);
	CU_ASSERT_EQUAL(tp.dcqcn.threshold, 4);
	CU_ASSERT_EQUAL(tp.dcqcn.g, 1016);
	CU_ASSERT_EQUAL(tp.dcqcn.clamp_tgt_rate, 1);
	CU_ASSERT_EQUAL(tp.dcqcn.ai_rate_ppm, 300);
	CU_ASSERT_EQUAL(tp.dcqcn.target_cut_pct, 3);
	CU_ASSERT_EQUAL(tp.dcqcn.level_cut_pct, 5);
	CU_ASSERT_EQUAL(tp.dcqcn.level_min_share, 6);
	CU_ASSERT_EQUAL(tp.dcqcn.level_max_alpha, 716);
	CU_ASSERT_EQUAL(tp.dcqcn.first_cut_pct, 100);
	CU_ASSERT_EQUAL(tp.dcqcn.paced_cut_pct, 15);
	CU_ASSERT_EQUAL(tp.dcqcn.paced_min_share, 10);
	CU_ASSERT_EQUAL(droce_cc_dcqcn_cnp_interval(0), 50000);
	droce_cc_dcqcn_defaults(&d, 25000000000ull);
	CU_ASSERT_EQUAL(d.ai_rate_bps, 2500000ull);
	CU_ASSERT_EQUAL(d.time_reset_ns, 35000);
	CU_ASSERT_EQUAL(droce_cc_dcqcn_cnp_interval(25000000000ull), 50000);
	/* scaled to the link: a 2 Gbit/s port's QPs start there and step by its 1/2500, on timers
	 * 12.5 times as long (25G / link): the 25 Gbit/s run, slowed down */
	droce_cc_dcqcn_defaults(&d, 2000000000ull);
	CU_ASSERT_EQUAL(d.max_rate_bps, 2000000000ull);
	CU_ASSERT_EQUAL(d.line_rate_bps, 2000000000ull);
	CU_ASSERT_EQUAL(d.ai_rate_bps, 200000ull);
	CU_ASSERT_EQUAL(d.hai_rate_bps, 800000ull);
	CU_ASSERT_EQUAL(d.time_reset_ns, 437500);
	CU_ASSERT_EQUAL(d.alpha_period_ns, 625000);
	CU_ASSERT_EQUAL(d.byte_reset, 1000000);
	CU_ASSERT_EQUAL(droce_cc_dcqcn_cnp_interval(2000000000ull), 625000);
	CU_ASSERT_EQUAL(droce_cc_dcqcn_check(&d), 0);
	/* ConnectX-5's values */
	droce_cc_dcqcn_mlx5(&d, 25000000000ull);
	CU_ASSERT_EQUAL(d.max_rate_bps, 25000000000ull);
	CU_ASSERT_EQUAL(d.ai_rate_bps, 5000000ull);
	CU_ASSERT_EQUAL(d.time_reset_ns, 300000);
	CU_ASSERT_EQUAL(d.byte_reset, 0); /* the timer alone, as the HPCC simulator's model */
	CU_ASSERT_EQUAL(d.clamp_tgt_rate, 0);
	CU_ASSERT_EQUAL(d.ai_rate_ppm, 0); /* the firmware's rules alone */
	CU_ASSERT_EQUAL(d.target_cut_pct, 0);
	CU_ASSERT_EQUAL(d.level_cut_pct, 0);
	CU_ASSERT_EQUAL(d.first_cut_pct, 0);
	CU_ASSERT_EQUAL(d.paced_cut_pct, 0);
	CU_ASSERT_EQUAL(droce_cc_dcqcn_mlx5_cnp_interval(25000000000ull), 4000);
	CU_ASSERT_EQUAL(d.threshold, 1);
	CU_ASSERT_EQUAL(d.alpha_period_ns, 1000);
	CU_ASSERT_EQUAL(d.cut_per_rtt, 0); /* a cut on each CNP past the monitor period */
	CU_ASSERT_EQUAL(droce_cc_dcqcn_check(&d), 0);
	/* below 25G the same run slowed down: timers x 25G / link, steps x link / 25G */
	droce_cc_dcqcn_mlx5(&d, 2000000000ull);
	CU_ASSERT_EQUAL(d.time_reset_ns, 3750000);
	CU_ASSERT_EQUAL(d.alpha_period_ns, 12500);
	CU_ASSERT_EQUAL(d.reduce_period_ns, 50000);
	CU_ASSERT_EQUAL(d.ai_rate_bps, 400000ull);
	CU_ASSERT_EQUAL(d.hai_rate_bps, 4000000ull);
	CU_ASSERT_EQUAL(droce_cc_dcqcn_mlx5_cnp_interval(2000000000ull), 50000);
	CU_ASSERT_EQUAL(droce_cc_dcqcn_check(&d), 0);
	/* by name, as the configuration and droce-sim pick one */
	CU_ASSERT_PTR_EQUAL(droce_cc_find(NULL, "dcqcn"), &droce_cc_dcqcn);
	CU_ASSERT_PTR_EQUAL(droce_cc_find(NULL, "timely"), &droce_cc_timely);
	CU_ASSERT_PTR_EQUAL(droce_cc_find(NULL, "none"), &droce_cc_none);
	CU_ASSERT_PTR_NULL(droce_cc_find(NULL, "cubic"));
	CU_ASSERT_PTR_NULL(droce_cc_find(NULL, NULL));
}

static void
test_end_to_end_ce(void)
{
	static uint8_t bufa[1 << 20], bufb[1 << 20];
	struct droce_dcqcn_params p = params();
	const struct droce_cc_state *cs;
	struct droce_dcqcn_stats st;
	struct droce_qp *qp[2];
	struct droce_mr *mr[2];
	struct droce_wc wc[16];
	struct eh_qp_opts o;
	struct eh_world w;
	unsigned int marked = 0, done = 0, i;
	int n;

	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	CU_ASSERT_EQUAL_FATAL(
		eh_cc_pair(&w, &droce_cc_dcqcn, &tp, &o, qp, mr, bufa, bufb, sizeof(bufa)), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp[0]);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(qp[0], &cs), &droce_cc_dcqcn);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(qp[1], NULL), &droce_cc_none); /* node 1 kept "none" */
	for (i = 0; i < sizeof(bufa); i++)
		bufa[i] = (uint8_t)(i * 7 + 3);
	w.n[0].filter = eh_mark_ce;
	w.n[0].filter_arg = &marked;
	for (i = 0; i < 8; i++) {
		struct droce_sge sge = { (uintptr_t)bufa + i * 131072, 131072,
					 droce_mr_lkey(mr[0]) };
		struct droce_send_wr wr = { .wr_id = i,
					    .sg_list = &sge,
					    .num_sge = 1,
					    .opcode = DROCE_WR_RDMA_WRITE,
					    .send_flags = DROCE_SEND_SIGNALED },
				     *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)bufb + i * 131072;
		wr.wr.rdma.rkey = droce_mr_rkey(mr[1]);
		CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bad), 0);
	}
	eh_run(&w, 2000000000ull);
	while ((n = eh_poll(&w.n[0], wc, 16)) > 0)
		for (i = 0; i < (unsigned int)n; i++)
			done += wc[i].status == DROCE_WC_SUCCESS;
	CU_ASSERT_EQUAL(done, 8);
	CU_ASSERT_EQUAL(memcmp(bufa, bufb, sizeof(bufa)), 0);
	CU_ASSERT(marked > 100);
	droce_cc_dcqcn_stats(cs, &st);
	printf("\n  %u CE-marked, %llu cuts, %llu CNPs ignored, rate %llu Mbit/s, deferred %llu ",
	       marked, (unsigned long long)st.cuts, (unsigned long long)st.cnp_ignored,
	       (unsigned long long)(st.rate_bps / 1000000),
	       (unsigned long long)droce_qp_counter(qp[0], DROCE_CNT_CC_DEFERRED));
	CU_ASSERT(droce_qp_counter(qp[0], DROCE_CNT_RP_CNP_HANDLED) > 0);
	CU_ASSERT(st.cuts > 0);
	CU_ASSERT(st.rate_bps < p.max_rate_bps);
	CU_ASSERT(droce_qp_counter(qp[0], DROCE_CNT_CC_DEFERRED) > 0);
	eh_fini(&w);
	droce_cc_dcqcn_defaults(&p, 0);
	configure(&p);
}

DROCE_TEST_MAIN("cc_dcqcn", DROCE_TEST(test_cut_and_monitor_period), DROCE_TEST(test_cut_per_rtt),
		DROCE_TEST(test_cut_from_sent_rate), DROCE_TEST(test_increase_share),
		DROCE_TEST(test_target_cut), DROCE_TEST(test_level_cut), DROCE_TEST(test_first_cut),
		DROCE_TEST(test_paced_cut), DROCE_TEST(test_lone_flow_regains),
		DROCE_TEST(test_clamp_and_timer_only), DROCE_TEST(test_alpha_decays_without_cnp),
		DROCE_TEST(test_increase_stages), DROCE_TEST(test_pacing),
		DROCE_TEST(test_pacing_across_stages), DROCE_TEST(test_configure_checks),
		DROCE_TEST(test_end_to_end_ce))
