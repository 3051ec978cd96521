/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * READ recovery under loss (seeded; a failing run prints its seed and droce-sim replays it):
 * 64 KiB READs, max_rd_atomic of them in flight, at 0, 1 and 5 % independent loss each way.
 * A lost READ response costs one re-request of the missing run, not the READ again nor the
 * responses behind it: the responses delivered stay within 1.05x of those the READs need at
 * 1 % loss and 1.15x at 5 % (before: 27x), and READ takes no longer than WRITE (go-back-N) on
 * the same link and loss. A READ has one re-request out at a time, from its first missing
 * response (droce_comp_rd.c: a responder such as rxe refuses one below an earlier one), so a
 * second gap in a READ waits for the first one's answer or spans the kept responses between;
 * re-requests therefore leave out of PSN order, and a PSN is asked for again only once every
 * re-request that asked for it is answered (droce_rd_heard). Over seeds 7000-7011 (droce-sim
 * --ops read --one-way --qps 1 --msgs 100 --size 65536-65536 --rd-atomic 16 --loss 5) READ
 * completes in 3.42 ms on average, WRITE in 6.89 ms, with 1.047x the responses needed; a PSN
 * asked for again whenever a re-request for a higher one was answered took 9.07 ms and 1.40x.
 * The reference model checks every byte placed, as in every simulator run.
 *
 * A lost tail has no later response to show it: the last response of a READ, the answer to a
 * re-request, an atomic's response. Targeted cases on a standard wire (go-back-N, as against
 * rxe) with the local ACK timeout of rdma_cm's default (code 18, 1.07 s) check that the RTO
 * from measured round trips asks for it again within milliseconds, spending no retry.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_drop.h"
#include "droce_test.h"

#include "sim_scen.h"
#include "sim_work.h"

#define SEEDS 3
#define MS    1000000ull
#define PSN0  0x100u /* sim_qp_params_default's first PSN */

static void
cfg_for(struct sim_cfg *c, uint64_t seed, enum sim_op op, double loss, uint8_t rd_atomic)
{
	sim_cfg_default(c);
	c->seed = seed;
	c->ops = 1u << op;
	c->one_way = true;
	c->qps = 1;
	c->msgs = 100;
	c->size_min = c->size_max = 65536;
	c->sq_depth = 256;
	c->rd_atomic = rd_atomic;
	c->link.loss = loss;
}

static bool
run(const struct sim_cfg *c, struct sim_summary *s)
{
	if (sim_run(c, s) == 0)
		return true;
	fprintf(stderr, "\nseed %" PRIu64 ": ", c->seed);
	sim_summary_print(c, s, stderr);
	return false;
}

static void
check(double loss, double max_ratio, double max_time, uint8_t rd_atomic)
{
	uint64_t seed;

	for (seed = 7000; seed < 7000 + SEEDS; seed++) {
		struct sim_cfg cr, cw;
		struct sim_summary r, w;
		double ratio;

		cfg_for(&cr, seed, SIM_OP_READ, loss, rd_atomic);
		cfg_for(&cw, seed, SIM_OP_WRITE, loss, rd_atomic);
		CU_ASSERT_FATAL(run(&cr, &r));
		CU_ASSERT_FATAL(run(&cw, &w));
		CU_ASSERT_FATAL(r.read_needed == 100 * 64);
		ratio = (double)r.wire.read_resp_rx / (double)r.read_needed;
		printf("\n  seed %" PRIu64
		       " loss %.0f%% rd_atomic %u: READ responses %.3fx needed, "
		       "%" PRIu64 " re-requests, READ %.3f ms (%.2f Gbit/s), WRITE %.3f ms "
		       "(%.2f Gbit/s)",
		       seed, loss * 100, rd_atomic, ratio, r.wire.read_rereq, r.vtime_ns / 1e6,
		       r.bytes * 8.0 / r.vtime_ns, w.vtime_ns / 1e6, w.bytes * 8.0 / w.vtime_ns);
		if (ratio > max_ratio || r.vtime_ns > max_time * w.vtime_ns) {
			fprintf(stderr,
				"\nseed %" PRIu64 " loss %.0f%% rd_atomic %u: READ responses "
				"%.2fx needed (bound %.2f), READ %.3f ms, WRITE %.3f ms\n",
				seed, loss * 100, rd_atomic, ratio, max_ratio, r.vtime_ns / 1e6,
				w.vtime_ns / 1e6);
			CU_FAIL("READ recovery");
		}
		/* A lost response run is asked for again a few times at most, never once per
		 * READ or response in flight behind it. */
		if (r.wire.read_rereq > 3 * (r.net.lost + 1)) {
			fprintf(stderr,
				"\nseed %" PRIu64 " loss %.0f%%: %" PRIu64 " re-requests for "
				"%" PRIu64 " frames lost\n",
				seed, loss * 100, r.wire.read_rereq, r.net.lost);
			CU_FAIL("re-requests");
		}
	}
}

static void
test_read_no_loss(void)
{
	check(0.0, 1.0, 2.0, 16);
}

static void
test_read_loss1(void)
{
	check(0.01, 1.05, 1.0, 16);
}

static void
test_read_loss5(void)
{
	check(0.05, 1.15, 1.0, 16);
}

/* As many in flight as rxe offers: the gaps are further behind the responder's queue. */
static void
test_read_loss5_rd128(void)
{
	check(0.05, 1.15, 1.0, 128);
}

/* The standard-wire fixture with the local ACK timeout at code 18. */
static void
tail_setup(struct scen *s)
{
	struct sim_qp_params p;

	sim_qp_params_default(&p);
	p.timeout = 18;
	scen_setup_rc(s, &p);
}

/* Node 0's one completion, within bound_ns of start; no local ACK timeout, one early resend. */
static void
tail_check(struct scen *s, uint64_t start, uint64_t bound_ns)
{
	CU_ASSERT_EQUAL_FATAL(scen_run_until(s, 0, 1, 2000 * MS), SIM_DONE);
	scen_expect_wc(s, 0, 0, 2, DROCE_WC_SUCCESS);
	printf(" (done in %.3f ms)", (double)(s->wc_t[0][0] - start) / 1e6);
	CU_ASSERT(s->wc_t[0][0] - start < bound_ns);
	CU_ASSERT_EQUAL(scen_cnt(s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
	CU_ASSERT_EQUAL(scen_cnt(s, 0, DROCE_CNT_RTO_RESEND), 1);
}

/* A READ of 16 responses, the last one lost `times` times (twice: the re-request's answer
 * too). Nothing comes after it; the READ's own first response gave the RTO its round trip. */
static void
read_tail(uint32_t lost, unsigned int times)
{
	struct scen s;
	uint64_t start;

	tail_setup(&s);
	scen_pick(&s, 1, lost, SIM_FATE_LOST, times);
	start = s.net.now;
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_READ, 2, 0, 16 * 1024, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	tail_check(&s, start, 5 * MS);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1], 16 * 1024) == 0);
	CU_ASSERT(scen_untouched(&s, 0, 16 * 1024, 4096));
	scen_fini(&s);
}

static void
test_read_tail_lost(void)
{
	read_tail(PSN0 + 15, 1);
}

/* A MIDDLE lost, and the answer to its re-request lost as well. */
static void
test_read_rereq_lost(void)
{
	read_tail(PSN0 + 5, 2);
}

/* An atomic's response lost: the responder answers the resend from what it kept (IBTA
 * 9.7.5.1.3), the target moves once. A WRITE before it gives the RTO its round trip. */
static void
test_atomic_resp_lost(void)
{
	const uint32_t t = 65536;
	uint64_t orig, now, res, start;
	struct scen s;

	tail_setup(&s);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 1, 8192, 64, scen_addr(&s, 1, 8192),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 0, 1, 10 * MS), SIM_DONE);
	s.nwc[0] = 0;
	memcpy(&orig, s.mem[1] + t, 8);
	scen_pick(&s, 1, PSN0 + 1, SIM_FATE_LOST, 1);
	start = s.net.now;
	CU_ASSERT_EQUAL(scen_post_atomic(&s, 0, DROCE_WR_ATOMIC_FETCH_AND_ADD, 2, t,
					 scen_addr(&s, 1, t), droce_mr_rkey(s.mr[1]), 5, 0),
			0);
	tail_check(&s, start, 5 * MS);
	memcpy(&now, s.mem[1] + t, 8);
	memcpy(&res, s.mem[0] + t, 8);
	CU_ASSERT_EQUAL(now, orig + 5);
	CU_ASSERT_EQUAL(res, orig);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_ATOMIC_REPLAYED), 1);
	scen_fini(&s);
}

/* Re-requests leave out of PSN order: a READ's second gap waits for the answer to its first,
 * while later READs' gaps are asked for at once. Three READs of 16 responses; READ A loses
 * responses 2 and 13 (too far apart for one re-request), READ B loses 20, READ C 37. The
 * re-requests leave as 2, 20, 37, then 13 once 2 is answered; the answers to 20 and 37 come
 * while 13's is on its way and say nothing of 13. Each gap is asked for once, no response
 * comes twice, and 13 is asked for as soon as 2 is answered. (Before, 13 waited for 20's
 * answer, and 37's answer had it asked for again while its answer was on its way.) */
static void
test_read_rereq_order(void)
{
	const uint32_t lost[] = { PSN0 + 2, PSN0 + 13, PSN0 + 20, PSN0 + 37 };
	/* a round trip longer than the READs take to send: the responder is idle when each
	 * re-request comes, so the answers to 20 and 37 trail 2's by the responses between */
	struct sim_link_cfg link = scen_clean_link;
	struct sim_qp_params p;
	uint64_t start;
	struct scen s;
	unsigned int i;

	link.rate_bps = 1000000000ull;
	link.delay_ns = 200000;
	sim_qp_params_default(&p);
	p.timeout = 18;
	CU_ASSERT_FATAL(scen_init(&s, 1, &link, DROCE_QPT_RC, &p, 0) == 0);
	for (i = 0; i < 4; i++)
		scen_pick(&s, 1, lost[i], SIM_FATE_LOST, 1);
	start = s.net.now;
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_READ, 2 + i, i * 16384, 16384,
					  scen_addr(&s, 1, i * 16384), droce_mr_rkey(s.mr[1]), 0),
				0);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 0, 3, 100 * MS), SIM_DONE);
	for (i = 0; i < 3; i++)
		scen_expect_wc(&s, 0, i, 2 + i, DROCE_WC_SUCCESS);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1], 3 * 16384) == 0);
	printf(" (%" PRIu64 " re-requests, %" PRIu64 " stale, done in %.3f ms)",
	       scen_cnt(&s, 0, DROCE_CNT_READ_REREQ),
	       droce_dev_drops(s.ep[0].dev, DROCE_DROP_RESP_STALE),
	       (double)(s.wc_t[0][0] - start) / 1e6);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_READ_REREQ), 4);
	CU_ASSERT_EQUAL(droce_dev_drops(s.ep[0].dev, DROCE_DROP_RESP_STALE), 0);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RTO_RESEND), 0);
	/* READ A's last answer (13) comes three one-way trips after its gap at 2 is seen:
	 * 2's re-request out, its answer back, 13's re-request out, its answer back */
	CU_ASSERT(s.wc_t[0][0] - start < 1300000);
	scen_fini(&s);
}

DROCE_TEST_MAIN("sim_read_loss", DROCE_TEST(test_read_no_loss), DROCE_TEST(test_read_loss1),
		DROCE_TEST(test_read_loss5), DROCE_TEST(test_read_loss5_rd128),
		DROCE_TEST(test_read_tail_lost), DROCE_TEST(test_read_rereq_lost),
		DROCE_TEST(test_atomic_resp_lost), DROCE_TEST(test_read_rereq_order))
