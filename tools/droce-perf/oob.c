/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The out-of-band exchange over TCP, as perftest does: the client connects to the server's
 * address, then both sides trade fixed-size messages (plan, endpoints, round syncs). Every
 * wait is bounded by a timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"

static uint64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Server: listen and write the port file (before the runtime starts: a test launches the
 * client once the port is known). */
int
perf_oob_listen(const struct perf_opts *o, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd, one = 1;
	FILE *f;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_port = htons(o->port);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
		snprintf(err, errlen, "TCP port %u: %s", o->port, strerror(errno));
		close(fd);
		return -1;
	}
	if (o->port_file != NULL) {
		char tmp[300];
		struct stat st;
		bool direct;

		/* Written then renamed: a reader never sees half a number. Never renamed over
		 * something that is not a regular file (/dev/null, a FIFO): written into it. */
		direct = stat(o->port_file, &st) == 0 && !S_ISREG(st.st_mode);
		snprintf(tmp, sizeof(tmp), "%s%s", o->port_file, direct ? "" : ".tmp");
		f = fopen(tmp, "w");
		if (f == NULL || fprintf(f, "%u\n", ntohs(sa.sin_port)) < 0 || fclose(f) != 0 ||
		    (!direct && rename(tmp, o->port_file) != 0)) {
			snprintf(err, errlen, "--port-file %s: %s", o->port_file, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Server: accept one client within the peer timeout (plus its start-up). */
int
perf_oob_accept(const struct perf_opts *o, int fd, char *err, size_t errlen)
{
	struct pollfd pf;
	int c;

	pf.fd = fd;
	pf.events = POLLIN;
	/* the client comes once its own runtime is up: allow it the peer timeout plus start-up */
	if (poll(&pf, 1, (int)o->plan.timeout_ms + 20000) != 1) {
		snprintf(err, errlen, "no client connected to TCP port %u", o->port);
		close(fd);
		return -1;
	}
	c = accept(fd, NULL, NULL);
	close(fd);
	if (c < 0) {
		snprintf(err, errlen, "accept: %s", strerror(errno));
		return -1;
	}
	nodelay(c);
	return c;
}

/* Client: connect, retrying for the timeout (the server may still be starting). */
int
perf_oob_connect(const struct perf_opts *o, char *err, size_t errlen)
{
	struct addrinfo hint = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *ai;
	uint64_t end = ms_now() + o->plan.timeout_ms + 20000;
	char port[8];
	int fd = -1, rc;

	snprintf(port, sizeof(port), "%u", o->port);
	rc = getaddrinfo(o->addr, port, &hint, &res);
	if (rc != 0) {
		snprintf(err, errlen, "server address '%s': %s", o->addr, gai_strerror(rc));
		return -1;
	}
	while (fd < 0 && ms_now() < end) {
		for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0)
			usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to %s port %u: %s", o->addr, o->port,
			 strerror(errno));
		return -1;
	}
	nodelay(fd);
	return fd;
}

/* Send src or receive into dst (the other NULL): exactly len bytes, bounded by timeout_ms; a
 * closed peer is -EPIPE (send) or -ECONNRESET (receive). */
static int
oob_xfer(int fd, const uint8_t *src, uint8_t *dst, size_t len, uint32_t timeout_ms)
{
	uint64_t end = ms_now() + timeout_ms;
	struct pollfd pf = { .fd = fd, .events = src != NULL ? POLLOUT : POLLIN };
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (ms_now() > end)
			return -ETIMEDOUT;
		if (poll(&pf, 1, 100) != 1)
			continue;
		n = src != NULL ? send(fd, src + done, len - done, MSG_NOSIGNAL) :
				  recv(fd, dst + done, len - done, 0);
		if (n <= 0)
			return n < 0 ? -errno : src != NULL ? -EPIPE : -ECONNRESET;
		done += (size_t)n;
	}
	return 0;
}

int
perf_oob_send(int fd, const void *buf, size_t len, uint32_t timeout_ms)
{
	return oob_xfer(fd, buf, NULL, len, timeout_ms);
}

int
perf_oob_recv(int fd, void *buf, size_t len, uint32_t timeout_ms)
{
	return oob_xfer(fd, NULL, buf, len, timeout_ms);
}

int
perf_oob_readable(int fd)
{
	char b;
	ssize_t n = recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);

	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	return 1;
}

/* Messages are small and sent whole: once the first byte is there, the rest follows at once. */
int
perf_oob_try_recv(int fd, void *buf, size_t len)
{
	int rc = perf_oob_readable(fd);

	if (rc <= 0)
		return rc;
	return perf_oob_recv(fd, buf, len, 5000) == 0 ? 1 : -EIO;
}

/* Wait until the peer closes its end (or timeout_ms); whatever it still sends is dropped. */
void
perf_oob_wait_eof(int fd, uint32_t timeout_ms)
{
	uint64_t end = ms_now() + timeout_ms;
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char buf[256];

	while (ms_now() < end) {
		if (poll(&pf, 1, 100) == 1 && recv(fd, buf, sizeof(buf), 0) <= 0)
			return;
	}
}
