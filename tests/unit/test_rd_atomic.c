/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * As many READs and atomics outstanding as rxe offers (DROCE_MAX_RD_ATOMIC, 128): a requester
 * with max_rd_atomic 128 has 128 requests on the wire at once, and a responder with
 * max_dest_rd_atomic 128 answers the whole burst, with no request dropped for want of a
 * response slot and none refused as past its resources (IBTA 9.7.5.2.5).
 */
#include "droce_test.h"
#include "engine_harness.h"

#define NREQ 200

static uint8_t la[NREQ * 64] __attribute__((aligned(64)));
static uint8_t ra[NREQ * 64] __attribute__((aligned(64)));

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *lmr, *rmr;
};

static void
fx_init(struct fx *f)
{
	struct droce_inflight_cfg inf;
	struct eh_qp_opts o;
	int err = 0;
	unsigned int i;

	memset(f, 0, sizeof(*f));
	eh_init(&f->w, 1500);
	eh_opts_default(&o);
	o.max_rd_atomic = DROCE_MAX_RD_ATOMIC; /* and max_dest_rd_atomic */
	eh_pair(&f->w, DROCE_QPT_RC, &o, f->qp, 256);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[1]);
	/* No in-flight cap: the burst is bounded by max_rd_atomic alone (123 PSNs of the BDP cap
	 * at 100 Gbit/s would stop it first). */
	droce_inflight_defaults(&inf);
	inf.cap = 0;
	CU_ASSERT_EQUAL(droce_qp_set_inflight(f->qp[0], &inf), 0);
	f->lmr = droce_mr_reg(f->w.n[0].pd, la, sizeof(la), o.access, &err);
	f->rmr = droce_mr_reg(f->w.n[1].pd, ra, sizeof(ra), o.access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->lmr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->rmr);
	memset(la, 0, sizeof(la));
	for (i = 0; i < sizeof(ra); i++)
		ra[i] = (uint8_t)(i * 7 + 3);
}

static void
post(struct fx *f, enum droce_wr_opcode op, uint64_t off, uint32_t len, uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)la + off, len, droce_mr_lkey(f->lmr) };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DROCE_SEND_SIGNALED;
	if (op == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)ra;
		wr.wr.atomic.rkey = droce_mr_rkey(f->rmr);
		wr.wr.atomic.compare_add = 3;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)ra + off;
		wr.wr.rdma.rkey = droce_mr_rkey(f->rmr);
	}
	CU_ASSERT_EQUAL_FATAL(droce_post_send(f->qp[0], &wr, &bad), 0);
}

/* One burst: the requester sends exactly max_rd_atomic requests, the responder answers each. */
static void
burst(struct fx *f)
{
	CU_ASSERT_EQUAL(droce_dev_process(f->w.n[0].dev, f->w.now, 1000), DROCE_MAX_RD_ATOMIC);
	CU_ASSERT_EQUAL(f->w.n[0].sent, DROCE_MAX_RD_ATOMIC);
	eh_run(&f->w, 100000000);
	CU_ASSERT_EQUAL(droce_dev_drops(f->w.n[1].dev, DROCE_DROP_RESOURCE), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(f->qp[1], DROCE_CNT_NAKS_SENT), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(f->qp[1], DROCE_CNT_DUPLICATE_REQUEST), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(f->qp[0], DROCE_CNT_RETRANSMITTED_PKTS), 0);
}

static void
test_reads_128(void)
{
	struct fx f;
	struct droce_wc wc[NREQ];
	unsigned int i;

	fx_init(&f);
	for (i = 0; i < NREQ; i++)
		post(&f, DROCE_WR_RDMA_READ, i * 64, 64, i);
	burst(&f);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RX_READ_REQUESTS), NREQ);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, NREQ), NREQ);
	for (i = 0; i < NREQ; i++) {
		CU_ASSERT_EQUAL(wc[i].wr_id, i);
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(memcmp(la, ra, sizeof(la)), 0);
	eh_fini(&f.w);
}

/* Fetch-and-adds on one word: each returns the sum of those before it, in posting order. */
static void
test_atomics_128(void)
{
	struct fx f;
	struct droce_wc wc[NREQ];
	uint64_t v, start;
	unsigned int i;

	fx_init(&f);
	memcpy(&start, ra, sizeof(start));
	for (i = 0; i < NREQ; i++)
		post(&f, DROCE_WR_ATOMIC_FETCH_AND_ADD, i * 8, 8, i);
	burst(&f);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RX_ATOMIC_REQUESTS), NREQ);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, NREQ), NREQ);
	for (i = 0; i < NREQ; i++) {
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
		memcpy(&v, la + i * 8, sizeof(v));
		CU_ASSERT_EQUAL(v, start + 3ull * i);
	}
	memcpy(&v, ra, sizeof(v));
	CU_ASSERT_EQUAL(v, start + 3ull * NREQ);
	eh_fini(&f.w);
}

/* The limit is the engine's published one: one more is refused, the QP keeps what it had. */
static void
test_limit(void)
{
	struct fx f;
	struct droce_qp_attr a;
	struct droce_qp_init_attr ia;

	fx_init(&f);
	CU_ASSERT_EQUAL(droce_qp_query(f.qp[0], &a, &ia), 0);
	CU_ASSERT_EQUAL(a.max_rd_atomic, DROCE_MAX_RD_ATOMIC);
	CU_ASSERT_EQUAL(a.max_dest_rd_atomic, DROCE_MAX_RD_ATOMIC);
	a.max_rd_atomic = DROCE_MAX_RD_ATOMIC + 1;
	CU_ASSERT_EQUAL(droce_qp_modify(f.qp[0], &a, DROCE_QP_MAX_QP_RD_ATOMIC), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_query(f.qp[0], &a, &ia), 0);
	CU_ASSERT_EQUAL(a.max_rd_atomic, DROCE_MAX_RD_ATOMIC);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("rd_atomic", DROCE_TEST(test_reads_128), DROCE_TEST(test_atomics_128),
		DROCE_TEST(test_limit))
