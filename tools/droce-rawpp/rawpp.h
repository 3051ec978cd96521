/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RAWPP_H
#define DROCE_RAWPP_H

/*
 * droce-rawpp: raw DPDK baselines on ethdev port 0 (net_memif, net_ring...): a ping-pong for RTT
 * and a one-way stream for throughput, so the droce figures have something to be compared with.
 * Frames are Ethernet/IPv4(ECT(0))/UDP so droce-netem's RED can mark them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

enum droce_rawpp_role {
	DROCE_RAWPP_SERVER,
	DROCE_RAWPP_CLIENT,
};

enum droce_rawpp_mode {
	DROCE_RAWPP_PINGPONG,
	DROCE_RAWPP_TPUT,
};

/* Payload type byte. */
enum droce_rawpp_type {
	DROCE_RAWPP_DATA = 1,
	DROCE_RAWPP_ECHO = 2,
	DROCE_RAWPP_END = 3, /* seq carries the number of frames the client sent */
};

/* Frame layout: Ethernet 14, IPv4 20, UDP 8, then type, flags, seq, timestamp: 60 bytes min. */
enum droce_rawpp_off {
	DROCE_RAWPP_OFF_IP = 14,
	DROCE_RAWPP_OFF_UDP = 34,
	DROCE_RAWPP_OFF_TYPE = 42,
	DROCE_RAWPP_OFF_FLAGS = 43, /* echo: the request arrived CE-marked */
	DROCE_RAWPP_OFF_SEQ = 44,
	DROCE_RAWPP_OFF_TS = 52,
	DROCE_RAWPP_HDR_LEN = 60,
};

#define DROCE_RAWPP_FCS	     4
#define DROCE_RAWPP_UDP_PORT 0xD0CE
#define DROCE_RAWPP_MIN_SIZE 64
#define DROCE_RAWPP_MAX_SIZE 1518

struct droce_rawpp_opts {
	enum droce_rawpp_role role;
	enum droce_rawpp_mode mode;
	uint32_t size;	/* Ethernet frame incl. FCS, as RFC 2544 counts: data is size - 4 */
	uint64_t iters; /* pings or frames; 0 = until duration */
	uint64_t duration_ns;
	uint64_t warmup;     /* pings left out of the statistics */
	uint64_t timeout_ns; /* ping-pong: wait this long for an echo */
	uint32_t idle_us;    /* sleep up to this when waiting; 0 = busy poll */
	uint32_t burst;
	uint16_t port;
};

struct droce_rawpp_ctx {
	struct droce_rawpp_opts o;
	struct rte_mempool *mp;
	uint64_t hz;
	volatile int *stop;
};

/* Write the headers and payload fields of a data frame of o->size into buf. */
void droce_rawpp_frame_init(uint8_t *buf, const struct droce_rawpp_opts *o);

/* Tell the peer we are done: end frames carrying count, retried while its ring is full. */
#define DROCE_RAWPP_END_COPIES 8
void droce_rawpp_send_end(struct droce_rawpp_ctx *c, uint64_t count);

/* Backing off while waiting: spin first, then sleep up to idle_us. */
void droce_rawpp_idle(uint32_t *empty_polls, uint32_t idle_us);

int droce_rawpp_pingpong_client(struct droce_rawpp_ctx *c);
int droce_rawpp_pingpong_server(struct droce_rawpp_ctx *c);
int droce_rawpp_tput_client(struct droce_rawpp_ctx *c);
int droce_rawpp_tput_server(struct droce_rawpp_ctx *c);

static inline uint64_t
droce_rawpp_get64(const struct rte_mbuf *m, unsigned int off)
{
	uint64_t v;

	memcpy(&v, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), sizeof(v));
	return v;
}

static inline void
droce_rawpp_put64(struct rte_mbuf *m, unsigned int off, uint64_t v)
{
	memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, off), &v, sizeof(v));
}

static inline uint8_t
droce_rawpp_type_of(const struct rte_mbuf *m)
{
	if (rte_pktmbuf_data_len(m) < DROCE_RAWPP_HDR_LEN ||
	    *rte_pktmbuf_mtod_offset(m, const uint16_t *, DROCE_RAWPP_OFF_UDP + 2) !=
		    rte_cpu_to_be_16(DROCE_RAWPP_UDP_PORT))
		return 0;
	return *rte_pktmbuf_mtod_offset(m, const uint8_t *, DROCE_RAWPP_OFF_TYPE);
}

#endif /* DROCE_RAWPP_H */
