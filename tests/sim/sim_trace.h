/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

/*
 * Watches every frame the nodes send (sim_net tx hook): counts data packets, retransmissions,
 * ACKs and NAKs by kind from the wire itself, so the figures do not depend on what the engine
 * chooses to count, and prints a one-line trace per frame with -v.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_TRACE_FLOWS 256

struct sim_wire_stats {
	uint64_t frames;
	uint64_t req_pkts;  /* requester packets (RC/UC/UD requests) */
	uint64_t data_pkts; /* packets carrying payload (requests and READ responses) */
	uint64_t payload_bytes;
	uint64_t retransmits; /* request packets whose PSN was sent before on that flow */
	uint64_t acks;
	uint64_t naks; /* NAK: PSN sequence error, invalid request, access, operational */
	uint64_t nak_code[4];
	uint64_t rnr_naks;
	uint64_t read_resp;
	uint64_t
		read_resp_rx; /* READ responses the network delivered (lost and damaged ones not) */
	uint64_t read_rereq;  /* READ requests whose PSN was sent before on that flow */
	uint64_t atomic_acks;
	uint64_t seq_nak_unacked; /* a sequence NAK with no ACK since the flow's previous one */
	uint64_t cnps;
	uint64_t unparsable;
	uint64_t per_node_req[8];  /* request packets sent by node i */
	uint64_t per_node_resp[8]; /* response packets sent by node i */
	uint64_t digest;	   /* FNV-1a over every frame's length and bytes, in send order */
};

struct sim_trace_flow {
	uint32_t key; /* src node << 24 | destination QPN; bit 31: responses */
	uint32_t next_psn;
	uint32_t nak_psn; /* responses: the last sequence NAK's PSN */
	bool nak_open;	  /* responses: no ACK at or past nak_psn since that NAK */
};

struct sim_trace {
	struct sim_wire_stats st;
	int verbose;
	FILE *out;
	uint32_t mtu_bytes; /* to know how many PSNs a READ request spans */
	struct sim_trace_flow flow[SIM_TRACE_FLOWS];
	unsigned int n_flow;
	FILE *pcap; /* every frame as sent (before the wire damages it), or NULL */
};

void sim_trace_init(struct sim_trace *tr, int verbose, FILE *out, uint32_t mtu_bytes);
/* Write every frame to a classic pcap file from now on (virtual time stamps); 0 or -1. */
int sim_trace_pcap_open(struct sim_trace *tr, const char *path);
void sim_trace_pcap_close(struct sim_trace *tr);
/* sim_tx_hook_fn */
void sim_trace_hook(void *arg, unsigned int src, unsigned int dst, const uint8_t *frame,
		    uint32_t len, unsigned int fate, uint64_t now, uint64_t arrive);

#endif /* SIM_TRACE_H */
