/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Well-formed but hostile traffic: frames with valid ICRC, any opcode, PSNs around the expected
 * one, random extension fields and payload lengths, aimed at live RC, UC and UD QPs while real
 * traffic runs. The engine must not crash or write outside registered memory (run under ASan),
 * keys that were never handed out must never let a byte through, and every frame must be
 * accounted for.
 */
#include "droce_internal.h"
#include "droce_psn.h"
#include "droce_test.h"
#include "engine_harness.h"

static uint8_t mem_a[1 << 16], mem_b[1 << 16], guard[4096];
static uint64_t fs;

static uint64_t
frnd(void)
{
	fs ^= fs << 13;
	fs ^= fs >> 7;
	fs ^= fs << 17;
	return fs;
}

static void
inject(struct eh_world *w, struct droce_qp *dst, uint32_t rkey_good)
{
	static uint8_t frame[9200], pay[9000];
	const struct droce_opcode_info *op;
	struct droce_pkt p = dst->tmpl;
	uint32_t len, n;
	const uint8_t *fp;
	int r;

	do
		p.opcode = droce_opcode_values[frnd() % droce_opcode_count];
	while (droce_opcode_info(p.opcode)->flags & DROCE_OPF_CNP);
	op = droce_opcode_info(p.opcode);
	/* addressed from node 0 to the QP on node 1 */
	memcpy(p.smac, w->n[0].mac, 6);
	memcpy(p.dmac, w->n[1].mac, 6);
	memcpy(p.sgid, w->n[0].gid, 16);
	memcpy(p.dgid, w->n[1].gid, 16);
	p.ip_ver = 4;
	p.hop_limit = 64;
	p.pkey = 0xFFFF;
	p.dqpn = droce_qp_num(dst);
	p.psn = droce_psn_add(dst->resp.epsn, (uint32_t)(frnd() % 8) - 4);
	if (frnd() & 1)
		p.psn = droce_psn_add(dst->req.una, (uint32_t)(frnd() % 8) - 2);
	p.ackreq = frnd() & 1;
	p.se = frnd() & 1;
	p.reth_va = (frnd() & 1) ? (uintptr_t)mem_b + frnd() % sizeof(mem_b) : frnd();
	p.reth_rkey = (frnd() % 4) ? rkey_good : (uint32_t)frnd();
	p.reth_len = (uint32_t)((frnd() & 1) ? frnd() % 5000 : frnd());
	p.atomic_va = (frnd() & 1) ? (uintptr_t)mem_b + (frnd() % 1024) * 8 : frnd();
	p.atomic_rkey = p.reth_rkey;
	p.atomic_swap_add = frnd();
	p.atomic_compare = frnd();
	p.atomic_orig = frnd();
	p.aeth_syn = (uint8_t)frnd();
	p.aeth_msn = (uint32_t)frnd();
	p.imm = (uint32_t)frnd();
	p.ieth_rkey = (uint32_t)frnd();
	p.deth_qkey = (frnd() & 1) ? 0x11111111 : (uint32_t)frnd();
	p.deth_sqpn = (uint32_t)frnd();
	len = 0;
	if (op->flags & DROCE_OPF_PAYLOAD) {
		n = (uint32_t)(frnd() % 5);
		len = n == 0 ? 0 :
		      n == 1 ? dst->mtu :
		      n == 2 ? (uint32_t)(frnd() % 4100) :
		      n == 3 ? dst->mtu * 2 :
			       4;
		if (!(op->flags & DROCE_OPF_LAST))
			len &= ~3u;
	}
	memset(pay, 0xA5, len);
	r = droce_build(frame, sizeof(frame), &p, pay, len);
	if (r <= 0)
		return;
	fp = frame;
	len = (uint32_t)r;
	droce_dev_rx_burst(w->n[1].dev, &fp, &len, 1, w->now);
}

static void
fuzz_type(enum droce_qp_type t, uint64_t seed)
{
	struct eh_world w;
	struct eh_qp_opts o;
	struct droce_qp *qp[2];
	struct droce_mr *ma, *mb;
	struct droce_wc wc[64];
	unsigned int i, k;
	int err = 0;

	fs = seed;
	eh_init(&w, 4200);
	eh_opts_default(&o);
	eh_pair(&w, t, &o, qp, 64);
	ma = droce_mr_reg(w.n[0].pd, mem_a, sizeof(mem_a), o.access, &err);
	mb = droce_mr_reg(w.n[1].pd, mem_b, sizeof(mem_b), o.access, &err);
	memset(guard, 0x5A, sizeof(guard));
	for (k = 0; k < 1000; k++) {
		/* some real traffic both ways, then hostile frames at node 1's QP */
		struct droce_sge sa = { (uintptr_t)mem_a, (uint32_t)(frnd() % 3000),
					droce_mr_lkey(ma) };
		struct droce_sge sb = { (uintptr_t)mem_b, 5000, droce_mr_lkey(mb) };
		struct droce_recv_wr rw = { k, NULL, &sb, 1 }, *rb;
		struct droce_send_wr sw, *bad;

		droce_post_recv(qp[1], &rw, &rb);
		memset(&sw, 0, sizeof(sw));
		sw.sg_list = &sa;
		sw.num_sge = 1;
		sw.opcode = DROCE_WR_SEND;
		if (t == DROCE_QPT_UD) {
			struct droce_av av;

			eh_av(&w.n[1], &av);
			sw.wr.ud.ah = droce_ah_create(w.n[0].pd, &av, &err);
			sw.wr.ud.remote_qpn = droce_qp_num(qp[1]);
			sw.wr.ud.remote_qkey = 0x11111111;
			sa.length %= 1024;
		}
		droce_post_send(qp[0], &sw, &bad);
		if (t == DROCE_QPT_UD && sw.wr.ud.ah) {
			eh_run(&w, 100000);
			droce_ah_destroy(sw.wr.ud.ah);
		}
		if (t == DROCE_QPT_RC) {
			/* node 1 is a requester too: READs and atomics, so hostile responses
			 * meet outstanding work */
			struct droce_sge s1 = { (uintptr_t)mem_b + 8192, (uint32_t)(frnd() % 6000),
						droce_mr_lkey(mb) };
			struct droce_send_wr w1, *b1;

			memset(&w1, 0, sizeof(w1));
			w1.sg_list = &s1;
			w1.num_sge = 1;
			w1.opcode =
				(frnd() & 1) ? DROCE_WR_RDMA_READ : DROCE_WR_ATOMIC_FETCH_AND_ADD;
			if (w1.opcode == DROCE_WR_RDMA_READ) {
				w1.wr.rdma.remote_addr = (uintptr_t)mem_a;
				w1.wr.rdma.rkey = droce_mr_rkey(ma);
			} else {
				s1.length = 8;
				w1.wr.atomic.remote_addr = (uintptr_t)mem_a + 8 * (frnd() % 64);
				w1.wr.atomic.rkey = droce_mr_rkey(ma);
			}
			droce_post_send(qp[1], &w1, &b1);
			droce_dev_process(w.n[1].dev, w.now, 4);
		}
		for (i = 0; i < 20; i++)
			inject(&w, qp[1], droce_mr_rkey(mb));
		eh_run(&w, 200000);
		while (droce_cq_poll(w.n[0].cq, 64, wc) > 0)
			;
		while (droce_cq_poll(w.n[1].cq, 64, wc) > 0)
			;
		if (qp[0]->state != DROCE_QPS_RTS || qp[1]->state != DROCE_QPS_RTS ||
		    frnd() % 16 == 0) {
			/* bring the pair back after whatever error happened */
			struct droce_qp_attr a;

			memset(&a, 0, sizeof(a));
			a.qp_state = DROCE_QPS_RESET;
			droce_qp_modify(qp[0], &a, DROCE_QP_STATE);
			droce_qp_modify(qp[1], &a, DROCE_QP_STATE);
			eh_bring_up(qp[0], t, &w.n[1], droce_qp_num(qp[1]), &o, o.psn[1], o.psn[0]);
			eh_bring_up(qp[1], t, &w.n[0], droce_qp_num(qp[0]), &o, o.psn[0], o.psn[1]);
		}
	}
	/* memory next to the MRs is never written */
	for (i = 0; i < sizeof(guard); i++)
		if (guard[i] != 0x5A)
			break;
	CU_ASSERT_EQUAL(i, sizeof(guard));
	/* frames that reached node 1 were either accepted or dropped for a named reason */
	CU_ASSERT_TRUE(droce_qp_counter(qp[1], DROCE_CNT_RCVD_PKTS) > 1000);
	CU_ASSERT_TRUE(droce_dev_drops(w.n[1].dev, DROCE_DROP_QP_STATE) <
		       droce_qp_counter(qp[1], DROCE_CNT_RCVD_PKTS) / 2);
	eh_fini(&w);
}

static void
test_fuzz_rc(void)
{
	uint64_t s;

	for (s = 1; s <= 4; s++)
		fuzz_type(DROCE_QPT_RC, 0x1234567 * s);
}

static void
test_fuzz_uc(void)
{
	fuzz_type(DROCE_QPT_UC, 0x2468ACE);
	fuzz_type(DROCE_QPT_UC, 0x7777777);
}

static void
test_fuzz_ud(void)
{
	fuzz_type(DROCE_QPT_UD, 0x13579BD);
}

DROCE_TEST_MAIN("engine_fuzz", DROCE_TEST(test_fuzz_rc), DROCE_TEST(test_fuzz_uc),
		DROCE_TEST(test_fuzz_ud))
