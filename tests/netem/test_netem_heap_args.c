/* SPDX-License-Identifier: BSD-3-Clause */
/* The held-frame heap (order, ties, bound) and the droce-netem command line. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "droce_test.h"
#include "netem_args.h"
#include "netem_heap.h"
#include "netem_rng.h"

#define CAP 1000

static void
test_heap_sorted_fifo_bounded(void)
{
	static struct droce_netem_held store[CAP];
	static uintptr_t tag[CAP];
	struct droce_netem_heap h;
	struct droce_netem_rng r;
	uint64_t when[CAP], prev_when = 0;
	uintptr_t prev_tag = 0, t;
	uint32_t i, popped = 0, bad = 0;

	droce_netem_rng_seed(&r, 3);
	droce_netem_heap_init(&h, store, CAP);
	CU_ASSERT_EQUAL(droce_netem_heap_next(&h), UINT64_MAX);
	for (i = 0; i < CAP; i++) {
		when[i] = droce_netem_rng_below(&r, 50); /* many ties */
		tag[i] = i + 1;
		CU_ASSERT_EQUAL(droce_netem_heap_push(&h, when[i], (void *)tag[i]), 0);
	}
	CU_ASSERT_EQUAL(droce_netem_heap_push(&h, 0, (void *)1), -ENOSPC);
	while ((t = (uintptr_t)droce_netem_heap_pop_due(&h, UINT64_MAX)) != 0) {
		/* Non-decreasing times; equal times in push order. */
		bad += when[t - 1] < prev_when || (when[t - 1] == prev_when && t < prev_tag);
		prev_when = when[t - 1];
		prev_tag = t;
		popped++;
	}
	CU_ASSERT_EQUAL(popped, CAP);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(h.len, 0);
}

static void
test_heap_not_due(void)
{
	struct droce_netem_held store[4];
	struct droce_netem_heap h;
	int a, b;

	droce_netem_heap_init(&h, store, 4);
	droce_netem_heap_push(&h, 100, &a);
	droce_netem_heap_push(&h, 50, &b);
	CU_ASSERT_PTR_NULL(droce_netem_heap_pop_due(&h, 49));
	CU_ASSERT_EQUAL(droce_netem_heap_next(&h), 50);
	CU_ASSERT_PTR_EQUAL(droce_netem_heap_pop_due(&h, 50), &b);
	CU_ASSERT_PTR_NULL(droce_netem_heap_pop_due(&h, 99));
	CU_ASSERT_PTR_EQUAL(droce_netem_heap_pop_due(&h, 1000), &a);
	CU_ASSERT_PTR_NULL(droce_netem_heap_pop_due(&h, 1000));
}

static void
test_value_parsers(void)
{
	uint64_t v;
	double p;

	CU_ASSERT(droce_netem_parse_time("100us", &v) == 0 && v == 100000);
	CU_ASSERT(droce_netem_parse_time("1.5ms", &v) == 0 && v == 1500000);
	CU_ASSERT(droce_netem_parse_time("2s", &v) == 0 && v == 2000000000ull);
	CU_ASSERT(droce_netem_parse_time("10ns", &v) == 0 && v == 10);
	CU_ASSERT_EQUAL(droce_netem_parse_time("100", &v), -EINVAL);
	CU_ASSERT_EQUAL(droce_netem_parse_time("-1us", &v), -EINVAL);
	CU_ASSERT_EQUAL(droce_netem_parse_time("1 hour", &v), -EINVAL);
	CU_ASSERT(droce_netem_parse_prob("5%", &p) == 0 && p > 0.0499 && p < 0.0501);
	CU_ASSERT(droce_netem_parse_prob("0.25", &p) == 0 && p == 0.25);
	CU_ASSERT_EQUAL(droce_netem_parse_prob("5", &p), -EINVAL);
	CU_ASSERT_EQUAL(droce_netem_parse_prob("101%", &p), -EINVAL);
	CU_ASSERT(droce_netem_parse_rate("10gbit", &v) == 0 && v == 10000000000ull);
	CU_ASSERT(droce_netem_parse_rate("2.5Gbit/s", &v) == 0 && v == 2500000000ull);
	CU_ASSERT(droce_netem_parse_rate("100mbit", &v) == 0 && v == 100000000ull);
	CU_ASSERT_EQUAL(droce_netem_parse_rate("100", &v), -EINVAL);
	CU_ASSERT(droce_netem_parse_size("1500", &v) == 0 && v == 1500);
	CU_ASSERT(droce_netem_parse_size("30k", &v) == 0 && v == 30000);
	CU_ASSERT(droce_netem_parse_size("64KiB", &v) == 0 && v == 65536);
	CU_ASSERT_EQUAL(droce_netem_parse_size("12q", &v), -EINVAL);
}

#define ARGS(...)  ((char *[]){ "droce-netem", __VA_ARGS__ })
#define NARGS(...) ((int)(sizeof((char *[]){ "droce-netem", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, err, ...) \
	droce_netem_parse_args(NARGS(__VA_ARGS__), ARGS(__VA_ARGS__), o, err, sizeof(err))

static void
test_args_per_direction(void)
{
	struct droce_netem_opts o;
	char err[256];

	CU_ASSERT_EQUAL(PARSE(&o, err, "--delay", "100us", "--loss=5%", "--dir", "ba", "--loss",
			      "1%", "--rate", "10gbit", "--red", "10k,30k,20%", "--keep-order",
			      "--seed", "9", "--duration", "3s", "--ge", "1%,25%"),
			0);
	CU_ASSERT_EQUAL(o.dir[DROCE_NETEM_AB].delay_ns, 100000);
	CU_ASSERT_EQUAL(o.dir[DROCE_NETEM_BA].delay_ns, 100000);
	CU_ASSERT_DOUBLE_EQUAL(o.dir[DROCE_NETEM_AB].loss, 0.05, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(o.dir[DROCE_NETEM_BA].loss, 0.01, 1e-12);
	CU_ASSERT_EQUAL(o.dir[DROCE_NETEM_AB].rate_bps, 0);
	CU_ASSERT_EQUAL(o.dir[DROCE_NETEM_BA].rate_bps, 10000000000ull);
	CU_ASSERT(o.dir[DROCE_NETEM_BA].red_on && !o.dir[DROCE_NETEM_AB].red_on);
	CU_ASSERT_EQUAL(o.dir[DROCE_NETEM_BA].red_kmin, 10000);
	CU_ASSERT_EQUAL(o.dir[DROCE_NETEM_BA].red_kmax, 30000);
	CU_ASSERT(o.dir[DROCE_NETEM_BA].keep_order && !o.dir[DROCE_NETEM_AB].keep_order);
	CU_ASSERT(o.dir[DROCE_NETEM_BA].ge.on && o.dir[DROCE_NETEM_BA].ge.loss_bad == 1.0);
	CU_ASSERT_EQUAL(o.seed, 9);
	CU_ASSERT_EQUAL(o.duration_ns, 3000000000ull);
	CU_ASSERT_EQUAL(o.hold, 4096);
	CU_ASSERT_PTR_NULL(o.series);
	CU_ASSERT_EQUAL(o.series_us, 1000);
	CU_ASSERT_EQUAL(PARSE(&o, err, "--series", "q.csv", "--series-us=200"), 0);
	CU_ASSERT_STRING_EQUAL(o.series, "q.csv");
	CU_ASSERT_EQUAL(o.series_us, 200);
}

static void
test_args_errors(void)
{
	struct droce_netem_opts o;
	char err[256];

	CU_ASSERT_EQUAL(PARSE(&o, err, "--delay", "100"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--delay"));
	CU_ASSERT_EQUAL(PARSE(&o, err, "--frobnicate", "1"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown option"));
	CU_ASSERT_EQUAL(PARSE(&o, err, "--loss"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs a value"));
	CU_ASSERT_EQUAL(PARSE(&o, err, "--red", "10k,30k,0.1"), -EINVAL); /* no rate */
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "rate"));
	CU_ASSERT_EQUAL(PARSE(&o, err, "--dir", "up"), -EINVAL);
	CU_ASSERT_EQUAL(PARSE(&o, err, "--keep-order=1"), -EINVAL);
	CU_ASSERT_EQUAL(PARSE(&o, err, "stray"), -EINVAL);
	CU_ASSERT_EQUAL(PARSE(&o, err, "--hold", "0"), -EINVAL);
	CU_ASSERT_EQUAL(PARSE(&o, err, "--ge", "1%"), -EINVAL);
	CU_ASSERT_EQUAL(PARSE(&o, err, "--series-us", "0"), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "series-us 1..1000000"));
	CU_ASSERT_EQUAL(PARSE(&o, err, "--series="), -EINVAL);
	CU_ASSERT_EQUAL(PARSE(&o, err, "--help"), 0);
	CU_ASSERT(o.help);
}

DROCE_TEST_MAIN("netem_heap_args", DROCE_TEST(test_heap_sorted_fifo_bounded),
		DROCE_TEST(test_heap_not_due), DROCE_TEST(test_value_parsers),
		DROCE_TEST(test_args_per_direction), DROCE_TEST(test_args_errors))
