/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transmit round robin's quantum (droce_dev_set_tx_quantum): two QPs with a 16 KiB WRITE
 * each (16 frames at path MTU 1024) leave in runs of the quantum, one QP's then the other's,
 * and the bytes land whatever the interleaving; 64 QPs of 16 WRITEs each draw an ACK per QP
 * at the default quantum, where frame by frame they drew one per WRITE. Out-of-range quanta are
 * refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "droce_ext.h"
#include "droce_test.h"
#include "engine_harness.h"

enum { MSG = 16384, FRAMES = MSG / 1024 };

static uint8_t bufa[4 * MSG], bufb[4 * MSG]; /* 2 x 16 KiB; 64 QPs x 16 x 64 B */

struct order {
	unsigned int n;
	uint32_t dqpn[4 * FRAMES];
};

/* Records the DestQP of every frame node 0 sends (all requests here). */
static bool
record(struct eh_node *from, uint8_t *f, uint32_t len, void *arg)
{
	struct order *o = arg;
	const uint8_t *bth = f + 14 + 20 + 8;

	(void)from;
	if (len > 14 + 20 + 8 + 12 && o->n < 4 * FRAMES)
		o->dqpn[o->n++] = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
	return true;
}

/* Frames of the run that starts at frame i: how many in a row go to the same QP. */
static unsigned int
run_len(const struct order *o, unsigned int i)
{
	unsigned int k = i;

	while (k < o->n && o->dqpn[k] == o->dqpn[i])
		k++;
	return k - i;
}

static void
one_quantum(unsigned int quantum)
{
	struct droce_qp *qa[2], *qb[2];
	struct droce_mr *ma, *mb;
	struct eh_qp_opts opt;
	struct eh_world w;
	struct droce_wc wc[4];
	struct order o = { 0 };
	unsigned int i, got = 0, want;
	int err = 0, n;

	eh_init(&w, 1500); /* path MTU 1024 */
	eh_opts_default(&opt);
	eh_pair(&w, DROCE_QPT_RC, &opt, qa, 4);
	eh_pair(&w, DROCE_QPT_RC, &opt, qb, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qa[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qb[0]);
	ma = droce_mr_reg(w.n[0].pd, bufa, 2 * MSG, opt.access, &err);
	mb = droce_mr_reg(w.n[1].pd, bufb, 2 * MSG, opt.access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ma);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mb);
	CU_ASSERT_EQUAL(droce_dev_set_tx_quantum(w.n[0].dev, quantum), 0);
	for (i = 0; i < 2 * MSG; i++)
		bufa[i] = (uint8_t)(i * 7 + quantum);
	memset(bufb, 0, 2 * MSG);
	w.n[0].filter = record;
	w.n[0].filter_arg = &o;
	for (i = 0; i < 2; i++) {
		struct droce_sge sge = { (uintptr_t)(bufa + i * MSG), MSG, droce_mr_lkey(ma) };

		CU_ASSERT_EQUAL(eh_post1(i == 0 ? qa[0] : qb[0], DROCE_WR_RDMA_WRITE, &sge,
					 (uintptr_t)(bufb + i * MSG), droce_mr_rkey(mb), 0, i),
				0);
	}
	eh_run(&w, 100000000ull);
	while ((n = eh_poll(&w.n[0], wc, 4)) > 0)
		for (i = 0; i < (unsigned int)n; i++)
			got += wc[i].status == DROCE_WC_SUCCESS;
	CU_ASSERT_EQUAL(got, 2);
	CU_ASSERT_EQUAL(memcmp(bufa, bufb, 2 * MSG), 0);
	/* no loss: each data frame once, in runs of the quantum until one QP has none left */
	CU_ASSERT_EQUAL_FATAL(o.n, 2 * FRAMES);
	CU_ASSERT_EQUAL(o.dqpn[0], droce_qp_num(qa[1]));
	for (i = 0; i < o.n; i += run_len(&o, i)) {
		want = quantum < FRAMES ? quantum : FRAMES;
		if (i + want > 2 * FRAMES - (FRAMES % want))
			break; /* the tail: what one QP has left */
		CU_ASSERT_EQUAL(run_len(&o, i), want);
	}
	eh_fini(&w);
}

static void
test_quanta(void)
{
	one_quantum(1);
	one_quantum(4);
	one_quantum(DROCE_TX_QUANTUM);
	one_quantum(DROCE_TX_QUANTUM_MAX);
}

/* 64 QPs with 16 64 B WRITEs each: at the default quantum a QP's WRITEs leave together and
 * draw one ACK; frame by frame each QP's WRITEs arrive among 63 others' and draw one each. */
static unsigned int
acks_for(unsigned int quantum)
{
	enum { NQ = 64, WR = 16, SZ = 64 };
	static struct droce_qp *qp[NQ][2];
	struct droce_mr *ma, *mb;
	struct eh_qp_opts opt;
	struct eh_world w;
	struct droce_wc wc[64];
	unsigned int i, k, ok = 0;
	int err = 0, n;

	eh_init_sized(&w, 1500, false, NQ + 2, 16);
	eh_opts_default(&opt);
	for (i = 0; i < NQ; i++) {
		eh_pair(&w, DROCE_QPT_RC, &opt, qp[i], WR);
		CU_ASSERT_PTR_NOT_NULL_FATAL(qp[i][0]);
	}
	ma = droce_mr_reg(w.n[0].pd, bufa, NQ * WR * SZ, opt.access, &err);
	mb = droce_mr_reg(w.n[1].pd, bufb, NQ * WR * SZ, opt.access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ma);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mb);
	CU_ASSERT_EQUAL(droce_dev_set_tx_quantum(w.n[0].dev, quantum), 0);
	for (i = 0; i < NQ * WR * SZ; i++)
		bufa[i] = (uint8_t)(i * 13 + quantum);
	memset(bufb, 0, NQ * WR * SZ);
	for (i = 0; i < NQ; i++)
		for (k = 0; k < WR; k++) {
			uint64_t off = (uint64_t)(i * WR + k) * SZ;
			struct droce_sge sge = { (uintptr_t)(bufa + off), SZ, droce_mr_lkey(ma) };

			CU_ASSERT_EQUAL(eh_post1(qp[i][0], DROCE_WR_RDMA_WRITE, &sge,
						 (uintptr_t)(bufb + off), droce_mr_rkey(mb), 0, k),
					0);
		}
	eh_run(&w, 100000000ull);
	while ((n = eh_poll(&w.n[0], wc, 64)) > 0)
		for (k = 0; k < (unsigned int)n; k++)
			ok += wc[k].status == DROCE_WC_SUCCESS;
	CU_ASSERT_EQUAL(ok, NQ * WR);
	CU_ASSERT_EQUAL(memcmp(bufa, bufb, NQ * WR * SZ), 0);
	CU_ASSERT_EQUAL(w.n[0].sent, NQ * WR); /* no resend */
	n = (int)w.n[1].sent;		       /* the responder sends ACKs only */
	eh_fini(&w);
	return (unsigned int)n;
}

static void
test_acks(void)
{
	unsigned int quantum = acks_for(DROCE_TX_QUANTUM), frame = acks_for(1);

	CU_ASSERT(quantum <= 64 * 16 / 8);
	CU_ASSERT(frame >= 64 * 16 / 2);
	if (quantum > 64 * 16 / 8 || frame < 64 * 16 / 2)
		printf("ACKs for 1024 WRITEs over 64 QPs: %u at the default quantum, %u at 1\n",
		       quantum, frame);
}

static void
test_limits(void)
{
	struct eh_world w;

	eh_init(&w, 1500);
	CU_ASSERT_EQUAL(droce_dev_set_tx_quantum(w.n[0].dev, 0), -EINVAL);
	CU_ASSERT_EQUAL(droce_dev_set_tx_quantum(w.n[0].dev, DROCE_TX_QUANTUM_MAX + 1), -EINVAL);
	CU_ASSERT_EQUAL(droce_dev_set_tx_quantum(NULL, 1), -EINVAL);
	CU_ASSERT_EQUAL(droce_dev_set_tx_quantum(w.n[0].dev, 1), 0);
	eh_fini(&w);
}

DROCE_TEST_MAIN("tx_quantum", DROCE_TEST(test_quanta), DROCE_TEST(test_acks),
		DROCE_TEST(test_limits))
