/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program's side of droce-portd (pmd-glue/droce_rt_portd.c), no EAL: the key's choices; a
 * service named by path that nobody listens on is an error, auto without a service is the
 * one-process mode; against a service (a thread answering on a socket in a temporary
 * directory) the configuration is pointed at its memif and takes its addresses; a refusal
 * (every slot held) and a second shard are errors saying why.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "droce_portd_proto.h"
#include "droce_rt_config.h"
#include "droce_rt_portd.h"
#include "droce_test.h"

struct fake {
	int lfd;
	int32_t status;
	int got_pid;
};

static void *
serve(void *arg)
{
	struct fake *f = arg;
	struct droce_portd_req req;
	struct droce_portd_rep rep;
	int fd = accept(f->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	if (recv(fd, &req, sizeof(req), 0) == sizeof(req) && req.magic == DROCE_PORTD_MAGIC)
		f->got_pid = req.pid;
	memset(&rep, 0, sizeof(rep));
	rep.magic = DROCE_PORTD_MAGIC;
	rep.status = f->status;
	rep.slot = 3;
	rep.slot_bits = 2;
	rep.mtu = 1500;
	memcpy(rep.mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(rep.ipv4, "\xc6\x12\x00\x01", 4);
	rep.ipv4_prefix = 24;
	snprintf(rep.memif_sock, sizeof(rep.memif_sock), "/x.memif");
	send(fd, &rep, sizeof(rep), 0);
	/* the program holds the connection: so does this end until it closes */
	recv(fd, &req, sizeof(req), 0);
	close(fd);
	return NULL;
}

static int
listen_at(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CU_ASSERT_EQUAL_FATAL(listen(fd, 1), 0);
	return fd;
}

static void
test_key(void)
{
	struct droce_rt_config cfg;
	char err[256];
	uint32_t slot, bits;

	droce_rt_config_defaults(&cfg);
	CU_ASSERT_STRING_EQUAL(cfg.portd, "auto");
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "portd", "off", err, sizeof(err)), 0);
	CU_ASSERT_PTR_NULL(droce_rt_config_portd(&cfg));
	CU_ASSERT_EQUAL(droce_rt_portd_attach(&cfg, &slot, &bits, err, sizeof(err)), -ENOENT);
	/* no address of its own: valid only when a service is named */
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(
		droce_rt_config_set(&cfg, "portd", "/nonexistent/portd.sock", err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(droce_rt_config_portd(&cfg), "/nonexistent/portd.sock");
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), 0);
	err[0] = '\0';
	CU_ASSERT_EQUAL(droce_rt_portd_attach(&cfg, &slot, &bits, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "start droce-portd"));
	/* auto: the well-known socket, when there is one */
	droce_rt_config_defaults(&cfg);
	if (access(DROCE_PORTD_SOCK, F_OK) != 0)
		CU_ASSERT_PTR_NULL(droce_rt_config_portd(&cfg));
}

static void
with_service(int32_t status, uint32_t shards, int want)
{
	struct droce_rt_config cfg;
	struct fake f = { -1, status, 0 };
	char dir[] = "/tmp/droce_portd_unit.XXXXXX", path[64], err[256];
	uint32_t slot = 0, bits = 0;
	pthread_t th;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/portd.sock", dir);
	f.lfd = listen_at(path);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, serve, &f), 0);
	droce_rt_config_defaults(&cfg);
	cfg.shards = shards;
	snprintf(cfg.portd, sizeof(cfg.portd), "%s", path);
	err[0] = '\0';
	fd = droce_rt_portd_attach(&cfg, &slot, &bits, err, sizeof(err));
	if (want == 0) {
		CU_ASSERT(fd >= 0);
		CU_ASSERT_EQUAL(slot, 3);
		CU_ASSERT_EQUAL(bits, 2);
		CU_ASSERT_STRING_EQUAL(cfg.vdev, "net_memif0,role=client,socket=/x.memif,id=3");
		CU_ASSERT(cfg.has_ipv4 && cfg.ipv4[0] == 198 && cfg.ipv4[3] == 1);
		CU_ASSERT_EQUAL(cfg.ipv4_prefix, 24);
		CU_ASSERT(cfg.has_mac && cfg.mac[5] == 1);
		CU_ASSERT_EQUAL(cfg.mtu, 1500);
		CU_ASSERT(cfg.path_mtu + 92 <= 1500);
		CU_ASSERT_EQUAL(f.got_pid, (int)getpid());
	} else {
		CU_ASSERT_EQUAL(fd, want);
		CU_ASSERT(strlen(err) > 0);
	}
	if (fd >= 0)
		close(fd);
	else
		shutdown(f.lfd, SHUT_RDWR);
	pthread_join(th, NULL);
	close(f.lfd);
	unlink(path);
	rmdir(dir);
}

static void
test_attach(void)
{
	with_service(0, 1, 0);
}

static void
test_refused(void)
{
	with_service(-ENOSPC, 1, -ENOSPC);
	with_service(0, 2, -EOPNOTSUPP);
}

DROCE_TEST_MAIN("rt_portd", DROCE_TEST(test_key), DROCE_TEST(test_attach), DROCE_TEST(test_refused))
