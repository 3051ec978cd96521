/* SPDX-License-Identifier: BSD-3-Clause */
#include "droce_rt_portd.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "droce_portd.h"
#include "droce_portd_proto.h"
#include "droce_rt_err.h"
#include "droce_rt_priv.h"

static int
ask(int fd, struct droce_portd_rep *rep, uint32_t query)
{
	struct droce_portd_req req = { DROCE_PORTD_MAGIC, DROCE_PORTD_VERSION, (int32_t)getpid(),
				       query };
	struct timeval tv = { 5, 0 }; /* the service answers at once; bound a stuck one */
	ssize_t n;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
		return -errno;
	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return -EPROTO;
	n = recv(fd, rep, sizeof(*rep), 0);
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(*rep) || rep->magic != DROCE_PORTD_MAGIC)
		return -EPROTO;
	return 0;
}

/* Connected to the service, or -ENOENT (none to use), or -errno with err filled. */
static int
dial(const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	const char *path = droce_rt_config_portd(cfg);
	bool auto_mode = strcmp(cfg->portd, "auto") == 0;
	struct sockaddr_un sa;
	int fd, rc;

	if (path == NULL)
		return -ENOENT;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return droce_rt_errf(-ENAMETOOLONG, err, errlen,
				     "portd %s: longer than a socket address takes", path);
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return droce_rt_errf(-errno, err, errlen, "portd: socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		close(fd);
		/* a socket file left by a service that is gone: today's one-process mode */
		if (auto_mode)
			return -ENOENT;
		return droce_rt_errf(rc, err, errlen,
				     "portd %s: %s: start droce-portd, or set DROCE_PORTD=off",
				     path, strerror(-rc));
	}
	return fd;
}

/* The port's addresses into cfg. */
static void
apply(struct droce_rt_config *cfg, const struct droce_portd_rep *rep)
{
	memcpy(cfg->mac, rep->mac, 6);
	cfg->has_mac = true;
	memcpy(cfg->ipv4, rep->ipv4, 4);
	cfg->ipv4_prefix = rep->ipv4_prefix;
	cfg->has_ipv4 = true;
	cfg->has_ipv6 = false;
	memcpy(cfg->gw4, rep->gw4, 4);
	cfg->has_gw4 = (rep->gw4[0] | rep->gw4[1] | rep->gw4[2] | rep->gw4[3]) != 0;
	cfg->mtu = rep->mtu;
	if (cfg->path_mtu > 4096 || cfg->path_mtu + 92 > cfg->mtu) {
		/* the largest RoCE path MTU the port's MTU carries */
		for (cfg->path_mtu = 4096; cfg->path_mtu > 256 && cfg->path_mtu + 92 > cfg->mtu;)
			cfg->path_mtu /= 2;
	}
}

int
droce_rt_portd_query(struct droce_rt_config *cfg, char *err, size_t errlen)
{
	struct droce_portd_rep rep;
	int fd, rc;

	fd = dial(cfg, err, errlen);
	if (fd < 0)
		return fd;
	rc = ask(fd, &rep, 1);
	close(fd);
	if (rc == 0 && rep.status != 0)
		rc = rep.status;
	if (rc != 0)
		return droce_rt_errf(rc, err, errlen, "portd %s: %s", droce_rt_config_portd(cfg),
				     strerror(-rc));
	apply(cfg, &rep);
	return 0;
}

int
droce_rt_portd_attach(struct droce_rt_config *cfg, uint32_t *slot, uint32_t *slot_bits, char *err,
		      size_t errlen)
{
	const char *path = droce_rt_config_portd(cfg);
	struct droce_portd_rep rep;
	int fd, rc;

	fd = dial(cfg, err, errlen);
	if (fd < 0)
		return fd;
	rc = ask(fd, &rep, 0);
	if (rc == 0 && rep.status != 0)
		rc = rep.status;
	if (rc == 0 && (rep.slot_bits < 1 || rep.slot_bits > DROCE_PORTD_MAX_BITS ||
			rep.slot == 0 || rep.slot >= (1u << rep.slot_bits)))
		rc = -EPROTO;
	if (rc == 0 && cfg->shards > 1)
		rc = -EOPNOTSUPP;
	if (rc == 0 && droce_rt_config_host_mode(cfg))
		rc = -EOPNOTSUPP;
	if (rc != 0) {
		close(fd);
		return droce_rt_errf(rc, err, errlen, "portd %s: %s%s", path, strerror(-rc),
				     rc == -ENOSPC ? " (every slot is held by a program)" :
				     rc == -EOPNOTSUPP ?
						     " (a program under droce-portd runs one "
						     "shard, addr_mode own: or DROCE_PORTD=off)" :
						     "");
	}
	rep.memif_sock[sizeof(rep.memif_sock) - 1] = '\0';
	/* the port is the memif: the host's PCI devices are the service's business, not ours */
	if (strstr(cfg->eal, "--no-pci") == NULL &&
	    strlen(cfg->eal) + sizeof(" --no-pci") <= sizeof(cfg->eal))
		strcat(cfg->eal, " --no-pci");
	snprintf(cfg->vdev, sizeof(cfg->vdev), "net_memif0,role=client,socket=%s,id=%u",
		 rep.memif_sock, rep.slot);
	cfg->port[0] = '\0';
	apply(cfg, &rep);
	*slot = rep.slot;
	*slot_bits = rep.slot_bits;
	return fd;
}

int
droce_rt_portd_slot(const struct droce_rt *rt, uint32_t *slot, uint32_t *slot_bits)
{
	if (rt->portd_fd < 0)
		return -ENOENT;
	*slot = rt->portd_slot;
	*slot_bits = rt->portd_bits;
	return 0;
}

int
droce_rt_portd_listen(struct droce_rt *rt, uint64_t service_id, bool on)
{
	struct droce_portd_listen_msg m = { DROCE_PORTD_MAGIC,
					    on ? DROCE_PORTD_OP_LISTEN : DROCE_PORTD_OP_UNLISTEN,
					    service_id };

	if (rt->portd_fd < 0)
		return -ENOENT;
	/* one datagram: threads sending at once do not interleave */
	if (send(rt->portd_fd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		return -errno;
	return 0;
}
