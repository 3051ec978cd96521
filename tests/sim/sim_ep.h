/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_EP_H
#define SIM_EP_H

/*
 * A simulated endpoint: one droce_dev on a sim_net node, with its packet I/O and rand64 served
 * by the simulator, and helpers to bring QPs up the verbs way (RESET -> INIT -> RTR -> RTS).
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_verbs.h"

#include "sim_net.h"

#define SIM_EP_OUT 256 /* transmit buffers the engine may hold at once */

struct sim_ep {
	struct sim_net *net;
	unsigned int idx; /* node index */
	struct droce_dev *dev;
	struct sim_rng rng; /* the device's rand64 */
	uint8_t mac[6];
	uint8_t gid[16];
	unsigned int budget; /* frames per droce_dev_process() */
	double tx_busy;	     /* probability tx_alloc reports no free buffer */
	/* Buffer accounting: every buffer handed out must come back through tx_send. */
	uint64_t tx_allocs;
	uint64_t tx_sends;
	uint64_t tx_none;
	uint64_t tx_overrun; /* tx_send with more bytes than were allocated */
	uint64_t tx_foreign; /* tx_send of a buffer not from tx_alloc (or sent twice) */
	uint64_t rx_frames;
	/* Buffers handed out by tx_alloc and not sent yet. */
	struct sim_ep_buf {
		uint8_t *buf;
		uint32_t cap;
	} out[SIM_EP_OUT];
	unsigned int n_out;
	/* Frames sent during the current engine call, for the network when it returns. */
	struct sim_ep_buf *pend;
	unsigned int n_pend;
	unsigned int cap_pend;
};

/* Node i gets MAC 02:00:00:00:00:(i+1) and GID ::ffff:10.0.0.(i+1). */
int sim_ep_create(struct sim_ep *ep, struct sim_net *net, uint64_t seed,
		  const struct sim_link_cfg *down, uint32_t eth_mtu);
void sim_ep_destroy(struct sim_ep *ep);
/* Hand the frames sent so far to the network (done after every engine call the node makes). */
void sim_ep_flush(struct sim_ep *ep);
/* The address vector that reaches `to`. */
void sim_ep_av(const struct sim_ep *to, struct droce_av *av);

struct sim_qp_params {
	enum droce_mtu mtu;
	uint32_t access; /* qp_access_flags */
	uint32_t sq_psn;
	uint32_t rq_psn;
	uint32_t qkey;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	bool sr;  /* selective repeat (droce_qp_set_recovery), RC only */
	bool srq; /* sim_scen: receives through a shared receive queue per node */
};

void sim_qp_params_default(struct sim_qp_params *p);
/* RESET -> INIT -> RTR -> RTS toward (peer, peer_qpn); UD ignores the peer. 0 or -errno. */
int sim_qp_bring_up(struct droce_qp *qp, enum droce_qp_type type, const struct sim_ep *peer,
		    uint32_t peer_qpn, const struct sim_qp_params *p);

#endif /* SIM_EP_H */
