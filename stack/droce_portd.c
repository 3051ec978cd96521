/* SPDX-License-Identifier: BSD-3-Clause */
#include "droce_portd.h"

#include <errno.h>
#include <string.h>

#include "droce_pkt.h"
#include "wire/droce_eth.h"

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

enum droce_portd_route
droce_portd_route(const struct droce_portd_slots *t, const uint8_t *frame, uint32_t len,
		  unsigned int *slot, enum droce_portd_drop *drop)
{
	struct droce_pkt p;
	uint32_t dqpn;
	int s;

	if (len >= 14 && frame[12] == (DROCE_ETHERTYPE_ARP >> 8) &&
	    frame[13] == (DROCE_ETHERTYPE_ARP & 0xFF))
		return DROCE_PORTD_ARP;
	if (droce_parse_l4(frame, len, &p) != DROCE_DROP_NONE) {
		*drop = DROCE_PORTD_DROP_not_roce;
		return DROCE_PORTD_DROP;
	}
	if ((uint32_t)p.bth_off + 8 > len) {
		*drop = DROCE_PORTD_DROP_bth_short;
		return DROCE_PORTD_DROP;
	}
	/* BTH bytes 5..7: DestQP (IBTA 9.2) */
	dqpn = (uint32_t)frame[p.bth_off + 5] << 16 | (uint32_t)frame[p.bth_off + 6] << 8 |
	       frame[p.bth_off + 7];
	s = droce_portd_qpn_slot(t, dqpn);
	if (s < 0) {
		*drop = dqpn >> (24 - t->bits) == 0 || dqpn == 0xFFFFFF ?
				DROCE_PORTD_DROP_special_qp :
				DROCE_PORTD_DROP_no_program;
		return DROCE_PORTD_DROP;
	}
	*slot = (unsigned int)s;
	return DROCE_PORTD_TO_PROGRAM;
}

const char *
droce_portd_drop_name(enum droce_portd_drop d)
{
	static const char *const names[] = {
#define DROCE_PORTD_X(n, d) #n,
		DROCE_PORTD_DROP_LIST(DROCE_PORTD_X)
#undef DROCE_PORTD_X
	};

	return (unsigned int)d < DROCE_PORTD_DROP_COUNT ? names[d] : "?";
}
