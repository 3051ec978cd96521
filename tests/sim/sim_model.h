/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

/*
 * The reference model behind sim_run(): the generated workload, where every buffer lives, and
 * what each node's memory must hold at the end. Internal to tests/sim.
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_verbs.h"

#include "sim_ep.h"
#include "sim_rng.h"
#include "sim_work.h"

#define SIM_MAX_SGE    3 /* pieces carrying data */
#define SIM_SGE_CAP    4 /* plus, now and then, one of zero length */
#define SIM_MAX_QPS    16
#define SIM_ATOM_WORDS 4
#define SIM_INLINE_MAX 64
#define SIM_UD_GRH     40

/* Memory byte expectations. */
enum sim_care {
	SIM_CARE_EXACT,	 /* must equal exp */
	SIM_CARE_EITHER, /* exp or alt (an unreliable write that may be missing) */
	SIM_CARE_ANY,	 /* undefined by the verbs contract */
};

struct sim_piece {
	uint32_t off; /* in the node's memory */
	uint32_t len;
};

/* One generated send work request. */
struct sim_wr {
	uint8_t op;   /* enum sim_op */
	uint8_t side; /* posting node */
	uint8_t qp;
	uint8_t nsge;
	bool inl;
	bool signaled;
	bool fence; /* wait for earlier READs/atomics (IBTA 10.8.3.3) */
	bool solicited;
	uint32_t len;
	struct sim_piece sge[SIM_SGE_CAP]; /* gather list (source) or scatter list (READ) */
	uint32_t imm;
	uint32_t roff; /* remote offset in the peer's memory */
	uint32_t loff; /* atomic result in the poster's memory */
	uint64_t cmp;
	uint64_t swap_add;
	uint64_t orig;		 /* predicted atomic result */
	int32_t recv_idx;	 /* consumes this receive at the peer (RC), else -1 */
	uint64_t t_post, t_done; /* virtual times posted and completed (polled) */
};

struct sim_recv {
	uint8_t nsge;
	struct sim_piece sge[SIM_SGE_CAP];
};

/* One end of one QP. */
struct sim_side {
	struct droce_qp *qp;
	struct droce_cq *scq;
	struct droce_cq *rcq;
	uint32_t qpn;
	/* The QP's regions form one block with an MR of its own (several MRs per PD, and a
	 * receive slot that ends on an MR's last byte). */
	uint32_t blk, blk_len;
	struct droce_mr *mr;
	/* Region offsets in the node memory. */
	uint32_t src, src_len;
	uint32_t wtgt, wtgt_len;
	uint32_t rsrc, rsrc_len;
	uint32_t rdst, rdst_len;
	uint32_t atom;
	uint32_t ares, ares_len;
	uint32_t rslot, slot_len;
	uint32_t scratch;
	uint64_t atom_init[SIM_ATOM_WORDS];
	uint64_t atom_val[SIM_ATOM_WORDS]; /* after every atomic */
	/* Send queue. */
	uint32_t *wr; /* indices into the run's WR array, in posting order */
	uint32_t n_wr;
	uint32_t next_post;
	uint32_t next_done;
	/* Receive queue. */
	struct sim_recv *recv;
	uint32_t n_recv; /* receives to post */
	uint32_t recv_posted;
	uint32_t recv_done;
	uint32_t *in; /* WRs of the peer that consume receives here, in order */
	uint32_t n_in;
	uint32_t in_cursor; /* UC/UD matching */
	uint8_t *in_seen;
};

struct sim_node_mem {
	uint8_t *mem;
	uint8_t *exp;
	uint8_t *alt;
	uint8_t *care;
	uint32_t len;
	struct droce_pd *pd;
	struct droce_mr *mr; /* over the shared receive slots (--srq) */
	struct droce_ah *ah; /* to the other node (UD) */
	struct droce_srq *srq;
	struct droce_cq *cq; /* shared CQ mode */
	/* Shared receive queue mode: the receives of every QP of the node. */
	struct sim_recv *srecv;
	uint32_t n_srecv;
	uint32_t srecv_posted;
	uint32_t srecv_done;
	uint8_t *srecv_used;
	uint32_t srslot;
	struct sim_side side[SIM_MAX_QPS];
};

struct sim_world {
	const struct sim_cfg *cfg;
	struct sim_summary *sum;
	struct sim_rng rng;	  /* the workload's stream */
	struct sim_rng flags_rng; /* fence/solicited bits (a stream apart: older seeds keep
					 * their workload) */
	struct sim_net net;
	struct sim_trace trace;
	struct sim_ep ep[2];
	struct sim_node_mem node[2];
	struct sim_wr *wr;
	uint32_t n_wr;
	uint32_t mtu_bytes;
	bool failed;
	bool draining;
	struct sim_app *app;
	uint64_t next_recv_post; /* --recv-every: when receives may be posted again */
};

/* sim_gen.c: the workload, the memory layout and the predicted final memory. */
int sim_gen(struct sim_world *w);
void sim_gen_free(struct sim_world *w);

/* sim_check.c */
void sim_fail(struct sim_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_poll_all(struct sim_world *w);
bool sim_work_done(const struct sim_world *w);
void sim_check_memory(struct sim_world *w);
void sim_check_events(struct sim_world *w);
/* Messages that never completed a receive (legitimate for UC/UD only). */
void sim_count_missing(struct sim_world *w);
const char *sim_wc_status_name(enum droce_wc_status s);
const char *sim_op_name(enum sim_op op);
uint32_t sim_scatter(const struct sim_recv *r, uint32_t skip, uint8_t *buf, uint32_t len,
		     uint8_t *base, bool to_mem);
/* The bytes of a WR's payload (gathered from its source pieces) into out. */
void sim_wr_payload(const struct sim_world *w, const struct sim_wr *wr, uint8_t *out);

#endif /* SIM_MODEL_H */
