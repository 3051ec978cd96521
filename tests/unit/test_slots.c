/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Object slots (droce_slots.c): the pool hands out the lowest free slot, as a scan of the table
 * from the bottom would, over random takes and gives back, for pools of one to four bitmap
 * levels; a device's QPs, MRs and CQs stop at their max_* and reuse the lowest freed slot.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_test.h"

static uint64_t
xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Against a model: an array of flags scanned from lo. */
static void
check_pool(uint32_t lo, uint32_t hi, uint64_t seed, unsigned int steps)
{
	struct droce_slots s;
	uint8_t *taken = calloc(hi + 1, 1);
	uint64_t rng = seed;
	unsigned int k, bad = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(taken);
	CU_ASSERT_EQUAL_FATAL(droce_slots_init(&s, lo, hi), 0);
	for (k = 0; k < steps; k++) {
		bool take = xs(&rng) % 3 != 0; /* fill up more than drain: reach full pools too */

		if (take) {
			int64_t want = -1, got;
			uint32_t i;

			for (i = lo; i < hi; i++)
				if (!taken[i]) {
					want = i;
					break;
				}
			got = droce_slots_take(&s);
			if (got != want)
				bad++;
			if (got >= 0 && got < hi)
				taken[got] = 1;
		} else {
			uint32_t i = lo + (uint32_t)(xs(&rng) % (hi - lo));

			if (taken[i]) {
				droce_slots_put(&s, i);
				taken[i] = 0;
			}
		}
	}
	if (bad != 0)
		fprintf(stderr, "slots [%u, %u) seed %llu: %u takes differ from the scan\n", lo, hi,
			(unsigned long long)seed, bad);
	CU_ASSERT_EQUAL(bad, 0);
	/* the walk over taken slots finds exactly the model's, in order, from any start */
	{
		uint32_t from = lo > 0 ? lo - 1 : 0, i;
		int64_t got = droce_slots_next_taken(&s, from);

		for (i = from; i < hi; i++) {
			if (!taken[i] || i < lo)
				continue;
			if (got != i) {
				bad++;
				break;
			}
			got = droce_slots_next_taken(&s, i + 1);
		}
		if (got != -1 && bad == 0)
			bad++;
		CU_ASSERT_EQUAL(bad, 0);
		CU_ASSERT_EQUAL(droce_slots_next_taken(&s, hi), -1);
	}
	droce_slots_fini(&s);
	free(taken);
}

static void
test_pool_model(void)
{
	check_pool(0, 1, 1, 50);
	check_pool(2, 5, 2, 200);
	check_pool(1, 64, 3, 2000);
	check_pool(1, 65, 4, 2000);
	check_pool(2, 4099, 5, 30000);	 /* two levels */
	check_pool(1, 300000, 6, 20000); /* three */
}

static void
test_pool_full_and_limits(void)
{
	struct droce_slots s;
	uint32_t i;

	CU_ASSERT_EQUAL_FATAL(droce_slots_init(&s, 2, 262146), 0); /* four levels */
	for (i = 2; i < 262146; i++)
		if (droce_slots_take(&s) != i)
			break;
	CU_ASSERT_EQUAL(i, 262146);
	CU_ASSERT_EQUAL(droce_slots_take(&s), -1);
	droce_slots_put(&s, 200000);
	droce_slots_put(&s, 70);
	droce_slots_put(&s, 1); /* below lo: not pooled */
	CU_ASSERT_EQUAL(droce_slots_take(&s), 70);
	CU_ASSERT_EQUAL(droce_slots_take(&s), 200000);
	CU_ASSERT_EQUAL(droce_slots_take(&s), -1);
	droce_slots_fini(&s);
	CU_ASSERT_EQUAL(droce_slots_init(&s, 0, (1u << 24) + 1), -EINVAL);
}

static uint8_t frame[2048];

static uint8_t *
t_alloc(void *ctx, uint32_t len, void **cookie)
{
	(void)ctx;
	(void)len;
	*cookie = frame;
	return frame;
}

static void
t_send(void *ctx, void *cookie, uint32_t len)
{
	(void)ctx;
	(void)cookie;
	(void)len;
}

static uint64_t
t_rand(void *ctx)
{
	return xs(ctx);
}

static void
test_device_objects(void)
{
	static struct droce_qp *qp[301];
	static struct droce_mr *mr[101];
	uint64_t rng = 77;
	struct droce_io io = { t_alloc, t_send, t_rand, &rng };
	struct droce_dev_attr a;
	struct droce_qp_init_attr ia;
	struct droce_dev *dev;
	struct droce_pd *pd;
	struct droce_cq *cq, *cq2;
	uint32_t i, slot;
	uint8_t buf[64];
	int e = 0;

	memset(&a, 0, sizeof(a));
	a.mac[0] = 2;
	droce_gid_from_v4(a.gids[0], 0xC6120001u);
	a.num_gids = 1;
	a.max_qp = 300;
	a.max_mr = 100;
	a.max_cq = 2;
	a.max_pd = a.max_srq = a.max_ah = 1;
	dev = droce_dev_create(&a, &io, &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	pd = droce_pd_alloc(dev, &e);
	cq = droce_cq_create(dev, 16, NULL, &e);
	cq2 = droce_cq_create(dev, 16, NULL, &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cq2);
	CU_ASSERT_PTR_NULL(droce_cq_create(dev, 16, NULL, &e));
	CU_ASSERT_EQUAL(e, ENOMEM);
	CU_ASSERT_EQUAL(droce_cq_destroy(cq2), 0);
	CU_ASSERT_PTR_EQUAL(droce_cq_create(dev, 16, NULL, &e), cq2); /* the freed slot */
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.send_cq = ia.recv_cq = cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	for (i = 0; i < 300; i++) {
		qp[i] = droce_qp_create(pd, &ia, &e);
		CU_ASSERT_PTR_NOT_NULL_FATAL(qp[i]);
		/* slots 2, 3, ... in creation order (QPN 0 and 1 are the special QPs) */
		CU_ASSERT_EQUAL(droce_qp_num(qp[i]) & dev->qp_mask, i + 2);
	}
	CU_ASSERT_PTR_NULL(droce_qp_create(pd, &ia, &e));
	CU_ASSERT_EQUAL(e, ENOMEM);
	slot = droce_qp_num(qp[7]) & dev->qp_mask;
	CU_ASSERT_EQUAL(droce_qp_destroy(qp[200]), 0);
	CU_ASSERT_EQUAL(droce_qp_destroy(qp[7]), 0);
	qp[7] = droce_qp_create(pd, &ia, &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp[7]);
	CU_ASSERT_EQUAL(droce_qp_num(qp[7]) & dev->qp_mask, slot);
	qp[200] = droce_qp_create(pd, &ia, &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp[200]);
	CU_ASSERT_EQUAL(droce_qp_num(qp[200]) & dev->qp_mask, 202);
	CU_ASSERT_PTR_NULL(droce_qp_create(pd, &ia, &e));
	for (i = 0; i < 100; i++) {
		mr[i] = droce_mr_reg(pd, buf, sizeof(buf), DROCE_ACCESS_LOCAL_WRITE, &e);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mr[i]);
		CU_ASSERT_EQUAL(droce_mr_lkey(mr[i]) & dev->mr_mask, i + 1);
	}
	CU_ASSERT_PTR_NULL(droce_mr_reg(pd, buf, sizeof(buf), DROCE_ACCESS_LOCAL_WRITE, &e));
	CU_ASSERT_EQUAL(droce_mr_dereg(mr[41]), 0);
	mr[41] = droce_mr_reg(pd, buf, sizeof(buf), DROCE_ACCESS_LOCAL_WRITE, &e);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mr[41]);
	CU_ASSERT_EQUAL(droce_mr_lkey(mr[41]) & dev->mr_mask, 42);
	droce_dev_destroy(dev);
}

DROCE_TEST_MAIN("slots", DROCE_TEST(test_pool_model), DROCE_TEST(test_pool_full_and_limits),
		DROCE_TEST(test_device_objects))
