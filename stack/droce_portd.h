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
	DROCE_PORTD_LISTENS = 16, /* CM service IDs a program may listen on */
};

/*
 * QP1 (the IB CM over RoCE) is shared too: a program's CM makes its local comm IDs (and SIDR
 * RequestIDs) with its slot in their top bits (droce_cm_set_id_prefix), so a MAD that names one
 * (REP, RTU, MRA, REJ, DREQ, DREP, SIDR_REP) goes to its slot; a REQ or SIDR_REQ goes to the
 * program that listens on its service ID (droce_portd_listen).
 */
struct droce_portd_slots {
	uint8_t bits;  /* QPN top bits naming a slot: 1..DROCE_PORTD_MAX_BITS */
	uint32_t used; /* bit s: slot s is held by a program */
	uint32_t gen[1u << DROCE_PORTD_MAX_BITS]; /* times slot s was handed out */
	uint64_t listen[1u << DROCE_PORTD_MAX_BITS][DROCE_PORTD_LISTENS]; /* 0: none */
};

/* Why droce-portd drops a frame: X(name, description); counted as portd.drop_<name>. */
#define DROCE_PORTD_DROP_LIST(X) \
	X(not_roce, "from the port: neither RoCEv2 nor ARP (the kernel's, or nobody's)") \
	X(no_program, "from the port: DestQP in a slot no program holds (it left, or never was)") \
	X(special_qp, "from the port: DestQP 0, multicast, or a MAD to QP1 not of the CM class") \
	X(no_listener, "from the port: a CM REQ or SIDR_REQ for a service ID nobody listens on") \
	X(bth_short, "from the port: UDP 4791 ending before the BTH's DestQP") \
	X(program_full, "to a program: its memif took no more (it is slow or gone)") \
	X(port_full, "to the port: its Tx queue took no more") \
	X(src_mac, "from a program: a source MAC other than the port's")

enum droce_portd_drop {
#define DROCE_PORTD_X(n, d) DROCE_PORTD_DROP_##n,
	DROCE_PORTD_DROP_LIST(DROCE_PORTD_X)
#undef DROCE_PORTD_X
		DROCE_PORTD_DROP_COUNT
};

/* Where a frame from the port goes. */
enum droce_portd_route {
	DROCE_PORTD_TO_PROGRAM, /* *slot's program */
	DROCE_PORTD_ARP,	/* the service's own ARP: answer for the port, copy replies out */
	DROCE_PORTD_DROP,	/* *drop says why */
};

/* Route a frame received on the port (untagged or one 802.1Q tag, the engine's parser). */
enum droce_portd_route droce_portd_route(const struct droce_portd_slots *t, const uint8_t *frame,
					 uint32_t len, unsigned int *slot,
					 enum droce_portd_drop *drop);
const char *droce_portd_drop_name(enum droce_portd_drop d);

/* 0, or -EINVAL for bits outside 1..DROCE_PORTD_MAX_BITS. */
int droce_portd_slots_init(struct droce_portd_slots *t, unsigned int bits);
/* The lowest free slot (>= 1), now held; -ENOSPC when every slot is held. */
int droce_portd_slot_get(struct droce_portd_slots *t);
/* Give slot s back: 0, or -EINVAL when s is not held. */
int droce_portd_slot_put(struct droce_portd_slots *t, unsigned int s);
/* The slot a DestQP names, or -ENOENT: slot 0 (QP0, QP1, multicast) or a slot nobody holds. */
int droce_portd_qpn_slot(const struct droce_portd_slots *t, uint32_t dqpn);
/* Slot s listens (on) or stops listening (!on) on a CM service ID (not 0). 0; -EINVAL (slot not
 * held, ID 0); -EADDRINUSE (another slot listens on it); -ENOSPC (s has DROCE_PORTD_LISTENS);
 * -ENOENT (s does not listen on it). Freeing a slot drops its listens. */
int droce_portd_listen(struct droce_portd_slots *t, unsigned int s, uint64_t service_id, bool on);
/* First and last QPN of slot s. */
void droce_portd_slot_range(const struct droce_portd_slots *t, unsigned int s, uint32_t *first,
			    uint32_t *last);

#endif
