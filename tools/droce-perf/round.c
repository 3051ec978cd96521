/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A round's buffers before the first packet (zeroed slots, the server's READ pattern and atomic
 * counters, posted receives) and the server's checks after the client's DONE (the last WRITE
 * into every slot, the counters' final values).
 */
#include <errno.h>
#include <string.h>

#include "perf.h"

static int
prepare_fn(struct perf_ctx *c)
{
	bool atomic = perf_is_atomic(c->plan.op);
	uint32_t len = atomic ? 8 : c->size, s, first_recv = 1, nrecv = 0;
	unsigned int i;
	uint64_t v;
	int rc;

	if (c->plan.op == PERF_OP_SEND)
		nrecv = c->plan.mode == PERF_MODE_LAT ? 8 : (c->o->server ? c->q[0].slots : 0);
	if (c->plan.mode == PERF_MODE_BW)
		first_recv = 0;
	for (i = 0; i < c->plan.qps; i++) {
		struct perf_qp *q = &c->q[i];

		if (!perf_mine(c, i))
			continue;
		/* the client posts from its shard's ring, every QP in it at the start */
		q->queued = true;
		c->ready[q->shard][c->ready_n[q->shard]++] = i;
		if (q->region_first)
			memset(q->buf, 0, (uint64_t)q->slots * len);
		if (c->o->server && c->plan.op == PERF_OP_READ)
			for (s = 0; s < q->slots; s++)
				perf_fill(q->buf + (uint64_t)s * len, len, s);
		if (c->o->server && atomic) {
			v = perf_atomic_init(i);
			memcpy(q->buf, &v, 8);
		}
		for (s = first_recv; s < nrecv; s++) {
			rc = perf_post_recv(c, i, s);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

int
perf_round_prepare(struct perf_ctx *c)
{
	unsigned int i;

	c->stop = false;
	c->awaiting = false;
	c->got_done = false;
	c->nsamples = 0;
	c->bad = 0;
	c->t0 = 0;
	c->t_end = 0;
	c->t_tcp = 0;
	c->posted_all = 0;
	c->out_all = 0;
	for (i = 0; i < PERF_MAX_QPS; i++)
		c->expect[i] = 0;
	for (i = 0; i < DROCE_RT_MAX_SHARDS; i++) {
		c->ready_head[i] = c->ready_n[i] = 0;
		c->outstanding[i] = c->rdone_s[i] = c->expect_s[i] = 0;
	}
	return perf_call(c, prepare_fn);
}

static void
note_bad(struct perf_ctx *c, uint64_t bad, const char *what, unsigned int qi, uint64_t j,
	 uint32_t first)
{
	if (bad != 0 && c->bad == 0)
		perf_fail(c, "verify: %s %llu (QP %u): %llu bytes differ, first at %u", what,
			  (unsigned long long)j, qi, (unsigned long long)bad, first);
	c->bad += bad;
}

int
perf_round_final_check(struct perf_ctx *c)
{
	uint64_t n, j, v, bad;
	uint32_t s, first = 0;
	unsigned int i;

	if (!c->plan.verify)
		return 0;
	for (i = 0; i < c->plan.qps; i++) {
		struct perf_qp *q = &c->q[i];

		n = c->expect[i];
		if (c->plan.op == PERF_OP_WRITE && c->plan.mode == PERF_MODE_BW) {
			/* the last iteration written into each slot */
			for (s = 0; s < q->slots && s < n; s++) {
				uint8_t *p = q->buf + (uint64_t)s * c->size;

				j = s + (n - 1 - s) / q->slots * q->slots;
				perf_maybe_corrupt(c, p);
				bad = perf_check(p, c->size, j, &first);
				note_bad(c, bad, "WRITE", i, j, first);
			}
		}
		if (perf_is_atomic(c->plan.op)) {
			if (c->plan.op == PERF_OP_AWRITE)
				perf_maybe_corrupt(c, q->buf); /* only the server checks it */
			memcpy(&v, q->buf, 8);
			if (v != perf_atomic_init(i) + n) {
				if (c->bad == 0)
					perf_fail(c,
						  "verify: QP %u counter %#llx after %llu %s, "
						  "expected %#llx",
						  i, (unsigned long long)v, (unsigned long long)n,
						  perf_op_name(c->plan.op),
						  (unsigned long long)(perf_atomic_init(i) + n));
				c->bad++;
			}
		}
	}
	return c->bad ? -EIO : 0;
}
