/* SPDX-License-Identifier: BSD-3-Clause */
/* The "none" congestion-control algorithm (line rate, feedback ignored), and the parts rate-based
 * algorithms share. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "droce_cc.h"

/* The parameters of every algorithm fit the union the engine keeps per QP and device. */
_Static_assert(sizeof(struct droce_dcqcn_params) <= sizeof(uint64_t) * DROCE_CC_PARAM_WORDS,
	       "DCQCN parameters fit droce_cc_params");
_Static_assert(sizeof(struct droce_timely_params) <= sizeof(uint64_t) * DROCE_CC_PARAM_WORDS,
	       "TIMELY parameters fit droce_cc_params");

static void
none_init(struct droce_cc_state *s, uint64_t now_ns)
{
	(void)s;
	(void)now_ns;
}

static void
none_on_send(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns)
{
	(void)s;
	(void)bytes;
	(void)now_ns;
}

void
droce_cc_ignore(struct droce_cc_state *s, uint64_t now_ns)
{
	(void)s;
	(void)now_ns;
}

uint64_t
droce_cc_next_send_ns(const struct droce_cc_state *s)
{
	return s->next_send_ns;
}

/*
 * The next data packet may leave once this one's bytes have drained at rate_bps. A packet the
 * limiter held keeps its place in the schedule when the loop sends it late (a sleep on a VM
 * ends tens of microseconds after its deadline), so the packets after it catch up, up to
 * DROCE_CC_PACE_BURST bytes back to back, instead of the rate being lost for good. One that
 * was not held (the QP had nothing to send) starts the schedule from now. In the simulator
 * the engine sends exactly at the deadline and this makes no difference.
 */
void
droce_cc_pace(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns, uint64_t rate_bps,
	      uint64_t max_bps)
{
	uint64_t start = s->next_send_ns, credit;

	if (rate_bps >= max_bps) {
		s->next_send_ns = now_ns; /* line rate: the wire paces */
		return;
	}
	if (start < now_ns) {
		credit = s->held ? (uint64_t)DROCE_CC_PACE_BURST * 8u * 1000000000u / rate_bps : 0;
		start = now_ns - start > credit ? now_ns - credit : start;
	}
	s->next_send_ns = start + (uint64_t)bytes * 8u * 1000000000u / rate_bps;
}

unsigned int
droce_cc_stats_fill(struct droce_cc_stat *out, unsigned int n, const char *const *names,
		    const int64_t *values, unsigned int count)
{
	unsigned int i;

	for (i = 0; i < n && i < count; i++) {
		out[i].name = names[i];
		out[i].value = values[i];
	}
	return count;
}

const struct droce_cc_ops droce_cc_none = {
	.name = "none",
	.init = none_init,
	.on_send = none_on_send,
	.on_cnp = droce_cc_ignore,
	.on_ack = droce_cc_ignore,
	.next_send_time = droce_cc_next_send_ns,
};

static const struct droce_cc_ops *const builtin[] = {
	&droce_cc_none,
	&droce_cc_dcqcn,
	&droce_cc_timely,
};
#define NB_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))

static const struct droce_cc_ops *
cc_at(const struct droce_cc_registry *reg, unsigned int i)
{
	if (i < NB_BUILTIN)
		return builtin[i];
	if (reg == NULL || i - NB_BUILTIN >= reg->n)
		return NULL;
	return reg->ops[i - NB_BUILTIN];
}

const struct droce_cc_ops *
droce_cc_find(const struct droce_cc_registry *reg, const char *name)
{
	const struct droce_cc_ops *ops;
	unsigned int i;

	for (i = 0; name != NULL && (ops = cc_at(reg, i)) != NULL; i++)
		if (strcmp(ops->name, name) == 0)
			return ops;
	return NULL;
}

int
droce_cc_register(struct droce_cc_registry *reg, const struct droce_cc_ops *ops)
{
	const struct droce_cc_ops *had;

	/* the engine calls these unconditionally; defaults, check, on_rtt, stats are optional */
	if (reg == NULL || ops == NULL || ops->name == NULL || ops->name[0] == '\0' ||
	    strlen(ops->name) > DROCE_CC_NAME_MAX || ops->init == NULL || ops->on_send == NULL ||
	    ops->on_cnp == NULL || ops->on_ack == NULL || ops->next_send_time == NULL)
		return -EINVAL;
	had = droce_cc_find(reg, ops->name);
	if (had != NULL)
		return had == ops ? 0 : -EEXIST; /* a plugin loaded twice registers twice */
	if (reg->n >= DROCE_CC_REGISTER_MAX)
		return -ENOSPC;
	reg->ops[reg->n++] = ops;
	return 0;
}

char *
droce_cc_names(const struct droce_cc_registry *reg, char *buf, unsigned int len)
{
	const struct droce_cc_ops *ops;
	unsigned int i, n = 0;
	int w;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; (ops = cc_at(reg, i)) != NULL && n < len; i++) {
		w = snprintf(buf + n, len - n, "%s%s", i ? ", " : "", ops->name);
		if (w < 0)
			break;
		n += (unsigned int)w;
	}
	return buf;
}

void
droce_cc_defaults(const struct droce_cc_ops *ops, union droce_cc_params *p, uint64_t link_bps)
{
	memset(p, 0, sizeof(*p));
	if (ops != NULL && ops->defaults != NULL)
		ops->defaults(p, link_bps);
}

int
droce_cc_check(const struct droce_cc_ops *ops, const union droce_cc_params *p)
{
	if (ops == NULL || p == NULL)
		return -EINVAL;
	return ops->check != NULL ? ops->check(p) : 0;
}

const struct droce_cc_plugin_api droce_cc_plugin_api = {
	.abi = DROCE_CC_PLUGIN_ABI,
	.register_ops = droce_cc_register,
	.next_send_ns = droce_cc_next_send_ns,
	.ignore = droce_cc_ignore,
	.pace = droce_cc_pace,
	.stats_fill = droce_cc_stats_fill,
};
