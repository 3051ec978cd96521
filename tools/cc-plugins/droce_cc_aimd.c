/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An example congestion-control plugin, "aimd": each QP paces at a rate that halves on a CNP (at
 * most once per hold time) and climbs by a step on every ACK that advances its window, between
 * a floor and a ceiling. Small on purpose: what a researcher copies to start an algorithm of
 * their own (README.md here). Loaded by `cc_plugin = .../droce_cc_aimd.so`, chosen by
 * `cc = aimd`. Its parameters are each QP's (struct droce_cc_state.params, the words below); the
 * defaults it gives a device come from the environment when it loads:
 *   DROCE_CC_AIMD_LINE_MBPS  at or above this rate the wire paces, not the plugin (100000)
 *   DROCE_CC_AIMD_MAX_MBPS   the rate a QP starts at and returns to (the line rate)
 *   DROCE_CC_AIMD_MIN_MBPS   no cut goes below (10)
 *   DROCE_CC_AIMD_STEP_MBPS  added per ACK (10)
 *   DROCE_CC_AIMD_HOLD_US    at most one cut per this time (50)
 * It builds against stack/droce_cc.h alone and calls droce only through the table it is given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_cc.h"

/* A QP's words (struct droce_cc_state.w) */
enum { W_RATE, W_LAST_CUT, W_CUTS };

/* Its parameters (union droce_cc_params.w) */
enum { P_LINE, P_MAX, P_MIN, P_STEP, P_HOLD };

/* What the plugin was loaded with: the table, and the defaults read from the environment
 * (a plugin's own statics; the engine keeps none). */
static const struct droce_cc_plugin_api *api;
static uint64_t env_defaults[] = {
	[P_LINE] = 100000000000ull, [P_MAX] = 0,	 [P_MIN] = 10000000ull,
	[P_STEP] = 10000000ull,	    [P_HOLD] = 50000ull,
};

static void
aimd_defaults(union droce_cc_params *p, uint64_t link_bps)
{
	memcpy(p->w, env_defaults, sizeof(env_defaults));
	if (link_bps != 0 && getenv("DROCE_CC_AIMD_LINE_MBPS") == NULL)
		p->w[P_LINE] = link_bps;
	if (p->w[P_MAX] == 0 || p->w[P_MAX] > p->w[P_LINE])
		p->w[P_MAX] = p->w[P_LINE];
}

static int
aimd_check(const union droce_cc_params *p)
{
	return p->w[P_LINE] == 0 || p->w[P_MAX] == 0 || p->w[P_MIN] == 0 ||
			       p->w[P_MIN] > p->w[P_MAX] ?
		       -EINVAL :
		       0;
}

static void
aimd_init(struct droce_cc_state *s, uint64_t now_ns)
{
	s->next_send_ns = now_ns;
	s->w[W_RATE] = s->params->w[P_MAX];
}

static void
aimd_on_send(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns)
{
	api->pace(s, bytes, now_ns, s->w[W_RATE], s->params->w[P_LINE]);
}

static void
aimd_on_ack(struct droce_cc_state *s, uint64_t now_ns)
{
	const uint64_t *p = s->params->w;

	(void)now_ns;
	s->w[W_RATE] = s->w[W_RATE] + p[P_STEP] < p[P_MAX] ? s->w[W_RATE] + p[P_STEP] : p[P_MAX];
}

static void
aimd_on_cnp(struct droce_cc_state *s, uint64_t now_ns)
{
	const uint64_t *p = s->params->w;

	if (s->w[W_CUTS] != 0 && now_ns - s->w[W_LAST_CUT] < p[P_HOLD])
		return; /* one cut per hold time: the CNPs of one congestion event */
	s->w[W_RATE] = s->w[W_RATE] / 2 > p[P_MIN] ? s->w[W_RATE] / 2 : p[P_MIN];
	s->w[W_LAST_CUT] = now_ns;
	s->w[W_CUTS]++;
}

static uint64_t
aimd_next_send_time(const struct droce_cc_state *s)
{
	return api->next_send_ns(s);
}

/* droce-stat --qps shows these per QP */
static unsigned int
aimd_stats(const struct droce_cc_state *s, struct droce_cc_stat *out, unsigned int n)
{
	static const char *const names[] = { "rate_mbps", "cuts" };
	int64_t v[2] = { (int64_t)(s->w[W_RATE] / 1000000), (int64_t)s->w[W_CUTS] };

	return api->stats_fill(out, n, names, v, 2);
}

static const struct droce_cc_ops aimd_ops = {
	.name = "aimd",
	.defaults = aimd_defaults,
	.check = aimd_check,
	.init = aimd_init,
	.on_send = aimd_on_send,
	.on_cnp = aimd_on_cnp,
	.on_ack = aimd_on_ack,
	.next_send_time = aimd_next_send_time,
	/* .on_rtt = NULL: no round-trip samples wanted */
	.stats = aimd_stats,
};

/* NAME in [lo, hi], times mult, into *v; the default stays when it is not set. */
static int
param(const char *name, uint64_t lo, uint64_t hi, uint64_t mult, uint64_t *v)
{
	const char *s = getenv(name);
	unsigned long long x;
	char *end;

	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || x < lo || x > hi) {
		fprintf(stderr, "droce_cc_aimd: %s=%s: give a whole number from %llu to %llu\n",
			name, s, (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	*v = x * mult;
	return 0;
}

int
droce_cc_plugin_init(const struct droce_cc_plugin_api *a, struct droce_cc_registry *reg)
{
	if (a->abi != DROCE_CC_PLUGIN_ABI) {
		fprintf(stderr,
			"droce_cc_aimd: built for plugin ABI %d, droce offers %u: rebuild "
			"it against this droce's stack/droce_cc.h\n",
			DROCE_CC_PLUGIN_ABI, a->abi);
		return -EPROTO;
	}
	if (param("DROCE_CC_AIMD_LINE_MBPS", 1, 1600000, 1000000, &env_defaults[P_LINE]) != 0 ||
	    param("DROCE_CC_AIMD_MAX_MBPS", 1, 1600000, 1000000, &env_defaults[P_MAX]) != 0 ||
	    param("DROCE_CC_AIMD_MIN_MBPS", 1, 1600000, 1000000, &env_defaults[P_MIN]) != 0 ||
	    param("DROCE_CC_AIMD_STEP_MBPS", 0, 1600000, 1000000, &env_defaults[P_STEP]) != 0 ||
	    param("DROCE_CC_AIMD_HOLD_US", 0, 10000000, 1000, &env_defaults[P_HOLD]) != 0)
		return -EINVAL;
	if (env_defaults[P_MAX] != 0 && env_defaults[P_MIN] > env_defaults[P_MAX]) {
		fprintf(stderr, "droce_cc_aimd: DROCE_CC_AIMD_MIN_MBPS is above "
				"DROCE_CC_AIMD_MAX_MBPS\n");
		return -EINVAL;
	}
	api = a;
	return a->register_ops(reg, &aimd_ops);
}
