/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_dev_rx_process: a poll loop's one call per received burst. A WRITE that asks for an
 * ACK enters the engine once and its ACK is handed to tx_send in that same call; with budget
 * 0 nothing goes, and an ACK the policy holds (the inline caller's turn) waits for the next
 * droce_dev_process.
 */
#include "droce_ackpol.h"
#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_test.h"
#include "engine_harness.h"
#include "wire/droce_aeth.h"

static uint8_t mem[4096] __attribute__((aligned(8)));

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *mr;
	unsigned int acks; /* ACKs node 1 handed to tx_send */
	uint32_t psn0;
	uint32_t next; /* the next request's PSN offset */
};

static bool
count_acks(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct fx *f = arg;
	struct droce_pkt p;

	(void)from;
	if (droce_parse(frame, len, &p, 0) == DROCE_DROP_NONE &&
	    p.opcode == DROCE_OP_RC_ACKNOWLEDGE &&
	    (p.aeth_syn & DROCE_AETH_TYPE_MASK) == DROCE_AETH_TYPE_ACK)
		f->acks++;
	return false; /* node 0 need not hear it */
}

static void
fx_init(struct fx *f, uint64_t ack_delay_ns)
{
	struct droce_ack_policy pol = { .delay_ns = ack_delay_ns, .order = DROCE_ACK_ORDER_FIFO };
	struct eh_qp_opts o;
	int err = 0;

	memset(f, 0, sizeof(*f));
	eh_init(&f->w, 1500);
	/* the QPs take the device's policy when they are made */
	CU_ASSERT_EQUAL_FATAL(droce_dev_set_ack_policy(f->w.n[1].dev, &pol), 0);
	eh_opts_default(&o);
	eh_pair(&f->w, DROCE_QPT_RC, &o, f->qp, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[1]);
	f->mr = droce_mr_reg(f->w.n[1].pd, mem, sizeof(mem),
			     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->mr);
	/* a fresh QP is on the ready list once, to find it has nothing to send */
	CU_ASSERT_EQUAL(droce_dev_process(f->w.n[1].dev, f->w.now, 64), 0);
	f->psn0 = f->qp[1]->resp.epsn;
	f->w.n[1].filter = count_acks;
	f->w.n[1].filter_arg = f;
}

/* Node 0's next WRITE ONLY of 64 bytes of b to mem, with AckReq, into node 1 by rx_process. */
static unsigned int
write_in(struct fx *f, uint8_t b, unsigned int budget)
{
	static uint8_t frame[2048], pay[64];
	const uint8_t *fp = frame;
	struct droce_pkt p = f->qp[0]->tmpl;
	uint32_t len;
	int r;

	p.opcode = DROCE_OP_RC_RDMA_WRITE_ONLY;
	p.dqpn = droce_qp_num(f->qp[1]);
	p.psn = (f->psn0 + f->next++) & DROCE_PSN_MASK;
	p.ackreq = true;
	p.reth_va = (uintptr_t)mem;
	p.reth_rkey = droce_mr_rkey(f->mr);
	p.reth_len = sizeof(pay);
	memset(pay, b, sizeof(pay));
	r = droce_build(frame, sizeof(frame), &p, pay, sizeof(pay));
	CU_ASSERT_FATAL(r > 0);
	len = (uint32_t)r;
	return droce_dev_rx_process(f->w.n[1].dev, &fp, &len, 1, f->w.now, budget);
}

/* The ACK leaves in the call that received the WRITE: nothing is left due after it. */
static void
ack_in_same_call(void)
{
	struct fx f;

	fx_init(&f, 0);
	CU_ASSERT_EQUAL(write_in(&f, 0xA5, 64), 1);
	CU_ASSERT_EQUAL(f.acks, 1);
	CU_ASSERT_EQUAL(mem[0], 0xA5);
	CU_ASSERT_EQUAL(mem[63], 0xA5);
	CU_ASSERT(droce_dev_next_deadline(f.w.n[1].dev) > f.w.now);
	eh_fini(&f.w);
}

/* Budget 0 only feeds the frame: the ACK is due, and the next droce_dev_process sends it. */
static void
budget_zero_feeds_only(void)
{
	struct fx f;

	fx_init(&f, 0);
	CU_ASSERT_EQUAL(write_in(&f, 0x3C, 0), 0);
	CU_ASSERT_EQUAL(f.acks, 0);
	CU_ASSERT_EQUAL(mem[0], 0x3C); /* the WRITE was placed all the same */
	CU_ASSERT(droce_dev_next_deadline(f.w.n[1].dev) <= f.w.now);
	CU_ASSERT_EQUAL(droce_dev_process(f.w.n[1].dev, f.w.now, 64), 1);
	CU_ASSERT_EQUAL(f.acks, 1);
	eh_fini(&f.w);
}

/* While the inline caller holds ACKs (its application's turn comes), a pure ACK the policy
 * lets wait is not sent by rx_process; releasing the hold sends it. */
static void
held_ack_waits_for_release(void)
{
	struct fx f;

	fx_init(&f, 1000000);
	droce_dev_ack_hold(f.w.n[1].dev, true);
	CU_ASSERT_EQUAL(write_in(&f, 0x11, 64), 0);
	CU_ASSERT_EQUAL(f.acks, 0);
	CU_ASSERT_EQUAL(droce_dev_acks_held(f.w.n[1].dev), 1);
	droce_dev_ack_hold(f.w.n[1].dev, false);
	CU_ASSERT(droce_dev_next_deadline(f.w.n[1].dev) <= f.w.now);
	CU_ASSERT_EQUAL(droce_dev_process(f.w.n[1].dev, f.w.now, 64), 1);
	CU_ASSERT_EQUAL(f.acks, 1);
	CU_ASSERT_EQUAL(droce_dev_acks_held(f.w.n[1].dev), 0);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("rx_process", DROCE_TEST(ack_in_same_call), DROCE_TEST(budget_zero_feeds_only),
		DROCE_TEST(held_ack_waits_for_release))
