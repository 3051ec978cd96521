/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IB CM MAD codec (stack/cm/droce_cm_msg.c): round trips at the widest values, byte offsets
 * against the IBTA 12.6 tables (106-113) and 12.11's SIDR tables (119-120; data offset + 24 for
 * the MAD header), refusals, and rdma_cm's cma_hdr and service ID.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "../../verbs-shim/rdmacm/cma_hdr.h"
#include "cm/droce_cm_msg.h"
#include "wire/droce_cm.h"
#include "wire/droce_mad.h"
#include "droce_test.h"

static const uint16_t all_attrs[] = { DROCE_CM_ATTR_REQ,     DROCE_CM_ATTR_MRA,
				      DROCE_CM_ATTR_REJ,     DROCE_CM_ATTR_REP,
				      DROCE_CM_ATTR_RTU,     DROCE_CM_ATTR_DREQ,
				      DROCE_CM_ATTR_DREP,    DROCE_CM_ATTR_SIDR_REQ,
				      DROCE_CM_ATTR_SIDR_REP };

/* REQ and the SIDR messages carry no remote comm ID. */
static bool
has_remote_id(uint16_t attr)
{
	return attr != DROCE_CM_ATTR_REQ && attr != DROCE_CM_ATTR_SIDR_REQ &&
	       attr != DROCE_CM_ATTR_SIDR_REP;
}

/* Private data of every attribute's full size, a byte pattern that shows misplacement. */
static void
fill_priv(struct droce_cm_msg *m, uint8_t seed)
{
	size_t i;

	m->private_data_len = (uint8_t)droce_cm_msg_priv_max(m->attr);
	for (i = 0; i < m->private_data_len; i++)
		m->private_data[i] = (uint8_t)(seed + i * 7);
}

/* Every field at the widest value it can hold (all ones). */
static void
msg_max(struct droce_cm_msg *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = UINT64_MAX;
	m->local_comm_id = UINT32_MAX;
	m->remote_comm_id = has_remote_id(attr) ? UINT32_MAX : 0;
	switch (attr) {
	case DROCE_CM_ATTR_REQ:
		m->service_id = UINT64_MAX;
		m->local_ca_guid = UINT64_MAX;
		m->local_qkey = UINT32_MAX;
		m->local_qpn = 0xFFFFFF;
		m->starting_psn = 0xFFFFFF;
		m->responder_resources = 0xFF;
		m->initiator_depth = 0xFF;
		m->remote_cm_response_timeout = 0x1F;
		m->local_cm_response_timeout = 0x1F;
		m->transport_type = 3;
		m->end_to_end_flow_control = true;
		m->retry_count = 7;
		m->rnr_retry_count = 7;
		m->max_cm_retries = 0xF;
		m->path_mtu = 0xF;
		m->srq = true;
		m->pkey = 0xFFFF;
		m->primary_local_lid = 0xFFFF;
		m->primary_remote_lid = 0xFFFF;
		memset(m->primary_local_gid, 0xFF, 16);
		memset(m->primary_remote_gid, 0xFF, 16);
		m->primary_flow_label = 0xFFFFF;
		m->primary_packet_rate = 0x3F;
		m->primary_traffic_class = 0xFF;
		m->primary_hop_limit = 0xFF;
		m->primary_sl = 0xF;
		m->primary_subnet_local = true;
		m->primary_local_ack_timeout = 0x1F;
		break;
	case DROCE_CM_ATTR_MRA:
		m->msg_rejected = 3;
		m->service_timeout = 0x1F;
		break;
	case DROCE_CM_ATTR_REJ:
		m->msg_rejected = 3;
		m->reason = 0xFFFF;
		m->ari_len = 72;
		memset(m->ari, 0xFF, sizeof(m->ari));
		break;
	case DROCE_CM_ATTR_REP:
		m->local_qkey = UINT32_MAX;
		m->local_qpn = 0xFFFFFF;
		m->starting_psn = 0xFFFFFF;
		m->responder_resources = 0xFF;
		m->initiator_depth = 0xFF;
		m->target_ack_delay = 0x1F;
		m->failover_accepted = 3;
		m->end_to_end_flow_control = true;
		m->rnr_retry_count = 7;
		m->srq = true;
		m->local_ca_guid = UINT64_MAX;
		break;
	case DROCE_CM_ATTR_DREQ:
		m->local_qpn = 0xFFFFFF;
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		m->pkey = 0xFFFF;
		m->service_id = UINT64_MAX;
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		m->sidr_status = 0xFF;
		m->ari_len = 72;
		memset(m->ari, 0xFF, sizeof(m->ari));
		m->local_qpn = 0xFFFFFF;
		m->service_id = UINT64_MAX;
		m->local_qkey = UINT32_MAX;
		break;
	default:
		break;
	}
	m->private_data_len = (uint8_t)droce_cm_msg_priv_max(attr);
	memset(m->private_data, 0xFF, m->private_data_len);
}

/* Distinct, recognisable values (the ones the offset tests look for). */
static void
msg_pattern(struct droce_cm_msg *m, uint16_t attr)
{
	static const uint8_t lgid[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 168, 1, 2
	};
	static const uint8_t rgid[16] = {
		0xFE, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14
	};

	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = 0x0102030405060708ull;
	m->local_comm_id = 0x11223344;
	m->remote_comm_id = has_remote_id(attr) ? 0x55667788 : 0;
	switch (attr) {
	case DROCE_CM_ATTR_REQ:
		m->service_id = 0x0000000001061D2Full;
		m->local_ca_guid = 0xA1A2A3A4A5A6A7A8ull;
		m->local_qkey = 0xB1B2B3B4;
		m->local_qpn = 0xABCDEF;
		m->responder_resources = 0x12;
		m->initiator_depth = 0x34;
		m->remote_cm_response_timeout = 0x1F;
		m->transport_type = 1;
		m->end_to_end_flow_control = true;
		m->starting_psn = 0x123456;
		m->local_cm_response_timeout = 0x15;
		m->retry_count = 5;
		m->pkey = 0xFFFF;
		m->path_mtu = 5;
		m->rnr_retry_count = 6;
		m->max_cm_retries = 0xF;
		m->srq = true;
		m->primary_local_lid = 0xFFFF;
		m->primary_remote_lid = 0xFFFE;
		memcpy(m->primary_local_gid, lgid, 16);
		memcpy(m->primary_remote_gid, rgid, 16);
		m->primary_flow_label = 0xABCDE;
		m->primary_packet_rate = 0x2A;
		m->primary_traffic_class = 0x68;
		m->primary_hop_limit = 64;
		m->primary_sl = 0xA;
		m->primary_subnet_local = true;
		m->primary_local_ack_timeout = 0x13;
		break;
	case DROCE_CM_ATTR_MRA:
		m->msg_rejected = 1;
		m->service_timeout = 0x1F;
		break;
	case DROCE_CM_ATTR_REJ:
		m->msg_rejected = 2;
		m->ari_len = 72;
		m->reason = DROCE_CM_REJ_CONSUMER_DEFINED;
		m->ari[0] = 0xC1;
		m->ari[71] = 0xC2;
		break;
	case DROCE_CM_ATTR_REP:
		m->local_qkey = 0xB1B2B3B4;
		m->local_qpn = 0xABCDEF;
		m->starting_psn = 0x123456;
		m->responder_resources = 0x12;
		m->initiator_depth = 0x34;
		m->target_ack_delay = 0x11;
		m->failover_accepted = 2;
		m->end_to_end_flow_control = true;
		m->rnr_retry_count = 5;
		m->srq = true;
		m->local_ca_guid = 0xA1A2A3A4A5A6A7A8ull;
		break;
	case DROCE_CM_ATTR_DREQ:
		m->local_qpn = 0x123456;
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		m->pkey = 0x8A5B;
		m->service_id = 0x0000000001111D2Full; /* RDMA_PS_UDP, port 7471 */
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		m->sidr_status = DROCE_CM_SIDR_REDIRECT;
		m->ari_len = 72;
		m->ari[0] = 0xC1;
		m->ari[71] = 0xC2;
		m->local_qpn = 0xABCDEF;
		m->service_id = 0xA1A2A3A4A5A6A7A8ull;
		m->local_qkey = 0xB1B2B3B4;
		break;
	default:
		break;
	}
	fill_priv(m, (uint8_t)attr);
}

/* Field by field (not memcmp: padding). */
static void
assert_msg_eq(const struct droce_cm_msg *a, const struct droce_cm_msg *b)
{
	CU_ASSERT_EQUAL(a->attr, b->attr);
	CU_ASSERT_EQUAL(a->tid, b->tid);
	CU_ASSERT_EQUAL(a->local_comm_id, b->local_comm_id);
	CU_ASSERT_EQUAL(a->remote_comm_id, b->remote_comm_id);
	CU_ASSERT_EQUAL(a->service_id, b->service_id);
	CU_ASSERT_EQUAL(a->local_ca_guid, b->local_ca_guid);
	CU_ASSERT_EQUAL(a->local_qkey, b->local_qkey);
	CU_ASSERT_EQUAL(a->local_qpn, b->local_qpn);
	CU_ASSERT_EQUAL(a->starting_psn, b->starting_psn);
	CU_ASSERT_EQUAL(a->responder_resources, b->responder_resources);
	CU_ASSERT_EQUAL(a->initiator_depth, b->initiator_depth);
	CU_ASSERT_EQUAL(a->remote_cm_response_timeout, b->remote_cm_response_timeout);
	CU_ASSERT_EQUAL(a->local_cm_response_timeout, b->local_cm_response_timeout);
	CU_ASSERT_EQUAL(a->transport_type, b->transport_type);
	CU_ASSERT_EQUAL(a->end_to_end_flow_control, b->end_to_end_flow_control);
	CU_ASSERT_EQUAL(a->retry_count, b->retry_count);
	CU_ASSERT_EQUAL(a->rnr_retry_count, b->rnr_retry_count);
	CU_ASSERT_EQUAL(a->max_cm_retries, b->max_cm_retries);
	CU_ASSERT_EQUAL(a->path_mtu, b->path_mtu);
	CU_ASSERT_EQUAL(a->srq, b->srq);
	CU_ASSERT_EQUAL(a->pkey, b->pkey);
	CU_ASSERT_EQUAL(a->primary_local_lid, b->primary_local_lid);
	CU_ASSERT_EQUAL(a->primary_remote_lid, b->primary_remote_lid);
	CU_ASSERT_EQUAL(memcmp(a->primary_local_gid, b->primary_local_gid, 16), 0);
	CU_ASSERT_EQUAL(memcmp(a->primary_remote_gid, b->primary_remote_gid, 16), 0);
	CU_ASSERT_EQUAL(a->primary_flow_label, b->primary_flow_label);
	CU_ASSERT_EQUAL(a->primary_packet_rate, b->primary_packet_rate);
	CU_ASSERT_EQUAL(a->primary_traffic_class, b->primary_traffic_class);
	CU_ASSERT_EQUAL(a->primary_hop_limit, b->primary_hop_limit);
	CU_ASSERT_EQUAL(a->primary_sl, b->primary_sl);
	CU_ASSERT_EQUAL(a->primary_subnet_local, b->primary_subnet_local);
	CU_ASSERT_EQUAL(a->primary_local_ack_timeout, b->primary_local_ack_timeout);
	CU_ASSERT_EQUAL(a->target_ack_delay, b->target_ack_delay);
	CU_ASSERT_EQUAL(a->failover_accepted, b->failover_accepted);
	CU_ASSERT_EQUAL(a->msg_rejected, b->msg_rejected);
	CU_ASSERT_EQUAL(a->reason, b->reason);
	CU_ASSERT_EQUAL(a->ari_len, b->ari_len);
	CU_ASSERT_EQUAL(memcmp(a->ari, b->ari, sizeof(a->ari)), 0);
	CU_ASSERT_EQUAL(a->service_timeout, b->service_timeout);
	CU_ASSERT_EQUAL(a->sidr_status, b->sidr_status);
	CU_ASSERT_EQUAL(a->private_data_len, b->private_data_len);
	CU_ASSERT_EQUAL(memcmp(a->private_data, b->private_data, a->private_data_len), 0);
}

static void
round_trip(const struct droce_cm_msg *m)
{
	uint8_t mad[DROCE_MAD_SIZE];
	struct droce_cm_msg back;

	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(m, mad), 0);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_parse(mad, sizeof(mad), &back), 0);
	assert_msg_eq(m, &back);
}

static void
test_cm_round_trip_max(void)
{
	struct droce_cm_msg m;
	size_t i;

	for (i = 0; i < sizeof(all_attrs) / sizeof(all_attrs[0]); i++) {
		msg_max(&m, all_attrs[i]);
		round_trip(&m);
	}
}

static void
test_cm_round_trip_pattern(void)
{
	struct droce_cm_msg m;
	size_t i;

	for (i = 0; i < sizeof(all_attrs) / sizeof(all_attrs[0]); i++) {
		msg_pattern(&m, all_attrs[i]);
		round_trip(&m);
	}
}

/* One at a time, each field alone at its maximum, the others zero: no field leaks into another. */
static void
test_cm_round_trip_single_fields(void)
{
	struct droce_cm_msg max, m;
	uint8_t mad[DROCE_MAD_SIZE];
	struct droce_cm_msg back;

	msg_max(&max, DROCE_CM_ATTR_REQ);
#define ONE(field) \
	do { \
		memset(&m, 0, sizeof(m)); \
		m.attr = max.attr; \
		m.field = max.field; \
		CU_ASSERT_EQUAL(droce_cm_msg_build(&m, mad), 0); \
		CU_ASSERT_EQUAL(droce_cm_msg_parse(mad, sizeof(mad), &back), 0); \
		m.private_data_len = back.private_data_len; \
		assert_msg_eq(&m, &back); \
	} while (0)
	ONE(local_qpn);
	ONE(responder_resources);
	ONE(initiator_depth);
	ONE(remote_cm_response_timeout);
	ONE(transport_type);
	ONE(end_to_end_flow_control);
	ONE(starting_psn);
	ONE(local_cm_response_timeout);
	ONE(retry_count);
	ONE(path_mtu);
	ONE(rnr_retry_count);
	ONE(max_cm_retries);
	ONE(srq);
	ONE(primary_flow_label);
	ONE(primary_packet_rate);
	ONE(primary_sl);
	ONE(primary_subnet_local);
	ONE(primary_local_ack_timeout);
	msg_max(&max, DROCE_CM_ATTR_REP);
	ONE(target_ack_delay);
	ONE(failover_accepted);
	ONE(end_to_end_flow_control);
	ONE(rnr_retry_count);
	ONE(srq);
	/* The QPN shares its word with VendorID's low byte; status and info length share one. */
	msg_max(&max, DROCE_CM_ATTR_SIDR_REP);
	ONE(local_comm_id);
	ONE(sidr_status);
	ONE(ari_len);
	ONE(local_qpn);
	ONE(service_id);
	ONE(local_qkey);
	msg_max(&max, DROCE_CM_ATTR_SIDR_REQ);
	ONE(local_comm_id);
	ONE(pkey);
	ONE(service_id);
#undef ONE
}

/* Fields at their maximum never touch reserved bits or the fields the struct does not carry. */
static void
test_cm_reserved_stay_zero(void)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];
	size_t i;

	msg_max(&m, DROCE_CM_ATTR_REQ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	/* MAD header: status, class specific, reserved, attribute modifier. */
	for (i = 4; i < 8; i++)
		CU_ASSERT_EQUAL(mad[i], 0);
	for (i = 18; i < 24; i++)
		CU_ASSERT_EQUAL(mad[i], 0);
	for (i = 24 + 4; i < 24 + 8; i++) /* reserved after the local comm ID */
		CU_ASSERT_EQUAL(mad[i], 0);
	for (i = 24 + 24; i < 24 + 28; i++) /* reserved before the Q_Key */
		CU_ASSERT_EQUAL(mad[i], 0);
	for (i = 24 + 36; i < 24 + 39; i++) /* local EECN */
		CU_ASSERT_EQUAL(mad[i], 0);
	for (i = 24 + 40; i < 24 + 43; i++) /* remote EECN */
		CU_ASSERT_EQUAL(mad[i], 0);
	CU_ASSERT_EQUAL(mad[24 + 43], 0xFF); /* timeout 5 + transport 2 + e2e 1 */
	CU_ASSERT_EQUAL(mad[24 + 47], 0xFF); /* timeout 5 + retry 3 */
	CU_ASSERT_EQUAL(mad[24 + 50], 0xF7); /* RDC Exists (bit 3) clear */
	CU_ASSERT_EQUAL(mad[24 + 51], 0xF8); /* Extended Transport Type clear */
	CU_ASSERT_EQUAL(mad[24 + 88], 0xFF); /* flow label 20, reserved 6, rate 6 */
	CU_ASSERT_EQUAL(mad[24 + 89], 0xFF);
	CU_ASSERT_EQUAL(mad[24 + 90], 0xF0);
	CU_ASSERT_EQUAL(mad[24 + 91], 0x3F);
	CU_ASSERT_EQUAL(mad[24 + 94], 0xF8); /* SL 4, subnet local 1, reserved 3 */
	CU_ASSERT_EQUAL(mad[24 + 95], 0xF8); /* ACK timeout 5, reserved 3 */
	for (i = 24 + 96; i < 24 + 140; i++) /* no alternate path */
		CU_ASSERT_EQUAL(mad[i], 0);

	msg_max(&m, DROCE_CM_ATTR_REP);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 15], 0);   /* after the QPN */
	for (i = 24 + 16; i < 24 + 20; i++) /* local EE context */
		CU_ASSERT_EQUAL(mad[i], 0);
	CU_ASSERT_EQUAL(mad[24 + 23], 0); /* after the PSN */
	CU_ASSERT_EQUAL(mad[24 + 26], 0xFF);
	CU_ASSERT_EQUAL(mad[24 + 27], 0xF0); /* RNR 3, SRQ 1, reserved 4 */

	msg_max(&m, DROCE_CM_ATTR_MRA);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 8], 0xC0);
	CU_ASSERT_EQUAL(mad[24 + 9], 0xF8);

	msg_max(&m, DROCE_CM_ATTR_REJ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 8], 0xC0);
	CU_ASSERT_EQUAL(mad[24 + 9], 72 << 1);

	msg_max(&m, DROCE_CM_ATTR_DREQ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 11], 0);

	msg_max(&m, DROCE_CM_ATTR_SIDR_REQ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 6], 0); /* reserved after the P_Key */
	CU_ASSERT_EQUAL(mad[24 + 7], 0);

	msg_max(&m, DROCE_CM_ATTR_SIDR_REP);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 4], 0xFF); /* status, all 8 bits */
	CU_ASSERT_EQUAL(mad[24 + 5], 72);   /* info length, all 8 bits: no shift as REJ's */
	CU_ASSERT_EQUAL(mad[24 + 6], 0);    /* VendorID 23..8 */
	CU_ASSERT_EQUAL(mad[24 + 7], 0);
	CU_ASSERT_EQUAL(mad[24 + 11], 0); /* VendorID 7..0, below the QPN */
}

static int
bytes_at(const uint8_t *mad, size_t off, const uint8_t *want, size_t n)
{
	return memcmp(mad + off, want, n) == 0;
}

#define AT_OFF(off, ...) \
	do { \
		static const uint8_t w_[] = { __VA_ARGS__ }; \
		CU_ASSERT_TRUE(bytes_at(mad, (off), w_, sizeof(w_))); \
	} while (0)

/* MAD header (IBTA 13.4.2) and REQ offsets (table 106), data offset + 24. */
static void
test_cm_req_offsets(void)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];

	msg_pattern(&m, DROCE_CM_ATTR_REQ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(0, 0x01, 0x07, 0x02, 0x03); /* base version, class CM, class version 2, Send */
	AT_OFF(8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08);  /* TransactionID */
	AT_OFF(16, 0x00, 0x10);					    /* AttributeID REQ */
	AT_OFF(24, 0x11, 0x22, 0x33, 0x44);			    /* 0: Local Communication ID */
	AT_OFF(32, 0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x1D, 0x2F); /* 8: ServiceID */
	AT_OFF(40, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8); /* 16: Local CA GUID */
	AT_OFF(52, 0xB1, 0xB2, 0xB3, 0xB4);			    /* 28: Local Q_Key */
	AT_OFF(56, 0xAB, 0xCD, 0xEF, 0x12); /* 32: Local QPN (24), 35: Responder Resources */
	AT_OFF(63, 0x34);		    /* 39: Initiator Depth */
	AT_OFF(67, 0xFB);		    /* 43: timeout 0x1F, transport 1 (UC), e2e 1 */
	AT_OFF(68, 0x12, 0x34, 0x56, 0xAD); /* 44: Starting PSN, 47: timeout 0x15, retry 5 */
	AT_OFF(72, 0xFF, 0xFF);		    /* 48: P_Key */
	AT_OFF(74, 0x56, 0xF8);		    /* 50: MTU 5, RNR 6; 51: max CM retries 15, SRQ */
	AT_OFF(76, 0xFF, 0xFF, 0xFF, 0xFE); /* 52: primary local LID, 54: remote LID */
	AT_OFF(80 + 10, 0xFF, 0xFF, 192, 168, 1, 2); /* 56: primary local GID */
	AT_OFF(96, 0xFE, 0x80, 1, 2);		     /* 72: primary remote GID */
	AT_OFF(112, 0xAB, 0xCD, 0xE0, 0x2A);	     /* 88: flow label 0xABCDE, 91: rate 0x2A */
	AT_OFF(116, 0x68, 64, 0xA8, 0x98); /* 92: TC, 93: hop, 94: SL/subnet, 95: ACK t/o */
	AT_OFF(164, 0x10, 0x17, 0x1E);	   /* 140: private data (seed 0x10, step 7) */
	CU_ASSERT_EQUAL(mad[255], (uint8_t)(0x10 + 91 * 7));
}

static void
test_cm_other_offsets(void)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];

	/* REP, table 110 */
	msg_pattern(&m, DROCE_CM_ATTR_REP);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(16, 0x00, 0x13);
	AT_OFF(24, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88); /* 0, 4: comm IDs */
	AT_OFF(32, 0xB1, 0xB2, 0xB3, 0xB4);			    /* 8: Local Q_Key */
	AT_OFF(36, 0xAB, 0xCD, 0xEF, 0x00);			    /* 12: Local QPN */
	AT_OFF(44, 0x12, 0x34, 0x56, 0x00);			    /* 20: Starting PSN */
	/* 24: RR, 25: ID, 26: ACK delay 0x11 failover 2 e2e, 27: RNR 5 SRQ */
	AT_OFF(48, 0x12, 0x34, 0x8D, 0xB0);
	AT_OFF(52, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8); /* 28: Local CA GUID */
	AT_OFF(60, 0x13, 0x1A);					    /* 36: private data */

	/* MRA, table 107 */
	msg_pattern(&m, DROCE_CM_ATTR_MRA);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(16, 0x00, 0x11);
	AT_OFF(32, 0x40, 0xF8); /* 8: MRAed REP (1), 9: service timeout 0x1F */
	AT_OFF(34, 0x11, 0x18); /* 10: private data */

	/* REJ, table 108 */
	msg_pattern(&m, DROCE_CM_ATTR_REJ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(16, 0x00, 0x12);
	AT_OFF(32, 0x80, 0x90, 0x00, 0x1C); /* 8: other (2), 9: ARI length 72, 10: reason 28 */
	AT_OFF(36, 0xC1);		    /* 12: ARI */
	AT_OFF(36 + 71, 0xC2);
	AT_OFF(108, 0x12, 0x19); /* 84: private data */

	/* RTU, table 111 */
	msg_pattern(&m, DROCE_CM_ATTR_RTU);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(16, 0x00, 0x14);
	AT_OFF(24, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88);
	AT_OFF(32, 0x14, 0x1B); /* 8: private data */

	/* DREQ, table 112 */
	msg_pattern(&m, DROCE_CM_ATTR_DREQ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(16, 0x00, 0x15);
	AT_OFF(32, 0x12, 0x34, 0x56, 0x00); /* 8: Remote QPN/EECN */
	AT_OFF(36, 0x15, 0x1C);		    /* 12: private data */

	/* DREP, table 113 */
	msg_pattern(&m, DROCE_CM_ATTR_DREP);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(16, 0x00, 0x16);
	AT_OFF(32, 0x16, 0x1D); /* 8: private data */
}

/* SIDR_REQ (table 119) and SIDR_REP (table 120). */
static void
test_cm_sidr_offsets(void)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];
	size_t i;

	msg_pattern(&m, DROCE_CM_ATTR_SIDR_REQ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(0, 0x01, 0x07, 0x02, 0x03);
	AT_OFF(8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08);  /* TransactionID */
	AT_OFF(16, 0x00, 0x17);					    /* AttributeID SIDR_REQ */
	AT_OFF(24, 0x11, 0x22, 0x33, 0x44);			    /* 0: RequestID */
	AT_OFF(28, 0x8A, 0x5B, 0x00, 0x00);			    /* 4: P_Key, 6: reserved */
	AT_OFF(32, 0x00, 0x00, 0x00, 0x00, 0x01, 0x11, 0x1D, 0x2F); /* 8: ServiceID */
	AT_OFF(40, 0x17, 0x1E, 0x25); /* 16: private data (seed 0x17, step 7) */
	CU_ASSERT_EQUAL(mad[255], (uint8_t)(0x17 + 215 * 7));

	msg_pattern(&m, DROCE_CM_ATTR_SIDR_REP);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(0, 0x01, 0x07, 0x02, 0x03);
	AT_OFF(16, 0x00, 0x18);		    /* AttributeID SIDR_REP */
	AT_OFF(24, 0x11, 0x22, 0x33, 0x44); /* 0: RequestID */
	/* 4: Status 4 (redirect), 5: AdditionalInformationLength 72, 6: VendorID 23..8 zero */
	AT_OFF(28, 0x04, 0x48, 0x00, 0x00);
	AT_OFF(32, 0xAB, 0xCD, 0xEF, 0x00); /* 8: QPN (24), 11: VendorID 7..0 zero */
	AT_OFF(36, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8); /* 12: ServiceID */
	AT_OFF(44, 0xB1, 0xB2, 0xB3, 0xB4);			    /* 20: Q_Key */
	AT_OFF(48, 0xC1, 0x00);					    /* 24: AdditionalInformation */
	AT_OFF(48 + 71, 0xC2);
	for (i = 49; i < 48 + 71; i++)
		CU_ASSERT_EQUAL(mad[i], 0);
	AT_OFF(120, 0x18, 0x1F, 0x26); /* 96: private data (seed 0x18, step 7) */
	CU_ASSERT_EQUAL(mad[255], (uint8_t)(0x18 + 135 * 7));
}

/* The wire structs agree with the same offsets. */
static void
test_cm_wire_structs(void)
{
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_req, qpn_rres), 32);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_req, psn_lcmt), 44);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_req, primary), 52);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_req, alternate), 96);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_req, private_data), 140);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_rep, local_ca_guid), 28);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_rep, private_data), 36);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_rej, ari), 12);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_rej, private_data), 84);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_mra, private_data), 10);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_dreq, private_data), 12);
	CU_ASSERT_EQUAL(offsetof(struct droce_mad_hdr, attr_id), 16);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_REQ), 92);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_MRA), 222);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_REJ), 148);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_REP), 196);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_RTU), 224);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_DREQ), 220);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_DREP), 224);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_SIDR_REQ), 216);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_SIDR_REP), 136);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_LAP), 0);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_APR), 0);
	CU_ASSERT_EQUAL(droce_cm_msg_priv_max(DROCE_CM_ATTR_CLASS_PORT_INFO), 0);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_req, pkey), 4);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_req, service_id), 8);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_req, private_data), 16);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, status), 4);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, info_len), 5);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, vendor_id_h), 6);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, qpn_vendor_l), 8);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, service_id), 12);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, qkey), 20);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, info), 24);
	CU_ASSERT_EQUAL(offsetof(struct droce_cm_sidr_rep, private_data), 96);
	CU_ASSERT_STRING_EQUAL(droce_cm_attr_name(DROCE_CM_ATTR_REQ), "REQ");
	CU_ASSERT_STRING_EQUAL(droce_cm_attr_name(DROCE_CM_ATTR_DREP), "DREP");
	CU_ASSERT_STRING_EQUAL(droce_cm_attr_name(DROCE_CM_ATTR_SIDR_REQ), "SIDR_REQ");
	CU_ASSERT_STRING_EQUAL(droce_cm_attr_name(DROCE_CM_ATTR_SIDR_REP), "SIDR_REP");
	CU_ASSERT_STRING_EQUAL(droce_cm_attr_name(DROCE_CM_ATTR_LAP), "?");
	CU_ASSERT_STRING_EQUAL(droce_cm_attr_name(DROCE_CM_ATTR_APR), "?");
}

/* Short private data: copied, the rest of the field zero. */
static void
test_cm_private_short(void)
{
	struct droce_cm_msg m, back;
	uint8_t mad[DROCE_MAD_SIZE];
	size_t i;

	memset(mad, 0xEE, sizeof(mad));
	msg_pattern(&m, DROCE_CM_ATTR_REQ);
	m.private_data_len = 3;
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	AT_OFF(164, 0x10, 0x17, 0x1E, 0x00);
	for (i = 167; i < DROCE_MAD_SIZE; i++)
		CU_ASSERT_EQUAL(mad[i], 0);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_parse(mad, sizeof(mad), &back), 0);
	CU_ASSERT_EQUAL(back.private_data_len, 92);
	CU_ASSERT_EQUAL(back.private_data[2], 0x1E);
	CU_ASSERT_EQUAL(back.private_data[3], 0);

	/* A 0-byte private data and a REJ with no ARI. */
	msg_pattern(&m, DROCE_CM_ATTR_REJ);
	m.private_data_len = 0;
	m.ari_len = 0;
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 9], 0);
	for (i = 36; i < DROCE_MAD_SIZE; i++)
		CU_ASSERT_EQUAL(mad[i], 0);

	/* A SIDR_REP with 3 bytes of info and 2 of private data: the rest zero. */
	memset(mad, 0xEE, sizeof(mad));
	msg_pattern(&m, DROCE_CM_ATTR_SIDR_REP);
	m.ari_len = 3;
	m.ari[1] = 0xD1;
	m.ari[2] = 0xD2;
	m.private_data_len = 2;
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(mad[24 + 5], 3);
	AT_OFF(48, 0xC1, 0xD1, 0xD2);
	for (i = 51; i < 120; i++)
		CU_ASSERT_EQUAL(mad[i], 0); /* ari[71] (0xC2) is past ari_len: not copied */
	AT_OFF(120, 0x18, 0x1F);
	for (i = 122; i < DROCE_MAD_SIZE; i++)
		CU_ASSERT_EQUAL(mad[i], 0);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_parse(mad, sizeof(mad), &back), 0);
	CU_ASSERT_EQUAL(back.ari_len, 3);
	CU_ASSERT_EQUAL(back.ari[2], 0xD2);
	CU_ASSERT_EQUAL(back.ari[71], 0);
	CU_ASSERT_EQUAL(back.private_data_len, 136);
}

static void
test_cm_build_refuses(void)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE], before[DROCE_MAD_SIZE];
	size_t i;

#define REFUSE(attr_, field, val) \
	do { \
		msg_pattern(&m, (attr_)); \
		m.field = (val); \
		memset(mad, 0x5A, sizeof(mad)); \
		memcpy(before, mad, sizeof(mad)); \
		CU_ASSERT_EQUAL(droce_cm_msg_build(&m, mad), -EINVAL); \
		CU_ASSERT_EQUAL(memcmp(mad, before, sizeof(mad)), 0); \
	} while (0)
	REFUSE(DROCE_CM_ATTR_REQ, local_qpn, 0x1000000);
	REFUSE(DROCE_CM_ATTR_REQ, starting_psn, 0x1000000);
	REFUSE(DROCE_CM_ATTR_REQ, remote_cm_response_timeout, 0x20);
	REFUSE(DROCE_CM_ATTR_REQ, local_cm_response_timeout, 0x20);
	REFUSE(DROCE_CM_ATTR_REQ, transport_type, 4);
	REFUSE(DROCE_CM_ATTR_REQ, retry_count, 8);
	REFUSE(DROCE_CM_ATTR_REQ, rnr_retry_count, 8);
	REFUSE(DROCE_CM_ATTR_REQ, max_cm_retries, 0x10);
	REFUSE(DROCE_CM_ATTR_REQ, path_mtu, 0x10);
	REFUSE(DROCE_CM_ATTR_REQ, primary_flow_label, 0x100000);
	REFUSE(DROCE_CM_ATTR_REQ, primary_packet_rate, 0x40);
	REFUSE(DROCE_CM_ATTR_REQ, primary_sl, 0x10);
	REFUSE(DROCE_CM_ATTR_REQ, primary_local_ack_timeout, 0x20);
	REFUSE(DROCE_CM_ATTR_REP, local_qpn, 0x1000000);
	REFUSE(DROCE_CM_ATTR_REP, starting_psn, 0xFFFFFFFF);
	REFUSE(DROCE_CM_ATTR_REP, target_ack_delay, 0x20);
	REFUSE(DROCE_CM_ATTR_REP, failover_accepted, 4);
	REFUSE(DROCE_CM_ATTR_REP, rnr_retry_count, 8);
	REFUSE(DROCE_CM_ATTR_MRA, msg_rejected, 4);
	REFUSE(DROCE_CM_ATTR_MRA, service_timeout, 0x20);
	REFUSE(DROCE_CM_ATTR_REJ, msg_rejected, 4);
	REFUSE(DROCE_CM_ATTR_REJ, ari_len, 73);
	REFUSE(DROCE_CM_ATTR_REJ, ari_len, 0x80);
	REFUSE(DROCE_CM_ATTR_DREQ, local_qpn, 0x1000000);
	REFUSE(DROCE_CM_ATTR_SIDR_REP, local_qpn, 0x1000000);
	REFUSE(DROCE_CM_ATTR_SIDR_REP, ari_len, 73);
	REFUSE(DROCE_CM_ATTR_SIDR_REP, ari_len, 0xFF);
	REFUSE(DROCE_CM_ATTR_REQ, attr, 0x0019); /* LAP */
	REFUSE(DROCE_CM_ATTR_REQ, attr, 0x001A); /* APR */
	REFUSE(DROCE_CM_ATTR_REQ, attr, 0x0001); /* ClassPortInfo */
	REFUSE(DROCE_CM_ATTR_REQ, attr, 0x001B);
	REFUSE(DROCE_CM_ATTR_REQ, attr, 0);
	for (i = 0; i < sizeof(all_attrs) / sizeof(all_attrs[0]); i++)
		REFUSE(all_attrs[i], private_data_len,
		       (uint8_t)(droce_cm_msg_priv_max(all_attrs[i]) + 1));
#undef REFUSE

	/* Fields another message carries are not checked: a REQ-only value in an RTU. */
	msg_pattern(&m, DROCE_CM_ATTR_RTU);
	m.local_qpn = 0xFFFFFFFF;
	m.primary_sl = 0xFF;
	CU_ASSERT_EQUAL(droce_cm_msg_build(&m, mad), 0);
	/* A SIDR_REQ has no QPN, a REQ's 7-bit ARI length is not a SIDR_REP's 8-bit one. */
	msg_pattern(&m, DROCE_CM_ATTR_SIDR_REQ);
	m.local_qpn = 0xFFFFFFFF;
	m.ari_len = 0xFF;
	CU_ASSERT_EQUAL(droce_cm_msg_build(&m, mad), 0);
}

static void
test_cm_parse_refuses(void)
{
	struct droce_cm_msg m, back;
	uint8_t mad[DROCE_MAD_SIZE], bad[DROCE_MAD_SIZE + 8];

	msg_pattern(&m, DROCE_CM_ATTR_REP);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	CU_ASSERT_EQUAL(droce_cm_msg_parse(mad, DROCE_MAD_SIZE - 1, &back), -EINVAL);
	CU_ASSERT_EQUAL(droce_cm_msg_parse(mad, 0, &back), -EINVAL);
	CU_ASSERT_EQUAL(droce_cm_msg_parse(NULL, DROCE_MAD_SIZE, &back), -EINVAL);
	/* Longer is fine: a receive buffer may hold more than the MAD. */
	memcpy(bad, mad, sizeof(mad));
	CU_ASSERT_EQUAL(droce_cm_msg_parse(bad, sizeof(bad), &back), 0);

#define BAD(off, val, want) \
	do { \
		memcpy(bad, mad, sizeof(mad)); \
		bad[off] = (val); \
		CU_ASSERT_EQUAL(droce_cm_msg_parse(bad, DROCE_MAD_SIZE, &back), (want)); \
	} while (0)
	BAD(0, 0x02, -EINVAL); /* base version */
	BAD(0, 0x80, -EINVAL); /* OPA's base version */
	BAD(1, 0x03, -EINVAL); /* class: SA */
	BAD(1, 0x01, -EINVAL); /* class: LID-routed SMP */
	BAD(2, 0x01, -EINVAL); /* class version 1 */
	BAD(2, 0x03, -EINVAL);
	BAD(3, 0x01, -EINVAL);		 /* method Get */
	BAD(3, 0x83, -EINVAL);		 /* R bit on a Send */
	BAD(3, 0x81, -EINVAL);		 /* GetResp */
	BAD(17, 0x17, 0);		 /* SIDR_REQ: parsed (the REP's bytes as one) */
	BAD(17, 0x18, 0);		 /* SIDR_REP */
	BAD(17, 0x19, -EPROTONOSUPPORT); /* LAP */
	BAD(17, 0x1A, -EPROTONOSUPPORT); /* APR */
	BAD(17, 0x01, -EPROTONOSUPPORT); /* ClassPortInfo */
	BAD(16, 0x01, -EPROTONOSUPPORT); /* 0x0113 */
	BAD(17, 0x1B, -EPROTONOSUPPORT);
	BAD(17, 0x00, -EPROTONOSUPPORT);
	/* Status, class specific and attribute modifier are not CM's business. */
	BAD(4, 0xFF, 0);
	BAD(23, 0xFF, 0);
#undef BAD
}

/* A REJ from a peer that claims more ARI than fits: length as sent, 72 bytes copied. */
static void
test_cm_parse_rej_long_ari(void)
{
	struct droce_cm_msg m, back;
	uint8_t mad[DROCE_MAD_SIZE];

	msg_pattern(&m, DROCE_CM_ATTR_REJ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	mad[24 + 9] = 127 << 1 | 1; /* also the reserved bit */
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_parse(mad, sizeof(mad), &back), 0);
	CU_ASSERT_EQUAL(back.ari_len, 127);
	CU_ASSERT_EQUAL(back.ari[71], 0xC2);
}

/* A SIDR_REP claiming up to 255 bytes of info: length as sent, 72 bytes copied; VendorID and
 * reserved bits ignored. */
static void
test_cm_parse_sidr_rep_long_info(void)
{
	struct droce_cm_msg m, back;
	uint8_t mad[DROCE_MAD_SIZE];

	msg_pattern(&m, DROCE_CM_ATTR_SIDR_REP);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	mad[24 + 5] = 0xFF;
	mad[24 + 6] = 0x12; /* a peer's VendorID */
	mad[24 + 7] = 0x34;
	mad[24 + 11] = 0x56;
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_parse(mad, sizeof(mad), &back), 0);
	CU_ASSERT_EQUAL(back.ari_len, 255);
	CU_ASSERT_EQUAL(back.ari[0], 0xC1);
	CU_ASSERT_EQUAL(back.ari[71], 0xC2);
	CU_ASSERT_EQUAL(back.local_qpn, 0xABCDEF);
	CU_ASSERT_EQUAL(back.sidr_status, DROCE_CM_SIDR_REDIRECT);
	CU_ASSERT_EQUAL(back.private_data[0], 0x18);

	msg_pattern(&m, DROCE_CM_ATTR_SIDR_REQ);
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_build(&m, mad), 0);
	mad[24 + 6] = 0xFF; /* reserved */
	mad[24 + 7] = 0xFF;
	CU_ASSERT_EQUAL_FATAL(droce_cm_msg_parse(mad, sizeof(mad), &back), 0);
	CU_ASSERT_EQUAL(back.pkey, 0x8A5B);
	CU_ASSERT_EQUAL(back.service_id, 0x0000000001111D2Full);
}

static void
test_cma_hdr_ipv4(void)
{
	struct sockaddr_in s = { 0 }, d = { 0 };
	struct sockaddr_storage ss, ds;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
	const struct sockaddr_in *d4 = (const struct sockaddr_in *)&ds;
	uint8_t h[CMA_HDR_SIZE];
	size_t i;

	s.sin_family = AF_INET;
	s.sin_port = htons(40001);
	inet_pton(AF_INET, "192.168.1.2", &s.sin_addr);
	d.sin_family = AF_INET;
	d.sin_port = htons(7471);
	inet_pton(AF_INET, "10.0.0.1", &d.sin_addr);
	memset(h, 0xEE, sizeof(h));
	CU_ASSERT_EQUAL_FATAL(cma_hdr_build(h, (struct sockaddr *)&s, (struct sockaddr *)&d), 0);
	CU_ASSERT_EQUAL(h[0], 0x00);	   /* CMA_VERSION */
	CU_ASSERT_EQUAL(h[1], 0x40);	   /* IP version 4, top nibble */
	CU_ASSERT_EQUAL(h[2], 40001 >> 8); /* the source port, big-endian */
	CU_ASSERT_EQUAL(h[3], 40001 & 0xFF);
	for (i = 4; i < 16; i++)
		CU_ASSERT_EQUAL(h[i], 0);
	CU_ASSERT_TRUE(bytes_at(h, 16, (const uint8_t[]){ 192, 168, 1, 2 }, 4));
	for (i = 20; i < 32; i++)
		CU_ASSERT_EQUAL(h[i], 0);
	CU_ASSERT_TRUE(bytes_at(h, 32, (const uint8_t[]){ 10, 0, 0, 1 }, 4));

	memset(&ss, 0xEE, sizeof(ss));
	memset(&ds, 0xEE, sizeof(ds));
	CU_ASSERT_EQUAL_FATAL(cma_hdr_parse(h, &ss, &ds), 0);
	CU_ASSERT_EQUAL(ss.ss_family, AF_INET);
	CU_ASSERT_EQUAL(ds.ss_family, AF_INET);
	CU_ASSERT_EQUAL(s4->sin_addr.s_addr, s.sin_addr.s_addr);
	CU_ASSERT_EQUAL(d4->sin_addr.s_addr, d.sin_addr.s_addr);
	CU_ASSERT_EQUAL(ntohs(s4->sin_port), 40001);
	CU_ASSERT_EQUAL(d4->sin_port, 0);
}

static void
test_cma_hdr_ipv6(void)
{
	struct sockaddr_in6 s = { 0 }, d = { 0 };
	struct sockaddr_storage ss, ds;
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
	const struct sockaddr_in6 *d6 = (const struct sockaddr_in6 *)&ds;
	uint8_t h[CMA_HDR_SIZE];

	s.sin6_family = AF_INET6;
	s.sin6_port = htons(65535);
	inet_pton(AF_INET6, "fd00::1:2", &s.sin6_addr);
	d.sin6_family = AF_INET6;
	d.sin6_port = htons(1);
	inet_pton(AF_INET6, "2001:db8::ffff:1", &d.sin6_addr);
	CU_ASSERT_EQUAL_FATAL(cma_hdr_build(h, (struct sockaddr *)&s, (struct sockaddr *)&d), 0);
	CU_ASSERT_EQUAL(h[0], 0x00);
	CU_ASSERT_EQUAL(h[1], 0x60);
	CU_ASSERT_EQUAL(h[2], 0xFF);
	CU_ASSERT_EQUAL(h[3], 0xFF);
	CU_ASSERT_TRUE(bytes_at(h, 4, s.sin6_addr.s6_addr, 16));
	CU_ASSERT_TRUE(bytes_at(h, 20, d.sin6_addr.s6_addr, 16));

	CU_ASSERT_EQUAL_FATAL(cma_hdr_parse(h, &ss, &ds), 0);
	CU_ASSERT_EQUAL(ss.ss_family, AF_INET6);
	CU_ASSERT_EQUAL(ds.ss_family, AF_INET6);
	CU_ASSERT_EQUAL(memcmp(&s6->sin6_addr, &s.sin6_addr, 16), 0);
	CU_ASSERT_EQUAL(memcmp(&d6->sin6_addr, &d.sin6_addr, 16), 0);
	CU_ASSERT_EQUAL(ntohs(s6->sin6_port), 65535);
	CU_ASSERT_EQUAL(d6->sin6_port, 0);
}

static void
test_cma_hdr_refuses(void)
{
	struct sockaddr_in s4 = { 0 };
	struct sockaddr_in6 s6 = { 0 };
	struct sockaddr_storage un, ss, ds;
	uint8_t h[CMA_HDR_SIZE];

	s4.sin_family = AF_INET;
	s6.sin6_family = AF_INET6;
	memset(&un, 0, sizeof(un));
	un.ss_family = AF_UNIX;
	CU_ASSERT_EQUAL(cma_hdr_build(h, (struct sockaddr *)&s4, (struct sockaddr *)&s6), -EINVAL);
	CU_ASSERT_EQUAL(cma_hdr_build(h, (struct sockaddr *)&s6, (struct sockaddr *)&s4), -EINVAL);
	CU_ASSERT_EQUAL(cma_hdr_build(h, (struct sockaddr *)&un, (struct sockaddr *)&un),
			-EAFNOSUPPORT);
	CU_ASSERT_EQUAL(cma_hdr_build(h, (struct sockaddr *)&s4, (struct sockaddr *)&un),
			-EAFNOSUPPORT);

	CU_ASSERT_EQUAL_FATAL(cma_hdr_build(h, (struct sockaddr *)&s4, (struct sockaddr *)&s4), 0);
	h[0] = 0x01;
	CU_ASSERT_EQUAL(cma_hdr_parse(h, &ss, &ds), -EPROTO);
	h[0] = 0x10;
	CU_ASSERT_EQUAL(cma_hdr_parse(h, &ss, &ds), -EPROTO);
	h[0] = 0x00;
	h[1] = 0x50;
	CU_ASSERT_EQUAL(cma_hdr_parse(h, &ss, &ds), -EAFNOSUPPORT);
	h[1] = 0x00;
	CU_ASSERT_EQUAL(cma_hdr_parse(h, &ss, &ds), -EAFNOSUPPORT);
	h[1] = 0x4F; /* the low nibble is reserved: ignored */
	CU_ASSERT_EQUAL(cma_hdr_parse(h, &ss, &ds), 0);
}

static void
test_cma_service_id(void)
{
	CU_ASSERT_EQUAL(cma_service_id(0x0106, 0), 0x0000000001060000ull);
	CU_ASSERT_EQUAL(cma_service_id(0x0106, 7471), 0x0000000001061D2Full);
	CU_ASSERT_EQUAL(cma_service_id(0x0111, 0xFFFF), 0x000000000111FFFFull); /* UDP */
	CU_ASSERT_EQUAL(cma_service_id(0xFFFF, 0xFFFF), 0x00000000FFFFFFFFull);
	CU_ASSERT_EQUAL(cma_service_id_port(0x0000000001061D2Full), 7471);
	CU_ASSERT_EQUAL(cma_service_id_ps(0x0000000001061D2Full), 0x0106);
	/* In the IP CM range that Wireshark (and Annex A11) recognise. */
	CU_ASSERT_EQUAL(cma_service_id(0x0106, 1) & DROCE_CM_IP_SID_PREFIX_MASK,
			DROCE_CM_IP_SID_PREFIX);
}

DROCE_TEST_MAIN("cm_msg", DROCE_TEST(test_cm_round_trip_max),
		DROCE_TEST(test_cm_round_trip_pattern),
		DROCE_TEST(test_cm_round_trip_single_fields),
		DROCE_TEST(test_cm_reserved_stay_zero), DROCE_TEST(test_cm_req_offsets),
		DROCE_TEST(test_cm_other_offsets), DROCE_TEST(test_cm_sidr_offsets),
		DROCE_TEST(test_cm_wire_structs), DROCE_TEST(test_cm_private_short),
		DROCE_TEST(test_cm_build_refuses), DROCE_TEST(test_cm_parse_refuses),
		DROCE_TEST(test_cm_parse_rej_long_ari),
		DROCE_TEST(test_cm_parse_sidr_rep_long_info), DROCE_TEST(test_cma_hdr_ipv4),
		DROCE_TEST(test_cma_hdr_ipv6), DROCE_TEST(test_cma_hdr_refuses),
		DROCE_TEST(test_cma_service_id))
