/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency ping-pong for WRITE and SEND (perftest's write_lat / send_lat): the client sends
 * iteration j, the server answers once j has arrived whole, the client times the round trip.
 * WRITE arrival is seen by polling the last byte of slot 0 (perf_marker: it changes every
 * iteration); data goes out of slot 1. SEND receives sit in slots 1..7, sends leave slot 0.
 * READ and atomics are timed by the bw client at depth 1 (bw.c).
 */
#include <errno.h>
#include <string.h>

#include "droce_counters.h"
#include "perf.h"

enum { CQ_BATCH = 16 };

static int
post(struct perf_ctx *c, uint64_t j)
{
	struct perf_qp *q = &c->q[0];
	bool wr_op = c->plan.op == PERF_OP_WRITE;
	uint8_t *src = q->buf + (wr_op ? c->size : 0);
	struct droce_sge sge = { .addr = (uintptr_t)src,
				 .length = c->size,
				 .lkey = droce_mr_lkey(q->mr) };
	struct droce_send_wr wr = { .wr_id = j,
				    .sg_list = &sge,
				    .num_sge = 1,
				    .send_flags = DROCE_SEND_SIGNALED },
			     *bad;

	if (c->plan.verify)
		perf_fill(src, c->size, j);
	if (wr_op) {
		src[c->size - 1] = perf_marker(j);
		wr.opcode = DROCE_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = q->peer.va;
		wr.wr.rdma.rkey = q->peer.rkey;
	} else {
		wr.opcode = DROCE_WR_SEND;
	}
	q->posted++;
	return droce_post_send(q->qp, &wr, &bad);
}

static void
check(struct perf_ctx *c, uint8_t *p, uint32_t len, uint64_t j, const char *what)
{
	uint32_t first = 0;
	uint64_t bad;

	perf_maybe_corrupt(c, p);
	bad = perf_check(p, len, j, &first);
	if (bad != 0 && c->bad == 0)
		perf_fail(c, "verify: %s %llu: %llu bytes differ, first at %u", what,
			  (unsigned long long)j, (unsigned long long)bad, first);
	c->bad += bad;
}

/* One arrival, if any: 1 when iteration q->rdone arrived (and was checked), 0, or -errno.
 * Send completions are counted on the way. */
static int
arrival(struct perf_ctx *c, uint64_t now)
{
	struct perf_qp *q = &c->q[0];
	struct droce_wc wc[CQ_BATCH];
	int n, i, got = 0;

	n = droce_cq_poll(q->cq, CQ_BATCH, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].status != DROCE_WC_SUCCESS) {
			perf_fail(c, "%s %llu: completion status %d", perf_op_name(c->plan.op),
				  (unsigned long long)wc[i].wr_id, wc[i].status);
			return -EIO;
		}
		if (wc[i].opcode != DROCE_WC_RECV) {
			q->done++;
			c->t_last = now;
			continue;
		}
		/* SEND: at most one request is out, so one receive completes per iteration */
		if (c->plan.verify) {
			check(c, q->buf + wc[i].wr_id * c->size, c->size, q->rdone, "SEND");
			if (wc[i].byte_len != c->size && c->bad++ == 0)
				perf_fail(c, "verify: SEND %llu: %u bytes, sent %u",
					  (unsigned long long)q->rdone, wc[i].byte_len, c->size);
		}
		if (perf_post_recv(c, 0, (uint32_t)wc[i].wr_id) != 0) {
			perf_fail(c, "post_recv failed");
			return -EIO;
		}
		got = 1;
	}
	if (n < 0)
		return n;
	if (c->plan.op == PERF_OP_WRITE) {
		volatile uint8_t *last = q->buf + c->size - 1;

		if (*last == perf_marker(q->rdone)) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (c->plan.verify)
				check(c, q->buf, c->size - 1, q->rdone, "WRITE");
			got = 1;
		}
	}
	if (got) {
		q->rdone++;
		c->t_last = now;
	}
	return got;
}

int
perf_lat_client_step(struct perf_ctx *c)
{
	struct perf_qp *q = &c->q[0];
	uint64_t now = perf_now(c);
	int rc;

	if (!perf_mine(c, 0))
		return 1; /* latency runs on the first QP alone: its shard's run decides */
	if (c->awaiting) {
		rc = arrival(c, now);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return 0;
		perf_sample(c, now - c->t_post);
		c->t_end = now;
		c->awaiting = false;
	} else {
		rc = arrival(c, now); /* send completions only */
		if (rc < 0)
			return rc;
	}
	if (!c->stop &&
	    (q->rdone >= c->plan.iters ||
	     (c->plan.duration_ms != 0 && now - c->t0 >= (uint64_t)c->plan.duration_ms * 1000000)))
		c->stop = true;
	if (c->stop)
		return q->done == q->posted ? 1 : 0;
	c->t_post = perf_now(c);
	rc = post(c, q->rdone);
	if (rc != 0) {
		perf_fail(c, "post_send: %d", rc);
		return rc;
	}
	c->awaiting = true;
	return 0;
}

int
perf_lat_server_step(struct perf_ctx *c)
{
	struct perf_qp *q = &c->q[0];
	uint64_t now = perf_now(c);
	int rc;

	if (!perf_mine(c, 0))
		return 1; /* latency runs on the first QP alone: its shard's run decides */
	rc = arrival(c, now);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		rc = post(c, q->rdone - 1); /* the answer carries the same iteration */
		if (rc != 0) {
			perf_fail(c, "post_send: %d", rc);
			return rc;
		}
	}
	rc = perf_server_poll_tcp(c, now);
	if (rc < 0)
		return rc;
	return c->got_done && q->rdone >= c->expect[0] && q->done == q->posted ? 1 : 0;
}
