/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_SCEN_H
#define SIM_SCEN_H

/*
 * A two-endpoint fixture for hand-written scenarios: one QP per node joined over a simulated
 * link, one registered buffer per node, one CQ per node whose completions are collected with
 * the virtual time they were polled at.
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_counters.h"
#include "droce_verbs.h"

#include "sim_ep.h"
#include "sim_net.h"
#include "sim_trace.h"

#define SCEN_MEM   (1u << 20) /* 4096 packets at a 256 B path MTU: past the send window */
#define SCEN_WC	   256
#define SCEN_PICKS 4

/* A targeted fault (scen_pick): the first `times` frames node src sends at PSN psn meet fate. */
struct scen_pick {
	unsigned int src;
	uint32_t psn;
	unsigned int fate;
	unsigned int times;
};

struct scen {
	struct sim_net net;
	struct sim_trace trace;
	struct sim_ep ep[2];
	struct droce_pd *pd[2];
	uint8_t *mem[2];
	struct droce_mr *mr[2];
	struct droce_cq *cq[2];
	struct droce_qp *qp[2];
	struct droce_srq *srq[2]; /* with sim_qp_params.srq: scen_post_recv posts there */
	enum droce_qp_type type;
	struct droce_wc wc[2][SCEN_WC];
	uint64_t wc_t[2][SCEN_WC];
	unsigned int nwc[2];
	int poll_err[2];
	bool no_poll[2];
	uint64_t wake;
	void (*at_wake)(struct scen *s);
	struct scen_pick picks[SCEN_PICKS];
	unsigned int n_picks;
};

/* cq_depth 0: 64. qp NULL: sim_qp_params_default. Returns 0 or -errno. */
int scen_init(struct scen *s, uint64_t seed, const struct sim_link_cfg *link,
	      enum droce_qp_type type, const struct sim_qp_params *qp, uint32_t cq_depth);
void scen_fini(struct scen *s);
/* The targeted tests' fixture: one RC QP pair (p NULL: defaults) on a clean 25 Gbit/s, 2 us
 * link, seed 1; a failure to build it fails the test at once. */
extern const struct sim_link_cfg scen_clean_link;
void scen_setup_rc(struct scen *s, const struct sim_qp_params *p);

#define SCEN_UNSIGNALED (1u << 31) /* scen_post flag: post without DROCE_SEND_SIGNALED */

/* A WR from node n: local bytes [off, off+len) of its buffer, remote (addr, rkey); for
 * SEND_WITH_INV, rkey is the key to invalidate. */
int scen_post(struct scen *s, unsigned int n, enum droce_wr_opcode op, uint64_t wr_id, uint32_t off,
	      uint32_t len, uint64_t raddr, uint32_t rkey, unsigned int flags);
int scen_post_atomic(struct scen *s, unsigned int n, enum droce_wr_opcode op, uint64_t wr_id,
		     uint32_t off, uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap);
int scen_post_recv(struct scen *s, unsigned int n, uint64_t wr_id, uint32_t off, uint32_t len);
/* Remote address of byte off of node n's buffer. */
uint64_t scen_addr(const struct scen *s, unsigned int n, uint32_t off);

/* Test helpers: assert completion i of node n (printing both on a difference), whether bytes
 * still hold the fixture's initial pattern, a QP counter, and node n's async events of a type
 * (the others are drained). */
void scen_expect_wc(const struct scen *s, unsigned int n, unsigned int i, uint64_t wr_id,
		    enum droce_wc_status st);
bool scen_untouched(const struct scen *s, unsigned int n, uint32_t off, uint32_t len);
uint64_t scen_cnt(const struct scen *s, unsigned int n, enum droce_cnt c);
unsigned int scen_events(struct scen *s, unsigned int n, enum droce_event_type type);

/* The first `times` frames node src sends at PSN psn meet fate (SIM_FATE_LOST, ...): at most
 * SCEN_PICKS of them a scenario; the first hooks the network's pick. */
void scen_pick(struct scen *s, unsigned int src, uint32_t psn, unsigned int fate,
	       unsigned int times);
/* The network's pick that scen_pick hooks (arg: the scen), for a test's own pick to chain. */
unsigned int scen_pick_fate(void *arg, unsigned int src, const uint8_t *f, uint32_t len);

/* Run until node n has collected `count` completions, or nothing is left, or limit_ns. */
enum sim_result scen_run_until(struct scen *s, unsigned int n, unsigned int count,
			       uint64_t limit_ns);

#endif /* SIM_SCEN_H */
