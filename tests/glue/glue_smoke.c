/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two processes over net_memif, each a droce runtime (--no-huge, own file prefix, 198.18.0.0/15):
 *   glue_smoke arp   ARP between the processes (resolve both ways, announce on link-up) and the
 *                    "peer unreachable" verdict for an address nobody holds.
 *                    The server is configured through DROCE_CONFIG + DROCE_* variables and
 *                    starts 300 ms after the client (whose memif start waits for it).
 *                    IPv6 (2001:2::/48, RFC 5180 benchmarking) neighbours by ND, likewise.
 *   glue_smoke rc    RC between the processes: RDMA WRITEs and SENDs, bytes checked at the
 *                    receiver; the server drives its loop inline, the client runs the loop on
 *                    its own lcore and reaches the engine through droce_rt_call().
 *   glue_smoke rc6   the same over the IPv6 GIDs (RoCEv2 over IPv6), with bursts of 2,
 *                    32-descriptor rings, and the client started before the server.
 *   glue_smoke lat   a measurement, not a test: 64-byte RC SEND ping-pong RTT, both sides
 *                    inline; DROCE_IDLE_SPINS / DROCE_IDLE_SLEEP_US apply to it.
 *   glue_smoke latcall  the same with the client's loop on a poll lcore, every post and CQ
 *                    poll a droce_rt_call() round trip.
 * The parent forks the server and the client, relays nothing but exits with their verdict, and
 * kills them (by PID) if they overrun the time bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "droce_rt.h"

#include "glue_smoke.h"

static struct droce_rt *open_one; /* closed by child() when a check bailed out */

static int
wait_byte(const struct role *r, unsigned int ms)
{
	char c;

	for (; ms > 0; ms--) {
		if (read(r->in, &c, 1) == 1)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

void
close_rt(struct droce_rt *rt)
{
	droce_rt_close(rt);
	open_one = NULL;
}

/*
 * The same configuration through the public path: part of it in a file named by DROCE_CONFIG,
 * the rest in DROCE_* variables, one of which overrides the file.
 */
static struct droce_rt *
open_from_env(const struct role *r, const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	char path[64], lcores[8];
	struct droce_rt *rt;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/droce_smoke_%ld.conf", (long)getpid());
	f = fopen(path, "w");
	if (f == NULL)
		return NULL;
	fprintf(f,
		"# glue_smoke %s\neal = %s\nvdev = %s\nipv4 = 198.18.0.77/24\nmbufs = 8191\n"
		"idle_spins = %u\nidle_sleep_us = %u\narp_retry_ms = %u\narp_tries = %u\n",
		r->name, cfg->eal, cfg->vdev, cfg->idle_spins, cfg->idle_sleep_us,
		cfg->arp_retry_ms, cfg->arp_tries);
	fclose(f);
	snprintf(lcores, sizeof(lcores), "%u", cfg->lcores[0]);
	setenv("DROCE_CONFIG", path, 1);
	setenv("DROCE_IPV4", r->server ? "198.18.0.1/24" : "198.18.0.2/24", 1);
	setenv("DROCE_IPV6", r->server ? "2001:2::1/64" : "2001:2::2/64", 1);
	setenv("DROCE_LCORES", lcores, 1);
	setenv("DROCE_MBUFS", "4095", 1);
	setenv("DROCE_EXCEPTION", "ring", 1);
	rt = droce_rt_open(NULL, r->name, err, errlen);
	unlink(path);
	if (rt != NULL && (droce_rt_config(rt)->mbufs != 4095 ||
			   droce_rt_config(rt)->ipv4[3] != (r->server ? 1 : 2) ||
			   droce_rt_config(rt)->arp_tries != cfg->arp_tries)) {
		snprintf(err, errlen, "file + environment did not give the expected configuration");
		droce_rt_close(rt);
		return NULL;
	}
	return rt;
}

struct droce_rt *
open_rt(const struct role *r, bool two_lcores, char *err, size_t errlen)
{
	struct droce_rt_config cfg;
	char v[256];

	droce_rt_config_defaults(&cfg);
	if (r->vdev != NULL)
		snprintf(v, sizeof(v), "%s", r->vdev);
	else
		snprintf(v, sizeof(v), "net_memif0,role=%s,socket=%s,mac=02:00:00:00:00:0%d",
			 r->server ? "server" : "client", r->socket, r->server ? 1 : 2);
	if (droce_rt_config_set(&cfg, "vdev", v, err, errlen) != 0 ||
	    droce_rt_config_set(&cfg, "eal", r->eal, err, errlen) != 0 ||
	    droce_rt_config_set(&cfg, "ipv4", r->server ? "198.18.0.1/24" : "198.18.0.2/24", err,
				errlen) != 0 ||
	    droce_rt_config_set(&cfg, "ipv6", r->server ? "2001:2::1/64" : "2001:2::2/64", err,
				errlen) != 0 ||
	    droce_rt_config_set(&cfg, "lcores", r->server ? "1" : (two_lcores ? "0,1" : "0"), err,
				errlen) != 0)
		return NULL;
	cfg.mbufs = 4095;
	cfg.idle_spins = 64;
	cfg.idle_sleep_us = 50;
	cfg.arp_retry_ms = 100;
	cfg.arp_tries = 3;
	cfg.seed = r->server ? 1 : 2;
	if (r->gid_index == 1) {
		/* rc6 also runs with the smallest bursts and rings: batches fill constantly */
		cfg.burst = 2;
		cfg.rx_desc = 32;
		cfg.tx_desc = 32;
	}
	if (r->apply_env && droce_rt_config_load_env(&cfg, err, errlen) != 0)
		return NULL;
	/* The memif client connects when its port starts. Usually the server comes first; with
	 * client_first the client does, and its start is retried until the server listens. */
	if (!r->server && !r->client_first && wait_byte(r, 10000) != 0) {
		snprintf(err, errlen, "server never came up");
		return NULL;
	}
	if (r->server && r->client_first)
		usleep(300000);
	if (r->via_env)
		open_one = open_from_env(r, &cfg, err, errlen);
	else
		open_one = droce_rt_open_config(&cfg, r->name, err, errlen);
	if (open_one != NULL && r->server && write(r->out, "R", 1) != 1) {
		close_rt(open_one);
		snprintf(err, errlen, "pipe");
	}
	if (open_one != NULL && !r->server && r->client_first && wait_byte(r, 10000) != 0) {
		close_rt(open_one);
		snprintf(err, errlen, "server never came up");
	}
	return open_one;
}

static bool
link_is_up(void *arg)
{
	return droce_rt_link_up(arg);
}

void
v4_gid(uint8_t gid[16], uint8_t last)
{
	static const uint8_t base[16] = { [10] = 0xff, 0xff, 198, 18, 0, 0 };

	memcpy(gid, base, 16);
	gid[15] = last;
}

void
v6_gid(uint8_t gid[16], uint8_t last)
{
	static const uint8_t base[16] = { 0x20, 0x01, 0x00, 0x02 }; /* 2001:2::/48 */

	memcpy(gid, base, 16);
	gid[15] = last;
}

/* Both: link up, then the peer's MAC by ARP and by IPv6 neighbour discovery. */
int
meet(struct role *r, struct droce_rt *rt, uint8_t peer_mac[6])
{
	uint8_t gid[16], mac6[6];
	int rc;

	CHECK(droce_rt_run_until(rt, link_is_up, rt, 10000) == 0, "link not up in 10 s");
	/* Both loops running before either asks: over af_packet the link is up long before the
	 * peer process is (the requests would go unanswered). */
	CHECK(write(r->out, "M", 1) == 1, "pipe");
	CHECK(droce_rt_run_until(rt, peer_done, r, 10000) == 0, "peer never started");
	v4_gid(gid, r->server ? 2 : 1);
	rc = droce_rt_resolve(rt, gid, peer_mac, 5000);
	CHECK(rc == 0, "resolve peer: %s (%s)", strerror(-rc), droce_rt_strerror(rt));
	CHECK(peer_mac[5] == (r->server ? 2 : 1) && peer_mac[0] == 2, "peer MAC %02x:..:%02x",
	      peer_mac[0], peer_mac[5]);
	v6_gid(gid, r->server ? 2 : 1);
	rc = droce_rt_resolve(rt, gid, mac6, 5000);
	CHECK(rc == 0, "resolve peer by ND: %s (%s)", strerror(-rc), droce_rt_strerror(rt));
	CHECK(memcmp(mac6, peer_mac, 6) == 0, "ND and ARP disagree on the peer's MAC");
	return 0;
}

struct exc_wait {
	struct droce_rt *rt;
	uint8_t buf[2][128];
	uint32_t len[2];
	unsigned int got;
};

static bool
exc_counted(void *arg)
{
	uint64_t v = 0;

	return droce_rt_counter(arg, "rt.drop_not_roce_port", &v) == 0 && v == 1;
}

bool
peer_done(void *arg)
{
	const struct role *r = arg;
	char c;

	return read(r->in, &c, 1) == 1;
}

void
print_counters(const struct role *r, struct droce_rt *rt, const char *prefix)
{
	struct droce_rt_counter c[256];
	int n = droce_rt_counters(rt, c, 256), i;

	for (i = 0; i < n && i < 256; i++)
		if (c[i].value != 0 && strncmp(c[i].name, prefix, strlen(prefix)) == 0)
			printf("%s: %s = %llu\n", r->name, c[i].name,
			       (unsigned long long)c[i].value);
}

/* A UDP/IPv4 datagram to port dport (not RoCE) from 198.18.0.x to the peer, padded to 60. */
static uint32_t
udp_frame(uint8_t *f, const uint8_t dst[6], const uint8_t src[6], bool server, uint16_t dport)
{
	memset(f, 0, 64);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 3] = 28 + 4; /* total length */
	f[14 + 8] = 64;
	f[14 + 9] = 17;
	f[14 + 12] = 198;
	f[14 + 13] = 18;
	f[14 + 15] = server ? 1 : 2;
	f[14 + 16] = 198;
	f[14 + 17] = 18;
	f[14 + 19] = server ? 2 : 1;
	f[34 + 2] = (uint8_t)(dport >> 8);
	f[34 + 3] = (uint8_t)dport;
	f[34 + 5] = 12;
	memcpy(f + 42, "droce", 5);
	return 60;
}

static bool
exc_arrived(void *arg)
{
	struct exc_wait *w = arg;
	int n = droce_rt_exception_recv(w->rt, w->buf[w->got], sizeof(w->buf[0]));

	if (n > 0)
		w->len[w->got++] = (uint32_t)n;
	return w->got == 2;
}

/*
 * Exception path: the client sends a DNS-port datagram and an LLDP frame; the server (exception
 * = ring) hands both to the application byte for byte, then answers with a datagram the client
 * (exception = drop) counts as rt.drop_not_roce_port.
 */
static int
exceptions(const struct role *r, struct droce_rt *rt, const uint8_t peer_mac[6])
{
	static const uint8_t lldp_dst[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e };
	struct exc_wait w = { .rt = rt };
	uint8_t f[2][64], mac[6];
	uint64_t v = 0;

	droce_rt_mac(rt, mac);
	udp_frame(f[0], peer_mac, mac, r->server, 53);
	memset(f[1], 0, 64);
	memcpy(f[1], lldp_dst, 6);
	memcpy(f[1] + 6, mac, 6);
	f[1][12] = 0x88;
	f[1][13] = 0xcc;
	if (!r->server) {
		CHECK(droce_rt_exception_send(rt, f[0], 60) == 0, "exception send");
		CHECK(droce_rt_exception_send(rt, f[1], 60) == 0, "exception send");
		CHECK(droce_rt_exception_send(rt, f[0], 4096) == -EMSGSIZE, "oversize accepted");
		CHECK(droce_rt_run_until(rt, exc_counted, rt, 5000) == 0,
		      "server's datagram not counted as a drop");
		return 0;
	}
	CHECK(droce_rt_run_until(rt, exc_arrived, &w, 5000) == 0, "%u of 2 exception frames",
	      w.got);
	/* what the client built, seen from its side: swap roles to rebuild the expected bytes */
	udp_frame(f[0], mac, peer_mac, false, 53);
	memcpy(f[1] + 6, peer_mac, 6);
	CHECK(w.len[0] == 60 && memcmp(w.buf[0], f[0], 60) == 0, "datagram differs");
	CHECK(w.len[1] == 60 && memcmp(w.buf[1], f[1], 60) == 0, "LLDP frame differs");
	CHECK(droce_rt_counter(rt, "rt.exception", &v) == 0 && v == 2, "rt.exception %llu",
	      (unsigned long long)v);
	udp_frame(f[0], peer_mac, mac, true, 53);
	CHECK(droce_rt_exception_send(rt, f[0], 60) == 0, "exception send");
	return 0;
}

static int
run_arp(struct role *r)
{
	char err[256] = "";
	struct droce_rt *rt = open_rt(r, false, err, sizeof(err));
	uint8_t mac[6], gid[16];
	uint64_t v = 0;
	char done = 1;
	int rc;

	CHECK(rt != NULL, "open: %s", err);
	rc = meet(r, rt, mac);
	if (rc == 0 && r->server) {
		/* Nobody holds .99: three requests 100 ms apart, then the verdict. */
		v4_gid(gid, 99);
		int rc99 = droce_rt_resolve(rt, gid, mac, 5000);

		CHECK(rc99 == -EHOSTUNREACH, "resolve .99 gave %d", rc99);
		CHECK(strcmp(droce_rt_strerror(rt), "peer unreachable (no ARP reply from "
						    "198.18.0.99 after 3 tries)") == 0,
		      "message: %s", droce_rt_strerror(rt));
		CHECK(droce_rt_counter(rt, "neigh.unreachable", &v) == 0 && v == 1,
		      "neigh.unreachable %llu", (unsigned long long)v);
		CHECK(droce_rt_counter(rt, "neigh.garp_tx", &v) == 0 && v >= 1,
		      "no gratuitous ARP");
		/* three for .99; the client's own request may have taught us its MAC already */
		CHECK(droce_rt_counter(rt, "neigh.arp_req_tx", &v) == 0 && v >= 3,
		      "arp_req_tx %llu", (unsigned long long)v);
		CHECK(droce_rt_counter(rt, "neigh.na_rx", &v) == 0 && v >= 1 &&
			      droce_rt_counter(rt, "neigh.na_tx", &v) == 0 && v >= 1,
		      "no ND exchange");
		v6_gid(gid, 0x99);
		rc99 = droce_rt_resolve(rt, gid, mac, 5000);
		CHECK(rc99 == -EHOSTUNREACH, "resolve 2001:2::99 gave %d", rc99);
		CHECK(strcmp(droce_rt_strerror(rt), "peer unreachable (no Neighbor Advertisement "
						    "from 2001:2::99 after 3 tries)") == 0,
		      "message: %s", droce_rt_strerror(rt));
	}
	if (rc == 0)
		rc = exceptions(r, rt, mac);
	/* Keep answering until the peer is done too. */
	if (rc == 0) {
		CHECK(write(r->out, &done, 1) == 1, "pipe");
		CHECK(droce_rt_run_until(rt, peer_done, r, 10000) == 0, "peer not done");
	}
	print_counters(r, rt, "neigh.");
	close_rt(rt);
	return rc;
}

static int
child(struct role *r, const char *mode)
{
	int rc;

	alarm(TIME_BOUND_S);
	fcntl(r->in, F_SETFL, O_NONBLOCK);
	if (strcmp(mode, "arp") == 0) {
		r->via_env = r->server;
		r->client_first = r->vdev == NULL; /* memif: the client's start waits */
		rc = run_arp(r);
	} else if (strncmp(mode, "lat", 3) == 0) {
		r->apply_env = true;
		r->lcore = !r->server && strcmp(mode, "latcall") == 0;
		rc = run_lat(r);
	} else {
		r->gid_index = strcmp(mode, "rc6") == 0 ? 1 : 0;
		r->client_first = r->gid_index == 1 && r->vdev == NULL;
		rc = run_rc(r);
	}
	if (open_one != NULL)
		close_rt(open_one); /* EAL's runtime directory goes too */
	return rc;
}

int
main(int argc, char **argv)
{
	struct role roles[2] = {
		{ .name = "server", .server = true },
		{ .name = "client", .server = false },
	};
	int a2b[2], b2a[2], status, fails = 0, i, pending = 2;
	const char *mode = argc > 1 ? argv[1] : "arp";
	/* Optional EAL words, e.g. "-m 128 --no-pci" to run on hugepages (--in-memory added). */
	const char *eal = argc > 2 ? argv[2] : "--no-huge -m 128 --no-pci --no-telemetry";
	pid_t pid[2];
	time_t end;

	if ((argc != 2 && argc != 3 && argc != 5) ||
	    (strcmp(mode, "arp") != 0 && strcmp(mode, "rc") != 0 && strcmp(mode, "rc6") != 0 &&
	     strcmp(mode, "lat") != 0 && strcmp(mode, "latcall") != 0)) {
		fprintf(stderr,
			"usage: %s arp|rc|rc6|lat|latcall [eal words [server vdev client "
			"vdev]]\n"
			"  (other vdevs: their MACs must be 02:00:00:00:00:01 and :02)\n",
			argv[0]);
		return 2;
	}
	if (pipe(a2b) != 0 || pipe(b2a) != 0)
		return 2;
	roles[0].out = a2b[1];
	roles[0].in = b2a[0];
	roles[1].out = b2a[1];
	roles[1].in = a2b[0];
	for (i = 0; i < 2; i++) {
		snprintf(roles[i].socket, sizeof(roles[i].socket), "/droce_smoke_%ld",
			 (long)getpid());
		roles[i].eal = eal;
		roles[i].vdev = argc == 5 ? argv[3 + i] : NULL;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < 2; i++) {
		fflush(NULL);
		pid[i] = fork();
		if (pid[i] < 0)
			return 2;
		if (pid[i] == 0)
			_exit(child(&roles[i], mode));
	}
	end = time(NULL) + TIME_BOUND_S + 5;
	while (pending > 0) {
		for (i = 0; i < 2; i++) {
			if (pid[i] == 0 || waitpid(pid[i], &status, WNOHANG) != pid[i])
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				fprintf(stderr, "%s failed (status %#x)\n", roles[i].name, status);
				fails++;
			}
			pid[i] = 0;
			pending--;
		}
		if (pending > 0 && time(NULL) > end) {
			for (i = 0; i < 2; i++)
				if (pid[i] != 0) {
					fprintf(stderr, "%s overran %d s: killed\n", roles[i].name,
						TIME_BOUND_S);
					kill(pid[i], SIGKILL);
					waitpid(pid[i], &status, 0);
					pid[i] = 0;
					pending--;
					fails++;
				}
		}
		usleep(20000);
	}
	printf("glue_smoke %s: %s\n", mode, fails ? "FAIL" : "ok");
	return fails ? 1 : 0;
}
