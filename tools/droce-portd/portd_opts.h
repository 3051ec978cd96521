/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PORTD_OPTS_H
#define PORTD_OPTS_H

/* droce-portd's command line, and the EAL words it makes (the port, one memif per slot). */
#include <stddef.h>
#include <stdint.h>

enum { PORTD_EAL_ARGS = 96 };

struct portd_opts {
	char vdev[512];	    /* the port's virtual device */
	char port_name[64]; /* its name: vdev up to the first ',' */
	uint8_t ipv4[4];
	uint8_t ipv4_prefix;
	uint8_t gw4[4];
	uint32_t mtu; /* 0: the port's */
	char sock[108];
	char memif_sock[108];
	unsigned int slot_bits;
	char eal[512];
	unsigned int idle_spins;
	unsigned int idle_sleep_us;
};

/* 0: run; 1: --help printed; -1: a bad option (said on stderr). */
int portd_opts_parse(struct portd_opts *o, int argc, char **argv);
/* The EAL argv (words copied into buf); argc or -E2BIG. */
int portd_opts_eal(const struct portd_opts *o, const char *argv0, char **argv, char *buf,
		   size_t len);

#endif
