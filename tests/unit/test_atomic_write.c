/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ATOMIC WRITE (IBTA 1.5, opcode 0x1D) end to end: the frame (RETH for 8 bytes, the 8 bytes in
 * memory order, AckReq), placement and its completion, the responder's refusals (misaligned,
 * no remote write, a length other than 8), a duplicate not placed twice, and the services
 * that refuse the post.
 */
#include "droce_test.h"
#include "droce_pkt.h"
#include "engine_harness.h"

#define ALL_ACCESS \
	(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | \
	 DROCE_ACCESS_REMOTE_ATOMIC)

static uint8_t ra[4096] __attribute__((aligned(64)));
static const uint8_t val[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *rmr;
	struct eh_qp_opts o;
	/* what the filters saw */
	struct droce_pkt req;
	uint8_t req_pay[8];
	unsigned int reqs, acks, acks_to_drop;
};

static struct fx *cur;

static void
fx_init(struct fx *f, enum droce_qp_type t, unsigned int remote_access)
{
	int err = 0;

	memset(f, 0, sizeof(*f));
	eh_init(&f->w, 1500);
	eh_opts_default(&f->o);
	eh_pair(&f->w, t, &f->o, f->qp, 16);
	f->rmr = droce_mr_reg(f->w.n[1].pd, ra, sizeof(ra), remote_access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->rmr);
	memset(ra, 0xEE, sizeof(ra));
	cur = f;
}

static int
post_aw(struct fx *f, uint64_t off, uint64_t id)
{
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = DROCE_WR_ATOMIC_WRITE;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)ra + off;
	wr.wr.atomic.rkey = droce_mr_rkey(f->rmr);
	memcpy(&wr.wr.atomic.swap, val, sizeof(val));
	return droce_post_send(f->qp[0], &wr, &bad);
}

/* Whether a frame on the wire is a valid ATOMIC WRITE, parsed into *p. */
static bool
is_aw(const uint8_t *frame, uint32_t len, struct droce_pkt *p)
{
	return droce_parse(frame, len, p, 0) == DROCE_DROP_NONE &&
	       p->opcode == DROCE_OP_RC_ATOMIC_WRITE;
}

/* Node 0's requests: keep the first ATOMIC WRITE's parsed headers and payload. */
static bool
see_req(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt p;

	(void)from;
	(void)arg;
	if (is_aw(frame, len, &p) && cur->reqs++ == 0) {
		cur->req = p;
		memcpy(cur->req_pay, frame + p.pay_off, p.pay_len < 8 ? p.pay_len : 8);
	}
	return true;
}

/* Node 1's ACKs: drop the first acks_to_drop, and let the target change under the retry (a
 * later local store the duplicate must not undo). */
static bool
drop_acks(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	(void)from;
	(void)frame;
	(void)len;
	(void)arg;
	if (cur->acks++ >= cur->acks_to_drop)
		return true;
	ra[64] = 0x5A;
	return false;
}

static void
test_frame_and_placement(void)
{
	struct fx f;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	f.w.n[0].filter = see_req;
	CU_ASSERT_EQUAL(post_aw(&f, 64, 7), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 7);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_ATOMIC_WRITE);
	CU_ASSERT_EQUAL(wc[0].byte_len, 8);
	CU_ASSERT_EQUAL(memcmp(ra + 64, val, 8), 0);
	CU_ASSERT_EQUAL(ra[63], 0xEE);
	CU_ASSERT_EQUAL(ra[72], 0xEE);
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[1], wc, 4), 0); /* no receive consumed */
	/* the wire: opcode 0x1D, RETH (VA, R_Key, length 8), 8 bytes of payload, AckReq */
	CU_ASSERT_EQUAL_FATAL(f.reqs, 1);
	CU_ASSERT_EQUAL(f.req.opcode, 0x1D);
	CU_ASSERT_EQUAL(f.req.reth_va, (uintptr_t)ra + 64);
	CU_ASSERT_EQUAL(f.req.reth_rkey, droce_mr_rkey(f.rmr));
	CU_ASSERT_EQUAL(f.req.reth_len, 8);
	CU_ASSERT_EQUAL(f.req.pay_len, 8);
	CU_ASSERT_EQUAL(f.req.padcnt, 0);
	CU_ASSERT_TRUE(f.req.ackreq);
	CU_ASSERT_EQUAL(memcmp(f.req_pay, val, 8), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RX_ATOMIC_WRITE_REQUESTS), 1);
	eh_fini(&f.w);
}

/* The ACK is lost twice: the requester resends, the responder ACKs the duplicate without placing
 * it again (the local store made meanwhile stays), and one completion comes. */
static void
test_duplicate_not_placed(void)
{
	struct fx f;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	f.w.n[0].filter = see_req;
	f.w.n[1].filter = drop_acks;
	f.acks_to_drop = 2;
	CU_ASSERT_EQUAL(post_aw(&f, 64, 1), 0);
	eh_run(&f.w, 1000000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(f.reqs, 3);
	CU_ASSERT_EQUAL(ra[64], 0x5A);
	CU_ASSERT_EQUAL(memcmp(ra + 65, val + 1, 7), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RX_ATOMIC_WRITE_REQUESTS), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_DUPLICATE_REQUEST), 2);
	eh_fini(&f.w);
}

/* Refusals end the requester's QP with the NAK's status; nothing is placed. */
static void
refused(uint64_t off, unsigned int access, enum droce_wc_status want, enum droce_cnt cnt)
{
	struct fx f;
	struct droce_wc wc[4];
	size_t i;

	fx_init(&f, DROCE_QPT_RC, access);
	CU_ASSERT_EQUAL(post_aw(&f, off, 1), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, want);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], cnt), 1);
	for (i = 0; i < sizeof(ra); i++)
		if (ra[i] != 0xEE)
			break;
	CU_ASSERT_EQUAL(i, sizeof(ra));
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RX_ATOMIC_WRITE_REQUESTS), 0);
	eh_fini(&f.w);
}

static void
test_refusals(void)
{
	/* 8-aligned only */
	refused(65, ALL_ACCESS, DROCE_WC_REM_INV_REQ_ERR, DROCE_CNT_RESP_REMOTE_INVALID_REQUEST);
	/* a remote write: the MR must allow it */
	refused(64,
		DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC,
		DROCE_WC_REM_ACCESS_ERR, DROCE_CNT_RESP_REMOTE_ACCESS_ERRORS);
	/* inside the MR */
	refused(sizeof(ra) - 4, ALL_ACCESS, DROCE_WC_REM_ACCESS_ERR,
		DROCE_CNT_RESP_REMOTE_ACCESS_ERRORS);
}

/* A RETH length other than 8 (a peer's bug): a length error, as rxe since CVE-2026-46114. */
static bool
bad_len(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt p;
	uint8_t *reth;

	(void)from;
	(void)arg;
	if (!is_aw(frame, len, &p))
		return true;
	reth = frame + p.bth_off + 12;
	reth[15] = 0; /* DMA length 0 */
	p.reth_len = 0;
	droce_build_finish(frame, &p); /* the ICRC again */
	return true;
}

static void
test_length_not_8(void)
{
	struct fx f;
	struct droce_wc wc[4];

	fx_init(&f, DROCE_QPT_RC, ALL_ACCESS);
	f.w.n[0].filter = bad_len;
	CU_ASSERT_EQUAL(post_aw(&f, 64, 1), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_REM_INV_REQ_ERR);
	CU_ASSERT_EQUAL(ra[64], 0xEE);
	eh_fini(&f.w);
}

/* RC only (IBTA 1.5): UC and UD refuse the post. */
static void
test_rc_only(void)
{
	struct fx f;

	fx_init(&f, DROCE_QPT_UC, ALL_ACCESS);
	CU_ASSERT_EQUAL(post_aw(&f, 64, 1), -EINVAL);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("atomic_write", DROCE_TEST(test_frame_and_placement),
		DROCE_TEST(test_duplicate_not_placed), DROCE_TEST(test_refusals),
		DROCE_TEST(test_length_not_8), DROCE_TEST(test_rc_only))
