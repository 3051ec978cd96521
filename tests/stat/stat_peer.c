/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One side of a live session for the droce-stat test: opens the runtime over net_memif, learns
 * the peer by ARP, sends NDROP UDP datagrams to port 53 (the peer counts each as
 * rt.drop_not_roce_port), prints "ready", then keeps the loop running until STOPFILE exists
 * (bounded by an alarm). The server drives the loop inline; the client with `lcore` runs it on
 * a poll lcore while its main thread only waits, so telemetry is served both ways. With `pause`
 * (inline only) the process then stops polling, prints "paused" and closes once STOPFILE.2
 * exists: telemetry meanwhile answers with the last snapshot, marked stale.
 * DROCE_* variables (DROCE_CAPTURE ...) apply over the settings below.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_rt.h"

enum { TIME_BOUND_S = 40 };

static bool
link_is_up(void *arg)
{
	return droce_rt_link_up(arg);
}

static bool
stop_file(void *arg)
{
	return access(arg, F_OK) == 0;
}

static uint32_t
udp53(uint8_t f[64], const uint8_t dst[6], const uint8_t src[6], uint8_t me, uint8_t peer)
{
	uint32_t sum = 0;
	unsigned int i;

	memset(f, 0, 64);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 3] = 20 + 8 + 4; /* total length */
	f[14 + 8] = 64;
	f[14 + 9] = 17;
	f[14 + 12] = 198;
	f[14 + 13] = 19;
	f[14 + 14] = 7;
	f[14 + 15] = me;
	f[14 + 16] = 198;
	f[14 + 17] = 19;
	f[14 + 18] = 7;
	f[14 + 19] = peer;
	for (i = 0; i < 20; i += 2) /* RFC 791 header checksum */
		sum += (uint32_t)f[14 + i] << 8 | f[14 + i + 1];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = ~((sum & 0xffff) + (sum >> 16)) & 0xffff;
	f[14 + 10] = (uint8_t)(sum >> 8);
	f[14 + 11] = (uint8_t)sum;
	f[34 + 1] = 99;
	f[34 + 3] = 53;
	f[34 + 5] = 12;
	memcpy(f + 42, "stat", 4);
	return 60;
}

int
main(int argc, char **argv)
{
	struct droce_rt_config cfg;
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 198, 19, 7, 0 };
	uint8_t f[64], mac[6], peer[6];
	char err[256], v[256];
	struct droce_rt *rt;
	bool server, lcore, pause;
	char stop2[512];
	struct timespec ts = { 0, 20000000 };
	unsigned int waited;
	unsigned long ndrop, i;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s server|client SOCKET NDROP STOPFILE [lcore|pause]\n",
			argv[0]);
		return 2;
	}
	alarm(TIME_BOUND_S);
	server = strcmp(argv[1], "server") == 0;
	lcore = argc == 6 && strcmp(argv[5], "lcore") == 0;
	pause = argc == 6 && strcmp(argv[5], "pause") == 0;
	snprintf(stop2, sizeof(stop2), "%s.2", argv[4]);
	ndrop = strtoul(argv[3], NULL, 10);
	droce_rt_config_defaults(&cfg);
	snprintf(v, sizeof(v), "net_memif0,role=%s,socket=%s,mac=02:00:00:00:00:0%d",
		 server ? "server" : "client", argv[2], server ? 1 : 2);
	if (droce_rt_config_set(&cfg, "vdev", v, err, sizeof(err)) != 0 ||
	    droce_rt_config_set(&cfg, "eal", "--no-huge -m 128 --no-pci", err, sizeof(err)) != 0 ||
	    droce_rt_config_set(&cfg, "ipv4", server ? "198.19.7.1/24" : "198.19.7.2/24", err,
				sizeof(err)) != 0 ||
	    droce_rt_config_set(&cfg, "lcores", server ? "1" : (lcore ? "0,1" : "0"), err,
				sizeof(err)) != 0 ||
	    droce_rt_config_load_env(&cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "config: %s\n", err);
		return 1;
	}
	cfg.mbufs = 4095;
	cfg.idle_spins = 64;
	cfg.arp_retry_ms = 100;
	rt = droce_rt_open_config(&cfg, argv[0], err, sizeof(err));
	if (rt == NULL) {
		fprintf(stderr, "%s: open: %s\n", argv[1], err);
		return 1;
	}
	if (lcore && droce_rt_start(rt) != 0) {
		fprintf(stderr, "%s: start: %s\n", argv[1], droce_rt_strerror(rt));
		goto fail;
	}
	/* Not fatal: a memif server has been seen here passing traffic with its link still
	 * reported down; resolving the peer below is the real test of the path. */
	if (droce_rt_run_until(rt, link_is_up, rt, 5000) != 0)
		fprintf(stderr, "%s: link not reported up after 5 s\n", argv[1]);
	gid[15] = server ? 2 : 1;
	if (droce_rt_resolve(rt, gid, peer, 10000) != 0) {
		fprintf(stderr, "%s: resolve: %s\n", argv[1], droce_rt_strerror(rt));
		goto fail;
	}
	droce_rt_mac(rt, mac);
	for (i = 0; i < ndrop; i++) {
		udp53(f, peer, mac, server ? 1 : 2, server ? 2 : 1);
		if (droce_rt_exception_send(rt, f, 60) != 0) {
			fprintf(stderr, "%s: exception send failed\n", argv[1]);
			goto fail;
		}
	}
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	if (droce_rt_run_until(rt, stop_file, argv[4], (TIME_BOUND_S - 5) * 1000) != 0) {
		fprintf(stderr, "%s: no stop file within the bound\n", argv[1]);
		goto fail;
	}
	if (pause) {
		printf("paused\n");
		fflush(stdout);
		for (waited = 0; !stop_file(stop2); waited++) {
			if (waited > 1000) {
				fprintf(stderr, "%s: no %s within the bound\n", argv[1], stop2);
				goto fail;
			}
			nanosleep(&ts, NULL);
		}
	}
	droce_rt_close(rt);
	return 0;
fail:
	droce_rt_close(rt);
	return 1;
}
