/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion controls from outside the engine (droce_cc_register, stack/droce_cc.h): found by
 * name after the built-in ones, listed by droce_cc_names, the same ops registered twice
 * accepted, another with a taken name, incomplete ops and a full table refused; and the engine
 * drives a registered algorithm: its init, on_send and on_ack run for WRITEs it paces. Then the
 * view tools have of it: droce_dev_qp_next over a device's QPs, the built-in stats ops.
 */
#include <errno.h>
#include <string.h>

#include "droce_test.h"
#include "engine_harness.h"

static unsigned int n_init, n_send, n_ack;

static void
cnt_init(struct droce_cc_state *s, uint64_t now_ns)
{
	s->next_send_ns = now_ns;
	n_init++;
}

/* 1 Gbit/s through the plugin table's pacing helper */
static void
cnt_on_send(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns)
{
	droce_cc_plugin_api.pace(s, bytes, now_ns, 1000000000ull, 100000000000ull);
	n_send++;
}

static void
cnt_on_ack(struct droce_cc_state *s, uint64_t now_ns)
{
	(void)s;
	(void)now_ns;
	n_ack++;
}

static const struct droce_cc_ops counting = {
	.name = "counting",
	.init = cnt_init,
	.on_send = cnt_on_send,
	.on_cnp = droce_cc_ignore,
	.on_ack = cnt_on_ack,
	.next_send_time = droce_cc_next_send_ns,
};

/* The registry the tests fill (a device's, or the runtime's for its plugins) */
static struct droce_cc_registry reg;

static void
test_register(void)
{
	struct droce_cc_ops bad = counting, other = counting;
	struct droce_cc_registry reg2;
	static struct droce_cc_ops more[DROCE_CC_REGISTER_MAX];
	static char names[DROCE_CC_REGISTER_MAX][8];
	char list[256];
	unsigned int i;
	int rc = 0;

	CU_ASSERT_PTR_NULL(droce_cc_find(&reg, "counting"));
	CU_ASSERT_EQUAL(droce_cc_register(&reg, &counting), 0);
	CU_ASSERT_PTR_EQUAL(droce_cc_find(&reg, "counting"), &counting);
	CU_ASSERT_EQUAL(droce_cc_register(&reg, &counting), 0); /* a plugin loaded twice */
	CU_ASSERT_EQUAL(droce_cc_register(&reg, &other), -EEXIST);
	other.name = "dcqcn";
	CU_ASSERT_EQUAL(droce_cc_register(&reg, &other), -EEXIST); /* built-in names too */
	CU_ASSERT_PTR_EQUAL(droce_cc_find(&reg, "dcqcn"), &droce_cc_dcqcn);
	CU_ASSERT_STRING_EQUAL(droce_cc_names(&reg, list, sizeof(list)),
			       "none, dcqcn, timely, counting");
	/* what the engine calls unconditionally must be there; on_rtt may be NULL */
	bad.name = "bad";
	bad.on_ack = NULL;
	CU_ASSERT_EQUAL(droce_cc_register(&reg, &bad), -EINVAL);
	bad = counting;
	bad.name = "";
	CU_ASSERT_EQUAL(droce_cc_register(&reg, &bad), -EINVAL);
	bad.name = "a-name-longer-than-thirty-one-chars";
	CU_ASSERT_EQUAL(droce_cc_register(&reg, &bad), -EINVAL);
	CU_ASSERT_EQUAL(droce_cc_register(&reg, NULL), -EINVAL);
	CU_ASSERT_PTR_NULL(droce_cc_find(&reg, "bad"));
	/* the table holds DROCE_CC_REGISTER_MAX, "counting" among them */
	for (i = 0; i < DROCE_CC_REGISTER_MAX; i++) {
		more[i] = counting;
		snprintf(names[i], sizeof(names[i]), "cc%u", i);
		more[i].name = names[i];
		rc = droce_cc_register(&reg, &more[i]);
		if (i + 1 < DROCE_CC_REGISTER_MAX)
			CU_ASSERT_EQUAL(rc, 0);
	}
	CU_ASSERT_EQUAL(rc, -ENOSPC);
	CU_ASSERT_PTR_EQUAL(droce_cc_find(&reg, "cc0"), &more[0]);
	CU_ASSERT_PTR_NULL(droce_cc_find(&reg, names[DROCE_CC_REGISTER_MAX - 1]));
	CU_ASSERT_EQUAL(droce_cc_register(NULL, &counting), -EINVAL);
	/* another registry (another device's) knows only the built-in ones */
	memset(&reg2, 0, sizeof(reg2));
	CU_ASSERT_PTR_NULL(droce_cc_find(&reg2, "counting"));
	CU_ASSERT_PTR_NULL(droce_cc_find(NULL, "counting"));
	CU_ASSERT_PTR_EQUAL(droce_cc_find(NULL, "timely"), &droce_cc_timely);
	CU_ASSERT_STRING_EQUAL(droce_cc_names(&reg2, list, sizeof(list)), "none, dcqcn, timely");
	/* a short buffer is cut, not overrun */
	CU_ASSERT_STRING_EQUAL(droce_cc_names(&reg, list, 11), "none, dcqc");
}

/* WRITEs on an RC QP whose device runs the registered algorithm, found by name */
static void
test_engine_drives_it(void)
{
	static uint8_t bufa[1 << 16], bufb[1 << 16];
	const struct droce_cc_state *cs;
	struct droce_qp *qp[2];
	struct droce_mr *mr[2];
	struct droce_wc wc[16];
	struct eh_qp_opts o;
	struct eh_world w;
	unsigned int i, done = 0;
	int n;

	CU_ASSERT_EQUAL_FATAL(eh_cc_pair(&w, droce_cc_find(&reg, "counting"), NULL, &o, qp, mr,
					 bufa, bufb, sizeof(bufa)),
			      0);
	CU_ASSERT_PTR_EQUAL(droce_qp_cc(qp[0], &cs), &counting);
	CU_ASSERT(n_init >= 1);
	for (i = 0; i < sizeof(bufa); i++)
		bufa[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < 16; i++) {
		struct droce_sge sge = { (uintptr_t)bufa + i * 4096, 4096, droce_mr_lkey(mr[0]) };
		struct droce_send_wr wr = { .wr_id = i,
					    .sg_list = &sge,
					    .num_sge = 1,
					    .opcode = DROCE_WR_RDMA_WRITE,
					    .send_flags = DROCE_SEND_SIGNALED },
				     *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)bufb + i * 4096;
		wr.wr.rdma.rkey = droce_mr_rkey(mr[1]);
		CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bad), 0);
	}
	eh_run(&w, 10000000000ull);
	while ((n = eh_poll(&w.n[0], wc, 16)) > 0)
		for (i = 0; i < (unsigned int)n; i++)
			done += wc[i].status == DROCE_WC_SUCCESS;
	CU_ASSERT_EQUAL(done, 16);
	CU_ASSERT_EQUAL(memcmp(bufa, bufb, sizeof(bufa)), 0);
	/* 16 x 4 KiB at MTU 1024: 64 data packets, each through on_send; ACKs through on_ack;
	 * paced at 1 Gbit/s, the limiter held packets */
	CU_ASSERT_EQUAL(n_send, 64);
	CU_ASSERT(n_ack >= 1);
	CU_ASSERT(droce_dev_counter(w.n[0].dev, DROCE_CNT_CC_DEFERRED) > 0);
	eh_fini(&w);
}

/* droce_dev_qp_next walks exactly the live QPs; DCQCN's and TIMELY's stats name their figures */
static void
test_qp_walk_and_stats(void)
{
	struct droce_cc_stat st[8];
	union droce_cc_params p;
	struct droce_cc_state cs;
	struct droce_qp *qp[2], *q;
	struct eh_qp_opts o;
	struct eh_world w;
	unsigned int n = 0;

	eh_init(&w, 1500);
	eh_opts_default(&o);
	CU_ASSERT_PTR_NULL(droce_dev_qp_next(w.n[0].dev, NULL));
	eh_pair(&w, DROCE_QPT_RC, &o, qp, 64);
	for (q = droce_dev_qp_next(w.n[0].dev, NULL); q != NULL;
	     q = droce_dev_qp_next(w.n[0].dev, q)) {
		CU_ASSERT_PTR_EQUAL(q, qp[0]);
		n++;
	}
	CU_ASSERT_EQUAL(n, 1);
	droce_qp_destroy(qp[0]);
	CU_ASSERT_PTR_NULL(droce_dev_qp_next(w.n[0].dev, NULL));
	eh_fini(&w);

	droce_cc_defaults(&droce_cc_dcqcn, &p, 0);
	eh_cc_start(&droce_cc_dcqcn, &cs, &p, 0);
	CU_ASSERT_EQUAL(droce_cc_dcqcn.stats(&cs, st, 8), 5);
	CU_ASSERT_STRING_EQUAL(st[0].name, "rate_mbps");
	CU_ASSERT_EQUAL(st[0].value, (int64_t)(p.dcqcn.max_rate_bps / 1000000));
	CU_ASSERT_STRING_EQUAL(st[2].name, "alpha_1024");
	CU_ASSERT_EQUAL(droce_cc_dcqcn.stats(&cs, st, 2), 5); /* fills 2, says 5 */
	droce_cc_defaults(&droce_cc_timely, &p, 0);
	eh_cc_start(&droce_cc_timely, &cs, &p, 0);
	CU_ASSERT_EQUAL(droce_cc_timely.stats(&cs, st, 8), 5);
	CU_ASSERT_STRING_EQUAL(st[1].name, "rtt_ns");
	CU_ASSERT_PTR_NULL(droce_cc_none.stats);
}

DROCE_TEST_MAIN("cc_register", DROCE_TEST(test_register), DROCE_TEST(test_engine_drives_it),
		DROCE_TEST(test_qp_walk_and_stats))
