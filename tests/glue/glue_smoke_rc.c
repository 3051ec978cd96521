/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC over the runtime between two processes: the client RDMA WRITEs WRITE_LEN bytes into the
 * server's MR, SENDs NSEND messages (1 byte to 4 packets) and RDMA READs READ_LEN bytes back;
 * each side checks every byte it received.
 * Server: inline mode, engine called directly. Client: poll loop on lcore 1, engine reached
 * only through droce_rt_call() closures.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "glue_smoke.h"

enum {
	BUF_SIZE = 1 << 16,
	WRITE_LEN = 20000,
	READ_OFF = 20480,
	READ_LEN = 5000,
	SLOT_BASE = 32768,
	SLOT = 4096,
	NSEND = 6,
};

static const uint32_t send_len[NSEND] = { 1, 100, 1024, 1025, 3000, 4096 };

struct wire_info {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	uint8_t gid[16];
};

struct rc {
	const struct role *r;
	struct droce_rt *rt;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
	uint8_t peer_mac[6];
	struct wire_info me, peer;
	unsigned int got;    /* successful completions so far */
	int bad;	     /* first failed completion status + 1 */
	uint32_t len[NSEND]; /* byte_len per received message */
};

static uint8_t
pattern(unsigned int msg, uint32_t i)
{
	return (uint8_t)(msg * 31u + i * 7u + 1u);
}

static int
setup_fn(struct droce_rt *rt, void *arg)
{
	struct rc *c = arg;
	struct droce_dev *dev = droce_rt_dev(rt);
	struct droce_qp_init_attr ia = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 32,
			 .max_recv_wr = 32,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_recv_wr rwr, *bad_r;
	struct droce_sge sge;
	unsigned int k;
	int e = 0, rc;

	c->pd = droce_pd_alloc(dev, &e);
	if (c->pd == NULL)
		return -e;
	c->mr = droce_mr_reg(c->pd, c->buf, BUF_SIZE,
			     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				     DROCE_ACCESS_REMOTE_READ,
			     &e);
	if (c->mr == NULL)
		return -e;
	c->cq = droce_cq_create(dev, 64, NULL, &e);
	if (c->cq == NULL)
		return -e;
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	c->qp = droce_qp_create(c->pd, &ia, &e);
	if (c->qp == NULL)
		return -e;
	rc = droce_qp_init(c->qp, DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ, 0);
	if (rc != 0)
		return rc;
	for (k = 0; c->r->server && k < NSEND; k++) {
		sge.addr = (uintptr_t)(c->buf + SLOT_BASE + k * SLOT);
		sge.length = SLOT;
		sge.lkey = droce_mr_lkey(c->mr);
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = k;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		rc = droce_post_recv(c->qp, &rwr, &bad_r);
		if (rc != 0)
			return rc;
	}
	c->me.qpn = droce_qp_num(c->qp);
	c->me.psn = c->r->server ? 0x1000 : 0xFFFFF0; /* the client's PSN wraps at 2^24 */
	c->me.rkey = droce_mr_rkey(c->mr);
	c->me.addr = (uintptr_t)c->buf;
	if (droce_rt_gid(rt, c->r->gid_index, c->me.gid) <= c->r->gid_index)
		return -ENOENT;
	return 0;
}

static int
connect_fn(struct droce_rt *rt, void *arg)
{
	struct rc *c = arg;
	struct droce_qp_conn cn = {
		.dest_qp_num = c->peer.qpn,
		.rq_psn = c->peer.psn,
		.sq_psn = c->me.psn,
		.path_mtu = DROCE_MTU_1024,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
		.min_rnr_timer = 1,
		.max_dest_rd_atomic = 1,
	};

	(void)rt;
	memcpy(cn.av.dgid, c->peer.gid, 16);
	cn.av.sgid_index = (uint8_t)c->r->gid_index;
	memcpy(cn.av.dmac, c->peer_mac, 6);
	cn.av.hop_limit = 64;
	return droce_qp_connect(c->qp, &cn);
}

static int
post_fn(struct droce_rt *rt, void *arg)
{
	struct rc *c = arg;
	struct droce_send_wr wr[2 + NSEND], *bad;
	struct droce_sge sge[2 + NSEND];
	unsigned int k;

	(void)rt;
	memset(wr, 0, sizeof(wr));
	sge[0].addr = (uintptr_t)c->buf;
	sge[0].length = WRITE_LEN;
	sge[0].lkey = droce_mr_lkey(c->mr);
	wr[0].wr_id = 100;
	wr[0].opcode = DROCE_WR_RDMA_WRITE;
	wr[0].wr.rdma.remote_addr = c->peer.addr;
	wr[0].wr.rdma.rkey = c->peer.rkey;
	for (k = 0; k < NSEND; k++) {
		sge[1 + k].addr = (uintptr_t)(c->buf + SLOT_BASE + k * SLOT);
		sge[1 + k].length = send_len[k];
		sge[1 + k].lkey = droce_mr_lkey(c->mr);
		wr[1 + k].wr_id = k;
		wr[1 + k].opcode = DROCE_WR_SEND;
	}
	/* and an RDMA READ of what the server prepared */
	sge[1 + NSEND].addr = (uintptr_t)(c->buf + READ_OFF);
	sge[1 + NSEND].length = READ_LEN;
	sge[1 + NSEND].lkey = droce_mr_lkey(c->mr);
	wr[1 + NSEND].wr_id = 200;
	wr[1 + NSEND].opcode = DROCE_WR_RDMA_READ;
	wr[1 + NSEND].wr.rdma.remote_addr = c->peer.addr + READ_OFF;
	wr[1 + NSEND].wr.rdma.rkey = c->peer.rkey;
	for (k = 0; k < 2 + NSEND; k++) {
		wr[k].sg_list = &sge[k];
		wr[k].num_sge = 1;
		wr[k].send_flags = DROCE_SEND_SIGNALED;
		wr[k].next = k < 1 + NSEND ? &wr[k + 1] : NULL;
	}
	return droce_post_send(c->qp, wr, &bad);
}

static int
poll_fn(struct droce_rt *rt, void *arg)
{
	struct rc *c = arg;
	struct droce_wc wc[8];
	int n, i;

	(void)rt;
	n = droce_cq_poll(c->cq, 8, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != DROCE_WC_SUCCESS) {
			if (!c->bad)
				c->bad = (int)wc[i].status + 1;
			continue;
		}
		if (wc[i].opcode == DROCE_WC_RECV && wc[i].wr_id < NSEND)
			c->len[wc[i].wr_id] = wc[i].byte_len;
		c->got++;
	}
	return n < 0 ? n : 0;
}

static bool
all_done(void *arg)
{
	struct rc *c = arg;

	droce_rt_call(c->rt, poll_fn, c);
	return c->bad || c->got == (c->r->server ? NSEND : 2 + NSEND);
}

static bool
peer_info_ready(void *arg)
{
	struct rc *c = arg;

	return read(c->r->in, &c->peer, sizeof(c->peer)) == (ssize_t)sizeof(c->peer);
}

static int
check_bytes(const struct role *r, const struct rc *c)
{
	uint32_t i;
	unsigned int k;

	for (k = 0; k < NSEND; k++) {
		CHECK(c->len[k] == send_len[k], "message %u: %u bytes, sent %u", k, c->len[k],
		      send_len[k]);
		for (i = 0; i < send_len[k]; i++)
			CHECK(c->buf[SLOT_BASE + k * SLOT + i] == pattern(k, i),
			      "message %u byte %u differs", k, i);
	}
	for (i = 0; i < WRITE_LEN; i++)
		CHECK(c->buf[i] == pattern(100, i), "WRITE byte %u differs", i);
	printf("%s: %u SENDs and a %u-byte WRITE arrived intact\n", r->name, NSEND, WRITE_LEN);
	return 0;
}

static int
check_read(const struct role *r, const struct rc *c)
{
	uint32_t i;

	for (i = 0; i < READ_LEN; i++)
		CHECK(c->buf[READ_OFF + i] == pattern(200, i), "READ byte %u differs", i);
	printf("%s: a %u-byte RDMA READ came back intact\n", r->name, READ_LEN);
	return 0;
}

/* Another application thread: counters and a (cached) resolution through droce_rt_call. */
struct hammer {
	struct droce_rt *rt;
	uint8_t gid[16];
	uint32_t stop;
	unsigned int rounds; /* both threads add up here */
	int bad;
};

static void *
hammer(void *arg)
{
	struct droce_rt_counter cs[512];
	struct hammer *h = arg;
	struct timespec ts = { 0, 50000 };
	uint8_t mac[6];
	int n;

	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		n = droce_rt_counters(h->rt, cs, 512);
		if (n < 50 || n > 512)
			__atomic_store_n(&h->bad, 1, __ATOMIC_RELAXED);
		if (droce_rt_resolve(h->rt, h->gid, mac, 1000) != 0 || mac[5] != 1)
			__atomic_store_n(&h->bad, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->rounds, 1, __ATOMIC_RELAXED);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static bool
hammered(void *arg)
{
	struct hammer *h = arg;

	return __atomic_load_n(&h->rounds, __ATOMIC_RELAXED) >= 200;
}

int
run_rc(struct role *r)
{
	char err[256] = "";
	struct rc c = { .r = r };
	struct hammer h = { 0 };
	pthread_t th[2];
	unsigned int k;
	uint32_t i;
	char done = 1;
	int rc;

	c.buf = aligned_alloc(4096, BUF_SIZE);
	CHECK(c.buf != NULL, "no memory");
	memset(c.buf, 0, BUF_SIZE);
	for (i = 0; !r->server && i < WRITE_LEN; i++)
		c.buf[i] = pattern(100, i);
	for (k = 0; !r->server && k < NSEND; k++)
		for (i = 0; i < send_len[k]; i++)
			c.buf[SLOT_BASE + k * SLOT + i] = pattern(k, i);
	for (i = 0; r->server && i < READ_LEN; i++)
		c.buf[READ_OFF + i] = pattern(200, i);
	c.rt = open_rt(r, !r->server, err, sizeof(err));
	CHECK(c.rt != NULL, "open: %s", err);
	rc = meet(r, c.rt, c.peer_mac);
	if (rc != 0)
		return rc;
	if (!r->server)
		CHECK(droce_rt_start(c.rt) == 0, "cannot start the poll lcore");
	rc = droce_rt_call(c.rt, setup_fn, &c);
	CHECK(rc == 0, "setup: %s", strerror(-rc));
	CHECK(write(r->out, &c.me, sizeof(c.me)) == (ssize_t)sizeof(c.me), "pipe");
	CHECK(droce_rt_run_until(c.rt, peer_info_ready, &c, 10000) == 0, "no peer info");
	rc = droce_rt_call(c.rt, connect_fn, &c);
	CHECK(rc == 0, "connect: %s", strerror(-rc));
	/* Both QPs ready before the first packet, so no retransmission timeout is involved. */
	CHECK(write(r->out, &done, 1) == 1, "pipe");
	CHECK(droce_rt_run_until(c.rt, peer_done, r, 10000) == 0, "peer not connected");
	if (!r->server) {
		/* Two more threads use the device meanwhile: the call ring serialises them all. */
		h.rt = c.rt;
		v4_gid(h.gid, 1);
		CHECK(pthread_create(&th[0], NULL, hammer, &h) == 0, "thread");
		CHECK(pthread_create(&th[1], NULL, hammer, &h) == 0, "thread");
		rc = droce_rt_call(c.rt, post_fn, &c);
		CHECK(rc == 0, "post_send: %s", strerror(-rc));
	}
	rc = droce_rt_run_until(c.rt, all_done, &c, 15000);
	if (!r->server) {
		/* a few hundred calls from three threads at once, bounded */
		droce_rt_run_until(c.rt, hammered, &h, 5000);
		__atomic_store_n(&h.stop, 1, __ATOMIC_RELEASE);
		pthread_join(th[0], NULL);
		pthread_join(th[1], NULL);
		CHECK(h.bad == 0, "a concurrent counters/resolve call went wrong");
		CHECK(h.rounds >= 200, "the other threads got only %u rounds through", h.rounds);
		printf("%s: 2 more threads got %u counter+resolve rounds through the call ring\n",
		       r->name, h.rounds);
	}
	print_counters(r, c.rt, "");
	CHECK(rc == 0, "only %u completions in 15 s", c.got);
	CHECK(!c.bad, "completion status %d", c.bad - 1);
	if (r->server)
		CHECK(check_bytes(r, &c) == 0, "bytes");
	else
		CHECK(check_read(r, &c) == 0, "read bytes");
	/* Keep the loop running (ACKs) until the peer has seen everything too. */
	CHECK(write(r->out, &done, 1) == 1, "pipe");
	CHECK(droce_rt_run_until(c.rt, peer_done, r, 10000) == 0, "peer not done");
	close_rt(c.rt);
	free(c.buf);
	return 0;
}

/* ---- lat: SEND ping-pong RTT over the runtime (a measurement, not a test) ---- */

enum { LAT_ITERS = 2000, LAT_LEN = 64 };

static int
post_one_recv(struct rc *c, unsigned int slot)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)(c->buf + SLOT_BASE + slot * SLOT),
		.length = SLOT,
		.lkey = droce_mr_lkey(c->mr),
	};
	struct droce_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return droce_post_recv(c->qp, &wr, &bad);
}

static int
post_one_send(struct rc *c)
{
	struct droce_sge sge = {
		.addr = (uintptr_t)c->buf,
		.length = LAT_LEN,
		.lkey = droce_mr_lkey(c->mr),
	};
	struct droce_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = DROCE_WR_SEND,
		.send_flags = DROCE_SEND_SIGNALED,
	}, *bad;

	return droce_post_send(c->qp, &wr, &bad);
}

/* Inline mode on both sides: the loop runs (with its idle back-off) until a RECV completes;
 * SEND completions are drained on the way. */
static bool
recv_done(void *arg)
{
	struct rc *c = arg;
	struct droce_wc wc[4];
	int n, i;

	n = droce_cq_poll(c->cq, 4, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != DROCE_WC_SUCCESS) {
			c->bad = 1;
			return true;
		}
		if (wc[i].opcode == DROCE_WC_RECV) {
			c->got++;
			if (post_one_recv(c, (unsigned int)wc[i].wr_id) != 0)
				c->bad = 1;
			return true;
		}
	}
	return false;
}

static int
recv_done_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return recv_done(arg);
}

/* Lcore mode (latcall client): every CQ poll is a droce_rt_call() round trip. */
static bool
recv_done_call(void *arg)
{
	struct rc *c = arg;

	return droce_rt_call(c->rt, recv_done_fn, c) != 0;
}

static int
wait_recv(struct rc *c)
{
	if (droce_rt_run_until(c->rt, c->r->lcore ? recv_done_call : recv_done, c, 5000) != 0)
		return -ETIMEDOUT;
	return c->bad ? -EIO : 0;
}

static int
post_one_send_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return post_one_send(arg);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
run_lat(struct role *r)
{
	static uint64_t rtt[LAT_ITERS];
	char err[256] = "";
	struct rc c = { .r = r };
	char done = 1;
	unsigned int k;
	uint64_t t0;
	int rc;

	c.buf = aligned_alloc(4096, BUF_SIZE);
	CHECK(c.buf != NULL, "no memory");
	memset(c.buf, 0x5a, BUF_SIZE);
	c.rt = open_rt(r, r->lcore, err, sizeof(err));
	CHECK(c.rt != NULL, "open: %s", err);
	CHECK(meet(r, c.rt, c.peer_mac) == 0, "meet");
	rc = setup_fn(c.rt, &c); /* the server posted NSEND receives; the client posts its own */
	if (r->lcore)
		CHECK(droce_rt_start(c.rt) == 0, "start: %s", droce_rt_strerror(c.rt));
	CHECK(rc == 0, "setup: %s", strerror(-rc));
	for (k = 0; !r->server && k < NSEND; k++)
		CHECK(post_one_recv(&c, k) == 0, "post_recv");
	CHECK(write(r->out, &c.me, sizeof(c.me)) == (ssize_t)sizeof(c.me), "pipe");
	CHECK(droce_rt_run_until(c.rt, peer_info_ready, &c, 10000) == 0, "no peer info");
	CHECK(connect_fn(c.rt, &c) == 0, "connect");
	/* the server must be in RTR before the first SEND: one more handshake byte */
	CHECK(write(r->out, &done, 1) == 1, "pipe");
	CHECK(droce_rt_run_until(c.rt, peer_done, r, 10000) == 0, "peer not connected");
	for (k = 0; k < LAT_ITERS + 100; k++) {
		t0 = droce_rt_now(c.rt);
		if (!r->server)
			CHECK((r->lcore ? droce_rt_call(c.rt, post_one_send_fn, &c) :
					  post_one_send(&c)) == 0,
			      "post_send");
		CHECK(wait_recv(&c) == 0, "completion error");
		if (r->server)
			CHECK(post_one_send(&c) == 0, "post_send");
		else if (k >= 100)
			rtt[k - 100] = droce_rt_now(c.rt) - t0; /* the first 100 warm up */
	}
	if (!r->server) {
		qsort(rtt, LAT_ITERS, sizeof(rtt[0]), cmp_u64);
		printf("lat: %u x %u-byte RC SEND ping-pong, client %s, idle_spins %u: median "
		       "%.1f us, p99 %.1f us, min %.1f us\n",
		       LAT_ITERS, LAT_LEN,
		       r->lcore ? "on a poll lcore via droce_rt_call" : "inline",
		       droce_rt_config(c.rt)->idle_spins, rtt[LAT_ITERS / 2] / 1e3,
		       rtt[LAT_ITERS * 99 / 100] / 1e3, rtt[0] / 1e3);
	}
	/* drain: the last ACKs */
	CHECK(write(r->out, &done, 1) == 1, "pipe");
	CHECK(droce_rt_run_until(c.rt, peer_done, r, 10000) == 0, "peer not done");
	close_rt(c.rt);
	free(c.buf);
	return 0;
}
