/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * More than two endpoints on the simulated switch: an incast of three RC writers into one
 * receiver whose port is the bottleneck. The egress queue marks CE (RED) on ECN-capable frames;
 * the test asserts the engine sends data as ECT (RoCEv2 Annex A17.9.1, or nothing would be
 * marked), that every mark reaches the receiver's counter, and that all data lands intact.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_test.h"

#include "sim_ep.h"
#include "sim_net.h"
#include "sim_trace.h"

#define SENDERS 3
#define MSGS 16
#define MSG 4096
#define MEM (SENDERS * MSGS * MSG)

struct incast {
	struct sim_net net;
	struct sim_ep ep[SENDERS + 1];
	struct droce_pd *pd[SENDERS + 1];
	struct droce_mr *mr[SENDERS + 1];
	struct droce_cq *cq[SENDERS + 1];
	struct droce_qp *qp[SENDERS + 1][SENDERS + 1];	/* [node][peer] */
	uint8_t *mem[SENDERS + 1];
	unsigned int done[SENDERS + 1];
	unsigned int errors;
};

static void
step(void *arg, uint64_t now)
{
	struct incast *t = arg;
	struct droce_wc wc[16];
	unsigned int n;
	int got, i;

	(void)now;
	for (n = 1; n <= SENDERS; n++)
		while ((got = droce_cq_poll(t->cq[n], 16, wc)) > 0)
			for (i = 0; i < got; i++) {
				t->done[n]++;
				t->errors += wc[i].status != DROCE_WC_SUCCESS;
			}
}

static bool
all_done(void *arg)
{
	struct incast *t = arg;
	unsigned int n;

	for (n = 1; n <= SENDERS; n++)
		if (t->done[n] < MSGS)
			return false;
	return true;
}

static void
test_incast_ecn(void)
{
	struct sim_link_cfg edge = { .rate_bps = 25000000000ull, .delay_ns = 1000 };
	struct sim_link_cfg bottleneck = { .rate_bps = 10000000000ull, .delay_ns = 1000,
					   .red_kmin = 5000, .red_kmax = 50000, .red_pmax = 0.2 };
	struct sim_qp_params qpp;
	struct incast *t = calloc(1, sizeof(*t));
	struct sim_app app = { step, all_done, t, UINT64_MAX };
	const struct sim_port_stats *st;
	struct droce_qp_init_attr ia;
	unsigned int n, k;
	uint64_t marked = 0;
	int err = 0;

	CU_ASSERT_FATAL(t != NULL);
	sim_net_init(&t->net, 7);
	sim_qp_params_default(&qpp);
	qpp.mtu = DROCE_MTU_4096;
	for (n = 0; n <= SENDERS; n++) {
		CU_ASSERT_FATAL(sim_ep_create(&t->ep[n], &t->net, 7, n == 0 ? &bottleneck : &edge,
					      4096 + 200) == 0);
		t->mem[n] = aligned_alloc(4096, MEM);
		CU_ASSERT_FATAL(t->mem[n] != NULL);
		for (k = 0; k < MEM; k++)
			t->mem[n][k] = (uint8_t)(k * 13 + n * 7);
		t->pd[n] = droce_pd_alloc(t->ep[n].dev, &err);
		t->mr[n] = droce_mr_reg(t->pd[n], t->mem[n], MEM,
					DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &err);
		t->cq[n] = droce_cq_create(t->ep[n].dev, 256, NULL, &err);
		CU_ASSERT_FATAL(t->pd[n] != NULL && t->mr[n] != NULL && t->cq[n] != NULL);
	}
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	for (n = 1; n <= SENDERS; n++) {
		ia.send_cq = ia.recv_cq = t->cq[n];
		t->qp[n][0] = droce_qp_create(t->pd[n], &ia, &err);
		ia.send_cq = ia.recv_cq = t->cq[0];
		t->qp[0][n] = droce_qp_create(t->pd[0], &ia, &err);
		CU_ASSERT_FATAL(t->qp[n][0] != NULL && t->qp[0][n] != NULL);
	}
	for (n = 1; n <= SENDERS; n++) {
		CU_ASSERT_FATAL(sim_qp_bring_up(t->qp[n][0], DROCE_QPT_RC, &t->ep[0],
						droce_qp_num(t->qp[0][n]), &qpp) == 0);
		CU_ASSERT_FATAL(sim_qp_bring_up(t->qp[0][n], DROCE_QPT_RC, &t->ep[n],
						droce_qp_num(t->qp[n][0]), &qpp) == 0);
		for (k = 0; k < MSGS; k++) {
			uint32_t off = ((n - 1) * MSGS + k) * MSG;
			struct droce_sge sge = { (uintptr_t)(t->mem[n] + off), MSG,
						 droce_mr_lkey(t->mr[n]) };
			struct droce_send_wr wr, *bad = NULL;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = k;
			wr.opcode = DROCE_WR_RDMA_WRITE;
			wr.send_flags = DROCE_SEND_SIGNALED;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.wr.rdma.remote_addr = (uintptr_t)(t->mem[0] + off);
			wr.wr.rdma.rkey = droce_mr_rkey(t->mr[0]);
			CU_ASSERT_EQUAL(droce_post_send(t->qp[n][0], &wr, &bad), 0);
		}
	}
	t->net.time_limit = 100000000ull;
	CU_ASSERT_EQUAL(sim_net_run(&t->net, &app), SIM_DONE);
	CU_ASSERT_EQUAL(t->errors, 0);
	for (n = 1; n <= SENDERS; n++) {
		uint32_t off = (n - 1) * MSGS * MSG;

		CU_ASSERT_EQUAL(t->done[n], MSGS);
		CU_ASSERT(memcmp(t->mem[0] + off, t->mem[n] + off, MSGS * MSG) == 0);
	}
	st = &t->net.node[t->ep[0].idx].down.st;
	for (n = 1; n <= SENDERS; n++)
		marked += droce_qp_counter(t->qp[0][n], DROCE_CNT_NP_ECN_MARKED);
	printf("\n    bottleneck: %llu frames, max backlog %llu B, %llu CE-marked, engine counted %llu\n",
	       (unsigned long long)st->frames, (unsigned long long)st->max_backlog,
	       (unsigned long long)st->ce_marked, (unsigned long long)marked);
	/* Three 25G senders into 10G: the queue passes Kmin and the switch marks. */
	CU_ASSERT(st->max_backlog > bottleneck.red_kmin);
	CU_ASSERT(st->ce_marked > 0);
	CU_ASSERT_EQUAL(marked, st->ce_marked);
	CU_ASSERT_EQUAL(st->lost + st->tail_drop, 0);
	for (n = 0; n <= SENDERS; n++) {
		unsigned int p;

		for (p = 0; p <= SENDERS; p++)
			if (t->qp[n][p] != NULL)
				droce_qp_destroy(t->qp[n][p]);
		droce_cq_destroy(t->cq[n]);
		droce_mr_dereg(t->mr[n]);
		droce_pd_dealloc(t->pd[n]);
		sim_ep_destroy(&t->ep[n]);
		free(t->mem[n]);
	}
	sim_net_fini(&t->net);
	free(t);
}

DROCE_TEST_MAIN("sim_multi",
	DROCE_TEST(test_incast_ecn))
