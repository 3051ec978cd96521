/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-netem options: values with units, per-direction scoping with --dir. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "netem_args.h"

struct unit {
	const char *name;
	double mult;
};

/* A number followed by one of units (case-insensitive); an empty suffix only if allowed. */
static int
parse_units(const char *s, const struct unit *units, int bare_ok, double *out)
{
	char *end;
	double v;
	int i;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	if (*end == '\0') {
		if (!bare_ok)
			return -EINVAL;
		*out = v;
		return 0;
	}
	for (i = 0; units[i].name != NULL; i++)
		if (strcasecmp(end, units[i].name) == 0) {
			*out = v * units[i].mult;
			return 0;
		}
	return -EINVAL;
}

int
droce_netem_parse_time(const char *s, uint64_t *ns)
{
	static const struct unit u[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { NULL, 0 },
	};
	double v;

	/* A bare number is refused: "--delay 100" is too easy to mean the wrong unit. */
	if (parse_units(s, u, 0, &v) != 0 || v > 1e12)
		return -EINVAL;
	*ns = (uint64_t)llround(v);
	return 0;
}

int
droce_netem_parse_prob(const char *s, double *p)
{
	static const struct unit u[] = { { "%", 0.01 }, { NULL, 0 } };
	double v;

	if (parse_units(s, u, 1, &v) != 0 || v > 1.0)
		return -EINVAL;
	*p = v;
	return 0;
}

int
droce_netem_parse_rate(const char *s, uint64_t *bps)
{
	static const struct unit u[] = {
		{ "bit", 1 },	{ "kbit", 1e3 },   { "mbit", 1e6 },   { "gbit", 1e9 },
		{ "bit/s", 1 }, { "kbit/s", 1e3 }, { "mbit/s", 1e6 }, { "gbit/s", 1e9 },
		{ "bps", 1 },	{ "kbps", 1e3 },   { "mbps", 1e6 },   { "gbps", 1e9 },
		{ NULL, 0 },
	};
	double v;

	if (parse_units(s, u, 0, &v) != 0 || v < 1.0 || v > 1e13)
		return -EINVAL;
	*bps = (uint64_t)llround(v);
	return 0;
}

int
droce_netem_parse_size(const char *s, uint64_t *bytes)
{
	static const struct unit u[] = {
		{ "b", 1 },   { "k", 1e3 },  { "kb", 1e3 },	 { "kib", 1024 },
		{ "m", 1e6 }, { "mb", 1e6 }, { "mib", 1048576 }, { NULL, 0 },
	};
	double v;

	if (parse_units(s, u, 1, &v) != 0 || v > 1e12)
		return -EINVAL;
	*bytes = (uint64_t)llround(v);
	return 0;
}

static int
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "a,b[,c[,d]]" into up to max fields; returns the count or -EINVAL. */
static int
split_commas(char *s, char **f, int max)
{
	int n = 0;

	while (n < max) {
		f[n++] = s;
		s = strchr(s, ',');
		if (s == NULL)
			return n;
		*s++ = '\0';
	}
	return -EINVAL;
}

/* What a value should look like, for the error message. */
static const char *
hint(const char *name)
{
	if (strcmp(name, "delay") == 0 || strcmp(name, "jitter") == 0 ||
	    strcmp(name, "reorder-delay") == 0 || strcmp(name, "duration") == 0)
		return "a time with its unit: 10ns, 100us, 1.5ms, 2s";
	if (strcmp(name, "rate") == 0)
		return "a rate: 100mbit, 10gbit, 2.5gbit/s";
	if (strcmp(name, "limit") == 0)
		return "bytes: 1500, 64k, 1MiB";
	if (strcmp(name, "ge") == 0)
		return "P,R[,LOSS_BAD[,LOSS_GOOD]] probabilities: 1%,25%";
	if (strcmp(name, "red") == 0)
		return "KMIN,KMAX,PMAX: 10k,40k,20%";
	if (strcmp(name, "overhead") == 0)
		return "bytes per frame, 0..1000";
	if (strcmp(name, "dir") == 0)
		return "ab, ba or both";
	if (strcmp(name, "seed") == 0)
		return "an unsigned integer";
	if (strcmp(name, "hold") == 0 || strcmp(name, "burst") == 0 ||
	    strcmp(name, "idle-us") == 0 || strcmp(name, "series-us") == 0)
		return "an integer (hold >= 1, burst 1..512, idle-us 0..100000, series-us "
		       "1..1000000)";
	if (strcmp(name, "series") == 0)
		return "a file name";
	return "a probability: 5% or 0.05";
}

/* Apply one per-direction option to the selected directions. */
static int
dir_opt(struct droce_netem_opts *o, const bool *sel, const char *name, const char *val, char *err,
	size_t errlen)
{
	struct droce_netem_cfg c;
	char buf[128], *f[4];
	int d, n, rc = 0;

	for (d = 0; d < DROCE_NETEM_NDIR; d++) {
		if (!sel[d])
			continue;
		c = o->dir[d];
		if (strcmp(name, "delay") == 0) {
			rc = droce_netem_parse_time(val, &c.delay_ns);
		} else if (strcmp(name, "jitter") == 0) {
			rc = droce_netem_parse_time(val, &c.jitter_ns);
		} else if (strcmp(name, "rate") == 0) {
			rc = droce_netem_parse_rate(val, &c.rate_bps);
		} else if (strcmp(name, "limit") == 0) {
			rc = droce_netem_parse_size(val, &c.limit_bytes);
		} else if (strcmp(name, "overhead") == 0) {
			uint64_t v = 0;

			rc = parse_u64(val, 1000, &v);
			c.overhead = (uint32_t)v;
		} else if (strcmp(name, "loss") == 0) {
			rc = droce_netem_parse_prob(val, &c.loss);
		} else if (strcmp(name, "reorder") == 0) {
			rc = droce_netem_parse_prob(val, &c.reorder);
		} else if (strcmp(name, "reorder-delay") == 0) {
			rc = droce_netem_parse_time(val, &c.reorder_delay_ns);
		} else if (strcmp(name, "duplicate") == 0) {
			rc = droce_netem_parse_prob(val, &c.duplicate);
		} else if (strcmp(name, "corrupt") == 0) {
			rc = droce_netem_parse_prob(val, &c.corrupt);
		} else if (strcmp(name, "ge") == 0) {
			snprintf(buf, sizeof(buf), "%s", val);
			n = split_commas(buf, f, 4);
			c.ge.on = true;
			c.ge.loss_bad = 1.0;
			c.ge.loss_good = 0.0;
			rc = n < 2 ? -EINVAL :
				     droce_netem_parse_prob(f[0], &c.ge.p) |
					     droce_netem_parse_prob(f[1], &c.ge.r) |
					     (n > 2 ? droce_netem_parse_prob(f[2], &c.ge.loss_bad) :
						      0) |
					     (n > 3 ? droce_netem_parse_prob(f[3],
									     &c.ge.loss_good) :
						      0);
		} else if (strcmp(name, "red") == 0) {
			snprintf(buf, sizeof(buf), "%s", val);
			n = split_commas(buf, f, 3);
			c.red_on = true;
			rc = n != 3 ? -EINVAL :
				      droce_netem_parse_size(f[0], &c.red_kmin) |
					      droce_netem_parse_size(f[1], &c.red_kmax) |
					      droce_netem_parse_prob(f[2], &c.red_pmax);
		} else {
			snprintf(err, errlen, "unknown option --%s (see --help)", name);
			return -EINVAL;
		}
		if (rc != 0) {
			snprintf(err, errlen, "--%s: bad value '%s' (want %s)", name, val,
				 hint(name));
			return -EINVAL;
		}
		o->dir[d] = c;
	}
	return 0;
}

static void
dir_flag(struct droce_netem_opts *o, const bool *sel, const char *name)
{
	int d;

	for (d = 0; d < DROCE_NETEM_NDIR; d++) {
		if (!sel[d])
			continue;
		if (strcmp(name, "keep-order") == 0)
			o->dir[d].keep_order = true;
		else
			o->dir[d].red_drop_not_ect = true;
	}
}

static int
global_opt(struct droce_netem_opts *o, bool *sel, const char *name, const char *val)
{
	uint64_t v;

	if (strcmp(name, "dir") == 0) {
		sel[DROCE_NETEM_AB] = strcmp(val, "ab") == 0 || strcmp(val, "both") == 0;
		sel[DROCE_NETEM_BA] = strcmp(val, "ba") == 0 || strcmp(val, "both") == 0;
		return sel[DROCE_NETEM_AB] || sel[DROCE_NETEM_BA] ? 0 : -EINVAL;
	}
	if (strcmp(name, "duration") == 0)
		return droce_netem_parse_time(val, &o->duration_ns);
	if (strcmp(name, "seed") == 0)
		return parse_u64(val, UINT64_MAX, &o->seed);
	if (strcmp(name, "series") == 0) {
		o->series = val;
		return val[0] != '\0' ? 0 : -EINVAL;
	}
	if (parse_u64(val, 1u << 24, &v) != 0)
		return -EINVAL;
	if (strcmp(name, "hold") == 0 && v >= 1)
		o->hold = (uint32_t)v;
	else if (strcmp(name, "burst") == 0 && v >= 1 && v <= 512)
		o->burst = (uint32_t)v;
	else if (strcmp(name, "idle-us") == 0 && v <= 100000)
		o->idle_us = (uint32_t)v;
	else if (strcmp(name, "series-us") == 0 && v >= 1 && v <= 1000000)
		o->series_us = (uint32_t)v;
	else
		return -EINVAL;
	return 0;
}

static int
is_global(const char *name)
{
	static const char *const g[] = {
		"dir", "duration", "seed", "hold", "burst", "idle-us", "series", "series-us", NULL,
	};
	int i;

	for (i = 0; g[i] != NULL; i++)
		if (strcmp(name, g[i]) == 0)
			return 1;
	return 0;
}

int
droce_netem_parse_args(int argc, char **argv, struct droce_netem_opts *o, char *err, size_t errlen)
{
	bool sel[DROCE_NETEM_NDIR] = { true, true };
	char name[32];
	const char *arg, *val, *eq;
	int i, d;

	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->hold = 4096;
	o->burst = 32;
	o->idle_us = 20;
	o->series_us = 1000;
	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			o->help = true;
			return 0;
		}
		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
			snprintf(err, errlen, "unexpected argument '%s' (options start with --)",
				 arg);
			return -EINVAL;
		}
		arg += 2;
		eq = strchr(arg, '=');
		snprintf(name, sizeof(name), "%.*s",
			 eq != NULL ? (int)(eq - arg) : (int)strlen(arg), arg);
		if (strcmp(name, "keep-order") == 0 || strcmp(name, "red-drop") == 0) {
			if (eq != NULL) {
				snprintf(err, errlen, "--%s takes no value", name);
				return -EINVAL;
			}
			dir_flag(o, sel, name);
			continue;
		}
		if (eq != NULL) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			snprintf(err, errlen, "--%s needs a value", name);
			return -EINVAL;
		}
		if (is_global(name)) {
			if (global_opt(o, sel, name, val) != 0) {
				snprintf(err, errlen, "--%s: bad value '%s' (want %s)", name, val,
					 hint(name));
				return -EINVAL;
			}
		} else if (dir_opt(o, sel, name, val, err, errlen) != 0) {
			return -EINVAL;
		}
	}
	for (d = 0; d < DROCE_NETEM_NDIR; d++) {
		char why[128];

		if (droce_netem_cfg_check(&o->dir[d], why, sizeof(why)) != 0) {
			snprintf(err, errlen, "direction %s: %s", d == DROCE_NETEM_AB ? "ab" : "ba",
				 why);
			return -EINVAL;
		}
	}
	return 0;
}

void
droce_netem_usage(const char *prog)
{
	printf("usage: %s [EAL options] -- [options]\n"
	       "Forwards between ethdev ports 0 and 1 (ab: 0->1, ba: 1->0), impairing both ways.\n"
	       "Per-direction options (both directions unless after --dir ab|ba):\n"
	       "  --delay T            one-way delay (T: 10ns, 100us, 1.5ms, 2s)\n"
	       "  --jitter T           uniform +-T on the delay (may reorder unless --keep-order)\n"
	       "  --keep-order         jitter never lets a frame overtake an earlier one\n"
	       "  --rate R             serialisation rate (R: 100mbit, 10gbit); builds the queue\n"
	       "  --overhead N         bytes added per frame when serialising (24 = wire)\n"
	       "  --limit SIZE         queue limit in bytes (SIZE: 1500, 64k, 1MiB); tail drop\n"
	       "  --loss P             independent loss (P: 5%% or 0.05)\n"
	       "  --ge P,R[,LB[,LG]]   Gilbert-Elliott loss: good->bad P, bad->good R,\n"
	       "                       loss in bad LB (default 100%%), in good LG (default 0)\n"
	       "  --reorder P          probability a frame is held --reorder-delay T longer\n"
	       "  --reorder-delay T\n"
	       "  --duplicate P        send a frame twice\n"
	       "  --corrupt P          flip one bit past the Ethernet header\n"
	       "  --red KMIN,KMAX,PMAX mark CE on ECT frames with probability rising from 0 at\n"
	       "                       KMIN to PMAX at KMAX bytes of queue, 1 above\n"
	       "                       (needs --rate)\n"
	       "  --red-drop           drop Not-ECT frames RED picks (default: pass them)\n"
	       "Global options:\n"
	       "  --dir ab|ba|both     which direction the options that follow apply to\n"
	       "  --duration T         stop after T (default: at SIGINT/SIGTERM)\n"
	       "  --seed N             PRNG seed (default 1); ba uses N + 1\n"
	       "  --hold N             frames held per direction (default 4096); more are dropped\n"
	       "  --burst N            rx/tx burst (default 32)\n"
	       "  --idle-us N          longest sleep when idle, 0 = busy poll (default 20)\n"
	       "  --series FILE        at exit, the queue over time as CSV: per --series-us\n"
	       "                       (default 1000) and direction with a --rate, the frames,\n"
	       "                       the share marked CE, the mean and largest queue they\n"
	       "                       found\n"
	       "Counters print at exit and on SIGUSR1.\n",
	       prog);
}
