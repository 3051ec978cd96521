/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters as name/value pairs: runtime loop, port (ethdev), neighbours, engine. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "droce_counters.h"
#include "droce_rt_priv.h"

enum { DEV_MAX = 128 };	/* engine counters: transport + one per drop reason */

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
		snprintf(o->name, sizeof(o->name), "%s%s", prefix, name);
		for (i = 0; o->name[i] != '\0'; i++)
			o->name[i] = (char)tolower((unsigned char)o->name[i]);
		o->value = value;
	}
	c->count++;
}

/* Runs on the device's thread: the loop's counters are plain fields written there. */
static int
collect_fn(struct droce_rt *rt, void *arg)
{
	struct collect *c = arg;
	struct droce_counter dc[DEV_MAX];
	struct rte_eth_stats es;
	char name[48];
	unsigned int i, n;

#define DROCE_X_PUT_RT(f) put(c, "rt.", #f, rt->st.f);
	DROCE_RT_STATS(DROCE_X_PUT_RT)
#undef DROCE_X_PUT_RT
	for (i = 0; i < DROCE_RT_DROP_MAX; i++) {
		snprintf(name, sizeof(name), "drop_%s", droce_rt_drop_name(i));
		put(c, "rt.", name, rt->st.drop[i]);
	}
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
	if (rt->dev != NULL) {
		n = droce_dev_counters(rt->dev, dc, DEV_MAX);
		for (i = 0; i < n && i < DEV_MAX; i++)
			put(c, "dev.", dc[i].name, dc[i].value);
	}
	return 0;
}

int
droce_rt_counters_collect(struct droce_rt *rt, struct droce_rt_counter *out, unsigned int n)
{
	struct collect c = { .out = out, .n = n };

	collect_fn(rt, &c);
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
