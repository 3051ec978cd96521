/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How the engine's costs grow with the number of QPs, memory regions and outstanding WRs: two
 * devices in one thread, no PMD, each frame handed straight to the other (as
 * droce-bench-engine). Four curves, one CSV each in DIR:
 *   qps.csv   N = 1 .. 16384 connected RC QP pairs: create + connect rate (both ends, native
 *             API), heap bytes and RSS per QP, 64 B and 64 KiB WRITEs posted round robin over
 *             all N (one outstanding per QP): messages/s, Gbit/s, p99 post-to-completion ns;
 *             teardown rate;
 *   mrs.csv   M = 1 .. 100000 regions registered at the target, 64 B WRITEs each to a random one
 *             of them (the rkey lookup on the receive path): registration rate, messages/s;
 *   sq.csv    one QP, send queue depth D = 1 .. 4096, D 64 B WRITEs outstanding: messages/s.
 * Rates are per second of this thread's CPU time (a shared host's other processes do not count),
 * latencies wall time. Every WRITE's completion is checked; the curves print as they go.
 *
 * -p N runs only N QP pairs' 64 B round robin (for callgrind: instructions per message).
 *
 * Usage: droce-bench-scale [-o DIR] [-q MAX_QPS] [-r MAX_MRS] [-m MESSAGES] [-p N]
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_ext.h"
#include "droce_pkt.h"
#include "droce_verbs.h"

enum { NFRAMES = 256, FRAME_MAX = 2048, SLICE = 64, BIG = 65536, LAT_MAX = 1 << 16 };

struct node {
	struct droce_dev *dev;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_mr *mr;
	struct droce_qp **qp;
	uint8_t *buf;
	size_t buf_size;
	uint8_t (*frame)[FRAME_MAX];
	uint32_t len[NFRAMES];
	unsigned int n;
	uint64_t rng;
	uint8_t mac[6], gid[16];
};

static struct node A, B;
static uint64_t vt = 1000; /* the engines' clock: advances per loop, never read from the host */

static uint64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Latencies: wall time. */
static uint64_t
now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Rates: this thread's CPU time, so that other processes on a shared host do not count. */
static uint64_t
cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void
die(const char *what, int e)
{
	fprintf(stderr, "droce-bench-scale: %s: %s\n", what, strerror(e < 0 ? -e : e));
	exit(1);
}

static uint8_t *
tx_alloc(void *ctx, uint32_t len, void **cookie)
{
	struct node *n = ctx;

	if (n->n == NFRAMES || len > FRAME_MAX)
		return NULL;
	*cookie = n->frame[n->n];
	return n->frame[n->n];
}

static void
tx_send(void *ctx, void *cookie, uint32_t len)
{
	struct node *n = ctx;

	(void)cookie;
	n->len[n->n++] = len;
}

static uint64_t
rand64(void *ctx)
{
	struct node *n = ctx;

	n->rng ^= n->rng << 13;
	n->rng ^= n->rng >> 7;
	n->rng ^= n->rng << 17;
	return n->rng;
}

static void
deliver(struct node *from, struct node *to)
{
	const uint8_t *f[NFRAMES];
	unsigned int i;

	for (i = 0; i < from->n; i++)
		f[i] = from->frame[i];
	if (from->n != 0)
		droce_dev_rx_burst(to->dev, f, from->len, from->n, vt);
	from->n = 0;
}

/* One turn of the wire: both engines send what they have, each receives the other's. */
static void
pump(void)
{
	droce_dev_process(A.dev, vt, NFRAMES);
	deliver(&A, &B);
	droce_dev_process(B.dev, vt, NFRAMES);
	deliver(&B, &A);
	vt += 100;
}

static void
node_init(struct node *n, unsigned int i, uint32_t max_qp, uint32_t max_mr, size_t buf_size)
{
	struct droce_io io = { tx_alloc, tx_send, rand64, n };
	struct droce_dev_attr a;
	int e = 0;

	memset(n, 0, sizeof(*n));
	memset(&a, 0, sizeof(a));
	n->rng = 0x9E3779B97F4A7C15ull * (i + 1);
	n->mac[0] = 2;
	n->mac[5] = (uint8_t)(i + 1);
	droce_gid_from_v4(n->gid, 0xC6120001u + i); /* 198.18.0.1, .2 */
	memcpy(a.mac, n->mac, 6);
	memcpy(a.gids[0], n->gid, 16);
	a.num_gids = 1;
	a.eth_mtu = 1500;
	a.max_qp = max_qp;
	a.max_mr = max_mr;
	a.max_cq = a.max_pd = a.max_srq = a.max_ah = 4;
	n->frame = aligned_alloc(64, NFRAMES * FRAME_MAX);
	n->buf_size = buf_size;
	n->buf = aligned_alloc(4096, buf_size);
	n->qp = calloc(max_qp, sizeof(*n->qp));
	if (n->frame == NULL || n->buf == NULL || n->qp == NULL)
		die("memory", ENOMEM);
	memset(n->buf, 0, buf_size);
	n->dev = droce_dev_create(&a, &io, &e);
	if (n->dev == NULL)
		die("device", e);
	n->pd = droce_pd_alloc(n->dev, &e);
	n->cq = n->pd != NULL ? droce_cq_create(n->dev, 1u << 16, NULL, &e) : NULL;
	n->mr = n->cq != NULL ?
			droce_mr_reg(n->pd, n->buf, buf_size,
				     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &e) :
			NULL;
	if (n->mr == NULL)
		die("objects", e);
}

static void
node_fini(struct node *n)
{
	droce_dev_destroy(n->dev);
	free(n->frame);
	free(n->buf);
	free(n->qp);
}

static struct droce_qp *
qp_new(struct node *n, uint32_t depth)
{
	struct droce_qp_init_attr ia;
	struct droce_qp *qp;
	int e = 0;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.send_cq = ia.recv_cq = n->cq;
	ia.cap.max_send_wr = depth;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	qp = droce_qp_create(n->pd, &ia, &e);
	if (qp == NULL)
		die("qp_create", e);
	return qp;
}

static void
qp_connect(struct droce_qp *qp, struct droce_qp *peer, const struct node *pn)
{
	struct droce_qp_conn c = {
		.dest_qp_num = droce_qp_num(peer),
		.rq_psn = 0x100,
		.sq_psn = 0x100,
		.path_mtu = DROCE_MTU_1024,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
		.min_rnr_timer = 1,
		.max_dest_rd_atomic = 1,
	};
	int rc = droce_qp_init(qp, DROCE_ACCESS_REMOTE_WRITE, 0);

	memcpy(c.av.dgid, pn->gid, 16);
	memcpy(c.av.dmac, pn->mac, 6);
	c.av.hop_limit = 64;
	rc = rc != 0 ? rc : droce_qp_connect(qp, &c);
	if (rc != 0)
		die("connect", rc);
}

static void
post_write(struct droce_qp *qp, uint64_t laddr, uint32_t lkey, uint64_t raddr, uint32_t rkey,
	   uint32_t len, uint64_t id)
{
	struct droce_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct droce_send_wr wr = { .wr_id = id,
				    .sg_list = &sge,
				    .num_sge = 1,
				    .opcode = DROCE_WR_RDMA_WRITE,
				    .send_flags = DROCE_SEND_SIGNALED },
			     *bad;
	int rc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	rc = droce_post_send(qp, &wr, &bad);

	if (rc != 0)
		die("post_send", rc);
}

/* Completions at A: calls done(id) for each; exits on an error status. */
static unsigned int
reap(void (*done)(uint64_t id, void *arg), void *arg)
{
	struct droce_wc wc[64];
	int k, i;

	k = droce_cq_poll(A.cq, 64, wc);
	for (i = 0; i < k; i++) {
		if (wc[i].status != DROCE_WC_SUCCESS) {
			fprintf(stderr, "droce-bench-scale: completion status %d\n", wc[i].status);
			exit(1);
		}
		if (done != NULL)
			done(wc[i].wr_id, arg);
	}
	return k > 0 ? (unsigned int)k : 0;
}

static double
heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (double)mi.uordblks + (double)mi.hblkhd;
}

static double
rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return (double)rss * (double)sysconf(_SC_PAGESIZE);
}

/* ---- QPs: round robin over all of them, one WRITE outstanding each ---- */
struct rr {
	uint64_t *posted_at; /* per QP: host ns of its outstanding WRITE */
	uint32_t *idle;	     /* FIFO of QPs with nothing outstanding, in the order they got so */
	uint32_t head, tail, nqp;
	uint32_t *lat; /* post-to-completion samples, ns */
	uint32_t nlat;
	uint64_t done;
};

static void
rr_done(uint64_t id, void *arg)
{
	struct rr *r = arg;
	uint64_t t = now_ns();

	if (r->nlat < LAT_MAX)
		r->lat[r->nlat++] = (uint32_t)(t - r->posted_at[id]);
	r->idle[r->tail++ % r->nqp] = (uint32_t)id;
	r->done++;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* msgs WRITEs of size bytes over all QPs in turn: messages/s; *p99 the post-to-completion p99.
 * Not inlined: droce-bench-scale.sh counts its instructions with callgrind (-p). */
static __attribute__((noinline)) double
rr_run(uint32_t nqp, uint32_t size, uint64_t msgs, double *p99)
{
	struct rr r = { .nqp = nqp, .tail = nqp };
	uint64_t posted = 0, t0;
	uint32_t i, slots = (uint32_t)(A.buf_size / size);

	r.posted_at = calloc(nqp, sizeof(*r.posted_at));
	r.idle = malloc(nqp * sizeof(*r.idle));
	r.lat = malloc(LAT_MAX * sizeof(*r.lat));
	if (r.posted_at == NULL || r.idle == NULL || r.lat == NULL)
		die("memory", ENOMEM);
	for (i = 0; i < nqp; i++)
		r.idle[i] = i;
	t0 = cpu_ns();
	while (r.done < msgs) {
		/* post on idle QPs, 64 at a time, then let the wire move */
		for (i = 0; i < 64 && r.head != r.tail && posted < msgs; i++, posted++) {
			uint32_t q = r.idle[r.head++ % nqp];
			uint64_t off = (uint64_t)(q % slots) * size;

			r.posted_at[q] = now_ns();
			post_write(A.qp[q], (uintptr_t)A.buf + off, droce_mr_lkey(A.mr),
				   (uintptr_t)B.buf + off, droce_mr_rkey(B.mr), size, q);
		}
		pump();
		reap(rr_done, &r);
	}
	t0 = cpu_ns() - t0;
	*p99 = 0;
	if (r.nlat > 0) {
		qsort(r.lat, r.nlat, sizeof(*r.lat), cmp_u32);
		*p99 = r.lat[(uint32_t)((r.nlat - 1) * 0.99)];
	}
	free(r.posted_at);
	free(r.idle);
	free(r.lat);
	return (double)msgs * 1e9 / (double)t0;
}

static void
curve_qps(FILE *csv, uint32_t max_qps, uint64_t msgs)
{
	uint32_t n;

	fprintf(csv, "qps,connect_per_s,teardown_per_s,heap_bytes_per_qp,rss_bytes_per_qp,"
		     "write64_mmsg,write64_p99_ns,write64k_gbps,write64k_p99_ns\n");
	for (n = 1; n <= max_qps; n *= 2) {
		double h0, r0, h1, r1, tc, td, m64, p64, m64k, p64k;
		uint64_t t0, i;

		node_init(&A, 0, max_qps, 4, (size_t)BIG * 64);
		node_init(&B, 1, max_qps, 4, (size_t)BIG * 64);
		h0 = heap_bytes();
		r0 = rss_bytes();
		t0 = cpu_ns();
		for (i = 0; i < n; i++) {
			A.qp[i] = qp_new(&A, 16);
			B.qp[i] = qp_new(&B, 16);
			qp_connect(A.qp[i], B.qp[i], &B);
			qp_connect(B.qp[i], A.qp[i], &A);
		}
		tc = (double)n * 1e9 / (double)(cpu_ns() - t0);
		h1 = heap_bytes();
		r1 = rss_bytes();
		m64 = rr_run(n, 64, msgs > n ? msgs : n, &p64) / 1e6;
		m64k = rr_run(n, BIG, msgs / 16 > n ? msgs / 16 : n, &p64k) * BIG * 8 / 1e9;
		t0 = cpu_ns();
		for (i = 0; i < n; i++) {
			droce_qp_destroy(A.qp[i]);
			droce_qp_destroy(B.qp[i]);
		}
		td = (double)n * 1e9 / (double)(cpu_ns() - t0);
		/* two QPs (one each end) per pair: the figures are per QP */
		fprintf(csv, "%u,%.0f,%.0f,%.0f,%.0f,%.3f,%.0f,%.2f,%.0f\n", n, tc, td,
			(h1 - h0) / (2.0 * n), (r1 - r0) / (2.0 * n), m64, p64, m64k, p64k);
		printf("  %6u QPs: connect %9.0f/s teardown %9.0f/s  %6.0f B/QP (rss %6.0f)  "
		       "64 B %6.3f M/s p99 %7.0f ns  64 KiB %6.2f Gbit/s p99 %8.0f ns\n",
		       n, tc, td, (h1 - h0) / (2.0 * n), (r1 - r0) / (2.0 * n), m64, p64, m64k,
		       p64k);
		fflush(stdout);
		node_fini(&A);
		node_fini(&B);
	}
}

/* ---- MRs: M regions at B, 64 B WRITEs to random ones ---- */
static void
curve_mrs(FILE *csv, uint32_t max_mrs, uint64_t msgs)
{
	uint32_t m;

	fprintf(csv, "mrs,reg_per_s,write64_mmsg\n");
	for (m = 1; m <= max_mrs; m = m < 10			      ? m * 10 :
				      m * 10 > max_mrs && m < max_mrs ? max_mrs :
									m * 10) {
		struct droce_mr **mr;
		uint32_t *rkey, i;
		uint64_t t0, posted = 0, done = 0, rng = 12345;
		double treg, rate;
		int e = 0;

		node_init(&A, 0, 4, 4, (size_t)SLICE * 64);
		node_init(&B, 1, 4, max_mrs + 1, (size_t)SLICE * m);
		A.qp[0] = qp_new(&A, 64);
		B.qp[0] = qp_new(&B, 64);
		qp_connect(A.qp[0], B.qp[0], &B);
		qp_connect(B.qp[0], A.qp[0], &A);
		mr = calloc(m, sizeof(*mr));
		rkey = calloc(m, sizeof(*rkey));
		if (mr == NULL || rkey == NULL)
			die("memory", ENOMEM);
		t0 = cpu_ns();
		for (i = 0; i < m; i++) {
			mr[i] = droce_mr_reg(B.pd, B.buf + (size_t)i * SLICE, SLICE,
					     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE,
					     &e);
			if (mr[i] == NULL)
				die("mr_reg", e);
			rkey[i] = droce_mr_rkey(mr[i]);
		}
		treg = (double)m * 1e9 / (double)(cpu_ns() - t0);
		t0 = cpu_ns();
		while (done < msgs) {
			while (posted < msgs && posted - done < 32) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				i = (uint32_t)((rng >> 33) % m);
				post_write(A.qp[0], (uintptr_t)A.buf, droce_mr_lkey(A.mr),
					   (uintptr_t)B.buf + (size_t)i * SLICE, rkey[i], SLICE,
					   posted++);
			}
			pump();
			done += reap(NULL, NULL);
		}
		rate = (double)msgs * 1e3 / (double)(cpu_ns() - t0);
		fprintf(csv, "%u,%.0f,%.3f\n", m, treg, rate);
		printf("  %6u MRs: register %9.0f/s  64 B WRITEs to random ones %6.3f M/s\n", m,
		       treg, rate);
		fflush(stdout);
		for (i = 0; i < m; i++)
			droce_mr_dereg(mr[i]);
		free(mr);
		free(rkey);
		node_fini(&A);
		node_fini(&B);
	}
}

/* ---- send queue depth: one QP, D WRITEs outstanding ---- */
static void
curve_sq(FILE *csv, uint64_t msgs)
{
	uint32_t d;

	fprintf(csv, "sq_depth,write64_mmsg\n");
	for (d = 1; d <= 4096; d *= 2) {
		uint64_t t0, posted = 0, done = 0;
		double rate;

		node_init(&A, 0, 4, 4, (size_t)SLICE * 4096);
		node_init(&B, 1, 4, 4, (size_t)SLICE * 4096);
		A.qp[0] = qp_new(&A, d);
		B.qp[0] = qp_new(&B, d);
		qp_connect(A.qp[0], B.qp[0], &B);
		qp_connect(B.qp[0], A.qp[0], &A);
		t0 = cpu_ns();
		while (done < msgs) {
			while (posted < msgs && posted - done < d) {
				uint64_t off = (posted % 4096) * SLICE;

				post_write(A.qp[0], (uintptr_t)A.buf + off, droce_mr_lkey(A.mr),
					   (uintptr_t)B.buf + off, droce_mr_rkey(B.mr), SLICE,
					   posted++);
			}
			pump();
			done += reap(NULL, NULL);
		}
		rate = (double)msgs * 1e3 / (double)(cpu_ns() - t0);
		fprintf(csv, "%u,%.3f\n", d, rate);
		printf("  depth %4u: 64 B WRITEs %6.3f M/s\n", d, rate);
		fflush(stdout);
		node_fini(&A);
		node_fini(&B);
	}
}

/* -p: N pairs, the 64 B round robin once, nothing else. */
static void
one_point(uint32_t n, uint64_t msgs)
{
	double p99;
	uint32_t i;

	node_init(&A, 0, n, 4, (size_t)BIG * 64);
	node_init(&B, 1, n, 4, (size_t)BIG * 64);
	for (i = 0; i < n; i++) {
		A.qp[i] = qp_new(&A, 16);
		B.qp[i] = qp_new(&B, 16);
		qp_connect(A.qp[i], B.qp[i], &B);
		qp_connect(B.qp[i], A.qp[i], &A);
	}
	printf("%u QPs: 64 B %.3f M/s\n", n, rr_run(n, 64, msgs, &p99) / 1e6);
	node_fini(&A);
	node_fini(&B);
}

static FILE *
csv_open(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		die(path, errno);
	return f;
}

int
main(int argc, char **argv)
{
	uint32_t max_qps = 16384, max_mrs = 100000;
	uint64_t msgs = 200000;
	uint32_t point = 0;
	const char *dir = ".";
	FILE *f;
	int o;

	while ((o = getopt(argc, argv, "o:q:r:m:p:")) != -1) {
		if (o == 'o')
			dir = optarg;
		else if (o == 'q')
			max_qps = (uint32_t)strtoul(optarg, NULL, 0);
		else if (o == 'r')
			max_mrs = (uint32_t)strtoul(optarg, NULL, 0);
		else if (o == 'm')
			msgs = strtoull(optarg, NULL, 0);
		else if (o == 'p')
			point = (uint32_t)strtoul(optarg, NULL, 0);
		else {
			fprintf(stderr, "usage: droce-bench-scale [-o DIR] [-q MAX_QPS] "
					"[-r MAX_MRS] [-m MESSAGES] [-p N]\n");
			return 2;
		}
	}
	if (max_qps == 0 || max_qps > 65536 || max_mrs == 0 || max_mrs > (1u << 20) || msgs == 0) {
		fprintf(stderr, "droce-bench-scale: -q 1..65536, -r 1..1048576, -m at least 1\n");
		return 2;
	}
	if (point != 0 && point <= 65536) {
		one_point(point, msgs);
		return 0;
	}
	printf("droce-bench-scale: engine only, one thread, two devices, frames handed across\n");
	/* warm-up: the first point's page faults and cold caches are not the curve's */
	f = csv_open(dir, "qps.csv");
	curve_qps(f, 1, msgs / 10 + 1);
	fclose(f);
	f = csv_open(dir, "qps.csv");
	curve_qps(f, max_qps, msgs);
	fclose(f);
	f = csv_open(dir, "mrs.csv");
	curve_mrs(f, max_mrs, msgs);
	fclose(f);
	f = csv_open(dir, "sq.csv");
	curve_sq(f, msgs);
	fclose(f);
	return 0;
}
