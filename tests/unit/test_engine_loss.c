/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC and UC under loss, duplication, reordering and corruption: mixed operations and sizes over
 * many seeds. Every RC work request must complete successfully, in order, with the right bytes;
 * UC messages either arrive whole or not at all.
 */
#include <stdio.h>

#include "droce_test.h"
#include "engine_harness.h"

#define BUF	(4u << 20)
#define NOPS	48
#define UC_RBUF (2u << 20)
#define UC_RLEN 20000u

static uint8_t *bufa, *bufb;

struct op {
	enum droce_wr_opcode code;
	uint32_t len;
	uint64_t loff, roff;
	uint64_t init; /* atomics: remote value before */
};

static uint64_t rs;

static uint32_t
rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs % n);
}

static uint32_t
rnd_len(void)
{
	switch (rnd(6)) {
	case 0:
		return 0;
	case 1:
		return 1 + rnd(64);
	case 2:
		return 1024 + rnd(3) - 1;
	case 3:
		return rnd(70000);
	default:
		return rnd(5000);
	}
}

static bool use_ipv6;

static int
run_seed(uint64_t seed, enum droce_qp_type t, unsigned int loss, unsigned int dup,
	 unsigned int reorder, unsigned int corrupt, enum droce_mtu mtu)
{
	struct eh_world w;
	struct eh_qp_opts o;
	struct droce_qp *qp[2];
	struct droce_mr *mr[2];
	struct op ops[NOPS];
	struct droce_wc wc[NOPS * 2];
	uint64_t aoff = 0, boff = 0, x;
	unsigned int i, nrecv = 0, bad = 0;
	int err = 0, n, m;
	unsigned long sd = (unsigned long)seed;

	rs = seed * 0x9E3779B97F4A7C15ull + 1;
	eh_opts_default(&o);
	o.mtu = mtu;
	o.timeout = 10; /* 4 ms */
	o.psn[0] = (uint32_t)rnd(1 << 24);
	o.psn[1] = (uint32_t)rnd(1 << 24);
	eh_init_v(&w, 4200, use_ipv6);
	for (i = 0; i < 2; i++) {
		w.n[i].loss = loss;
		w.n[i].dup = dup;
		w.n[i].reorder = reorder;
		w.n[i].corrupt = corrupt;
		w.n[i].net_rng ^= seed * 7919;
	}
	mr[0] = droce_mr_reg(w.n[0].pd, bufa, BUF, o.access, &err);
	mr[1] = droce_mr_reg(w.n[1].pd, bufb, BUF, o.access, &err);
	eh_pair(&w, t, &o, qp, NOPS);
	/* the source bytes 8 at a time from a generator of their own: a byte per rnd() call was
	 * most of this test's time (300 seeds x 4 MiB) */
	for (i = 0, x = rs; i < BUF; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(bufa + i, &x, 8);
	}
	memset(bufb, 0xEE, BUF);
	for (i = 0; i < NOPS; i++) {
		struct op *p = &ops[i];
		struct droce_sge sge;
		struct droce_send_wr wr, *bw;
		uint32_t k = rnd(7);

		if (t == DROCE_QPT_UC && k >= 3 && k <= 5)
			k = 6;

		memset(&wr, 0, sizeof(wr));
		p->code = k == 0 ? DROCE_WR_SEND :
			  k == 1 ? DROCE_WR_RDMA_WRITE :
			  k == 2 ? DROCE_WR_SEND_WITH_IMM :
			  k == 3 ? DROCE_WR_RDMA_READ :
			  k == 4 ? DROCE_WR_ATOMIC_FETCH_AND_ADD :
			  k == 5 ? DROCE_WR_ATOMIC_CMP_AND_SWP :
				   DROCE_WR_RDMA_WRITE_WITH_IMM;
		p->len = (k == 4 || k == 5) ? 8 : rnd_len();
		if (t == DROCE_QPT_UC && p->len > UC_RLEN)
			p->len = UC_RLEN;
		p->loff = aoff;
		p->roff = boff;
		aoff += (p->len + 15) & ~7u;
		boff += (p->len + 15) & ~7u;
		if (p->code == DROCE_WR_SEND || p->code == DROCE_WR_SEND_WITH_IMM ||
		    p->code == DROCE_WR_RDMA_WRITE_WITH_IMM) {
			/* UC loses whole messages: a WQE may get a later, longer one */
			struct droce_sge rs_ = { (uintptr_t)bufb + p->roff, p->len + 8,
						 droce_mr_lkey(mr[1]) };

			if (t == DROCE_QPT_UC) {
				rs_.addr = (uintptr_t)bufb + UC_RBUF + (uint64_t)i * UC_RLEN;
				rs_.length = UC_RLEN;
			}
			struct droce_recv_wr rw = { 1000 + i, NULL, &rs_, 1 }, *rb;

			if (p->code == DROCE_WR_RDMA_WRITE_WITH_IMM && t == DROCE_QPT_RC)
				rs_.length = 0;
			CU_ASSERT_EQUAL(droce_post_recv(qp[1], &rw, &rb), 0);
			nrecv++;
		}
		if (p->code == DROCE_WR_RDMA_READ)
			memset(bufa + p->loff, 0, p->len);
		if (k == 4 || k == 5) {
			p->init = rs;
			memcpy(bufb + p->roff, &p->init, 8);
		}
		sge.addr = (uintptr_t)bufa + p->loff;
		sge.length = p->len;
		sge.lkey = droce_mr_lkey(mr[0]);
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = p->code;
		wr.send_flags = DROCE_SEND_SIGNALED;
		wr.imm_data = i;
		if (k == 4 || k == 5) {
			wr.wr.atomic.remote_addr = (uintptr_t)bufb + p->roff;
			wr.wr.atomic.rkey = droce_mr_rkey(mr[1]);
			wr.wr.atomic.compare_add = k == 5 ? p->init : 3;
			wr.wr.atomic.swap = 42;
		} else {
			wr.wr.rdma.remote_addr = (uintptr_t)bufb + p->roff;
			wr.wr.rdma.rkey = droce_mr_rkey(mr[1]);
		}
		CU_ASSERT_EQUAL(droce_post_send(qp[0], &wr, &bw), 0);
	}
	eh_run(&w, 20000000000ull);
	n = eh_poll(&w.n[0], wc, NOPS * 2);
	if (t == DROCE_QPT_RC) {
		if (n != NOPS) {
			fprintf(stderr, "\nseed %lu: %d send completions of %d\n", sd, n, NOPS);
			bad++;
		}
		for (i = 0; i < (unsigned int)n && i < NOPS; i++) {
			const struct op *p = &ops[i];
			uint64_t v;

			if (wc[i].wr_id != i || wc[i].status != DROCE_WC_SUCCESS) {
				fprintf(stderr, "\nseed %lu: wc %u wr_id %lu status %d\n", sd, i,
					(unsigned long)wc[i].wr_id, wc[i].status);
				bad++;
				break;
			}
			switch (p->code) {
			case DROCE_WR_RDMA_READ:
				if (memcmp(bufa + p->loff, bufb + p->roff, p->len)) {
					fprintf(stderr, "\nseed %lu: op %u read data\n", sd, i);
					bad++;
				}
				break;
			case DROCE_WR_ATOMIC_FETCH_AND_ADD:
				memcpy(&v, bufa + p->loff, 8);
				bad += v != p->init;
				memcpy(&v, bufb + p->roff, 8);
				bad += v != p->init + 3;
				break;
			case DROCE_WR_ATOMIC_CMP_AND_SWP:
				memcpy(&v, bufa + p->loff, 8);
				bad += v != p->init;
				memcpy(&v, bufb + p->roff, 8);
				bad += v != 42;
				break;
			default:
				if (memcmp(bufa + p->loff, bufb + p->roff, p->len)) {
					fprintf(stderr, "\nseed %lu: op %u data\n", sd, i);
					bad++;
				}
				break;
			}
		}
		m = eh_poll(&w.n[1], wc, NOPS * 2);
		if (m != (int)nrecv) {
			fprintf(stderr, "\nseed %lu: %d recv completions of %u\n", sd, m, nrecv);
			bad++;
		}
		for (i = 0; i < (unsigned int)m; i++)
			bad += wc[i].status != DROCE_WC_SUCCESS;
	} else {
		/* UC: all sends complete locally; received messages are whole. */
		if (n != NOPS) {
			fprintf(stderr, "\nseed %lu: uc %d send completions\n", sd, n);
			bad++;
		}
		m = eh_poll(&w.n[1], wc, NOPS * 2);
		for (i = 0; i < (unsigned int)m; i++) {
			const struct op *p, *r;
			unsigned int k;

			if (wc[i].status != DROCE_WC_SUCCESS) {
				fprintf(stderr, "\nseed %lu: uc recv status %d\n", sd,
					wc[i].status);
				bad++;
				continue;
			}
			if (!(wc[i].wc_flags & DROCE_WC_WITH_IMM))
				continue;
			/* the immediate names the message; the WQE's buffer must hold it whole */
			k = wc[i].imm_data;
			r = &ops[wc[i].wr_id - 1000];
			p = &ops[k];
			if (k >= NOPS || p->code != DROCE_WR_SEND_WITH_IMM) {
				if (k < NOPS && p->code == DROCE_WR_RDMA_WRITE_WITH_IMM &&
				    memcmp(bufa + p->loff, bufb + p->roff, p->len) == 0)
					continue;
				fprintf(stderr, "\nseed %lu: uc imm %u\n", sd, k);
				bad++;
				continue;
			}
			(void)r;
			if (wc[i].byte_len != p->len ||
			    memcmp(bufa + p->loff, bufb + UC_RBUF + (wc[i].wr_id - 1000) * UC_RLEN,
				   p->len)) {
				fprintf(stderr, "\nseed %lu: uc msg %u len %u\n", sd, k,
					wc[i].byte_len);
				bad++;
			}
		}
	}
	if (t == DROCE_QPT_RC && (droce_dev_drops(w.n[0].dev, DROCE_DROP_RESP_UNEXPECTED) ||
				  droce_dev_drops(w.n[1].dev, DROCE_DROP_OPCODE_SEQ))) {
		fprintf(stderr, "\nseed %lu: unexpected %lu opseq %lu\n", sd,
			(unsigned long)droce_dev_drops(w.n[0].dev, DROCE_DROP_RESP_UNEXPECTED),
			(unsigned long)droce_dev_drops(w.n[1].dev, DROCE_DROP_OPCODE_SEQ));
		bad++;
	}
	eh_fini(&w);
	return bad ? -1 : 0;
}

static void
test_rc_clean(void)
{
	uint64_t s;

	for (s = 1; s <= 20; s++)
		CU_ASSERT_EQUAL(run_seed(s, DROCE_QPT_RC, 0, 0, 0, 0, DROCE_MTU_1024), 0);
}

static void
test_rc_impaired(void)
{
	uint64_t s;
	unsigned int fails = 0;

	for (s = getenv("EH_SEED") ? strtoul(getenv("EH_SEED"), NULL, 0) : 1; s <= 200; s++) {
		unsigned int loss = (unsigned int)(s % 11) * 10; /* 0..10 % */
		enum droce_mtu mtu = (enum droce_mtu)(1 + s % 5);

		if (run_seed(s, DROCE_QPT_RC, loss, 20, 30, 5, mtu) != 0) {
			fprintf(stderr, "seed %lu loss %u mtu %d failed\n", (unsigned long)s, loss,
				mtu);
			fails++;
		}
	}
	CU_ASSERT_EQUAL(fails, 0);
}

static void
test_uc_impaired(void)
{
	uint64_t s;

	for (s = 1; s <= 50; s++)
		CU_ASSERT_EQUAL(run_seed(s, DROCE_QPT_UC, (unsigned int)(s % 6) * 10, 10, 10, 0,
					 DROCE_MTU_1024),
				0);
}

/* The same over IPv6 GIDs: the generic builder path with its UDP checksum. */
static void
test_rc_ipv6(void)
{
	uint64_t s;

	use_ipv6 = true;
	for (s = 1; s <= 30; s++)
		CU_ASSERT_EQUAL(run_seed(s, DROCE_QPT_RC, (unsigned int)(s % 6) * 10, 10, 10, 5,
					 (enum droce_mtu)(1 + s % 5)),
				0);
	use_ipv6 = false;
}

static void
init_bufs(void)
{
	bufa = malloc(BUF);
	bufb = malloc(BUF);
}

static void
test_setup(void)
{
	init_bufs();
	CU_ASSERT_PTR_NOT_NULL(bufa);
	CU_ASSERT_PTR_NOT_NULL(bufb);
}

DROCE_TEST_MAIN("engine_loss", DROCE_TEST(test_setup), DROCE_TEST(test_rc_clean),
		DROCE_TEST(test_rc_impaired), DROCE_TEST(test_uc_impaired),
		DROCE_TEST(test_rc_ipv6))
