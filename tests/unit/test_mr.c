/* SPDX-License-Identifier: BSD-3-Clause */
/* PD and MR: access flag rules, key distinctness, bounds with 64-bit overflow, PD checks. */
#include "droce_internal.h"
#include "droce_test.h"
#include "engine_harness.h"

static uint8_t buf[8192];

static void
test_reg_rules(void)
{
	struct eh_world w;
	int err = 0;

	eh_init(&w, 1500);
	/* IBTA 10.6.3.1: remote write / atomic need local write */
	CU_ASSERT_PTR_NULL(
		droce_mr_reg(w.n[0].pd, buf, sizeof(buf), DROCE_ACCESS_REMOTE_WRITE, &err));
	CU_ASSERT_EQUAL(err, EINVAL);
	CU_ASSERT_PTR_NULL(
		droce_mr_reg(w.n[0].pd, buf, sizeof(buf), DROCE_ACCESS_REMOTE_ATOMIC, &err));
	CU_ASSERT_PTR_NULL(droce_mr_reg(w.n[0].pd, buf, sizeof(buf), 1u << 7, &err));
	CU_ASSERT_PTR_NULL(droce_mr_reg(w.n[0].pd, (void *)(uintptr_t)(UINTPTR_MAX - 10), 100,
					DROCE_ACCESS_LOCAL_WRITE, &err));
	CU_ASSERT_PTR_NOT_NULL(
		droce_mr_reg(w.n[0].pd, buf, sizeof(buf), DROCE_ACCESS_REMOTE_READ, &err));
	/* a PD with an MR cannot go */
	CU_ASSERT_EQUAL(droce_pd_dealloc(w.n[0].pd), -EBUSY);
	eh_fini(&w);
}

static void
test_keys_distinct(void)
{
	struct eh_world w;
	struct droce_mr *mr[40];
	unsigned int i, j;
	int err = 0;

	eh_init(&w, 1500);
	for (i = 0; i < 40; i++) {
		mr[i] = droce_mr_reg(w.n[0].pd, buf, sizeof(buf), DROCE_ACCESS_LOCAL_WRITE, &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mr[i]);
		CU_ASSERT_NOT_EQUAL(droce_mr_lkey(mr[i]), droce_mr_rkey(mr[i]));
	}
	for (i = 0; i < 40; i++)
		for (j = i + 1; j < 40; j++) {
			CU_ASSERT_NOT_EQUAL(droce_mr_rkey(mr[i]), droce_mr_rkey(mr[j]));
			CU_ASSERT_NOT_EQUAL(droce_mr_lkey(mr[i]), droce_mr_lkey(mr[j]));
		}
	/* keys are not a counter: consecutive rkeys differ in their high bits */
	CU_ASSERT_NOT_EQUAL(droce_mr_rkey(mr[1]) >> 8, droce_mr_rkey(mr[2]) >> 8);
	/* a slot reused after dereg gets new keys: the old rkey no longer works */
	{
		uint32_t old = droce_mr_rkey(mr[5]);
		struct droce_mr *again;

		CU_ASSERT_EQUAL(droce_mr_dereg(mr[5]), 0);
		CU_ASSERT_EQUAL(droce_mr_dereg(mr[5]), -EINVAL);
		again = droce_mr_reg(w.n[0].pd, buf, sizeof(buf), DROCE_ACCESS_LOCAL_WRITE, &err);
		CU_ASSERT_PTR_EQUAL(again, mr[5]);
		CU_ASSERT_NOT_EQUAL(droce_mr_rkey(again), old);
	}
	eh_fini(&w);
}

/* The remote checks (IBTA C9-86..88): key, PD, access on MR and QP, bounds without overflow. */
static void
test_remote_checks(void)
{
	struct eh_world w;
	struct droce_qp *qp[2];
	struct eh_qp_opts o;
	struct droce_mr *mr, *ro, *other;
	struct droce_pd *pd2;
	uintptr_t b = (uintptr_t)buf;
	uint32_t k;
	int err = 0;

	eh_init(&w, 1500);
	eh_opts_default(&o);
	o.access = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ; /* no atomics */
	eh_pair(&w, DROCE_QPT_RC, &o, qp, 4);
	mr = droce_mr_reg(w.n[0].pd, buf + 16, 4096,
			  DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				  DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC,
			  &err);
	ro = droce_mr_reg(w.n[0].pd, buf, 64, DROCE_ACCESS_REMOTE_READ, &err);
	pd2 = droce_pd_alloc(w.n[0].dev, &err);
	other = droce_mr_reg(pd2, buf, 64, DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE,
			     &err);
	k = droce_mr_rkey(mr);
	CU_ASSERT_PTR_NOT_NULL(
		droce_mr_check_remote(qp[0], k, b + 16, 4096, DROCE_ACCESS_REMOTE_WRITE));
	CU_ASSERT_PTR_NOT_NULL(
		droce_mr_check_remote(qp[0], k, b + 16 + 4095, 1, DROCE_ACCESS_REMOTE_READ));
	CU_ASSERT_PTR_NOT_NULL(
		droce_mr_check_remote(qp[0], k, b + 16 + 4096, 0, DROCE_ACCESS_REMOTE_READ));
	/* bounds */
	CU_ASSERT_PTR_NULL(droce_mr_check_remote(qp[0], k, b + 15, 4, DROCE_ACCESS_REMOTE_WRITE));
	CU_ASSERT_PTR_NULL(
		droce_mr_check_remote(qp[0], k, b + 16, 4097, DROCE_ACCESS_REMOTE_WRITE));
	CU_ASSERT_PTR_NULL(
		droce_mr_check_remote(qp[0], k, b + 17, 4096, DROCE_ACCESS_REMOTE_WRITE));
	/* va + len wraps the 64-bit space */
	CU_ASSERT_PTR_NULL(droce_mr_check_remote(qp[0], k, b + 100, UINT64_MAX - 50,
						 DROCE_ACCESS_REMOTE_WRITE));
	CU_ASSERT_PTR_NULL(
		droce_mr_check_remote(qp[0], k, UINT64_MAX - 2, 8, DROCE_ACCESS_REMOTE_WRITE));
	/* key: the lkey is not an rkey, a flipped bit is nothing */
	CU_ASSERT_PTR_NULL(droce_mr_check_remote(qp[0], droce_mr_lkey(mr), b + 16, 4,
						 DROCE_ACCESS_REMOTE_WRITE));
	CU_ASSERT_PTR_NULL(droce_mr_check_remote(qp[0], k ^ 0x80000000u, b + 16, 4,
						 DROCE_ACCESS_REMOTE_WRITE));
	/* access on the MR */
	CU_ASSERT_PTR_NULL(
		droce_mr_check_remote(qp[0], droce_mr_rkey(ro), b, 8, DROCE_ACCESS_REMOTE_WRITE));
	CU_ASSERT_PTR_NOT_NULL(
		droce_mr_check_remote(qp[0], droce_mr_rkey(ro), b, 8, DROCE_ACCESS_REMOTE_READ));
	/* access on the QP: this QP does not allow atomics although the MR does */
	CU_ASSERT_PTR_NULL(droce_mr_check_remote(qp[0], k, b + 16, 8, DROCE_ACCESS_REMOTE_ATOMIC));
	/* PD: an MR of another PD */
	CU_ASSERT_PTR_NULL(droce_mr_check_remote(qp[0], droce_mr_rkey(other), b, 8,
						 DROCE_ACCESS_REMOTE_WRITE));
	/* deregistered */
	droce_mr_dereg(mr);
	CU_ASSERT_PTR_NULL(droce_mr_check_remote(qp[0], k, b + 16, 4, DROCE_ACCESS_REMOTE_WRITE));
	eh_fini(&w);
}

static void
test_local_checks(void)
{
	struct eh_world w;
	struct droce_mr *mr, *ro;
	struct droce_pd *pd2;
	struct droce_sge s;
	int err = 0;

	eh_init(&w, 1500);
	mr = droce_mr_reg(w.n[0].pd, buf, 1024, DROCE_ACCESS_LOCAL_WRITE, &err);
	ro = droce_mr_reg(w.n[0].pd, buf, 1024, 0, &err);
	pd2 = droce_pd_alloc(w.n[0].dev, &err);
	s.addr = (uintptr_t)buf + 1000;
	s.length = 24;
	s.lkey = droce_mr_lkey(mr);
	CU_ASSERT_EQUAL(droce_mr_check_local(w.n[0].pd, &s, DROCE_ACCESS_LOCAL_WRITE), 0);
	CU_ASSERT_EQUAL(droce_mr_check_local(pd2, &s, 0), -EACCES);
	s.length = 25;
	CU_ASSERT_EQUAL(droce_mr_check_local(w.n[0].pd, &s, 0), -EACCES);
	s.length = 8;
	s.lkey = droce_mr_lkey(ro);
	CU_ASSERT_EQUAL(droce_mr_check_local(w.n[0].pd, &s, 0), 0);
	CU_ASSERT_EQUAL(droce_mr_check_local(w.n[0].pd, &s, DROCE_ACCESS_LOCAL_WRITE), -EACCES);
	s.lkey = droce_mr_rkey(mr);
	CU_ASSERT_EQUAL(droce_mr_check_local(w.n[0].pd, &s, 0), -EACCES);
	eh_fini(&w);
}

DROCE_TEST_MAIN("mr", DROCE_TEST(test_reg_rules), DROCE_TEST(test_keys_distinct),
		DROCE_TEST(test_remote_checks), DROCE_TEST(test_local_checks))
