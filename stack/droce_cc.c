/* SPDX-License-Identifier: BSD-3-Clause */
/* The "none" congestion-control algorithm: line rate, feedback ignored. */
#include <string.h>

#include "droce_cc.h"

static void
none_init(struct droce_cc_state *s, uint64_t now_ns)
{
	(void)now_ns;
	memset(s, 0, sizeof(*s));
}

static void
none_on_send(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns)
{
	(void)s;
	(void)bytes;
	(void)now_ns;
}

static void
none_on_event(struct droce_cc_state *s, uint64_t now_ns)
{
	(void)s;
	(void)now_ns;
}

static uint64_t
none_next_send_time(const struct droce_cc_state *s)
{
	return s->next_send_ns;
}

const struct droce_cc_ops droce_cc_none = {
	.name = "none",
	.init = none_init,
	.on_send = none_on_send,
	.on_cnp = none_on_event,
	.on_ack = none_on_event,
	.next_send_time = none_next_send_time,
};
