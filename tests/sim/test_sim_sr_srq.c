/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat on a shared receive queue (stack/droce_sr_srq.c): SEND packets past a gap
 * are placed in SRQ WQEs taken ahead in receive ordinal order; completions still come in
 * message order, each message in the WQE its packets were placed in; WQEs taken ahead are
 * flushed when the QP fails. One chosen frame lost on a clean link.
 */
#include <string.h>

#include "droce_counters.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define MS   1000000ull
#define PSN0 0x100u	  /* sim_qp_params_default's first PSN */
#define SEG  (1024u - 16) /* data per SEND packet: the path MTU less the placement header */
#define RBUF 0x10000u	  /* node 1's receive buffers: 8 KiB each from here */

/* RC with selective repeat and an SRQ on both nodes; the handshake WRITE done (its ACK lets
 * the requester send placement headers), then `nrecv` receives of 8 KiB posted to node 1's
 * SRQ (wr_id 10, 11, ...); the first frame at PSN0 + 1 is lost `times` times. */
static void
setup(struct scen *s, unsigned int nrecv, unsigned int times)
{
	struct sim_qp_params p;
	unsigned int i;

	sim_qp_params_default(&p);
	p.sr = true;
	p.srq = true;
	scen_setup_rc(s, &p);
	CU_ASSERT_EQUAL_FATAL(scen_post(s, 0, DROCE_WR_RDMA_WRITE, 99, SCEN_MEM - 8, 8,
					scen_addr(s, 1, SCEN_MEM - 8), droce_mr_rkey(s->mr[1]), 0),
			      0);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(s, 0, 1, 10 * MS), SIM_DONE);
	CU_ASSERT_EQUAL_FATAL(scen_cnt(s, 0, DROCE_CNT_SR_PEER), 1);
	s->nwc[0] = 0;
	for (i = 0; i < nrecv; i++)
		CU_ASSERT_EQUAL_FATAL(scen_post_recv(s, 1, 10 + i, RBUF + i * 8192, 8192), 0);
	if (times != 0)
		scen_pick(s, 0, PSN0 + 1, SIM_FATE_LOST, times);
}

/* Three 2-packet SENDs, the first one's FIRST lost: the five packets after it are kept, placed
 * in the SRQ WQEs of their ordinals (taken ahead), and only the FIRST goes again; the receives
 * complete in order, each with its own message. */
static void
test_srq_sends_past_gap(void)
{
	struct scen s;
	unsigned int i;

	setup(&s, 4, 1);
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(
			scen_post(&s, 0, DROCE_WR_SEND, 1 + i, i * 2 * SEG, 2 * SEG, 0, 0, 0), 0);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 0, 3, 50 * MS), SIM_DONE);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 1, 3, 10 * MS), SIM_DONE);
	for (i = 0; i < 3; i++) {
		scen_expect_wc(&s, 0, i, 1 + i, DROCE_WC_SUCCESS);
		scen_expect_wc(&s, 1, i, 10 + i, DROCE_WC_SUCCESS);
		CU_ASSERT_EQUAL(s.wc[1][i].byte_len, 2 * SEG);
		CU_ASSERT(memcmp(s.mem[0] + i * 2 * SEG, s.mem[1] + RBUF + i * 8192, 2 * SEG) == 0);
	}
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_SR_KEPT), 5);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRANSMITTED_PKTS), 1);
	CU_ASSERT(scen_untouched(&s, 1, RBUF + 3 * 8192, 8192)); /* wr 13 stays in the SRQ */
	scen_fini(&s);
}

/* Two SENDs, one SRQ WQE: the second message's packets find none to take ahead and are
 * dropped, not kept; the first message completes once its FIRST is resent, the second once
 * resent after a second WQE is posted; both land whole, in order. */
static void
test_srq_empty_ahead(void)
{
	struct scen s;

	setup(&s, 1, 1);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 1, 0, 2 * SEG, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 2, 2 * SEG, 2 * SEG, 0, 0, 0), 0);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 1, 1, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 1, 0, 10, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_SR_KEPT), 1); /* the first one's LAST alone */
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 11, RBUF + 8192, 8192), 0);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 0, 2, 50 * MS), SIM_DONE);
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 1, 2, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 1, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 1, 2, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 1, 1, 11, DROCE_WC_SUCCESS);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + RBUF, 2 * SEG) == 0);
	CU_ASSERT(memcmp(s.mem[0] + 2 * SEG, s.mem[1] + RBUF + 8192, 2 * SEG) == 0);
	scen_fini(&s);
}

/* The gap never fills (the FIRST always lost): node 1 holds two WQEs taken ahead when its QP
 * is moved to the error state; both complete with WR_FLUSH_ERR, in order, and only they: the
 * third receive, never taken, is the SRQ's, not this QP's to flush. */
static void
test_srq_flush_taken(void)
{
	struct droce_qp_attr a;
	struct scen s;
	unsigned int i;
	int got;

	setup(&s, 3, 1000);
	for (i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(
			scen_post(&s, 0, DROCE_WR_SEND, 1 + i, i * 2 * SEG, 2 * SEG, 0, 0, 0), 0);
	CU_ASSERT_NOT_EQUAL(scen_run_until(&s, 1, 1, 200000), SIM_DONE);
	CU_ASSERT_EQUAL(s.nwc[1], 0);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_SR_KEPT), 3);
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_ERR;
	CU_ASSERT_EQUAL_FATAL(droce_qp_modify(s.qp[1], &a, DROCE_QP_STATE), 0);
	/* the flush completes them at once: polled here, without running the link */
	got = droce_cq_poll(s.cq[1], 4, s.wc[1]);
	CU_ASSERT_EQUAL_FATAL(got, 2);
	s.nwc[1] = (unsigned int)got;
	scen_expect_wc(&s, 1, 0, 10, DROCE_WC_WR_FLUSH_ERR);
	scen_expect_wc(&s, 1, 1, 11, DROCE_WC_WR_FLUSH_ERR);
	scen_fini(&s);
}

DROCE_TEST_MAIN("sim_sr_srq", DROCE_TEST(test_srq_sends_past_gap), DROCE_TEST(test_srq_empty_ahead),
		DROCE_TEST(test_srq_flush_taken))
