/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_NETEM_ARGS_H
#define DROCE_NETEM_ARGS_H

/* Command line of droce-netem after the EAL arguments; no EAL here so it is unit-tested. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netem_model.h"

/* Directions: port 0 -> port 1 ("ab") and port 1 -> port 0 ("ba"). */
enum droce_netem_dir {
	DROCE_NETEM_AB = 0,
	DROCE_NETEM_BA = 1,
	DROCE_NETEM_NDIR = 2,
};

struct droce_netem_opts {
	struct droce_netem_cfg dir[DROCE_NETEM_NDIR];
	uint64_t seed;
	uint64_t duration_ns; /* 0: until SIGINT/SIGTERM */
	uint32_t hold;	      /* frames held per direction */
	uint32_t burst;
	uint32_t idle_us;   /* longest sleep when idle; 0 = busy poll */
	const char *series; /* --series FILE: the queue over time, as CSV at exit */
	uint32_t series_us; /* its period */
	bool help;
};

/* Fill defaults, then parse argv[1..argc-1]. Returns 0 or -EINVAL with a message in err. */
int droce_netem_parse_args(int argc, char **argv, struct droce_netem_opts *o, char *err,
			   size_t errlen);

void droce_netem_usage(const char *prog);

/* Value parsers (0 or -EINVAL): exposed for the tests. */
int droce_netem_parse_time(const char *s, uint64_t *ns);    /* 100us, 1.5ms, 2s, 10ns */
int droce_netem_parse_prob(const char *s, double *p);	    /* 5%, 0.05 */
int droce_netem_parse_rate(const char *s, uint64_t *bps);   /* 10gbit, 100mbit, 2.5Gbit/s */
int droce_netem_parse_size(const char *s, uint64_t *bytes); /* 1500, 30k, 64KiB, 1MB */

#endif /* DROCE_NETEM_ARGS_H */
