/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A slow peer for unmodified programs, loaded with LD_PRELOAD in front of librdmacm: the Nth
 * rdma_listen of the process (CM_SLOW_LISTEN="N:MS") takes MS milliseconds longer before it
 * listens, as a server that loses its CPU between its out-of-band sync and its listen does.
 * perftest -R listens twice (its exchange, then its test QPs): "2:1500" makes its client's
 * test REQ come first.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/rdma_cma.h>

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	static int calls; /* a test program's own state; one thread listens */
	int (*real)(struct rdma_cm_id *, int) =
		(int (*)(struct rdma_cm_id *, int))dlsym(RTLD_NEXT, "rdma_listen");
	const char *spec = getenv("CM_SLOW_LISTEN");
	unsigned int n = 0, ms = 0;
	struct timespec ts;

	if (real == NULL)
		return -1;
	calls++;
	if (spec != NULL && sscanf(spec, "%u:%u", &n, &ms) == 2 && (unsigned int)calls == n) {
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000;
		nanosleep(&ts, NULL);
	}
	return real(id, backlog);
}
