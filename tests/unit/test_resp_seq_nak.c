/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's PSN sequence error NAKs (IBTA 9.7.5.1.1): one per gap, and the requests
 * taken in order after one NAK are ACKed before the next NAK goes out. Linux rxe's requester
 * ignores a second sequence NAK until an ACK has reset its retry (rxe_comp.c's started_retry)
 * and then waits for its local ACK timeout. Crafted requests go to a fresh RC QP; every
 * ACK/NAK it answers with is recorded in order.
 */
#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_test.h"
#include "engine_harness.h"
#include "wire/droce_aeth.h"

#define ALL	(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ)
#define MAX_ANS 16

static uint8_t mem[4096] __attribute__((aligned(8)));

struct ans {
	uint8_t opcode;
	uint8_t syn;
	uint32_t psn; /* relative to psn0 */
};

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *mr;
	uint32_t psn0;
	struct ans a[MAX_ANS];
	unsigned int n;
};

static bool
capture(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct fx *f = arg;
	struct droce_pkt p;

	(void)from;
	if (droce_parse(frame, len, &p, 0) == DROCE_DROP_NONE && f->n < MAX_ANS) {
		f->a[f->n].opcode = p.opcode;
		f->a[f->n].syn = p.aeth_syn;
		f->a[f->n].psn = droce_psn_add(p.psn, DROCE_PSN_MASK + 1 - f->psn0);
		f->n++;
	}
	return false; /* node 0 never hears it: no retries in the way */
}

static void
fx_init(struct fx *f)
{
	struct eh_qp_opts o;
	int err = 0;

	memset(f, 0, sizeof(*f));
	eh_init(&f->w, 1500);
	eh_opts_default(&o);
	o.mtu = DROCE_MTU_1024;
	o.access = ALL;
	eh_pair(&f->w, DROCE_QPT_RC, &o, f->qp, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[1]);
	f->mr = droce_mr_reg(f->w.n[1].pd, mem, sizeof(mem), ALL, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->mr);
	f->psn0 = f->qp[1]->resp.epsn;
	f->w.n[1].filter = capture;
	f->w.n[1].filter_arg = f;
}

/* Request i of the stream (PSN psn0 + i): an 8-byte WRITE ONLY or READ, AckReq as given. */
static void
req(struct fx *f, uint32_t i, uint8_t opcode, bool ackreq)
{
	static uint8_t frame[256], pay[8];
	const uint8_t *fp = frame;
	struct droce_pkt p;
	uint32_t len;
	int r;

	p = f->qp[0]->tmpl;
	p.opcode = opcode;
	p.dqpn = droce_qp_num(f->qp[1]);
	p.psn = (f->psn0 + i) & DROCE_PSN_MASK;
	p.ackreq = ackreq;
	p.reth_va = (uintptr_t)mem;
	p.reth_rkey = droce_mr_rkey(f->mr);
	p.reth_len = 8;
	r = droce_build(frame, sizeof(frame), &p, pay,
			opcode == DROCE_OP_RC_RDMA_READ_REQUEST ? 0 : 8);
	CU_ASSERT_FATAL(r > 0);
	len = (uint32_t)r;
	droce_dev_rx_burst(f->w.n[1].dev, &fp, &len, 1, f->w.now);
	droce_dev_process(f->w.n[1].dev, f->w.now, 64);
}

static void
wr(struct fx *f, uint32_t i, bool ackreq)
{
	req(f, i, DROCE_OP_RC_RDMA_WRITE_ONLY, ackreq);
}

/* Answer k was an ACK (seq false) or a sequence NAK (seq true) for PSN psn0 + psn. */
static void
expect(const struct fx *f, unsigned int k, bool seq, uint32_t psn)
{
	uint8_t syn = seq ? DROCE_AETH_TYPE_NAK | DROCE_NAK_PSN_SEQ_ERR : 0;
	bool ok;

	CU_ASSERT_FATAL(k < f->n);
	ok = f->a[k].opcode == DROCE_OP_RC_ACKNOWLEDGE && f->a[k].psn == psn &&
	     (f->a[k].syn & 0xE0) == (syn & 0xE0) && (!seq || f->a[k].syn == syn);
	if (!ok)
		fprintf(stderr, "answer %u: opcode 0x%x syn 0x%02x psn +%u, want %s psn +%u\n", k,
			f->a[k].opcode, f->a[k].syn, f->a[k].psn, seq ? "seq NAK" : "ACK", psn);
	CU_ASSERT(ok);
}

static uint64_t
acks_before_nak(const struct fx *f)
{
	return droce_qp_counter(f->qp[1], DROCE_CNT_ACK_BEFORE_NAK);
}

/* The first gap: one NAK for ePSN, nothing for the packets behind it, no extra ACK. */
static void
first_gap(void)
{
	struct fx f;

	fx_init(&f);
	wr(&f, 1, true);
	wr(&f, 2, true);
	wr(&f, 3, false);
	CU_ASSERT_EQUAL(f.n, 1);
	expect(&f, 0, true, 0);
	CU_ASSERT_EQUAL(acks_before_nak(&f), 0);
	eh_fini(&f.w);
}

/* NAK at 0; 0 and 1 come again without AckReq (a requester asks for an ACK only now and then);
 * 3 arrives before 2: the ACK of 1 goes out, then the NAK at 2. */
static void
ack_before_second_nak(void)
{
	struct fx f;

	fx_init(&f);
	wr(&f, 1, false);
	expect(&f, 0, true, 0);
	wr(&f, 0, false);
	wr(&f, 1, false);
	CU_ASSERT_EQUAL(f.n, 1); /* in order, no AckReq: nothing yet */
	wr(&f, 3, false);
	CU_ASSERT_EQUAL_FATAL(f.n, 3);
	expect(&f, 1, false, 1);
	expect(&f, 2, true, 2);
	CU_ASSERT_EQUAL(acks_before_nak(&f), 1);
	/* still one NAK per gap: more behind it are silent */
	wr(&f, 4, false);
	CU_ASSERT_EQUAL(f.n, 3);
	/* a third gap after more in-order requests: an ACK again before its NAK */
	wr(&f, 2, false);
	wr(&f, 5, false);
	CU_ASSERT_EQUAL_FATAL(f.n, 5);
	expect(&f, 3, false, 2);
	expect(&f, 4, true, 3);
	CU_ASSERT_EQUAL(acks_before_nak(&f), 2);
	eh_fini(&f.w);
}

/* Already ACKed (AckReq) or answered (a READ response) since the NAK: no second ACK. */
static void
answered_needs_no_ack(void)
{
	struct fx f;

	fx_init(&f);
	wr(&f, 1, false);
	wr(&f, 0, true);
	wr(&f, 2, false);
	CU_ASSERT_EQUAL_FATAL(f.n, 3);
	expect(&f, 0, true, 0);
	expect(&f, 1, false, 0);
	expect(&f, 2, true, 1);
	CU_ASSERT_EQUAL(acks_before_nak(&f), 0);
	eh_fini(&f.w);

	fx_init(&f);
	wr(&f, 1, false);
	req(&f, 0, DROCE_OP_RC_RDMA_READ_REQUEST, true);
	wr(&f, 2, false);
	CU_ASSERT_EQUAL_FATAL(f.n, 3);
	expect(&f, 0, true, 0);
	CU_ASSERT_EQUAL(f.a[1].opcode, DROCE_OP_RC_RDMA_READ_RESPONSE_ONLY);
	expect(&f, 2, true, 1);
	CU_ASSERT_EQUAL(acks_before_nak(&f), 0);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("resp_seq_nak", DROCE_TEST(first_gap), DROCE_TEST(ack_before_second_nak),
		DROCE_TEST(answered_needs_no_ack))
