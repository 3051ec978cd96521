/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-perf's verify module (patterns, checks, atomic sequence) and option parsing. */
#include <string.h>

#include "droce_test.h"
#include "perf.h"

static uint8_t buf[70000];

static void
test_fill_check_roundtrip(void)
{
	static const uint32_t lens[] = { 1, 2, 255, 256, 257, 4096, 65537 };
	uint32_t first = 99, i;
	unsigned int k;

	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		perf_fill(buf, lens[k], 12345 + k);
		CU_ASSERT_EQUAL(perf_check(buf, lens[k], 12345 + k, &first), 0);
		for (i = 0; i < lens[k]; i += 97)
			CU_ASSERT_EQUAL(buf[i], perf_pat(12345 + k, i));
	}
	CU_ASSERT_EQUAL(first, 99); /* untouched when clean */
}

/* A deliberately wrong expected pattern (another iteration) is reported. */
static void
test_wrong_iteration_detected(void)
{
	uint32_t first = 0;
	uint64_t bad;

	perf_fill(buf, 4096, 7);
	bad = perf_check(buf, 4096, 8, &first);
	CU_ASSERT(bad > 4096 - 4096 / 64); /* nearly every byte differs */
	CU_ASSERT(first < 256);
}

static void
test_one_flipped_byte(void)
{
	uint32_t first = 0;

	perf_fill(buf, 65536, 3);
	buf[40000] ^= 1;
	CU_ASSERT_EQUAL(perf_check(buf, 65536, 3, &first), 1);
	CU_ASSERT_EQUAL(first, 40000);
}

/* Moved data (the right bytes at the wrong offset) fails too. */
static void
test_shifted_data_detected(void)
{
	uint32_t first = 0;

	perf_fill(buf + 1, 1024, 5);
	CU_ASSERT(perf_check(buf, 1024, 5, &first) > 0);
}

/* Over many iterations a 1-byte message still differs from the previous one almost always. */
static void
test_small_messages_vary(void)
{
	uint64_t i, same = 0;

	for (i = 1; i < 10000; i++)
		same += perf_pat(i, 0) == perf_pat(i - 1, 0);
	CU_ASSERT(same < 100);
	for (i = 1; i < 1000; i++)
		CU_ASSERT_NOT_EQUAL(perf_marker(i), perf_marker(i - 1));
}

static void
test_atomic_sequence(void)
{
	CU_ASSERT_EQUAL(perf_atomic_expect(0, 0), perf_atomic_init(0));
	CU_ASSERT_EQUAL(perf_atomic_expect(2, 5), perf_atomic_init(2) + 5);
	CU_ASSERT_NOT_EQUAL(perf_atomic_init(0), perf_atomic_init(1));
}

static int
parse(const char *line, struct perf_opts *o, char *err)
{
	char copy[256], *argv[32], *save = NULL, *t;
	int argc = 0;

	strcpy(copy, line);
	for (t = strtok_r(copy, " ", &save); t != NULL && argc < 31; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return perf_parse(argc, argv, o, err, 200);
}

static void
test_options(void)
{
	static struct perf_opts o;
	char err[200];

	CU_ASSERT_EQUAL(parse("p -o read -m lat -s 8 -n 5 10.0.0.1", &o, err), 0);
	CU_ASSERT(!o.server);
	CU_ASSERT_EQUAL(o.plan.op, PERF_OP_READ);
	CU_ASSERT_EQUAL(o.plan.mode, PERF_MODE_LAT);
	CU_ASSERT_EQUAL(o.plan.sizes[0], 8);
	CU_ASSERT_EQUAL(o.plan.iters, 5);
	CU_ASSERT_EQUAL(parse("p -a", &o, err), 0);
	CU_ASSERT(o.server);
	CU_ASSERT_EQUAL(o.plan.nsizes, 21);
	CU_ASSERT_EQUAL(o.plan.sizes[0], 1);
	CU_ASSERT_EQUAL(o.plan.sizes[20], 1 << 20);
	CU_ASSERT_EQUAL(parse("p --sizes 8,4096,65536 -o atomic", &o, err), 0);
	CU_ASSERT_EQUAL(o.plan.op, PERF_OP_FADD);
	CU_ASSERT_EQUAL(o.plan.nsizes, 1); /* atomics are 8 bytes */
	CU_ASSERT_EQUAL(parse("p --sizes 8,4096,65536", &o, err), 0);
	CU_ASSERT_EQUAL(o.plan.nsizes, 3);
	CU_ASSERT_EQUAL(parse("p -D 2", &o, err), 0);
	CU_ASSERT_EQUAL(o.plan.duration_ms, 2000);
	CU_ASSERT(parse("p -s 0", &o, err) < 0);
	CU_ASSERT(parse("p -s 2097152", &o, err) < 0);
	CU_ASSERT(parse("p --mtu 1000", &o, err) < 0);
	CU_ASSERT(parse("p -o nop", &o, err) < 0);
	CU_ASSERT(strstr(err, "--op") != NULL);
	CU_ASSERT_EQUAL(parse("p -q 16384", &o, err), 0);
	CU_ASSERT_EQUAL(o.plan.qps, 16384);
	CU_ASSERT(parse("p -q 16385", &o, err) < 0);
	CU_ASSERT(parse("p -a --sizes 1,2", &o, err) < 0);
	CU_ASSERT(parse("p -n", &o, err) < 0);
	CU_ASSERT(strstr(err, "needs a value") != NULL);
	CU_ASSERT(parse("p a b", &o, err) < 0);
	CU_ASSERT(parse("p -h", &o, err) > 0);
}

DROCE_TEST_MAIN("perf_verify", DROCE_TEST(test_fill_check_roundtrip),
		DROCE_TEST(test_wrong_iteration_detected), DROCE_TEST(test_one_flipped_byte),
		DROCE_TEST(test_shifted_data_detected), DROCE_TEST(test_small_messages_vary),
		DROCE_TEST(test_atomic_sequence), DROCE_TEST(test_options))
