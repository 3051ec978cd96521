/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PORTD_CTL_H
#define PORTD_CTL_H

/*
 * droce-portd's control socket (pmd-glue/droce_portd_proto.h): a program connects, gets a slot
 * (its QPN range and memif id) and holds the connection; when it closes (exit, SIGKILL: the
 * kernel closes it) the slot is free again. Plain C, no EAL.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_portd.h"
#include "droce_portd_proto.h"

enum { PORTD_MAX_SLOTS = 1u << DROCE_PORTD_MAX_BITS };

struct portd_ctl {
	int lfd;
	char path[108];
	struct droce_portd_slots slots;
	struct droce_portd_rep tmpl; /* the reply without its slot */
	int fd[PORTD_MAX_SLOTS];     /* slot s's connection, -1: free */
	int pid[PORTD_MAX_SLOTS];
	uint64_t joined, left, refused;
};

/* A slot given out (joined) or freed (!joined); pid as the program said. */
typedef void (*portd_ctl_event)(void *ctx, unsigned int slot, int pid, bool joined);

/* Listen on path (a stale socket file is replaced; its directory is made if missing). 0 or
 * -errno with err filled. */
int portd_ctl_open(struct portd_ctl *c, const char *path, unsigned int bits,
		   const struct droce_portd_rep *tmpl, char *err, size_t errlen);
/* Answer newcomers and notice departures, without blocking; returns the events. */
unsigned int portd_ctl_poll(struct portd_ctl *c, portd_ctl_event ev, void *ctx);
void portd_ctl_close(struct portd_ctl *c);

#endif
