/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters as name/value pairs: runtime loop, port (ethdev), neighbours, engine. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "droce_counters.h"
#include "droce_rt_priv.h"

enum { DEV_MAX = 128 }; /* engine counters: transport + one per drop reason */

const char *const droce_rt_groups[DROCE_RT_GROUPS] = { "rt", "port", "neigh", "dev" };

const char *
droce_rt_counter_leaf(const char *name, unsigned int g)
{
	size_t len = strlen(droce_rt_groups[g]);

	if (strncmp(name, droce_rt_groups[g], len) == 0 && name[len] == '.')
		return name + len + 1;
	return NULL;
}

struct collect {
	struct droce_rt_counter *out;
	unsigned int n, count;
};

static void
put(struct collect *c, const char *prefix, const char *name, uint64_t value)
{
	struct droce_rt_counter *o;
	size_t i;

	if (c->count < c->n) {
		o = &c->out[c->count];
		/* names are at most 47 characters: a longer one is a bug, cut rather than lost */
		if (snprintf(o->name, sizeof(o->name), "%s%s", prefix, name) >=
		    (int)sizeof(o->name))
			o->name[sizeof(o->name) - 1] = '\0';
		for (i = 0; o->name[i] != '\0'; i++)
			o->name[i] = (char)tolower((unsigned char)o->name[i]);
		o->value = value;
	}
	c->count++;
}

/* One shard's counters, copied on the shard's own thread (droce_rt_call_shard). */
struct shard_part {
	unsigned int idx;
	struct droce_rt_stats st;
	struct droce_counter dc[DEV_MAX];
	unsigned int ndc;
};

static int
shard_fn(struct droce_rt *rt, void *arg)
{
	struct shard_part *p = arg;
	struct droce_rt_shard *s = &rt->sh[p->idx];

	p->st = s->st;
	p->ndc = 0;
	if (s->dev != NULL) {
		p->ndc = droce_dev_counters(s->dev, p->dc, DEV_MAX);
		if (p->ndc > DEV_MAX)
			p->ndc = DEV_MAX;
	}
	return 0;
}

/* Per shard, with several: the loop's main figures and the engine's packet counts. */
#define DROCE_RT_SHARD_STATS(X) \
	X(iterations) X(rx_pkts) X(rx_roce) X(tx_pkts) X(steered) X(steered_in) X(calls)

static void
put_shard(struct collect *c, const struct shard_part *p)
{
	char name[48];
	unsigned int i;

#define DROCE_X_PUT_SHARD(f) \
	snprintf(name, sizeof(name), "shard%u_" #f, p->idx); \
	put(c, "rt.", name, p->st.f);
	DROCE_RT_SHARD_STATS(DROCE_X_PUT_SHARD)
#undef DROCE_X_PUT_SHARD
	snprintf(name, sizeof(name), "shard%u_steer_held", p->idx);
	put(c, "rt.", name, p->st.steer_held);
	for (i = 0; i < p->ndc; i++)
		if (strcmp(p->dc[i].name, "sent_pkts") == 0 ||
		    strcmp(p->dc[i].name, "rcvd_pkts") == 0) {
			snprintf(name, sizeof(name), "shard%u_%s", p->idx, p->dc[i].name);
			put(c, "dev.", name, p->dc[i].value);
		}
}

/*
 * Totals over the shards under the single-device names, then, with several shards, per-shard
 * ones. Each shard's part is read on its own thread; the rest (port, neighbours) on shard 0's.
 */
static void
collect_all(struct droce_rt *rt, struct collect *c)
{
	struct shard_part parts[DROCE_RT_MAX_SHARDS];
	struct droce_rt_stats tot;
	struct rte_eth_stats es;
	char name[48];
	unsigned int i, k;

	memset(&tot, 0, sizeof(tot));
	for (i = 0; i < rt->nb_shards; i++) {
		parts[i].idx = i;
		droce_rt_call_shard(rt, i, shard_fn, &parts[i]);
#define DROCE_X_SUM(f) tot.f += parts[i].st.f;
		DROCE_RT_STATS(DROCE_X_SUM)
#undef DROCE_X_SUM
		for (k = 0; k < DROCE_DROP_MAX; k++)
			tot.drop[k] += parts[i].st.drop[k];
	}
#define DROCE_X_PUT_RT(f) put(c, "rt.", #f, tot.f);
	DROCE_RT_STATS(DROCE_X_PUT_RT)
#undef DROCE_X_PUT_RT
	for (i = 0; i < DROCE_DROP_MAX; i++) {
		if (!droce_rt_drop_counted(i))
			continue;
		snprintf(name, sizeof(name), "drop_%s", droce_drop_name(i));
		put(c, "rt.", name, tot.drop[i]);
	}
	put(c, "rt.", "shards", rt->nb_shards);
	put(c, "rt.", "rss_queues", rt->port.rss ? rt->port.nb_queues : 0);
	put(c, "rt.", "flow_rules", rt->port.flow_rules);
	memset(&es, 0, sizeof(es));
	rte_eth_stats_get(rt->port.port_id, &es);
	put(c, "port.", "ipackets", es.ipackets);
	put(c, "port.", "opackets", es.opackets);
	put(c, "port.", "ibytes", es.ibytes);
	put(c, "port.", "obytes", es.obytes);
	put(c, "port.", "imissed", es.imissed);
	put(c, "port.", "ierrors", es.ierrors);
	put(c, "port.", "oerrors", es.oerrors);
	put(c, "port.", "rx_nombuf", es.rx_nombuf);
#define DROCE_X_PUT_NEIGH(f) put(c, "neigh.", #f, rt->neigh.stats.f);
	DROCE_NEIGH_STATS(DROCE_X_PUT_NEIGH)
#undef DROCE_X_PUT_NEIGH
	/* The engines list the same names in the same order. */
	for (k = 0; k < parts[0].ndc; k++) {
		uint64_t v = 0;

		for (i = 0; i < rt->nb_shards; i++)
			if (k < parts[i].ndc)
				v += parts[i].dc[k].value;
		put(c, "dev.", parts[0].dc[k].name, v);
	}
	for (i = 0; rt->nb_shards > 1 && i < rt->nb_shards; i++)
		put_shard(c, &parts[i]);
}

static int
collect_fn(struct droce_rt *rt, void *arg)
{
	collect_all(rt, arg);
	return 0;
}

/* On shard 0's thread (telemetry): the other shards' parts are asked of their threads. */
int
droce_rt_counters_collect(struct droce_rt *rt, struct droce_rt_counter *out, unsigned int n)
{
	struct collect c = { .out = out, .n = n };

	collect_all(rt, &c);
	return (int)c.count;
}

int
droce_rt_counters(struct droce_rt *rt, struct droce_rt_counter *out, unsigned int n)
{
	struct collect c = { .out = out, .n = n };

	droce_rt_call(rt, collect_fn, &c);
	return (int)c.count;
}

int
droce_rt_counter(struct droce_rt *rt, const char *name, uint64_t *value)
{
	struct droce_rt_counter all[512];
	int n = droce_rt_counters(rt, all, 512), i;

	for (i = 0; i < n && i < 512; i++)
		if (strcmp(all[i].name, name) == 0) {
			*value = all[i].value;
			return 0;
		}
	return -ENOENT;
}

/*
 * cfg.counters_file at close: the figures of a run that is over (a verbs program's, a tool's),
 * where telemetry can no longer be asked. The shape is droce-stat --json's: {"pid", "counters":
 * {group: {name: value}}}, groups in the order of the names' prefixes.
 */
int
droce_rt_counters_save(struct droce_rt *rt)
{
	struct droce_rt_counter all[DROCE_RT_TEL_MAX];
	const char *sep, *leaf;
	char path[512];
	unsigned int g;
	int n, i, rc = 0;
	FILE *f;

	if (droce_rt_expand_path(rt->cfg.counters_file, path, sizeof(path)) != 0) {
		fprintf(stderr,
			"droce: counters file path '%s' too long: shorten "
			"DROCE_COUNTERS_FILE\n",
			rt->cfg.counters_file);
		return -ENAMETOOLONG;
	}
	n = droce_rt_counters(rt, all, DROCE_RT_TEL_MAX);
	if (n > DROCE_RT_TEL_MAX)
		n = DROCE_RT_TEL_MAX;
	f = fopen(path, "w");
	if (f == NULL) {
		rc = -errno;
		fprintf(stderr, "droce: counters file %s: %s: fix DROCE_COUNTERS_FILE\n", path,
			strerror(errno));
		return rc;
	}
	fprintf(f, "{\"pid\": %ld, \"counters\": {", (long)getpid());
	for (g = 0; g < DROCE_RT_GROUPS; g++) {
		fprintf(f, "%s\"%s\": {", g == 0 ? "" : ", ", droce_rt_groups[g]);
		sep = "";
		for (i = 0; i < n; i++) {
			leaf = droce_rt_counter_leaf(all[i].name, g);
			if (leaf != NULL) {
				fprintf(f, "%s\"%s\": %" PRIu64, sep, leaf, all[i].value);
				sep = ", ";
			}
		}
		fputc('}', f);
	}
	fputs("}}\n", f);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc != 0)
		fprintf(stderr, "droce: counters file %s: %s\n", path, strerror(-rc));
	return rc;
}
