/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime, the per-round QPs and their connection (INIT, RTR with the peer's QPN, PSN and
 * GID, RTS), and the driver that runs a step function under the loop with a progress line and a
 * peer timeout. Engine calls go through perf_call(): direct in inline mode, droce_rt_call() when
 * the loop runs on a poll lcore.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_ext.h"
#include "perf.h"

void
perf_fail(struct perf_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	c->failed = true;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
}

uint64_t
perf_now(const struct perf_ctx *c)
{
	return droce_rt_now(c->rt);
}

struct call {
	struct perf_ctx *c;
	int (*fn)(struct perf_ctx *c);
};

static int
call_tramp(struct droce_rt *rt, void *arg)
{
	struct call *k = arg;

	(void)rt;
	return k->fn(k->c);
}

int
perf_call(struct perf_ctx *c, int (*fn)(struct perf_ctx *c))
{
	struct call k = { c, fn };
	unsigned int s;
	int rc, res = 1;

	c->cur_shard = -1;
	if (!c->lcore)
		return fn(c);
	if (c->nshards == 1 || c->one_call)
		return droce_rt_call(c->rt, call_tramp, &k);
	/* The caller waits for each run: fn's runs never overlap, each on its shard's lcore. */
	for (s = 0; s < c->nshards; s++) {
		if (!(c->used & (1u << s)))
			continue;
		c->cur_shard = (int)s;
		rc = droce_rt_call_shard(c->rt, s, call_tramp, &k);
		if (rc < 0) {
			res = rc;
			break;
		}
		if (rc == 0)
			res = 0;
	}
	c->cur_shard = -1;
	return res;
}

static bool
link_up(void *arg)
{
	return droce_rt_link_up(arg);
}

int
perf_open(struct perf_ctx *c, const char *argv0)
{
	char err[256] = "";
	unsigned int i;
	int rc;

	c->rt = droce_rt_open(c->o->config, argv0, err, sizeof(err));
	if (c->rt == NULL) {
		fprintf(stderr, "droce-perf: runtime: %s\n", err);
		return -EIO;
	}
	c->nshards = droce_rt_nb_shards(c->rt);
	c->cur_shard = -1;
	for (i = 0; i < PERF_MAX_QPS; i++)
		c->q[i].shard = (i + c->o->shard_base) % c->nshards;
	if (droce_rt_config(c->rt)->nb_lcores >= 2) {
		rc = droce_rt_start(c->rt);
		if (rc != 0) {
			fprintf(stderr, "droce-perf: poll lcore: %s\n", strerror(-rc));
			return rc;
		}
		c->lcore = true;
	}
	if (droce_rt_run_until(c->rt, link_up, c->rt, 10000) != 0) {
		fprintf(stderr, "droce-perf: link not up in 10 s (is the peer's port there?)\n");
		return -ETIMEDOUT;
	}
	return 0;
}

uint64_t
perf_rss(void)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint32_t
perf_slots(const struct perf_plan *p, uint32_t size)
{
	uint64_t want, cap = PERF_BUF_CAP / size;

	if (perf_is_atomic(p->op))
		return p->depth;
	if (p->mode == PERF_MODE_LAT)
		return 8;
	want = p->depth;
	if (p->verify && p->op == PERF_OP_WRITE && p->iters > want)
		want = p->iters; /* every write in its own slot while they fit */
	if (want > cap)
		want = cap;
	return want > 0 ? (uint32_t)want : 1;
}

static int
alloc_fn(struct perf_ctx *c)
{
	uint64_t len = 0, l, nreg, total;
	unsigned int i, s, k;
	int e = 0;

	for (i = 0; i < c->plan.nsizes; i++) {
		l = (uint64_t)perf_slots(&c->plan, c->plan.sizes[i]) * c->plan.sizes[i];
		if (l > len)
			len = l;
	}
	len = (len + 4095) & ~4095ull;
	total = (uint64_t)c->plan.buf_mb << 20;
	nreg = total / len > 0 ? total / len : 1;
	for (s = 0; s < c->nshards; s++) {
		uint32_t n = 0;

		if (!(c->used & (1u << s)) ||
		    (c->cur_shard >= 0 && (unsigned int)c->cur_shard != s))
			continue;
		for (i = 0; i < c->plan.qps; i++)
			n += c->q[i].shard == s;
		if (n < nreg)
			nreg = n;
		if (c->plan.verify && nreg < n) {
			fprintf(stderr, "droce-perf: --verify: %u QPs of %llu B exceed %u MiB\n", n,
				(unsigned long long)len, c->plan.buf_mb);
			return -E2BIG;
		}
		/* one PD, buffer and MR per shard: a device's objects never mix with another's;
		 * QPs beyond --buf-mb write the same regions (a rate, not a check) */
		c->pd[s] = droce_pd_alloc(droce_rt_shard_dev(c->rt, s), &e);
		if (c->pd[s] == NULL)
			return -e;
		c->buf[s] = aligned_alloc(4096, nreg * len);
		if (c->buf[s] == NULL)
			return -ENOMEM;
		memset(c->buf[s], 0, nreg * len); /* pre-faulted: no first-touch cost in the run */
		c->mr[s] =
			droce_mr_reg(c->pd[s], c->buf[s], nreg * len,
				     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
					     DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC,
				     &e);
		if (c->mr[s] == NULL)
			return -e;
		c->ready[s] = calloc(n, sizeof(*c->ready[s]));
		if (c->ready[s] == NULL)
			return -ENOMEM;
		c->ready_qps[s] = n;
		for (k = 0, i = 0; i < c->plan.qps; i++) {
			struct perf_qp *q = &c->q[i];

			if (q->shard != s)
				continue;
			q->buf = c->buf[s] + (k % nreg) * len;
			q->region_first = k < nreg;
			q->len = len;
			q->mr = c->mr[s];
			k++;
		}
	}
	return 0;
}

/* Buffers and MRs, once for all rounds (sized for the largest). */
int
perf_setup_qps(struct perf_ctx *c)
{
	unsigned int i;

	c->used = 0;
	for (i = 0; i < c->plan.qps; i++)
		c->used |= 1u << c->q[i].shard;
	if (c->plan.mode == PERF_MODE_BW) {
		c->tpost = calloc((size_t)c->plan.qps * c->plan.depth, sizeof(*c->tpost));
		if (c->tpost == NULL)
			return -ENOMEM;
	}
	return perf_call(c, alloc_fn);
}

static int
qp_create_fn(struct perf_ctx *c)
{
	union droce_cc_params ccp; /* qp_cc's, copied by the QP */
	uint32_t depth = c->plan.depth < 16 ? 16 : c->plan.depth;
	struct droce_qp_init_attr ia = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = depth,
			 .max_recv_wr = depth,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	uint32_t per_qp = 2 * (depth > 8 ? depth : 8); /* sends and receives (lat: 8) */
	uint64_t n[DROCE_RT_MAX_SHARDS] = { 0 };
	unsigned int i, s;
	int e = 0, rc;

	for (i = 0; i < c->plan.qps; i++)
		n[c->q[i].shard]++;
	for (s = 0; s < c->nshards; s++) {
		if (n[s] == 0 || (c->cur_shard >= 0 && (unsigned int)c->cur_shard != s))
			continue;
		/* one CQ for the shard's QPs: a step polls it, not every QP's */
		c->cq[s] = droce_cq_create(droce_rt_shard_dev(c->rt, s),
					   (uint32_t)(n[s] * per_qp + 16), NULL, &e);
		if (c->cq[s] == NULL)
			return -e;
	}
	for (i = 0; i < c->plan.qps; i++) {
		struct perf_qp *q = &c->q[i];

		if (!perf_mine(c, i))
			continue;
		q->cq = c->cq[q->shard];
		ia.send_cq = q->cq;
		ia.recv_cq = q->cq;
		ia.cc = NULL;
		ia.cc_params = NULL;
		rc = droce_rt_qp_cc(c->rt, i, &ia, &ccp); /* QP i of the run */
		if (rc != 0)
			return rc;
		q->qp = droce_qp_create(c->pd[q->shard], &ia, &e);
		if (q->qp == NULL)
			return -e;
		rc = droce_qp_init(q->qp,
				   DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
					   DROCE_ACCESS_REMOTE_ATOMIC,
				   0);
		if (rc != 0)
			return rc;
		memset(&q->me, 0, sizeof(q->me));
		q->me.qpn = droce_qp_num(q->qp);
		q->me.psn =
			(uint32_t)((c->o->server ? 0x1000 : 0x2000) + c->round * 64 + i) & 0xffffff;
		q->me.rkey = droce_mr_rkey(q->mr);
		q->me.va = (uintptr_t)q->buf;
		q->me.len = q->len;
		q->me.slots = q->slots;
		if (droce_rt_gid(c->rt, c->plan.gid_index, q->me.gid) <= c->plan.gid_index)
			return -ENOENT;
		q->posted = q->done = q->rdone = 0;
	}
	return 0;
}

static enum droce_mtu
mtu_enum(uint32_t bytes)
{
	enum droce_mtu m = DROCE_MTU_256;

	while (bytes > 256u << (m - 1) && m < DROCE_MTU_4096)
		m++;
	return m;
}

static int
connect_fn(struct perf_ctx *c)
{
	uint32_t mtu = c->plan.mtu ? c->plan.mtu : droce_rt_config(c->rt)->path_mtu;
	struct droce_qp_conn cn;
	unsigned int i;
	int rc;

	memset(&cn, 0, sizeof(cn));
	cn.path_mtu = mtu_enum(mtu);
	/* responder resources only where READs or atomics run (as perftest): 16 of them make
	 * each QP allocate a response ring twice the size (5.5 KB) again at RTR */
	if (c->plan.op == PERF_OP_READ || perf_is_atomic(c->plan.op)) {
		cn.max_dest_rd_atomic = 16;
		cn.max_rd_atomic = 16;
	}
	cn.min_rnr_timer = 1; /* 0.01 ms: a send outrunning the receives retries soon */
	cn.timeout = 14;      /* 67 ms: a loaded 2-core machine stalls for tens of ms */
	cn.retry_cnt = 7;
	cn.rnr_retry = 7; /* infinite: receives are reposted as they are checked */
	cn.av = c->peer_av;
	for (i = 0; i < c->plan.qps; i++) {
		struct perf_qp *q = &c->q[i];

		if (!perf_mine(c, i))
			continue;
		cn.dest_qp_num = q->peer.qpn;
		cn.rq_psn = q->peer.psn;
		cn.sq_psn = q->me.psn;
		memcpy(cn.av.dgid, q->peer.gid, 16);
		rc = droce_qp_connect(q->qp, &cn);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Create this round's QPs, trade endpoints with the peer, resolve its MAC, go to RTS. */
int
perf_connect_qps(struct perf_ctx *c)
{
	struct perf_ep *eps;
	size_t len = c->plan.qps * sizeof(eps[0]);
	unsigned int i;
	int rc;

	for (i = 0; i < c->plan.qps; i++)
		c->q[i].slots = perf_slots(&c->plan, c->size);
	c->rss0 = perf_rss();
	rc = perf_call(c, qp_create_fn);
	if (rc != 0) {
		const struct droce_rt_config *cfg = droce_rt_config(c->rt);

		fprintf(stderr, "droce-perf: QP set-up: %s\n", strerror(-rc));
		if (rc == -ENOMEM && (c->plan.qps + c->nshards - 1) / c->nshards > cfg->max_qp)
			fprintf(stderr,
				"droce-perf: %u QPs over %u shard(s) of max_qp %u each: raise "
				"DROCE_MAX_QP (or max_qp in the config) on both sides\n",
				c->plan.qps, c->nshards, cfg->max_qp);
		return rc;
	}
	eps = malloc(len);
	if (eps == NULL)
		return -ENOMEM;
	for (i = 0; i < c->plan.qps; i++)
		eps[i] = c->q[i].me;
	rc = perf_oob_send(c->sock, eps, len, c->plan.timeout_ms);
	if (rc == 0)
		rc = perf_oob_recv(c->sock, eps, len, c->plan.timeout_ms + 5000);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: endpoint exchange: %s\n", strerror(-rc));
		free(eps);
		return rc;
	}
	for (i = 0; i < c->plan.qps; i++)
		c->q[i].peer = eps[i];
	free(eps);
	if (c->round == 0) {
		/* the runtime fills the MAC and its VLAN tag, so frames leave tagged as built */
		memset(&c->peer_av, 0, sizeof(c->peer_av));
		memcpy(c->peer_av.dgid, c->q[0].peer.gid, 16);
		c->peer_av.sgid_index = (uint8_t)c->plan.gid_index;
		c->peer_av.hop_limit = 64;
		rc = droce_rt_resolve_av(c->rt, &c->peer_av, 5000);
		if (rc != 0) {
			fprintf(stderr, "droce-perf: peer MAC: %s\n", droce_rt_strerror(c->rt));
			return rc;
		}
	}
	rc = perf_call(c, connect_fn);
	if (rc != 0)
		fprintf(stderr, "droce-perf: QP to RTR/RTS: %s (path MTU within DROCE_MTU?)\n",
			strerror(-rc));
	return rc;
}

static int
qp_destroy_fn(struct perf_ctx *c)
{
	unsigned int i, s;

	for (i = 0; i < c->plan.qps; i++) {
		if (!perf_mine(c, i))
			continue;
		if (c->q[i].qp != NULL)
			droce_qp_destroy(c->q[i].qp);
		c->q[i].qp = NULL;
		c->q[i].cq = NULL;
	}
	for (s = 0; s < c->nshards; s++) {
		if (c->cq[s] == NULL || (c->cur_shard >= 0 && (unsigned int)c->cur_shard != s))
			continue;
		droce_cq_destroy(c->cq[s]);
		c->cq[s] = NULL;
	}
	return 0;
}

void
perf_teardown_qps(struct perf_ctx *c)
{
	perf_call(c, qp_destroy_fn);
}

static int
free_fn(struct perf_ctx *c)
{
	unsigned int i;

	qp_destroy_fn(c);
	for (i = 0; i < DROCE_RT_MAX_SHARDS; i++) {
		if (c->cur_shard >= 0 && (unsigned int)c->cur_shard != i)
			continue;
		if (c->mr[i] != NULL)
			droce_mr_dereg(c->mr[i]);
		c->mr[i] = NULL;
		if (c->pd[i] == NULL)
			continue;
		droce_pd_dealloc(c->pd[i]);
		c->pd[i] = NULL;
	}
	return 0;
}

void
perf_close(struct perf_ctx *c)
{
	unsigned int i;

	if (c->rt == NULL)
		return;
	perf_call(c, free_fn);
	droce_rt_close(c->rt);
	c->rt = NULL;
	for (i = 0; i < DROCE_RT_MAX_SHARDS; i++) {
		free(c->buf[i]);
		free(c->ready[i]);
	}
	free(c->tpost);
}

int
perf_post_recv(struct perf_ctx *c, unsigned int qi, uint32_t slot)
{
	struct perf_qp *q = &c->q[qi];
	struct droce_sge sge = {
		.addr = (uintptr_t)(q->buf + (uint64_t)slot * c->size),
		.length = c->size,
		.lkey = droce_mr_lkey(q->mr),
	};
	struct droce_recv_wr wr = { .wr_id = PERF_WR(qi, slot), .sg_list = &sge, .num_sge = 1 },
			     *bad;

	return droce_post_recv(q->qp, &wr, &bad);
}

struct drive {
	struct perf_ctx *c;
	int (*step)(struct perf_ctx *c);
	const char *what;
	int rc;
	unsigned int calls;
};

static bool
drive_cond(void *arg)
{
	struct drive *d = arg;
	struct perf_ctx *c = d->c;
	uint64_t now;

	d->rc = perf_call(c, d->step);
	if (d->rc != 0)
		return true;
	/* The timeout and the progress line need no fresh clock at every step: a step runs
	 * every ~0.1-0.2 us inline, and a clock read is ~10 ns of that. */
	if ((++d->calls & 255) != 0)
		return false;
	now = perf_now(c);
	if (now - c->t_last > (uint64_t)c->plan.timeout_ms * 1000000) {
		perf_fail(c, "%s: no progress for %u ms (peer gone?)", d->what, c->plan.timeout_ms);
		d->rc = -ETIMEDOUT;
		return true;
	}
	if (now - c->t_progress >= 1000000000ull) {
		c->t_progress = now;
		return true; /* back to perf_drive for the progress line */
	}
	return false;
}

int
perf_drive(struct perf_ctx *c, int (*step)(struct perf_ctx *c), const char *what)
{
	struct drive d = { c, step, what, 0, 0 };
	uint64_t done;
	unsigned int i;

	c->t_last = perf_now(c);
	c->t_progress = c->t_last;
	for (;;) {
		/* run_until's own bound is a backstop: drive_cond returns at least every second */
		droce_rt_run_until(c->rt, drive_cond, &d, 2000);
		if (d.rc != 0)
			return d.rc < 0 ? d.rc : 0;
		if (perf_now(c) - c->t_last > (uint64_t)c->plan.timeout_ms * 1000000) {
			perf_fail(c, "%s: no progress for %u ms (peer gone?)", what,
				  c->plan.timeout_ms);
			return -ETIMEDOUT;
		}
		if (c->o->quiet || c->t0 == 0)
			continue;
		for (done = 0, i = 0; i < c->plan.qps; i++)
			done += c->q[i].done > c->q[i].rdone ? c->q[i].done : c->q[i].rdone;
		fprintf(stderr, "droce-perf: %s %u B: %.1f s, %llu done\n", what, c->size,
			(double)(perf_now(c) - c->t0) / 1e9, (unsigned long long)done);
	}
}
