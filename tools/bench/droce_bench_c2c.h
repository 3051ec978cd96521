/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_BENCH_C2C_H
#define DROCE_BENCH_C2C_H

/*
 * Where the two benchmark CPUs sit on the host. On a VM the hypervisor moves vCPUs between
 * host cores: CPUs 0 and 1 then share a cache (a cache line goes there and back in ~60 ns) or
 * not (~300 ns), minutes apart, and every cross-CPU figure follows: raw memif moves 2 or 14 M
 * frames/s. The benchmarks measure this before each interleaved run and print it beside it.
 */

/* Below this, the two CPUs count as sharing a cache ("near"). */
#define DROCE_BENCH_C2C_NEAR_NS 150.0

/* Median over 5 batches of n/5 round trips of one cache line between threads pinned to CPUs a
 * and b, in ns; -1 when a thread cannot be started or pinned there. */
double droce_bench_c2c_ns(int cpu_a, int cpu_b, unsigned int n);

#endif
