/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bandwidth mode (and the read / atomic latency, which is bw at depth 1): the client keeps up to
 * `depth` signalled WRs outstanding per QP, round robin, until -n or -D; the server serves
 * WRITE/READ/atomics passively and checks every SEND it receives. Each step is one pass,
 * bounded by the CQ batch and the window.
 */
#include <errno.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_drop.h"
#include "perf.h"

enum { CQ_BATCH = 32, TCP_POLL_NS = 1000000 };

void
perf_maybe_corrupt(struct perf_ctx *c, uint8_t *p)
{
	if (c->plan.corrupt && !c->corrupted) {
		c->corrupted = true;
		*p ^= 0x5a;
	}
}

void
perf_sample(struct perf_ctx *c, uint64_t ns)
{
	if (c->samples != NULL && c->nsamples < PERF_MAX_SAMPLES)
		c->samples[c->nsamples++] = ns;
}

static uint32_t
window(const struct perf_ctx *c, const struct perf_qp *q)
{
	uint32_t w = c->plan.mode == PERF_MODE_LAT ? 1 : c->plan.depth;

	return w < q->slots ? w : q->slots;
}

static int
post_one(struct perf_ctx *c, unsigned int qi, uint64_t j)
{
	struct perf_qp *q = &c->q[qi];
	uint32_t slot = (uint32_t)(j % q->slots);
	bool atomic = perf_is_atomic(c->plan.op);
	uint32_t len = atomic ? 8 : c->size;
	uint8_t *local = q->buf + (uint64_t)slot * len;
	struct droce_sge sge = { .addr = (uintptr_t)local,
				 .length = len,
				 .lkey = droce_mr_lkey(q->mr) };
	struct droce_send_wr wr = { .wr_id = PERF_WR(qi, j),
				    .sg_list = &sge,
				    .num_sge = 1,
				    .send_flags = DROCE_SEND_SIGNALED },
			     *bad;

	switch (c->plan.op) {
	case PERF_OP_WRITE:
	case PERF_OP_SEND:
		if (c->plan.verify)
			perf_fill(local, len, j);
		wr.opcode = c->plan.op == PERF_OP_WRITE ? DROCE_WR_RDMA_WRITE : DROCE_WR_SEND;
		break;
	case PERF_OP_READ:
		if (c->plan.verify)
			memset(local, 0, len); /* stale data must not pass */
		wr.opcode = DROCE_WR_RDMA_READ;
		break;
	case PERF_OP_FADD:
		wr.opcode = DROCE_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = 1;
		break;
	case PERF_OP_CSWAP:
		wr.opcode = DROCE_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = perf_atomic_expect(qi, j);
		wr.wr.atomic.swap = perf_atomic_expect(qi, j) + 1;
		break;
	case PERF_OP_AWRITE:
		/* the value fetch-and-add would leave: the counter ends the same way */
		wr.opcode = DROCE_WR_ATOMIC_WRITE;
		wr.wr.atomic.swap = perf_atomic_expect(qi, j) + 1;
		break;
	}
	if (atomic) {
		wr.wr.atomic.remote_addr = q->peer.va; /* the counter is the peer's slot 0 */
		wr.wr.atomic.rkey = q->peer.rkey;
	} else {
		wr.wr.rdma.remote_addr = q->peer.va + (uint64_t)slot * len;
		wr.wr.rdma.rkey = q->peer.rkey;
	}
	return droce_post_send(q->qp, &wr, &bad);
}

/* Client side check of what came back: READ data, atomic original values. */
static void
check_completion(struct perf_ctx *c, unsigned int qi, uint64_t j)
{
	struct perf_qp *q = &c->q[qi];
	uint32_t slot = (uint32_t)(j % q->slots), first = 0;
	uint64_t v, bad;

	if (c->plan.op == PERF_OP_READ) {
		uint8_t *p = q->buf + (uint64_t)slot * c->size;

		perf_maybe_corrupt(c, p);
		bad = perf_check(p, c->size, slot, &first); /* the server's pattern of slot */
		if (bad != 0 && c->bad == 0)
			perf_fail(c, "verify: READ %llu (QP %u): %llu bytes differ, first at %u",
				  (unsigned long long)j, qi, (unsigned long long)bad, first);
		c->bad += bad;
	} else if (perf_is_atomic(c->plan.op) && c->plan.op != PERF_OP_AWRITE) {
		memcpy(&v, q->buf + (uint64_t)slot * 8, 8);
		if (c->plan.corrupt && !c->corrupted) {
			c->corrupted = true;
			v ^= 1;
		}
		if (v != perf_atomic_expect(qi, j)) {
			if (c->bad == 0)
				perf_fail(c,
					  "verify: %s %llu (QP %u) returned %#llx, expected %#llx",
					  perf_op_name(c->plan.op), (unsigned long long)j, qi,
					  (unsigned long long)v,
					  (unsigned long long)perf_atomic_expect(qi, j));
			c->bad++;
		}
	}
}

/* A completion of the shard's CQ: its QP (from wr_id) may post again. */
static int
client_wc(struct perf_ctx *c, unsigned int s, const struct droce_wc *wc, uint64_t now)
{
	unsigned int qi = PERF_WR_QP(wc->wr_id);
	uint64_t j = PERF_WR_J(wc->wr_id);
	struct perf_qp *q;

	if (qi >= c->plan.qps) {
		perf_fail(c, "completion of an unknown QP index %u", qi);
		return -EPROTO;
	}
	q = &c->q[qi];
	if (wc->status != DROCE_WC_SUCCESS) {
		perf_fail(c, "%s %llu on QP %u completed with status %d", perf_op_name(c->plan.op),
			  (unsigned long long)j, qi, wc->status);
		return -EIO;
	}
	if (c->plan.verify)
		check_completion(c, qi, j);
	if (c->plan.mode == PERF_MODE_LAT)
		perf_sample(c, now - c->t_post);
	else
		perf_sample(c, now - c->tpost[(uint64_t)qi * c->plan.depth + j % c->plan.depth]);
	q->done++;
	c->outstanding[s]--;
	c->out_all--;
	if (!q->queued) {
		q->queued = true;
		c->ready[s][(c->ready_head[s] + c->ready_n[s]++) % c->ready_qps[s]] = qi;
	}
	c->t_last = now;
	c->t_end = now;
	return 0;
}

static int
poll_cq(struct perf_ctx *c, unsigned int s, uint64_t now)
{
	struct droce_wc wc[CQ_BATCH];
	int n, i, b, rc;

	/* a few batches a step: the shard's CQ holds every QP's completions */
	for (b = 0; b < 4; b++) {
		n = droce_cq_poll(c->cq[s], CQ_BATCH, wc);
		if (n < 0) {
			perf_fail(c, "CQ poll: %d", n);
			return n;
		}
		for (i = 0; i < n; i++) {
			rc = client_wc(c, s, &wc[i], now);
			if (rc != 0)
				return rc;
		}
		if (n < CQ_BATCH)
			break;
	}
	return 0;
}

/* One WR of QP qi: its post time kept for the latency sample. */
static int
post_wr(struct perf_ctx *c, unsigned int s, unsigned int qi, uint64_t now)
{
	struct perf_qp *q = &c->q[qi];
	int rc;

	if (c->plan.mode == PERF_MODE_LAT)
		c->t_post = perf_now(c);
	else
		c->tpost[(uint64_t)qi * c->plan.depth + q->posted % c->plan.depth] = now;
	rc = post_one(c, qi, q->posted);
	if (rc != 0) {
		perf_fail(c, "post_send: %d", rc);
		return rc;
	}
	q->posted++;
	c->posted_all++;
	c->outstanding[s]++;
	c->out_all++;
	return 0;
}

/* Post from the shard's ready ring of QPs with room in their window: the head QP fills its
 * window (as perftest does: its WRs go out together and draw one ACK), then waits for a
 * completion to queue it again. Round robin over the QPs, O(1) per WR however many there are;
 * --max-outstanding bounds the WRs in flight over all of them. */
static int
post_ready(struct perf_ctx *c, unsigned int s, uint64_t now)
{
	uint64_t max_out = c->o->max_out ? c->o->max_out : UINT64_MAX;
	int rc;

	while (c->ready_n[s] > 0 && !c->stop && c->posted_all < c->plan.iters &&
	       c->out_all < max_out) {
		unsigned int qi = c->ready[s][c->ready_head[s]];
		struct perf_qp *q = &c->q[qi];

		c->ready_head[s] = (c->ready_head[s] + 1) % c->ready_qps[s];
		c->ready_n[s]--;
		q->queued = false;
		while (q->posted - q->done < window(c, q) && c->posted_all < c->plan.iters &&
		       c->out_all < max_out) {
			rc = post_wr(c, s, qi, now);
			if (rc != 0)
				return rc;
		}
		if (q->posted - q->done < window(c, q)) {
			q->queued = true;
			c->ready[s][(c->ready_head[s] + c->ready_n[s]++) % c->ready_qps[s]] = qi;
		}
	}
	return 0;
}

int
perf_bw_client_step(struct perf_ctx *c)
{
	uint64_t now = perf_now(c);
	unsigned int s;
	bool idle = true;
	int rc;

	for (s = 0; s < c->nshards; s++) {
		if (c->cq[s] == NULL || (c->cur_shard >= 0 && (unsigned int)c->cur_shard != s))
			continue;
		rc = poll_cq(c, s, now);
		if (rc != 0)
			return rc;
	}
	if (!c->stop &&
	    (c->posted_all >= c->plan.iters ||
	     (c->plan.duration_ms != 0 && now - c->t0 >= (uint64_t)c->plan.duration_ms * 1000000)))
		c->stop = true;
	for (s = 0; s < c->nshards; s++) {
		if (c->cq[s] == NULL || (c->cur_shard >= 0 && (unsigned int)c->cur_shard != s))
			continue;
		rc = post_ready(c, s, now);
		if (rc != 0)
			return rc;
		if (c->outstanding[s] != 0)
			idle = false;
	}
	return (c->stop || c->posted_all >= c->plan.iters) && idle ? 1 : 0;
}

/* Server: the client's DONE. Looked for about once a millisecond (a syscall); now is the
 * step's clock reading (a read costs ~10 ns here, a step runs every ~100 ns). */
int
perf_server_poll_tcp(struct perf_ctx *c, uint64_t now)
{
	static struct perf_msg m; /* 128 KiB: off the (lcore) stack; steps never overlap */
	unsigned int i;
	int rc;

	if (c->got_done || now - c->t_tcp < TCP_POLL_NS)
		return 0;
	c->t_tcp = now;
	rc = perf_oob_try_recv(c->sock, &m, sizeof(m));
	if (rc <= 0) {
		if (rc < 0)
			perf_fail(c, "the client went away");
		return rc;
	}
	if (m.magic != PERF_MAGIC || m.kind != PERF_MSG_DONE) {
		perf_fail(c, "unexpected message %u from the client", m.kind);
		return -EPROTO;
	}
	memset(c->expect_s, 0, sizeof(c->expect_s));
	for (i = 0; i < c->plan.qps; i++) {
		c->expect[i] = m.count[i];
		c->expect_s[c->q[i].shard] += m.count[i];
	}
	c->got_done = true;
	return 0;
}

/* Progress on a passive server is the engines receiving packets (each read on its thread):
 * the device's count of accepted RoCE frames, one word (a QP counter would sum every QP's
 * state: a cache miss a QP with thousands of them). Looked at only once the last sign of
 * progress is PERF_RX_LOOK_NS old, not on every step. */
#define PERF_RX_LOOK_NS (10 * 1000 * 1000ull)

static void
rx_progress(struct perf_ctx *c)
{
	unsigned int s;
	uint64_t rx;

	if (perf_now(c) - c->t_last < PERF_RX_LOOK_NS)
		return;
	for (s = 0; s < c->nshards; s++) {
		if (c->cur_shard >= 0 && (unsigned int)c->cur_shard != s)
			continue;
		rx = droce_dev_drops(droce_rt_shard_dev(c->rt, s), DROCE_DROP_NONE);
		if (rx != c->last_rx[s]) {
			c->last_rx[s] = rx;
			c->t_last = perf_now(c);
		}
	}
}

static int
server_recv(struct perf_ctx *c, unsigned int s)
{
	struct droce_wc wc[CQ_BATCH];
	uint32_t first = 0, slot;
	unsigned int qi;
	struct perf_qp *q;
	uint64_t bad;
	uint8_t *p;
	int n, i;

	n = droce_cq_poll(c->cq[s], CQ_BATCH, wc);
	for (i = 0; i < n; i++) {
		qi = PERF_WR_QP(wc[i].wr_id);
		slot = (uint32_t)PERF_WR_J(wc[i].wr_id);
		if (qi >= c->plan.qps) {
			perf_fail(c, "receive of an unknown QP index %u", qi);
			return -EPROTO;
		}
		q = &c->q[qi];
		if (wc[i].status != DROCE_WC_SUCCESS) {
			perf_fail(c, "receive %llu on QP %u: status %d",
				  (unsigned long long)q->rdone, qi, wc[i].status);
			return -EIO;
		}
		if (wc[i].opcode != DROCE_WC_RECV)
			continue;
		p = q->buf + (uint64_t)slot * c->size;
		if (c->plan.verify) {
			perf_maybe_corrupt(c, p);
			bad = perf_check(p, c->size, q->rdone, &first);
			if (wc[i].byte_len != c->size)
				bad++;
			if (bad != 0 && c->bad == 0)
				perf_fail(c,
					  "verify: SEND %llu (QP %u): %u bytes of %u, %llu bad, "
					  "first at %u",
					  (unsigned long long)q->rdone, qi, wc[i].byte_len, c->size,
					  (unsigned long long)bad, first);
			c->bad += bad;
		}
		q->rdone++;
		c->rdone_s[s]++;
		if (perf_post_recv(c, qi, slot) != 0) {
			perf_fail(c, "post_recv failed");
			return -EIO;
		}
	}
	return n < 0 ? n : 0;
}

int
perf_bw_server_step(struct perf_ctx *c)
{
	unsigned int s;
	bool all = true;
	int rc;

	rx_progress(c);
	for (s = 0; c->plan.op == PERF_OP_SEND && s < c->nshards; s++) {
		if (c->cq[s] == NULL || (c->cur_shard >= 0 && (unsigned int)c->cur_shard != s))
			continue;
		rc = server_recv(c, s);
		if (rc != 0)
			return rc;
		/* before DONE expect_s is 0: got_done below keeps the step going */
		if (c->rdone_s[s] < c->expect_s[s])
			all = false;
	}
	rc = perf_server_poll_tcp(c, perf_now(c));
	if (rc < 0)
		return rc;
	return c->got_done && all ? 1 : 0;
}
