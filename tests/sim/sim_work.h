/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_WORK_H
#define SIM_WORK_H

/*
 * One simulator run: two endpoints joined by impaired links, a seeded workload of mixed verbs
 * on several QPs in both directions, and a reference model that predicts both sides' memory
 * byte for byte and every completion. sim_run() returns 0 when everything matched, 1 on the
 * first mismatch (described in the summary); the same configuration replays the same run.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "droce_verbs.h"

#include "droce_cc.h"
#include "droce_ext.h"
#include "sim_net.h"
#include "sim_trace.h"

enum sim_op {
	SIM_OP_WRITE,
	SIM_OP_WRITE_IMM,
	SIM_OP_SEND,
	SIM_OP_SEND_IMM,
	SIM_OP_READ,
	SIM_OP_CAS,
	SIM_OP_FADD,
	SIM_OP_AWRITE, /* ATOMIC WRITE (IBTA 1.5) */
	SIM_OP_MAX
};

#define SIM_OPS_ALL ((1u << SIM_OP_MAX) - 1)

struct sim_cfg {
	uint64_t seed;
	struct sim_link_cfg link; /* both directions */
	unsigned int ops;	  /* bit per enum sim_op */
	unsigned int msgs;	  /* work requests per run, over all QPs and both directions */
	uint32_t size_min;
	uint32_t size_max;
	unsigned int qps;
	enum droce_mtu mtu;
	enum droce_qp_type qpt;
	bool one_way; /* only node 0 posts */
	int verbose;
	bool digest; /* print the digest of every frame sent */
	uint64_t time_limit_ns;
	uint64_t event_limit;
	unsigned int sq_depth;
	unsigned int rq_depth;
	double tx_busy;		       /* probability tx_alloc has no buffer */
	uint8_t timeout;	       /* RC local ACK timeout code */
	uint32_t psn;		       /* first PSN (near 2^24 to wrap early) */
	bool srq;		       /* receives through one shared receive queue per node */
	bool shared_cq;		       /* one CQ per node for every QP's sends and receives */
	uint64_t recv_every_ns;	       /* replenish receives only this often (0: at once) */
	uint8_t min_rnr_timer;	       /* RNR timer code the responders ask for */
	uint8_t rd_atomic;	       /* max_rd_atomic = max_dest_rd_atomic (0: 8) */
	const struct droce_cc_ops *cc; /* both nodes' QPs (NULL: "none") */
	/* Both nodes' in-flight cap and RTO (the engine's defaults; a path_bps of 0 is the
	 * link's rate: the simulated device reports none) */
	struct droce_inflight_cfg inflight;
	bool lat;	  /* print the send WRs' completion-time median and p99 */
	bool sr;	  /* selective repeat on both nodes' RC QPs */
	uint8_t sr_nodes; /* bit n: selective repeat on node n's alone */
	const char *pcap; /* every frame sent, as a pcap file (NULL: none) */
};

void sim_cfg_default(struct sim_cfg *cfg);
/* Parse "write,read,send,atomic,imm,all" into an ops mask; 0 on an unknown word. */
unsigned int sim_ops_parse(const char *s);

struct sim_summary {
	uint64_t seed;
	uint64_t msgs;		/* WRs completed (signaled or implied) */
	uint64_t bytes;		/* payload bytes of completed WRs */
	uint64_t recvs;		/* receive completions */
	uint64_t wc_status[32]; /* completions polled, by status */
	uint64_t msgs_missing;	/* UC/UD messages legitimately lost */
	uint64_t msgs_dup;	/* UD datagrams received twice */
	uint64_t icrc_drops;	/* the engine's ICRC drop counters, both nodes */
	uint64_t read_needed;	/* READ response packets the READs posted need at least */
	uint64_t rto_resends;	/* requesters' early resends (RTO before the local ACK timeout) */
	uint64_t lat_p50_ns, lat_p99_ns; /* send WRs: posting to completion (cfg->lat) */
	uint64_t last_done_ns;		 /* the last send completion (vtime may end later: a
					 * timer's stale heap entry, droce_comp_arm_rto) */
	uint64_t sr_kept;		 /* requests kept past a gap (selective repeat) */
	uint64_t sr_peer;		 /* QPs that saw their peer's selective-repeat mark */
	uint64_t vtime_ns;
	uint64_t events;
	struct sim_wire_stats wire;
	struct sim_port_stats net; /* summed over the ports */
	bool ok;
	char mismatch[512];
};

int sim_run(const struct sim_cfg *cfg, struct sim_summary *sum);
void sim_summary_print(const struct sim_cfg *cfg, const struct sim_summary *sum, FILE *out);

#endif /* SIM_WORK_H */
