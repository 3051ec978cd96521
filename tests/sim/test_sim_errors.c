/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport error paths other than access violations, each asserting the exact completion
 * status, the counters and the wire: RNR with rnr_retry 0, 2 and 7 (and on every message kind
 * that takes a receive), retry exhaustion when the peer vanishes (with its timing) and the retry
 * count restored by progress, a receive too small, flushes after an error, QP reuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_drop.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define MS 1000000ull

static void
test_write_baseline(void)
{
	struct scen s;

	scen_setup_rc(&s, NULL);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 1, 0, 3000, scen_addr(&s, 1, 8192),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 100 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 1, DROCE_WC_SUCCESS);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + 8192, 3000) == 0);
	scen_fini(&s);
}

/*
 * One faulty request from node 0, then three more WRs and a receive on the same QP: the first
 * completes with `st`, the QP enters the error state, everything after flushes in order
 * (IBTA 10.8.3.4, 11.6.2). The target bytes stay as they were.
 */
static void
test_recv_too_small(void)
{
	struct scen s;

	scen_setup_rc(&s, NULL);
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 7, 16384, 100), 0);
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 8, 20480, 1000), 0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 200, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 11, 0, 20, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 2, 500 * MS), SIM_DONE);
	/* IBTA 9.9.3.1.2 class C: the responder completes the receive with a local length
	 * error and NAKs Invalid Request; both QPs go to the error state. */
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_REM_INV_REQ_ERR);
	scen_expect_wc(&s, 0, 1, 11, DROCE_WC_WR_FLUSH_ERR);
	scen_run_until(&s, 1, 2, 10 * MS);
	scen_expect_wc(&s, 1, 0, 7, DROCE_WC_LOC_LEN_ERR);
	scen_expect_wc(&s, 1, 1, 8, DROCE_WC_WR_FLUSH_ERR);
	CU_ASSERT(scen_untouched(&s, 1, 16384 + 100, 200));
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_RESP_LOCAL_LENGTH_ERROR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_RESP_CQE_ERROR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_RESP_CQE_FLUSH_ERROR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_REQ_REMOTE_INVALID_REQUEST), 1);
	CU_ASSERT_EQUAL(droce_dev_drops(s.ep[1].dev, DROCE_DROP_LENGTH), 1);
	CU_ASSERT_EQUAL(s.trace.st.nak_code[1], 1);
	CU_ASSERT_EQUAL(scen_events(&s, 1, DROCE_EVENT_QP_REQ_ERR), 1);
	scen_fini(&s);
}

static void
test_rnr_retry_zero(void)
{
	struct sim_qp_params p;
	struct scen s;

	sim_qp_params_default(&p);
	p.rnr_retry = 0;
	scen_setup_rc(&s, &p);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 64, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 500 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_RNR_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(s.trace.st.rnr_naks, 1);
	CU_ASSERT_EQUAL(s.trace.st.retransmits, 0);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_SEND_RNR_ERR), 1);
	scen_fini(&s);
}

static void
test_rnr_retry_two(void)
{
	struct sim_qp_params p;
	struct scen s;
	const uint64_t t_rnr = 1280000; /* code 14: 1.28 ms (IBTA 9.7.5.2.8 table 45) */

	sim_qp_params_default(&p);
	p.rnr_retry = 2;
	p.min_rnr_timer = 14;
	scen_setup_rc(&s, &p);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 64, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 500 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_RNR_RETRY_EXC_ERR);
	/* The first try and rnr_retry retries, each after the RNR timer the NAK carries. */
	CU_ASSERT_EQUAL(s.trace.st.rnr_naks, 3);
	CU_ASSERT_EQUAL(s.trace.st.req_pkts, 3);
	CU_ASSERT(s.wc_t[0][0] >= 2 * t_rnr);
	CU_ASSERT(s.wc_t[0][0] <= 2 * t_rnr + t_rnr / 10);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), 3);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 1);
	scen_fini(&s);
}

static void
post_late_recv(struct scen *s)
{
	CU_ASSERT_EQUAL(scen_post_recv(s, 1, 77, 16384, 4096), 0);
}

static void
test_rnr_retry_infinite(void)
{
	struct sim_qp_params p;
	struct scen s;

	sim_qp_params_default(&p);
	p.rnr_retry = 7;
	p.min_rnr_timer = 14; /* 1.28 ms per IBTA 9.7.5.2.8 table */
	scen_setup_rc(&s, &p);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 10, 0, 300, 0, 0, 0), 0);
	s.wake = 10 * MS;
	s.at_wake = post_late_recv;
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 500 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_SUCCESS);
	CU_ASSERT(s.wc_t[0][0] > 10 * MS);
	CU_ASSERT(s.trace.st.rnr_naks >= 2); /* about 10 ms / 1.28 ms of waiting */
	CU_ASSERT(s.trace.st.rnr_naks <= 9);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), s.trace.st.rnr_naks);
	CU_ASSERT_EQUAL(scen_cnt(&s, 1, DROCE_CNT_SEND_RNR_ERR), s.trace.st.rnr_naks);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 0);
	scen_run_until(&s, 1, 1, 10 * MS);
	scen_expect_wc(&s, 1, 0, 77, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(s.wc[1][0].byte_len, 300);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + 16384, 300) == 0);
	scen_fini(&s);
}

/* RNR on each kind of message that consumes a receive: the retry after the receive is posted
 * must be taken as new (IBTA 9.7.5.2.8: an RNR NAK leaves the responder's ePSN where it was). */
static void
rnr_then_recv(enum droce_wr_opcode op, uint32_t len)
{
	struct sim_qp_params p;
	struct scen s;

	sim_qp_params_default(&p);
	p.min_rnr_timer = 14; /* 1.28 ms */
	scen_setup_rc(&s, &p);
	CU_ASSERT_EQUAL(scen_post(&s, 0, op, 10, 0, len, scen_addr(&s, 1, 32768),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 11, 0, 3000, scen_addr(&s, 1, 40000),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	s.wake = 2 * MS;
	s.at_wake = post_late_recv;
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 2, 500 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 1, 11, DROCE_WC_SUCCESS);
	CU_ASSERT(s.trace.st.rnr_naks >= 1);
	CU_ASSERT_EQUAL(s.trace.st.naks, 0);
	scen_run_until(&s, 1, 1, 10 * MS);
	scen_expect_wc(&s, 1, 0, 77, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(s.wc[1][0].byte_len, len);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + (op == DROCE_WR_SEND ? 16384 : 32768), len) == 0);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + 40000, 3000) == 0);
	scen_fini(&s);
}

static void
test_rnr_write_imm_only(void)
{
	rnr_then_recv(DROCE_WR_RDMA_WRITE_WITH_IMM, 74);
}

static void
test_rnr_write_imm_multi(void)
{
	rnr_then_recv(DROCE_WR_RDMA_WRITE_WITH_IMM, 2500);
}

static void
test_rnr_send_multi(void)
{
	rnr_then_recv(DROCE_WR_SEND, 900 + 1024);
}

static void
test_retry_exhausted_peer_gone(void)
{
	struct sim_qp_params p;
	struct scen s;
	uint64_t t_out, t0;

	sim_qp_params_default(&p);
	p.timeout = 10; /* 4.096 us * 2^10 = 4.194 ms */
	p.retry_cnt = 3;
	scen_setup_rc(&s, &p);
	t_out = 4096ull << 10;
	s.net.node[1].down.cfg.down = true; /* node 1 vanishes */
	t0 = s.net.now;
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 2000, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 11, 0, 10, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 2, 1000 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_RETRY_EXC_ERR);
	scen_expect_wc(&s, 0, 1, 11, DROCE_WC_WR_FLUSH_ERR);
	/* The first try plus retry_cnt retries, each after one local ACK timeout (IBTA 9.7.6.1.3):
	 * the error comes (retry_cnt + 1) timeouts after the first transmission. */
	printf("\n    RETRY_EXC_ERR after %.3f ms (expected %.3f ms), retransmitted packets %llu\n",
	       (double)(s.wc_t[0][0] - t0) / 1e6, (double)(4 * t_out) / 1e6,
	       (unsigned long long)s.trace.st.retransmits);
	CU_ASSERT(s.wc_t[0][0] - t0 >= 4 * t_out);
	CU_ASSERT(s.wc_t[0][0] - t0 <= 4 * t_out + t_out / 10);
	/* The window (2 + 1 packets), then each retry the oldest alone: the loss window after a
	 * local ACK timeout reopens per ACK, and none comes. */
	CU_ASSERT_EQUAL(s.trace.st.req_pkts, 3 + 3);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 4);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_EXCEEDED_ERR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_REQ_CQE_ERROR), 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_REQ_CQE_FLUSH_ERROR), 1);
	CU_ASSERT_EQUAL(s.net.node[1].down.st.down_lost, 3 + 3);
	scen_fini(&s);
}

/* IBTA 9.7.6.1.3: the retry count applies to consecutive timeouts without progress; an ACK
 * that makes progress restores it. Two separate outages, each costing one timeout, with
 * retry_cnt 1: both recover. */
static void
test_retry_count_restored_by_progress(void)
{
	struct sim_qp_params p;
	struct scen s;
	unsigned int k;

	sim_qp_params_default(&p);
	p.timeout = 10; /* 4.19 ms */
	p.retry_cnt = 1;
	scen_setup_rc(&s, &p);
	for (k = 0; k < 2; k++) {
		s.net.node[1].down.cfg.down = true;
		CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10 + k, 0, 2000,
					  scen_addr(&s, 1, 8192 * (k + 1)), droce_mr_rkey(s.mr[1]),
					  0),
				0);
		CU_ASSERT_EQUAL(scen_run_until(&s, 0, k + 1, 1 * MS), SIM_TIME_LIMIT);
		s.net.node[1].down.cfg.down = false;
		CU_ASSERT_EQUAL(scen_run_until(&s, 0, k + 1, 100 * MS), SIM_DONE);
		scen_expect_wc(&s, 0, k, 10 + k, DROCE_WC_SUCCESS);
	}
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + 8192, 2000) == 0);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1] + 16384, 2000) == 0);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 2);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_EXCEEDED_ERR), 0);
	scen_fini(&s);
}

/* After an error every outstanding WR completes, signaled or not (IBTA 10.8.3.4: flushed WRs
 * always report), in posting order. */
static void
test_flush_unsignaled(void)
{
	struct scen s;
	unsigned int k;

	scen_setup_rc(&s, NULL);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 100, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]) + 1, 0),
			0);
	for (k = 0; k < 3; k++)
		CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 11 + k, 0, 100,
					  scen_addr(&s, 1, 1000), droce_mr_rkey(s.mr[1]),
					  SCEN_UNSIGNALED),
				0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 4, 100 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_REM_ACCESS_ERR);
	for (k = 0; k < 3; k++)
		scen_expect_wc(&s, 0, 1 + k, 11 + k, DROCE_WC_WR_FLUSH_ERR);
	CU_ASSERT(scen_untouched(&s, 1, 0, 2000));
	scen_fini(&s);
}

/* A QP in error goes through RESET and back to RTS (new PSNs) and works again, with nothing
 * left over from before: no stale completion, receive, message state or timer. */
static void
test_qp_reuse_after_error(void)
{
	struct sim_qp_params p;
	struct droce_qp_attr a;
	struct scen s;
	unsigned int n;

	scen_setup_rc(&s, NULL);
	/* Node 1 has a receive posted and node 0 a WRITE in flight when it all goes wrong. */
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 5, 16384, 4096), 0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 3000, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]) ^ 1, 0),
			0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 100 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(scen_run_until(&s, 1, 1, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 1, 0, 5, DROCE_WC_WR_FLUSH_ERR);
	scen_events(&s, 1, DROCE_EVENT_QP_ACCESS_ERR);

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RESET;
	sim_qp_params_default(&p);
	p.sq_psn = p.rq_psn = 0x5000;
	for (n = 0; n < 2; n++)
		CU_ASSERT_EQUAL_FATAL(droce_qp_modify(s.qp[n], &a, DROCE_QP_STATE), 0);
	for (n = 0; n < 2; n++)
		CU_ASSERT_EQUAL_FATAL(sim_qp_bring_up(s.qp[n], DROCE_QPT_RC, &s.ep[!n],
						      droce_qp_num(s.qp[!n]), &p),
				      0);
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 6, 20480, 4096), 0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 11, 0, 3000, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 12, 4096, 2500, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 3, 100 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 1, 11, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 2, 12, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(scen_run_until(&s, 1, 2, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 1, 1, 6, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(s.wc[1][1].byte_len, 2500);
	CU_ASSERT(memcmp(s.mem[1], s.mem[0], 3000) == 0);
	CU_ASSERT(memcmp(s.mem[1] + 20480, s.mem[0] + 4096, 2500) == 0);
	/* Nothing more: no stray completion from before the reset. */
	scen_run_until(&s, 0, 4, 20 * MS);
	CU_ASSERT_EQUAL(s.nwc[0], 3);
	CU_ASSERT_EQUAL(s.nwc[1], 2);
	scen_fini(&s);
}

DROCE_TEST_MAIN("sim_errors", DROCE_TEST(test_write_baseline), DROCE_TEST(test_recv_too_small),
		DROCE_TEST(test_rnr_retry_zero), DROCE_TEST(test_rnr_retry_two),
		DROCE_TEST(test_rnr_retry_infinite), DROCE_TEST(test_rnr_write_imm_only),
		DROCE_TEST(test_rnr_write_imm_multi), DROCE_TEST(test_rnr_send_multi),
		DROCE_TEST(test_retry_exhausted_peer_gone),
		DROCE_TEST(test_retry_count_restored_by_progress),
		DROCE_TEST(test_flush_unsignaled), DROCE_TEST(test_qp_reuse_after_error))
