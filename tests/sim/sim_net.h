/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_NET_H
#define SIM_NET_H

/*
 * A deterministic network in virtual time: N nodes on one switch. Each node's downlink is a
 * switch egress port with a FIFO queue (rate, tail drop, RED ECN marking) followed by a wire
 * (latency, jitter, loss, Gilbert-Elliott burst loss, reordering, duplication, corruption).
 * A next-event loop jumps virtual time to the earliest of: the next frame arrival, each node's
 * next deadline, the application's wake-up time. Nodes are opaque (struct sim_node_ops), so the
 * core knows nothing about the engine; scenarios live in the tests.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_heap.h"
#include "sim_rng.h"

#define SIM_MAX_NODES 65 /* a receiver and 64 senders (sim_cc.c) */
#define SIM_BURST     32

struct sim_link_cfg {
	uint64_t rate_bps;  /* 0: infinitely fast */
	uint64_t delay_ns;  /* propagation */
	uint64_t jitter_ns; /* uniform extra delay in [0, jitter] */
	double loss;	    /* independent loss probability */
	/* Gilbert-Elliott: transition probabilities per frame (and per MTU slot of idle time) and
	 * the loss rate in the bad state. */
	double ge_p_gb;
	double ge_p_bg;
	double ge_loss_bad;
	double reorder; /* probability a frame is held back by reorder_ns */
	uint64_t reorder_ns;
	double dup;	     /* probability a frame is delivered twice */
	double corrupt;	     /* probability a frame gets 1-3 bits flipped under the ICRC */
	uint32_t qcap_bytes; /* egress queue limit, 0: unlimited */
	uint32_t red_kmin;   /* RED ECN marking on the queue backlog in bytes (kmax 0: off) */
	uint32_t red_kmax;
	double red_pmax;
	bool down; /* drop everything: the peer vanished */
};

/* Set the Gilbert-Elliott knobs for an average loss rate with bursts of mean length `burst`. */
void sim_link_burst_loss(struct sim_link_cfg *c, double avg_loss, double burst);

struct sim_port_stats {
	uint64_t frames; /* offered to the port */
	uint64_t bytes;
	uint64_t delivered;  /* arrivals scheduled (duplicates included) */
	uint64_t lost;	     /* independent loss */
	uint64_t burst_lost; /* Gilbert-Elliott loss */
	uint64_t down_lost;
	uint64_t picked; /* lost or duplicated by the test's pick */
	uint64_t tail_drop;
	uint64_t reordered; /* held back by the reorder knob */
	uint64_t late;	    /* delivered after a frame sent later did (reorder or jitter) */
	uint64_t duplicated;
	uint64_t corrupted; /* frames delivered with flipped bits */
	uint64_t ce_marked;
	uint64_t max_backlog;
	uint64_t backlog_sum; /* the backlog each frame found: / frames is the mean */
};

struct sim_node_ops {
	void (*rx)(void *ctx, const uint8_t *const *frames, const uint32_t *lens, unsigned int n,
		   uint64_t now);
	/* Run timers and transmit; returns frames sent. */
	unsigned int (*process)(void *ctx, uint64_t now);
	uint64_t (*deadline)(void *ctx);
	/* Optional: transmit what the application's calls queued (after each app step). */
	void (*flush)(void *ctx);
};

struct sim_port {
	struct sim_link_cfg cfg;
	struct sim_rng rng;
	bool ge_bad;
	uint64_t ge_last;    /* time of the last Gilbert-Elliott step */
	uint64_t busy_until; /* when the queue has serialised everything it holds */
	uint64_t pseq;	     /* frames entered so far */
	uint64_t max_pseq;   /* latest-sent frame delivered so far */
	struct sim_port_stats st;
};

struct sim_node {
	const struct sim_node_ops *ops;
	void *ctx;
	uint8_t mac[6];
	struct sim_port down; /* switch egress toward this node */
};

enum sim_result {
	SIM_DONE, /* the application's done() said so */
	SIM_IDLE, /* nothing left to happen, but not done */
	SIM_TIME_LIMIT,
	SIM_EVENT_LIMIT,
};

struct sim_app {
	void (*step)(void *arg, uint64_t now); /* after every event: poll, post */
	bool (*done)(void *arg);
	void *arg;
	uint64_t wake; /* extra wake-up time, UINT64_MAX: none */
};

/* Called for every frame a node sends, with its fate, for tracing and accounting. */
enum sim_fate {
	SIM_FATE_OK = 0,
	SIM_FATE_LOST = 1 << 0,
	SIM_FATE_DUP = 1 << 1,
	SIM_FATE_CORRUPT = 1 << 2,
	SIM_FATE_CE = 1 << 3,
	SIM_FATE_REORDER = 1 << 4,
	SIM_FATE_NOROUTE = 1 << 5,
};
typedef void (*sim_tx_hook_fn)(void *arg, unsigned int src, unsigned int dst, const uint8_t *frame,
			       uint32_t len, unsigned int fate, uint64_t now, uint64_t arrive);

struct sim_net {
	struct sim_node node[SIM_MAX_NODES];
	unsigned int n_nodes;
	struct sim_heap heap;
	uint64_t now;
	uint64_t events;
	uint64_t time_limit; /* absolute virtual time */
	uint64_t event_limit;
	uint64_t noroute;
	sim_tx_hook_fn tx_hook;
	void *tx_hook_arg;
	/* Targeted tests: a frame's fate chosen by the test (SIM_FATE_LOST, SIM_FATE_DUP or 0),
	 * before the link's own impairments. */
	unsigned int (*pick)(void *arg, unsigned int src, const uint8_t *frame, uint32_t len);
	void *pick_arg;
};

void sim_net_init(struct sim_net *net, uint64_t seed);
void sim_net_fini(struct sim_net *net);
/* Returns the node index. The port's PRNG is stream 100 + index of the run seed. */
int sim_net_add_node(struct sim_net *net, const uint8_t mac[6], const struct sim_node_ops *ops,
		     void *ctx, const struct sim_link_cfg *down, uint64_t seed);
/* A node transmits: buf (malloc'ed, ownership passes) goes to the node owning its dest. MAC. */
void sim_net_send(struct sim_net *net, unsigned int src, uint8_t *buf, uint32_t len);
/* Run until done, idle or a limit. */
enum sim_result sim_net_run(struct sim_net *net, struct sim_app *app);
const char *sim_result_name(enum sim_result r);

/* Frame helpers (Ethernet, optional 802.1Q, IPv4/IPv6, UDP): offset of the BTH, or -1. */
int sim_frame_bth_off(const uint8_t *f, uint32_t len);
/* Set CE if the frame is ECN-capable (fixing the IPv4 checksum); true when marked. */
bool sim_frame_mark_ce(uint8_t *f, uint32_t len);

#endif /* SIM_NET_H */
