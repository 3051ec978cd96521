/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QPN ranges of a shared port (stack/droce_portd.c): slots handed out lowest first from 1, a
 * freed slot handed out again, every slot held means -ENOSPC; a DestQP maps to its slot only
 * while held; an engine device given a slot as its shard makes QPNs only inside that range.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "droce_portd.h"
#include "droce_test.h"
#include "num_dev.h"

static void
test_slots_order_and_reuse(void)
{
	struct droce_portd_slots t;
	unsigned int s;

	CU_ASSERT_EQUAL(droce_portd_slots_init(&t, 0), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slots_init(&t, DROCE_PORTD_MAX_BITS + 1), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 3), 0);
	for (s = 1; s < 8; s++)
		CU_ASSERT_EQUAL(droce_portd_slot_get(&t), (int)s);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), -ENOSPC);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 3), 0);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 3), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 0), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 8), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 5), 0);
	/* the lowest freed slot first: a dead program's range is the next one given out */
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 3);
	CU_ASSERT_EQUAL(t.gen[3], 2);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 5);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), -ENOSPC);
}

static void
test_qpn_slot(void)
{
	struct droce_portd_slots t;
	uint32_t first, last;

	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 3), 0);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 1);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 2);
	droce_portd_slot_range(&t, 2, &first, &last);
	CU_ASSERT_EQUAL(first, 0x400000);
	CU_ASSERT_EQUAL(last, 0x5FFFFF);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, first), 2);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, last), 2);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x200011), 1);
	/* QP0, QP1, multicast and slot 0 belong to no program; nor does a free slot */
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 1), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x1FFFFF), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0xFFFFFF), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x600000), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 1), 0);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x200011), -ENOENT);
}

/* An engine given slot s as its shard (what the runtime does under droce-portd) makes QPNs in
 * s's range only, across slot reuse and generations, and cannot make QP1 there. */
static void
test_engine_qpns_in_range(void)
{
	struct droce_portd_slots t;
	struct droce_qp *qps[40];
	struct num_dev n;
	uint32_t first, last;
	unsigned int i, round;
	int s, err;

	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 3), 0);
	for (round = 0; round < 3; round++) {
		s = droce_portd_slot_get(&t);
		CU_ASSERT_EQUAL_FATAL(s, 1 + (int)round);
		droce_portd_slot_range(&t, (unsigned int)s, &first, &last);
		CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 32, (uint8_t)s, t.bits, 0xFFFF0 + round), 0);
		for (i = 0; i < 40; i++) {
			qps[i] = num_qp(&n, DROCE_QPT_RC, false, &err);
			if (qps[i] == NULL)
				break;
			CU_ASSERT(droce_qp_num(qps[i]) >= first && droce_qp_num(qps[i]) <= last);
			CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, droce_qp_num(qps[i])), s);
			/* destroy every other one: a reused engine slot gets a new generation */
			if (i % 2 == 1) {
				CU_ASSERT_EQUAL(droce_qp_destroy(qps[i]), 0);
				qps[i] = NULL;
			}
		}
		CU_ASSERT(i >= 32);
		CU_ASSERT_PTR_NULL(num_qp(&n, DROCE_QPT_UD, true, &err));
		CU_ASSERT_EQUAL(err, EINVAL);
		droce_dev_destroy(n.dev);
	}
}

DROCE_TEST_MAIN("portd", DROCE_TEST(test_slots_order_and_reuse), DROCE_TEST(test_qpn_slot),
		DROCE_TEST(test_engine_qpns_in_range))
