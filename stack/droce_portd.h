/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_PORTD_H
#define DROCE_PORTD_H

/*
 * QPN ranges of a shared port (tools/droce-portd): each program on the port runs its own engine
 * and owns one slot, the QPNs whose top bits are the slot (droce_dev_attr.shard/shard_bits), so
 * a frame goes to its program by the BTH DestQP alone and no two programs make the same QPN.
 * Slot 0 is never given out: QP0, QP1 and multicast (0xFFFFFF) fall outside every program.
 * A freed slot is the first handed out again. Pure C: no I/O, no clock.
 */
#include <stdbool.h>
#include <stdint.h>

enum {
	DROCE_PORTD_MAX_BITS = 5, /* up to 31 programs; a program keeps 19+ bits of QPN */
};

struct droce_portd_slots {
	uint8_t bits;  /* QPN top bits naming a slot: 1..DROCE_PORTD_MAX_BITS */
	uint32_t used; /* bit s: slot s is held by a program */
	uint32_t gen[1u << DROCE_PORTD_MAX_BITS]; /* times slot s was handed out */
};

/* 0, or -EINVAL for bits outside 1..DROCE_PORTD_MAX_BITS. */
int droce_portd_slots_init(struct droce_portd_slots *t, unsigned int bits);
/* The lowest free slot (>= 1), now held; -ENOSPC when every slot is held. */
int droce_portd_slot_get(struct droce_portd_slots *t);
/* Give slot s back: 0, or -EINVAL when s is not held. */
int droce_portd_slot_put(struct droce_portd_slots *t, unsigned int s);
/* The slot a DestQP names, or -ENOENT: slot 0 (QP0, QP1, multicast) or a slot nobody holds. */
int droce_portd_qpn_slot(const struct droce_portd_slots *t, uint32_t dqpn);
/* First and last QPN of slot s. */
void droce_portd_slot_range(const struct droce_portd_slots *t, unsigned int s, uint32_t *first,
			    uint32_t *last);

#endif
