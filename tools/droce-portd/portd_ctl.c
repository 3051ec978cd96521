/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* accept4 */
#include "portd_ctl.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int
errf(int rc, char *err, size_t errlen, const char *what, const char *path)
{
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(-rc));
	return rc;
}

int
portd_ctl_open(struct portd_ctl *c, const char *path, unsigned int bits,
	       const struct droce_portd_rep *tmpl, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	char dir[108], *slash;
	unsigned int s;
	int rc;

	memset(c, 0, sizeof(*c));
	c->lfd = -1;
	for (s = 0; s < PORTD_MAX_SLOTS; s++)
		c->fd[s] = -1;
	if (droce_portd_slots_init(&c->slots, bits) != 0)
		return errf(-EINVAL, err, errlen, "slot bits", "");
	if (strlen(path) >= sizeof(sa.sun_path))
		return errf(-ENAMETOOLONG, err, errlen, "control socket", path);
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->tmpl = *tmpl;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return errf(-errno, err, errlen, "mkdir", dir);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path));
	c->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0)
		return errf(-errno, err, errlen, "socket for", path);
	/* a file left by a service that died: nobody listens on it any more */
	if (connect(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN) {
		close(c->lfd);
		c->lfd = -1;
		return errf(-EADDRINUSE, err, errlen, "another droce-portd listens on", path);
	}
	close(c->lfd);
	unlink(path);
	c->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0)
		return errf(-errno, err, errlen, "socket for", path);
	if (bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(c->lfd, 16) != 0) {
		rc = -errno;
		close(c->lfd);
		c->lfd = -1;
		return errf(rc, err, errlen, "listen on", path);
	}
	/* programs of any user reach the service (their memory stays their own) */
	chmod(path, 0666);
	return 0;
}

static void
answer(struct portd_ctl *c, int fd, portd_ctl_event ev, void *ctx, unsigned int *n)
{
	struct droce_portd_req req;
	struct droce_portd_rep rep = c->tmpl;
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t got;
	int s;

	/* a program sends its request right after connecting: wait for it briefly */
	if (poll(&p, 1, 1000) != 1 || (got = recv(fd, &req, sizeof(req), 0)) != sizeof(req) ||
	    req.magic != DROCE_PORTD_MAGIC || req.version != DROCE_PORTD_VERSION) {
		c->refused++;
		close(fd);
		return;
	}
	if (req.query) {
		/* the port's addresses only: the connection ends here, no slot taken */
		send(fd, &rep, sizeof(rep), MSG_NOSIGNAL);
		close(fd);
		return;
	}
	s = droce_portd_slot_get(&c->slots);
	rep.status = s < 0 ? s : 0;
	rep.slot = s < 0 ? 0 : (uint32_t)s;
	if (send(fd, &rep, sizeof(rep), MSG_NOSIGNAL) != sizeof(rep) || s < 0) {
		if (s >= 0)
			droce_portd_slot_put(&c->slots, (unsigned int)s);
		c->refused++;
		close(fd);
		return;
	}
	c->fd[s] = fd;
	c->pid[s] = req.pid;
	c->joined++;
	(*n)++;
	ev(ctx, (unsigned int)s, req.pid, true);
}

/* The listen messages waiting on slot's connection; false when it has ended. */
static bool
listens(struct portd_ctl *c, unsigned int slot, int fd)
{
	struct droce_portd_listen_msg m;
	ssize_t got;
	int rc;

	while ((got = recv(fd, &m, sizeof(m), MSG_DONTWAIT)) > 0) {
		if (got != sizeof(m) || m.magic != DROCE_PORTD_MAGIC ||
		    (m.op != DROCE_PORTD_OP_LISTEN && m.op != DROCE_PORTD_OP_UNLISTEN))
			continue;
		rc = droce_portd_listen(&c->slots, slot, m.service_id,
					m.op == DROCE_PORTD_OP_LISTEN);
		printf("droce-portd: slot %u %s service ID 0x%016" PRIx64 "%s%s\n", slot,
		       m.op == DROCE_PORTD_OP_LISTEN ? "listens on" : "stops listening on",
		       m.service_id, rc == 0 ? "" : ": ", rc == 0 ? "" : strerror(-rc));
		fflush(stdout);
	}
	return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

unsigned int
portd_ctl_poll(struct portd_ctl *c, portd_ctl_event ev, void *ctx)
{
	struct pollfd p[PORTD_MAX_SLOTS];
	unsigned int which[PORTD_MAX_SLOTS];
	unsigned int s, k = 0, n = 0;
	int fd;

	for (s = 1; s < PORTD_MAX_SLOTS; s++)
		if (c->fd[s] >= 0) {
			which[k] = s;
			p[k++] = (struct pollfd){ c->fd[s], POLLIN, 0 };
		}
	if (k > 0 && poll(p, k, 0) > 0) {
		for (s = 0; s < k; s++) {
			unsigned int slot = which[s];

			if (p[s].revents == 0)
				continue;
			/* after its request a program only says where its CM listens: anything but
			 * data is its end */
			if (!(p[s].revents & (POLLHUP | POLLERR)) && listens(c, slot, p[s].fd))
				continue;
			close(p[s].fd);
			c->fd[slot] = -1;
			droce_portd_slot_put(&c->slots, slot);
			c->left++;
			n++;
			ev(ctx, slot, c->pid[slot], false);
		}
	}
	while ((fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		answer(c, fd, ev, ctx, &n);
	return n;
}

void
portd_ctl_close(struct portd_ctl *c)
{
	unsigned int s;

	for (s = 0; s < PORTD_MAX_SLOTS; s++)
		if (c->fd[s] >= 0)
			close(c->fd[s]);
	if (c->lfd >= 0) {
		close(c->lfd);
		unlink(c->path);
	}
	c->lfd = -1;
}
