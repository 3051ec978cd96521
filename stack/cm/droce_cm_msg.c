/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IB CM MAD codec: struct droce_cm_msg <-> the 256 bytes on QP1. Byte offsets come from the packed
 * wire structs (offsetof), so the layout is written once, in stack/wire/droce_cm.h.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "droce_cm_msg.h"
#include "../wire/droce_cm.h"

_Static_assert(sizeof(((struct droce_cm_msg *)0)->private_data) ==
		       sizeof(((struct droce_cm_rtu *)0)->private_data),
	       "private_data holds the largest (RTU, DREP)");
_Static_assert(sizeof(((struct droce_cm_msg *)0)->ari) == DROCE_CM_ARI_SIZE, "ARI size");
_Static_assert(DROCE_CM_SIDR_INFO_SIZE == DROCE_CM_ARI_SIZE, "SIDR_REP's info goes in ari");

#define PRIV_SIZE(type) sizeof(((struct type *)0)->private_data)

/* Where field f of message type t lies in the MAD. */
#define AT(buf, t, f) ((buf) + DROCE_MAD_HDR_SIZE + offsetof(struct t, f))

/* Does v fit in a field of the given width? */
#define FITS(v, bits) ((uint64_t)(v) < (UINT64_C(1) << (bits)))

size_t
droce_cm_msg_priv_max(uint16_t attr)
{
	switch (attr) {
	case DROCE_CM_ATTR_REQ:
		return PRIV_SIZE(droce_cm_req);
	case DROCE_CM_ATTR_MRA:
		return PRIV_SIZE(droce_cm_mra);
	case DROCE_CM_ATTR_REJ:
		return PRIV_SIZE(droce_cm_rej);
	case DROCE_CM_ATTR_REP:
		return PRIV_SIZE(droce_cm_rep);
	case DROCE_CM_ATTR_RTU:
		return PRIV_SIZE(droce_cm_rtu);
	case DROCE_CM_ATTR_DREQ:
		return PRIV_SIZE(droce_cm_dreq);
	case DROCE_CM_ATTR_DREP:
		return PRIV_SIZE(droce_cm_drep);
	case DROCE_CM_ATTR_SIDR_REQ:
		return PRIV_SIZE(droce_cm_sidr_req);
	case DROCE_CM_ATTR_SIDR_REP:
		return PRIV_SIZE(droce_cm_sidr_rep);
	default:
		return 0;
	}
}

const char *
droce_cm_attr_name(uint16_t attr)
{
	switch (attr) {
	case DROCE_CM_ATTR_REQ:
		return "REQ";
	case DROCE_CM_ATTR_MRA:
		return "MRA";
	case DROCE_CM_ATTR_REJ:
		return "REJ";
	case DROCE_CM_ATTR_REP:
		return "REP";
	case DROCE_CM_ATTR_RTU:
		return "RTU";
	case DROCE_CM_ATTR_DREQ:
		return "DREQ";
	case DROCE_CM_ATTR_DREP:
		return "DREP";
	case DROCE_CM_ATTR_SIDR_REQ:
		return "SIDR_REQ";
	case DROCE_CM_ATTR_SIDR_REP:
		return "SIDR_REP";
	default:
		return "?";
	}
}

/* Every field of m's message fits its wire width (before anything is written). */
static bool
cm_msg_fits(const struct droce_cm_msg *m)
{
	switch (m->attr) {
	case DROCE_CM_ATTR_REQ:
		return FITS(m->local_qpn, 24) && FITS(m->starting_psn, 24) &&
		       FITS(m->remote_cm_response_timeout, 5) &&
		       FITS(m->local_cm_response_timeout, 5) && FITS(m->transport_type, 2) &&
		       FITS(m->retry_count, 3) && FITS(m->rnr_retry_count, 3) &&
		       FITS(m->max_cm_retries, 4) && FITS(m->path_mtu, 4) &&
		       FITS(m->primary_flow_label, 20) && FITS(m->primary_packet_rate, 6) &&
		       FITS(m->primary_sl, 4) && FITS(m->primary_local_ack_timeout, 5);
	case DROCE_CM_ATTR_MRA:
		return FITS(m->msg_rejected, 2) && FITS(m->service_timeout, 5);
	case DROCE_CM_ATTR_REJ:
		/* RejectedInfoLength is 7 bits wide, but the ARI field holds only 72 bytes. */
		return FITS(m->msg_rejected, 2) && m->ari_len <= DROCE_CM_ARI_SIZE;
	case DROCE_CM_ATTR_REP:
		return FITS(m->local_qpn, 24) && FITS(m->starting_psn, 24) &&
		       FITS(m->target_ack_delay, 5) && FITS(m->failover_accepted, 2) &&
		       FITS(m->rnr_retry_count, 3);
	case DROCE_CM_ATTR_DREQ:
		return FITS(m->local_qpn, 24);
	case DROCE_CM_ATTR_SIDR_REP:
		/* AdditionalInformationLength is 8 bits wide, the field 72 bytes. */
		return FITS(m->local_qpn, 24) && m->ari_len <= DROCE_CM_SIDR_INFO_SIZE;
	default:
		return true;
	}
}

static void
build_req(const struct droce_cm_msg *m, uint8_t *b)
{
	const size_t pri = offsetof(struct droce_cm_req, primary);
	uint8_t *p = b + DROCE_MAD_HDR_SIZE + pri;

	droce_put_be32(AT(b, droce_cm_req, local_comm_id), m->local_comm_id);
	droce_put_be64(AT(b, droce_cm_req, service_id), m->service_id);
	droce_put_be64(AT(b, droce_cm_req, local_ca_guid), m->local_ca_guid);
	droce_put_be32(AT(b, droce_cm_req, local_qkey), m->local_qkey);
	droce_put_be32(AT(b, droce_cm_req, qpn_rres),
		       m->local_qpn << DROCE_CM_24_SHIFT | m->responder_resources);
	/* Local EECN 0 (RC/UC): only the initiator depth in the low byte. */
	droce_put_be32(AT(b, droce_cm_req, eecn_idepth), m->initiator_depth);
	droce_put_be32(AT(b, droce_cm_req, reecn_rcmt),
		       (uint32_t)m->remote_cm_response_timeout << DROCE_CM_TIMEOUT_SHIFT |
			       (uint32_t)m->transport_type << DROCE_CM_TRANSPORT_SHIFT |
			       (m->end_to_end_flow_control ? DROCE_CM_REQ_E2E : 0));
	droce_put_be32(AT(b, droce_cm_req, psn_lcmt),
		       m->starting_psn << DROCE_CM_24_SHIFT |
			       (uint32_t)m->local_cm_response_timeout << DROCE_CM_TIMEOUT_SHIFT |
			       m->retry_count);
	droce_put_be16(AT(b, droce_cm_req, pkey), m->pkey);
	*AT(b, droce_cm_req, mtu_rnr) =
		(uint8_t)(m->path_mtu << DROCE_CM_MTU_SHIFT | m->rnr_retry_count);
	*AT(b, droce_cm_req, retries_srq) =
		(uint8_t)(m->max_cm_retries << DROCE_CM_MAX_RETRIES_SHIFT |
			  (m->srq ? DROCE_CM_REQ_SRQ : 0));

	droce_put_be16(p + offsetof(struct droce_cm_path, local_lid), m->primary_local_lid);
	droce_put_be16(p + offsetof(struct droce_cm_path, remote_lid), m->primary_remote_lid);
	memcpy(p + offsetof(struct droce_cm_path, local_gid), m->primary_local_gid, 16);
	memcpy(p + offsetof(struct droce_cm_path, remote_gid), m->primary_remote_gid, 16);
	droce_put_be32(p + offsetof(struct droce_cm_path, fl_rate),
		       m->primary_flow_label << DROCE_CM_FL_SHIFT | m->primary_packet_rate);
	p[offsetof(struct droce_cm_path, traffic_class)] = m->primary_traffic_class;
	p[offsetof(struct droce_cm_path, hop_limit)] = m->primary_hop_limit;
	p[offsetof(struct droce_cm_path, sl_subnet)] =
		(uint8_t)(m->primary_sl << DROCE_CM_SL_SHIFT |
			  (m->primary_subnet_local ? DROCE_CM_SUBNET_LOCAL : 0));
	p[offsetof(struct droce_cm_path, ack_timeout)] =
		(uint8_t)(m->primary_local_ack_timeout << DROCE_CM_ACK_TIMEOUT_SHIFT);
	/* The alternate path stays zero: a zero alternate local LID says there is none. */
}

static void
parse_req(const uint8_t *b, struct droce_cm_msg *m)
{
	const uint8_t *p = b + DROCE_MAD_HDR_SIZE + offsetof(struct droce_cm_req, primary);
	uint32_t w;
	uint8_t v;

	m->local_comm_id = droce_get_be32(AT(b, droce_cm_req, local_comm_id));
	m->service_id = droce_get_be64(AT(b, droce_cm_req, service_id));
	m->local_ca_guid = droce_get_be64(AT(b, droce_cm_req, local_ca_guid));
	m->local_qkey = droce_get_be32(AT(b, droce_cm_req, local_qkey));
	w = droce_get_be32(AT(b, droce_cm_req, qpn_rres));
	m->local_qpn = w >> DROCE_CM_24_SHIFT;
	m->responder_resources = (uint8_t)(w & DROCE_CM_LOW8_MASK);
	m->initiator_depth =
		(uint8_t)(droce_get_be32(AT(b, droce_cm_req, eecn_idepth)) & DROCE_CM_LOW8_MASK);
	v = (uint8_t)droce_get_be32(AT(b, droce_cm_req, reecn_rcmt));
	m->remote_cm_response_timeout = (v >> DROCE_CM_TIMEOUT_SHIFT) & DROCE_CM_TIMEOUT_MASK;
	m->transport_type = (v >> DROCE_CM_TRANSPORT_SHIFT) & DROCE_CM_TRANSPORT_MASK;
	m->end_to_end_flow_control = (v & DROCE_CM_REQ_E2E) != 0;
	w = droce_get_be32(AT(b, droce_cm_req, psn_lcmt));
	m->starting_psn = w >> DROCE_CM_24_SHIFT;
	m->local_cm_response_timeout = (w >> DROCE_CM_TIMEOUT_SHIFT) & DROCE_CM_TIMEOUT_MASK;
	m->retry_count = w & DROCE_CM_RETRY_MASK;
	m->pkey = droce_get_be16(AT(b, droce_cm_req, pkey));
	v = *AT(b, droce_cm_req, mtu_rnr);
	m->path_mtu = (v >> DROCE_CM_MTU_SHIFT) & DROCE_CM_MTU_MASK;
	m->rnr_retry_count = v & DROCE_CM_REQ_RNR_MASK;
	v = *AT(b, droce_cm_req, retries_srq);
	m->max_cm_retries = (v >> DROCE_CM_MAX_RETRIES_SHIFT) & DROCE_CM_MAX_RETRIES_MASK;
	m->srq = (v & DROCE_CM_REQ_SRQ) != 0;

	m->primary_local_lid = droce_get_be16(p + offsetof(struct droce_cm_path, local_lid));
	m->primary_remote_lid = droce_get_be16(p + offsetof(struct droce_cm_path, remote_lid));
	memcpy(m->primary_local_gid, p + offsetof(struct droce_cm_path, local_gid), 16);
	memcpy(m->primary_remote_gid, p + offsetof(struct droce_cm_path, remote_gid), 16);
	w = droce_get_be32(p + offsetof(struct droce_cm_path, fl_rate));
	m->primary_flow_label = (w >> DROCE_CM_FL_SHIFT) & DROCE_CM_FL_MASK;
	m->primary_packet_rate = w & DROCE_CM_RATE_MASK;
	m->primary_traffic_class = p[offsetof(struct droce_cm_path, traffic_class)];
	m->primary_hop_limit = p[offsetof(struct droce_cm_path, hop_limit)];
	v = p[offsetof(struct droce_cm_path, sl_subnet)];
	m->primary_sl = (v >> DROCE_CM_SL_SHIFT) & DROCE_CM_SL_MASK;
	m->primary_subnet_local = (v & DROCE_CM_SUBNET_LOCAL) != 0;
	m->primary_local_ack_timeout =
		(p[offsetof(struct droce_cm_path, ack_timeout)] >> DROCE_CM_ACK_TIMEOUT_SHIFT) &
		DROCE_CM_ACK_TIMEOUT_MASK;
}

static void
build_rep(const struct droce_cm_msg *m, uint8_t *b)
{
	droce_put_be32(AT(b, droce_cm_rep, local_comm_id), m->local_comm_id);
	droce_put_be32(AT(b, droce_cm_rep, remote_comm_id), m->remote_comm_id);
	droce_put_be32(AT(b, droce_cm_rep, local_qkey), m->local_qkey);
	droce_put_be32(AT(b, droce_cm_rep, qpn), m->local_qpn << DROCE_CM_24_SHIFT);
	droce_put_be32(AT(b, droce_cm_rep, psn), m->starting_psn << DROCE_CM_24_SHIFT);
	*AT(b, droce_cm_rep, responder_resources) = m->responder_resources;
	*AT(b, droce_cm_rep, initiator_depth) = m->initiator_depth;
	*AT(b, droce_cm_rep, ackd_fo_e2e) =
		(uint8_t)(m->target_ack_delay << DROCE_CM_ACK_DELAY_SHIFT |
			  m->failover_accepted << DROCE_CM_FAILOVER_SHIFT |
			  (m->end_to_end_flow_control ? DROCE_CM_REP_E2E : 0));
	*AT(b, droce_cm_rep, rnr_srq) = (uint8_t)(m->rnr_retry_count << DROCE_CM_REP_RNR_SHIFT |
						  (m->srq ? DROCE_CM_REP_SRQ : 0));
	droce_put_be64(AT(b, droce_cm_rep, local_ca_guid), m->local_ca_guid);
}

static void
parse_rep(const uint8_t *b, struct droce_cm_msg *m)
{
	uint8_t v;

	m->local_comm_id = droce_get_be32(AT(b, droce_cm_rep, local_comm_id));
	m->remote_comm_id = droce_get_be32(AT(b, droce_cm_rep, remote_comm_id));
	m->local_qkey = droce_get_be32(AT(b, droce_cm_rep, local_qkey));
	m->local_qpn = droce_get_be32(AT(b, droce_cm_rep, qpn)) >> DROCE_CM_24_SHIFT;
	m->starting_psn = droce_get_be32(AT(b, droce_cm_rep, psn)) >> DROCE_CM_24_SHIFT;
	m->responder_resources = *AT(b, droce_cm_rep, responder_resources);
	m->initiator_depth = *AT(b, droce_cm_rep, initiator_depth);
	v = *AT(b, droce_cm_rep, ackd_fo_e2e);
	m->target_ack_delay = (v >> DROCE_CM_ACK_DELAY_SHIFT) & DROCE_CM_ACK_DELAY_MASK;
	m->failover_accepted = (v >> DROCE_CM_FAILOVER_SHIFT) & DROCE_CM_FAILOVER_MASK;
	m->end_to_end_flow_control = (v & DROCE_CM_REP_E2E) != 0;
	v = *AT(b, droce_cm_rep, rnr_srq);
	m->rnr_retry_count = (v >> DROCE_CM_REP_RNR_SHIFT) & DROCE_CM_REP_RNR_MASK;
	m->srq = (v & DROCE_CM_REP_SRQ) != 0;
	m->local_ca_guid = droce_get_be64(AT(b, droce_cm_rep, local_ca_guid));
}

static void
build_sidr_rep(const struct droce_cm_msg *m, uint8_t *b)
{
	droce_put_be32(AT(b, droce_cm_sidr_rep, request_id), m->local_comm_id);
	*AT(b, droce_cm_sidr_rep, status) = m->sidr_status;
	*AT(b, droce_cm_sidr_rep, info_len) = m->ari_len;
	/* VendorID (bytes 6-7 and 11) 0: no vendor extensions (the kernel's ECE would go there). */
	droce_put_be32(AT(b, droce_cm_sidr_rep, qpn_vendor_l), m->local_qpn << DROCE_CM_24_SHIFT);
	droce_put_be64(AT(b, droce_cm_sidr_rep, service_id), m->service_id);
	droce_put_be32(AT(b, droce_cm_sidr_rep, qkey), m->local_qkey);
	memcpy(AT(b, droce_cm_sidr_rep, info), m->ari, m->ari_len);
}

static void
parse_sidr_rep(const uint8_t *b, struct droce_cm_msg *m)
{
	m->local_comm_id = droce_get_be32(AT(b, droce_cm_sidr_rep, request_id));
	m->sidr_status = *AT(b, droce_cm_sidr_rep, status);
	/* As sent (up to 255): a peer may claim more than the 72 bytes there are. */
	m->ari_len = *AT(b, droce_cm_sidr_rep, info_len);
	m->local_qpn = droce_get_be32(AT(b, droce_cm_sidr_rep, qpn_vendor_l)) >> DROCE_CM_24_SHIFT;
	m->service_id = droce_get_be64(AT(b, droce_cm_sidr_rep, service_id));
	m->local_qkey = droce_get_be32(AT(b, droce_cm_sidr_rep, qkey));
	memcpy(m->ari, AT(b, droce_cm_sidr_rep, info), DROCE_CM_SIDR_INFO_SIZE);
}

/* The private data's offset in the MAD. */
static size_t
priv_off(uint16_t attr)
{
	switch (attr) {
	case DROCE_CM_ATTR_REQ:
		return offsetof(struct droce_cm_req, private_data);
	case DROCE_CM_ATTR_MRA:
		return offsetof(struct droce_cm_mra, private_data);
	case DROCE_CM_ATTR_REJ:
		return offsetof(struct droce_cm_rej, private_data);
	case DROCE_CM_ATTR_REP:
		return offsetof(struct droce_cm_rep, private_data);
	case DROCE_CM_ATTR_DREQ:
		return offsetof(struct droce_cm_dreq, private_data);
	case DROCE_CM_ATTR_SIDR_REQ:
		return offsetof(struct droce_cm_sidr_req, private_data);
	case DROCE_CM_ATTR_SIDR_REP:
		return offsetof(struct droce_cm_sidr_rep, private_data);
	default: /* RTU, DREP */
		return offsetof(struct droce_cm_rtu, private_data);
	}
}

int
droce_cm_msg_build(const struct droce_cm_msg *m, uint8_t mad[DROCE_MAD_SIZE])
{
	size_t pmax = droce_cm_msg_priv_max(m->attr);

	if (pmax == 0 || m->private_data_len > pmax || !cm_msg_fits(m))
		return -EINVAL;
	memset(mad, 0, DROCE_MAD_SIZE);
	mad[offsetof(struct droce_mad_hdr, base_version)] = DROCE_MAD_BASE_VERSION;
	mad[offsetof(struct droce_mad_hdr, mgmt_class)] = DROCE_MAD_CLASS_CM;
	mad[offsetof(struct droce_mad_hdr, class_version)] = DROCE_MAD_CLASS_VERSION_CM;
	mad[offsetof(struct droce_mad_hdr, method)] = DROCE_MAD_METHOD_SEND;
	droce_put_be64(mad + offsetof(struct droce_mad_hdr, tid), m->tid);
	droce_put_be16(mad + offsetof(struct droce_mad_hdr, attr_id), m->attr);

	switch (m->attr) {
	case DROCE_CM_ATTR_REQ:
		build_req(m, mad);
		break;
	case DROCE_CM_ATTR_MRA:
		droce_put_be32(AT(mad, droce_cm_mra, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_mra, remote_comm_id), m->remote_comm_id);
		*AT(mad, droce_cm_mra, msg_mraed) =
			(uint8_t)(m->msg_rejected << DROCE_CM_MSG_SHIFT);
		*AT(mad, droce_cm_mra, service_timeout) =
			(uint8_t)(m->service_timeout << DROCE_CM_SERVICE_TIMEOUT_SHIFT);
		break;
	case DROCE_CM_ATTR_REJ:
		droce_put_be32(AT(mad, droce_cm_rej, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_rej, remote_comm_id), m->remote_comm_id);
		*AT(mad, droce_cm_rej, msg_rejected) =
			(uint8_t)(m->msg_rejected << DROCE_CM_MSG_SHIFT);
		*AT(mad, droce_cm_rej, ari_len) = (uint8_t)(m->ari_len << DROCE_CM_ARI_LEN_SHIFT);
		droce_put_be16(AT(mad, droce_cm_rej, reason), m->reason);
		memcpy(AT(mad, droce_cm_rej, ari), m->ari, m->ari_len);
		break;
	case DROCE_CM_ATTR_REP:
		build_rep(m, mad);
		break;
	case DROCE_CM_ATTR_DREQ:
		droce_put_be32(AT(mad, droce_cm_dreq, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_dreq, remote_comm_id), m->remote_comm_id);
		droce_put_be32(AT(mad, droce_cm_dreq, remote_qpn),
			       m->local_qpn << DROCE_CM_24_SHIFT);
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		droce_put_be32(AT(mad, droce_cm_sidr_req, request_id), m->local_comm_id);
		droce_put_be16(AT(mad, droce_cm_sidr_req, pkey), m->pkey);
		droce_put_be64(AT(mad, droce_cm_sidr_req, service_id), m->service_id);
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		build_sidr_rep(m, mad);
		break;
	default: /* RTU, DREP: the two comm IDs */
		droce_put_be32(AT(mad, droce_cm_rtu, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_rtu, remote_comm_id), m->remote_comm_id);
		break;
	}
	memcpy(mad + DROCE_MAD_HDR_SIZE + priv_off(m->attr), m->private_data, m->private_data_len);
	return 0;
}

int
droce_cm_msg_parse(const uint8_t *mad, size_t len, struct droce_cm_msg *m)
{
	uint16_t attr;

	if (mad == NULL || len < DROCE_MAD_SIZE)
		return -EINVAL;
	/* IBTA 13.4.2: BaseVersion 1 is the only one defined for IB MADs (OPA's is 0x80). */
	if (mad[offsetof(struct droce_mad_hdr, base_version)] != DROCE_MAD_BASE_VERSION)
		return -EINVAL;
	if (mad[offsetof(struct droce_mad_hdr, mgmt_class)] != DROCE_MAD_CLASS_CM)
		return -EINVAL;
	/* IBTA 12.6: CM class version 2; the kernel's MAD layer drops other versions for ib_cm. */
	if (mad[offsetof(struct droce_mad_hdr, class_version)] != DROCE_MAD_CLASS_VERSION_CM)
		return -EINVAL;
	/* IBTA 12.6: every CM message is a Send (no R bit: CM has no response MADs). */
	if (mad[offsetof(struct droce_mad_hdr, method)] != DROCE_MAD_METHOD_SEND)
		return -EINVAL;
	attr = droce_get_be16(mad + offsetof(struct droce_mad_hdr, attr_id));
	if (droce_cm_msg_priv_max(attr) == 0)
		return -EPROTONOSUPPORT;

	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = droce_get_be64(mad + offsetof(struct droce_mad_hdr, tid));
	switch (attr) {
	case DROCE_CM_ATTR_REQ:
		parse_req(mad, m);
		break;
	case DROCE_CM_ATTR_MRA:
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_mra, local_comm_id));
		m->remote_comm_id = droce_get_be32(AT(mad, droce_cm_mra, remote_comm_id));
		m->msg_rejected = (*AT(mad, droce_cm_mra, msg_mraed) >> DROCE_CM_MSG_SHIFT) &
				  DROCE_CM_MSG_MASK;
		m->service_timeout = (*AT(mad, droce_cm_mra, service_timeout) >>
				      DROCE_CM_SERVICE_TIMEOUT_SHIFT) &
				     DROCE_CM_SERVICE_TIMEOUT_MASK;
		break;
	case DROCE_CM_ATTR_REJ:
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_rej, local_comm_id));
		m->remote_comm_id = droce_get_be32(AT(mad, droce_cm_rej, remote_comm_id));
		m->msg_rejected = (*AT(mad, droce_cm_rej, msg_rejected) >> DROCE_CM_MSG_SHIFT) &
				  DROCE_CM_MSG_MASK;
		/* As sent (up to 127): a peer may claim more than the 72 bytes there are. */
		m->ari_len = (*AT(mad, droce_cm_rej, ari_len) >> DROCE_CM_ARI_LEN_SHIFT) &
			     DROCE_CM_ARI_LEN_MASK;
		m->reason = droce_get_be16(AT(mad, droce_cm_rej, reason));
		memcpy(m->ari, AT(mad, droce_cm_rej, ari), DROCE_CM_ARI_SIZE);
		break;
	case DROCE_CM_ATTR_REP:
		parse_rep(mad, m);
		break;
	case DROCE_CM_ATTR_DREQ:
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_dreq, local_comm_id));
		m->remote_comm_id = droce_get_be32(AT(mad, droce_cm_dreq, remote_comm_id));
		m->local_qpn =
			droce_get_be32(AT(mad, droce_cm_dreq, remote_qpn)) >> DROCE_CM_24_SHIFT;
		break;
	case DROCE_CM_ATTR_SIDR_REQ:
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_sidr_req, request_id));
		m->pkey = droce_get_be16(AT(mad, droce_cm_sidr_req, pkey));
		m->service_id = droce_get_be64(AT(mad, droce_cm_sidr_req, service_id));
		break;
	case DROCE_CM_ATTR_SIDR_REP:
		parse_sidr_rep(mad, m);
		break;
	default: /* RTU, DREP */
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_rtu, local_comm_id));
		m->remote_comm_id = droce_get_be32(AT(mad, droce_cm_rtu, remote_comm_id));
		break;
	}
	m->private_data_len = (uint8_t)droce_cm_msg_priv_max(attr);
	memcpy(m->private_data, mad + DROCE_MAD_HDR_SIZE + priv_off(attr), m->private_data_len);
	return 0;
}
