/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_CM_H
#define DROCE_WIRE_CM_H

/*
 * Communication Management messages (IBTA 12.6, tables 106-113; SIDR 12.11, tables 119-120): the
 * 232 bytes after the MAD header (droce_mad.h) of a class 0x07 MAD. Offsets in the comments are
 * from the start of that data, as in the IBTA tables; add 24 for the offset in the MAD.
 *
 * Sub-byte fields are written most-significant first, as the IBTA's Byte[Bit] notation numbers
 * them from the top: "QPN(24) RespRes(8)" in a 32-bit word is QPN in bits 31..8. Note this is
 * the opposite corner from the BTH's DestQP, which is the low 24 bits of its word.
 *
 * RoCE (kernel cm.c cm_format_req, cma.c cma_resolve_iboe_route): the primary hop limit is the
 * IP route's (64, the default TTL, for a plain on-link peer), so the kernel fills the REQ as for
 * a routed IB path: SubnetLocal 0 and both LIDs 0xFFFF (permissive), since a RoCE path has no LID
 * (with a hop limit <= 1 it would send LIDs 0 and SubnetLocal 1). A receiving ib_cm that sees
 * SubnetLocal 0 replaces permissive LIDs and the SL with what the work completion saw
 * (cm_process_routed_req). GIDs are the RoCE GIDs (::ffff:a.b.c.d for IPv4), P_Key 0xFFFF,
 * traffic class the ToS, local Q_Key 0 for RC. Alternate path fields are all zero (no LAP).
 */
#include "../droce_byteorder.h"

/* A path in a REQ (44 bytes, primary at data offset 52, alternate at 96). */
struct droce_cm_path {
	droce_be16_t local_lid;	 /* +0 */
	droce_be16_t remote_lid; /* +2 */
	uint8_t local_gid[16];	 /* +4 */
	uint8_t remote_gid[16];	 /* +20 */
	droce_be32_t fl_rate;	 /* +36: FlowLabel(20) resv(6) PacketRate(6) */
	uint8_t traffic_class;	 /* +40 */
	uint8_t hop_limit;	 /* +41 */
	uint8_t sl_subnet;	 /* +42: SL(4) SubnetLocal(1) resv(3) */
	uint8_t ack_timeout;	 /* +43: LocalACKTimeout(5) resv(3);
					 *      alternate: LocalACKTimeout(5) SAP(1) resv(2) */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_path) == 44, "CM path is 44 bytes");

#define DROCE_CM_FL_SHIFT	   12
#define DROCE_CM_FL_MASK	   0xFFFFFu
#define DROCE_CM_RATE_MASK	   0x3Fu
#define DROCE_CM_SL_SHIFT	   4
#define DROCE_CM_SL_MASK	   0x0Fu
#define DROCE_CM_SUBNET_LOCAL	   0x08u
#define DROCE_CM_ACK_TIMEOUT_SHIFT 3
#define DROCE_CM_ACK_TIMEOUT_MASK  0x1Fu
#define DROCE_CM_SAP_SUPPORTED	   0x04u /* alternate path's byte 139 */

/* REQ (table 106). */
struct droce_cm_req {
	droce_be32_t local_comm_id;	/* 0 */
	droce_be32_t resv4;		/* 4 */
	droce_be64_t service_id;	/* 8 */
	droce_be64_t local_ca_guid;	/* 16 */
	droce_be32_t resv24;		/* 24 */
	droce_be32_t local_qkey;	/* 28 */
	droce_be32_t qpn_rres;		/* 32: LocalQPN(24) ResponderResources(8) */
	droce_be32_t eecn_idepth;	/* 36: LocalEECN(24) InitiatorDepth(8) */
	droce_be32_t reecn_rcmt;	/* 40: RemoteEECN(24) RemoteCMResponseTimeout(5)
					 *     TransportServiceType(2) EndToEndFlowControl(1) */
	droce_be32_t psn_lcmt;		/* 44: StartingPSN(24) LocalCMResponseTimeout(5)
					 *     RetryCount(3) */
	droce_be16_t pkey;		/* 48 */
	uint8_t mtu_rnr;		/* 50: PathMTU(4) RDCExists(1) RNRRetryCount(3) */
	uint8_t retries_srq;		/* 51: MaxCMRetries(4) SRQ(1) ExtendedTransportType(3) */
	struct droce_cm_path primary;	/* 52 */
	struct droce_cm_path alternate; /* 96 */
	uint8_t private_data[92];	/* 140 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_req) == 232, "CM REQ is 232 bytes");

/* The 24-bit field on top of a word, and the byte below it. */
#define DROCE_CM_24_SHIFT  8
#define DROCE_CM_24_MASK   0xFFFFFFu
#define DROCE_CM_LOW8_MASK 0xFFu
/* Low byte of reecn_rcmt / psn_lcmt: a 5-bit timeout on top. */
#define DROCE_CM_TIMEOUT_SHIFT	 3
#define DROCE_CM_TIMEOUT_MASK	 0x1Fu
#define DROCE_CM_TRANSPORT_SHIFT 1
#define DROCE_CM_TRANSPORT_MASK	 0x03u
#define DROCE_CM_REQ_E2E	 0x01u
#define DROCE_CM_RETRY_MASK	 0x07u
/* mtu_rnr, retries_srq */
#define DROCE_CM_MTU_SHIFT	    4
#define DROCE_CM_MTU_MASK	    0x0Fu
#define DROCE_CM_RDC_EXISTS	    0x08u
#define DROCE_CM_REQ_RNR_MASK	    0x07u
#define DROCE_CM_MAX_RETRIES_SHIFT  4
#define DROCE_CM_MAX_RETRIES_MASK   0x0Fu
#define DROCE_CM_REQ_SRQ	    0x08u
#define DROCE_CM_EXT_TRANSPORT_MASK 0x07u

/* TransportServiceType (REQ byte 43). */
#define DROCE_CM_TRANSPORT_RC  0
#define DROCE_CM_TRANSPORT_UC  1
#define DROCE_CM_TRANSPORT_RD  2
#define DROCE_CM_TRANSPORT_EXT 3 /* see ExtendedTransportType (XRC: 1) */

/* MRA (table 107). */
struct droce_cm_mra {
	droce_be32_t local_comm_id;  /* 0 */
	droce_be32_t remote_comm_id; /* 4 */
	uint8_t msg_mraed;	     /* 8: MessageMRAed(2) resv(6) */
	uint8_t service_timeout;     /* 9: ServiceTimeout(5) resv(3) */
	uint8_t private_data[222];   /* 10 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_mra) == 232, "CM MRA is 232 bytes");

/* MessageMRAed / MessageRejected: the top two bits of data byte 8. */
#define DROCE_CM_MSG_SHIFT	       6
#define DROCE_CM_MSG_MASK	       0x03u
#define DROCE_CM_MSG_REQ	       0
#define DROCE_CM_MSG_REP	       1
#define DROCE_CM_MSG_OTHER	       2
#define DROCE_CM_SERVICE_TIMEOUT_SHIFT 3
#define DROCE_CM_SERVICE_TIMEOUT_MASK  0x1Fu

/* REJ (table 108). */
struct droce_cm_rej {
	droce_be32_t local_comm_id;  /* 0 */
	droce_be32_t remote_comm_id; /* 4 */
	uint8_t msg_rejected;	     /* 8: MessageRejected(2) resv(6) */
	uint8_t ari_len;	     /* 9: RejectedInfoLength(7) resv(1) */
	droce_be16_t reason;	     /* 10 */
	uint8_t ari[72];	     /* 12: AdditionalRejectedInformation */
	uint8_t private_data[148];   /* 84 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_rej) == 232, "CM REJ is 232 bytes");

#define DROCE_CM_ARI_LEN_SHIFT 1
#define DROCE_CM_ARI_LEN_MASK  0x7Fu
#define DROCE_CM_ARI_SIZE      72

/* REJ reasons (IBTA 12.6, REJ; the same numbers as the kernel's enum ib_cm_rej_reason). */
#define DROCE_CM_REJ_NO_QP		     1
#define DROCE_CM_REJ_NO_RESOURCES	     3
#define DROCE_CM_REJ_TIMEOUT		     4
#define DROCE_CM_REJ_UNSUPPORTED	     5
#define DROCE_CM_REJ_INVALID_COMM_ID	     6
#define DROCE_CM_REJ_INVALID_COMM_INSTANCE   7
#define DROCE_CM_REJ_INVALID_SERVICE_ID	     8
#define DROCE_CM_REJ_INVALID_TRANSPORT_TYPE  9
#define DROCE_CM_REJ_STALE_CONN		     10
#define DROCE_CM_REJ_INVALID_GID	     12
#define DROCE_CM_REJ_INVALID_MTU	     26
#define DROCE_CM_REJ_INSUFFICIENT_RESP_RES   27
#define DROCE_CM_REJ_CONSUMER_DEFINED	     28
#define DROCE_CM_REJ_INVALID_RNR_RETRY	     29
#define DROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID 30
#define DROCE_CM_REJ_INVALID_CLASS_VERSION   31

/* REP (table 110). */
struct droce_cm_rep {
	droce_be32_t local_comm_id;  /* 0 */
	droce_be32_t remote_comm_id; /* 4 */
	droce_be32_t local_qkey;     /* 8 */
	droce_be32_t qpn;	     /* 12: LocalQPN(24) resv(8) */
	droce_be32_t eecn;	     /* 16: LocalEEContextNumber(24) resv(8) */
	droce_be32_t psn;	     /* 20: StartingPSN(24) resv(8) */
	uint8_t responder_resources; /* 24 */
	uint8_t initiator_depth;     /* 25 */
	uint8_t ackd_fo_e2e;	     /* 26: TargetACKDelay(5) FailoverAccepted(2)
					 *     EndToEndFlowControl(1) */
	uint8_t rnr_srq;	     /* 27: RNRRetryCount(3) SRQ(1) resv(4) */
	droce_be64_t local_ca_guid;  /* 28 */
	uint8_t private_data[196];   /* 36 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_rep) == 232, "CM REP is 232 bytes");

#define DROCE_CM_ACK_DELAY_SHIFT 3
#define DROCE_CM_ACK_DELAY_MASK	 0x1Fu
#define DROCE_CM_FAILOVER_SHIFT	 1
#define DROCE_CM_FAILOVER_MASK	 0x03u
#define DROCE_CM_REP_E2E	 0x01u
#define DROCE_CM_REP_RNR_SHIFT	 5
#define DROCE_CM_REP_RNR_MASK	 0x07u
#define DROCE_CM_REP_SRQ	 0x10u

/* RTU (table 111). */
struct droce_cm_rtu {
	droce_be32_t local_comm_id;  /* 0 */
	droce_be32_t remote_comm_id; /* 4 */
	uint8_t private_data[224];   /* 8 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_rtu) == 232, "CM RTU is 232 bytes");

/* DREQ (table 112). */
struct droce_cm_dreq {
	droce_be32_t local_comm_id;  /* 0 */
	droce_be32_t remote_comm_id; /* 4 */
	droce_be32_t remote_qpn;     /* 8: RemoteQPN/EECN(24) resv(8) */
	uint8_t private_data[220];   /* 12 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_dreq) == 232, "CM DREQ is 232 bytes");

/* DREP (table 113). */
struct droce_cm_drep {
	droce_be32_t local_comm_id;  /* 0 */
	droce_be32_t remote_comm_id; /* 4 */
	uint8_t private_data[224];   /* 8 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_drep) == 232, "CM DREP is 232 bytes");

/*
 * Service ID Resolution (IBTA 12.11): rdma_cm's UD port space (RDMA_PS_UDP) asks for a service's
 * UD QPN and Q_Key with a SIDR_REQ and gets them in a SIDR_REP; no connection, no comm IDs. The
 * SIDR_REP echoes the SIDR_REQ's RequestID (kernel cm.c cm_format_sidr_rep).
 */

/* SIDR_REQ (table 119). */
struct droce_cm_sidr_req {
	droce_be32_t request_id;   /* 0 */
	droce_be16_t pkey;	   /* 4 */
	droce_be16_t resv6;	   /* 6 */
	droce_be64_t service_id;   /* 8 */
	uint8_t private_data[216]; /* 16 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_sidr_req) == 232, "CM SIDR_REQ is 232 bytes");

#define DROCE_CM_SIDR_INFO_SIZE 72

/* SIDR_REP (table 120). */
struct droce_cm_sidr_rep {
	droce_be32_t request_id;   /* 0 */
	uint8_t status;		   /* 4 */
	uint8_t info_len;	   /* 5: AdditionalInformationLength (8 bits; REJ's: 7) */
	droce_be16_t vendor_id_h;  /* 6: VendorID 23..8 */
	droce_be32_t qpn_vendor_l; /* 8: QPN(24) VendorID 7..0(8) */
	droce_be64_t service_id;   /* 12: not 8-byte aligned in the MAD */
	droce_be32_t qkey;	   /* 20 */
	uint8_t info[DROCE_CM_SIDR_INFO_SIZE]; /* 24: AdditionalInformation */
	uint8_t private_data[136];	       /* 96 */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_sidr_rep) == 232, "CM SIDR_REP is 232 bytes");

/* SIDR_REP status (IBTA 12.11; the same numbers as the kernel's enum ib_cm_sidr_status). */
#define DROCE_CM_SIDR_SUCCESS		  0 /* QPN and Q_Key valid */
#define DROCE_CM_SIDR_UNSUPPORTED	  1 /* no such service ID */
#define DROCE_CM_SIDR_REJECT		  2 /* service known, request rejected */
#define DROCE_CM_SIDR_NO_QP		  3
#define DROCE_CM_SIDR_REDIRECT		  4 /* ClassPortInfo in AdditionalInformation */
#define DROCE_CM_SIDR_UNSUPPORTED_VERSION 5 /* the highest ClassVersion in the info */

/*
 * RDMA IP CM Service (IBTA Annex A11): a REQ whose service ID is 0x00000000_01_PP_pppp (port
 * space PP, e.g. 0x06 TCP, and port pppp) starts its 92 private data bytes with this header,
 * the kernel's struct cma_hdr; the consumer's own private data follows (56 bytes).
 */
struct droce_cm_ip_hdr {
	uint8_t version;       /* 0: MajV(4) MinV(4), 0x00 (kernel CMA_VERSION) */
	uint8_t ip_version;    /* 1: IPVer(4) resv(4): 4 or 6 */
	droce_be16_t src_port; /* 2: the active side's own port */
	uint8_t src_addr[16];  /* 4: IPv4 in the last 4 bytes, the 12 before them zero */
	uint8_t dst_addr[16];  /* 20: likewise */
} __attribute__((packed));
_Static_assert(sizeof(struct droce_cm_ip_hdr) == 36, "IP CM header is 36 bytes");

#define DROCE_CM_IP_HDR_VERSION	    0x00
#define DROCE_CM_IP_VERSION_SHIFT   4
#define DROCE_CM_IP_SID_PREFIX	    0x0000000001000000ull
#define DROCE_CM_IP_SID_PREFIX_MASK 0xFFFFFFFFFF000000ull

#endif /* DROCE_WIRE_CM_H */
