/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs object error paths: CQ overflow (an error event, no memory touched), invalid modify_qp
 * transitions and attribute masks (-EINVAL, state unchanged), UD Q_Key mismatch (dropped,
 * counted).
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
test_cq_overflow(void)
{
	struct droce_async_event ev;
	struct scen s;
	unsigned int i, cq_err = 0;
	int rc;
	struct droce_wc wc[16];

	CU_ASSERT_FATAL(scen_init(&s, 1, &scen_clean_link, DROCE_QPT_RC, NULL, 4) == 0);
	s.no_poll[0] = true;
	for (i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, i, 256 * i, 256,
					  scen_addr(&s, 1, 256 * i), droce_mr_rkey(s.mr[1]), 0),
				0);
	scen_run_until(&s, 0, 1, 50 * MS);
	/* IBTA 11.4.2.1 / C11-...: an overrun CQ reports an affiliated CQ error event. */
	while (droce_dev_get_async_event(s.ep[0].dev, &ev) == 0)
		if (ev.type == DROCE_EVENT_CQ_ERR && ev.element.cq == s.cq[0])
			cq_err++;
	CU_ASSERT_EQUAL(cq_err, 1);
	rc = droce_cq_poll(s.cq[0], 16, wc);
	CU_ASSERT_EQUAL(rc, -EOVERFLOW);
	/* The data still went where it was asked to, and nothing else changed. */
	CU_ASSERT(memcmp(s.mem[0], s.mem[1], 2048) == 0);
	CU_ASSERT(scen_untouched(&s, 1, 2048, SCEN_MEM - 2048));
	CU_ASSERT(scen_untouched(&s, 0, 0, SCEN_MEM));
	scen_fini(&s);
}

static void
test_modify_qp_invalid(void)
{
	struct sim_qp_params p;
	struct droce_qp_attr a, q;
	struct droce_qp_init_attr ia;
	struct scen s;
	struct droce_qp *qp;
	unsigned int base = DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT;
	int err = 0;

	scen_setup_rc(&s, NULL);
	sim_qp_params_default(&p);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.send_cq = s.cq[0];
	ia.recv_cq = s.cq[0];
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = droce_qp_create(s.pd[0], &ia, &err);
	CU_ASSERT_FATAL(qp != NULL);

	/* The transition table of IBTA 11.2.4.2 (table 93) and its required attributes. */
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), -EINVAL); /* RESET->RTR */
	a.qp_state = DROCE_QPS_RTS;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), -EINVAL); /* RESET->RTS */
	a.qp_state = (enum droce_qp_state)42;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), -EINVAL);
	a.qp_state = DROCE_QPS_INIT;
	a.qp_access_flags = p.access;
	a.port_num = 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, base), -EINVAL); /* no ACCESS_FLAGS */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, base | DROCE_QP_ACCESS_FLAGS | DROCE_QP_SQ_PSN),
			-EINVAL); /* SQ_PSN is not an INIT attribute */
	a.cur_qp_state = DROCE_QPS_RTS;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, base | DROCE_QP_ACCESS_FLAGS | DROCE_QP_CUR_STATE),
			-EINVAL); /* the QP is in RESET, not RTS */
	a.port_num = 9;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, base | DROCE_QP_ACCESS_FLAGS), -EINVAL);
	a.port_num = 1;
	CU_ASSERT_EQUAL(droce_qp_query(qp, &q, NULL), 0);
	CU_ASSERT_EQUAL(q.qp_state, DROCE_QPS_RESET); /* failed calls changed nothing */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, base | DROCE_QP_ACCESS_FLAGS), 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	sim_ep_av(&s.ep[1], &a.ah_attr);
	a.path_mtu = DROCE_MTU_1024;
	a.dest_qp_num = droce_qp_num(s.qp[1]);
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a,
					DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
						DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC |
						DROCE_QP_MIN_RNR_TIMER),
			-EINVAL); /* no DEST_QPN */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a,
					DROCE_QP_STATE | DROCE_QP_DEST_QPN | DROCE_QP_PATH_MTU |
						DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC |
						DROCE_QP_MIN_RNR_TIMER),
			-EINVAL); /* no AV */
	a.path_mtu = (enum droce_mtu)9;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a,
					DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
						DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
						DROCE_QP_MAX_DEST_RD_ATOMIC |
						DROCE_QP_MIN_RNR_TIMER),
			-EINVAL); /* bad MTU */
	a.path_mtu = DROCE_MTU_1024;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a,
					DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
						DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
						DROCE_QP_MAX_DEST_RD_ATOMIC |
						DROCE_QP_MIN_RNR_TIMER),
			0);

	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.timeout = 8;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a,
					DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
						DROCE_QP_RNR_RETRY | DROCE_QP_MAX_QP_RD_ATOMIC),
			-EINVAL); /* no SQ_PSN */
	a.retry_cnt = 8;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a,
					DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
						DROCE_QP_RNR_RETRY | DROCE_QP_MAX_QP_RD_ATOMIC |
						DROCE_QP_SQ_PSN),
			-EINVAL); /* retry_cnt is 3 bits */
	a.retry_cnt = 7;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a,
					DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
						DROCE_QP_RNR_RETRY | DROCE_QP_MAX_QP_RD_ATOMIC |
						DROCE_QP_SQ_PSN),
			0);
	a.qp_state = DROCE_QPS_INIT;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), -EINVAL); /* RTS->INIT */
	/* Any state may go to ERR and to RESET. */
	a.qp_state = DROCE_QPS_ERR;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), 0);
	a.qp_state = DROCE_QPS_RTS;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), -EINVAL); /* ERR->RTS */
	a.qp_state = DROCE_QPS_RESET;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), 0);
	CU_ASSERT_EQUAL(droce_qp_query(qp, &q, NULL), 0);
	CU_ASSERT_EQUAL(q.qp_state, DROCE_QPS_RESET);
	droce_qp_destroy(qp);

	/* UD needs a Q_Key to reach INIT. */
	ia.qp_type = DROCE_QPT_UD;
	qp = droce_qp_create(s.pd[0], &ia, &err);
	CU_ASSERT_FATAL(qp != NULL);
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, base), -EINVAL);
	a.qkey = 5;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, base | DROCE_QP_QKEY), 0);
	droce_qp_destroy(qp);
	scen_fini(&s);
}

static void
test_ud_qkey_mismatch(void)
{
	struct droce_send_wr wr, *bad = NULL;
	struct droce_sge sge;
	struct droce_av av;
	struct droce_ah *ah;
	struct scen s;
	int err = 0, k;

	CU_ASSERT_FATAL(scen_init(&s, 1, &scen_clean_link, DROCE_QPT_UD, NULL, 0) == 0);
	sim_ep_av(&s.ep[1], &av);
	ah = droce_ah_create(s.pd[0], &av, &err);
	CU_ASSERT_FATAL(ah != NULL);
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 1, 16384, 1000), 0);
	CU_ASSERT_EQUAL(scen_post_recv(&s, 1, 2, 20480, 1000), 0);
	for (k = 0; k < 2; k++) {
		sge.addr = scen_addr(&s, 0, (uint32_t)k * 1000);
		sge.length = 100;
		sge.lkey = droce_mr_lkey(s.mr[0]);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 10 + (uint64_t)k;
		wr.opcode = DROCE_WR_SEND;
		wr.send_flags = DROCE_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = droce_qp_num(s.qp[1]);
		/* IBTA 10.2.5 / C9-...: the first carries a Q_Key the receiver does not hold. */
		wr.wr.ud.remote_qkey = k == 0 ? 0x22222222 : 0x11111111;
		CU_ASSERT_EQUAL(droce_post_send(s.qp[0], &wr, &bad), 0);
	}
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 2, 50 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 10, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 1, 11, DROCE_WC_SUCCESS);
	scen_run_until(&s, 1, 2, 20 * MS);
	/* Only the second datagram arrives, in the first receive. */
	CU_ASSERT_EQUAL_FATAL(s.nwc[1], 1);
	scen_expect_wc(&s, 1, 0, 1, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(s.wc[1][0].byte_len, 100 + 40);
	CU_ASSERT(memcmp(s.mem[1] + 16384 + 40, s.mem[0] + 1000, 100) == 0);
	CU_ASSERT_EQUAL(s.ep[1].rx_frames, 2);
	CU_ASSERT_EQUAL(droce_dev_drops(s.ep[1].dev, DROCE_DROP_QKEY), 1);
	droce_ah_destroy(ah);
	scen_fini(&s);
}

DROCE_TEST_MAIN("sim_objects", DROCE_TEST(test_cq_overflow), DROCE_TEST(test_modify_qp_invalid),
		DROCE_TEST(test_ud_qkey_mismatch))
