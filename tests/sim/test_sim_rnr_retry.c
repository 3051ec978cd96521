/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two requester retry budgets stay apart during a long RNR wait on a lossy link
 * (IBTA 9.7.5.2.8 RNR NAK retry count, 9.7.6.1.3 local ACK timeout and its retry count):
 * - a lost resend costs one transport retry (retry_cnt), never an RNR retry;
 * - a valid RNR NAK shows the responder alive and answering the request, so it reloads the
 *   transport retry budget and costs only an RNR retry (unless rnr_retry is 7: infinite).
 * Each outage below is timed from an RNR NAK's arrival so that exactly one resend is lost:
 * the resend goes out one RNR timer (1.28 ms) after the NAK and the link comes back before
 * the local ACK timeout (1.05 ms later) resends it again.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define US 1000ull
#define MS 1000000ull

static void
setup(struct scen *s, uint8_t retry_cnt, uint8_t rnr_retry)
{
	struct sim_qp_params p;

	sim_qp_params_default(&p);
	p.retry_cnt = retry_cnt;
	p.rnr_retry = rnr_retry;
	p.min_rnr_timer = 14; /* 1.28 ms (IBTA 9.7.5.2.8 table 45) */
	p.timeout = 8;	      /* 4.096 us * 2^8 = 1.049 ms (IBTA 9.7.6.1.3) */
	scen_setup_rc(s, &p);
}

/* Advance virtual time by ns (a wake-up makes the clock reach the end even when idle). */
static void
run_for(struct scen *s, uint64_t ns)
{
	s->wake = s->net.now + ns;
	scen_run_until(s, 0, 1, ns);
}

/* Run in 10 us steps until node 0 has taken `n` RNR NAKs (or completed something). */
static void
wait_rnr(struct scen *s, uint64_t n)
{
	uint64_t t;

	for (t = 0; t < 20 * MS && scen_cnt(s, 0, DROCE_CNT_RCVD_RNR_ERR) < n && s->nwc[0] == 0;
	     t += 10 * US)
		run_for(s, 10 * US);
}

/* Right after an RNR NAK: requests toward node 1 are lost for 2 ms, which swallows exactly the
 * next resend (at +1.28 ms); the timeout's resend (at +2.33 ms) goes through. */
static void
outage_after_rnr(struct scen *s, uint64_t n_rnr)
{
	wait_rnr(s, n_rnr);
	s->net.node[1].down.cfg.down = true;
	run_for(s, 2 * MS);
	s->net.node[1].down.cfg.down = false;
}

static void
post_recv(struct scen *s)
{
	CU_ASSERT_EQUAL(scen_post_recv(s, 1, 77, 16384, 4096), 0);
}

/*
 * retry_cnt 1, rnr_retry 7: three separate lost resends during an RNR wait. Each costs one
 * local ACK timeout; the RNR NAK answering the next resend reloads the one transport retry, so
 * the SEND completes once a receive is posted. Before the fix the second timeout found the
 * budget spent (only an ACK advancing the window refilled it) and ended RETRY_EXC_ERR.
 */
static void
test_rnr_wait_survives_losses(void)
{
	struct scen s;
	unsigned int k;

	setup(&s, 1, 7);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 300, 0, 0, 0), 0);
	for (k = 0; k < 3; k++)
		outage_after_rnr(&s, 1 + 2 * k); /* the lost resend's retry is NAKed too */
	if (s.nwc[0] != 0)
		printf("\n    completed early: %s after %llu RNR NAKs, %llu timeouts\n",
		       sim_wc_status_name(s.wc[0][0].status),
		       (unsigned long long)scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR),
		       (unsigned long long)scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR));
	CU_ASSERT_EQUAL_FATAL(s.nwc[0], 0);
	wait_rnr(&s, 7);
	post_recv(&s);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_SUCCESS);
	/* One lost resend per outage, each retried once after the local ACK timeout. */
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 3);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_COMPLETER_RETRY_ERR), 3);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_EXCEEDED_ERR), 0);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 0);
	CU_ASSERT_EQUAL(s.net.node[1].down.st.down_lost, 3);
	/* Every request that arrived before the receive was RNR NAKed; none was lost after. */
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), 7);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), s.trace.st.rnr_naks);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_SEND_RNR_ERR), s.trace.st.rnr_naks);
	CU_ASSERT_EQUAL(s.trace.st.req_pkts, s.trace.st.rnr_naks + 3 + 1);
	CU_ASSERT_EQUAL(scen_run_until(&s, 1, 1, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 1, 0, 77, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(s.wc[1][0].byte_len, 300);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + 16384, 300) == 0);
	scen_fini(&s);
}

/*
 * retry_cnt 0: no transport retry at all. A lost resend during the RNR wait ends the WR with
 * RETRY_EXC_ERR at its first timeout, however many RNR NAKs came before (the reload gives back
 * retry_cnt, never more).
 */
static void
test_rnr_wait_retry_cnt_zero(void)
{
	struct scen s;

	setup(&s, 0, 7);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 300, 0, 0, 0), 0);
	wait_rnr(&s, 3);
	s.net.node[1].down.cfg.down = true;
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), 3);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_COMPLETER_RETRY_ERR), 0);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_EXCEEDED_ERR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 0);
	CU_ASSERT_EQUAL(s.net.node[1].down.st.down_lost, 1);
	scen_fini(&s);
}

/*
 * retry_cnt 7, rnr_retry 3: the RNR budget is not reloaded by the RNR NAKs themselves nor
 * spent by the timeouts. First try + 3 RNR retries = 4 RNR NAKs, the 4th ends the WR with
 * RNR_RETRY_EXC_ERR; the two lost resends in between cost two local ACK timeouts only.
 */
static void
test_rnr_budget_apart_from_timeouts(void)
{
	struct scen s;

	setup(&s, 7, 3);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 300, 0, 0, 0), 0);
	outage_after_rnr(&s, 1);
	outage_after_rnr(&s, 2);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 20 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_RNR_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), 4);
	CU_ASSERT_EQUAL(s.trace.st.rnr_naks, 4);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 2);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_EXCEEDED_ERR), 0);
	CU_ASSERT_EQUAL(s.net.node[1].down.st.down_lost, 2);
	scen_fini(&s);
}

/*
 * rnr_retry 2 with every frame toward the requester delivered twice: the copy of an RNR NAK
 * arrives while the requester already waits on it and must not spend a second RNR retry.
 * First try + 2 retries = 3 requests, each RNR NAKed (6 NAK frames received), then
 * RNR_RETRY_EXC_ERR.
 */
static void
test_rnr_duplicate_nak(void)
{
	struct scen s;

	setup(&s, 7, 2);
	s.net.node[0].down.cfg.dup = 1.0;
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 300, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 20 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_RNR_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(s.trace.st.req_pkts, 3);
	CU_ASSERT_EQUAL(s.trace.st.rnr_naks, 3);
	CU_ASSERT_EQUAL(s.net.node[0].down.st.duplicated, 3);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_SEND_RNR_ERR), 3);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
	scen_fini(&s);
}

DROCE_TEST_MAIN("sim_rnr_retry", DROCE_TEST(test_rnr_wait_survives_losses),
		DROCE_TEST(test_rnr_wait_retry_cnt_zero),
		DROCE_TEST(test_rnr_budget_apart_from_timeouts), DROCE_TEST(test_rnr_duplicate_nak))
