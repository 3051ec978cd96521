/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-rawpp: options, port set-up, frame template, then the chosen role and mode. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "droce_rt_guard.h"
#include "rawpp.h"

#define RING_DESC    1024
#define LINK_WAIT_MS 10000
#define SPIN_POLLS   100

static volatile int stop_flag;

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	stop_flag = 1;
}

static void
usage(const char *prog)
{
	printf("usage: %s [EAL options] -- --role server|client [options]\n"
	       "  --mode pingpong|tput  ping-pong RTT (default) or one-way throughput\n"
	       "  --size N              frame bytes incl. FCS, %u..%u (default 64)\n"
	       "  -n N                  client: pings or frames to send\n"
	       "  -D SECONDS            stop after this long (server default 30, client 10)\n"
	       "  --warmup N            pings left out of the RTT statistics (default 100)\n"
	       "  --timeout-us N        ping-pong: give up on an echo after N us (default 10000)\n"
	       "  --idle-us N           sleep up to N us when idle, 0 = busy poll (default 0)\n"
	       "  --burst N             tput burst (default 32)\n"
	       "Uses ethdev port 0; the server stops at the client's end frame or at -D.\n",
	       prog, DROCE_RAWPP_MIN_SIZE, DROCE_RAWPP_MAX_SIZE);
}

static int
num(const char *s, double max, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && *v >= 0 && *v <= max ? 0 : -EINVAL;
}

static int
parse(int argc, char **argv, struct droce_rawpp_opts *o)
{
	bool role = false;
	const char *a, *val;
	double v;
	int i;

	memset(o, 0, sizeof(*o));
	o->mode = DROCE_RAWPP_PINGPONG;
	o->size = DROCE_RAWPP_MIN_SIZE;
	o->warmup = 100;
	o->timeout_ns = 10000000;
	o->burst = 32;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(argv[0]);
			exit(0);
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "droce-rawpp: %s needs a value (see --help)\n", a);
			return -EINVAL;
		}
		val = argv[++i];
		if (strcmp(a, "--role") == 0) {
			role = true;
			if (strcmp(val, "server") == 0)
				o->role = DROCE_RAWPP_SERVER;
			else if (strcmp(val, "client") == 0)
				o->role = DROCE_RAWPP_CLIENT;
			else
				goto bad;
		} else if (strcmp(a, "--mode") == 0) {
			if (strcmp(val, "pingpong") == 0)
				o->mode = DROCE_RAWPP_PINGPONG;
			else if (strcmp(val, "tput") == 0)
				o->mode = DROCE_RAWPP_TPUT;
			else
				goto bad;
		} else if (strcmp(a, "--size") == 0) {
			if (num(val, DROCE_RAWPP_MAX_SIZE, &v) != 0 || v < DROCE_RAWPP_MIN_SIZE)
				goto bad;
			o->size = (uint32_t)v;
		} else if (strcmp(a, "-n") == 0) {
			if (num(val, 1e12, &v) != 0 || v < 1)
				goto bad;
			o->iters = (uint64_t)v;
		} else if (strcmp(a, "-D") == 0) {
			if (num(val, 86400, &v) != 0 || v <= 0)
				goto bad;
			o->duration_ns = (uint64_t)(v * 1e9);
		} else if (strcmp(a, "--warmup") == 0) {
			if (num(val, 1e9, &v) != 0)
				goto bad;
			o->warmup = (uint64_t)v;
		} else if (strcmp(a, "--timeout-us") == 0) {
			if (num(val, 10e6, &v) != 0 || v < 1)
				goto bad;
			o->timeout_ns = (uint64_t)(v * 1e3);
		} else if (strcmp(a, "--idle-us") == 0) {
			if (num(val, 100000, &v) != 0)
				goto bad;
			o->idle_us = (uint32_t)v;
		} else if (strcmp(a, "--burst") == 0) {
			if (num(val, 512, &v) != 0 || v < 1)
				goto bad;
			o->burst = (uint32_t)v;
		} else {
			fprintf(stderr, "droce-rawpp: unknown option %s (see --help)\n", a);
			return -EINVAL;
		}
	}
	if (!role) {
		fprintf(stderr, "droce-rawpp: --role server|client is required\n");
		return -EINVAL;
	}
	if (o->duration_ns == 0)
		o->duration_ns = (o->role == DROCE_RAWPP_SERVER ? 30 : 10) * 1000000000ull;
	return 0;
bad:
	fprintf(stderr, "droce-rawpp: %s: bad value '%s' (see --help)\n", a, val);
	return -EINVAL;
}

void
droce_rawpp_frame_init(uint8_t *buf, const struct droce_rawpp_opts *o)
{
	static const uint8_t mac_c[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	static const uint8_t mac_s[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	uint32_t len = o->size - DROCE_RAWPP_FCS;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + DROCE_RAWPP_OFF_IP);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(buf + DROCE_RAWPP_OFF_UDP);
	bool client = o->role == DROCE_RAWPP_CLIENT;

	memset(buf, 0, len);
	memcpy(buf, client ? mac_s : mac_c, 6);
	memcpy(buf + 6, client ? mac_c : mac_s, 6);
	*(uint16_t *)(buf + 12) = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0x02; /* ECT(0): droce-netem's RED may mark CE */
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - DROCE_RAWPP_OFF_IP));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(client ? 0x0A000001 : 0x0A000002);
	ip->dst_addr = rte_cpu_to_be_32(client ? 0x0A000002 : 0x0A000001);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(DROCE_RAWPP_UDP_PORT);
	udp->dst_port = rte_cpu_to_be_16(DROCE_RAWPP_UDP_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - DROCE_RAWPP_OFF_UDP));
	buf[DROCE_RAWPP_OFF_TYPE] = DROCE_RAWPP_DATA;
}

void
droce_rawpp_idle(uint32_t *empty_polls, uint32_t idle_us)
{
	struct timespec ts;

	if (idle_us == 0 || ++*empty_polls < SPIN_POLLS) {
		rte_pause();
		return;
	}
	ts.tv_sec = 0;
	ts.tv_nsec = (long)idle_us * 1000;
	nanosleep(&ts, NULL);
}

static int
port_init(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	struct rte_eth_link link;
	uint16_t nrx = RING_DESC, ntx = RING_DESC;
	int rc, ms;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, nrx, (unsigned int)rte_socket_id(), NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, ntx, (unsigned int)rte_socket_id(), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0) {
		fprintf(stderr, "droce-rawpp: port %u set-up failed: %s\n", port,
			rte_strerror(-rc));
		return rc;
	}
	rte_eth_promiscuous_enable(port);
	/* memif reports link up once the peer is connected: do not send into the void. */
	for (ms = 0; ms < LINK_WAIT_MS && !stop_flag; ms++) {
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP) {
			printf("rawpp: port %u link up\n", port);
			fflush(stdout);
			return 0;
		}
		rte_delay_us_sleep(1000);
	}
	fprintf(stderr,
		"droce-rawpp: port %u link still down after %d ms (is the peer running, "
		"with the same memif socket name?)\n",
		port, LINK_WAIT_MS);
	return -ETIMEDOUT;
}

void
droce_rawpp_send_end(struct droce_rawpp_ctx *c, uint64_t count)
{
	/* Up to a second: the peer may have a full ring to drain. */
	uint64_t give_up = rte_rdtsc() + c->hz, faults = 0;
	/* The peer leaves at the first end frame, and memif may free its rings under our next
	 * burst (pmd-glue/droce_rt_guard.h): these bursts are guarded, the measured ones not. */
	bool guard = droce_rt_guard_init() == 0;
	struct rte_eth_link link;
	struct rte_mbuf *m;
	int i;

	/* A few copies, 200 us apart: a droce-netem in between may lose some. */
	for (i = 0; i < DROCE_RAWPP_END_COPIES; i++) {
		m = rte_pktmbuf_alloc(c->mp);
		if (m == NULL)
			return;
		m->data_len = (uint16_t)(c->o.size - DROCE_RAWPP_FCS);
		m->pkt_len = m->data_len;
		*rte_pktmbuf_mtod_offset(m, uint8_t *, DROCE_RAWPP_OFF_TYPE) = DROCE_RAWPP_END;
		droce_rawpp_put64(m, DROCE_RAWPP_OFF_SEQ, count);
		while ((guard ? droce_rt_guard_tx(c->o.port, 0, &m, 1, &faults) :
				rte_eth_tx_burst(c->o.port, 0, &m, 1)) == 0) {
			/* The peer leaves at the first end frame: stop once its link is down. */
			if (rte_rdtsc() > give_up || *c->stop ||
			    rte_eth_link_get_nowait(c->o.port, &link) != 0 ||
			    link.link_status == RTE_ETH_LINK_DOWN) {
				rte_pktmbuf_free(m);
				return;
			}
			rte_delay_us_sleep(50);
		}
		if (faults != 0)
			return; /* the peer left inside that burst */
		rte_delay_us_sleep(200);
	}
}

/* Write the frame template into every mbuf once, so the hot loops only touch seq and time. */
static void
prefill(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct rte_mbuf *m = obj;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	droce_rawpp_frame_init((uint8_t *)m->buf_addr + RTE_PKTMBUF_HEADROOM, arg);
}

int
main(int argc, char **argv)
{
	struct rte_mempool *rx_mp;
	struct droce_rawpp_ctx c;
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "droce-rawpp: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	argv[ret] = argv[0];
	memset(&c, 0, sizeof(c));
	if (parse(argc - ret, argv + ret, &c.o) != 0) {
		droce_rt_guard_eal_cleanup();
		return 2;
	}
	if (rte_eth_dev_count_avail() < 1) {
		fprintf(stderr,
			"droce-rawpp: no port (give --vdev=net_memif0,role=client,socket=/x)\n");
		droce_rt_guard_eal_cleanup();
		return 2;
	}
	c.o.port = 0;
	c.hz = rte_get_tsc_hz();
	c.stop = &stop_flag;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	/* Two pools: received frames land in rx_mp, so tx mbufs keep the prefilled template. */
	c.mp = rte_pktmbuf_pool_create("droce_rawpp_tx", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	rx_mp = rte_pktmbuf_pool_create("droce_rawpp_rx", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					(int)rte_socket_id());
	if (c.mp == NULL || rx_mp == NULL) {
		fprintf(stderr, "droce-rawpp: mbuf pool failed: %s\n", rte_strerror(rte_errno));
		droce_rt_guard_eal_cleanup();
		return 2;
	}
	rte_mempool_obj_iter(c.mp, prefill, &c.o);
	ret = port_init(c.o.port, rx_mp);
	if (ret == 0) {
		if (c.o.mode == DROCE_RAWPP_PINGPONG)
			ret = c.o.role == DROCE_RAWPP_CLIENT ? droce_rawpp_pingpong_client(&c) :
							       droce_rawpp_pingpong_server(&c);
		else
			ret = c.o.role == DROCE_RAWPP_CLIENT ? droce_rawpp_tput_client(&c) :
							       droce_rawpp_tput_server(&c);
	}
	droce_rt_guard_stop(c.o.port); /* memif: not at once with the peer's departure */
	rte_eth_dev_close(c.o.port);
	rte_mempool_free(c.mp);
	rte_mempool_free(rx_mp);
	droce_rt_guard_eal_cleanup();
	return ret == 0 ? 0 : 1;
}
