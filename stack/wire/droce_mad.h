/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_MAD_H
#define DROCE_WIRE_MAD_H

/*
 * Management Datagram (IBTA 13.4): a 24-byte common header, then 232 bytes of class data. On
 * RoCEv2 a MAD travels as the whole payload of a UD SEND_ONLY to QP1 (the GSI), no GRH/LRH of
 * its own: Ether / IP / UDP 4791 / BTH / DETH / MAD / ICRC.
 */
#include "../droce_byteorder.h"

/* Common MAD header (IBTA 13.4.2). */
struct droce_mad_hdr {
	uint8_t base_version; /* 1 */
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method; /* R(1) Method(7): R set on responses */
	droce_be16_t status;
	droce_be16_t class_specific;
	droce_be64_t tid; /* TransactionID: the requester's, echoed in responses */
	droce_be16_t attr_id;
	droce_be16_t resv;
	droce_be32_t attr_mod;
} __attribute__((packed));
_Static_assert(sizeof(struct droce_mad_hdr) == 24, "MAD header is 24 bytes");

#define DROCE_MAD_SIZE	    256
#define DROCE_MAD_HDR_SIZE  24
#define DROCE_MAD_DATA_SIZE (DROCE_MAD_SIZE - DROCE_MAD_HDR_SIZE) /* 232 */

struct droce_mad {
	struct droce_mad_hdr hdr;
	uint8_t data[DROCE_MAD_DATA_SIZE];
} __attribute__((packed));
_Static_assert(sizeof(struct droce_mad) == DROCE_MAD_SIZE, "a MAD is 256 bytes");

#define DROCE_MAD_BASE_VERSION 1
#define DROCE_MAD_METHOD_MASK  0x7F
#define DROCE_MAD_METHOD_RESP  0x80 /* the R bit */
#define DROCE_MAD_METHOD_SEND  0x03 /* the only method CM uses (IBTA 12.6) */

/* Communication Management class (IBTA 12.6); class version 2 since IBTA 1.2 (kernel ib_cm too). */
#define DROCE_MAD_CLASS_CM	   0x07
#define DROCE_MAD_CLASS_VERSION_CM 2

/* CM attribute IDs (IBTA 12.6; LAP 0x0019 and APR 0x001A are not implemented). */
#define DROCE_CM_ATTR_CLASS_PORT_INFO 0x0001
#define DROCE_CM_ATTR_REQ	      0x0010
#define DROCE_CM_ATTR_MRA	      0x0011
#define DROCE_CM_ATTR_REJ	      0x0012
#define DROCE_CM_ATTR_REP	      0x0013
#define DROCE_CM_ATTR_RTU	      0x0014
#define DROCE_CM_ATTR_DREQ	      0x0015
#define DROCE_CM_ATTR_DREP	      0x0016
#define DROCE_CM_ATTR_SIDR_REQ	      0x0017
#define DROCE_CM_ATTR_SIDR_REP	      0x0018
#define DROCE_CM_ATTR_LAP	      0x0019
#define DROCE_CM_ATTR_APR	      0x001A

/* MADs travel between GSIs: QP1 with the well-known Q_Key, DROCE_QPN_GSI and DROCE_QKEY_GSI
 * (droce_verbs.h, where the engine creates its GSI). */

#endif /* DROCE_WIRE_MAD_H */
