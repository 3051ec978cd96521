/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-bench-c2c [-q] [-n ROUND_TRIPS] [CPU_A CPU_B]: the cache-line round trip between two
 * CPUs (0 and 1 by default), which tells whether a VM's two benchmark CPUs share a cache right
 * now (droce_bench_c2c.h). -q prints the figure alone, for the scripts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "droce_bench_c2c.h"

int
main(int argc, char **argv)
{
	unsigned int n = 100000;
	int o, quiet = 0, a = 0, b = 1;
	double ns;

	while ((o = getopt(argc, argv, "qn:")) != -1) {
		if (o == 'q')
			quiet = 1;
		else if (o == 'n')
			n = (unsigned int)strtoul(optarg, NULL, 0);
		else
			goto usage;
	}
	if (argc - optind == 2) {
		a = atoi(argv[optind]);
		b = atoi(argv[optind + 1]);
	} else if (argc != optind) {
		goto usage;
	}
	if (n == 0)
		goto usage;
	ns = droce_bench_c2c_ns(a, b, n);
	if (ns < 0) {
		fprintf(stderr,
			"droce-bench-c2c: cannot run threads on CPUs %d and %d (nproc: %ld)\n", a,
			b, sysconf(_SC_NPROCESSORS_ONLN));
		return 1;
	}
	if (quiet)
		printf("%.1f\n", ns);
	else
		printf("droce-bench-c2c: CPUs %d and %d: cache-line round trip %.1f ns (%s)\n", a,
		       b, ns, ns < DROCE_BENCH_C2C_NEAR_NS ? "near: a shared cache" : "far");
	return 0;
usage:
	fprintf(stderr, "usage: droce-bench-c2c [-q] [-n ROUND_TRIPS] [CPU_A CPU_B]\n");
	return 2;
}
