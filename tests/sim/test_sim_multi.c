/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * More than two endpoints on the simulated switch: an incast of three RC writers into one
 * receiver whose port is the bottleneck. The egress queue marks CE (RED) on ECN-capable frames;
 * the test asserts the engine sends data as ECT (RoCEv2 Annex A17.9.1, or nothing would be
 * marked), that every mark reaches the receiver's counter, and that all data lands intact; then
 * that DCQCN at the senders answers the marks by slowing down.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_ext.h"
#include "droce_test.h"

#include "sim_ep.h"
#include "sim_net.h"
#include "sim_trace.h"

#define SENDERS 3

struct incast {
	struct sim_net net;
	struct sim_ep ep[SENDERS + 1];
	struct droce_pd *pd[SENDERS + 1];
	struct droce_mr *mr[SENDERS + 1];
	struct droce_cq *cq[SENDERS + 1];
	struct droce_qp *qp[SENDERS + 1][SENDERS + 1]; /* [node][peer] */
	uint8_t *mem[SENDERS + 1];
	unsigned int done[SENDERS + 1];
	unsigned int posted[SENDERS + 1];
	unsigned int msgs;
	uint32_t size;
	unsigned int errors;
};

/* Sender n's write k into the receiver's memory, at the place only it writes. */
static void
post_one(struct incast *t, unsigned int n, unsigned int k, uint32_t size)
{
	size_t off = ((size_t)(n - 1) * t->msgs + k) * size;
	struct droce_sge sge = { (uintptr_t)(t->mem[n] + off), size, droce_mr_lkey(t->mr[n]) };
	struct droce_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = k;
	wr.opcode = DROCE_WR_RDMA_WRITE;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)(t->mem[0] + off);
	wr.wr.rdma.rkey = droce_mr_rkey(t->mr[0]);
	if (droce_post_send(t->qp[n][0], &wr, &bad) != 0)
		t->errors++;
	else
		t->posted[n]++;
}

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
				if (t->posted[n] < t->msgs)
					post_one(t, n, t->posted[n], t->size);
			}
}

static bool
all_done(void *arg)
{
	struct incast *t = arg;
	unsigned int n;

	for (n = 1; n <= SENDERS; n++)
		if (t->done[n] < t->msgs)
			return false;
	return true;
}

/* What a run showed at the bottleneck and at the senders. */
struct incast_result {
	uint64_t frames, max_backlog, mean_backlog, ce_marked, engine_marked, lost, vtime_ns;
	uint64_t cnp_handled, deferred; /* summed over the senders' QPs */
};

/*
 * SENDERS 25G writers into one 10G receiver port that marks CE (RED), msgs writes of size
 * bytes each; the senders' QPs run cc. Every byte checked.
 */
static void
incast(const struct droce_cc_ops *cc, const union droce_cc_params *cc_params,
       uint64_t cnp_interval_ns, unsigned int msgs, uint32_t size, struct incast_result *r)
{
	struct sim_link_cfg edge = { .rate_bps = 25000000000ull, .delay_ns = 1000 };
	struct sim_link_cfg bottleneck = { .rate_bps = 10000000000ull,
					   .delay_ns = 1000,
					   .red_kmin = 5000,
					   .red_kmax = 50000,
					   .red_pmax = 0.2 };
	size_t mem = (size_t)SENDERS * msgs * size;
	struct droce_inflight_cfg inf;
	struct sim_qp_params qpp;
	struct incast *t = calloc(1, sizeof(*t));
	struct sim_app app = { step, all_done, t, UINT64_MAX };
	const struct sim_port_stats *st;
	struct droce_qp_init_attr ia;
	unsigned int n, k;
	size_t b;
	int err = 0;

	memset(r, 0, sizeof(*r));
	CU_ASSERT_FATAL(t != NULL);
	t->msgs = msgs;
	sim_net_init(&t->net, 7);
	sim_qp_params_default(&qpp);
	qpp.mtu = DROCE_MTU_4096;
	droce_inflight_defaults(&inf);
	inf.cap = 0;
	for (n = 0; n <= SENDERS; n++) {
		CU_ASSERT_FATAL(sim_ep_create(&t->ep[n], &t->net, 7, n == 0 ? &bottleneck : &edge,
					      4096 + 200) == 0);
		/* No in-flight cap: congestion control is compared with the window alone (32
		 * writes a sender), the queue it keeps at the bottleneck. */
		droce_dev_set_inflight(t->ep[n].dev, &inf);
		if (n != 0)
			droce_dev_set_cc(t->ep[n].dev, cc, cc_params);
		else if (cnp_interval_ns != 0)
			droce_dev_set_cnp_interval(t->ep[n].dev, cnp_interval_ns);
		t->mem[n] = aligned_alloc(4096, mem);
		CU_ASSERT_FATAL(t->mem[n] != NULL);
		for (b = 0; b < mem; b++)
			t->mem[n][b] = (uint8_t)(b * 13 + n * 7);
		t->pd[n] = droce_pd_alloc(t->ep[n].dev, &err);
		t->mr[n] = droce_mr_reg(t->pd[n], t->mem[n], mem,
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
	}
	/* at most 32 writes outstanding a sender; the rest are posted as these complete */
	for (n = 1; n <= SENDERS; n++)
		for (k = 0; k < msgs && k < 32; k++)
			post_one(t, n, k, size);
	t->size = size;
	t->net.time_limit = 1000000000ull;
	CU_ASSERT_EQUAL(sim_net_run(&t->net, &app), SIM_DONE);
	CU_ASSERT_EQUAL(t->errors, 0);
	for (n = 1; n <= SENDERS; n++) {
		size_t off = (size_t)(n - 1) * msgs * size;

		CU_ASSERT_EQUAL(t->done[n], msgs);
		CU_ASSERT(memcmp(t->mem[0] + off, t->mem[n] + off, (size_t)msgs * size) == 0);
		r->cnp_handled += droce_qp_counter(t->qp[n][0], DROCE_CNT_RP_CNP_HANDLED);
		r->deferred += droce_qp_counter(t->qp[n][0], DROCE_CNT_CC_DEFERRED);
		r->engine_marked += droce_qp_counter(t->qp[0][n], DROCE_CNT_NP_ECN_MARKED);
	}
	st = &t->net.node[t->ep[0].idx].down.st;
	r->frames = st->frames;
	r->max_backlog = st->max_backlog;
	r->mean_backlog = st->frames != 0 ? st->backlog_sum / st->frames : 0;
	r->ce_marked = st->ce_marked;
	r->lost = st->lost + st->tail_drop;
	r->vtime_ns = t->net.now;
	printf("\n    %s: %llu frames in %.3f ms, backlog max %llu B, mean %llu B, %llu CE-marked "
	       "(engine counted %llu), %llu CNPs handled, %llu packets held by the senders' "
	       "limiters",
	       cc != NULL ? cc->name : "none", (unsigned long long)r->frames, r->vtime_ns / 1e6,
	       (unsigned long long)r->max_backlog, (unsigned long long)r->mean_backlog,
	       (unsigned long long)r->ce_marked, (unsigned long long)r->engine_marked,
	       (unsigned long long)r->cnp_handled, (unsigned long long)r->deferred);
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

static void
test_incast_ecn(void)
{
	struct incast_result r;

	incast(NULL, NULL, 0, 16, 4096, &r);
	/* Three 25G senders into 10G: the queue passes Kmin and the switch marks. */
	CU_ASSERT(r.max_backlog > 5000);
	CU_ASSERT(r.ce_marked > 0);
	CU_ASSERT_EQUAL(r.engine_marked, r.ce_marked);
	CU_ASSERT_EQUAL(r.lost, 0);
	CU_ASSERT_EQUAL(r.deferred, 0); /* "none" never holds a packet */
}

/*
 * The same incast, longer (32 writes of 16 KiB in flight a sender), with DCQCN's reaction point
 * at the senders (Annex A17.9, the paper's parameters): the CNPs the receiver sends for CE
 * marks cut their rates, so frames find a far shorter queue than with no congestion control,
 * the link stays busy, and the data still all lands.
 */
static void
test_incast_dcqcn(void)
{
	union droce_cc_params p;
	struct incast_result none, dq;

	droce_cc_dcqcn_defaults(&p.dcqcn, 25000000000ull); /* the senders' links */
	/* the rest: the paper's values and rules (droce's rules for the target off) */
	p.dcqcn.time_reset_ns = 55000;
	p.dcqcn.alpha_period_ns = 55000;
	p.dcqcn.g = 1020; /* 1/256 */
	p.dcqcn.threshold = 5;
	p.dcqcn.ai_rate_bps = 40000000ull;
	p.dcqcn.hai_rate_bps = 200000000ull;
	p.dcqcn.paced_cut_pct = 0;
	p.dcqcn.level_cut_pct = 0;
	p.dcqcn.target_cut_pct = 0;
	p.dcqcn.ai_rate_ppm = 0;
	CU_ASSERT_EQUAL_FATAL(droce_cc_dcqcn_check(&p.dcqcn), 0);
	incast(NULL, NULL, 50000, 256, 16384, &none);
	incast(&droce_cc_dcqcn, &p, 50000, 256, 16384, &dq);
	CU_ASSERT_EQUAL(none.lost + dq.lost, 0);
	CU_ASSERT(dq.cnp_handled > 0);
	CU_ASSERT(dq.deferred > 0);
	CU_ASSERT(none.deferred == 0);
	/* the queue the frames found: 40 % or less of what the window alone keeps there (no
	 * frame resent: an RTO that outgrew the queue's round trip stays backed off) */
	CU_ASSERT(dq.mean_backlog * 5 < none.mean_backlog * 2);
	CU_ASSERT(dq.ce_marked < none.ce_marked);
	/* and the link stays used: not more than 2.5 times as long as at full speed (the paper's
	 * CNP interval, 50 us, here; mlx5's 4 us cuts far deeper on this incast) */
	CU_ASSERT(dq.vtime_ns * 2 < none.vtime_ns * 5);
}

/*
 * The same incast with TIMELY at the senders (25G start, a larger step than the paper's): no
 * marks needed, the round trips the queue stretches past T_high cut the rates (once per round
 * trip), so frames find a shorter queue than with no congestion control (three quarters or less);
 * the link stays in use (at most twice as long), the data lands.
 */
static void
test_incast_timely(void)
{
	union droce_cc_params p;
	struct incast_result none, tm;

	droce_cc_timely_defaults(&p.timely, 25000000000ull);
	/* 768 messages in all give 768 samples: the paper's 10 Mbit/s steps, made for runs of
	 * many thousand, would leave this 10 ms transfer at a crawl after the first cuts */
	p.timely.delta_bps = 500000000ull;
	CU_ASSERT_EQUAL_FATAL(droce_cc_timely_check(&p.timely), 0);
	incast(NULL, NULL, 0, 256, 16384, &none);
	incast(&droce_cc_timely, &p, 0, 256, 16384, &tm);
	CU_ASSERT_EQUAL(none.lost + tm.lost, 0);
	CU_ASSERT(tm.deferred > 0);
	CU_ASSERT(tm.mean_backlog * 4 < none.mean_backlog * 3);
	CU_ASSERT(tm.vtime_ns < none.vtime_ns * 2);
}

DROCE_TEST_MAIN("sim_multi", DROCE_TEST(test_incast_ecn), DROCE_TEST(test_incast_dcqcn),
		DROCE_TEST(test_incast_timely))
