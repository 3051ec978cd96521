/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The responder's NAK code for each request error, as the IBTA gives it (9.7.5.2.x, the
 * responder's checks in 9.7.5.1.x and 9.7.4.1.x) and as Linux rxe sends it (rxe_resp.c): a
 * crafted request (or two packets of one message) goes to a fresh RC QP and the AETH of the
 * NAK it answers with is checked, with the drop reason the engine counts. Each case differs
 * from a valid request in one field.
 */
#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_test.h"
#include "engine_harness.h"
#include "wire/droce_aeth.h"

#define ALL \
	(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | \
	 DROCE_ACCESS_REMOTE_ATOMIC)
#define MTU 1024

static uint8_t mem[8192] __attribute__((aligned(8)));
static uint8_t rbuf[4096];

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *mr;
	struct droce_mr *rmr; /* receive buffers */
	int syn;	      /* AETH syndrome of node 1's last ACK/NAK, -1: none */
	uint32_t psn0;
};

static bool
capture(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct fx *f = arg;
	struct droce_pkt p;

	(void)from;
	if (droce_parse(frame, len, &p, 0) == DROCE_DROP_NONE &&
	    p.opcode == DROCE_OP_RC_ACKNOWLEDGE)
		f->syn = p.aeth_syn;
	return false; /* node 0 never hears it: one answer, no retry */
}

/* qp_access: what node 1's QP allows; mr_access: its MR's. */
static void
fx_init(struct fx *f, unsigned int qp_access, unsigned int mr_access)
{
	struct droce_recv_wr rw, *bad;
	struct droce_sge sge;
	struct eh_qp_opts o;
	int err = 0;

	eh_init(&f->w, 1500);
	eh_opts_default(&o);
	o.mtu = DROCE_MTU_1024;
	o.access = qp_access;
	eh_pair(&f->w, DROCE_QPT_RC, &o, f->qp, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[1]);
	f->mr = droce_mr_reg(f->w.n[1].pd, mem, sizeof(mem), mr_access | DROCE_ACCESS_LOCAL_WRITE,
			     &err);
	f->rmr = droce_mr_reg(f->w.n[1].pd, rbuf, sizeof(rbuf), DROCE_ACCESS_LOCAL_WRITE, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->mr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->rmr);
	sge.addr = (uintptr_t)rbuf;
	sge.length = sizeof(rbuf);
	sge.lkey = droce_mr_lkey(f->rmr);
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	CU_ASSERT_EQUAL_FATAL(droce_post_recv(f->qp[1], &rw, &bad), 0);
	f->syn = -1;
	f->psn0 = f->qp[1]->resp.epsn;
	f->w.n[1].filter = capture;
	f->w.n[1].filter_arg = f;
}

/* The i-th packet of the test's stream: node 0's path, node 1's QP, PSN psn0 + i. */
static void
pkt(const struct fx *f, uint32_t i, uint8_t opcode, struct droce_pkt *p)
{
	*p = f->qp[0]->tmpl;
	p->opcode = opcode;
	p->dqpn = droce_qp_num(f->qp[1]);
	p->psn = (f->psn0 + i) & DROCE_PSN_MASK;
	p->ackreq = true;
	p->reth_va = (uintptr_t)mem;
	p->reth_rkey = droce_mr_rkey(f->mr);
	p->atomic_va = (uintptr_t)mem;
	p->atomic_rkey = droce_mr_rkey(f->mr);
	p->atomic_swap_add = 1;
}

static void
send(struct fx *f, struct droce_pkt *p, uint32_t pay_len)
{
	static uint8_t frame[2048], pay[MTU + 64];
	const uint8_t *fp = frame;
	uint32_t len;
	int r;

	r = droce_build(frame, sizeof(frame), p, pay, pay_len);
	CU_ASSERT_FATAL(r > 0);
	len = (uint32_t)r;
	droce_dev_rx_burst(f->w.n[1].dev, &fp, &len, 1, f->w.now);
	droce_dev_process(f->w.n[1].dev, f->w.now, 64);
}

/* The answer was a NAK with this code, the QP's error counted under reason. */
static void
expect_nak(struct fx *f, uint8_t code, enum droce_drop reason, const char *what)
{
	int want = DROCE_AETH_TYPE_NAK | code;

	CU_ASSERT_EQUAL(f->syn, want);
	CU_ASSERT_EQUAL(droce_dev_drops(f->w.n[1].dev, reason), 1);
	if (f->syn != want || droce_dev_drops(f->w.n[1].dev, reason) != 1)
		fprintf(stderr, "%s: AETH 0x%x (want 0x%x), %s %lu\n", what, f->syn, want,
			droce_drop_name(reason),
			(unsigned long)droce_dev_drops(f->w.n[1].dev, reason));
	eh_fini(&f->w);
}

/* IBTA 9.7.5.1.x length checks (as rxe's check_rkey): an RDMA WRITE whose payload runs
 * past its RETH length is an Invalid Request, not a protection error. */
static void
write_past_reth(void)
{
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_ONLY, &p);
	p.reth_len = 8;
	send(&f, &p, 64);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "WRITE ONLY 64 B, RETH 8");

	/* the RETH length fits the MR, the payload would not */
	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_ONLY, &p);
	p.reth_va = (uintptr_t)mem + sizeof(mem) - 8;
	p.reth_len = 8;
	send(&f, &p, 64);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "WRITE ONLY 64 B at MR end");

	/* a FIRST longer than the whole message */
	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_FIRST, &p);
	p.reth_len = 100;
	send(&f, &p, MTU);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "WRITE FIRST past RETH");

	/* a zero-length WRITE that carries data */
	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_ONLY, &p);
	p.reth_len = 0;
	send(&f, &p, 8);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "WRITE ONLY 8 B, RETH 0");
}

/* IBTA 9.7.4.1.x, rxe check_length: a message is at most 2^31 bytes; a longer RETH length is
 * an Invalid Request before any R_Key check (the range would fail that one too). */
static void
reth_past_max_msg(void)
{
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_FIRST, &p);
	p.reth_len = 0x80000001u;
	send(&f, &p, MTU);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "WRITE FIRST, RETH 2^31 + 1");

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_READ_REQUEST, &p);
	p.reth_len = 0x80000001u;
	send(&f, &p, 0);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "READ, RETH 2^31 + 1");
}

/* IBTA 9.7.5.1.x, rxe check_length: a LAST packet carries 1..PMTU bytes; an empty LAST is invalid. */
static void
empty_last(void)
{
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_FIRST, &p);
	p.reth_len = MTU;
	send(&f, &p, MTU);
	pkt(&f, 1, DROCE_OP_RC_RDMA_WRITE_LAST, &p);
	send(&f, &p, 0);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "empty WRITE LAST");

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_SEND_FIRST, &p);
	send(&f, &p, MTU);
	pkt(&f, 1, DROCE_OP_RC_SEND_LAST, &p);
	send(&f, &p, 0);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_LENGTH, "empty SEND LAST");
}

/* IBTA 9.4.5 (as rxe): an atomic whose target is not 8-byte aligned is an Invalid
 * Request, counted as such, not as an opcode sequence error. */
static void
atomic_misaligned(void)
{
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_FETCH_ADD, &p);
	p.atomic_va = (uintptr_t)mem + 4;
	send(&f, &p, 0);
	CU_ASSERT_EQUAL(mem[4], 0);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_ATOMIC_ALIGN, "misaligned FETCH_ADD");

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_ATOMIC_WRITE, &p);
	p.reth_va = (uintptr_t)mem + 4;
	p.reth_len = 8;
	send(&f, &p, 8);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_ATOMIC_ALIGN, "misaligned ATOMIC WRITE");
}

/* rxe check_op_valid, IBTA 9.7.5.2.2 (an operation the responder QP is not enabled for is an
 * Invalid Request); the MR's own rights are the R_Key check's: Remote Access Error. */
static void
qp_not_enabled(void)
{
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, ALL & ~DROCE_ACCESS_REMOTE_WRITE, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_ONLY, &p);
	p.reth_len = 8;
	send(&f, &p, 8);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_QP_ACCESS, "WRITE, QP not writable");

	fx_init(&f, ALL & ~DROCE_ACCESS_REMOTE_READ, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_READ_REQUEST, &p);
	p.reth_len = 8;
	send(&f, &p, 0);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_QP_ACCESS, "READ, QP not readable");

	fx_init(&f, ALL & ~DROCE_ACCESS_REMOTE_ATOMIC, ALL);
	pkt(&f, 0, DROCE_OP_RC_FETCH_ADD, &p);
	send(&f, &p, 0);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_QP_ACCESS, "atomic, QP not atomic");

	fx_init(&f, ALL, ALL & ~DROCE_ACCESS_REMOTE_WRITE);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_ONLY, &p);
	p.reth_len = 8;
	send(&f, &p, 8);
	expect_nak(&f, DROCE_NAK_REM_ACCESS_ERR, DROCE_DROP_RKEY, "WRITE, MR not writable");

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_ONLY, &p);
	p.reth_len = 8;
	p.reth_rkey ^= 0x100;
	send(&f, &p, 8);
	expect_nak(&f, DROCE_NAK_REM_ACCESS_ERR, DROCE_DROP_RKEY, "WRITE, bad R_Key");
}

/* Opcode sequence (9.7.5.1.3), and a receive WQE whose buffer fails its L_Key (a Remote
 * Operational Error, rxe's class A), each under its own reason. */
static void
seq_and_local(void)
{
	struct droce_recv_wr rw, *bad;
	struct droce_sge sge;
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, ALL, ALL);
	pkt(&f, 0, DROCE_OP_RC_RDMA_WRITE_MIDDLE, &p);
	send(&f, &p, MTU);
	expect_nak(&f, DROCE_NAK_INVALID_REQ, DROCE_DROP_OPCODE_SEQ, "MIDDLE without FIRST");

	fx_init(&f, ALL, ALL);
	/* the posted WQE is consumed by a good SEND, the next has a bad L_Key */
	pkt(&f, 0, DROCE_OP_RC_SEND_ONLY, &p);
	send(&f, &p, 16);
	sge.addr = (uintptr_t)rbuf;
	sge.length = 256;
	sge.lkey = droce_mr_lkey(f.rmr) ^ 0x100;
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	CU_ASSERT_EQUAL_FATAL(droce_post_recv(f.qp[1], &rw, &bad), 0);
	pkt(&f, 1, DROCE_OP_RC_SEND_ONLY, &p);
	send(&f, &p, 16);
	expect_nak(&f, DROCE_NAK_REM_OP_ERR, DROCE_DROP_RWQE_PROT, "receive WQE bad L_Key");
}

DROCE_TEST_MAIN("resp_nak", DROCE_TEST(write_past_reth), DROCE_TEST(reth_past_max_msg),
		DROCE_TEST(empty_last), DROCE_TEST(atomic_misaligned), DROCE_TEST(qp_not_enabled),
		DROCE_TEST(seq_and_local))
