/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IB CM MAD codec: struct cm_msg <-> the 256 bytes on QP1. Byte offsets come from the packed
 * wire structs (offsetof), so the layout is written once, in stack/wire/droce_cm.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include "cm_msg.h"
#include "../../stack/wire/droce_cm.h"
#include "../../stack/wire/droce_mad.h"

_Static_assert(CM_MAD_SIZE == DROCE_MAD_SIZE, "one MAD size");
_Static_assert(CM_REQ == DROCE_CM_ATTR_REQ && CM_MRA == DROCE_CM_ATTR_MRA &&
		       CM_REJ == DROCE_CM_ATTR_REJ && CM_REP == DROCE_CM_ATTR_REP &&
		       CM_RTU == DROCE_CM_ATTR_RTU && CM_DREQ == DROCE_CM_ATTR_DREQ &&
		       CM_DREP == DROCE_CM_ATTR_DREP && CM_SIDR_REQ == DROCE_CM_ATTR_SIDR_REQ &&
		       CM_SIDR_REP == DROCE_CM_ATTR_SIDR_REP,
	"one set of attribute IDs");
_Static_assert(sizeof(((struct cm_msg *)0)->private_data) ==
		       sizeof(((struct droce_cm_rtu *)0)->private_data),
	"private_data holds the largest (RTU, DREP)");
_Static_assert(sizeof(((struct cm_msg *)0)->ari) == DROCE_CM_ARI_SIZE, "ARI size");
_Static_assert(DROCE_CM_SIDR_INFO_SIZE == DROCE_CM_ARI_SIZE, "SIDR_REP's info goes in ari");
_Static_assert(CMA_HDR_SIZE == sizeof(struct droce_cm_ip_hdr), "one cma_hdr size");

#define PRIV_SIZE(type) sizeof(((struct type *)0)->private_data)

/* Where field f of message type t lies in the MAD. */
#define AT(buf, t, f) ((buf) + DROCE_MAD_HDR_SIZE + offsetof(struct t, f))

/* Does v fit in a field of the given width? */
#define FITS(v, bits) ((uint64_t)(v) < (UINT64_C(1) << (bits)))

size_t
cm_msg_priv_max(uint16_t attr)
{
	switch (attr) {
	case CM_REQ:
		return PRIV_SIZE(droce_cm_req);
	case CM_MRA:
		return PRIV_SIZE(droce_cm_mra);
	case CM_REJ:
		return PRIV_SIZE(droce_cm_rej);
	case CM_REP:
		return PRIV_SIZE(droce_cm_rep);
	case CM_RTU:
		return PRIV_SIZE(droce_cm_rtu);
	case CM_DREQ:
		return PRIV_SIZE(droce_cm_dreq);
	case CM_DREP:
		return PRIV_SIZE(droce_cm_drep);
	case CM_SIDR_REQ:
		return PRIV_SIZE(droce_cm_sidr_req);
	case CM_SIDR_REP:
		return PRIV_SIZE(droce_cm_sidr_rep);
	default:
		return 0;
	}
}

const char *
cm_attr_name(uint16_t attr)
{
	switch (attr) {
	case CM_REQ:
		return "REQ";
	case CM_MRA:
		return "MRA";
	case CM_REJ:
		return "REJ";
	case CM_REP:
		return "REP";
	case CM_RTU:
		return "RTU";
	case CM_DREQ:
		return "DREQ";
	case CM_DREP:
		return "DREP";
	case CM_SIDR_REQ:
		return "SIDR_REQ";
	case CM_SIDR_REP:
		return "SIDR_REP";
	default:
		return "?";
	}
}

/* Every field of m's message fits its wire width (before anything is written). */
static bool
cm_msg_fits(const struct cm_msg *m)
{
	switch (m->attr) {
	case CM_REQ:
		return FITS(m->local_qpn, 24) && FITS(m->starting_psn, 24) &&
		       FITS(m->remote_cm_response_timeout, 5) &&
		       FITS(m->local_cm_response_timeout, 5) && FITS(m->transport_type, 2) &&
		       FITS(m->retry_count, 3) && FITS(m->rnr_retry_count, 3) &&
		       FITS(m->max_cm_retries, 4) && FITS(m->path_mtu, 4) &&
		       FITS(m->primary_flow_label, 20) && FITS(m->primary_packet_rate, 6) &&
		       FITS(m->primary_sl, 4) && FITS(m->primary_local_ack_timeout, 5);
	case CM_MRA:
		return FITS(m->msg_rejected, 2) && FITS(m->service_timeout, 5);
	case CM_REJ:
		/* RejectedInfoLength is 7 bits wide, but the ARI field holds only 72 bytes. */
		return FITS(m->msg_rejected, 2) && m->ari_len <= DROCE_CM_ARI_SIZE;
	case CM_REP:
		return FITS(m->local_qpn, 24) && FITS(m->starting_psn, 24) &&
		       FITS(m->target_ack_delay, 5) && FITS(m->failover_accepted, 2) &&
		       FITS(m->rnr_retry_count, 3);
	case CM_DREQ:
		return FITS(m->local_qpn, 24);
	case CM_SIDR_REP:
		/* AdditionalInformationLength is 8 bits wide, the field 72 bytes. */
		return FITS(m->local_qpn, 24) && m->ari_len <= DROCE_CM_SIDR_INFO_SIZE;
	default:
		return true;
	}
}

static void
build_req(const struct cm_msg *m, uint8_t *b)
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
parse_req(const uint8_t *b, struct cm_msg *m)
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
build_rep(const struct cm_msg *m, uint8_t *b)
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
	*AT(b, droce_cm_rep, rnr_srq) =
		(uint8_t)(m->rnr_retry_count << DROCE_CM_REP_RNR_SHIFT |
			(m->srq ? DROCE_CM_REP_SRQ : 0));
	droce_put_be64(AT(b, droce_cm_rep, local_ca_guid), m->local_ca_guid);
}

static void
parse_rep(const uint8_t *b, struct cm_msg *m)
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
build_sidr_rep(const struct cm_msg *m, uint8_t *b)
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
parse_sidr_rep(const uint8_t *b, struct cm_msg *m)
{
	m->local_comm_id = droce_get_be32(AT(b, droce_cm_sidr_rep, request_id));
	m->sidr_status = *AT(b, droce_cm_sidr_rep, status);
	/* As sent (up to 255): a peer may claim more than the 72 bytes there are. */
	m->ari_len = *AT(b, droce_cm_sidr_rep, info_len);
	m->local_qpn =
		droce_get_be32(AT(b, droce_cm_sidr_rep, qpn_vendor_l)) >> DROCE_CM_24_SHIFT;
	m->service_id = droce_get_be64(AT(b, droce_cm_sidr_rep, service_id));
	m->local_qkey = droce_get_be32(AT(b, droce_cm_sidr_rep, qkey));
	memcpy(m->ari, AT(b, droce_cm_sidr_rep, info), DROCE_CM_SIDR_INFO_SIZE);
}

/* The private data's offset in the MAD. */
static size_t
priv_off(uint16_t attr)
{
	switch (attr) {
	case CM_REQ:
		return offsetof(struct droce_cm_req, private_data);
	case CM_MRA:
		return offsetof(struct droce_cm_mra, private_data);
	case CM_REJ:
		return offsetof(struct droce_cm_rej, private_data);
	case CM_REP:
		return offsetof(struct droce_cm_rep, private_data);
	case CM_DREQ:
		return offsetof(struct droce_cm_dreq, private_data);
	case CM_SIDR_REQ:
		return offsetof(struct droce_cm_sidr_req, private_data);
	case CM_SIDR_REP:
		return offsetof(struct droce_cm_sidr_rep, private_data);
	default:	/* RTU, DREP */
		return offsetof(struct droce_cm_rtu, private_data);
	}
}

int
cm_msg_build(const struct cm_msg *m, uint8_t mad[CM_MAD_SIZE])
{
	size_t pmax = cm_msg_priv_max(m->attr);

	if (pmax == 0 || m->private_data_len > pmax || !cm_msg_fits(m))
		return -EINVAL;
	memset(mad, 0, CM_MAD_SIZE);
	mad[offsetof(struct droce_mad_hdr, base_version)] = DROCE_MAD_BASE_VERSION;
	mad[offsetof(struct droce_mad_hdr, mgmt_class)] = DROCE_MAD_CLASS_CM;
	mad[offsetof(struct droce_mad_hdr, class_version)] = DROCE_MAD_CLASS_VERSION_CM;
	mad[offsetof(struct droce_mad_hdr, method)] = DROCE_MAD_METHOD_SEND;
	droce_put_be64(mad + offsetof(struct droce_mad_hdr, tid), m->tid);
	droce_put_be16(mad + offsetof(struct droce_mad_hdr, attr_id), m->attr);

	switch (m->attr) {
	case CM_REQ:
		build_req(m, mad);
		break;
	case CM_MRA:
		droce_put_be32(AT(mad, droce_cm_mra, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_mra, remote_comm_id), m->remote_comm_id);
		*AT(mad, droce_cm_mra, msg_mraed) =
			(uint8_t)(m->msg_rejected << DROCE_CM_MSG_SHIFT);
		*AT(mad, droce_cm_mra, service_timeout) =
			(uint8_t)(m->service_timeout << DROCE_CM_SERVICE_TIMEOUT_SHIFT);
		break;
	case CM_REJ:
		droce_put_be32(AT(mad, droce_cm_rej, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_rej, remote_comm_id), m->remote_comm_id);
		*AT(mad, droce_cm_rej, msg_rejected) =
			(uint8_t)(m->msg_rejected << DROCE_CM_MSG_SHIFT);
		*AT(mad, droce_cm_rej, ari_len) = (uint8_t)(m->ari_len << DROCE_CM_ARI_LEN_SHIFT);
		droce_put_be16(AT(mad, droce_cm_rej, reason), m->reason);
		memcpy(AT(mad, droce_cm_rej, ari), m->ari, m->ari_len);
		break;
	case CM_REP:
		build_rep(m, mad);
		break;
	case CM_DREQ:
		droce_put_be32(AT(mad, droce_cm_dreq, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_dreq, remote_comm_id), m->remote_comm_id);
		droce_put_be32(AT(mad, droce_cm_dreq, remote_qpn),
			m->local_qpn << DROCE_CM_24_SHIFT);
		break;
	case CM_SIDR_REQ:
		droce_put_be32(AT(mad, droce_cm_sidr_req, request_id), m->local_comm_id);
		droce_put_be16(AT(mad, droce_cm_sidr_req, pkey), m->pkey);
		droce_put_be64(AT(mad, droce_cm_sidr_req, service_id), m->service_id);
		break;
	case CM_SIDR_REP:
		build_sidr_rep(m, mad);
		break;
	default:	/* RTU, DREP: the two comm IDs */
		droce_put_be32(AT(mad, droce_cm_rtu, local_comm_id), m->local_comm_id);
		droce_put_be32(AT(mad, droce_cm_rtu, remote_comm_id), m->remote_comm_id);
		break;
	}
	memcpy(mad + DROCE_MAD_HDR_SIZE + priv_off(m->attr), m->private_data, m->private_data_len);
	return 0;
}

int
cm_msg_parse(const uint8_t *mad, size_t len, struct cm_msg *m)
{
	uint16_t attr;

	if (mad == NULL || len < CM_MAD_SIZE)
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
	if (cm_msg_priv_max(attr) == 0)
		return -EPROTONOSUPPORT;

	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = droce_get_be64(mad + offsetof(struct droce_mad_hdr, tid));
	switch (attr) {
	case CM_REQ:
		parse_req(mad, m);
		break;
	case CM_MRA:
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_mra, local_comm_id));
		m->remote_comm_id = droce_get_be32(AT(mad, droce_cm_mra, remote_comm_id));
		m->msg_rejected = (*AT(mad, droce_cm_mra, msg_mraed) >> DROCE_CM_MSG_SHIFT) &
			DROCE_CM_MSG_MASK;
		m->service_timeout = (*AT(mad, droce_cm_mra, service_timeout) >>
			DROCE_CM_SERVICE_TIMEOUT_SHIFT) & DROCE_CM_SERVICE_TIMEOUT_MASK;
		break;
	case CM_REJ:
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
	case CM_REP:
		parse_rep(mad, m);
		break;
	case CM_DREQ:
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_dreq, local_comm_id));
		m->remote_comm_id = droce_get_be32(AT(mad, droce_cm_dreq, remote_comm_id));
		m->local_qpn =
			droce_get_be32(AT(mad, droce_cm_dreq, remote_qpn)) >> DROCE_CM_24_SHIFT;
		break;
	case CM_SIDR_REQ:
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_sidr_req, request_id));
		m->pkey = droce_get_be16(AT(mad, droce_cm_sidr_req, pkey));
		m->service_id = droce_get_be64(AT(mad, droce_cm_sidr_req, service_id));
		break;
	case CM_SIDR_REP:
		parse_sidr_rep(mad, m);
		break;
	default:	/* RTU, DREP */
		m->local_comm_id = droce_get_be32(AT(mad, droce_cm_rtu, local_comm_id));
		m->remote_comm_id = droce_get_be32(AT(mad, droce_cm_rtu, remote_comm_id));
		break;
	}
	m->private_data_len = (uint8_t)cm_msg_priv_max(attr);
	memcpy(m->private_data, mad + DROCE_MAD_HDR_SIZE + priv_off(attr), m->private_data_len);
	return 0;
}

#define IPH(f) offsetof(struct droce_cm_ip_hdr, f)

int
cma_hdr_build(uint8_t out[CMA_HDR_SIZE], const struct sockaddr *src, const struct sockaddr *dst)
{
	if ((src->sa_family != AF_INET && src->sa_family != AF_INET6) ||
	    (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
		return -EAFNOSUPPORT;
	if (src->sa_family != dst->sa_family)
		return -EINVAL;
	memset(out, 0, CMA_HDR_SIZE);
	out[IPH(version)] = DROCE_CM_IP_HDR_VERSION;
	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)src;
		const struct sockaddr_in *d = (const struct sockaddr_in *)dst;

		out[IPH(ip_version)] = 4 << DROCE_CM_IP_VERSION_SHIFT;
		memcpy(out + IPH(src_port), &s->sin_port, 2);	/* both in network order */
		memcpy(out + IPH(src_addr) + 12, &s->sin_addr, 4);
		memcpy(out + IPH(dst_addr) + 12, &d->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)src;
		const struct sockaddr_in6 *d = (const struct sockaddr_in6 *)dst;

		out[IPH(ip_version)] = 6 << DROCE_CM_IP_VERSION_SHIFT;
		memcpy(out + IPH(src_port), &s->sin6_port, 2);
		memcpy(out + IPH(src_addr), &s->sin6_addr, 16);
		memcpy(out + IPH(dst_addr), &d->sin6_addr, 16);
	}
	return 0;
}

int
cma_hdr_parse(const uint8_t in[CMA_HDR_SIZE], struct sockaddr_storage *src,
	struct sockaddr_storage *dst)
{
	/* The kernel (cma_save_ip_info) refuses any version but CMA_VERSION 0x00. */
	if (in[IPH(version)] != DROCE_CM_IP_HDR_VERSION)
		return -EPROTO;
	switch (in[IPH(ip_version)] >> DROCE_CM_IP_VERSION_SHIFT) {
	case 4: {
		struct sockaddr_in *s = (struct sockaddr_in *)src;
		struct sockaddr_in *d = (struct sockaddr_in *)dst;

		memset(src, 0, sizeof(*src));
		memset(dst, 0, sizeof(*dst));
		s->sin_family = AF_INET;
		d->sin_family = AF_INET;
		memcpy(&s->sin_port, in + IPH(src_port), 2);
		memcpy(&s->sin_addr, in + IPH(src_addr) + 12, 4);
		memcpy(&d->sin_addr, in + IPH(dst_addr) + 12, 4);
		return 0;
	}
	case 6: {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)dst;

		memset(src, 0, sizeof(*src));
		memset(dst, 0, sizeof(*dst));
		s->sin6_family = AF_INET6;
		d->sin6_family = AF_INET6;
		memcpy(&s->sin6_port, in + IPH(src_port), 2);
		memcpy(&s->sin6_addr, in + IPH(src_addr), 16);
		memcpy(&d->sin6_addr, in + IPH(dst_addr), 16);
		return 0;
	}
	default:
		/* As the kernel: IP version 4 or 6 only (cma_save_ip_info). */
		return -EAFNOSUPPORT;
	}
}

uint64_t
cma_service_id(uint16_t port_space, uint16_t port)
{
	return (uint64_t)port_space << 16 | port;
}

uint16_t
cma_service_id_port(uint64_t service_id)
{
	return (uint16_t)service_id;
}

uint16_t
cma_service_id_ps(uint64_t service_id)
{
	return (uint16_t)(service_id >> 16);
}
