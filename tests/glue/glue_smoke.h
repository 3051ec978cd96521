/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef GLUE_SMOKE_H
#define GLUE_SMOKE_H

/* Shared by the two-process memif smoke test's files. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "droce_rt.h"

enum { TIME_BOUND_S = 40 };

struct role {
	const char *name;
	bool server;
	int in, out; /* pipes to/from the peer (in is non-blocking) */
	char socket[64];
	const char *eal;	/* EAL words for both processes */
	const char *vdev;	/* NULL: memif */
	bool via_env;		/* open through DROCE_CONFIG + DROCE_* instead of a struct */
	bool apply_env;		/* DROCE_* variables override the test's settings (lat) */
	bool lcore;		/* latcall client: loop on lcore 1, engine via droce_rt_call */
	unsigned int gid_index; /* 0: IPv4 GIDs, 1: IPv6 */
	bool client_first;	/* the client opens first (arp over memif) */
};

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s: %s:%d: ", r->name, __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, "\n"); \
			return 1; \
		} \
	} while (0)

void close_rt(struct droce_rt *rt);
struct droce_rt *open_rt(const struct role *r, bool two_lcores, char *err, size_t errlen);
int meet(struct role *r, struct droce_rt *rt, uint8_t peer_mac[6]);
void v4_gid(uint8_t gid[16], uint8_t last);
void v6_gid(uint8_t gid[16], uint8_t last);
bool peer_done(void *arg);
void print_counters(const struct role *r, struct droce_rt *rt, const char *prefix);
int run_rc(struct role *r);
int run_lat(struct role *r);

#endif /* GLUE_SMOKE_H */
