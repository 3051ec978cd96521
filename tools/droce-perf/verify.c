/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data patterns and their checks. Byte off of iteration iter is a per-(iter, 256-byte block)
 * random base plus off: data left over from another iteration or moved within the message is
 * caught (a 1-byte message: with probability 255/256). Atomics follow a known sequence.
 */
#include <stdint.h>

#include "perf.h"

static uint64_t
mix(uint64_t x)
{
	/* splitmix64's finaliser */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint8_t
block_base(uint64_t iter, uint64_t block)
{
	return (uint8_t)mix((iter << 24) ^ block);
}

uint8_t
perf_pat(uint64_t iter, uint64_t off)
{
	return (uint8_t)(block_base(iter, off >> 8) + off);
}

void
perf_fill(uint8_t *p, uint32_t len, uint64_t iter)
{
	uint32_t off, end;
	uint8_t b;

	for (off = 0; off < len; off = end) {
		end = (off | 255u) + 1;
		if (end > len)
			end = len;
		b = block_base(iter, off >> 8);
		for (; off < end; off++)
			p[off] = (uint8_t)(b + off);
	}
}

uint64_t
perf_check(const uint8_t *p, uint32_t len, uint64_t iter, uint32_t *first)
{
	uint32_t off, end, o;
	uint64_t bad = 0;
	uint8_t b;

	for (off = 0; off < len; off = end) {
		end = (off | 255u) + 1;
		if (end > len)
			end = len;
		b = block_base(iter, off >> 8);
		for (o = off; o < end; o++) {
			if (p[o] != (uint8_t)(b + o)) {
				if (bad++ == 0 && first != NULL)
					*first = o;
			}
		}
	}
	return bad;
}

uint64_t
perf_atomic_init(unsigned int qp)
{
	return 0x0123456789000000ull + ((uint64_t)qp << 40);
}

/* Fetch-and-add adds 1 and compare-and-swap moves v to v + 1: either way the value seen by
 * operation iter is the initial value plus iter (RC executes one QP's atomics in order). */
uint64_t
perf_atomic_expect(unsigned int qp, uint64_t iter)
{
	return perf_atomic_init(qp) + iter;
}

uint8_t
perf_marker(uint64_t iter)
{
	return (uint8_t)(iter + 1);
}
