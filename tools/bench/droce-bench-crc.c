/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32 throughput, side by side: every droce_crc32 implementation this CPU runs, the
 * dispatched droce_crc32(), droce_icrc() over a whole RoCEv2 frame, DPDK's rte_net_crc_calc()
 * with each of its algorithms, and zlib's crc32(). One hot buffer per size, 0.3 s per cell
 * (best of 10 rounds).
 *
 * Usage: droce-bench-crc [-t SECONDS_PER_CASE]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_net_crc.h>

#include <zlib.h>

#include "droce_crc32_impl.h"
#include "droce_icrc.h"

enum bench_kind {
	BENCH_DROCE_IMPL,
	BENCH_DROCE_DISPATCH,
	BENCH_DROCE_ICRC,
	BENCH_DPDK,
	BENCH_ZLIB,
};

struct bench_case {
	char name[64];
	enum bench_kind kind;
	const struct droce_crc32_impl *im;
	enum rte_net_crc_alg alg;
};

static const size_t sizes[] = { 64, 1024, 4096 };
#define NSIZES	 (sizeof(sizes) / sizeof(sizes[0]))
#define MAXCASES 16

static uint8_t buf[4096] __attribute__((aligned(64)));

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Bytes from the IPv4 header to the end of the pad, as droce_icrc() takes them. */
static uint32_t
run_once(const struct bench_case *c, size_t len)
{
	switch (c->kind) {
	case BENCH_DROCE_IMPL:
		return c->im->fn(0, buf, len);
	case BENCH_DROCE_DISPATCH:
		return droce_crc32(0, buf, len);
	case BENCH_DROCE_ICRC:
		return droce_icrc(buf, (uint32_t)len);
	case BENCH_DPDK:
		return rte_net_crc_calc(buf, (uint32_t)len, RTE_NET_CRC32_ETH);
	case BENCH_ZLIB:
		return (uint32_t)crc32(0, buf, (uInt)len);
	}
	return 0;
}

/* What the case must return on buf[0..len): zlib's value, or the reference ICRC. */
static uint32_t
expected(const struct bench_case *c, size_t len)
{
	if (c->kind == BENCH_DROCE_ICRC)
		return droce_icrc_ref(buf, (uint32_t)len);
	return (uint32_t)crc32(0, buf, (uInt)len);
}

/*
 * GB/s (bytes per ns): the best of ROUNDS rounds of seconds / ROUNDS each, in batches so the clock
 * is read rarely. The best round is the one least disturbed by other work on a shared machine.
 */
#define ROUNDS 10
static double
measure(const struct bench_case *c, size_t len, double seconds)
{
	uint64_t budget = (uint64_t)(seconds / ROUNDS * 1e9), t0, t, bytes;
	volatile uint32_t sink = 0;
	unsigned int batch = (unsigned int)(65536 / len) + 16, i, r;
	double best = 0, g;

	for (i = 0; i < batch; i++)
		sink ^= run_once(c, len);
	for (r = 0; r < ROUNDS; r++) {
		bytes = 0;
		t0 = now_ns();
		do {
			for (i = 0; i < batch; i++)
				sink ^= run_once(c, len);
			bytes += (uint64_t)batch * len;
			t = now_ns();
		} while (t - t0 < budget);
		g = (double)bytes / (double)(t - t0);
		if (g > best)
			best = g;
	}
	(void)sink;
	return best;
}

static void
add_case(struct bench_case *cases, unsigned int *n, enum bench_kind kind, const char *name,
	 const struct droce_crc32_impl *im, enum rte_net_crc_alg alg)
{
	struct bench_case *c = &cases[(*n)++];

	snprintf(c->name, sizeof(c->name), "%s", name);
	c->kind = kind;
	c->im = im;
	c->alg = alg;
}

int
main(int argc, char **argv)
{
	/* no hugepages, devices or shared files: the process only needs DPDK's CRC code. DPDK caps
	 * vector paths at 256 bits unless told otherwise; rte_vect_set_max_simd_bitwidth() would do
	 * the same but is still experimental in 22.11. */
	char *eal_argv[] = { argv[0],
			     "--no-huge",
			     "--no-pci",
			     "--no-shconf",
			     "--no-telemetry",
			     "-l",
			     "0",
			     "--log-level=lib.eal:error",
			     "--force-max-simd-bitwidth=512",
			     NULL };
	struct bench_case cases[MAXCASES];
	const struct droce_crc32_impl *im;
	double seconds = 0.3, gbps[MAXCASES][NSIZES];
	unsigned int n = 0, i, s, zlib_row = 0;
	int opt, bad = 0;
	char name[64];

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt == 't' && atof(optarg) > 0) {
			seconds = atof(optarg);
		} else {
			fprintf(stderr, "usage: %s [-t seconds_per_case]\n", argv[0]);
			return 2;
		}
	}
	if (rte_eal_init((int)(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1, eal_argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	for (i = 0; (im = droce_crc32_impl_get(i)) != NULL; i++) {
		if (im->usable != NULL && !im->usable())
			continue;
		snprintf(name, sizeof(name), "droce %s", im->name);
		add_case(cases, &n, BENCH_DROCE_IMPL, name, im, 0);
	}
	snprintf(name, sizeof(name), "droce_crc32 (%s)", droce_crc32_impl_name());
	add_case(cases, &n, BENCH_DROCE_DISPATCH, name, NULL, 0);
	add_case(cases, &n, BENCH_DROCE_ICRC, "droce_icrc (IPv4 frame)", NULL, 0);
	add_case(cases, &n, BENCH_DPDK, "dpdk scalar", NULL, RTE_NET_CRC_SCALAR);
	add_case(cases, &n, BENCH_DPDK, "dpdk sse42", NULL, RTE_NET_CRC_SSE42);
	add_case(cases, &n, BENCH_DPDK, "dpdk avx512", NULL, RTE_NET_CRC_AVX512);
	zlib_row = n;
	add_case(cases, &n, BENCH_ZLIB, "zlib crc32", NULL, 0);

	/* random bytes behind an IPv4/UDP/BTH start, so droce_icrc frames it as RoCEv2 */
	srand(1);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	buf[0] = 0x45;

	for (i = 0; i < n; i++) {
		if (cases[i].kind == BENCH_DPDK)
			rte_net_crc_set_alg(cases[i].alg);
		for (s = 0; s < NSIZES; s++) {
			if (run_once(&cases[i], sizes[s]) != expected(&cases[i], sizes[s])) {
				fprintf(stderr, "%s: wrong result at %zu bytes\n", cases[i].name,
					sizes[s]);
				bad = 1;
			}
			gbps[i][s] = measure(&cases[i], sizes[s], seconds);
		}
	}

	printf("CRC-32 throughput, GB/s (and ratio to zlib): best of %d rounds in %.2f s per cell, "
	       "one hot buffer\n",
	       ROUNDS, seconds);
	printf("%-26s", "case");
	for (s = 0; s < NSIZES; s++)
		printf("  %8zu B          ", sizes[s]);
	printf("\n");
	for (i = 0; i < n; i++) {
		printf("%-26s", cases[i].name);
		for (s = 0; s < NSIZES; s++)
			printf("  %8.3f (%6.2fx)", gbps[i][s], gbps[i][s] / gbps[zlib_row][s]);
		printf("\n");
	}
	printf("(dpdk avx512 falls back to sse42 when the CPU lacks VPCLMULQDQ: here %s)\n",
	       __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f") ?
		       "it has it" :
		       "it lacks it");
	rte_eal_cleanup();
	return bad;
}
