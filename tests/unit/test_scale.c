/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's tables at scale: 16384 connected RC QP pairs, each found by its QPN's slot (the
 * QP table and the per-slot receive ICRC state) with 64 B WRITEs round robin over all of them,
 * twice, every byte landed where its QP aimed it; a corrupted frame to a QP whose ICRC state is
 * warm is dropped as ICRC. Then 100000 MRs at the target, WRITEs to random ones by rkey, a
 * deregistered key refused (IBTA 9.7.4.1.5: R_Key violation, NAK remote access error).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_drop.h"
#include "droce_test.h"
#include "engine_harness.h"

enum { NQP = 16384, NMR = 100000, MSG = 64, BATCH = 512 };

static struct eh_world W;
static struct droce_qp *qa[NQP], *qb[NQP];

static uint64_t
xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Flips one payload byte of the next data frame to DestQP *arg (then stops). */
static bool
corrupt_one(struct eh_node *from, uint8_t *f, uint32_t len, void *arg)
{
	uint32_t *dqpn = arg, bth = 14 + 20 + 8;
	uint32_t q = (uint32_t)f[bth + 5] << 16 | (uint32_t)f[bth + 6] << 8 | f[bth + 7];

	(void)from;
	if (*dqpn != 0 && q == *dqpn && len > bth + 12 + 16 + MSG) {
		f[len - 4 - MSG / 2] ^= 0x40;
		*dqpn = 0;
	}
	return true;
}

/* Each QP of [0, n) posts one 64 B WRITE of its own byte pattern into its slot of dst. */
static unsigned int
write_round(struct droce_qp **qp, unsigned int n, struct droce_mr *src, uint8_t *sbuf,
	    struct droce_mr *dst, uint8_t *dbuf, uint8_t tag)
{
	struct droce_wc wc[BATCH];
	unsigned int i, b, ok = 0;
	int k, got;

	for (b = 0; b < n; b += BATCH) {
		for (i = b; i < n && i < b + BATCH; i++) {
			struct droce_sge sge = { (uintptr_t)(sbuf + (uint64_t)i * MSG), MSG,
						 droce_mr_lkey(src) };

			memset(sbuf + (uint64_t)i * MSG, (uint8_t)(i ^ tag), MSG);
			CU_ASSERT_EQUAL_FATAL(eh_post1(qp[i], DROCE_WR_RDMA_WRITE, &sge,
						       (uintptr_t)(dbuf + (uint64_t)i * MSG),
						       droce_mr_rkey(dst), 0, i),
					      0);
		}
		eh_run(&W, 1000000000); /* returns once idle; a resend waits for its timer */
		got = 0;
		while ((k = eh_poll(&W.n[0], wc, BATCH)) > 0) {
			for (int j = 0; j < k; j++)
				ok += wc[j].status == DROCE_WC_SUCCESS;
			got += k;
		}
		CU_ASSERT_EQUAL(got, (int)(i - b));
	}
	for (i = 0; i < n; i++) {
		uint8_t want[MSG];

		memset(want, (uint8_t)(i ^ tag), MSG);
		if (memcmp(dbuf + (uint64_t)i * MSG, want, MSG) != 0) {
			CU_FAIL("a WRITE landed wrong");
			break;
		}
	}
	return ok;
}

static void
test_16k_qps(void)
{
	struct eh_qp_opts o;
	uint8_t *sbuf = calloc(NQP, MSG), *dbuf = calloc(NQP, MSG);
	struct droce_mr *src, *dst;
	uint32_t victim;
	unsigned int i;
	int err = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sbuf);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dbuf);
	eh_init_sized(&W, 1500, false, NQP, 64);
	eh_opts_default(&o);
	for (i = 0; i < NQP; i++) {
		struct droce_qp *p[2] = { NULL, NULL };

		eh_pair(&W, DROCE_QPT_RC, &o, p, 2);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p[0]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p[1]);
		qa[i] = p[0];
		qb[i] = p[1];
	}
	src = droce_mr_reg(W.n[0].pd, sbuf, (size_t)NQP * MSG, DROCE_ACCESS_LOCAL_WRITE, &err);
	dst = droce_mr_reg(W.n[1].pd, dbuf, (size_t)NQP * MSG,
			   DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
	CU_ASSERT_EQUAL(write_round(qa, NQP, src, sbuf, dst, dbuf, 0x00), NQP);
	CU_ASSERT_EQUAL(write_round(qa, NQP, src, sbuf, dst, dbuf, 0x5a), NQP);
	/* the last QP's receive ICRC state is warm: a flipped payload byte must still be caught */
	victim = droce_qp_num(qb[NQP - 1]);
	W.n[0].filter = corrupt_one;
	W.n[0].filter_arg = &victim;
	CU_ASSERT_EQUAL(write_round(qa + NQP - 1, 1, src, sbuf + (uint64_t)(NQP - 1) * MSG, dst,
				    dbuf + (uint64_t)(NQP - 1) * MSG, 0x33),
			1); /* dropped once, resent by the requester's timer */
	CU_ASSERT_EQUAL(victim, 0);
	CU_ASSERT(droce_dev_drops(W.n[1].dev, DROCE_DROP_ICRC) >= 1);
	W.n[0].filter = NULL;
	for (i = 0; i < NQP; i++) {
		CU_ASSERT_EQUAL(droce_qp_destroy(qa[i]), 0);
		CU_ASSERT_EQUAL(droce_qp_destroy(qb[i]), 0);
	}
	droce_mr_dereg(src);
	droce_mr_dereg(dst);
	eh_fini(&W);
	free(sbuf);
	free(dbuf);
}

static void
test_100k_mrs(void)
{
	static struct droce_mr *mr[NMR];
	uint8_t *tbuf = calloc(NMR, MSG), sbuf[MSG];
	struct droce_qp *p[2] = { NULL, NULL };
	struct droce_mr *src;
	struct droce_wc wc;
	struct eh_qp_opts o;
	uint64_t rng = 7;
	unsigned int i, k, bad = 0;
	int err = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(tbuf);
	eh_init_sized(&W, 1500, false, 16, NMR + 1);
	eh_opts_default(&o);
	o.retry_cnt = 0;
	eh_pair(&W, DROCE_QPT_RC, &o, p, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p[0]);
	for (i = 0; i < NMR; i++) {
		mr[i] = droce_mr_reg(W.n[1].pd, tbuf + (uint64_t)i * MSG, MSG,
				     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mr[i]);
	}
	src = droce_mr_reg(W.n[0].pd, sbuf, MSG, DROCE_ACCESS_LOCAL_WRITE, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	for (k = 0; k < 2000; k++) {
		struct droce_sge sge = { (uintptr_t)sbuf, MSG, droce_mr_lkey(src) };

		i = (unsigned int)(xs(&rng) % NMR);
		memset(sbuf, (uint8_t)(k + 1), MSG);
		CU_ASSERT_EQUAL_FATAL(eh_post1(p[0], DROCE_WR_RDMA_WRITE, &sge,
					       (uintptr_t)(tbuf + (uint64_t)i * MSG),
					       droce_mr_rkey(mr[i]), 0, k),
				      0);
		eh_run(&W, 10000000);
		if (eh_poll(&W.n[0], &wc, 1) != 1 || wc.status != DROCE_WC_SUCCESS ||
		    tbuf[(uint64_t)i * MSG] != (uint8_t)(k + 1) ||
		    tbuf[(uint64_t)i * MSG + MSG - 1] != (uint8_t)(k + 1))
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	/* a key gone: the responder refuses it, the requester's WR ends in error */
	{
		struct droce_sge sge = { (uintptr_t)sbuf, MSG, droce_mr_lkey(src) };
		uint32_t rkey = droce_mr_rkey(mr[NMR / 2]);

		CU_ASSERT_EQUAL(droce_mr_dereg(mr[NMR / 2]), 0);
		mr[NMR / 2] = NULL;
		CU_ASSERT_EQUAL(eh_post1(p[0], DROCE_WR_RDMA_WRITE, &sge,
					 (uintptr_t)(tbuf + (uint64_t)(NMR / 2) * MSG), rkey, 0, 9),
				0);
		eh_run(&W, 10000000);
		CU_ASSERT_EQUAL(eh_poll(&W.n[0], &wc, 1), 1);
		CU_ASSERT_EQUAL(wc.status, DROCE_WC_REM_ACCESS_ERR);
	}
	droce_qp_destroy(p[0]);
	droce_qp_destroy(p[1]);
	for (i = 0; i < NMR; i++)
		if (mr[i] != NULL)
			droce_mr_dereg(mr[i]);
	droce_mr_dereg(src);
	eh_fini(&W);
	free(tbuf);
}

DROCE_TEST_MAIN("scale", DROCE_TEST(test_16k_qps), DROCE_TEST(test_100k_mrs))
