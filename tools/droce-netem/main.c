/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-netem: a link emulator between ethdev ports 0 and 1 (net_memif, net_ring, ...). One
 * lcore polls both ports; each direction runs the pure model (netem_model.c) and holds frames
 * in a bounded heap until their departure time.
 */
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
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_rt_guard.h"
#include "netem_args.h"
#include "netem_heap.h"
#include "netem_model.h"

#define MAX_BURST 512
#define RING_DESC 1024
/* Empty polls before the loop starts sleeping: keeps a busy link on the spin path. */
#define SPIN_POLLS 256
/*
 * nanosleep overshoots by 15-20 us on average here (1 us timer slack), up to ~70 us: wake this
 * much before the next departure and spin the rest, so delays stay accurate to a few us.
 */
#define SLEEP_MARGIN_NS 25000

struct droce_netem_link {
	const char *name;
	uint16_t rx_port;
	uint16_t tx_port;
	struct droce_netem model;
	struct droce_netem_heap heap;
	uint64_t tx;
	uint64_t tx_bytes;
	uint64_t tx_first_ns; /* first and last transmit, for the achieved rate */
	uint64_t tx_last_ns;
	bool rx_guard, tx_guard; /* memif ports: bursts guarded (droce_rt_guard.h) */
	uint64_t burst_faults;	 /* bursts abandoned because a memif peer left inside them */
};

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t dump_flag;
static uint64_t tsc_base;
static uint64_t ns_mult; /* ns per cycle, 32.32 fixed point */

static void
on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_flag = 1;
	else
		stop_flag = 1;
}

static inline uint64_t
now_ns(void)
{
	return (uint64_t)(((unsigned __int128)(rte_get_tsc_cycles() - tsc_base) * ns_mult) >> 32);
}

static int
port_init(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	uint16_t nrx = RING_DESC, ntx = RING_DESC;
	int socket = rte_eth_dev_socket_id(port), rc;

	memset(&conf, 0, sizeof(conf));
	if (socket < 0)
		socket = (int)rte_socket_id();
	rc = rte_eth_dev_configure(port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(port, 0, nrx, socket, NULL, mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, ntx, socket, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0) {
		fprintf(stderr, "droce-netem: port %u set-up failed: %s\n", port,
			rte_strerror(-rc));
		return rc;
	}
	/* memif and ring have no MAC filter; a NIC would need promiscuous mode to forward. */
	rte_eth_promiscuous_enable(port);
	return 0;
}

static void
hold(struct droce_netem_link *d, struct rte_mbuf *m, uint64_t when)
{
	if (droce_netem_heap_push(&d->heap, when, m) != 0) {
		d->model.st.drop[DROCE_NETEM_DROP_HOLD_FULL]++;
		rte_pktmbuf_free(m);
	}
}

static void
ingress(struct droce_netem_link *d, struct rte_mbuf **pkts, uint16_t n, uint64_t now,
	struct rte_mempool *mp)
{
	struct droce_netem_out out;
	struct rte_mbuf *m, *dup;
	uint16_t i;

	for (i = 0; i < n; i++) {
		m = pkts[i];
		/* The model wants contiguous bytes; memif gives one segment up to bsize. */
		if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
			d->model.st.drop[DROCE_NETEM_DROP_NOMBUF]++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (droce_netem_submit(&d->model, rte_pktmbuf_mtod(m, uint8_t *),
				       rte_pktmbuf_data_len(m), now, &out) == 0) {
			rte_pktmbuf_free(m);
			continue;
		}
		if (out.n == 2) {
			dup = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);
			if (dup == NULL)
				d->model.st.drop[DROCE_NETEM_DROP_NOMBUF]++;
			else
				hold(d, dup, out.depart_ns[1]);
		}
		hold(d, m, out.depart_ns[0]);
	}
}

/* Send what is due, one burst; returns the number of frames taken off the heap. */
static unsigned int
egress(struct droce_netem_link *d, uint64_t now, uint32_t burst)
{
	struct rte_mbuf *tx[MAX_BURST], *m;
	uint64_t bytes[MAX_BURST];
	uint16_t n = 0, sent, i;

	while (n < burst && (m = droce_netem_heap_pop_due(&d->heap, now)) != NULL) {
		bytes[n] = rte_pktmbuf_pkt_len(m);
		tx[n++] = m;
	}
	if (n == 0)
		return 0;
	if (d->tx_guard) {
		uint64_t faults = d->burst_faults;

		sent = droce_rt_guard_tx(d->tx_port, 0, tx, n, &d->burst_faults);
		if (d->burst_faults != faults) {
			/* The peer left: the PMD freed some, the rest leak; none arrived. */
			d->model.st.drop[DROCE_NETEM_DROP_TX] += n;
			return n;
		}
	} else {
		sent = rte_eth_tx_burst(d->tx_port, 0, tx, n);
	}
	for (i = 0; i < sent; i++)
		d->tx_bytes += bytes[i];
	if (sent != 0) {
		if (d->tx == 0)
			d->tx_first_ns = now;
		d->tx_last_ns = now;
	}
	d->tx += sent;
	/* A full egress ring is a full switch port: drop, count. */
	for (i = sent; i < n; i++) {
		d->model.st.drop[DROCE_NETEM_DROP_TX]++;
		rte_pktmbuf_free(tx[i]);
	}
	return n;
}

static void
print_counters(const struct droce_netem_link *d)
{
	const struct droce_netem_stats *s = &d->model.st;
	uint64_t span = d->tx_last_ns - d->tx_first_ns;
	int r;

	printf("droce-netem %s: rx=%" PRIu64 " rx_bytes=%" PRIu64 " tx=%" PRIu64
	       " tx_bytes=%" PRIu64 " held=%u duplicated=%" PRIu64 " corrupted=%" PRIu64
	       " reordered=%" PRIu64 " ce_marked=%" PRIu64 " ce_already=%" PRIu64
	       " red_not_ect=%" PRIu64 " max_backlog=%" PRIu64 " queue_p50=%" PRIu64
	       " queue_p99=%" PRIu64,
	       d->name, s->rx, s->rx_bytes, d->tx, d->tx_bytes, d->heap.len, s->duplicated,
	       s->corrupted, s->reordered, s->ce_marked, s->ce_already, s->red_not_ect,
	       s->max_backlog, droce_netem_queue_pct(s, 50), droce_netem_queue_pct(s, 99));
	for (r = 1; r < DROCE_NETEM_DROP__MAX; r++)
		printf(" drop_%s=%" PRIu64, droce_netem_drop_name(r), s->drop[r]);
	/* From the first to the last transmit: the rate a rate-limited stream really got. */
	printf(" tx_span_us=%.1f tx_mbit_s=%.1f burst_faults=%" PRIu64 "\n", (double)span / 1e3,
	       span != 0 ? (double)d->tx_bytes * 8e3 / (double)span : 0.0, d->burst_faults);
	fflush(stdout);
}

/* --series: both directions' samples as CSV; 0 or -1 (said on stderr). */
static int
write_series(FILE *f, const char *path, const struct droce_netem_link *dirs, uint32_t period_us)
{
	const struct droce_netem_series *se;
	const struct droce_netem_sample *sm;
	uint32_t i;
	int d;

	fprintf(f,
		"# droce-netem --series-us %u: per period and direction, the frames that "
		"arrived, the share marked CE here, the mean and largest queue they found\n"
		"dir,ms,frames,ce_fraction,queue_mean_bytes,queue_max_bytes\n",
		period_us);
	for (d = 0; d < DROCE_NETEM_NDIR; d++) {
		se = dirs[d].model.series;
		for (i = 0; i < se->len; i++) {
			sm = &se->s[i];
			fprintf(f, "%s,%.3f,%u,%.4f,%" PRIu64 ",%u\n", dirs[d].name,
				(double)i * period_us / 1000.0, sm->frames,
				sm->frames != 0 ? (double)sm->ce / sm->frames : 0.0,
				sm->frames != 0 ? sm->q_sum / sm->frames : 0, sm->q_max);
		}
		if (se->beyond != 0)
			fprintf(stderr,
				"droce-netem: --series %s: %" PRIu64 " frames %s after its last "
				"period (%u periods: give --duration or a longer --series-us)\n",
				path, se->beyond, dirs[d].name, se->cap);
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "droce-netem: --series %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void
idle_sleep(const struct droce_netem_link *dirs, uint64_t now, uint32_t idle_us)
{
	uint64_t next =
		RTE_MIN(droce_netem_heap_next(&dirs[0].heap), droce_netem_heap_next(&dirs[1].heap));
	uint64_t ns = (uint64_t)idle_us * 1000;
	struct timespec ts;

	if (next != UINT64_MAX) {
		if (next <= now + SLEEP_MARGIN_NS) {
			rte_pause();
			return;
		}
		ns = RTE_MIN(ns, next - now - SLEEP_MARGIN_NS);
	}
	ts.tv_sec = 0;
	ts.tv_nsec = (long)ns;
	nanosleep(&ts, NULL);
}

/* memif's teardown can free its rings under a burst (droce_rt_guard.h). */
static bool
is_memif(uint16_t port)
{
	char name[RTE_ETH_NAME_MAX_LEN];

	return rte_eth_dev_get_name_by_port(port, name) == 0 &&
	       strncmp(name, "net_memif", 9) == 0 && droce_rt_guard_init() == 0;
}

static void
run(struct droce_netem_link *dirs, const struct droce_netem_opts *o, struct rte_mempool *mp)
{
	struct rte_mbuf *pkts[MAX_BURST];
	uint64_t now, deadline = o->duration_ns != 0 ? now_ns() + o->duration_ns : UINT64_MAX;
	unsigned int work, idle = 0;
	uint16_t n;
	int d;

	while (!stop_flag) {
		work = 0;
		now = now_ns();
		if (now >= deadline)
			break;
		for (d = 0; d < DROCE_NETEM_NDIR; d++) {
			n = dirs[d].rx_guard ?
				    droce_rt_guard_rx(dirs[d].rx_port, 0, pkts, (uint16_t)o->burst,
						      &dirs[d].burst_faults) :
				    rte_eth_rx_burst(dirs[d].rx_port, 0, pkts, (uint16_t)o->burst);
			/* Stamp after the poll: a clock read before it could predate the frame if
			 * the thread was preempted in between, and the frame would leave early. */
			if (n != 0)
				ingress(&dirs[d], pkts, n, now_ns(), mp);
			work += n;
		}
		now = now_ns();
		for (d = 0; d < DROCE_NETEM_NDIR; d++)
			work += egress(&dirs[d], now, o->burst);
		if (dump_flag) {
			dump_flag = 0;
			print_counters(&dirs[0]);
			print_counters(&dirs[1]);
		}
		if (work != 0) {
			idle = 0;
		} else if (++idle < SPIN_POLLS || o->idle_us == 0) {
			rte_pause();
		} else {
			idle_sleep(dirs, now, o->idle_us);
		}
	}
}

int
main(int argc, char **argv)
{
	struct droce_netem_link dirs[DROCE_NETEM_NDIR];
	struct droce_netem_held *store[DROCE_NETEM_NDIR] = { NULL, NULL };
	struct droce_netem_series series[DROCE_NETEM_NDIR];
	FILE *series_f = NULL;
	struct droce_netem_opts o;
	struct rte_mempool *mp;
	struct rte_mbuf *m;
	struct sigaction sa;
	uint16_t ports[2], nports = 0, p;
	char err[256];
	unsigned int nmbuf;
	int ret, d;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "droce-netem: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	argv[ret] = argv[0];
	if (droce_netem_parse_args(argc - ret, argv + ret, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce-netem: %s\n", err);
		droce_rt_guard_eal_cleanup();
		return 2;
	}
	if (o.help) {
		droce_netem_usage(argv[0]);
		droce_rt_guard_eal_cleanup();
		return 0;
	}
	RTE_ETH_FOREACH_DEV(p)
	{
		if (nports < 2)
			ports[nports] = p;
		nports++;
	}
	if (nports != 2) {
		fprintf(stderr,
			"droce-netem: needs exactly 2 ports, found %u (give two --vdev, "
			"e.g. "
			"net_memif0,role=server,socket=/a and net_memif1,role=server,socket=/b)\n",
			nports);
		droce_rt_guard_eal_cleanup();
		return 2;
	}
	nmbuf = 2 * o.hold + 4 * RING_DESC + 2 * MAX_BURST + 1024;
	mp = rte_pktmbuf_pool_create("droce_netem", nmbuf, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     (int)rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr,
			"droce-netem: mbuf pool of %u failed: %s (try a smaller --hold or "
			"more -m)\n",
			nmbuf, rte_strerror(rte_errno));
		droce_rt_guard_eal_cleanup();
		return 2;
	}
	ret = 1;
	memset(series, 0, sizeof(series));
	if (o.series != NULL) {
		series_f = fopen(o.series, "w");
		if (series_f == NULL) {
			fprintf(stderr, "droce-netem: --series %s: %s\n", o.series,
				strerror(errno));
			goto out;
		}
	}
	for (d = 0; d < DROCE_NETEM_NDIR; d++) {
		if (series_f != NULL) {
			/* the run's periods, or 256 s of them without --duration */
			uint64_t period = (uint64_t)o.series_us * 1000;
			uint64_t cap = o.duration_ns != 0 ? o.duration_ns / period + 2 :
							    256000000000ull / period;

			series[d].period_ns = period;
			series[d].cap = (uint32_t)RTE_MIN(cap, (uint64_t)1 << 22);
			series[d].s = calloc(series[d].cap, sizeof(*series[d].s));
			if (series[d].s == NULL) {
				fprintf(stderr,
					"droce-netem: --series: no memory for %u periods (give a "
					"longer --series-us)\n",
					series[d].cap);
				goto out;
			}
		}
		store[d] = calloc(o.hold, sizeof(*store[d]));
		if (store[d] == NULL || port_init(ports[d], mp) != 0)
			goto out;
		dirs[d].name = d == DROCE_NETEM_AB ? "ab" : "ba";
		dirs[d].rx_port = ports[d];
		dirs[d].tx_port = ports[1 - d];
		dirs[d].tx = dirs[d].tx_bytes = 0;
		dirs[d].tx_first_ns = dirs[d].tx_last_ns = 0;
		dirs[d].rx_guard = is_memif(ports[d]);
		dirs[d].tx_guard = is_memif(ports[1 - d]);
		dirs[d].burst_faults = 0;
		droce_netem_init(&dirs[d].model, &o.dir[d], o.seed + (uint64_t)d);
		if (series_f != NULL)
			dirs[d].model.series = &series[d];
		droce_netem_heap_init(&dirs[d].heap, store[d], o.hold);
	}
	tsc_base = rte_get_tsc_cycles();
	ns_mult = (uint64_t)(((unsigned __int128)1000000000ull << 32) / rte_get_tsc_hz());
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	/* Idle sleeps of a few us are pointless with the default 50 us timer slack. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	printf("droce-netem: ready: port %u (ab) <-> port %u (ba), lcore %u\n", ports[0], ports[1],
	       rte_lcore_id());
	fflush(stdout);
	run(dirs, &o, mp);
	for (d = 0; d < DROCE_NETEM_NDIR; d++)
		print_counters(&dirs[d]);
	for (d = 0; d < DROCE_NETEM_NDIR; d++)
		while ((m = droce_netem_heap_pop_due(&dirs[d].heap, UINT64_MAX)) != NULL)
			rte_pktmbuf_free(m);
	ret = 0;
	if (series_f != NULL) {
		ret = write_series(series_f, o.series, dirs, o.series_us) == 0 ? 0 : 1;
		series_f = NULL;
	}
out:
	if (series_f != NULL)
		fclose(series_f);
	for (d = 0; d < DROCE_NETEM_NDIR; d++) {
		if (d < nports) {
			rte_eth_dev_stop(ports[d]);
			rte_eth_dev_close(ports[d]);
		}
		free(store[d]);
		free(series[d].s);
	}
	rte_mempool_free(mp);
	droce_rt_guard_eal_cleanup();
	return ret;
}
