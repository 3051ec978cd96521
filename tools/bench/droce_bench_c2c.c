/* SPDX-License-Identifier: BSD-3-Clause */
/* The cache-line round trip between two CPUs (why: droce_bench_c2c.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "droce_bench_c2c.h"

enum { BATCHES = 5 };

struct c2c {
	/* the bounced line: odd values are the pinger's, even ones the ponger's */
	volatile uint64_t line __attribute__((aligned(128)));
	/* not on the bounced line nor its neighbour, which the CPU may fetch with it */
	uint64_t rounds __attribute__((aligned(128)));
	int cpu;
	int ok;
};

static int
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static void *
pong(void *arg)
{
	struct c2c *c = arg;
	uint64_t i;

	c->ok = pin(c->cpu) == 0;
	/* 1 or 3 tells the pinger whether pinning worked; then answer its 3, 5, 7... */
	c->line = c->ok ? 1 : 3;
	if (!c->ok)
		return NULL;
	for (i = 0; i < c->rounds; i++) {
		while (c->line != 2 * i + 3)
			;
		c->line = 2 * i + 4;
	}
	return NULL;
}

static double
mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
droce_bench_c2c_ns(int cpu_a, int cpu_b, unsigned int n)
{
	cpu_set_t old;
	/* static, not malloc'ed: the page a line lives on moves its round trip too (60-95 ns
	 * near here), and one place keeps runs comparable */
	static struct c2c cs;
	struct c2c *c = &cs;
	double t[BATCHES], t0, r = -1;
	pthread_t th;
	uint64_t i, e, per = n / BATCHES > 0 ? n / BATCHES : 1;
	int b;

	c->line = 0;
	c->rounds = per * BATCHES;
	c->cpu = cpu_b;
	if (pthread_getaffinity_np(pthread_self(), sizeof(old), &old) != 0 || pin(cpu_a) != 0 ||
	    pthread_create(&th, NULL, pong, c) != 0)
		return -1;
	while (c->line == 0)
		;
	if (c->line == 1) {
		for (b = 0, i = 0; b < BATCHES; b++) {
			t0 = mono_ns();
			for (e = i + per; i < e; i++) {
				c->line = 2 * i + 3;
				while (c->line != 2 * i + 4)
					;
			}
			t[b] = (mono_ns() - t0) / (double)per;
		}
		qsort(t, BATCHES, sizeof(t[0]), cmp_d);
		r = t[BATCHES / 2];
	}
	pthread_join(th, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	return r;
}
