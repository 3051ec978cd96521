/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CM_MSG_H
#define DROCE_CM_MSG_H

/*
 * IB CM messages (REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP) as the 256-byte MADs
 * that go over QP1, to and from one flat host-order struct (attribute IDs: DROCE_CM_ATTR_*).
 * Pure C: no DPDK, no verbs, no I/O. Wire layouts:
 * stack/wire/droce_mad.h, stack/wire/droce_cm.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../wire/droce_mad.h"

/*
 * Every field in host order. build() reads only the fields of m->attr's message and ignores the
 * rest; parse() zeroes the struct and fills those fields. Fields the struct does not carry (EECNs,
 * RDC Exists, Extended Transport Type, the alternate path, SAP Supported) are written as zero and
 * not read. Every field is the sender's view, as on the wire: the receiver of a REQ/REP finds the
 * peer's comm ID in local_comm_id, and its own responder resources in initiator_depth and vice
 * versa (the kernel swaps them on receipt). RoCE values the kernel uses: droce_cm.h's top comment.
 *
 * SIDR_REQ/SIDR_REP (UD, no connection) reuse the fields: RequestID in local_comm_id (a SIDR_REP
 * echoes its SIDR_REQ's), the responder's UD QPN and Q_Key in local_qpn and local_qkey,
 * AdditionalInformation(Length) in ari and ari_len; VendorID is written zero and not read.
 */
struct droce_cm_msg {
	uint16_t attr;				/* enum cm_attr_id */
	uint64_t tid;				/* MAD TransactionID */
	uint32_t local_comm_id, remote_comm_id; /* REQ, SIDR have no remote_comm_id */
	uint64_t service_id;			/* REQ, SIDR_REQ, SIDR_REP */
	uint64_t local_ca_guid;			/* REQ, REP (host order) */
	uint32_t local_qkey;			/* REQ, REP, SIDR_REP */
	uint32_t local_qpn;			/* REQ, REP, SIDR_REP (24 bits); DREQ: remote QPN */
	uint32_t starting_psn;			/* REQ, REP (24 bits) */
	uint8_t responder_resources;		/* REQ, REP */
	uint8_t initiator_depth;		/* REQ, REP */
	uint8_t remote_cm_response_timeout, local_cm_response_timeout; /* REQ (5 bits) */
	uint8_t transport_type;	      /* REQ: 0 RC, 1 UC, 2 RD (2 bits) */
	bool end_to_end_flow_control; /* REQ, REP */
	uint8_t retry_count;	      /* REQ (3 bits) */
	uint8_t rnr_retry_count;      /* REQ, REP (3 bits) */
	uint8_t max_cm_retries;	      /* REQ (4 bits) */
	uint8_t path_mtu;	      /* REQ (4 bits, IBTA encoding 1=256 .. 5=4096) */
	bool srq;		      /* REQ, REP */
	uint16_t pkey;		      /* REQ, SIDR_REQ */
	uint16_t primary_local_lid, primary_remote_lid;	       /* REQ (kernel on RoCE: 0xFFFF) */
	uint8_t primary_local_gid[16], primary_remote_gid[16]; /* REQ */
	uint32_t primary_flow_label;			       /* REQ (20 bits) */
	uint8_t primary_packet_rate;			       /* REQ (6 bits) */
	uint8_t primary_traffic_class, primary_hop_limit;      /* REQ */
	uint8_t primary_sl;				       /* REQ (4 bits) */
	bool primary_subnet_local;			       /* REQ */
	uint8_t primary_local_ack_timeout;		       /* REQ (5 bits) */
	uint8_t target_ack_delay;			       /* REP (5 bits) */
	uint8_t failover_accepted;			       /* REP (2 bits) */
	uint8_t msg_rejected;	 /* REJ (2 bits: 0 REQ, 1 REP, 2 other); MRA: msg_mraed */
	uint16_t reason;	 /* REJ */
	uint8_t ari_len;	 /* REJ (7 bits), SIDR_REP (8 bits); build: at most 72 */
	uint8_t ari[72];	 /* REJ, SIDR_REP */
	uint8_t service_timeout; /* MRA (5 bits) */
	uint8_t sidr_status;	 /* SIDR_REP: DROCE_CM_SIDR_* (0 success, 1 no service...) */
	uint8_t private_data[224];
	/* build: bytes to copy (<= the attribute's size, rest zero); parse: the attribute's size */
	uint8_t private_data_len;
};

/* 0 or -EINVAL (unknown attr, a value too wide for its field, private data too long). */
int droce_cm_msg_build(const struct droce_cm_msg *m, uint8_t mad[DROCE_MAD_SIZE]);
/* 0, -EINVAL (too short, not a CM MAD of base version 1 / class 0x07 / class version 2 /
 * method Send), -EPROTONOSUPPORT (a CM attribute other than REQ..SIDR_REP: LAP, APR,
 * ClassPortInfo). A SIDR_REP's ari_len is as sent (up to 255); 72 bytes of ari are copied. */
int droce_cm_msg_parse(const uint8_t *mad, size_t len, struct droce_cm_msg *m);
size_t droce_cm_msg_priv_max(uint16_t attr);   /* the attribute's private data size; 0 if unknown */
const char *droce_cm_attr_name(uint16_t attr); /* "REQ" ... or "?" */

#endif /* DROCE_CM_MSG_H */
