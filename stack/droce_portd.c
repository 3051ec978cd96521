/* SPDX-License-Identifier: BSD-3-Clause */
#include "droce_portd.h"

#include <errno.h>
#include <string.h>

#include "droce_opcode.h"
#include "droce_pkt.h"
#include "droce_verbs.h"
#include "wire/droce_bth.h"
#include "wire/droce_cm.h"
#include "wire/droce_deth.h"
#include "wire/droce_eth.h"
#include "wire/droce_mad.h"

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
	memset(t->listen[s], 0, sizeof(t->listen[s]));
	return 0;
}

int
droce_portd_listen(struct droce_portd_slots *t, unsigned int s, uint64_t service_id, bool on)
{
	unsigned int o, i, free = DROCE_PORTD_LISTENS;

	if (s >= (1u << t->bits) || !(t->used & (1u << s)) || service_id == 0)
		return -EINVAL;
	for (o = 1; on && o < (1u << t->bits); o++)
		for (i = 0; o != s && i < DROCE_PORTD_LISTENS; i++)
			if (t->listen[o][i] == service_id)
				return -EADDRINUSE;
	for (i = 0; i < DROCE_PORTD_LISTENS; i++) {
		if (t->listen[s][i] == service_id) {
			if (!on)
				t->listen[s][i] = 0;
			return 0;
		}
		if (t->listen[s][i] == 0 && free == DROCE_PORTD_LISTENS)
			free = i;
	}
	if (!on)
		return -ENOENT;
	if (free == DROCE_PORTD_LISTENS)
		return -ENOSPC;
	t->listen[s][free] = service_id;
	return 0;
}

static uint32_t
be32_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* A MAD to QP1 (UD SEND Only: BTH, DETH, then the MAD): its CM program's slot, or -1 with *drop. */
static int
route_mad(const struct droce_portd_slots *t, const uint8_t *frame, uint32_t len, uint32_t bth_off,
	  enum droce_portd_drop *drop)
{
	uint32_t mad_off = bth_off + sizeof(struct droce_bth) + sizeof(struct droce_deth);
	const uint8_t *mad = frame + mad_off;
	const uint8_t *data = mad + DROCE_MAD_HDR_SIZE;
	uint16_t attr;
	uint64_t sid;
	uint32_t id;
	unsigned int s, i;

	*drop = DROCE_PORTD_DROP_special_qp;
	if (frame[bth_off] != DROCE_OP_UD_SEND_ONLY || mad_off + DROCE_MAD_HDR_SIZE + 16 > len ||
	    mad[1] != DROCE_MAD_CLASS_CM)
		return -1;
	attr = (uint16_t)(mad[16] << 8 | mad[17]);
	if (attr == DROCE_CM_ATTR_REQ || attr == DROCE_CM_ATTR_SIDR_REQ) {
		/* the service ID at data byte 8 in both */
		sid = (uint64_t)be32_at(data + 8) << 32 | be32_at(data + 12);
		*drop = DROCE_PORTD_DROP_no_listener;
		if (sid == 0) /* an empty listen entry is 0 */
			return -1;
		for (s = 1; s < (1u << t->bits); s++)
			for (i = 0; (t->used & (1u << s)) && i < DROCE_PORTD_LISTENS; i++)
				if (t->listen[s][i] == sid)
					return (int)s;
		return -1;
	}
	/* our comm ID: a SIDR_REP's RequestID at byte 0, the others' RemoteCommID at 4 */
	id = be32_at(data + (attr == DROCE_CM_ATTR_SIDR_REP ? 0 : 4));
	s = id >> (32 - t->bits);
	*drop = DROCE_PORTD_DROP_no_program;
	return s != 0 && (t->used & (1u << s)) ? (int)s : -1;
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
	if (dqpn == DROCE_QPN_GSI) {
		s = route_mad(t, frame, len, p.bth_off, drop);
		if (s < 0)
			return DROCE_PORTD_DROP;
		*slot = (unsigned int)s;
		return DROCE_PORTD_TO_PROGRAM;
	}
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
