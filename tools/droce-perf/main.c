/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf: perftest-like benchmark over the droce runtime's native API.
 * Server and client meet over TCP (the plan, then per size: endpoints, READY, DONE, VERDICT);
 * each size is a round with its own freshly connected QPs.
 */
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "perf.h"

static int
verdict_step(struct perf_ctx *c)
{
	struct perf_msg *m = (struct perf_msg *)c->verdict_msg;
	int rc = perf_oob_try_recv(c->sock, m, sizeof(*m));

	if (rc < 0) {
		perf_fail(c, "the server went away before its verdict");
		return rc;
	}
	return rc;
}

static uint64_t
retrans(struct perf_ctx *c)
{
	uint64_t v = 0;

	droce_rt_counter(c->rt, "dev.roce_adp_retrans", &v);
	return v;
}

/* The round's congestion control as the runtime sees it, before its QPs go (perf_result). */
static void
cc_state(struct perf_ctx *c, struct perf_result *r)
{
	int room = (int)c->plan.qps + 64, n, i; /* the round's QPs and the runtime's own */
	struct droce_rt_qp_info *qi = calloc((size_t)room, sizeof(*qi));
	uint32_t qpn0 = droce_qp_num(c->q[0].qp);

	r->cc = "none";
	r->n_cc = 0;
	r->cc_held = 0;
	if (qi == NULL)
		return;
	n = droce_rt_qps(c->rt, qi, room);
	for (i = 0; i < n && i < room; i++) {
		r->cc_held += qi[i].cc_deferred; /* per round: this round's QPs are new */
		if (qi[i].qpn != qpn0)
			continue;
		r->cc = qi[i].cc;
		r->n_cc = qi[i].n_cc;
		memcpy(r->cc_stats, qi[i].cc_stats, sizeof(r->cc_stats));
	}
	free(qi);
}

/* The OOB socket has a message (or an end) to read. */
static bool
oob_readable(void *arg)
{
	return perf_oob_readable(*(const int *)arg) != 0;
}

static int
client_round(struct perf_ctx *c, struct perf_result *r)
{
	static struct perf_msg m; /* count[] of every QP: 128 KiB */
	uint64_t iters = 0, rt0 = retrans(c);
	unsigned int i;
	int rc;

	memset(&m, 0, sizeof(m));
	/* The server resolves our address before it answers: with the loop inline, it must run
	 * while we wait, or that ARP goes unanswered (a server that joined droce-portd after our
	 * own ARP went by has no copy of it to learn from) and both sides wait out their
	 * timeouts. */
	droce_rt_run_until(c->rt, oob_readable, &c->sock, c->plan.timeout_ms + 5000);
	rc = perf_oob_recv(c->sock, &m, sizeof(m), 1000);
	if (rc != 0 || m.magic != PERF_MAGIC || m.kind != PERF_MSG_READY) {
		fprintf(stderr, "droce-perf: no READY from the server\n");
		return -EPROTO;
	}
	c->t0 = perf_now(c);
	rc = perf_drive(c,
			c->plan.mode == PERF_MODE_LAT && (c->plan.op == PERF_OP_WRITE ||
							  c->plan.op == PERF_OP_SEND) ?
				perf_lat_client_step :
				perf_bw_client_step,
			c->plan.mode == PERF_MODE_LAT ? "lat" : "bw");
	if (rc != 0 || c->failed)
		return rc ? rc : -EIO;
	memset(&m, 0, sizeof(m));
	m.magic = PERF_MAGIC;
	m.kind = PERF_MSG_DONE;
	for (i = 0; i < c->plan.qps; i++) {
		m.count[i] = c->plan.mode == PERF_MODE_LAT && !perf_is_atomic(c->plan.op) &&
					     c->plan.op != PERF_OP_READ ?
				     c->q[i].rdone :
				     c->q[i].posted;
		iters += m.count[i];
	}
	perf_report_shards(c, m.count);
	perf_result_fill(c, r, iters, c->t_end > c->t0 ? c->t_end - c->t0 : 0);
	r->rss = perf_rss();
	r->rss_per_qp = ((double)r->rss - (double)c->rss0) / c->plan.qps;
	r->retrans = retrans(c) - rt0;
	cc_state(c, r);
	rc = perf_oob_send(c->sock, &m, sizeof(m), c->plan.timeout_ms);
	if (rc != 0)
		return rc;
	memset(&m, 0, sizeof(m));
	c->verdict_msg = &m;
	c->one_call = true; /* TCP only: one run per pass, not one per shard */
	rc = perf_drive(c, verdict_step, "verdict");
	c->one_call = false;
	c->verdict_msg = NULL;
	if (rc != 0)
		return rc;
	if (m.magic != PERF_MAGIC || m.kind != PERF_MSG_VERDICT)
		return -EPROTO;
	r->bad_bytes = c->bad + m.bad;
	r->verified = c->bad == 0 && m.ok;
	if (!m.ok) {
		m.why[sizeof(m.why) - 1] = '\0';
		fprintf(stderr, "droce-perf: server: %s\n", m.why);
		return -EIO;
	}
	return 0;
}

static int
server_round(struct perf_ctx *c)
{
	static struct perf_msg m; /* count[] of every QP: 128 KiB */
	uint64_t n = 0;
	unsigned int i;
	int rc;

	memset(&m, 0, sizeof(m));
	m.magic = PERF_MAGIC;
	m.kind = PERF_MSG_READY;
	rc = perf_oob_send(c->sock, &m, sizeof(m), c->plan.timeout_ms);
	if (rc != 0)
		return rc;
	rc = perf_drive(c,
			c->plan.mode == PERF_MODE_LAT && (c->plan.op == PERF_OP_WRITE ||
							  c->plan.op == PERF_OP_SEND) ?
				perf_lat_server_step :
				perf_bw_server_step,
			"serve");
	if (rc == 0 && !c->failed)
		perf_round_final_check(c);
	for (i = 0; i < c->plan.qps; i++)
		n += c->expect[i];
	perf_report_shards(c, c->expect);
	memset(&m, 0, sizeof(m));
	m.magic = PERF_MAGIC;
	m.kind = PERF_MSG_VERDICT;
	m.ok = !c->failed && c->bad == 0;
	m.bad = c->bad;
	snprintf(m.why, sizeof(m.why), "%s", c->why);
	if (!c->o->quiet)
		printf("server: %s %s %u B: %llu served%s%s\n", perf_op_name(c->plan.op),
		       c->plan.mode == PERF_MODE_LAT ? "lat" : "bw", c->size, (unsigned long long)n,
		       c->plan.verify ? (m.ok ? ", verify ok" : ", FAILED: ") :
					(m.ok ? "" : ", FAILED: "),
		       m.ok ? "" : c->why);
	fflush(stdout);
	if (perf_oob_send(c->sock, &m, sizeof(m), c->plan.timeout_ms) != 0 && rc == 0)
		rc = -EPIPE;
	return rc != 0 ? rc : (m.ok ? 0 : -EIO);
}

static int
exchange_plan(struct perf_ctx *c)
{
	struct perf_plan p;
	int rc;

	if (!c->o->server) {
		c->plan.magic = PERF_MAGIC;
		return perf_oob_send(c->sock, &c->plan, sizeof(c->plan), c->plan.timeout_ms);
	}
	rc = perf_oob_recv(c->sock, &p, sizeof(p), c->plan.timeout_ms);
	if (rc != 0)
		return rc;
	if (p.magic != PERF_MAGIC || p.op > PERF_OP_LAST || p.mode > PERF_MODE_LAT ||
	    p.nsizes == 0 || p.nsizes > PERF_MAX_SIZES || p.qps == 0 || p.qps > PERF_MAX_QPS ||
	    p.depth == 0 || p.depth > 1024 || p.gid_index > 1)
		return -EPROTO;
	c->plan = p; /* the server follows the client, its GID family (-x) included */
	return 0;
}

/* Room for as many QPs as a client may ask (-q up to PERF_MAX_QPS): the server learns the
 * count only from the client, once its runtime is up. The QP table costs address space, not
 * memory, until QPs take its slots. A max_qp of the user's (DROCE_MAX_QP, a config file)
 * stands. */
static void
default_max_qp(const struct perf_opts *o)
{
	char v[16];

	if (getenv("DROCE_MAX_QP") != NULL || o->config != NULL || getenv("DROCE_CONFIG") != NULL)
		return;
	snprintf(v, sizeof(v), "%u", PERF_MAX_QPS + 16);
	setenv("DROCE_MAX_QP", v, 0);
}

static int
run(struct perf_ctx *c, const char *argv0)
{
	static struct perf_result res[PERF_MAX_SIZES];
	char err[256] = "";
	unsigned int k;
	int rc, lfd = -1;
	uint64_t t;

	if (c->o->server) {
		lfd = perf_oob_listen(c->o, err, sizeof(err));
		if (lfd < 0) {
			fprintf(stderr, "droce-perf: %s\n", err);
			return -EIO;
		}
	}
	default_max_qp(c->o);
	rc = perf_open(c, argv0);
	if (rc != 0) {
		if (lfd >= 0)
			close(lfd);
		return rc;
	}
	c->sock = c->o->server ? perf_oob_accept(c->o, lfd, err, sizeof(err)) :
				 perf_oob_connect(c->o, err, sizeof(err));
	if (c->sock < 0) {
		fprintf(stderr, "droce-perf: %s\n", err);
		return -EIO;
	}
	rc = exchange_plan(c);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: plan exchange: %s\n", strerror(-rc));
		return rc;
	}
	/* lat: round trips; bw: each WR's post to its completion (p99 under load) */
	c->samples = calloc(c->plan.iters < PERF_MAX_SAMPLES ? c->plan.iters : PERF_MAX_SAMPLES,
			    sizeof(uint64_t));
	if (c->samples == NULL)
		return -ENOMEM;
	rc = perf_setup_qps(c);
	if (rc != 0) {
		fprintf(stderr, "droce-perf: buffers: %s\n", strerror(-rc));
		return rc;
	}
	if (!c->o->server && !c->o->json)
		perf_report_header(c);
	for (k = 0; k < c->plan.nsizes; k++) {
		c->size = c->plan.sizes[k];
		c->round = k;
		t = perf_now(c);
		rc = perf_connect_qps(c);
		res[k].connect_ms = (double)(perf_now(c) - t) / 1e6;
		if (rc == 0)
			rc = perf_round_prepare(c);
		if (rc == 0)
			rc = c->o->server ? server_round(c) : client_round(c, &res[k]);
		if (rc == 0 && !c->o->server && !c->o->json)
			perf_report_row(c, &res[k]);
		perf_teardown_qps(c);
		if (rc != 0) {
			if (c->failed)
				fprintf(stderr, "droce-perf: %s\n", c->why);
			fprintf(stderr, "droce-perf: %s %u B failed\n", perf_op_name(c->plan.op),
				c->size);
			return rc;
		}
	}
	if (!c->o->server && c->o->json)
		perf_report_json(c, res, c->plan.nsizes);
	if (c->o->counters)
		perf_report_counters(c);
	return 0;
}

/* A crash prints where it happened (tests run without core dumps), then dies as it would. */
static void
on_crash(int sig)
{
	void *frames[32];
	char name[16] = "";
	int n = backtrace(frames, 32);

	prctl(PR_GET_NAME, name);
	fprintf(stderr, "droce-perf: signal %d in thread %s\n", sig, name);
	backtrace_symbols_fd(frames, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static bool
link_down(void *arg)
{
	return !droce_rt_link_up(arg);
}

int
main(int argc, char **argv)
{
	static struct perf_opts o;
	static struct perf_ctx c;
	char err[256] = "";
	int rc;

	rc = perf_parse(argc, argv, &o, err, sizeof(err));
	if (rc > 0) {
		perf_usage(stdout);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "droce-perf: %s\n", err);
		return PERF_EXIT_USAGE;
	}
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	c.o = &o;
	c.plan = o.plan;
	c.sock = -1;
	rc = run(&c, argv[0]);
	/* The client's runtime closes first; the server closes once the client's TCP end is
	 * gone and its own link went down: a memif port closed while EAL's interrupt thread
	 * still handles the peer's disconnect crashes in that thread (rte_intr_fd_get). */
	if (o.server && c.sock >= 0) {
		perf_oob_wait_eof(c.sock, 5000);
		if (c.rt != NULL)
			droce_rt_run_until(c.rt, link_down, c.rt, 2000);
	}
	perf_close(&c);
	if (c.sock >= 0)
		close(c.sock);
	free(c.samples);
	return rc == 0 ? 0 : PERF_EXIT_FAIL;
}
