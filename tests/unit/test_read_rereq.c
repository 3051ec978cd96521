/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * READ recovery on the wire: a lost READ response is asked for once, from its PSN, the RETH's
 * VA advanced and its length the missing run's (IBTA 9.7.5.2.x READ retry); the responses behind
 * it, of the same READ and of the READs after it, are kept and asked for no more; an atomic ACK
 * lost between READs is asked for with the atomic's own PSN, replayed from the responder's
 * cache (never executed twice).
 */
#include "droce_test.h"
#include "droce_pkt.h"
#include "engine_harness.h"

#define NREAD 4
#define RLEN  8192 /* 8 responses at path MTU 1024 */

static uint8_t la[NREAD * RLEN + 64] __attribute__((aligned(64)));
static uint8_t ra[NREAD * RLEN + 64] __attribute__((aligned(64)));

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *lmr, *rmr;
	/* what the filters saw */
	struct droce_pkt req[32]; /* node 0's READ and atomic requests */
	unsigned int nreq;
	unsigned int resp;    /* node 1's READ responses and atomic ACKs */
	unsigned int drop_at; /* drop node 1's response number drop_at (1-based) */
};

static struct fx *cur;

static bool
see_req(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt p;

	(void)from;
	(void)arg;
	if (droce_parse(frame, len, &p, 0) == DROCE_DROP_NONE &&
	    (p.opcode == DROCE_OP_RC_RDMA_READ_REQUEST || p.opcode == DROCE_OP_RC_FETCH_ADD) &&
	    cur->nreq < 32)
		cur->req[cur->nreq++] = p;
	return true;
}

static bool
drop_resp(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt p;

	(void)from;
	(void)arg;
	if (droce_parse(frame, len, &p, 0) != DROCE_DROP_NONE ||
	    !(droce_opcode_info(p.opcode)->flags & (DROCE_OPF_READ | DROCE_OPF_ATOMIC)))
		return true;
	return ++cur->resp != cur->drop_at;
}

static void
fx_init(struct fx *f, unsigned int drop_at)
{
	struct eh_qp_opts o;
	int err = 0;
	unsigned int i;

	memset(f, 0, sizeof(*f));
	eh_init(&f->w, 1500);
	eh_opts_default(&o);
	o.max_rd_atomic = 8;
	eh_pair(&f->w, DROCE_QPT_RC, &o, f->qp, 16);
	f->lmr = droce_mr_reg(f->w.n[0].pd, la, sizeof(la), o.access, &err);
	f->rmr = droce_mr_reg(f->w.n[1].pd, ra, sizeof(ra), o.access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->lmr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->rmr);
	memset(la, 0, sizeof(la));
	for (i = 0; i < sizeof(ra); i++)
		ra[i] = (uint8_t)(i * 13 + 1);
	f->drop_at = drop_at;
	f->w.n[0].filter = see_req;
	f->w.n[1].filter = drop_resp;
	cur = f;
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
		wr.wr.atomic.remote_addr = (uintptr_t)ra + NREAD * RLEN;
		wr.wr.atomic.rkey = droce_mr_rkey(f->rmr);
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)ra + off;
		wr.wr.rdma.rkey = droce_mr_rkey(f->rmr);
	}
	CU_ASSERT_EQUAL_FATAL(droce_post_send(f->qp[0], &wr, &bad), 0);
}

static void
expect_done(struct fx *f, unsigned int n)
{
	struct droce_wc wc[8];
	unsigned int i;

	CU_ASSERT_EQUAL_FATAL(eh_poll(&f->w.n[0], wc, 8), (int)n);
	for (i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(wc[i].wr_id, i);
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(memcmp(la, ra, NREAD * RLEN), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(f->qp[0], DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
}

/* The third response of the first READ is lost: one re-request for that one packet. */
static void
test_one_lost_response(void)
{
	struct fx f;
	unsigned int i;

	fx_init(&f, 3);
	for (i = 0; i < NREAD; i++)
		post(&f, DROCE_WR_RDMA_READ, i * RLEN, RLEN, i);
	eh_run(&f.w, 100000000);
	expect_done(&f, NREAD);
	CU_ASSERT_EQUAL_FATAL(f.nreq, NREAD + 1);
	/* the re-request: the lost PSN, VA 2 MTUs in, one MTU long */
	CU_ASSERT_EQUAL(f.req[NREAD].psn, (f.req[0].psn + 2) & 0xFFFFFF);
	CU_ASSERT_EQUAL(f.req[NREAD].reth_va, f.req[0].reth_va + 2 * 1024);
	CU_ASSERT_EQUAL(f.req[NREAD].reth_len, 1024);
	CU_ASSERT_EQUAL(f.req[NREAD].reth_rkey, f.req[0].reth_rkey);
	/* every response sent once, the lost one twice; the 29 behind the gap were kept */
	CU_ASSERT_EQUAL(f.resp, NREAD * RLEN / 1024 + 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_READ_REREQ), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_READ_RESP_AHEAD),
			NREAD * RLEN / 1024 - 3);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_READ_REEXECUTED), 1);
	eh_fini(&f.w);
}

/* The last response of a READ is lost: the re-request asks for the rest of the READ (its
 * length is what is left, not a full MTU). */
static void
test_lost_last_response(void)
{
	struct fx f;
	unsigned int i;

	fx_init(&f, 8);
	for (i = 0; i < NREAD; i++)
		post(&f, DROCE_WR_RDMA_READ, i * RLEN, RLEN - (i == 0 ? 100 : 0), i);
	memset(la + RLEN - 100, 0, 100);
	eh_run(&f.w, 100000000);
	memcpy(la + RLEN - 100, ra + RLEN - 100, 100); /* not read: not compared */
	expect_done(&f, NREAD);
	CU_ASSERT_EQUAL_FATAL(f.nreq, NREAD + 1);
	CU_ASSERT_EQUAL(f.req[NREAD].psn, (f.req[0].psn + 7) & 0xFFFFFF);
	CU_ASSERT_EQUAL(f.req[NREAD].reth_va, f.req[0].reth_va + 7 * 1024);
	CU_ASSERT_EQUAL(f.req[NREAD].reth_len, RLEN - 100 - 7 * 1024);
	CU_ASSERT_EQUAL(f.resp, NREAD * RLEN / 1024 + 1);
	eh_fini(&f.w);
}

/* An atomic ACK lost between READs: the atomic is asked for again with its own PSN and
 * answered from the result cache; the READ after it was kept. */
static void
test_lost_atomic_ack(void)
{
	struct fx f;
	uint64_t v, start;

	fx_init(&f, 9);
	memcpy(&start, ra + NREAD * RLEN, sizeof(start));
	post(&f, DROCE_WR_RDMA_READ, 0, RLEN, 0);
	post(&f, DROCE_WR_ATOMIC_FETCH_AND_ADD, NREAD * RLEN, 8, 1);
	post(&f, DROCE_WR_RDMA_READ, RLEN, RLEN, 2);
	eh_run(&f.w, 100000000);
	memcpy(&v, la + NREAD * RLEN, sizeof(v));
	CU_ASSERT_EQUAL(v, start); /* the original value, from the replay */
	{
		struct droce_wc wc[8];
		unsigned int i;

		CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 8), 3);
		for (i = 0; i < 3; i++)
			CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(memcmp(la, ra, 2 * RLEN), 0);
	CU_ASSERT_EQUAL_FATAL(f.nreq, 4);
	CU_ASSERT_EQUAL(f.req[3].opcode, DROCE_OP_RC_FETCH_ADD);
	CU_ASSERT_EQUAL(f.req[3].psn, f.req[1].psn);
	memcpy(&v, ra + NREAD * RLEN, sizeof(v));
	CU_ASSERT_EQUAL(v, start + 1); /* executed once */
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_ATOMIC_REPLAYED), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("read_rereq", DROCE_TEST(test_one_lost_response),
		DROCE_TEST(test_lost_last_response), DROCE_TEST(test_lost_atomic_ack))
