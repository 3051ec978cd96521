/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-bench-tcppp: a kernel TCP ping-pong of exactly SIZE bytes (sockperf's smallest message
 * is 14 B), the TCP baseline droce-bench-kernel sets beside droce-perf's 8-byte round trip.
 *   droce-bench-tcppp server ADDR PORT SIZE         answers one client, ends at its EOF
 *   droce-bench-tcppp client ADDR PORT SIZE ITERS   1000 warm-up round trips, then ITERS timed
 * Blocking sockets, TCP_NODELAY, every read/write bounded by a 10 s socket timeout. The client
 * prints "tcppp: size=S samples=N min=.. p50=.. p99=.. max=.." (round trips, us).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

enum { DROCE_TCPPP_MAX = 65536, DROCE_TCPPP_WARMUP = 1000, DROCE_TCPPP_IO_S = 10 };

/* Moves exactly n bytes; 0, or -1 on error, timeout or EOF. */
static int
droce_tcppp_io(int fd, char *buf, size_t n, int do_write)
{
	size_t done = 0;
	ssize_t k;

	while (done < n) {
		k = do_write ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return 0;
}

static int
droce_tcppp_socket(void)
{
	struct timeval tv = { .tv_sec = DROCE_TCPPP_IO_S };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static int
droce_tcppp_server(const struct sockaddr_in *sa, char *buf, size_t size)
{
	struct timeval tv = { .tv_sec = DROCE_TCPPP_IO_S };
	int lfd = droce_tcppp_socket(), fd, one = 1;

	if (lfd < 0 || bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 ||
	    listen(lfd, 1) != 0) {
		perror("droce-bench-tcppp: listen");
		return 1;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("droce-bench-tcppp: accept");
		return 1;
	}
	/* accepted sockets do not inherit TCP_NODELAY or the timeouts everywhere: set them again */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t k = read(fd, buf, 1); /* EOF here: the client is done */

		if (k == 0)
			break;
		if (k < 0 || droce_tcppp_io(fd, buf + 1, size - 1, 0) != 0 ||
		    droce_tcppp_io(fd, buf, size, 1) != 0) {
			fprintf(stderr, "droce-bench-tcppp: server: %s\n",
				k < 0 ? strerror(errno) : "short message");
			return 1;
		}
	}
	close(fd);
	close(lfd);
	return 0;
}

static uint64_t
droce_tcppp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
droce_tcppp_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest rank, in us */
static double
droce_tcppp_pct(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)(p * (double)n + 0.999999);

	k = k == 0 ? 1 : k > n ? n : k;
	return (double)v[k - 1] / 1e3;
}

static int
droce_tcppp_client(const struct sockaddr_in *sa, char *buf, size_t size, size_t iters)
{
	uint64_t *rtt = calloc(iters, sizeof(*rtt)), t0;
	int fd = -1, tries;
	size_t i;

	if (rtt == NULL)
		return 1;
	/* the server may still be starting: retry for up to 5 s */
	for (tries = 0; tries < 100; tries++) {
		fd = droce_tcppp_socket();
		if (fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		usleep(50000);
	}
	if (fd < 0) {
		perror("droce-bench-tcppp: connect");
		return 1;
	}
	memset(buf, 0x5a, size);
	for (i = 0; i < DROCE_TCPPP_WARMUP + iters; i++) {
		t0 = droce_tcppp_now_ns();
		if (droce_tcppp_io(fd, buf, size, 1) != 0 ||
		    droce_tcppp_io(fd, buf, size, 0) != 0) {
			fprintf(stderr, "droce-bench-tcppp: client: round trip %zu failed\n", i);
			return 1;
		}
		if (i >= DROCE_TCPPP_WARMUP)
			rtt[i - DROCE_TCPPP_WARMUP] = droce_tcppp_now_ns() - t0;
	}
	close(fd);
	qsort(rtt, iters, sizeof(*rtt), droce_tcppp_cmp);
	printf("tcppp: size=%zu samples=%zu min=%.2f p50=%.2f p99=%.2f max=%.2f\n", size, iters,
	       (double)rtt[0] / 1e3, droce_tcppp_pct(rtt, iters, 0.50),
	       droce_tcppp_pct(rtt, iters, 0.99), (double)rtt[iters - 1] / 1e3);
	free(rtt);
	return 0;
}

int
main(int argc, char **argv)
{
	static char buf[DROCE_TCPPP_MAX];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int server = argc == 5 && strcmp(argv[1], "server") == 0;
	int client = argc == 6 && strcmp(argv[1], "client") == 0;
	long size = argc >= 5 ? atol(argv[4]) : 0, iters = client ? atol(argv[5]) : 0;

	if ((!server && !client) || inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1 ||
	    atoi(argv[3]) <= 0 || atoi(argv[3]) > 65535 || size < 1 || size > DROCE_TCPPP_MAX ||
	    (client && iters < 1)) {
		fprintf(stderr, "usage: droce-bench-tcppp server ADDR PORT SIZE\n"
				"       droce-bench-tcppp client ADDR PORT SIZE ITERS\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	return server ? droce_tcppp_server(&sa, buf, (size_t)size) :
			droce_tcppp_client(&sa, buf, (size_t)size, (size_t)iters);
}
