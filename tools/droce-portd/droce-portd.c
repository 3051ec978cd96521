/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-portd: owns one DPDK port and shares it between programs, each running its own droce
 * engine. Frames from the port go to a program by the BTH DestQP (each program holds a slot:
 * the QPNs with its top bits, stack/droce_portd.h) over one memif per program; the programs'
 * frames go out the port. The service answers ARP for the port's address and copies the ARP it
 * hears to every program, whose own neighbour caches resolve their peers. A program's memory
 * never passes through here: its engine checks every rkey. See README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_neigh.h"
#include "droce_portd.h"
#include "droce_rt_guard.h"
#include "droce_rt_port.h"
#include "portd_ctl.h"
#include "portd_opts.h"

enum { BURST = 32, DESC = 1024 };

struct portd {
	struct portd_opts o;
	struct portd_ctl ctl;
	uint16_t port;			 /* the NIC */
	uint16_t memif[PORTD_MAX_SLOTS]; /* slot s's memif port */
	uint8_t mac[6];
	struct rte_mempool *pool;
	uint64_t drops[DROCE_PORTD_DROP_COUNT];
	uint64_t to_prog[PORTD_MAX_SLOTS], from_prog[PORTD_MAX_SLOTS];
	uint64_t arp_answered, arp_copied, faults;
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void
on_ctl(void *ctx, unsigned int slot, int pid, bool joined)
{
	struct portd *d = ctx;
	uint32_t first, last;

	droce_portd_slot_range(&d->ctl.slots, slot, &first, &last);
	if (joined) {
		d->to_prog[slot] = d->from_prog[slot] = 0;
		printf("droce-portd: slot %u (QPNs 0x%06x-0x%06x) to pid %d\n", slot, first, last,
		       pid);
	} else {
		printf("droce-portd: slot %u freed: pid %d gone (frames to it %" PRIu64
		       ", from it %" PRIu64 ")\n",
		       slot, pid, d->to_prog[slot], d->from_prog[slot]);
	}
	fflush(stdout);
}

static void
drop(struct portd *d, enum droce_portd_drop r, struct rte_mbuf **m, unsigned int n)
{
	d->drops[r] += n;
	rte_pktmbuf_free_bulk(m, n);
}

/* An ARP frame from the port: requests for our address answered here; every ARP copied to each
 * program (its neighbour cache learns the peers; our own address it never asks for). */
static void
port_arp(struct portd *d, struct rte_mbuf *m)
{
	struct droce_neigh_msg msg;
	struct rte_mbuf *c;
	unsigned int s;
	uint16_t len;

	if (droce_neigh_parse(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), &msg) == 0 &&
	    msg.is_arp && msg.op == DROCE_ARP_REQUEST &&
	    memcmp(msg.target_ip + 12, d->o.ipv4, 4) == 0) {
		c = rte_pktmbuf_alloc(d->pool);
		if (c != NULL) {
			len = (uint16_t)droce_arp_build(
				rte_pktmbuf_mtod(c, uint8_t *), DROCE_ARP_REPLY, msg.sender_mac,
				d->mac, d->o.ipv4, msg.sender_mac, msg.sender_ip + 12);
			c->data_len = c->pkt_len = len;
			if (rte_eth_tx_burst(d->port, 0, &c, 1) == 1)
				d->arp_answered++;
			else
				drop(d, DROCE_PORTD_DROP_port_full, &c, 1);
		}
	}
	for (s = 1; s < PORTD_MAX_SLOTS; s++) {
		if (d->ctl.fd[s] < 0)
			continue;
		c = rte_pktmbuf_copy(m, d->pool, 0, UINT32_MAX);
		if (c == NULL)
			continue;
		if (droce_rt_guard_tx(d->memif[s], 0, &c, 1, &d->faults) == 1)
			d->arp_copied++;
		else
			drop(d, DROCE_PORTD_DROP_program_full, &c, 1);
	}
	rte_pktmbuf_free(m);
}

static unsigned int
from_port(struct portd *d)
{
	struct rte_mbuf *m[BURST], *to[PORTD_MAX_SLOTS][BURST];
	unsigned int nto[PORTD_MAX_SLOTS] = { 0 };
	enum droce_portd_drop why;
	unsigned int i, s, slot;
	uint16_t n, k;

	n = rte_eth_rx_burst(d->port, 0, m, BURST);
	for (i = 0; i < n; i++) {
		switch (droce_portd_route(&d->ctl.slots, rte_pktmbuf_mtod(m[i], uint8_t *),
					  rte_pktmbuf_data_len(m[i]), &slot, &why)) {
		case DROCE_PORTD_TO_PROGRAM:
			to[slot][nto[slot]++] = m[i];
			break;
		case DROCE_PORTD_ARP:
			port_arp(d, m[i]);
			break;
		default:
			drop(d, why, &m[i], 1);
		}
	}
	for (s = 1; s < PORTD_MAX_SLOTS; s++) {
		if (nto[s] == 0)
			continue;
		k = droce_rt_guard_tx(d->memif[s], 0, to[s], (uint16_t)nto[s], &d->faults);
		if (d->to_prog[s] == 0 && k > 0) {
			printf("droce-portd: slot %u: first frame\n", s);
			fflush(stdout);
		}
		d->to_prog[s] += k;
		/* the program's RC peer resends what a full memif refused */
		if (k < nto[s])
			drop(d, DROCE_PORTD_DROP_program_full, &to[s][k], nto[s] - k);
	}
	return n;
}

static unsigned int
from_programs(struct portd *d)
{
	struct rte_mbuf *m[BURST], *ok[BURST];
	unsigned int s, i, nok, work = 0;
	uint16_t n, k;

	for (s = 1; s < PORTD_MAX_SLOTS; s++) {
		if (d->ctl.fd[s] < 0)
			continue;
		n = droce_rt_guard_rx(d->memif[s], 0, m, BURST, &d->faults);
		if (n == 0)
			continue;
		work += n;
		nok = 0;
		/* every frame leaves with the port's MAC: a program cannot pose as another host */
		for (i = 0; i < n; i++) {
			if (rte_pktmbuf_data_len(m[i]) >= 12 &&
			    memcmp(rte_pktmbuf_mtod(m[i], uint8_t *) + 6, d->mac, 6) == 0)
				ok[nok++] = m[i];
			else
				drop(d, DROCE_PORTD_DROP_src_mac, &m[i], 1);
		}
		k = rte_eth_tx_burst(d->port, 0, ok, (uint16_t)nok);
		d->from_prog[s] += k;
		if (k < nok)
			drop(d, DROCE_PORTD_DROP_port_full, &ok[k], nok - k);
	}
	return work;
}

static int
port_setup(struct portd *d, uint16_t p, bool nic)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(p, &info);
	if (rc == 0)
		rc = rte_eth_dev_configure(p, 1, 1, &conf);
	if (rc == 0 && nic && d->o.mtu != 0)
		rc = rte_eth_dev_set_mtu(p, (uint16_t)d->o.mtu);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(p, 0, DESC, rte_eth_dev_socket_id(p), NULL, d->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(p, 0, DESC, rte_eth_dev_socket_id(p), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(p);
	return rc;
}

static void
print_counters(const struct portd *d)
{
	unsigned int r, s;

	printf("droce-portd: counters\n");
	printf("  portd.arp_answered = %" PRIu64 "\n", d->arp_answered);
	printf("  portd.arp_copied = %" PRIu64 "\n", d->arp_copied);
	printf("  portd.programs_joined = %" PRIu64 "\n", d->ctl.joined);
	printf("  portd.programs_left = %" PRIu64 "\n", d->ctl.left);
	printf("  portd.programs_refused = %" PRIu64 "\n", d->ctl.refused);
	printf("  portd.burst_faults = %" PRIu64 "\n", d->faults);
	for (r = 0; r < DROCE_PORTD_DROP_COUNT; r++)
		printf("  portd.drop_%s = %" PRIu64 "\n", droce_portd_drop_name(r), d->drops[r]);
	for (s = 1; s < PORTD_MAX_SLOTS; s++)
		if (d->ctl.fd[s] >= 0)
			printf("  portd.slot%u_to = %" PRIu64 "\n  portd.slot%u_from = %" PRIu64
			       "\n",
			       s, d->to_prog[s], s, d->from_prog[s]);
	fflush(stdout);
}

static int
run(struct portd *d)
{
	struct droce_portd_rep tmpl;
	char err[256];
	uint64_t next_ctl = 0, ms = rte_get_tsc_hz() / 1000, now;
	unsigned int idle = 0, work;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.magic = DROCE_PORTD_MAGIC;
	tmpl.slot_bits = d->o.slot_bits;
	tmpl.mtu = d->o.mtu;
	memcpy(tmpl.mac, d->mac, 6);
	memcpy(tmpl.ipv4, d->o.ipv4, 4);
	tmpl.ipv4_prefix = d->o.ipv4_prefix;
	memcpy(tmpl.gw4, d->o.gw4, 4);
	snprintf(tmpl.memif_sock, sizeof(tmpl.memif_sock), "%s", d->o.memif_sock);
	if (portd_ctl_open(&d->ctl, d->o.sock, d->o.slot_bits, &tmpl, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce-portd: %s\n", err);
		return 1;
	}
	printf("droce-portd: port %s, %u.%u.%u.%u/%u, MTU %u, %u program slots, control %s\n",
	       d->o.vdev, d->o.ipv4[0], d->o.ipv4[1], d->o.ipv4[2], d->o.ipv4[3], d->o.ipv4_prefix,
	       d->o.mtu, (1u << d->o.slot_bits) - 1, d->o.sock);
	fflush(stdout);
	/* an idle sleep of 20 us would last 70 under Linux's default 50 us timer slack */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	while (!stop) {
		work = from_port(d);
		work += from_programs(d);
		now = rte_rdtsc();
		if (now >= next_ctl) {
			/* joins and departures are rare: a system call every 2 ms at most */
			work += portd_ctl_poll(&d->ctl, on_ctl, d);
			next_ctl = now + 2 * ms;
		}
		if (work != 0) {
			idle = 0;
		} else if (++idle > d->o.idle_spins) {
			struct timespec ts = { 0, (long)d->o.idle_sleep_us * 1000 };

			nanosleep(&ts, NULL);
		} else {
			rte_pause();
		}
	}
	print_counters(d);
	portd_ctl_close(&d->ctl);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct portd d;
	char *eargv[PORTD_EAL_ARGS];
	char ebuf[4096], name[32];
	unsigned int s, nslots;
	int eargc, rc;
	bool afxdp;

	rc = portd_opts_parse(&d.o, argc, argv);
	if (rc != 0)
		return rc < 0 ? 2 : 0;
	eargc = portd_opts_eal(&d.o, argv[0], eargv, ebuf, sizeof(ebuf));
	if (eargc < 0) {
		fprintf(stderr, "droce-portd: too many EAL words\n");
		return 2;
	}
	if (droce_rt_guard_init() != 0 || rte_eal_init(eargc, eargv) < 0) {
		fprintf(stderr, "droce-portd: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	nslots = 1u << d.o.slot_bits;
	/* af_xdp: every mbuf inside DPDK 22.11's umem (droce_rt_port.h) */
	afxdp = strncmp(d.o.port_name, "net_af_xdp", 10) == 0;
	d.pool = droce_rt_port_pool_create("portd", 1024 * (nslots + 2) - 1, 256,
					   RTE_MBUF_DEFAULT_BUF_SIZE, afxdp);
	if (d.pool != NULL && afxdp && !droce_rt_port_pool_fits_umem(d.pool)) {
		rte_mempool_free(d.pool);
		d.pool = NULL;
	}
	if (d.pool == NULL || rte_eth_dev_get_port_by_name(d.o.port_name, &d.port) != 0) {
		fprintf(stderr, "droce-portd: %s\n",
			d.pool == NULL ? "no memory for the mbuf pool (in one block for af_xdp)" :
					 "the port did not come up");
		rc = 1;
		goto out;
	}
	rc = port_setup(&d, d.port, true);
	if (rc == 0)
		rc = rte_eth_macaddr_get(d.port, (struct rte_ether_addr *)d.mac);
	if (rc == 0 && d.o.mtu == 0) {
		uint16_t mtu = 1500;

		rte_eth_dev_get_mtu(d.port, &mtu);
		d.o.mtu = mtu;
	}
	for (s = 1; rc == 0 && s < nslots; s++) {
		snprintf(name, sizeof(name), "net_memif%u", s);
		rc = rte_eth_dev_get_port_by_name(name, &d.memif[s]);
		if (rc == 0)
			rc = port_setup(&d, d.memif[s], false);
	}
	if (rc != 0) {
		fprintf(stderr, "droce-portd: port set-up: %s\n", strerror(rc < 0 ? -rc : rc));
		rc = 1;
		goto out;
	}
	rc = run(&d);
	for (s = 1; s < nslots; s++)
		droce_rt_guard_stop(d.memif[s]);
	rte_eth_dev_stop(d.port);
out:
	droce_rt_guard_eal_cleanup();
	return rc;
}
