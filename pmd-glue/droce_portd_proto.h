/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_PORTD_PROTO_H
#define DROCE_PORTD_PROTO_H

/*
 * The control socket of droce-portd (tools/droce-portd): a program connects (SOCK_SEQPACKET),
 * sends one request and reads one reply naming its slot (its QPN range, stack/droce_portd.h),
 * the memif it reaches the port through and the port's addresses. It keeps the connection open
 * for its life: the service frees the slot (and its listens) when the connection closes (exit,
 * SIGKILL).
 */
#include <stdint.h>

#define DROCE_PORTD_SOCK    "/run/droce/portd.sock"
#define DROCE_PORTD_MAGIC   0x64506f72u /* "dPor" */
#define DROCE_PORTD_VERSION 1u

struct droce_portd_req {
	uint32_t magic;
	uint32_t version;
	int32_t pid;	/* for the service's log */
	uint32_t query; /* 1: the port's addresses only, no slot (the verbs shim's device list) */
};

struct droce_portd_rep {
	uint32_t magic;
	int32_t status; /* 0, or -errno: -ENOSPC every slot is held */
	uint32_t slot;	/* the QPN top bits of this program; also its memif id */
	uint32_t slot_bits;
	uint32_t mtu;	 /* the port's Ethernet MTU */
	uint8_t mac[6];	 /* the port's MAC: every program's frames carry it */
	uint8_t ipv4[4]; /* the port's IPv4 address, network order */
	uint8_t ipv4_prefix;
	uint8_t pad;
	uint8_t gw4[4];	      /* 0.0.0.0: none */
	char memif_sock[108]; /* the memif control socket, role=client, id=slot */
};

/* Later on the held connection, no reply: the program's CM listens on (or stops listening on)
 * a service ID; the service hands it the REQs and SIDR_REQs for it (stack/droce_portd.h). */
enum {
	DROCE_PORTD_OP_LISTEN = 1,
	DROCE_PORTD_OP_UNLISTEN = 2,
};

struct droce_portd_listen_msg {
	uint32_t magic;
	uint32_t op;
	uint64_t service_id;
};

#endif
