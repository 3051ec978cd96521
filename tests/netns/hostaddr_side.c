/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One side of tests/netns/hostaddr_test.sh: a runtime in host-address mode (configured by the
 * DROCE_* environment), driven inline, answering commands on stdin, one per line:
 *   gids                 the GID table: "gid INDEX ADDRESS" per valid entry, then "end"
 *   wait present|absent ADDR
 *                        poll until ADDR is in (or out of) the table: "ok INDEX" / "ok",
 *                        or "timeout" after 5 s
 *   resolve ADDR         the next hop's MAC from the kernel: "mac xx:xx:xx:xx:xx:xx", or
 *                        "err -ERRNO message"
 *   quit
 * The loop runs between commands too (stdin polled), so the port stays served.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_rt.h"

static int
to_gid(const char *a, uint8_t g[16])
{
	memset(g, 0, 16);
	if (inet_pton(AF_INET, a, g + 12) == 1) {
		g[10] = g[11] = 0xff;
		return 0;
	}
	return inet_pton(AF_INET6, a, g) == 1 ? 0 : -1;
}

static void
gid_str(const uint8_t g[16], char *s, size_t n)
{
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(g, v4, 12) == 0)
		inet_ntop(AF_INET, g + 12, s, (socklen_t)n);
	else
		inet_ntop(AF_INET6, g, s, (socklen_t)n);
}

/* Index of g in the table, or -1. */
static int
find(struct droce_rt *rt, const uint8_t g[16])
{
	uint8_t e[16];
	unsigned int i, n = droce_rt_gid(rt, 0, e);

	for (i = 0; i < n; i++)
		if (droce_rt_gid(rt, i, e) > i && memcmp(e, g, 16) == 0)
			return (int)i;
	return -1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
serve_for(struct droce_rt *rt, double s)
{
	double end = now_s() + s;

	while (now_s() < end)
		if (droce_rt_poll(rt) == 0)
			usleep(100);
}

static void
command(struct droce_rt *rt, char *line)
{
	static const uint8_t zero[16];
	char what[16], addr[64], s[64];
	uint8_t g[16], mac[6];
	unsigned int i, n;
	double end;
	int rc, idx;
	bool want;

	if (strncmp(line, "gids", 4) == 0) {
		n = droce_rt_gid(rt, 0, g);
		for (i = 0; i < n; i++)
			if (droce_rt_gid(rt, i, g) > i && memcmp(g, zero, 16) != 0) {
				gid_str(g, s, sizeof(s));
				printf("gid %u %s\n", i, s);
			}
		printf("end\n");
	} else if (sscanf(line, "wait %15s %63s", what, addr) == 2 && to_gid(addr, g) == 0) {
		want = strcmp(what, "present") == 0;
		end = now_s() + 5;
		while (((idx = find(rt, g)) >= 0) != want && now_s() < end)
			serve_for(rt, 0.005);
		if ((idx >= 0) == want)
			printf(idx >= 0 ? "ok %d\n" : "ok\n", idx);
		else
			printf("timeout\n");
	} else if (sscanf(line, "resolve %63s", addr) == 1 && to_gid(addr, g) == 0) {
		rc = droce_rt_resolve(rt, g, mac, 5000);
		if (rc == 0)
			printf("mac %02x:%02x:%02x:%02x:%02x:%02x\n", mac[0], mac[1], mac[2],
			       mac[3], mac[4], mac[5]);
		else
			printf("err %d %s\n", rc, droce_rt_strerror(rt));
	} else {
		printf("unknown command: %s", line);
	}
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char err[256], line[256];
	struct droce_rt *rt;

	(void)argc;
	rt = droce_rt_open(NULL, argv[0], err, sizeof(err));
	if (rt == NULL) {
		printf("open failed: %s\n", err);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		droce_rt_poll(rt);
		if (poll(&pfd, 1, 1) <= 0)
			continue;
		if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "quit", 4) == 0)
			break;
		command(rt, line);
	}
	droce_rt_close(rt);
	return 0;
}
