/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ICRC of one small RoCEv2 frame three ways, as the engine computes it:
 *   full    droce_icrc_v4: the 40-byte masked IPv4/UDP/BTH prefix, then the rest;
 *   base    droce_icrc_v4_fast from the QP's base (the transmit side: the prefix's fixed bytes
 *           folded once per connection, the variable ones one table entry each);
 *   cached  droce_icrc_v4_cached (the receive side: a 40-byte compare with the last frame's
 *           prefix, the base reused when it matches).
 * Each runs in its own function (icrc_full, icrc_base, icrc_cached) so that callgrind's
 * --toggle-collect counts it alone; the program prints ns a frame (this thread's CPU time).
 * All three must agree: a mismatch exits 1.
 *
 * Usage: droce-bench-icrc [-n FRAMES] [-s PAYLOAD]   (defaults 1000000, 64: a 64 B WRITE)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_icrc.h"

enum { RETH = 16, MAX_PAY = 4096 };

static uint8_t frame[DROCE_ICRC_V4_HDR + RETH + MAX_PAY];
static volatile uint32_t sink; /* keeps the loops' results alive */

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The PSN changes per frame, as on the wire: the cached and base paths must fold it in. */
static void
next_psn(uint32_t i)
{
	frame[20 + 8 + 11] = (uint8_t)i;
}

static uint32_t __attribute__((noinline)) icrc_full(uint32_t n, uint32_t len)
{
	uint32_t i, x = 0;

	for (i = 0; i < n; i++) {
		next_psn(i);
		x ^= droce_icrc_v4(frame, len);
	}
	return x;
}

static uint32_t __attribute__((noinline)) icrc_base(uint32_t n, uint32_t len, uint32_t base)
{
	uint32_t i, x = 0;

	for (i = 0; i < n; i++) {
		next_psn(i);
		x ^= droce_icrc_v4_fast(base, frame, len);
	}
	return x;
}

static uint32_t __attribute__((noinline))
icrc_cached(uint32_t n, uint32_t len, struct droce_icrc_v4_cache *c)
{
	uint32_t i, x = 0;

	for (i = 0; i < n; i++) {
		next_psn(i);
		x ^= droce_icrc_v4_cached(c, frame, len);
	}
	return x;
}

int
main(int argc, char **argv)
{
	uint32_t n = 1000000, pay = 64, len, i, base, a, b, c;
	struct droce_icrc_v4_cache cache;
	uint64_t t0, t1, t2, t3;
	int o;

	while ((o = getopt(argc, argv, "n:s:")) != -1) {
		if (o == 'n')
			n = (uint32_t)strtoul(optarg, NULL, 0);
		else if (o == 's')
			pay = (uint32_t)strtoul(optarg, NULL, 0);
		else
			n = 0;
	}
	if (n == 0 || pay > MAX_PAY) {
		fprintf(stderr, "usage: droce-bench-icrc [-n FRAMES >= 1] [-s PAYLOAD 0..%u]\n",
			MAX_PAY);
		return 2;
	}
	/* IPv4 of IHL 5 (what droce_icrc_v4 requires), then any bytes: the CRC covers them all */
	srand(1);
	for (i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)rand();
	frame[0] = 0x45;
	len = DROCE_ICRC_V4_HDR + RETH + pay;
	base = droce_icrc_v4_base(frame);
	memset(&cache, 0, sizeof(cache));
	/* agreement, PSN by PSN */
	for (i = 0; i < 256; i++) {
		next_psn(i);
		a = droce_icrc_v4(frame, len);
		if (a != droce_icrc_v4_fast(base, frame, len) ||
		    a != droce_icrc_v4_cached(&cache, frame, len)) {
			fprintf(stderr, "droce-bench-icrc: the three ICRCs differ at PSN byte %u\n",
				i);
			return 1;
		}
	}
	t0 = cpu_ns();
	a = icrc_full(n, len);
	t1 = cpu_ns();
	b = icrc_base(n, len, base);
	t2 = cpu_ns();
	c = icrc_cached(n, len, &cache);
	t3 = cpu_ns();
	sink = a ^ b ^ c;
	if (a != b || a != c) {
		fprintf(stderr, "droce-bench-icrc: the loops' ICRCs differ\n");
		return 1;
	}
	printf("ICRC of a %u B frame from IPv4 (%u B payload), CRC-32 %s, ns: full %.1f, "
	       "per-QP base %.1f, receive cache %.1f\n",
	       len, pay, droce_crc32_impl_name(), (double)(t1 - t0) / n, (double)(t2 - t1) / n,
	       (double)(t3 - t2) / n);
	return 0;
}
