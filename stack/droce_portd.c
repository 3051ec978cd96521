/* SPDX-License-Identifier: BSD-3-Clause */
#include "droce_portd.h"

#include <errno.h>
#include <string.h>

int
droce_portd_slots_init(struct droce_portd_slots *t, unsigned int bits)
{
	if (bits < 1 || bits > DROCE_PORTD_MAX_BITS)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->bits = (uint8_t)bits;
	return 0;
}

int
droce_portd_slot_get(struct droce_portd_slots *t)
{
	unsigned int s, n = 1u << t->bits;

	for (s = 1; s < n; s++)
		if (!(t->used & (1u << s))) {
			t->used |= 1u << s;
			t->gen[s]++;
			return (int)s;
		}
	return -ENOSPC;
}

int
droce_portd_slot_put(struct droce_portd_slots *t, unsigned int s)
{
	if (s >= (1u << t->bits) || !(t->used & (1u << s)))
		return -EINVAL;
	t->used &= ~(1u << s);
	return 0;
}

int
droce_portd_qpn_slot(const struct droce_portd_slots *t, uint32_t dqpn)
{
	unsigned int s;

	if (dqpn >= 0xFFFFFF)
		return -ENOENT;
	s = (dqpn & 0xFFFFFF) >> (24 - t->bits);
	if (s == 0 || !(t->used & (1u << s)))
		return -ENOENT;
	return (int)s;
}

void
droce_portd_slot_range(const struct droce_portd_slots *t, unsigned int s, uint32_t *first,
		       uint32_t *last)
{
	*first = s << (24 - t->bits);
	*last = ((s + 1) << (24 - t->bits)) - 1;
}
