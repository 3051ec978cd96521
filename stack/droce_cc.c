/* SPDX-License-Identifier: BSD-3-Clause */
/* The "none" congestion-control algorithm (line rate, feedback ignored), and the parts rate-based
 * algorithms share. */
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

/* The next data packet may leave once this one's bytes have drained at rate_bps. */
void
droce_cc_pace(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns, uint64_t rate_bps,
	      uint64_t max_bps)
{
	uint64_t start;

	if (rate_bps >= max_bps) {
		s->next_send_ns = now_ns;	/* line rate: the wire paces */
		return;
	}
	start = s->next_send_ns > now_ns ? s->next_send_ns : now_ns;
	s->next_send_ns = start + (uint64_t)bytes * 8u * 1000000000u / rate_bps;
}

const struct droce_cc_ops droce_cc_none = {
	.name = "none",
	.init = none_init,
	.on_send = none_on_send,
	.on_cnp = droce_cc_ignore,
	.on_ack = droce_cc_ignore,
	.next_send_time = droce_cc_next_send_ns,
};

const struct droce_cc_ops *
droce_cc_find(const char *name)
{
	static const struct droce_cc_ops *const all[] = {
		&droce_cc_none, &droce_cc_dcqcn, &droce_cc_timely,
	};
	unsigned int i;

	for (i = 0; name != NULL && i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
