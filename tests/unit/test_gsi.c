/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GSI, QP1 (IBTA 11.2.5, Annex A17.5.8), and the special QPNs: ordinary QPs never get QPN 0
 * or 1, also when the generation wraps; droce_qp_init_attr.gsi gives QPN 1 once per device
 * (UD only, shard 0 only); a UD SEND to DestQP 1 reaches the GSI with the sender's QPN as
 * src_qp, the GSI's reply leaves with source QP 1; DestQP 0, and 1 without a GSI, are dropped
 * as bad QPNs.
 */
#include "droce_test.h"
#include "engine_harness.h"
#include "num_dev.h"

#define UD_GRH 40 /* a UD receive buffer starts with the GRH area */

/* Fill the device, check every QPN, empty it; rounds times. Returns how many QPNs had a zero
 * generation field (qpn >> slot_bits == 0: the generation wrapped through 0), or -1. */
static int
cycle_qpns(struct num_dev *n, uint32_t max_qp, unsigned int slot_bits, unsigned int rounds)
{
	struct droce_qp **qp = calloc(max_qp, sizeof(*qp));
	uint32_t mask = (1u << slot_bits) - 1, qpn, i;
	unsigned int r;
	int err, gen_zero = 0;

	if (qp == NULL)
		return -1;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < max_qp; i++) {
			qp[i] = num_qp(n, DROCE_QPT_UD, false, &err);
			CU_ASSERT_PTR_NOT_NULL_FATAL(qp[i]);
			qpn = droce_qp_num(qp[i]);
			/* IBTA 11.2.5: 0 and 1 are the special QPs; 0xFFFFFF is multicast */
			CU_ASSERT(qpn != 0 && qpn != DROCE_QPN_GSI && qpn != 0xFFFFFF);
			CU_ASSERT(qpn <= 0xFFFFFF);
			CU_ASSERT((qpn & mask) >= 2); /* slots 0 and 1 are never handed out */
			if (qpn >> slot_bits == 0)
				gen_zero++;
		}
		/* full: max_qp ordinary QPs, no more */
		CU_ASSERT_PTR_NULL(num_qp(n, DROCE_QPT_UD, false, &err));
		CU_ASSERT_EQUAL(err, ENOMEM);
		for (i = 0; i < max_qp; i++)
			CU_ASSERT_EQUAL(droce_qp_destroy(qp[i]), 0);
	}
	free(qp);
	return gen_zero;
}

/* A small device (4 slots: 2 bits of slot, 22 of generation) whose generation starts just below
 * the wrap of both the 32-bit counter and the 22-bit field: QPNs 2 and 3 come out, never 0 or 1. */
static void
test_qpn_wrap_small(void)
{
	struct num_dev n;
	int zero;

	CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 2, 0, 0, 0xFFFFFFF0u), 0);
	zero = cycle_qpns(&n, 2, 2, 64);
	CU_ASSERT(zero > 0); /* the wrap was exercised */
	droce_dev_destroy(n.dev);
}

/* Sharding leaves few generation bits: 1024 slots (10 bits) under 8 shard bits leave 6, so the
 * generation wraps every 64 creates; shard 0 keeps the top bits 0, like QPN 0 and 1. */
static void
test_qpn_wrap_sharded(void)
{
	struct num_dev n;
	int zero;

	CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 1000, 0, 8, 0x2A), 0);
	zero = cycle_qpns(&n, 1000, 10, 3);
	CU_ASSERT(zero > 0);
	droce_dev_destroy(n.dev);
}

/* Creation rules: QPN 1, one per device (-EBUSY), UD only (-EINVAL), again after destroy, not
 * counted against max_qp, shard 0 only. */
static void
test_gsi_create(void)
{
	struct droce_qp_init_attr init;
	struct droce_qp *gsi, *q[2];
	struct num_dev n;
	int err;

	CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 2, 0, 0, 0), 0);
	CU_ASSERT_PTR_NULL(num_qp(&n, DROCE_QPT_RC, true, &err));
	CU_ASSERT_EQUAL(err, EINVAL);
	CU_ASSERT_PTR_NULL(num_qp(&n, DROCE_QPT_UC, true, &err));
	CU_ASSERT_EQUAL(err, EINVAL);
	gsi = num_qp(&n, DROCE_QPT_UD, true, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gsi);
	CU_ASSERT_EQUAL(droce_qp_num(gsi), DROCE_QPN_GSI);
	CU_ASSERT_EQUAL(droce_qp_query(gsi, NULL, &init), 0);
	CU_ASSERT(init.gsi && init.qp_type == DROCE_QPT_UD);
	CU_ASSERT_PTR_NULL(num_qp(&n, DROCE_QPT_UD, true, &err));
	CU_ASSERT_EQUAL(err, EBUSY);
	/* the ordinary QPs still get their max_qp, and never QPN 1 */
	q[0] = num_qp(&n, DROCE_QPT_UD, false, &err);
	q[1] = num_qp(&n, DROCE_QPT_RC, false, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q[1]);
	CU_ASSERT(droce_qp_num(q[0]) != DROCE_QPN_GSI && droce_qp_num(q[1]) != DROCE_QPN_GSI);
	CU_ASSERT_EQUAL(droce_qp_query(q[0], NULL, &init), 0);
	CU_ASSERT_FALSE(init.gsi);
	CU_ASSERT_EQUAL(droce_qp_destroy(gsi), 0);
	gsi = num_qp(&n, DROCE_QPT_UD, true, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gsi);
	CU_ASSERT_EQUAL(droce_qp_num(gsi), DROCE_QPN_GSI);
	CU_ASSERT_EQUAL(droce_qp_destroy(gsi), 0);
	CU_ASSERT_EQUAL(droce_qp_destroy(q[0]), 0);
	CU_ASSERT_EQUAL(droce_qp_destroy(q[1]), 0);
	droce_dev_destroy(n.dev);

	/* QPN 1 names shard 0: a sharded device of shard 0 has it, shard 3 refuses */
	CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 2, 0, 2, 0), 0);
	gsi = num_qp(&n, DROCE_QPT_UD, true, &err);
	CU_ASSERT_PTR_NOT_NULL(gsi);
	if (gsi != NULL)
		CU_ASSERT_EQUAL(droce_qp_num(gsi), DROCE_QPN_GSI);
	droce_dev_destroy(n.dev);
	CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 2, 3, 2, 0), 0);
	CU_ASSERT_PTR_NULL(num_qp(&n, DROCE_QPT_UD, true, &err));
	CU_ASSERT_EQUAL(err, EINVAL);
	q[0] = num_qp(&n, DROCE_QPT_UD, false, &err);
	CU_ASSERT_PTR_NOT_NULL(q[0]); /* ordinary QPs are fine there */
	if (q[0] != NULL)
		CU_ASSERT_EQUAL(droce_qp_num(q[0]) >> 22, 3);
	droce_dev_destroy(n.dev);
}

/* ---- Traffic between two devices (engine_harness.h) ---- */

static uint8_t abuf[4096], bbuf[4096];

struct gx {
	struct eh_world w;
	struct droce_qp *ud; /* ordinary UD QP on node 0 */
	struct droce_mr *amr, *bmr;
	struct droce_ah *to_b, *to_a;
};

static struct droce_qp *
gx_qp(struct eh_node *n, bool gsi)
{
	struct droce_qp_init_attr ia;
	int err = 0;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_UD;
	ia.send_cq = n->cq;
	ia.recv_cq = n->cq;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.gsi = gsi;
	return droce_qp_create(n->pd, &ia, &err);
}

/* INIT with the Q_Key, RTR, RTS: what ibv_modify_qp does for a UD QP. */
static int
gx_up(struct droce_qp *qp, uint32_t qkey)
{
	struct droce_qp_conn c;
	int rc = droce_qp_init(qp, 0, qkey);

	if (rc != 0)
		return rc;
	memset(&c, 0, sizeof(c));
	return droce_qp_connect(qp, &c);
}

static void
gx_init(struct gx *g)
{
	struct droce_av av;
	int err = 0;

	memset(g, 0, sizeof(*g));
	eh_init(&g->w, 1500);
	g->ud = gx_qp(&g->w.n[0], false);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g->ud);
	/* the Q_Key a GSI's reply carries, as the CM's own QP1 has */
	CU_ASSERT_EQUAL_FATAL(gx_up(g->ud, DROCE_QKEY_GSI), 0);
	g->amr = droce_mr_reg(g->w.n[0].pd, abuf, sizeof(abuf), DROCE_ACCESS_LOCAL_WRITE, &err);
	g->bmr = droce_mr_reg(g->w.n[1].pd, bbuf, sizeof(bbuf), DROCE_ACCESS_LOCAL_WRITE, &err);
	CU_ASSERT_FATAL(g->amr != NULL && g->bmr != NULL);
	eh_av(&g->w.n[1], &av);
	g->to_b = droce_ah_create(g->w.n[0].pd, &av, &err);
	eh_av(&g->w.n[0], &av);
	g->to_a = droce_ah_create(g->w.n[1].pd, &av, &err);
	CU_ASSERT_FATAL(g->to_b != NULL && g->to_a != NULL);
}

static int
gx_recv(struct droce_qp *qp, struct droce_mr *mr, uint8_t *buf, uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)buf, 512, droce_mr_lkey(mr) };
	struct droce_recv_wr wr = { id, NULL, &sge, 1 }, *bad;

	return droce_post_recv(qp, &wr, &bad);
}

/* A 100-byte SEND of buf[0..99] from qp through ah to (dqpn, qkey). */
static int
gx_send(struct droce_qp *qp, struct droce_mr *mr, uint8_t *buf, struct droce_ah *ah, uint32_t dqpn,
	uint32_t qkey)
{
	struct droce_sge sge = { (uintptr_t)buf, 100, droce_mr_lkey(mr) };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = qkey;
	return droce_post_send(qp, &wr, &bad);
}

/* Node 0's UD QP to node 1's GSI and back: src_qp on both sides, payload intact, the Q_Key
 * checked as for any UD QP. */
static void
test_gsi_traffic(void)
{
	struct droce_dev *b;
	struct droce_wc wc[4];
	struct droce_qp *gsi;
	uint64_t qkey_drops;
	unsigned int i;
	struct gx g;

	gx_init(&g);
	b = g.w.n[1].dev;
	gsi = gx_qp(&g.w.n[1], true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gsi);
	CU_ASSERT_EQUAL_FATAL(droce_qp_num(gsi), DROCE_QPN_GSI);
	CU_ASSERT_EQUAL_FATAL(gx_up(gsi, DROCE_QKEY_GSI), 0);
	CU_ASSERT_EQUAL(gx_recv(gsi, g.bmr, bbuf, 11), 0);
	for (i = 0; i < 100; i++)
		abuf[i] = (uint8_t)(i * 7 + 3);
	memset(bbuf, 0xEE, sizeof(bbuf));

	/* a Q_Key other than the GSI's is dropped like on any UD QP (C10-15) */
	qkey_drops = droce_dev_drops(b, DROCE_DROP_QKEY);
	CU_ASSERT_EQUAL(gx_send(g.ud, g.amr, abuf, g.to_b, DROCE_QPN_GSI, 0x12345678), 0);
	eh_run(&g.w, 10000000);
	CU_ASSERT_EQUAL(eh_poll(&g.w.n[1], wc, 4), 0);
	CU_ASSERT_EQUAL(droce_dev_drops(b, DROCE_DROP_QKEY), qkey_drops + 1);

	/* the well-known Q_Key reaches the GSI's receive queue */
	CU_ASSERT_EQUAL(gx_send(g.ud, g.amr, abuf, g.to_b, DROCE_QPN_GSI, DROCE_QKEY_GSI), 0);
	eh_run(&g.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&g.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_RECV);
	CU_ASSERT_EQUAL(wc[0].wr_id, 11);
	CU_ASSERT_EQUAL(wc[0].qp_num, DROCE_QPN_GSI);
	CU_ASSERT_EQUAL(wc[0].src_qp, droce_qp_num(g.ud));
	CU_ASSERT_EQUAL(wc[0].byte_len, UD_GRH + 100);
	CU_ASSERT_EQUAL(memcmp(bbuf + UD_GRH, abuf, 100), 0);
	CU_ASSERT_EQUAL(droce_dev_drops(b, DROCE_DROP_QKEY), qkey_drops + 1);

	/* the reply leaves from QP1: src_qp 1 at node 0 */
	memset(abuf + 1024, 0xEE, 512);
	for (i = 0; i < 100; i++)
		bbuf[2048 + i] = (uint8_t)(0xA5 ^ i);
	CU_ASSERT_EQUAL(gx_recv(g.ud, g.amr, abuf + 1024, 21), 0);
	CU_ASSERT_EQUAL(
		gx_send(gsi, g.bmr, bbuf + 2048, g.to_a, droce_qp_num(g.ud), DROCE_QKEY_GSI), 0);
	eh_run(&g.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&g.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].wr_id, 21);
	CU_ASSERT_EQUAL(wc[0].qp_num, droce_qp_num(g.ud));
	CU_ASSERT_EQUAL(wc[0].src_qp, DROCE_QPN_GSI);
	CU_ASSERT_EQUAL(wc[0].byte_len, UD_GRH + 100);
	CU_ASSERT_EQUAL(memcmp(abuf + 1024 + UD_GRH, bbuf + 2048, 100), 0);
	CU_ASSERT_EQUAL(droce_qp_destroy(gsi), 0);
	eh_fini(&g.w);
}

/* DestQP 1 on a device without a GSI (never created, or destroyed), and DestQP 0 always:
 * dropped as a bad QPN (CA17-33 for QP0), no completion. */
static void
test_gsi_absent_drop(void)
{
	struct droce_wc wc[4];
	struct droce_dev *b;
	struct droce_qp *gsi;
	uint64_t bad;
	struct gx g;

	gx_init(&g);
	b = g.w.n[1].dev;
	bad = droce_dev_drops(b, DROCE_DROP_BAD_QPN);
	CU_ASSERT_EQUAL(gx_send(g.ud, g.amr, abuf, g.to_b, DROCE_QPN_GSI, DROCE_QKEY_GSI), 0);
	eh_run(&g.w, 10000000);
	CU_ASSERT_EQUAL(droce_dev_drops(b, DROCE_DROP_BAD_QPN), bad + 1);
	CU_ASSERT_EQUAL(gx_send(g.ud, g.amr, abuf, g.to_b, 0, DROCE_QKEY_GSI), 0);
	eh_run(&g.w, 10000000);
	CU_ASSERT_EQUAL(droce_dev_drops(b, DROCE_DROP_BAD_QPN), bad + 2);

	/* created, brought up, destroyed: the slot is empty again */
	gsi = gx_qp(&g.w.n[1], true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(gsi);
	CU_ASSERT_EQUAL(gx_up(gsi, DROCE_QKEY_GSI), 0);
	CU_ASSERT_EQUAL(gx_recv(gsi, g.bmr, bbuf, 1), 0);
	CU_ASSERT_EQUAL(droce_qp_destroy(gsi), 0);
	CU_ASSERT_EQUAL(gx_send(g.ud, g.amr, abuf, g.to_b, DROCE_QPN_GSI, DROCE_QKEY_GSI), 0);
	eh_run(&g.w, 10000000);
	CU_ASSERT_EQUAL(droce_dev_drops(b, DROCE_DROP_BAD_QPN), bad + 3);
	CU_ASSERT_EQUAL(eh_poll(&g.w.n[1], wc, 4), 0);
	eh_fini(&g.w);
}

DROCE_TEST_MAIN("gsi", DROCE_TEST(test_qpn_wrap_small), DROCE_TEST(test_qpn_wrap_sharded),
		DROCE_TEST(test_gsi_create), DROCE_TEST(test_gsi_absent_drop),
		DROCE_TEST(test_gsi_traffic))
