/* SPDX-License-Identifier: BSD-3-Clause */
/* Engine end to end over a loopback: every operation, sizes across the MTU, PSN wrap. */
#include "droce_internal.h"
#include "droce_test.h"
#include "wire/droce_ipv4.h"
#include "engine_harness.h"

static uint8_t bufa[1 << 20], bufb[1 << 20];

static void
fill(uint8_t *b, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

struct setup {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *mr[2];
};

static void
setup(struct setup *s, enum droce_qp_type t, const struct eh_qp_opts *o)
{
	int err = 0;

	eh_init(&s->w, 4200);
	s->mr[0] = droce_mr_reg(s->w.n[0].pd, bufa, sizeof(bufa), o->access, &err);
	s->mr[1] = droce_mr_reg(s->w.n[1].pd, bufb, sizeof(bufb), o->access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->mr[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->mr[1]);
	eh_pair(&s->w, t, o, s->qp, 256);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->qp[1]);
}

static int
post_recv(struct setup *s, unsigned int node, uint64_t off, uint32_t len, uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)(node ? bufb : bufa) + off, len,
				 droce_mr_lkey(s->mr[node]) };
	struct droce_recv_wr wr = { id, NULL, &sge, 1 }, *bad;

	return droce_post_recv(s->qp[node], &wr, &bad);
}

static int
post_send(struct setup *s, enum droce_wr_opcode op, uint64_t loff, uint32_t len, uint64_t roff,
	  uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)bufa + loff, len, droce_mr_lkey(s->mr[0]) };
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.imm_data = 0x12345678;
	if (op == DROCE_WR_ATOMIC_CMP_AND_SWP || op == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)bufb + roff;
		wr.wr.atomic.rkey = droce_mr_rkey(s->mr[1]);
		wr.wr.atomic.compare_add = 5;
		wr.wr.atomic.swap = 77;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)bufb + roff;
		wr.wr.rdma.rkey = droce_mr_rkey(s->mr[1]);
	}
	return droce_post_send(s->qp[0], &wr, &bad);
}

/* Completions carry the engine time they were made at: the receive when the SEND's last packet
 * arrived, the send when its ACK did (a round later here), a flush at the verb's last now_ns. */
static void
test_wc_timestamp(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_wc wc[4], rc;
	struct droce_qp_attr a;
	uint64_t t0;

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	s.w.now = 5000000;
	CU_ASSERT_EQUAL(post_recv(&s, 1, 0, 4096, 1), 0);
	CU_ASSERT_EQUAL(post_recv(&s, 1, 0, 4096, 2), 0);
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_SEND, 0, 3000, 0, 3), 0);
	t0 = s.w.now;
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[1], &rc, 1), 1);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(rc.wr_id, 1);
	CU_ASSERT_TRUE(rc.timestamp > t0); /* frames move a round (1 us) after they leave */
	CU_ASSERT_TRUE(wc[0].timestamp > rc.timestamp);
	CU_ASSERT_TRUE(wc[0].timestamp <= s.w.now);
	CU_ASSERT_TRUE(wc[0].timestamp - t0 < 100000);
	/* the receive left on the queue flushes at the time of the engine's last call */
	s.w.now += 777000;
	droce_dev_process(s.w.n[1].dev, s.w.now, 64);
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_ERR;
	CU_ASSERT_EQUAL(droce_qp_modify(s.qp[1], &a, DROCE_QP_STATE), 0);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(wc[0].timestamp, s.w.now);
	eh_fini(&s.w);
}

static void
test_send_sizes(void)
{
	static const uint32_t sizes[] = { 0, 1, 63, 64, 1023, 1024, 1025, 4096, 10000, 65536 };
	struct eh_qp_opts o;
	struct setup s;
	struct droce_wc wc[8];
	unsigned int i;

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(bufa, sizes[i], i);
		memset(bufb, 0, sizes[i] + 16);
		CU_ASSERT_EQUAL(post_recv(&s, 1, 0, 70000, 100 + i), 0);
		CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_SEND, 0, sizes[i], 0, i), 0);
		eh_run(&s.w, 10000000);
		CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 8), 1);
		CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc[0].wr_id, i);
		CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_SEND);
		CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[1], wc, 8), 1);
		CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc[0].wr_id, 100 + i);
		CU_ASSERT_EQUAL(wc[0].byte_len, sizes[i]);
		CU_ASSERT_EQUAL(memcmp(bufa, bufb, sizes[i]), 0);
	}
	eh_fini(&s.w);
}

static void
test_write_read_atomic(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_wc wc[8];
	uint64_t v;

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	fill(bufa, 9000, 3);
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE, 0, 9000, 4096, 1), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 8), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_RDMA_WRITE);
	CU_ASSERT_EQUAL(memcmp(bufa, bufb + 4096, 9000), 0);

	fill(bufb + 100000, 5000, 9);
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_READ, 200000, 5000, 100000, 2), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 8), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_RDMA_READ);
	CU_ASSERT_EQUAL(memcmp(bufa + 200000, bufb + 100000, 5000), 0);

	v = 5;
	memcpy(bufb + 512, &v, 8);
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_ATOMIC_CMP_AND_SWP, 300000, 8, 512, 3), 0);
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_ATOMIC_FETCH_AND_ADD, 300008, 8, 512, 4), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 8), 2);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[1].status, DROCE_WC_SUCCESS);
	memcpy(&v, bufa + 300000, 8);
	CU_ASSERT_EQUAL(v, 5);
	memcpy(&v, bufa + 300008, 8);
	CU_ASSERT_EQUAL(v, 77);
	memcpy(&v, bufb + 512, 8);
	CU_ASSERT_EQUAL(v, 82);

	/* WRITE with immediate consumes a receive WQE */
	CU_ASSERT_EQUAL(post_recv(&s, 1, 0, 16, 55), 0);
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE_WITH_IMM, 0, 3000, 600000, 5), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[1], wc, 8), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_RECV_RDMA_WITH_IMM);
	CU_ASSERT_EQUAL(wc[0].imm_data, 0x12345678);
	CU_ASSERT_EQUAL(wc[0].byte_len, 3000);
	CU_ASSERT_TRUE(wc[0].wc_flags & DROCE_WC_WITH_IMM);
	CU_ASSERT_EQUAL(memcmp(bufa, bufb + 600000, 3000), 0);
	CU_ASSERT_EQUAL(eh_poll(&s.w.n[0], wc, 8), 1);
	eh_fini(&s.w);
}

/* The IPv4 header-template path writes exactly what the codec's builder writes. */
static void
test_fast_path_equals_builder(void)
{
	static const uint8_t ops[] = {
		DROCE_OP_RC_SEND_FIRST,
		DROCE_OP_RC_SEND_MIDDLE,
		DROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE,
		DROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE,
		DROCE_OP_RC_RDMA_WRITE_FIRST,
		DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		DROCE_OP_RC_RDMA_READ_REQUEST,
		DROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
		DROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
		DROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
		DROCE_OP_RC_ACKNOWLEDGE,
		DROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
		DROCE_OP_RC_COMPARE_SWAP,
		DROCE_OP_RC_FETCH_ADD,
	};
	static const uint32_t lens[] = { 0, 1, 3, 1024 };
	struct eh_qp_opts o;
	struct setup s;
	unsigned int i, j;

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	CU_ASSERT_TRUE_FATAL(s.qp[0]->htmpl.valid);
	for (i = 0; i < sizeof(ops); i++) {
		for (j = 0; j < 4; j++) {
			const struct droce_opcode_info *op = droce_opcode_info(ops[i]);
			struct droce_pkt p = s.qp[0]->tmpl, q;
			uint8_t ref[2048], *buf, *data;
			uint32_t len = lens[j];
			void *cookie;
			struct eh_frame *f;
			int r;

			if (!(op->flags & DROCE_OPF_PAYLOAD))
				len = 0;
			else if (!(op->flags & DROCE_OPF_LAST))
				len = 1024;
			p.opcode = ops[i];
			p.psn = 0xABCDEF;
			p.ackreq = j & 1;
			p.se = (j & 2) != 0;
			p.reth_va = 0x1122334455667788ull;
			p.reth_rkey = 0x99AABBCC;
			p.reth_len = 0x12345;
			p.atomic_va = 0x0102030405060708ull;
			p.atomic_rkey = 0xCAFEF00D;
			p.atomic_swap_add = 0xFFEEDDCCBBAA9988ull;
			p.atomic_compare = 0x7766554433221100ull;
			p.atomic_orig = 0x5555AAAA5555AAAAull;
			p.aeth_syn = 0x1F;
			p.aeth_msn = 0x345678;
			p.imm = 0xDEADBEEF;
			p.ieth_rkey = 0x13579BDF;
			q = p;
			fill(bufa, len, i * 4 + j);
			r = droce_build(ref, sizeof(ref), &q, bufa, len);
			CU_ASSERT_TRUE_FATAL(r > 0);
			buf = droce_tx_begin(s.qp[0], &p, len, &cookie, &data);
			CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
			memcpy(data, bufa, len);
			droce_tx_end(s.qp[0], &p, buf, cookie);
			f = &s.w.n[0].q[(s.w.n[0].head - 1) % EH_FRAMES];
			CU_ASSERT_EQUAL(f->len, (uint32_t)r);
			CU_ASSERT_EQUAL(memcmp(f->b, ref, (size_t)r), 0);
		}
	}
	eh_fini(&s.w);
}

/* max_rd_atomic bounds the READs in flight; a fenced WR waits for earlier READs (IBTA 10.8.3.3). */
static void
test_rd_atomic_limit_and_fence(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_wc wc[8];
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	unsigned int i;

	eh_opts_default(&o);
	o.max_rd_atomic = 2;
	setup(&s, DROCE_QPT_RC, &o);
	for (i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_READ, i * 100, 100, i * 100, i), 0);
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)bufa + 9000;
	sge.length = 8;
	sge.lkey = droce_mr_lkey(s.mr[0]);
	wr.wr_id = 9;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_RDMA_WRITE;
	wr.send_flags = DROCE_SEND_FENCE | DROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)bufb + 9000;
	wr.wr.rdma.rkey = droce_mr_rkey(s.mr[1]);
	CU_ASSERT_EQUAL(droce_post_send(s.qp[0], &wr, &bad), 0);
	CU_ASSERT_EQUAL(droce_dev_process(s.w.n[0].dev, 0, 64), 2); /* two READs, then wait */
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 8), 5);
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[4].wr_id, 9);
	/* the fenced WRITE left only after the last READ response arrived: 4 READ requests,
	 * then the WRITE, 5 frames in all from node 0 */
	CU_ASSERT_EQUAL(s.w.n[0].sent, 5);
	eh_fini(&s.w);
}

/* SRQ: receives from two QPs share it; the limit event fires once when it drops below. */
static void
test_srq_limit(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_srq_attr sa = { 8, 2, 3 };
	struct droce_srq *srq;
	struct droce_qp_init_attr ia;
	struct droce_qp *rq, *sq;
	struct droce_async_event ev;
	struct droce_wc wc[8];
	int err = 0, i, events = 0;

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	srq = droce_srq_create(s.w.n[1].pd, &sa, NULL, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(srq);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.send_cq = s.w.n[1].cq;
	ia.recv_cq = s.w.n[1].cq;
	ia.srq = srq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	rq = droce_qp_create(s.w.n[1].pd, &ia, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(rq);
	ia.send_cq = s.w.n[0].cq;
	ia.recv_cq = s.w.n[0].cq;
	ia.srq = NULL;
	ia.cap.max_recv_wr = 4;
	sq = droce_qp_create(s.w.n[0].pd, &ia, &err);
	eh_bring_up(sq, DROCE_QPT_RC, &s.w.n[1], droce_qp_num(rq), &o, 0, 0);
	eh_bring_up(rq, DROCE_QPT_RC, &s.w.n[0], droce_qp_num(sq), &o, 0, 0);
	/* post_recv on a QP with an SRQ is refused */
	{
		struct droce_sge g = { (uintptr_t)bufb, 64, droce_mr_lkey(s.mr[1]) };
		struct droce_recv_wr r = { 1, NULL, &g, 1 }, *rb;

		CU_ASSERT_EQUAL(droce_post_recv(rq, &r, &rb), -EINVAL);
		for (i = 0; i < 5; i++) {
			r.wr_id = 50 + i;
			g.addr = (uintptr_t)bufb + 1000 * i;
			CU_ASSERT_EQUAL(droce_post_srq_recv(srq, &r, &rb), 0);
		}
	}
	for (i = 0; i < 3; i++) {
		struct droce_sge g = { (uintptr_t)bufa, 10, droce_mr_lkey(s.mr[0]) };
		struct droce_send_wr w, *wb;

		memset(&w, 0, sizeof(w));
		w.sg_list = &g;
		w.num_sge = 1;
		w.opcode = DROCE_WR_SEND;
		CU_ASSERT_EQUAL(droce_post_send(sq, &w, &wb), 0);
	}
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL(eh_poll(&s.w.n[1], wc, 8), 3);
	CU_ASSERT_EQUAL(wc[0].wr_id, 50);
	CU_ASSERT_EQUAL(wc[2].wr_id, 52);
	while (droce_dev_get_async_event(s.w.n[1].dev, &ev) == 0) {
		CU_ASSERT_EQUAL(ev.type, DROCE_EVENT_SRQ_LIMIT_REACHED);
		CU_ASSERT_PTR_EQUAL(ev.element.srq, srq);
		events++;
	}
	CU_ASSERT_EQUAL(events, 1); /* 5 -> 2 left: below 3 once, then disarmed */
	CU_ASSERT_EQUAL(droce_srq_destroy(srq), -EBUSY);
	eh_fini(&s.w);
}

/* Solicited events: a CQ armed solicited-only is signalled by a SEND with SE, not without. */
static void
test_solicited(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	struct droce_wc wc[8];

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	CU_ASSERT_EQUAL(post_recv(&s, 1, 0, 64, 1), 0);
	CU_ASSERT_EQUAL(post_recv(&s, 1, 64, 64, 2), 0);
	droce_cq_req_notify(s.w.n[1].cq, true);
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)bufa;
	sge.length = 8;
	sge.lkey = droce_mr_lkey(s.mr[0]);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	CU_ASSERT_EQUAL(droce_post_send(s.qp[0], &wr, &bad), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL(droce_cq_events(s.w.n[1].cq), 0);
	wr.send_flags = DROCE_SEND_SOLICITED | DROCE_SEND_INLINE;
	CU_ASSERT_EQUAL(droce_post_send(s.qp[0], &wr, &bad), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL(droce_cq_events(s.w.n[1].cq), 1);
	CU_ASSERT_EQUAL(eh_poll(&s.w.n[1], wc, 8), 2);
	eh_fini(&s.w);
}

/* Several SGEs, zero-length ones among them, gather on send and scatter on receive. */
static void
test_sge_lists(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_sge ss[4], rs[4];
	struct droce_send_wr wr, *bad;
	struct droce_recv_wr rw, *rbad;
	struct droce_wc wc[4];
	uint32_t lk, rk;

	eh_opts_default(&o);
	o.mtu = DROCE_MTU_256;
	setup(&s, DROCE_QPT_RC, &o);
	lk = droce_mr_lkey(s.mr[0]);
	rk = droce_mr_lkey(s.mr[1]);
	fill(bufa, 4000, 7);
	ss[0] = (struct droce_sge){ (uintptr_t)bufa, 300, lk };
	ss[1] = (struct droce_sge){ (uintptr_t)bufa + 300, 0, lk };
	ss[2] = (struct droce_sge){ (uintptr_t)bufa + 300, 1, lk };
	ss[3] = (struct droce_sge){ (uintptr_t)bufa + 301, 699, lk };
	rs[0] = (struct droce_sge){ (uintptr_t)bufb, 0, rk };
	rs[1] = (struct droce_sge){ (uintptr_t)bufb, 513, rk };
	rs[2] = (struct droce_sge){ (uintptr_t)bufb + 513, 0, rk };
	rs[3] = (struct droce_sge){ (uintptr_t)bufb + 513, 600, rk };
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = rs;
	rw.num_sge = 4;
	CU_ASSERT_EQUAL(droce_post_recv(s.qp[1], &rw, &rbad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = ss;
	wr.num_sge = 4;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED;
	CU_ASSERT_EQUAL(droce_post_send(s.qp[0], &wr, &bad), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].byte_len, 1000);
	CU_ASSERT_EQUAL(memcmp(bufa, bufb, 1000), 0);
	eh_fini(&s.w);
}

/* A rate limiter plugged through droce_cc_ops: one data packet per 10 us. */
static void
pace_init(struct droce_cc_state *st, uint64_t now)
{
	(void)st; /* the engine zeroed it */
	(void)now;
}

static void
pace_on_send(struct droce_cc_state *st, uint32_t bytes, uint64_t now)
{
	(void)bytes;
	st->next_send_ns = now + 10000;
	st->w[0]++;
}

static void
pace_on_event(struct droce_cc_state *st, uint64_t now)
{
	(void)now;
	st->w[1]++;
}

static uint64_t
pace_next(const struct droce_cc_state *st)
{
	return st->next_send_ns;
}

static const struct droce_cc_ops pace = {
	.name = "pace10us",
	.init = pace_init,
	.on_send = pace_on_send,
	.on_cnp = pace_on_event,
	.on_ack = pace_on_event,
	.next_send_time = pace_next,
};

static void
test_cc_pacing(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_wc wc[4];
	struct droce_dev *d;

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	d = s.w.n[0].dev;
	CU_ASSERT_EQUAL(droce_qp_set_cc(s.qp[0], &pace, NULL, 0), 0);
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE, 0, 4 * 1024, 0, 1), 0);
	CU_ASSERT_EQUAL(droce_dev_process(d, 0, 64), 1);
	CU_ASSERT_EQUAL(droce_dev_next_deadline(d), 10000);
	CU_ASSERT_EQUAL(droce_dev_process(d, 5000, 64), 0);
	CU_ASSERT_EQUAL(droce_dev_process(d, 10000, 64), 1);
	CU_ASSERT_EQUAL(droce_dev_next_deadline(d), 20000);
	CU_ASSERT_EQUAL(droce_dev_process(d, 20000, 64), 1);
	CU_ASSERT_EQUAL(droce_dev_process(d, 30000, 64), 1);
	CU_ASSERT_EQUAL(droce_dev_process(d, 40000, 64), 0); /* all four sent */
	CU_ASSERT_TRUE(droce_qp_counter(s.qp[0], DROCE_CNT_CC_DEFERRED) >= 3);
	s.w.now = 40000;
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(s.qp[0]->cc.w[0], 4);
	CU_ASSERT_TRUE(s.qp[0]->cc.w[1] >= 1); /* on_ack heard */
	eh_fini(&s.w);
}

/* Counter lists: unique names, transport counters then drop_<REASON>; COMM_EST raised. */
static void
test_counters_and_comm_est(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_counter c[256];
	struct droce_async_event ev;
	struct droce_qp_attr a;
	unsigned int n, i, j, found = 0;

	eh_opts_default(&o);
	setup(&s, DROCE_QPT_RC, &o);
	/* back qp[1] to RTR: its first packet raises COMM_EST */
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RESET;
	droce_qp_modify(s.qp[1], &a, DROCE_QP_STATE);
	eh_bring_up(s.qp[1], DROCE_QPT_RC, &s.w.n[0], droce_qp_num(s.qp[0]), &o, o.psn[0],
		    o.psn[1]);
	CU_ASSERT_EQUAL(droce_dev_get_async_event(s.w.n[1].dev, &ev), -EAGAIN);
	a.qp_state = DROCE_QPS_RESET;
	droce_qp_modify(s.qp[1], &a, DROCE_QP_STATE);
	{
		struct droce_qp_attr b;

		memset(&b, 0, sizeof(b));
		b.qp_state = DROCE_QPS_INIT;
		b.port_num = 1;
		b.qp_access_flags = o.access;
		droce_qp_modify(s.qp[1], &b,
				DROCE_QP_STATE | DROCE_QP_PORT | DROCE_QP_PKEY_INDEX |
					DROCE_QP_ACCESS_FLAGS);
		b.qp_state = DROCE_QPS_RTR;
		eh_av(&s.w.n[0], &b.ah_attr);
		b.path_mtu = o.mtu;
		b.dest_qp_num = droce_qp_num(s.qp[0]);
		b.rq_psn = o.psn[0];
		b.max_dest_rd_atomic = 4;
		CU_ASSERT_EQUAL(droce_qp_modify(s.qp[1], &b,
						DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
							DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
							DROCE_QP_MAX_DEST_RD_ATOMIC |
							DROCE_QP_MIN_RNR_TIMER),
				0);
	}
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE, 0, 100, 0, 1), 0);
	eh_run(&s.w, 10000000);
	CU_ASSERT_EQUAL(droce_dev_get_async_event(s.w.n[1].dev, &ev), 0);
	CU_ASSERT_EQUAL(ev.type, DROCE_EVENT_COMM_EST);
	CU_ASSERT_PTR_EQUAL(ev.element.qp, s.qp[1]);

	n = droce_dev_counters(s.w.n[1].dev, NULL, 0);
	CU_ASSERT_EQUAL(n, DROCE_CNT_MAX + DROCE_DROP_MAX);
	CU_ASSERT_TRUE_FATAL(n <= 256);
	CU_ASSERT_EQUAL(droce_dev_counters(s.w.n[1].dev, c, n), n);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			CU_ASSERT_STRING_NOT_EQUAL(c[i].name, c[j].name);
	for (i = 0; i < n; i++) {
		if (strcmp(c[i].name, "rcvd_pkts") == 0) {
			CU_ASSERT_EQUAL(c[i].value, 1);
			found++;
		}
		if (strcmp(c[i].name, "rx_write_requests") == 0) {
			CU_ASSERT_EQUAL(c[i].value, 1);
			found++;
		}
		if (strcmp(c[i].name, "drop_RKEY") == 0)
			found++;
	}
	CU_ASSERT_EQUAL(found, 3);
	CU_ASSERT_EQUAL(droce_qp_counters(s.qp[0], c, 256), DROCE_CNT_MAX);
	CU_ASSERT_STRING_EQUAL(c[DROCE_CNT_SENT_PKTS].name, "sent_pkts");
	CU_ASSERT_EQUAL(c[DROCE_CNT_SENT_PKTS].value, 1);
	eh_fini(&s.w);
}

/* UD over IPv6: the whole 40-byte IPv6 header is the GRH area. */
static void
test_ud_ipv6_grh(void)
{
	struct eh_world w;
	struct eh_qp_opts o;
	struct droce_qp *qp[2];
	struct droce_mr *ma, *mb;
	struct droce_ah *ah;
	struct droce_av av;
	struct droce_sge sa, sb;
	struct droce_send_wr wr, *bad;
	struct droce_recv_wr rw, *rbad;
	struct droce_wc wc[4];
	int err = 0;

	eh_init_v(&w, 1500, true);
	eh_opts_default(&o);
	eh_pair(&w, DROCE_QPT_UD, &o, qp, 4);
	ma = droce_mr_reg(w.n[0].pd, bufa, 4096, o.access, &err);
	mb = droce_mr_reg(w.n[1].pd, bufb, 4096, o.access, &err);
	eh_av(&w.n[1], &av);
	ah = droce_ah_create(w.n[0].pd, &av, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ah);
	fill(bufa, 1024, 5);
	memset(bufb, 0xEE, 2000);
	sb.addr = (uintptr_t)bufb;
	sb.length = 2000;
	sb.lkey = droce_mr_lkey(mb);
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sb;
	rw.num_sge = 1;
	CU_ASSERT_EQUAL(droce_post_recv(qp[1], &rw, &rbad), 0);
	sa.addr = (uintptr_t)bufa;
	sa.length = 1024; /* the path MTU for a 1500-byte Ethernet MTU */
	sa.lkey = droce_mr_lkey(ma);
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sa;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND_WITH_IMM;
	wr.imm_data = 0x01020304;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = droce_qp_num(qp[1]);
	wr.wr.ud.remote_qkey = 0x11111111;
	CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bad), 0);
	eh_run(&w, 10000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].byte_len, 1064);
	CU_ASSERT_EQUAL(wc[0].imm_data, 0x01020304);
	CU_ASSERT_EQUAL(bufb[0] >> 4, 6);		      /* IPv6 version */
	CU_ASSERT_EQUAL(bufb[6], 17);			      /* next header UDP */
	CU_ASSERT_EQUAL(memcmp(bufb + 8, w.n[0].gid, 16), 0); /* source GID */
	CU_ASSERT_EQUAL(memcmp(bufb + 24, w.n[1].gid, 16), 0);
	CU_ASSERT_EQUAL(memcmp(bufb + 40, bufa, 1024), 0);
	eh_fini(&w);
}

/* Long messages: 32 MiB WRITE and READ (8192 packets each, the PSN wrapping on the way) under
 * the in-flight window, and a 1 MiB SEND at path MTU 256. */
static void
test_large_messages(void)
{
	const size_t big = 32u << 20;
	uint8_t *src = malloc(big), *dst = malloc(big);
	struct eh_world w;
	struct eh_qp_opts o;
	struct droce_qp *qp[2];
	struct droce_mr *ma, *mb;
	struct droce_sge sge;
	struct droce_send_wr wr, *bad;
	struct droce_wc wc[4];
	int err = 0;
	size_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
	for (i = 0; i < big; i++)
		src[i] = (uint8_t)(i * 131 + (i >> 12));
	memset(dst, 0, big);
	eh_init(&w, 9000);
	eh_opts_default(&o);
	o.mtu = DROCE_MTU_4096;
	eh_pair(&w, DROCE_QPT_RC, &o, qp, 8);
	ma = droce_mr_reg(w.n[0].pd, src, big, o.access, &err);
	mb = droce_mr_reg(w.n[1].pd, dst, big, o.access, &err);
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)src;
	sge.length = (uint32_t)big;
	sge.lkey = droce_mr_lkey(ma);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_RDMA_WRITE;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = droce_mr_rkey(mb);
	CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bad), 0);
	eh_run(&w, 1000000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(src, dst, big), 0);
	/* read it back into a cleared source */
	memset(src, 0, big);
	wr.opcode = DROCE_WR_RDMA_READ;
	CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bad), 0);
	eh_run(&w, 1000000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc[0].byte_len, big);
	CU_ASSERT_EQUAL(memcmp(src, dst, big), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(qp[1], DROCE_CNT_RX_READ_REQUESTS), 1);
	eh_fini(&w);

	/* 1 MiB SEND in 4096 packets of 256 bytes */
	eh_init(&w, 1500);
	o.mtu = DROCE_MTU_256;
	eh_pair(&w, DROCE_QPT_RC, &o, qp, 8);
	ma = droce_mr_reg(w.n[0].pd, src, 1u << 20, o.access, &err);
	mb = droce_mr_reg(w.n[1].pd, dst, 1u << 20, o.access, &err);
	for (i = 0; i < (1u << 20); i++)
		src[i] = (uint8_t)(i * 7);
	{
		struct droce_sge rs = { (uintptr_t)dst, 1u << 20, droce_mr_lkey(mb) };
		struct droce_recv_wr rw = { 3, NULL, &rs, 1 }, *rb;

		CU_ASSERT_EQUAL(droce_post_recv(qp[1], &rw, &rb), 0);
	}
	sge.length = 1u << 20;
	sge.lkey = droce_mr_lkey(ma);
	wr.opcode = DROCE_WR_SEND;
	CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bad), 0);
	eh_run(&w, 1000000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].byte_len, 1u << 20);
	CU_ASSERT_EQUAL(memcmp(src, dst, 1u << 20), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(qp[0], DROCE_CNT_SENT_PKTS), 4096);
	eh_fini(&w);
	free(src);
	free(dst);
}

/* rx offload: with NO_ICRC the engine trusts the NIC's check; by default a bad ICRC drops. */
static bool
flip_icrc(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	(void)from;
	(void)arg;
	frame[len - 1] ^= 0xFF;
	return true;
}

static void
test_rx_offload(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_wc wc[4];

	eh_opts_default(&o);
	o.timeout = 8;
	o.retry_cnt = 1;
	setup(&s, DROCE_QPT_RC, &o);
	CU_ASSERT_EQUAL(droce_dev_set_rx_offload(s.w.n[1].dev, 1u << 7), -EINVAL);
	s.w.n[0].filter = flip_icrc;
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE, 0, 100, 0, 1), 0);
	eh_run(&s.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_RETRY_EXC_ERR);
	CU_ASSERT_EQUAL(droce_dev_drops(s.w.n[1].dev, DROCE_DROP_ICRC), 2);
	eh_fini(&s.w);

	setup(&s, DROCE_QPT_RC, &o);
	CU_ASSERT_EQUAL(droce_dev_set_rx_offload(s.w.n[1].dev, DROCE_PARSE_NO_ICRC), 0);
	s.w.n[0].filter = flip_icrc;
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE, 0, 100, 0, 1), 0);
	eh_run(&s.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(droce_dev_drops(s.w.n[1].dev, DROCE_DROP_ICRC), 0);
	eh_fini(&s.w);
}

/* A switch marks CE (IPv4 ToS low bits; ToS is masked out of the ICRC, the header checksum is
 * redone). */
static bool
mark_ce(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	uint8_t *ip = frame + (frame[12] == 0x81 && frame[13] == 0x00 ? 18 : 14); /* 802.1Q */

	(void)from;
	(void)arg;
	(void)len;
	ip[1] |= DROCE_ECN_CE;
	ip[10] = ip[11] = 0;
	droce_put_be16(ip + 10, droce_ipv4_csum(ip, 20));
	return true;
}

/* The CNP among the last two frames node 1 sent (the ACK may follow it), parsed into pk. */
static bool
last_cnp(struct setup *s, struct droce_pkt *pk)
{
	unsigned int i;

	for (i = s->w.n[1].tail - 2; i != s->w.n[1].head; i++) {
		const struct eh_frame *f = &s->w.n[1].q[i % EH_FRAMES];

		if (droce_parse(f->b, f->len, pk, 0) == DROCE_DROP_NONE &&
		    pk->opcode == DROCE_OP_CNP)
			return true;
	}
	return false;
}

/* An RC pair (on VLAN tci, if not 0) whose first WRITE, 1 KiB, arrives CE-marked. */
static void
ce_write(struct setup *s, uint16_t tci, struct eh_qp_opts *o)
{
	struct droce_wc wc[4];

	eh_opts_default(o);
	setup(s, DROCE_QPT_RC, o);
	if (tci != 0)
		CU_ASSERT_EQUAL_FATAL(eh_pair_vlan(&s->w, s->qp, tci), 0);
	s->w.n[0].filter = mark_ce;
	CU_ASSERT_EQUAL(post_send(s, DROCE_WR_RDMA_WRITE, 0, 1024, 0, 1), 0);
	eh_run(&s->w, 1000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&s->w.n[0], wc, 4), 1);
}

/* Notification point: CE-marked data makes the receiver send a CNP (opcode 0x81, BECN) to the
 * sender's QP, at most one per interval; the sender's CC hears it. */
static void
test_cnp_notification_point(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_wc wc[4];
	struct droce_pkt pk;

	ce_write(&s, 0, &o);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[1], DROCE_CNT_NP_ECN_MARKED), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[1], DROCE_CNT_NP_CNP_SENT), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[0], DROCE_CNT_RP_CNP_HANDLED), 1);
	/* the CNP on the wire: opcode 0x81, BECN, DestQP = the sender's QP, DSCP 48, not ECT */
	CU_ASSERT_TRUE_FATAL(last_cnp(&s, &pk));
	CU_ASSERT_TRUE(pk.becn);
	CU_ASSERT_EQUAL(pk.dqpn, droce_qp_num(s.qp[0]));
	CU_ASSERT_EQUAL(pk.tclass, 48 << 2);
	CU_ASSERT_EQUAL(pk.psn, 0);
	CU_ASSERT_FALSE(pk.has_vlan);
	/* a burst within the interval earns one CNP (the last left more than 4 us ago) */
	s.w.now += 10000;
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE, 0, 16 * 1024, 0, 2), 0);
	eh_run(&s.w, 1000000);
	CU_ASSERT_EQUAL(eh_poll(&s.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[1], DROCE_CNT_NP_ECN_MARKED), 17);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[1], DROCE_CNT_NP_CNP_SENT), 2);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[0], DROCE_CNT_RP_CNP_HANDLED), 2);
	/* with no interval every marked frame processed apart earns one */
	droce_dev_set_cnp_interval(s.w.n[1].dev, 0);
	CU_ASSERT_EQUAL(droce_qp_set_cc(s.qp[0], &pace, NULL, s.w.now), 0); /* 10 us apart */
	CU_ASSERT_EQUAL(post_send(&s, DROCE_WR_RDMA_WRITE, 0, 4 * 1024, 0, 3), 0);
	eh_run(&s.w, 1000000);
	CU_ASSERT_EQUAL(eh_poll(&s.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[1], DROCE_CNT_NP_CNP_SENT), 6);
	CU_ASSERT_EQUAL(s.qp[0]->cc.w[1] >= 4, 1); /* on_cnp reached the algorithm */
	eh_fini(&s.w);
}

/* On a VLAN (PCP 1, DEI, VID 5) the CNP goes at priority 6, ConnectX's cnp_802p_prio, with the
 * data's VID and DEI: PFC pausing the data's priority must not hold the CNP back. */
static void
test_cnp_vlan_priority(void)
{
	struct eh_qp_opts o;
	struct setup s;
	struct droce_pkt pk;

	ce_write(&s, 0x3005, &o);
	CU_ASSERT_EQUAL(droce_qp_counter(s.qp[1], DROCE_CNT_NP_CNP_SENT), 1);
	CU_ASSERT_TRUE_FATAL(last_cnp(&s, &pk));
	CU_ASSERT_TRUE(pk.has_vlan);
	CU_ASSERT_EQUAL(pk.vlan_tci, 0xD005);
	eh_fini(&s.w);
}

DROCE_TEST_MAIN("engine_basic", DROCE_TEST(test_cnp_notification_point),
		DROCE_TEST(test_cnp_vlan_priority), DROCE_TEST(test_rx_offload),
		DROCE_TEST(test_large_messages), DROCE_TEST(test_ud_ipv6_grh),
		DROCE_TEST(test_cc_pacing), DROCE_TEST(test_counters_and_comm_est),
		DROCE_TEST(test_rd_atomic_limit_and_fence), DROCE_TEST(test_srq_limit),
		DROCE_TEST(test_solicited), DROCE_TEST(test_sge_lists),
		DROCE_TEST(test_fast_path_equals_builder), DROCE_TEST(test_wc_timestamp),
		DROCE_TEST(test_send_sizes), DROCE_TEST(test_write_read_atomic))
