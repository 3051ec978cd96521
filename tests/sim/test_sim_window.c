/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A message longer than the requester's window (DROCE_MAX_INFLIGHT PSNs): the local ACK timer
 * must run while its first packets are out, not only from its last packet on (IBTA 9.7.6.1.3:
 * the timer covers every outstanding request packet; rxe restarts it on any packet sent while
 * it is idle). Here every frame toward the requester is lost while it fills the window: no ACK
 * or NAK comes back, so only the timer can resend. Without it the QP waited forever.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define MS  1000000ull
#define MSG (512u * 1024) /* 2048 packets of 256 B: twice the window */

static void
setup(struct scen *s)
{
	struct sim_qp_params p;

	sim_qp_params_default(&p);
	p.mtu = DROCE_MTU_256;
	p.timeout = 8; /* 4.096 us * 2^8 = 1.05 ms */
	p.retry_cnt = 7;
	scen_setup_rc(s, &p);
}

/* A fresh QP's first message: the window fills while every ACK is lost for 2.5 ms. */
static void
test_window_full_acks_lost(void)
{
	struct scen s;

	setup(&s);
	s.net.node[0].down.cfg.down = true; /* toward the requester */
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 5, 0, MSG, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	s.wake = 2500000;
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 2500000), SIM_TIME_LIMIT);
	/* The window filled, nothing came back, and the timer resent from the oldest packet
	 * (without it nothing was ever sent again, the run idle): one packet a timeout, the loss
	 * window, as no ACK reopens it. */
	CU_ASSERT(s.trace.st.retransmits >= 1);
	CU_ASSERT(s.trace.st.retransmits <= scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR));
	CU_ASSERT(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR) >= 1);
	CU_ASSERT_EQUAL(s.nwc[0], 0);
	s.net.node[0].down.cfg.down = false;
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 0, 1, 50 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 5, DROCE_WC_SUCCESS);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1], MSG) == 0);
	CU_ASSERT(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR) >= 1);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_EXCEEDED_ERR), 0);
	scen_fini(&s);
}

/* After an RNR NAK (the timer stops while the requester waits): the SEND starts again with
 * packets that are not its last, the window fills, and every ACK is lost for 2.5 ms. */
static void
test_window_after_rnr_acks_lost(void)
{
	struct scen s;
	uint64_t t;

	setup(&s);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_SEND, 6, 0, MSG, 0, 0, 0), 0);
	for (t = 0; t < 10 * MS && scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR) == 0; t += 1000) {
		s.wake = s.net.now + 1000;
		scen_run_until(&s, 0, 1, 1000);
	}
	CU_ASSERT_EQUAL_FATAL(scen_cnt(&s, 0, DROCE_CNT_RCVD_RNR_ERR), 1);
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 77, 0, MSG), 0);
	s.net.node[0].down.cfg.down = true;
	s.wake = s.net.now + 2500000;
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 1, 2500000), SIM_TIME_LIMIT);
	s.net.node[0].down.cfg.down = false;
	CU_ASSERT_EQUAL_FATAL(scen_run_until(&s, 0, 1, 50 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 6, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(scen_run_until(&s, 1, 1, 10 * MS), SIM_DONE);
	scen_expect_wc(&s, 1, 0, 77, DROCE_WC_SUCCESS);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1], MSG) == 0);
	CU_ASSERT(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR) >= 1);
	scen_fini(&s);
}

DROCE_TEST_MAIN("sim_window", DROCE_TEST(test_window_full_acks_lost),
		DROCE_TEST(test_window_after_rnr_acks_lost))
