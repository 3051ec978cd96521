/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine alone, no PMD: two devices in one thread, each frame handed straight to the other
 * (no copy between them; the engine itself copies into and out of frames as it would into
 * mbufs). What a frame costs the protocol code, apart from any NIC or memif:
 *   lat   8 B RDMA WRITE ping-pong (each side answers once the other's WRITE landed): ns per
 *         round trip (two WRITEs, two ACKs: four builds, four receptions);
 *   bw    64 KiB RDMA WRITEs, 16 in flight, path MTU 1024: payload Gbit/s through both
 *         engines, next to memcpy of the same bytes run just before and after (the ratio is
 *         the engine's cost in copies: it builds, ICRCs, checks and places every byte);
 *   rate  64 B RDMA WRITEs, 16 in flight: messages a second through both engines.
 * Best of 5 rounds each; every WRITE's last byte is checked on arrival.
 *
 * Usage: droce-bench-engine [-n ROUND_TRIPS] [-m MESSAGES]
 */
#include <errno.h>
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

enum { NFRAMES = 64, FRAME_MAX = 2048, ROUNDS = 5, BW_DEPTH = 16, BW_SIZE = 65536 };

struct node {
	struct droce_dev *dev;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp;
	struct droce_mr *mr;
	uint8_t *buf;
	uint8_t (*frame)[FRAME_MAX];
	uint32_t len[NFRAMES];
	unsigned int n; /* frames sent, not yet delivered */
	uint64_t rng;
	uint8_t mac[6], gid[16];
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* Hand everything `from` sent to the other node. */
static void
deliver(struct node *from, struct node *to, uint64_t t)
{
	const uint8_t *f[NFRAMES];
	unsigned int i;

	for (i = 0; i < from->n; i++)
		f[i] = from->frame[i];
	if (from->n != 0)
		droce_dev_rx_burst(to->dev, f, from->len, from->n, t);
	from->n = 0;
}

static void
die(const char *what, int e)
{
	fprintf(stderr, "droce-bench-engine: %s: %s\n", what, strerror(e < 0 ? -e : e));
	exit(1);
}

static void
node_init(struct node *n, unsigned int i, size_t buf_size)
{
	struct droce_io io = { tx_alloc, tx_send, rand64, n };
	struct droce_dev_attr a;
	struct droce_qp_init_attr ia;
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
	a.max_qp = a.max_cq = a.max_mr = a.max_pd = a.max_srq = a.max_ah = 4;
	n->frame = aligned_alloc(64, NFRAMES * FRAME_MAX);
	n->buf = aligned_alloc(4096, buf_size);
	if (n->frame == NULL || n->buf == NULL)
		die("memory", ENOMEM);
	memset(n->buf, 0, buf_size);
	n->dev = droce_dev_create(&a, &io, &e);
	if (n->dev == NULL)
		die("device", e);
	n->pd = droce_pd_alloc(n->dev, &e);
	n->cq = n->pd != NULL ? droce_cq_create(n->dev, 256, NULL, &e) : NULL;
	n->mr = n->cq != NULL ?
			droce_mr_reg(n->pd, n->buf, buf_size,
				     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &e) :
			NULL;
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.send_cq = ia.recv_cq = n->cq;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	n->qp = n->mr != NULL ? droce_qp_create(n->pd, &ia, &e) : NULL;
	if (n->qp == NULL)
		die("objects", e);
}

static void
connect_to(struct node *n, const struct node *peer)
{
	struct droce_qp_conn c = {
		.dest_qp_num = droce_qp_num(peer->qp),
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
	int rc = droce_qp_init(n->qp, DROCE_ACCESS_REMOTE_WRITE, 0);

	memcpy(c.av.dgid, peer->gid, 16);
	memcpy(c.av.dmac, peer->mac, 6);
	c.av.hop_limit = 64;
	rc = rc != 0 ? rc : droce_qp_connect(n->qp, &c);
	if (rc != 0)
		die("connect", rc);
}

static void
post_write(struct node *n, const struct node *peer, uint32_t off, uint32_t len, uint64_t id)
{
	struct droce_sge sge = { .addr = (uintptr_t)n->buf + off,
				 .length = len,
				 .lkey = droce_mr_lkey(n->mr) };
	struct droce_send_wr wr = { .wr_id = id,
				    .sg_list = &sge,
				    .num_sge = 1,
				    .opcode = DROCE_WR_RDMA_WRITE,
				    .send_flags = DROCE_SEND_SIGNALED },
			     *bad;
	int rc;

	wr.wr.rdma.remote_addr = (uintptr_t)peer->buf + off;
	wr.wr.rdma.rkey = droce_mr_rkey(peer->mr);
	rc = droce_post_send(n->qp, &wr, &bad);
	if (rc != 0)
		die("post_send", rc);
}

static unsigned int
reap(struct node *n)
{
	struct droce_wc wc[32];
	int k, i;

	k = droce_cq_poll(n->cq, 32, wc);
	for (i = 0; i < k; i++)
		if (wc[i].status != DROCE_WC_SUCCESS) {
			fprintf(stderr, "droce-bench-engine: completion status %d\n", wc[i].status);
			exit(1);
		}
	return k > 0 ? (unsigned int)k : 0;
}

/* 8 B WRITE ping-pong: ns per round trip (bytes 64..71 of each buffer). */
static double
lat_round(struct node *a, struct node *b, uint64_t iters, uint64_t *t)
{
	struct node *n[2] = { a, b };
	uint64_t j, t0 = now_ns();
	unsigned int s;

	for (j = 0; j < iters; j++) {
		for (s = 0; s < 2; s++) {
			struct node *me = n[s], *peer = n[1 - s];

			me->buf[64 + 7] = (uint8_t)(j + 1);
			post_write(me, peer, 64, 8, j);
			droce_dev_process(me->dev, *t, 32); /* the peer's ACK rides along */
			deliver(me, peer, *t);
			droce_dev_process(peer->dev, *t, 32); /* its ACK */
			if (peer->buf[64 + 7] != (uint8_t)(j + 1)) {
				fprintf(stderr, "droce-bench-engine: WRITE %llu not placed\n",
					(unsigned long long)j);
				exit(1);
			}
			reap(peer);
			*t += 200;
		}
		/* each side's ACK reaches its peer with that peer's next WRITE */
		deliver(b, a, *t);
		deliver(a, b, *t);
		reap(a);
		reap(b);
	}
	return (double)(now_ns() - t0) / (double)iters;
}

/* WRITEs of size bytes a -> b, BW_DEPTH in flight: the seconds they took. */
static double
stream_round(struct node *a, struct node *b, uint64_t msgs, uint32_t size, uint64_t *t)
{
	uint64_t posted = 0, done = 0, t0 = now_ns();
	uint32_t last = (uint32_t)((msgs - 1) % BW_DEPTH) * BW_SIZE + size - 1;

	while (done < msgs) {
		while (posted < msgs && posted - done < BW_DEPTH) {
			uint32_t off = (uint32_t)(posted % BW_DEPTH) * BW_SIZE;

			a->buf[off + size - 1] = (uint8_t)posted;
			post_write(a, b, off, size, posted++);
		}
		droce_dev_process(a->dev, *t, NFRAMES);
		deliver(a, b, *t);
		droce_dev_process(b->dev, *t, NFRAMES);
		deliver(b, a, *t);
		done += reap(a);
		*t += 100;
	}
	if (b->buf[last] != (uint8_t)(msgs - 1)) {
		fprintf(stderr, "droce-bench-engine: last WRITE not placed\n");
		exit(1);
	}
	return (double)(now_ns() - t0) / 1e9;
}

static double
memcpy_round(uint8_t *dst, const uint8_t *src, uint64_t msgs)
{
	uint64_t j, t0 = now_ns();

	for (j = 0; j < msgs; j++) {
		uint32_t off = (uint32_t)(j % BW_DEPTH) * BW_SIZE;

		memcpy(dst + off, src + off, BW_SIZE);
		__asm__ volatile("" : : "r"(dst) : "memory");
	}
	return (double)msgs * BW_SIZE * 8 / (double)(now_ns() - t0);
}

int
main(int argc, char **argv)
{
	uint64_t iters = 200000, msgs = 20000, t = 1000;
	double lat = 1e18, bw = 0, cp = 0, rate = 0, x;
	struct node a, b;
	const char *kv;
	FILE *f;
	int o, r;

	while ((o = getopt(argc, argv, "n:m:")) != -1) {
		if (o == 'n')
			iters = strtoull(optarg, NULL, 0);
		else if (o == 'm')
			msgs = strtoull(optarg, NULL, 0);
		else {
			fprintf(stderr,
				"usage: droce-bench-engine [-n ROUND_TRIPS] [-m MESSAGES]\n");
			return 2;
		}
	}
	if (iters == 0 || msgs == 0) {
		fprintf(stderr, "droce-bench-engine: -n and -m must be at least 1\n");
		return 2;
	}
	node_init(&a, 0, (size_t)BW_DEPTH * BW_SIZE);
	node_init(&b, 1, (size_t)BW_DEPTH * BW_SIZE);
	connect_to(&a, &b);
	connect_to(&b, &a);
	for (r = 0; r < ROUNDS; r++) {
		x = lat_round(&a, &b, iters, &t);
		lat = x < lat ? x : lat;
		x = memcpy_round(b.buf, a.buf, msgs / 2);
		cp = x > cp ? x : cp;
		x = (double)msgs * BW_SIZE * 8 / 1e9 / stream_round(&a, &b, msgs, BW_SIZE, &t);
		bw = x > bw ? x : bw;
		x = (double)msgs * 64 / 1e6 / stream_round(&a, &b, msgs * 64, 64, &t);
		rate = x > rate ? x : rate;
		x = memcpy_round(b.buf, a.buf, msgs / 2);
		cp = x > cp ? x : cp;
	}
	printf("droce-bench-engine: engine only, one thread, best of %d rounds\n", ROUNDS);
	printf("  8 B WRITE ping-pong      %8.1f ns a round trip (4 frames: %.1f ns each)\n", lat,
	       lat / 4);
	printf("  64 KiB WRITEs, MTU 1024  %8.2f Gbit/s payload\n", bw);
	printf("  memcpy of 64 KiB blocks  %8.2f Gbit/s  (engine = %.2f x memcpy)\n", cp, bw / cp);
	printf("  64 B WRITEs              %8.2f M messages/s through both engines\n", rate);
	kv = getenv("DROCE_BENCH_KV"); /* droce-bench-all collects key=value figures */
	f = kv != NULL && *kv != '\0' ? fopen(kv, "a") : NULL;
	if (f != NULL) {
		fprintf(f,
			"engine_rtt_ns=%.1f\nengine_gbps=%.2f\nengine_memcpy_gbps=%.2f\n"
			"engine_mmsg=%.2f\n",
			lat, bw, cp, rate);
		fclose(f);
	}
	droce_dev_destroy(a.dev);
	droce_dev_destroy(b.dev);
	free(a.frame);
	free(b.frame);
	free(a.buf);
	free(b.buf);
	return 0;
}
