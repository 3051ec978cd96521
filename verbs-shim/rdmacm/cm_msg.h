/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CM_MSG_H
#define DROCE_CM_MSG_H

/*
 * IB CM messages (REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP) as the 256-byte MADs
 * that go over QP1, to and from one flat host-order struct; and rdma_cm's addressing header in a
 * REQ's (or SIDR_REQ's) private data. Pure C: no DPDK, no verbs. Wire layouts:
 * stack/wire/droce_mad.h, stack/wire/droce_cm.h.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum { CM_MAD_SIZE = 256 };

enum cm_attr_id {
	CM_REQ = 0x0010,
	CM_MRA = 0x0011,
	CM_REJ = 0x0012,
	CM_REP = 0x0013,
	CM_RTU = 0x0014,
	CM_DREQ = 0x0015,
	CM_DREP = 0x0016,
	CM_SIDR_REQ = 0x0017,
	CM_SIDR_REP = 0x0018,
};

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
struct cm_msg {
	uint16_t attr;			/* enum cm_attr_id */
	uint64_t tid;			/* MAD TransactionID */
	uint32_t local_comm_id, remote_comm_id;	/* REQ, SIDR have no remote_comm_id */
	uint64_t service_id;		/* REQ, SIDR_REQ, SIDR_REP */
	uint64_t local_ca_guid;		/* REQ, REP (host order) */
	uint32_t local_qkey;		/* REQ, REP, SIDR_REP */
	uint32_t local_qpn;		/* REQ, REP, SIDR_REP (24 bits); DREQ: remote QPN */
	uint32_t starting_psn;		/* REQ, REP (24 bits) */
	uint8_t responder_resources;	/* REQ, REP */
	uint8_t initiator_depth;	/* REQ, REP */
	uint8_t remote_cm_response_timeout, local_cm_response_timeout;	/* REQ (5 bits) */
	uint8_t transport_type;		/* REQ: 0 RC, 1 UC, 2 RD (2 bits) */
	bool end_to_end_flow_control;	/* REQ, REP */
	uint8_t retry_count;		/* REQ (3 bits) */
	uint8_t rnr_retry_count;	/* REQ, REP (3 bits) */
	uint8_t max_cm_retries;		/* REQ (4 bits) */
	uint8_t path_mtu;		/* REQ (4 bits, IBTA encoding 1=256 .. 5=4096) */
	bool srq;			/* REQ, REP */
	uint16_t pkey;			/* REQ, SIDR_REQ */
	uint16_t primary_local_lid, primary_remote_lid;	/* REQ (kernel on RoCE: 0xFFFF) */
	uint8_t primary_local_gid[16], primary_remote_gid[16];	/* REQ */
	uint32_t primary_flow_label;	/* REQ (20 bits) */
	uint8_t primary_packet_rate;	/* REQ (6 bits) */
	uint8_t primary_traffic_class, primary_hop_limit;	/* REQ */
	uint8_t primary_sl;		/* REQ (4 bits) */
	bool primary_subnet_local;	/* REQ */
	uint8_t primary_local_ack_timeout;	/* REQ (5 bits) */
	uint8_t target_ack_delay;	/* REP (5 bits) */
	uint8_t failover_accepted;	/* REP (2 bits) */
	uint8_t msg_rejected;		/* REJ (2 bits: 0 REQ, 1 REP, 2 other); MRA: msg_mraed */
	uint16_t reason;		/* REJ */
	uint8_t ari_len;		/* REJ (7 bits), SIDR_REP (8 bits); build: at most 72 */
	uint8_t ari[72];		/* REJ, SIDR_REP */
	uint8_t service_timeout;	/* MRA (5 bits) */
	uint8_t sidr_status;		/* SIDR_REP: DROCE_CM_SIDR_* (0 success, 1 no service...) */
	uint8_t private_data[224];
	/* build: bytes to copy (<= the attribute's size, rest zero); parse: the attribute's size */
	uint8_t private_data_len;
};

/* 0 or -EINVAL (unknown attr, a value too wide for its field, private data too long). */
int cm_msg_build(const struct cm_msg *m, uint8_t mad[CM_MAD_SIZE]);
/* 0, -EINVAL (too short, not a CM MAD of base version 1 / class 0x07 / class version 2 /
 * method Send), -EPROTONOSUPPORT (a CM attribute not in enum cm_attr_id: LAP, APR,
 * ClassPortInfo). A SIDR_REP's ari_len is as sent (up to 255); 72 bytes of ari are copied. */
int cm_msg_parse(const uint8_t *mad, size_t len, struct cm_msg *m);
size_t cm_msg_priv_max(uint16_t attr);	/* the attribute's private data size; 0 if unknown */
const char *cm_attr_name(uint16_t attr);	/* "REQ" ... or "?" */

/*
 * rdma_cm's IP addressing header at the start of a REQ's private data (kernel cma.c's
 * struct cma_hdr: version 0x00, IP version in the top nibble, port, source and destination
 * address, 36 bytes; IPv4 addresses in the last 4 bytes of each 16-byte field).
 *
 * The port is the ACTIVE side's own (source) port, not the destination's: the kernel writes
 * src->sin_port (cma_format_hdr), its passive side takes it as the remote port
 * (cma_save_ip4_info: dst_addr.sin_port = hdr->port), and Wireshark labels it "IP CM Source
 * Port". The listener's (destination) port is in the service ID only: cma_service_id_port().
 * In the header, src is the active side and dst the passive side.
 */
enum { CMA_HDR_SIZE = 36 };
/* port = src's port (see above); 0 / -EAFNOSUPPORT / -EINVAL (families differ) */
int cma_hdr_build(uint8_t out[CMA_HDR_SIZE], const struct sockaddr *src,
		  const struct sockaddr *dst);
/* fills family and addresses, and the port into src (the active side; dst port 0: take it from
 * the REQ's service ID); -EPROTO for unknown version, -EAFNOSUPPORT for an IP version not 4 or 6 */
int cma_hdr_parse(const uint8_t in[CMA_HDR_SIZE], struct sockaddr_storage *src,
		  struct sockaddr_storage *dst);
/* rdma_cm service ID: (port space << 16) | port
 * (RDMA_PS_TCP 0x0106 -> 0x0000000001060000 | port). */
uint64_t cma_service_id(uint16_t port_space, uint16_t port);
/* Its two halves, as the kernel's cma_port_from_service_id / rdma_ps_from_service_id read them. */
uint16_t cma_service_id_port(uint64_t service_id);
uint16_t cma_service_id_ps(uint64_t service_id);

#endif /* DROCE_CM_MSG_H */
