/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-perf: figures of a round (bandwidth, message rate, latency percentiles), table or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least p of them at or below it. */
static double
rank(const uint64_t *v, uint64_t n, double p)
{
	uint64_t k = (uint64_t)(p * (double)n + 0.999999);

	if (k == 0)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1e3;
}

void
perf_percentiles(uint64_t *v, uint64_t n, struct perf_result *r)
{
	double sum = 0;
	uint64_t i;

	r->has_lat = n > 0;
	if (n == 0)
		return;
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)v[i];
	r->lat_min = (double)v[0] / 1e3;
	r->lat_p50 = rank(v, n, 0.50);
	r->lat_p99 = rank(v, n, 0.99);
	r->lat_p999 = rank(v, n, 0.999);
	r->lat_max = (double)v[n - 1] / 1e3;
	r->lat_avg = sum / (double)n / 1e3;
}

void
perf_result_fill(struct perf_ctx *c, struct perf_result *r, uint64_t iters, uint64_t ns)
{
	r->size = c->size;
	r->iters = iters;
	r->seconds = (double)ns / 1e9;
	if (ns > 0) {
		r->gbps = (double)iters * c->size * 8 / (double)ns;
		r->mmps = (double)iters * 1e3 / (double)ns;
	}
	/* bw mode's samples are post-to-completion times: only the client has them */
	perf_percentiles(c->samples, c->nsamples, r);
}

static const char *
loop_name(const struct perf_ctx *c)
{
	return c->lcore ? "lcore" : "inline";
}

void
perf_report_header(const struct perf_ctx *c)
{
	printf("# droce-perf %s %s, %u QP(s), depth %u, path MTU %u, loop %s%s\n",
	       perf_op_name(c->plan.op), c->plan.mode == PERF_MODE_BW ? "bw" : "lat", c->plan.qps,
	       c->plan.mode == PERF_MODE_BW ? c->plan.depth : 1,
	       c->plan.mtu ? c->plan.mtu : droce_rt_config(c->rt)->path_mtu, loop_name(c),
	       c->plan.verify ? ", verify" : "");
	if (c->plan.mode == PERF_MODE_BW)
		printf("%10s %12s %10s %12s %10s %9s %8s\n", "bytes", "iters", "seconds", "Gbit/s",
		       "Mmsg/s", "retrans", "verify");
	else
		printf("%10s %10s %9s %9s %9s %9s %9s %9s %8s\n", "bytes", "iters", "min_us",
		       "p50_us", "p99_us", "p99.9_us", "max_us", "avg_us", "verify");
	fflush(stdout);
}

static const char *
verdict(const struct perf_ctx *c, const struct perf_result *r)
{
	if (!c->plan.verify)
		return "-";
	return r->verified ? "ok" : "FAIL";
}

void
perf_report_row(const struct perf_ctx *c, const struct perf_result *r)
{
	if (c->plan.mode == PERF_MODE_BW)
		printf("%10u %12llu %10.3f %12.3f %10.4f %9llu %8s\n", r->size,
		       (unsigned long long)r->iters, r->seconds, r->gbps, r->mmps,
		       (unsigned long long)r->retrans, verdict(c, r));
	else
		printf("%10u %10llu %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %8s\n", r->size,
		       (unsigned long long)r->iters, r->lat_min, r->lat_p50, r->lat_p99,
		       r->lat_p999, r->lat_max, r->lat_avg, verdict(c, r));
	if (r->cc != NULL && strcmp(r->cc, "none") != 0) {
		unsigned int i;

		printf("#   %s at the end (QP 0):", r->cc);
		for (i = 0; i < r->n_cc; i++)
			printf(" %s=%lld", r->cc_stats[i].name, (long long)r->cc_stats[i].value);
		printf("; packets held by the rate limiters: %llu\n",
		       (unsigned long long)r->cc_held);
	}
	fflush(stdout);
}

void
perf_report_json(const struct perf_ctx *c, const struct perf_result *r, unsigned int n)
{
	unsigned int i;

	printf("{\"tool\":\"droce-perf\",\"op\":\"%s\",\"mode\":\"%s\",\"qps\":%u,\"depth\":%u,"
	       "\"path_mtu\":%u,\"loop\":\"%s\",\"verify\":%s,\"latency\":\"us: lat round trip, bw "
	       "post to completion\","
	       "\"results\":[",
	       perf_op_name(c->plan.op), c->plan.mode == PERF_MODE_BW ? "bw" : "lat", c->plan.qps,
	       c->plan.mode == PERF_MODE_BW ? c->plan.depth : 1,
	       c->plan.mtu ? c->plan.mtu : droce_rt_config(c->rt)->path_mtu, loop_name(c),
	       c->plan.verify ? "true" : "false");
	for (i = 0; i < n; i++) {
		printf("%s{\"size\":%u,\"iters\":%llu,\"seconds\":%.6f,\"gbps\":%.4f,"
		       "\"mmsg_per_s\":%.5f,\"retrans\":%llu",
		       i ? "," : "", r[i].size, (unsigned long long)r[i].iters, r[i].seconds,
		       r[i].gbps, r[i].mmps, (unsigned long long)r[i].retrans);
		if (c->plan.mode == PERF_MODE_BW)
			printf(",\"rss\":%llu,\"rss_per_qp\":%.0f,\"connect_ms\":%.3f",
			       (unsigned long long)r[i].rss, r[i].rss_per_qp, r[i].connect_ms);
		if (r[i].has_lat)
			printf(",\"lat_us\":{\"min\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"p99_9\":%.3f,"
			       "\"max\":%.3f,\"avg\":%.3f}",
			       r[i].lat_min, r[i].lat_p50, r[i].lat_p99, r[i].lat_p999,
			       r[i].lat_max, r[i].lat_avg);
		if (c->plan.verify)
			printf(",\"verified\":%s,\"bad\":%llu", r[i].verified ? "true" : "false",
			       (unsigned long long)r[i].bad_bytes);
		if (r[i].cc != NULL) {
			unsigned int k;

			printf(",\"cc\":{\"name\":\"%s\",\"held\":%llu", r[i].cc,
			       (unsigned long long)r[i].cc_held);
			for (k = 0; k < r[i].n_cc; k++)
				printf(",\"%s\":%lld", r[i].cc_stats[k].name,
				       (long long)r[i].cc_stats[k].value);
			printf("}");
		}
		printf("}");
	}
	printf("]}\n");
	fflush(stdout);
}

/* --counters: the runtime's non-zero counters (loop, port, neighbours, engine) on stderr. */
void
perf_report_counters(struct perf_ctx *c)
{
	static struct droce_rt_counter cs[1024];
	int n = droce_rt_counters(c->rt, cs, 1024), i;

	for (i = 0; i < n && i < 1024; i++)
		if (cs[i].value != 0)
			fprintf(stderr, "%s %s = %llu\n", c->o->server ? "server" : "client",
				cs[i].name, (unsigned long long)cs[i].value);
}

void
perf_report_shards(struct perf_ctx *c, const uint64_t *count)
{
	char line[256];
	size_t off = 0;
	unsigned int i, s;

	if (c->nshards < 2)
		return;
	memset(c->shard_msgs, 0, sizeof(c->shard_msgs));
	for (i = 0; i < c->plan.qps; i++)
		c->shard_msgs[c->q[i].shard] += count[i];
	for (s = 0; s < c->nshards && off < sizeof(line); s++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %u=%llu", s,
					(unsigned long long)c->shard_msgs[s]);
	/* stderr with -J: stdout holds one JSON object */
	fprintf(c->o->json ? stderr : stdout, "%s: %u B: messages per shard:%s\n",
		c->o->server ? "server" : "client", c->size, line);
	fflush(stdout);
}
