/* SPDX-License-Identifier: BSD-3-Clause */
/* 24-bit PSN arithmetic (IBTA 9.7.1), including the wrap at 2^24. */
#include "droce_psn.h"
#include "droce_test.h"

static void
test_psn_add_wraps(void)
{
	CU_ASSERT_EQUAL(droce_psn_add(0xFFFFFF, 1), 0);
	CU_ASSERT_EQUAL(droce_psn_add(0xFFFFFE, 5), 3);
	CU_ASSERT_EQUAL(droce_psn_add(10, 0), 10);
	CU_ASSERT_EQUAL(droce_psn_add(0, DROCE_PSN_MASK), DROCE_PSN_MASK);
}

static void
test_psn_diff_sign(void)
{
	CU_ASSERT_EQUAL(droce_psn_diff(5, 3), 2);
	CU_ASSERT_EQUAL(droce_psn_diff(3, 5), -2);
	CU_ASSERT_EQUAL(droce_psn_diff(0, 0xFFFFFF), 1);
	CU_ASSERT_EQUAL(droce_psn_diff(0xFFFFFF, 0), -1);
	/* the halfway point reads as "behind": 2^23 apart is the edge of the window */
	CU_ASSERT_EQUAL(droce_psn_diff(0, DROCE_PSN_WINDOW), -(int32_t)DROCE_PSN_WINDOW);
	CU_ASSERT_EQUAL(droce_psn_diff(DROCE_PSN_WINDOW - 1, 0), (int32_t)DROCE_PSN_WINDOW - 1);
	/* bits above 24 are ignored */
	CU_ASSERT_EQUAL(droce_psn_diff(0xFF000005, 3), 2);
}

static void
test_psn_order(void)
{
	CU_ASSERT_TRUE(droce_psn_lt(0xFFFFF0, 0x000010));
	CU_ASSERT_FALSE(droce_psn_lt(0x000010, 0xFFFFF0));
	CU_ASSERT_TRUE(droce_psn_le(7, 7));
	CU_ASSERT_FALSE(droce_psn_lt(7, 7));
}

static void
test_psn_in_range(void)
{
	CU_ASSERT_TRUE(droce_psn_in(0xFFFFFF, 0xFFFFFE, 2));
	CU_ASSERT_TRUE(droce_psn_in(1, 0xFFFFFE, 2));
	CU_ASSERT_TRUE(droce_psn_in(2, 0xFFFFFE, 2));
	CU_ASSERT_FALSE(droce_psn_in(3, 0xFFFFFE, 2));
	CU_ASSERT_FALSE(droce_psn_in(0xFFFFFD, 0xFFFFFE, 2));
}

DROCE_TEST_MAIN("psn", DROCE_TEST(test_psn_add_wraps), DROCE_TEST(test_psn_diff_sign),
		DROCE_TEST(test_psn_order), DROCE_TEST(test_psn_in_range))
