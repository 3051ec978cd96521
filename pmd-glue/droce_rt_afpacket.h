/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_AFPACKET_H
#define DROCE_RT_AFPACKET_H

/*
 * net_af_packet's ring geometry for an Ethernet MTU. DPDK 22.11's PMD receives a frame into one
 * TPACKET_V2 ring slot of framesz bytes and copies it into one mbuf (no scatter); the kernel
 * cuts a frame longer than its slot. Its ethdev MTU range is fixed at 1500 whatever the slot,
 * so the runtime sizes the slot (framesz, blocksz devargs), the mbufs, and bounds the MTU here.
 * Plain C, no EAL.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_rt_config.h"

enum {
	/* the PMD's slot when the vdev names none */
	DROCE_RT_AFP_DEFAULT_FRAMESZ = 2048,
	/* where the kernel puts a received frame's IP header in a slot (af_packet.c
	 * tpacket_rcv's netoff: TPACKET_ALIGN(TPACKET2_HDRLEN 52 + 16), the Ethernet header
	 * before it; the same with an 802.1Q tag inline, 18 <= 16 rounded up): a slot holds an
	 * MTU of framesz - 80, and cuts a longer frame short */
	DROCE_RT_AFP_NETOFF = 80,
	/* where the PMD puts a frame to send (and so the mbuf room it asks): TPACKET2_HDRLEN
	 * less the sockaddr_ll */
	DROCE_RT_AFP_DATAOFF = 32,
	/* slots droce asks for are a multiple of this, so a block of a few pages holds whole
	 * slots back to back (the PMD indexes slot i at i * framesz) */
	DROCE_RT_AFP_ALIGN = 512,
};

struct droce_rt_afp {
	bool is_afpacket; /* cfg->vdev names net_af_packet (or its alias eth_af_packet) */
	bool given;	  /* the vdev sets framesz or blocksz itself: used as it is */
	uint32_t framesz; /* ring slot */
	uint32_t blocksz; /* ring block: a multiple of the page and of framesz */
};

/* Slot and block for cfg's vdev and MTU: the vdev's own framesz/blocksz, else the PMD's
 * default when the MTU fits it, else the smallest DROCE_RT_AFP_ALIGN multiple that does. */
void droce_rt_afp_geometry(const struct droce_rt_config *cfg, struct droce_rt_afp *g);

/* Largest MTU whose frames arrive whole in a slot of g (802.1Q tagged or not). */
uint32_t droce_rt_afp_max_mtu(const struct droce_rt_afp *g);

/* Mbuf data room the PMD's Rx queue setup asks for a slot of g. */
uint32_t droce_rt_afp_rx_room(const struct droce_rt_afp *g);

/* cfg->vdev as EAL gets it: with ",framesz=F,blocksz=B" added when the MTU needs a larger slot
 * than the PMD's default and the vdev names none. 0, or -E2BIG. */
int droce_rt_afp_vdev(const struct droce_rt_config *cfg, char *out, size_t outlen);

/* The value of devarg key in a vdev string ("net_x0,key=value,..."). 0, or -1 when absent. */
int droce_rt_devarg(const char *vdev, const char *key, char *out, size_t outlen);

#endif /* DROCE_RT_AFPACKET_H */
