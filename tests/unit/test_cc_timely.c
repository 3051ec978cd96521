/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TIMELY (stack/droce_cc_timely.c) against Algorithm 1 of the paper: the first sample only
 * sets the reference, below T_low the rate grows by delta, above T_high it falls by
 * beta (1 - T_high / rtt), in between a rising RTT cuts by beta x the normalised gradient and a
 * flat or falling one adds delta (hai_n delta from the fifth in a row); one decrease per round
 * trip; clamps; pacing. Then the
 * engine's round-trip samples (on_rtt): one per WRITE, READ and atomic, none for one whose last
 * request packet was resent.
 */
#include <string.h>

#include "droce_test.h"
#include "engine_harness.h"

/* The parameters the state blocks and the device of a test run with. */
static union droce_cc_params tp;

static int
configure(const struct droce_timely_params *p)
{
	tp.timely = *p;
	return droce_cc_timely_check(p);
}

static void
start(struct droce_cc_state *s, uint64_t now)
{
	eh_cc_start(&droce_cc_timely, s, &tp, now);
}

/* sample times 20 ms apart: every timed packet left after the previous sample arrived */
#define T(k) ((uint64_t)(k)*20000000ull)
/* samples T() apart are many round trips apart: an increase takes the most steps */
#define STEPS 64

static struct droce_timely_params
params(void)
{
	struct droce_timely_params p;

	droce_cc_timely_defaults(&p, 0);
	p.line_rate_bps = p.max_rate_bps = 10000000000ull;
	p.min_rate_bps = 100000000ull;
	return p;
}

static struct droce_timely_stats
stats(const struct droce_cc_state *s)
{
	struct droce_timely_stats st;

	droce_cc_timely_stats(s, &st);
	return st;
}

static void
near(uint64_t got, double want)
{
	CU_ASSERT(got > want * 0.999 && got < want * 1.001);
	if (!(got > want * 0.999 && got < want * 1.001))
		printf("\n  got %llu, want %.0f ", (unsigned long long)got, want);
}

static void
test_rules(void)
{
	struct droce_timely_params p = params();
	struct droce_cc_state s;
	double r;
	int i;

	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, p.max_rate_bps);
	/* above T_high from the start: the first sample is only the reference */
	droce_cc_timely.on_rtt(&s, 1000000, T(1));
	CU_ASSERT_EQUAL(stats(&s).rate_bps, p.max_rate_bps);
	/* 1 ms > T_high 500 us: rate (1 - 0.8 (1 - 0.5)) = 0.6 rate */
	droce_cc_timely.on_rtt(&s, 1000000, T(2));
	r = 1e10 * (1 - 819.0 / 1024 * 0.5);
	near(stats(&s).rate_bps, r);
	/* below T_low: + delta per round trip since the previous sample */
	droce_cc_timely.on_rtt(&s, 30000, T(3));
	r += 1e7 * STEPS;
	near(stats(&s).rate_bps, r);
	/* between: a rising RTT (30 -> 100 us): the EWMA of the change, 0.875 x 70 us + 0.125 x
	 * (the earlier change, -970 us x 0.875 + 0), normalised by 20 us, times beta */
	{
		double d1 = 0.875 * (1000000 - 1000000); /* second sample: no change */
		double d2 = 0.125 * d1 + 0.875 * (30000 - 1000000.0);
		double d3 = 0.125 * d2 + 0.875 * (100000 - 30000.0);
		double g = d3 / 20000;

		droce_cc_timely.on_rtt(&s, 100000, T(4));
		if (g > 0)
			r -= r * 819.0 / 1024 * g;
		else
			r += 1e7;
		near(stats(&s).rate_bps, r);
	}
	/* flat RTT in between: + delta each, hai_n delta from the fifth in a row */
	droce_cc_timely.on_rtt(&s, 100000, T(5)); /* gradient decays but may stay > 0 once */
	r = (double)stats(&s).rate_bps;
	/* (one round trip apart: one step each) */
	for (i = 0; i < 12; i++) {
		uint64_t before = stats(&s).rate_bps;

		droce_cc_timely.on_rtt(&s, 100000, T(5) + (uint64_t)(i + 1) * 100000);
		if (stats(&s).rate_bps <= before)
			continue; /* the EWMA still positive: a (shrinking) cut */
		CU_ASSERT(stats(&s).rate_bps - before == 10000000ull ||
			  stats(&s).rate_bps - before == 50000000ull);
	}
	/* and the run of five reached hyper increase: the last step was hai_n delta */
	{
		uint64_t before = stats(&s).rate_bps;

		droce_cc_timely.on_rtt(&s, 100000, T(5) + 13 * 100000);
		CU_ASSERT_EQUAL(stats(&s).rate_bps - before, 5 * 10000000ull);
	}
	/* clamps */
	for (i = 0; i < 200; i++)
		droce_cc_timely.on_rtt(&s, 10000000, T(200 + i));
	CU_ASSERT_EQUAL(stats(&s).rate_bps, p.min_rate_bps);
	for (i = 0; i < 2000; i++)
		droce_cc_timely.on_rtt(&s, 1000, T(1000 + i));
	CU_ASSERT_EQUAL(stats(&s).rate_bps, p.max_rate_bps);
}

/* An increase counts the round trips since the previous sample (a QP cut low hears few); a
 * steep gradient cuts by beta at most, not to the floor. */
static void
test_steps_and_steep_gradient(void)
{
	struct droce_timely_params p = params();
	struct droce_cc_state s;
	uint64_t r;

	p.max_rate_bps = p.line_rate_bps = 100000000000ull;
	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_timely.on_rtt(&s, 1000000, 1000000); /* reference */
	droce_cc_timely.on_rtt(&s, 1000000, 2000000); /* T_high: cut to 0.6 */
	r = stats(&s).rate_bps;
	/* below T_low, 30 us: one round trip later (20 us min_rtt counts as one) one delta,
	 * three later three */
	droce_cc_timely.on_rtt(&s, 30000, 2030000);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, r + p.delta_bps);
	droce_cc_timely.on_rtt(&s, 30000, 2120000);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, r + 4 * p.delta_bps);
	/* a long silence: TIMELY_MAX_STEPS at most */
	droce_cc_timely.on_rtt(&s, 30000, 1000000000);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, r + (4 + STEPS) * p.delta_bps);
	r = stats(&s).rate_bps;
	/* between T_low and T_high, the RTT jumping 30 -> 400 us (a gradient far above 1):
	 * rate (1 - beta), not the floor */
	droce_cc_timely.on_rtt(&s, 400000, 1000400000);
	near(stats(&s).rate_bps, (double)r * (1024 - p.beta) / 1024);
	CU_ASSERT_EQUAL(stats(&s).decreases, 2);
	/* defaults scale to the link: delta link / 1000; at 25 Gbit/s and above T_low 10 us,
	 * T_high 100 us, min_rtt 50 us, below stretched by 25G / link; unknown: the paper's */
	droce_cc_timely_defaults(&p, 25000000000ull);
	CU_ASSERT_EQUAL(p.delta_bps, 25000000ull);
	CU_ASSERT_EQUAL(p.t_low_ns, 10000);
	CU_ASSERT_EQUAL(p.t_high_ns, 100000);
	CU_ASSERT_EQUAL(p.min_rtt_ns, 50000);
	droce_cc_timely_defaults(&p, 100000000000ull);
	CU_ASSERT_EQUAL(p.t_low_ns, 10000);
	droce_cc_timely_defaults(&p, 2000000000ull);
	CU_ASSERT_EQUAL(p.delta_bps, 2000000ull);
	CU_ASSERT_EQUAL(p.t_low_ns, 125000);
	CU_ASSERT_EQUAL(p.t_high_ns, 1250000);
	CU_ASSERT_EQUAL(p.min_rtt_ns, 625000);
	CU_ASSERT_EQUAL(droce_cc_timely_check(&p), 0);
	droce_cc_timely_defaults(&p, 0);
	CU_ASSERT_EQUAL(p.t_low_ns, 50000);
	CU_ASSERT_EQUAL(p.t_high_ns, 500000);
	CU_ASSERT_EQUAL(p.min_rtt_ns, 20000);
	CU_ASSERT_EQUAL(droce_cc_timely_check(&p), 0);
}

/* At most one decrease per round trip: a sample whose packet left before the last cut is not
 * cut for again. */
static void
test_once_per_rtt(void)
{
	struct droce_timely_params p = params();
	struct droce_cc_state s;
	struct droce_timely_stats st;
	uint64_t r;

	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 0);
	droce_cc_timely.on_rtt(&s, 2000000, T(1));
	droce_cc_timely.on_rtt(&s, 2000000, T(2)); /* cut at T(2) */
	st = stats(&s);
	r = st.rate_bps;
	CU_ASSERT_EQUAL(st.decreases, 1);
	/* 1 ms later, a 2 ms round trip: its packet left before the cut */
	droce_cc_timely.on_rtt(&s, 2000000, T(2) + 1000000);
	CU_ASSERT_EQUAL(stats(&s).rate_bps, r);
	CU_ASSERT_EQUAL(stats(&s).decreases, 1);
	/* one sent after it cuts again */
	droce_cc_timely.on_rtt(&s, 2000000, T(2) + 3000000);
	CU_ASSERT(stats(&s).rate_bps < r);
	CU_ASSERT_EQUAL(stats(&s).decreases, 2);
}

static void
test_pacing_and_config(void)
{
	struct droce_timely_params p = params();
	struct droce_cc_state s;

	CU_ASSERT_EQUAL_FATAL(configure(&p), 0);
	start(&s, 100);
	droce_cc_timely.on_send(&s, 1000, 100);
	CU_ASSERT_EQUAL(droce_cc_timely.next_send_time(&s), 100); /* line rate */
	droce_cc_timely.on_rtt(&s, 1000000, T(1));
	droce_cc_timely.on_rtt(&s, 1000000, T(2)); /* 6 Gbit/s or so */
	droce_cc_timely.on_send(&s, 1000, 200);
	CU_ASSERT_EQUAL(droce_cc_timely.next_send_time(&s),
			200 + 1000ull * 8 * 1000000000ull / stats(&s).rate_bps);
	p.t_low_ns = p.t_high_ns;
	CU_ASSERT_EQUAL(configure(&p), -EINVAL);
	p = params();
	p.beta = 2000;
	CU_ASSERT_EQUAL(configure(&p), -EINVAL);
	CU_ASSERT_EQUAL(droce_cc_timely_check(NULL), -EINVAL);
	droce_cc_timely_defaults(&p, 0);
	CU_ASSERT_EQUAL(configure(&p), 0);
}

/* The engine's samples: 32 RC WRITEs, READs (8 KiB) or fetch-and-adds from node 0 with TIMELY;
 * with loss, resent ones not timed. */
static void
engine_samples(enum droce_wr_opcode opc, unsigned int loss, uint64_t *samples, uint64_t *rtt,
	       uint64_t *retrans)
{
	static uint8_t bufa[1 << 18], bufb[1 << 18];
	const struct droce_cc_state *cs;
	struct droce_timely_stats st;
	struct droce_qp *qp[2];
	struct droce_mr *mr[2];
	struct droce_wc wc[16];
	struct eh_qp_opts o;
	struct eh_world w;
	unsigned int i, done = 0;
	int n;

	CU_ASSERT_EQUAL_FATAL(
		eh_cc_pair(&w, &droce_cc_timely, &tp, &o, qp, mr, bufa, bufb, sizeof(bufa)), 0);
	CU_ASSERT_PTR_EQUAL_FATAL(droce_qp_cc(qp[0], &cs), &droce_cc_timely);
	memset(bufa, 0, sizeof(bufa));
	memset(bufb, 0, sizeof(bufb));
	for (i = 0; i < sizeof(bufa); i++)
		(opc == DROCE_WR_RDMA_READ ? bufb : bufa)[i] = (uint8_t)(i * 11 + 1);
	w.n[0].loss = loss;
	w.n[1].loss = loss;
	for (i = 0; i < 32; i++) {
		bool atomic = opc == DROCE_WR_ATOMIC_FETCH_AND_ADD;
		struct droce_sge sge = { (uintptr_t)bufa + i * 8192, atomic ? 8 : 8192,
					 droce_mr_lkey(mr[0]) };
		struct droce_send_wr wr = { .wr_id = i,
					    .sg_list = &sge,
					    .num_sge = 1,
					    .opcode = opc,
					    .send_flags = DROCE_SEND_SIGNALED },
				     *bad;

		if (atomic) {
			wr.wr.atomic.remote_addr = (uintptr_t)bufb + i * 8192;
			wr.wr.atomic.rkey = droce_mr_rkey(mr[1]);
			wr.wr.atomic.compare_add = i + 1;
		} else {
			wr.wr.rdma.remote_addr = (uintptr_t)bufb + i * 8192;
			wr.wr.rdma.rkey = droce_mr_rkey(mr[1]);
		}
		CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bad), 0);
	}
	eh_run(&w, 10000000000ull);
	while ((n = eh_poll(&w.n[0], wc, 16)) > 0)
		for (i = 0; i < (unsigned int)n; i++)
			done += wc[i].status == DROCE_WC_SUCCESS;
	CU_ASSERT_EQUAL(done, 32);
	if (opc == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		/* each added once (a resent one is answered from the responder's saved result) */
		for (i = 0; i < 32; i++) {
			uint64_t v;

			memcpy(&v, bufb + i * 8192, sizeof(v));
			CU_ASSERT_EQUAL(v, (uint64_t)(i + 1));
		}
	} else {
		CU_ASSERT_EQUAL(memcmp(bufa, bufb, sizeof(bufa)), 0);
	}
	droce_cc_timely_stats(cs, &st);
	*samples = st.samples;
	*rtt = st.prev_rtt_ns;
	*retrans = droce_qp_counter(qp[0], DROCE_CNT_RETRANSMITTED_PKTS);
	eh_fini(&w);
}

static void
engine_rtt_samples(enum droce_wr_opcode opc, const char *what)
{
	uint64_t samples, rtt, retrans;

	engine_samples(opc, 0, &samples, &rtt, &retrans);
	printf("\n  %s clean: %llu samples, last %llu ns", what, (unsigned long long)samples,
	       (unsigned long long)rtt);
	/* a sample per message */
	CU_ASSERT_EQUAL(samples, 32);
	CU_ASSERT(rtt > 0 && rtt < 1000000);
	CU_ASSERT_EQUAL(retrans, 0);
	engine_samples(opc, 20, &samples, &rtt, &retrans); /* 2 % loss each way */
	printf("; 2 %% loss: %llu samples, %llu resent ", (unsigned long long)samples,
	       (unsigned long long)retrans);
	/* go-back-N resent some messages' last packets: those are not timed */
	CU_ASSERT(retrans > 0);
	CU_ASSERT(samples > 0 && samples < 32);
}

static void
test_engine_rtt_samples(void)
{
	engine_rtt_samples(DROCE_WR_RDMA_WRITE, "WRITE");
	engine_rtt_samples(DROCE_WR_RDMA_READ, "READ");
	engine_rtt_samples(DROCE_WR_ATOMIC_FETCH_AND_ADD, "fetch-and-add");
}

DROCE_TEST_MAIN("cc_timely", DROCE_TEST(test_rules), DROCE_TEST(test_once_per_rtt),
		DROCE_TEST(test_steps_and_steep_gradient), DROCE_TEST(test_pacing_and_config),
		DROCE_TEST(test_engine_rtt_samples))
