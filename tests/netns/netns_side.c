/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One side of tests/glue's RC session (glue_smoke rc / rc6: RDMA WRITE, SENDs, RDMA READ,
 * every byte checked) as its own process, so that the two sides can run in two network
 * namespaces. glue_smoke forks both sides from one parent and joins them with pipes; here the
 * pipes are two FIFOs (a filesystem object, visible from every network namespace):
 *   netns_side rc|rc6 server|client FIFO_IN FIFO_OUT "EAL words" VDEV
 * The server reads c2s and writes s2c, the client the reverse. The counters of both runtimes
 * are printed (name = value) for the calling script to assert on. DROCE_* variables apply on
 * top of the session's own settings.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "glue_smoke.h"

int
main(int argc, char **argv)
{
	struct role r = { 0 };
	int rc;

	if (argc != 7 || (strcmp(argv[1], "rc") != 0 && strcmp(argv[1], "rc6") != 0) ||
	    (strcmp(argv[2], "server") != 0 && strcmp(argv[2], "client") != 0)) {
		fprintf(stderr,
			"usage: %s rc|rc6 server|client FIFO_IN FIFO_OUT \"EAL words\" "
			"VDEV\n  (the vdev's MAC must be 02:00:00:00:00:01 for the server, :02 for "
			"the client)\n",
			argv[0]);
		return 2;
	}
	r.name = argv[2];
	r.server = strcmp(argv[2], "server") == 0;
	r.gid_index = strcmp(argv[1], "rc6") == 0;
	r.eal = argv[5];
	r.vdev = argv[6];
	/* DROCE_* variables override the session's settings (rings, bursts), as in glue_smoke lat */
	r.apply_env = true;
	/* O_RDWR: opening a FIFO so never blocks waiting for the other side */
	r.in = open(argv[3], O_RDWR | O_NONBLOCK);
	r.out = open(argv[4], O_RDWR);
	if (r.in < 0 || r.out < 0) {
		perror("open FIFO");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(TIME_BOUND_S);
	rc = run_rc(&r);
	printf("netns_side %s %s: %s\n", argv[1], r.name, rc == 0 ? "ok" : "FAIL");
	return rc == 0 ? 0 : 1;
}
