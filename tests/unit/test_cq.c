/* SPDX-License-Identifier: BSD-3-Clause */
/* CQ: ring order and wrap, resize, overflow (error event, -EOVERFLOW, nothing overwritten),
 * arming. */
#include "droce_internal.h"
#include "droce_test.h"
#include "engine_harness.h"

static void
push(struct droce_cq *cq, uint64_t id, enum droce_wc_status st, bool sol)
{
	struct droce_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = id;
	wc.status = st;
	droce_cq_push(cq, &wc, sol);
}

static void
test_order_and_wrap(void)
{
	struct eh_world w;
	struct droce_cq *cq;
	struct droce_wc wc[8];
	uint64_t next = 0, id = 0;
	int err = 0, i, r;

	eh_init(&w, 1500);
	CU_ASSERT_PTR_NULL(droce_cq_create(w.n[0].dev, 0, NULL, &err));
	CU_ASSERT_EQUAL(err, EINVAL);
	cq = droce_cq_create(w.n[0].dev, 5, NULL, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cq);
	for (i = 0; i < 40; i++) {
		int j;

		push(cq, id++, DROCE_WC_SUCCESS, false);
		push(cq, id++, DROCE_WC_SUCCESS, false);
		r = droce_cq_poll(cq, 3, wc);
		CU_ASSERT_TRUE(r >= 1 && r <= 3);
		for (j = 0; j < r; j++)
			CU_ASSERT_EQUAL(wc[j].wr_id, next++);
	}
	while ((r = droce_cq_poll(cq, 8, wc)) > 0)
		for (i = 0; i < r; i++)
			CU_ASSERT_EQUAL(wc[i].wr_id, next++);
	CU_ASSERT_EQUAL(next, id);
	for (i = 0; i < 5; i++)
		push(cq, 100 + i, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_poll(cq, 8, wc), 5);
	for (i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(wc[i].wr_id, 100 + (uint64_t)i);
	eh_fini(&w);
}

static void
test_overflow(void)
{
	struct eh_world w;
	struct droce_cq *cq;
	struct droce_wc wc[8];
	struct droce_async_event ev;
	int err = 0, i;

	eh_init(&w, 1500);
	cq = droce_cq_create(w.n[0].dev, 4, NULL, &err);
	for (i = 0; i < 4; i++)
		push(cq, i, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_dev_get_async_event(w.n[0].dev, &ev), -EAGAIN);
	push(cq, 99, DROCE_WC_SUCCESS, false); /* one too many */
	CU_ASSERT_EQUAL(droce_dev_get_async_event(w.n[0].dev, &ev), 0);
	CU_ASSERT_EQUAL(ev.type, DROCE_EVENT_CQ_ERR);
	CU_ASSERT_PTR_EQUAL(ev.element.cq, cq);
	CU_ASSERT_EQUAL(droce_cq_poll(cq, 8, wc), -EOVERFLOW);
	push(cq, 100, DROCE_WC_SUCCESS, false); /* no second event, no write */
	CU_ASSERT_EQUAL(droce_dev_get_async_event(w.n[0].dev, &ev), -EAGAIN);
	CU_ASSERT_EQUAL(cq->count, 4);
	CU_ASSERT_EQUAL(cq->ring[0].wr_id, 0);
	CU_ASSERT_EQUAL(cq->ring[3].wr_id, 3);
	eh_fini(&w);
}

static void
test_notify(void)
{
	struct eh_world w;
	struct droce_cq *cq;
	int err = 0;

	eh_init(&w, 1500);
	cq = droce_cq_create(w.n[0].dev, 64, NULL, &err);
	push(cq, 1, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_events(cq), 0); /* not armed */
	droce_cq_req_notify(cq, false);
	push(cq, 2, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_events(cq), 1);
	push(cq, 3, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_events(cq), 1); /* one event per arming */
	droce_cq_req_notify(cq, true);
	push(cq, 4, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_events(cq), 1); /* not solicited */
	push(cq, 5, DROCE_WC_SUCCESS, true);
	CU_ASSERT_EQUAL(droce_cq_events(cq), 2);
	droce_cq_req_notify(cq, true);
	push(cq, 6, DROCE_WC_REM_ACCESS_ERR, false); /* errors always notify */
	CU_ASSERT_EQUAL(droce_cq_events(cq), 3);
	eh_fini(&w);
}

static void
test_destroy_busy(void)
{
	struct eh_world w;

	eh_init(&w, 1500);
	{
		struct droce_qp *qp[2];
		struct eh_qp_opts o;

		eh_opts_default(&o);
		eh_pair(&w, DROCE_QPT_RC, &o, qp, 4);
		CU_ASSERT_EQUAL(droce_cq_destroy(w.n[0].cq), -EBUSY);
		CU_ASSERT_EQUAL(droce_qp_destroy(qp[0]), 0);
		CU_ASSERT_EQUAL(droce_cq_destroy(w.n[0].cq), 0);
	}
	eh_fini(&w);
}

/* Resize keeps the waiting completions in order across the old ring's wrap, refuses a size
 * below them, and the new size is exact: a full ring of the new size overflows on one more. */
static void
test_resize(void)
{
	struct eh_world w;
	struct droce_cq *cq;
	struct droce_wc wc[16];
	int err = 0, i;

	eh_init(&w, 1500);
	cq = droce_cq_create(w.n[0].dev, 4, NULL, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cq);
	for (i = 0; i < 3; i++)
		push(cq, (uint64_t)i, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_poll(cq, 2, wc), 2);
	for (i = 3; i < 6; i++) /* 2..5 wait, wrapped round the 4 slots */
		push(cq, (uint64_t)i, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_resize(cq, 3), -EINVAL);
	CU_ASSERT_EQUAL(droce_cq_resize(cq, 0), -EINVAL);
	CU_ASSERT_EQUAL(droce_cq_resize(cq, (1u << 22) + 1),
			-EINVAL); /* droce_cq.c: DROCE_MAX_CQE */
	CU_ASSERT_EQUAL(droce_cq_resize(cq, 10), 0);
	for (i = 6; i < 12; i++)
		push(cq, (uint64_t)i, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL_FATAL(droce_cq_poll(cq, 16, wc), 10);
	for (i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(wc[i].wr_id, 2 + (uint64_t)i);
	/* shrink to exactly what waits, then one more overflows */
	for (i = 0; i < 3; i++)
		push(cq, 20 + (uint64_t)i, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_resize(cq, 3), 0);
	CU_ASSERT_EQUAL(droce_cq_poll(cq, 1, wc), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 20);
	push(cq, 23, DROCE_WC_SUCCESS, false);
	push(cq, 24, DROCE_WC_SUCCESS, false);
	CU_ASSERT_EQUAL(droce_cq_poll(cq, 16, wc), -EOVERFLOW);
	eh_fini(&w);
}

DROCE_TEST_MAIN("cq", DROCE_TEST(test_order_and_wrap), DROCE_TEST(test_resize),
		DROCE_TEST(test_overflow), DROCE_TEST(test_notify), DROCE_TEST(test_destroy_busy))
