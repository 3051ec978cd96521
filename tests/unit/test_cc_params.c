/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control per device and per QP (stack/droce_cc.h, droce_ext.h): two QPs of one
 * device running DCQCN with different parameters (one from its init attributes) pace at
 * different rates, and one on DCQCN beside one on TIMELY answer CE marks differently; two devices with different defaults give their QPs each its own; an
 * unknown algorithm or refused parameters fail the QP's creation; a device's registry is its
 * own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "droce_test.h"
#include "engine_harness.h"

#define MSG 65536u

static union droce_cc_params
dcqcn_at(uint64_t max_bps)
{
	union droce_cc_params p;

	droce_cc_defaults(&droce_cc_dcqcn, &p, 0);
	p.dcqcn.max_rate_bps = max_bps;
	p.dcqcn.min_rate_bps = 1000000;
	return p;
}

/* One 64 KiB WRITE from qp (on node from) to the peer's buffer. */
static void
post_write(struct droce_qp *qp, struct droce_mr *lmr, struct droce_mr *rmr, uint8_t *src,
	   uint8_t *dst, uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)src, MSG, droce_mr_lkey(lmr) };
	struct droce_send_wr wr = { .wr_id = id,
				    .sg_list = &sge,
				    .num_sge = 1,
				    .opcode = DROCE_WR_RDMA_WRITE,
				    .send_flags = DROCE_SEND_SIGNALED },
			     *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = droce_mr_rkey(rmr);
	CU_ASSERT_EQUAL(droce_post_send(qp, &wr, &bad), 0);
}

/* Run until the completions of wr_id 0 and 1 (on nodes na and nb) are in; their times. */
static void
run_until_done(struct eh_world *w, unsigned int na, unsigned int nb, uint64_t t[2])
{
	struct droce_wc wc[8];
	uint64_t start = w->now;
	unsigned int k;
	int n;

	t[0] = t[1] = 0;
	while ((t[0] == 0 || t[1] == 0) && w->now - start < 100000000ull) {
		uint64_t was = w->now;

		eh_run(w, 2000);
		if (w->now < was + 2000)
			w->now = was + 2000; /* eh_run stops early when nothing is due */
		for (k = 0; k < 2; k++) {
			n = eh_poll(&w->n[k == 0 ? na : nb], wc, 8);
			while (n-- > 0) {
				CU_ASSERT_EQUAL(wc[n].status, DROCE_WC_SUCCESS);
				if (wc[n].wr_id < 2)
					t[wc[n].wr_id] = w->now - start;
			}
		}
	}
}

/* Two QPs on node 0 run DCQCN: one at the device's 10 Gbit/s, one at the 1 Gbit/s its own
 * attributes give; the second takes about ten times as long for the same WRITE. */
static void
test_two_qps_one_device(void)
{
	static uint8_t src[2][MSG], dst[2][MSG];
	union droce_cc_params dev_p = dcqcn_at(10000000000ull), qp_p = dcqcn_at(1000000000ull);
	const struct droce_cc_state *cs[2];
	struct droce_qp *a[2], *b[2];
	struct droce_mr *smr[2], *dmr[2];
	struct droce_dcqcn_stats st;
	struct eh_qp_opts o;
	struct eh_world w;
	uint64_t t[2];
	int err = 0, i;

	eh_init(&w, 1500);
	CU_ASSERT_EQUAL_FATAL(droce_dev_set_cc(w.n[0].dev, &droce_cc_dcqcn, &dev_p), 0);
	eh_opts_default(&o);
	eh_pair(&w, DROCE_QPT_RC, &o, a, 16);
	o.cc[0] = "dcqcn";
	o.cc_params[0] = &qp_p;
	eh_pair(&w, DROCE_QPT_RC, &o, b, 16);
	CU_ASSERT_FATAL(a[0] != NULL && b[0] != NULL);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(a[0], &cs[0]), &droce_cc_dcqcn);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(b[0], &cs[1]), &droce_cc_dcqcn);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(a[1], NULL), &droce_cc_none); /* node 1's device */
	droce_cc_dcqcn_stats(cs[0], &st);
	CU_ASSERT_EQUAL(st.rate_bps, 10000000000ull);
	droce_cc_dcqcn_stats(cs[1], &st);
	CU_ASSERT_EQUAL(st.rate_bps, 1000000000ull);
	/* droce_qp_query reports what the QP runs */
	{
		struct droce_qp_init_attr qi;
		struct droce_qp_attr qa;

		CU_ASSERT_EQUAL_FATAL(droce_qp_query(b[0], &qa, &qi), 0);
		CU_ASSERT_STRING_EQUAL(qi.cc, "dcqcn");
		CU_ASSERT_EQUAL(qi.cc_params->dcqcn.max_rate_bps, 1000000000ull);
	}
	for (i = 0; i < 2; i++) {
		smr[i] = droce_mr_reg(w.n[0].pd, src[i], MSG, o.access, &err);
		dmr[i] = droce_mr_reg(w.n[1].pd, dst[i], MSG, o.access, &err);
		CU_ASSERT_FATAL(smr[i] != NULL && dmr[i] != NULL);
		memset(src[i], 0x5A + i, MSG);
	}
	post_write(a[0], smr[0], dmr[0], src[0], dst[0], 0);
	post_write(b[0], smr[1], dmr[1], src[1], dst[1], 1);
	run_until_done(&w, 0, 0, t);
	printf("\n  64 KiB at 10 and 1 Gbit/s: %" PRIu64 " and %" PRIu64 " ns ", t[0], t[1]);
	/* 64 KiB + headers: ~55 us at 10 Gbit/s, ~550 us at 1 Gbit/s */
	CU_ASSERT(t[0] > 0 && t[0] < 150000);
	CU_ASSERT(t[1] > 450000 && t[1] < 900000);
	CU_ASSERT_EQUAL(memcmp(src[0], dst[0], MSG), 0);
	CU_ASSERT_EQUAL(memcmp(src[1], dst[1], MSG), 0);
	eh_fini(&w);
}

/* Two QPs on node 0, one on the device's DCQCN, one on TIMELY from its own attributes, both at
 * 10 Gbit/s, every data frame CE-marked: the DCQCN QP is cut by the CNPs and takes longer for
 * the same WRITEs; TIMELY hears RTTs, not CNPs, and keeps its rate. */
static void
test_two_algorithms_one_device(void)
{
	static uint8_t src[2][MSG], dst[2][MSG];
	union droce_cc_params dev_p = dcqcn_at(10000000000ull), qp_p;
	const struct droce_cc_state *cs[2];
	struct droce_qp *a[2], *b[2];
	struct droce_mr *smr[2], *dmr[2];
	struct droce_dcqcn_stats ds;
	struct droce_timely_stats ts;
	struct eh_qp_opts o;
	struct eh_world w;
	unsigned int marked = 0;
	uint64_t t[2];
	int err = 0, i;

	droce_cc_defaults(&droce_cc_timely, &qp_p, 10000000000ull);
	eh_init(&w, 1500);
	CU_ASSERT_EQUAL_FATAL(droce_dev_set_cc(w.n[0].dev, &droce_cc_dcqcn, &dev_p), 0);
	eh_opts_default(&o);
	eh_pair(&w, DROCE_QPT_RC, &o, a, 16);
	o.cc[0] = "timely";
	o.cc_params[0] = &qp_p;
	eh_pair(&w, DROCE_QPT_RC, &o, b, 16);
	CU_ASSERT_FATAL(a[0] != NULL && b[0] != NULL);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(a[0], &cs[0]), &droce_cc_dcqcn);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(b[0], &cs[1]), &droce_cc_timely);
	for (i = 0; i < 2; i++) {
		smr[i] = droce_mr_reg(w.n[0].pd, src[i], MSG, o.access, &err);
		dmr[i] = droce_mr_reg(w.n[1].pd, dst[i], MSG, o.access, &err);
		CU_ASSERT_FATAL(smr[i] != NULL && dmr[i] != NULL);
		memset(src[i], 0x3C + i, MSG);
	}
	w.n[0].filter = eh_mark_ce;
	w.n[0].filter_arg = &marked;
	post_write(a[0], smr[0], dmr[0], src[0], dst[0], 0);
	post_write(b[0], smr[1], dmr[1], src[1], dst[1], 1);
	run_until_done(&w, 0, 0, t);
	droce_cc_dcqcn_stats(cs[0], &ds);
	droce_cc_timely_stats(cs[1], &ts);
	printf("\n  64 KiB, all CE: DCQCN %" PRIu64 " ns (%" PRIu64 " cuts, %" PRIu64
	       " Mbit/s), TIMELY %" PRIu64 " ns (%" PRIu64 " Mbit/s) ",
	       t[0], ds.cuts, ds.rate_bps / 1000000, t[1], ts.rate_bps / 1000000);
	CU_ASSERT(marked > 32);
	CU_ASSERT(droce_qp_counter(a[0], DROCE_CNT_RP_CNP_HANDLED) > 0);
	CU_ASSERT(droce_qp_counter(b[0], DROCE_CNT_RP_CNP_HANDLED) > 0); /* heard, ignored */
	CU_ASSERT(ds.cuts > 0);
	CU_ASSERT(ds.rate_bps < 5000000000ull);
	CU_ASSERT_EQUAL(ts.decreases, 0);
	CU_ASSERT(ts.rate_bps >= 10000000000ull);
	CU_ASSERT(t[0] > 0 && t[1] > 0 && t[0] > 2 * t[1]);
	CU_ASSERT_EQUAL(memcmp(src[0], dst[0], MSG), 0);
	CU_ASSERT_EQUAL(memcmp(src[1], dst[1], MSG), 0);
	eh_fini(&w);
}

/* Node 0's device defaults to DCQCN at 1 Gbit/s, node 1's at 10 Gbit/s: each side of one
 * pair writes at its own device's rate. */
static void
test_two_devices(void)
{
	static uint8_t buf[2][2][MSG];
	union droce_cc_params p0 = dcqcn_at(1000000000ull), p1 = dcqcn_at(10000000000ull);
	const struct droce_cc_state *cs;
	const union droce_cc_params *dp;
	struct droce_mr *mr[2][2];
	struct droce_qp *qp[2];
	struct eh_qp_opts o;
	struct eh_world w;
	uint64_t t[2];
	int err = 0, i, k;

	eh_init(&w, 1500);
	CU_ASSERT_EQUAL_FATAL(droce_dev_set_cc(w.n[0].dev, &droce_cc_dcqcn, &p0), 0);
	CU_ASSERT_EQUAL_FATAL(droce_dev_set_cc(w.n[1].dev, &droce_cc_dcqcn, &p1), 0);
	CU_ASSERT_PTR_EQUAL(droce_dev_cc(w.n[0].dev, &dp), &droce_cc_dcqcn);
	CU_ASSERT_EQUAL(dp->dcqcn.max_rate_bps, 1000000000ull);
	eh_opts_default(&o);
	eh_pair(&w, DROCE_QPT_RC, &o, qp, 16);
	CU_ASSERT_FATAL(qp[0] != NULL && qp[1] != NULL);
	droce_qp_cc(qp[0], &cs);
	CU_ASSERT_EQUAL(cs->params->dcqcn.max_rate_bps, 1000000000ull);
	droce_qp_cc(qp[1], &cs);
	CU_ASSERT_EQUAL(cs->params->dcqcn.max_rate_bps, 10000000000ull);
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++) {
			mr[i][k] = droce_mr_reg(w.n[i].pd, buf[i][k], MSG, o.access, &err);
			CU_ASSERT_FATAL(mr[i][k] != NULL);
			memset(buf[i][k], i * 16 + k, MSG);
		}
	post_write(qp[0], mr[0][0], mr[1][1], buf[0][0], buf[1][1], 0);
	post_write(qp[1], mr[1][0], mr[0][1], buf[1][0], buf[0][1], 1);
	run_until_done(&w, 0, 1, t);
	CU_ASSERT(t[0] > 450000 && t[0] < 900000); /* 1 Gbit/s */
	CU_ASSERT(t[1] > 0 && t[1] < 150000);	   /* 10 Gbit/s */
	CU_ASSERT_EQUAL(memcmp(buf[0][0], buf[1][1], MSG), 0);
	CU_ASSERT_EQUAL(memcmp(buf[1][0], buf[0][1], MSG), 0);
	eh_fini(&w);
}

/* Creation fails on a name the device does not know or parameters the algorithm refuses;
 * setting a QP's algorithm checks its parameters too; registries are per device. */
static void
test_refused(void)
{
	union droce_cc_params bad = dcqcn_at(1000000000ull);
	struct droce_cc_ops ok = droce_cc_none;
	struct droce_qp_init_attr ia;
	struct droce_qp *qp;
	struct eh_world w;
	int err = 0;

	eh_init(&w, 1500);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.send_cq = ia.recv_cq = w.n[0].cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.cc = "cubic";
	CU_ASSERT_PTR_NULL(droce_qp_create(w.n[0].pd, &ia, &err));
	CU_ASSERT_EQUAL(err, EINVAL); /* as droce_qp_create reports it */
	bad.dcqcn.min_rate_bps = bad.dcqcn.max_rate_bps + 1;
	ia.cc = "dcqcn";
	ia.cc_params = &bad;
	CU_ASSERT_PTR_NULL(droce_qp_create(w.n[0].pd, &ia, &err));
	CU_ASSERT_EQUAL(err, EINVAL); /* as droce_qp_create reports it */
	CU_ASSERT_EQUAL(droce_dev_set_cc(w.n[0].dev, &droce_cc_dcqcn, &bad), -EINVAL);
	/* a name only one device's registry has */
	ok.name = "mine";
	CU_ASSERT_EQUAL(droce_dev_cc_register(w.n[1].dev, &ok), 0);
	CU_ASSERT_PTR_EQUAL(droce_dev_cc_find(w.n[1].dev, "mine"), &ok);
	CU_ASSERT_PTR_NULL(droce_dev_cc_find(w.n[0].dev, "mine"));
	ia.cc = "mine";
	ia.cc_params = NULL;
	CU_ASSERT_PTR_NULL(droce_qp_create(w.n[0].pd, &ia, &err));
	ia.send_cq = ia.recv_cq = w.n[1].cq;
	qp = droce_qp_create(w.n[1].pd, &ia, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(qp, NULL), &ok);
	CU_ASSERT_EQUAL(droce_qp_set_cc(qp, &droce_cc_dcqcn, &bad, 0), -EINVAL);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(qp, NULL), &ok); /* unchanged */
	CU_ASSERT_EQUAL(droce_qp_set_cc(qp, &droce_cc_dcqcn, NULL, 0), 0);
	droce_qp_destroy(qp);
	eh_fini(&w);
}

DROCE_TEST_MAIN("cc_params", DROCE_TEST(test_two_qps_one_device),
		DROCE_TEST(test_two_algorithms_one_device), DROCE_TEST(test_two_devices),
		DROCE_TEST(test_refused))
