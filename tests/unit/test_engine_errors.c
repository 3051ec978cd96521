/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error paths end to end, each with its exact completion status and counters: remote access
 * violations of every kind (and not a byte touched), invalid atomics, RNR with rnr_retry 0 and 7,
 * retry exhaustion when the peer vanishes, receive buffer too small, local protection, CQ
 * overflow from traffic, UD Q_Key mismatch and the privileged Q_Key rule.
 */
#include "droce_test.h"
#include "engine_harness.h"

#define ALL_ACCESS \
	(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | \
	 DROCE_ACCESS_REMOTE_ATOMIC)

static uint8_t la[65536], ra[65536];

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *lmr, *rmr;
	struct eh_qp_opts o;
};

static void
fx_init(struct fx *f, enum droce_qp_type t, unsigned int remote_access)
{
	int err = 0;

	eh_init(&f->w, 4200);
	eh_opts_default(&f->o);
	eh_pair(&f->w, t, &f->o, f->qp, 16);
	f->lmr = droce_mr_reg(f->w.n[0].pd, la, sizeof(la), ALL_ACCESS, &err);
	f->rmr = droce_mr_reg(f->w.n[1].pd, ra, sizeof(ra), remote_access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->rmr);
	memset(la, 0x11, sizeof(la));
	memset(ra, 0x22, sizeof(ra));
}

static int
fx_send(struct fx *f, enum droce_wr_opcode op, uint32_t len, uint64_t raddr, uint32_t rkey,
	uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)la, len, droce_mr_lkey(f->lmr) };

	return eh_post1(f->qp[0], op, &sge, raddr, rkey, 1, id);
}

static int
fx_recv(struct fx *f, uint32_t len, uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)ra, len, droce_mr_lkey(f->rmr) };
	struct droce_recv_wr wr = { id, NULL, &sge, 1 }, *bad;

	return droce_post_recv(f->qp[1], &wr, &bad);
}

static bool
untouched(void)
{
	size_t i;

	for (i = 0; i < sizeof(ra); i++)
		if (ra[i] != 0x22)
			return false;
	return true;
}

/* One violating request after a good one; the good one completes, the bad one fails with
 * want, a third WR flushes, the responder is in ERR with want_ev, memory is untouched. */
static void
violation(enum droce_wr_opcode op, uint32_t len, uint64_t raddr, bool bad_key,
	  unsigned int remote_access, unsigned int qp_access, enum droce_wc_status want,
	  enum droce_event_type want_ev)
{
	struct fx f;
	struct droce_wc wc[8];
	struct droce_async_event ev;
	uint32_t rkey;
	int n;

	fx_init(&f, DROCE_QPT_RC, remote_access);
	if (qp_access != ALL_ACCESS) {
		struct droce_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_access_flags = qp_access;
		CU_ASSERT_EQUAL(droce_qp_modify(f.qp[1], &a, DROCE_QP_ACCESS_FLAGS), 0);
	}
	rkey = droce_mr_rkey(f.rmr) ^ (bad_key ? 0x01000000u : 0);
	/* a good zero-length request first, of a kind the QP is enabled for */
	CU_ASSERT_EQUAL(fx_send(&f,
				(qp_access & DROCE_ACCESS_REMOTE_WRITE) ? DROCE_WR_RDMA_WRITE :
									  DROCE_WR_RDMA_READ,
				0, (uintptr_t)ra, 0, 1),
			0);
	CU_ASSERT_EQUAL(fx_send(&f, op, len, raddr, rkey, 2), 0);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND, 4, 0, 0, 3), 0);
	eh_run(&f.w, 100000000);
	n = eh_poll(&f.w.n[0], wc, 8);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_EQUAL(wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(wc[1].status, want);
	CU_ASSERT_EQUAL(wc[2].wr_id, 3);
	CU_ASSERT_EQUAL(wc[2].status, DROCE_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[0]), DROCE_QPS_ERR);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[1]), DROCE_QPS_ERR);
	CU_ASSERT_TRUE(untouched());
	if (want == DROCE_WC_REM_ACCESS_ERR) {
		CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_REQ_REMOTE_ACCESS_ERRORS), 1);
		CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RESP_REMOTE_ACCESS_ERRORS), 1);
		CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_RKEY), 1);
	} else {
		CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_REQ_REMOTE_INVALID_REQUEST), 1);
	}
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_REQ_CQE_ERROR), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_REQ_CQE_FLUSH_ERROR), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_NAKS_SENT), 1);
	CU_ASSERT_EQUAL(droce_dev_get_async_event(f.w.n[1].dev, &ev), 0);
	CU_ASSERT_EQUAL(ev.type, want_ev);
	CU_ASSERT_PTR_EQUAL(ev.element.qp, f.qp[1]);
	eh_fini(&f.w);
}

static void
test_rkey_wrong(void)
{
	violation(DROCE_WR_RDMA_WRITE, 100, (uintptr_t)ra, true, ALL_ACCESS, ALL_ACCESS,
		  DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	violation(DROCE_WR_RDMA_READ, 100, (uintptr_t)ra, true, ALL_ACCESS, ALL_ACCESS,
		  DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	violation(DROCE_WR_ATOMIC_FETCH_AND_ADD, 8, (uintptr_t)ra, true, ALL_ACCESS, ALL_ACCESS,
		  DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
}

static void
test_bounds(void)
{
	/* starts inside, ends one byte past; starts before; huge length wrapping 64 bits */
	violation(DROCE_WR_RDMA_WRITE, 2000, (uintptr_t)ra + sizeof(ra) - 1999, false, ALL_ACCESS,
		  ALL_ACCESS, DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	violation(DROCE_WR_RDMA_WRITE, 16, (uintptr_t)ra - 8, false, ALL_ACCESS, ALL_ACCESS,
		  DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	violation(DROCE_WR_RDMA_READ, 4096, UINT64_MAX - 100, false, ALL_ACCESS, ALL_ACCESS,
		  DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	violation(DROCE_WR_ATOMIC_CMP_AND_SWP, 8, (uintptr_t)ra + sizeof(ra) - 4, false, ALL_ACCESS,
		  ALL_ACCESS, DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
}

static void
test_access_flags(void)
{
	const unsigned int lw = DROCE_ACCESS_LOCAL_WRITE;

	/* the MR lacks the right */
	violation(DROCE_WR_RDMA_WRITE, 64, (uintptr_t)ra, false, lw | DROCE_ACCESS_REMOTE_READ,
		  ALL_ACCESS, DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	violation(DROCE_WR_RDMA_READ, 64, (uintptr_t)ra, false, lw | DROCE_ACCESS_REMOTE_WRITE,
		  ALL_ACCESS, DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	violation(DROCE_WR_ATOMIC_FETCH_AND_ADD, 8, (uintptr_t)ra, false,
		  lw | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ, ALL_ACCESS,
		  DROCE_WC_REM_ACCESS_ERR, DROCE_EVENT_QP_ACCESS_ERR);
	/* the QP lacks it: an operation the responder QP is not enabled for is an Invalid
	 * Request (IBTA 9.7.5.2.2, rxe's check_op_valid), not an R_Key violation */
	violation(DROCE_WR_RDMA_WRITE, 64, (uintptr_t)ra, false, ALL_ACCESS,
		  DROCE_ACCESS_REMOTE_READ, DROCE_WC_REM_INV_REQ_ERR, DROCE_EVENT_QP_REQ_ERR);
	violation(DROCE_WR_RDMA_READ, 64, (uintptr_t)ra, false, ALL_ACCESS,
		  DROCE_ACCESS_REMOTE_WRITE, DROCE_WC_REM_INV_REQ_ERR, DROCE_EVENT_QP_REQ_ERR);
}

static void
test_misaligned_atomic(void)
{
	violation(DROCE_WR_ATOMIC_FETCH_AND_ADD, 8, (uintptr_t)ra + 4, false, ALL_ACCESS,
		  ALL_ACCESS, DROCE_WC_REM_INV_REQ_ERR, DROCE_EVENT_QP_REQ_ERR);
}

/* An MR of another PD on the responder: the rkey is valid but not for this QP. */
static void
test_other_pd(void)
{
	struct fx f;
	struct droce_pd *pd2;
	struct droce_mr *mr2;
	struct droce_wc wc[4];
	int err = 0;

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	pd2 = droce_pd_alloc(f.w.n[1].dev, &err);
	mr2 = droce_mr_reg(pd2, ra, sizeof(ra), ALL_ACCESS, &err);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_RDMA_WRITE, 32, (uintptr_t)ra, droce_mr_rkey(mr2), 1),
			0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_TRUE(untouched());
	eh_fini(&f.w);
}

/* Zero-length WRITE checks no R_Key (IBTA 9.7.4.1.x) and succeeds. */
static void
test_zero_length_write(void)
{
	struct fx f;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_RDMA_WRITE, 0, 12345, 0xdeadbeef, 1), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	eh_fini(&f.w);
}

static void
test_rnr_retry_0(void)
{
	struct fx f;
	struct droce_wc wc[4];
	struct droce_qp_attr a;

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	/* rnr_retry is an RTR->RTS attribute: rebuild the requester with 0 */
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RESET;
	droce_qp_modify(f.qp[0], &a, DROCE_QP_STATE);
	f.o.rnr_retry = 0;
	CU_ASSERT_EQUAL(eh_bring_up(f.qp[0], DROCE_QPT_RC, &f.w.n[1], droce_qp_num(f.qp[1]), &f.o,
				    f.o.psn[1], f.o.psn[0]),
			0);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND, 10, 0, 0, 7), 0);
	eh_run(&f.w, 1000000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 7);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_RNR_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_RCVD_RNR_ERR), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_RETRY_RNR_EXCEEDED_ERR), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_SEND_RNR_ERR), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_OUT_OF_BUFFER), 1);
	/* the responder is fine: RNR is not an error there */
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[1]), DROCE_QPS_RTS);
	eh_fini(&f.w);
}

/* rnr_retry 7 retries for ever: a receive posted late still lets the SEND through. The NAK's
 * timer is the responder's min_rnr_timer (code 1 = 10 us), so each retry waits 10 us. */
static void
test_rnr_retry_7(void)
{
	struct fx f;
	struct droce_wc wc[4];
	uint64_t t0;

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND, 10, 0, 0, 7), 0);
	t0 = f.w.now;
	eh_run(&f.w, 1000000); /* 1 ms: about 100 RNR rounds */
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[0], wc, 4), 0);
	CU_ASSERT_TRUE(droce_qp_counter(f.qp[0], DROCE_CNT_RCVD_RNR_ERR) >= 50);
	CU_ASSERT_TRUE(droce_qp_counter(f.qp[0], DROCE_CNT_RCVD_RNR_ERR) <= 101);
	CU_ASSERT_TRUE(f.w.now - t0 <= 1000000);
	CU_ASSERT_EQUAL(fx_recv(&f, 64, 70), 0);
	eh_run(&f.w, 1000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 70);
	CU_ASSERT_EQUAL(wc[0].byte_len, 10);
	eh_fini(&f.w);
}

static bool
drop_all(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	(void)from;
	(void)frame;
	(void)len;
	(void)arg;
	return false;
}

/* The peer vanishes: retry_cnt retries (7 is seven, not infinite), each after the local ACK
 * timeout 4.096 us * 2^timeout, then RETRY_EXC_ERR and the rest flushed. With the default
 * in-flight cap, or none (the engine's 1024-PSN window): a retry sends the oldest packet
 * alone either way. */
static void
retry_exhausted(bool cap)
{
	struct droce_inflight_cfg c;
	struct fx f;
	struct droce_wc wc[4];
	uint64_t t0, to = 4096ull << 14;

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	if (!cap) {
		droce_inflight_defaults(&c);
		c.cap = 0;
		CU_ASSERT_EQUAL_FATAL(droce_qp_set_inflight(f.qp[0], &c), 0);
	}
	f.w.n[0].filter = drop_all;
	CU_ASSERT_EQUAL(
		fx_send(&f, DROCE_WR_RDMA_WRITE, 3000, (uintptr_t)ra, droce_mr_rkey(f.rmr), 1), 0);
	CU_ASSERT_EQUAL(
		fx_send(&f, DROCE_WR_RDMA_READ, 100, (uintptr_t)ra, droce_mr_rkey(f.rmr), 2), 0);
	t0 = f.w.now;
	eh_run(&f.w, 100 * to);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 2);
	CU_ASSERT_EQUAL(wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(wc[1].status, DROCE_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 8);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_RETRY_EXCEEDED_ERR), 1);
	/* 3 packets of the WRITE + 1 READ request, then each of the 7 retries the oldest packet
	 * alone: a retry after the local ACK timeout sends one packet and reopens the window per
	 * ACK (RFC 5681 3.1's loss window), and no ACK comes */
	CU_ASSERT_EQUAL(f.w.n[0].sent, 4 + 7);
	/* done after 8 timeouts, not before */
	CU_ASSERT_TRUE(f.w.now - t0 >= 8 * to);
	CU_ASSERT_TRUE(f.w.now - t0 < 9 * to);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[0]), DROCE_QPS_ERR);
	eh_fini(&f.w);
}

static void
test_retry_exhausted(void)
{
	retry_exhausted(true);
}

static void
test_retry_exhausted_no_cap(void)
{
	retry_exhausted(false);
}

/* Frames from node 0 whose PSN is *arg: a request that never gets through. */
static bool
drop_psn(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	const uint8_t *bth = frame + 14 + 20 + 8; /* Ethernet, IPv4, UDP */
	uint32_t psn = (uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11];

	(void)from;
	(void)len;
	return psn != *(const uint32_t *)arg;
}

/* The first packet of a WRITE is always lost, the rest arrive: the first round draws a PSN
 * sequence error NAK, and the retry it starts counts against retry_cnt as a timeout's does
 * (IBTA 9.7.6.1.3 and rxe: the count is of retries, whatever started them). Seven retries,
 * then RETRY_EXC_ERR, instead of resending for ever. */
static void
test_retry_seq_naks(void)
{
	struct fx f;
	struct droce_wc wc[4];
	uint32_t lost;
	uint64_t naks, tos;

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	lost = f.o.psn[0];
	f.w.n[0].filter = drop_psn;
	f.w.n[0].filter_arg = &lost;
	CU_ASSERT_EQUAL(
		fx_send(&f, DROCE_WR_RDMA_WRITE, 3000, (uintptr_t)ra, droce_mr_rkey(f.rmr), 1), 0);
	eh_run(&f.w, 100ull * (4096ull << 14));
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_RETRY_EXC_ERR);
	naks = droce_qp_counter(f.qp[0], DROCE_CNT_RCVD_SEQ_ERR);
	tos = droce_qp_counter(f.qp[0], DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR);
	CU_ASSERT_TRUE(naks >= 1);
	CU_ASSERT_EQUAL(naks + tos, 8);
	/* 3; after the NAK the window again (3); after each local ACK timeout the lost packet
	 * alone (the loss window), which draws no NAK: 6 */
	CU_ASSERT_EQUAL(naks, 1);
	CU_ASSERT_EQUAL(f.w.n[0].sent, 3 + 3 + 6);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_RETRY_EXCEEDED_ERR), 1);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[0]), DROCE_QPS_ERR);
	eh_fini(&f.w);
}

/* retry_cnt 0: the first timeout ends it. */
static void
test_retry_zero(void)
{
	struct fx f;
	struct droce_wc wc[4];
	struct droce_qp_attr a;

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RESET;
	droce_qp_modify(f.qp[0], &a, DROCE_QP_STATE);
	f.o.retry_cnt = 0;
	eh_bring_up(f.qp[0], DROCE_QPT_RC, &f.w.n[1], droce_qp_num(f.qp[1]), &f.o, f.o.psn[1],
		    f.o.psn[0]);
	droce_qp_destroy(f.qp[1]); /* the peer is gone: frames to its QPN are dropped */
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND, 10, 0, 0, 1), 0);
	eh_run(&f.w, 1000000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(f.w.n[0].sent, 1);
	CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_BAD_QPN), 1);
	eh_fini(&f.w);
}

/* A SEND longer than the receive buffer: receiver LOC_LEN_ERR, sender REM_INV_REQ_ERR. */
static void
test_recv_too_small(void)
{
	struct fx f;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	CU_ASSERT_EQUAL(fx_recv(&f, 50, 9), 0);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND, 3000, 0, 0, 1), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_REM_INV_REQ_ERR);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 9);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_LOC_LEN_ERR);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RESP_LOCAL_LENGTH_ERROR), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_REQ_REMOTE_INVALID_REQUEST), 1);
	eh_fini(&f.w);
}

/* A bad lkey on the send side: LOC_PROT_ERR, nothing sent. */
static void
test_local_protection(void)
{
	struct fx f;
	struct droce_sge sge = { (uintptr_t)la, 10, 0 };
	struct droce_send_wr wr, *bad;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	sge.lkey = droce_mr_lkey(f.lmr) + 0x100;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 5;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1); /* unsignaled, but in error */
	CU_ASSERT_EQUAL(wc[0].wr_id, 5);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_LOC_PROT_ERR);
	CU_ASSERT_EQUAL(f.w.n[0].sent, 0);
	eh_fini(&f.w);
}

/* Completions from traffic overflow a small CQ: CQ error event, -EOVERFLOW. */
static void
test_cq_overflow_traffic(void)
{
	struct fx f;
	struct droce_wc wc[4];
	struct droce_async_event ev;
	struct droce_cq *small;
	struct droce_qp_init_attr ia;
	struct droce_qp *q;
	int err = 0, i;

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	small = droce_cq_create(f.w.n[0].dev, 2, NULL, &err);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.send_cq = small;
	ia.recv_cq = small;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	q = droce_qp_create(f.w.n[0].pd, &ia, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	droce_qp_destroy(f.qp[0]);
	f.qp[0] = q;
	{
		struct droce_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = DROCE_QPS_RESET;
		droce_qp_modify(f.qp[1], &a, DROCE_QP_STATE);
		eh_bring_up(f.qp[1], DROCE_QPT_RC, &f.w.n[0], droce_qp_num(q), &f.o, f.o.psn[0],
			    f.o.psn[1]);
		eh_bring_up(q, DROCE_QPT_RC, &f.w.n[1], droce_qp_num(f.qp[1]), &f.o, f.o.psn[1],
			    f.o.psn[0]);
	}
	for (i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(
			fx_send(&f, DROCE_WR_RDMA_WRITE, 8, (uintptr_t)ra, droce_mr_rkey(f.rmr), i),
			0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL(droce_cq_poll(small, 4, wc), -EOVERFLOW);
	CU_ASSERT_EQUAL(droce_dev_get_async_event(f.w.n[0].dev, &ev), 0);
	CU_ASSERT_EQUAL(ev.type, DROCE_EVENT_CQ_ERR);
	CU_ASSERT_PTR_EQUAL(ev.element.cq, small);
	eh_fini(&f.w);
}

/* UD: Q_Key mismatch drops (no completion, counted); the privileged rule (high bit set in the
 * WR's Q_Key) sends the QP's own Q_Key; the 40-byte GRH area precedes the payload. */
static void
test_ud_qkey_and_grh(void)
{
	struct fx f;
	struct droce_ah *ah;
	struct droce_av av;
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	struct droce_wc wc[4];
	int err = 0;

	fx_init(&f, DROCE_QPT_UD, ALL_ACCESS);
	eh_av(&f.w.n[1], &av);
	ah = droce_ah_create(f.w.n[0].pd, &av, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ah);
	CU_ASSERT_EQUAL(fx_recv(&f, 200, 1), 0);
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)la;
	sge.length = 100;
	sge.lkey = droce_mr_lkey(f.lmr);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = droce_qp_num(f.qp[1]);
	wr.wr.ud.remote_qkey = 0x22222222; /* the receiver's is 0x11111111 */
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	eh_run(&f.w, 10000000);
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[1], wc, 4), 0);
	CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_QKEY), 1);
	CU_ASSERT_TRUE(untouched());
	/* privileged: the sender's QP Q_Key (0x11111111) goes out */
	wr.wr.ud.remote_qkey = 0x80000000u;
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	eh_run(&f.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].byte_len, 140);
	CU_ASSERT_EQUAL(wc[0].src_qp, droce_qp_num(f.qp[0]));
	CU_ASSERT_TRUE(wc[0].wc_flags & DROCE_WC_GRH);
	/* GRH area: 20 zero bytes, then the IPv4 header (version 4, IHL 5, UDP) */
	CU_ASSERT_EQUAL(ra[0], 0);
	CU_ASSERT_EQUAL(ra[19], 0);
	CU_ASSERT_EQUAL(ra[20], 0x45);
	CU_ASSERT_EQUAL(ra[20 + 9], 17);
	CU_ASSERT_EQUAL(memcmp(ra + 40, la, 100), 0);
	/* too long for the buffer: LOC_LEN_ERR */
	CU_ASSERT_EQUAL(fx_recv(&f, 100, 2), 0);
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	eh_run(&f.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 2);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_LOC_LEN_ERR);
	/* ...and the QP goes on: a datagram anyone can send must not end a UD QP (rxe's class
	 * D/E); the next one that fits arrives. */
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[1]), DROCE_QPS_RTS);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RESP_LOCAL_LENGTH_ERROR), 1);
	CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_LENGTH), 1);
	CU_ASSERT_EQUAL(fx_recv(&f, 200, 3), 0);
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	eh_run(&f.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 3);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].byte_len, 140);
	/* longer than the path MTU: refused at post */
	sge.length = 5000;
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), -EINVAL);
	eh_fini(&f.w);
}

/* UC: a send error stops the send queue only (SQE); receives go on; SQE -> RTS resumes. */
static void
test_uc_sqe(void)
{
	struct fx f;
	struct droce_sge sge = { (uintptr_t)la, 10, 0 };
	struct droce_send_wr wr, *bad;
	struct droce_wc wc[4];
	struct droce_qp_attr a;

	fx_init(&f, DROCE_QPT_UC, ALL_ACCESS);
	sge.lkey = droce_mr_lkey(f.lmr) ^ 0x40; /* wrong key */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED;
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	wr.wr_id = 2;
	sge.lkey = droce_mr_lkey(f.lmr);
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	eh_run(&f.w, 1000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 2);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_LOC_PROT_ERR);
	CU_ASSERT_EQUAL(wc[1].status, DROCE_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[0]), DROCE_QPS_SQE);
	/* posting in SQE flushes at once */
	wr.wr_id = 3;
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	/* the receive side of the SQE QP still works */
	{
		struct droce_sge g = { (uintptr_t)la + 1000, 64, droce_mr_lkey(f.lmr) };
		struct droce_recv_wr r = { 40, NULL, &g, 1 }, *rb;
		struct droce_send_wr w2, *b2;
		struct droce_sge g2 = { (uintptr_t)ra, 5, droce_mr_lkey(f.rmr) };

		CU_ASSERT_EQUAL(droce_post_recv(f.qp[0], &r, &rb), 0);
		memset(&w2, 0, sizeof(w2));
		w2.sg_list = &g2;
		w2.num_sge = 1;
		w2.opcode = DROCE_WR_SEND;
		CU_ASSERT_EQUAL(droce_post_send(f.qp[1], &w2, &b2), 0);
		eh_run(&f.w, 1000000);
		CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
		CU_ASSERT_EQUAL(wc[0].wr_id, 40);
		CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	}
	/* SQE -> RTS (RC would refuse), then sending works again */
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	CU_ASSERT_EQUAL(droce_qp_modify(f.qp[0], &a, DROCE_QP_STATE), 0);
	CU_ASSERT_EQUAL(fx_recv(&f, 64, 41), 0);
	wr.wr_id = 4;
	CU_ASSERT_EQUAL(droce_post_send(f.qp[0], &wr, &bad), 0);
	eh_run(&f.w, 1000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 4);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 41);
	eh_fini(&f.w);
}

/* UC: a SEND longer than the receive buffer is dropped like any UC error (IBTA 9.8.3, rxe's
 * class D): nothing completes at the receiver, its WQE waits for the next message, the QP
 * stays up. */
static void
test_uc_too_long(void)
{
	struct fx f;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_UC, ALL_ACCESS);
	CU_ASSERT_EQUAL(fx_recv(&f, 1500, 50), 0);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND, 3000, 0, 0, 1), 0);
	eh_run(&f.w, 1000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS); /* UC: complete once sent */
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[1], wc, 4), 0);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[1]), DROCE_QPS_RTS);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RESP_LOCAL_LENGTH_ERROR), 1);
	CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_LENGTH), 1);
	/* the next message fits: it takes the same receive WQE */
	la[0] ^= 0x5A;
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND, 1000, 0, 0, 2), 0);
	eh_run(&f.w, 1000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 50);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].byte_len, 1000);
	CU_ASSERT_EQUAL(memcmp(ra, la, 1000), 0);
	la[0] ^= 0x5A;
	eh_fini(&f.w);
}

/* SEND with invalidate (here its LAST packet carries the IETH) naming an MR's key: only a
 * type 2 window can be invalidated (droce has no fast-registered MRs), so, as rxe's class J,
 * the receive completes with REM_INV_REQ_ERR (never WITH_INV: no fence took place), the
 * requester hears a NAK (Invalid Request), both QPs end in ERR. Windows: test_mw.c. */
static void
test_send_with_inv(void)
{
	struct fx f;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	CU_ASSERT_EQUAL(fx_recv(&f, 4096, 9), 0);
	CU_ASSERT_EQUAL(fx_send(&f, DROCE_WR_SEND_WITH_INV, 2000, 0, droce_mr_rkey(f.rmr), 1), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 9);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_REM_INV_REQ_ERR);
	CU_ASSERT_FALSE(wc[0].wc_flags & DROCE_WC_WITH_INV);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_REM_INV_REQ_ERR);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[1]), DROCE_QPS_ERR);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[0]), DROCE_QPS_ERR);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RESP_REMOTE_INVALID_REQUEST), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_REQ_REMOTE_INVALID_REQUEST), 1);
	CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_INVALIDATE), 1);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("engine_errors", DROCE_TEST(test_send_with_inv), DROCE_TEST(test_uc_too_long),
		DROCE_TEST(test_uc_sqe), DROCE_TEST(test_rkey_wrong), DROCE_TEST(test_bounds),
		DROCE_TEST(test_access_flags), DROCE_TEST(test_misaligned_atomic),
		DROCE_TEST(test_other_pd), DROCE_TEST(test_zero_length_write),
		DROCE_TEST(test_rnr_retry_0), DROCE_TEST(test_rnr_retry_7),
		DROCE_TEST(test_retry_exhausted), DROCE_TEST(test_retry_exhausted_no_cap),
		DROCE_TEST(test_retry_seq_naks), DROCE_TEST(test_retry_zero),
		DROCE_TEST(test_recv_too_small), DROCE_TEST(test_local_protection),
		DROCE_TEST(test_cq_overflow_traffic), DROCE_TEST(test_ud_qkey_and_grh))
