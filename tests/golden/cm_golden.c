/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM MADs from droce_cm_msg_build() for tshark to decode (cm_tshark.py): one JSON line a message, the
 * outer addresses, the MAD as hex, and every struct droce_cm_msg field by its C name. The values are
 * RoCE-like (the kernel's permissive LIDs, hop limit 64, P_Key 0xFFFF) but distinct, so a field
 * read from the wrong place shows.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "../../stack/cm/droce_cm_msg.h"
#include "../../verbs-shim/rdmacm/cma_hdr.h"

static void
hex(const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%02x", b[i]);
}

/* extra: more JSON members (", \"k\": v"), or "". */
static int
emit(const char *name, int ipv, const char *src, const char *dst, const char *extra,
     const struct droce_cm_msg *m)
{
	uint8_t mad[DROCE_MAD_SIZE];
	char gl[INET6_ADDRSTRLEN], gr[INET6_ADDRSTRLEN];

	if (droce_cm_msg_build(m, mad) != 0) {
		fprintf(stderr, "cm_golden: droce_cm_msg_build(%s) failed\n", name);
		return 1;
	}
	inet_ntop(AF_INET6, m->primary_local_gid, gl, sizeof(gl));
	inet_ntop(AF_INET6, m->primary_remote_gid, gr, sizeof(gr));
	printf("{\"name\": \"%s\", \"ip\": %d, \"src\": \"%s\", \"dst\": \"%s\", \"mad\": \"", name,
	       ipv, src, dst);
	hex(mad, sizeof(mad));
	printf("\", \"attr\": %u, \"tid\": %" PRIu64 ", \"local_comm_id\": %u, "
	       "\"remote_comm_id\": %u, \"service_id\": %" PRIu64 ", \"local_ca_guid\": %" PRIu64
	       ", \"local_qkey\": %u, \"local_qpn\": %u, \"starting_psn\": %u, "
	       "\"responder_resources\": %u, \"initiator_depth\": %u, "
	       "\"remote_cm_response_timeout\": %u, \"local_cm_response_timeout\": %u, "
	       "\"transport_type\": %u, \"end_to_end_flow_control\": %u, \"retry_count\": %u, "
	       "\"rnr_retry_count\": %u, \"max_cm_retries\": %u, \"path_mtu\": %u, \"srq\": %u, "
	       "\"pkey\": %u, \"primary_local_lid\": %u, \"primary_remote_lid\": %u, "
	       "\"primary_local_gid\": \"%s\", \"primary_remote_gid\": \"%s\", "
	       "\"primary_flow_label\": %u, \"primary_packet_rate\": %u, "
	       "\"primary_traffic_class\": %u, \"primary_hop_limit\": %u, \"primary_sl\": %u, "
	       "\"primary_subnet_local\": %u, \"primary_local_ack_timeout\": %u, "
	       "\"target_ack_delay\": %u, \"failover_accepted\": %u, \"msg_rejected\": %u, "
	       "\"reason\": %u, \"ari_len\": %u, \"ari\": \"",
	       m->attr, m->tid, m->local_comm_id, m->remote_comm_id, m->service_id,
	       m->local_ca_guid, m->local_qkey, m->local_qpn, m->starting_psn,
	       m->responder_resources, m->initiator_depth, m->remote_cm_response_timeout,
	       m->local_cm_response_timeout, m->transport_type, m->end_to_end_flow_control,
	       m->retry_count, m->rnr_retry_count, m->max_cm_retries, m->path_mtu, m->srq, m->pkey,
	       m->primary_local_lid, m->primary_remote_lid, gl, gr, m->primary_flow_label,
	       m->primary_packet_rate, m->primary_traffic_class, m->primary_hop_limit,
	       m->primary_sl, m->primary_subnet_local, m->primary_local_ack_timeout,
	       m->target_ack_delay, m->failover_accepted, m->msg_rejected, m->reason, m->ari_len);
	hex(m->ari, sizeof(m->ari));
	printf("\", \"service_timeout\": %u, \"sidr_status\": %u, \"private_data\": \"",
	       m->service_timeout, m->sidr_status);
	hex(m->private_data, droce_cm_msg_priv_max(m->attr));
	printf("\"%s}\n", extra);
	return 0;
}

/* IPv4-mapped (::ffff:a.b.c.d) or plain IPv6 GID of an address string. */
static void
gid_of(const char *addr, int ipv, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (ipv == 4) {
		gid[10] = 0xFF;
		gid[11] = 0xFF;
		inet_pton(AF_INET, addr, gid + 12);
	} else {
		inet_pton(AF_INET6, addr, gid);
	}
}

/* A REQ as rdma_connect() sends it: service ID in the TCP port space, cma_hdr first. */
static int
req(int ipv, const char *src, const char *dst, uint16_t sport, uint16_t dport)
{
	struct sockaddr_storage s, d;
	struct droce_cm_msg m;
	char extra[64];
	size_t i;

	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	if (ipv == 4) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&s, *d4 = (struct sockaddr_in *)&d;

		s4->sin_family = d4->sin_family = AF_INET;
		s4->sin_port = htons(sport);
		d4->sin_port = htons(dport);
		inet_pton(AF_INET, src, &s4->sin_addr);
		inet_pton(AF_INET, dst, &d4->sin_addr);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&s;
		struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&d;

		s6->sin6_family = d6->sin6_family = AF_INET6;
		s6->sin6_port = htons(sport);
		d6->sin6_port = htons(dport);
		inet_pton(AF_INET6, src, &s6->sin6_addr);
		inet_pton(AF_INET6, dst, &d6->sin6_addr);
	}
	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_REQ;
	m.tid = 0x0000000100000000ull | (unsigned int)ipv;
	m.local_comm_id = 0x1A2B3C4D;
	m.service_id = cma_service_id(0x0106, dport);
	m.local_ca_guid = 0x0002C90300A1B2C3ull;
	m.local_qkey = 0;
	m.local_qpn = 0xABCDEF;
	m.starting_psn = 0x123456;
	m.responder_resources = 16;
	m.initiator_depth = 8;
	m.remote_cm_response_timeout = 0x14;
	m.local_cm_response_timeout = 0x13;
	m.transport_type = 0; /* RC */
	m.end_to_end_flow_control = true;
	m.retry_count = 6;
	m.rnr_retry_count = 5;
	m.max_cm_retries = 15;
	m.path_mtu = 3; /* 1024 */
	m.srq = false;
	m.pkey = 0xFFFF;
	m.primary_local_lid = 0xFFFF; /* permissive, as the kernel on RoCE */
	m.primary_remote_lid = 0xFFFF;
	gid_of(src, ipv, m.primary_local_gid);
	gid_of(dst, ipv, m.primary_remote_gid);
	m.primary_flow_label = ipv == 4 ? 0 : 0x12345;
	m.primary_packet_rate = 0x10;
	m.primary_traffic_class = 0x68;
	m.primary_hop_limit = 64;
	m.primary_sl = 3;
	m.primary_subnet_local = false;
	m.primary_local_ack_timeout = 0x12;
	if (cma_hdr_build(m.private_data, (struct sockaddr *)&s, (struct sockaddr *)&d) != 0) {
		fprintf(stderr, "cm_golden: cma_hdr_build failed\n");
		return 1;
	}
	for (i = CMA_HDR_SIZE; i < 56; i++)
		m.private_data[i] = (uint8_t)i;
	m.private_data_len = 56;
	snprintf(extra, sizeof(extra), ", \"sport\": %u, \"dport\": %u", sport, dport);
	return emit(ipv == 4 ? "REQ IPv4" : "REQ IPv6", ipv, src, dst, extra, &m);
}

int
main(void)
{
	static const char *a4 = "192.168.7.2", *b4 = "192.168.7.3";
	struct droce_cm_msg m;
	int rc = 0;

	rc |= req(4, a4, b4, 40001, 7471);
	rc |= req(6, "fd00:7::2", "fd00:7::3", 65535, 18515);

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_REP;
	m.tid = 0x0000000100000004ull;
	m.local_comm_id = 0x5E6F7081;
	m.remote_comm_id = 0x1A2B3C4D;
	m.local_qkey = 0x11223344;
	m.local_qpn = 0x00FEDC;
	m.starting_psn = 0xFFFFFF;
	m.responder_resources = 8;
	m.initiator_depth = 16;
	m.target_ack_delay = 0x11;
	m.failover_accepted = 2;
	m.end_to_end_flow_control = true;
	m.rnr_retry_count = 7;
	m.srq = true;
	m.local_ca_guid = 0x0002C90300D4E5F6ull;
	m.private_data[0] = 0xAA;
	m.private_data[1] = 0x55;
	m.private_data_len = 2;
	rc |= emit("REP", 4, b4, a4, "", &m);

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_RTU;
	m.tid = 0x0000000100000004ull;
	m.local_comm_id = 0x1A2B3C4D;
	m.remote_comm_id = 0x5E6F7081;
	rc |= emit("RTU", 4, a4, b4, "", &m);

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_MRA;
	m.tid = 0x0000000100000004ull;
	m.local_comm_id = 0x5E6F7081;
	m.remote_comm_id = 0x1A2B3C4D;
	m.msg_rejected = 0;
	m.service_timeout = 0x17;
	rc |= emit("MRA", 4, b4, a4, "", &m);

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_REJ;
	m.tid = 0x0000000100000005ull;
	m.local_comm_id = 0;
	m.remote_comm_id = 0x1A2B3C4D;
	m.msg_rejected = 0; /* the REQ */
	m.reason = 28;	    /* consumer defined */
	m.ari_len = 8;
	memcpy(m.ari, "\x00\x02\xc9\x03\x00\xa1\xb2\xc3", 8);
	memcpy(m.private_data, "no thanks", 9);
	m.private_data_len = 9;
	rc |= emit("REJ", 4, b4, a4, "", &m);

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_DREQ;
	m.tid = 0x0000000100000006ull;
	m.local_comm_id = 0x1A2B3C4D;
	m.remote_comm_id = 0x5E6F7081;
	m.local_qpn = 0x00FEDC; /* the remote QPN */
	rc |= emit("DREQ", 4, a4, b4, "", &m);

	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_DREP;
	m.tid = 0x0000000100000006ull;
	m.local_comm_id = 0x5E6F7081;
	m.remote_comm_id = 0x1A2B3C4D;
	rc |= emit("DREP", 4, b4, a4, "", &m);

	/* rdma_cm's UD port space: a SIDR_REQ, cma_hdr first (as cma_resolve_ib_udp sends it). */
	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_SIDR_REQ;
	m.tid = 0x0000000100000007ull;
	m.local_comm_id = 0x2B3C4D5E; /* RequestID */
	m.pkey = 0xFFFF;
	m.service_id = cma_service_id(0x0111, 7174); /* RDMA_PS_UDP */
	{
		struct sockaddr_in s4 = { 0 }, d4 = { 0 };
		size_t i;

		s4.sin_family = d4.sin_family = AF_INET;
		s4.sin_port = htons(40002);
		d4.sin_port = htons(7174);
		inet_pton(AF_INET, a4, &s4.sin_addr);
		inet_pton(AF_INET, b4, &d4.sin_addr);
		if (cma_hdr_build(m.private_data, (struct sockaddr *)&s4, (struct sockaddr *)&d4) !=
		    0) {
			fprintf(stderr, "cm_golden: cma_hdr_build failed\n");
			return 1;
		}
		for (i = CMA_HDR_SIZE; i < 216; i++)
			m.private_data[i] = (uint8_t)i;
		m.private_data_len = 216;
	}
	rc |= emit("SIDR_REQ", 4, a4, b4, "", &m);

	/* The answer: the UD QPN and rdma_cm's UDP Q_Key (RDMA_UDP_QKEY); some info to place. */
	memset(&m, 0, sizeof(m));
	m.attr = DROCE_CM_ATTR_SIDR_REP;
	m.tid = 0x0000000100000007ull;
	m.local_comm_id = 0x2B3C4D5E; /* the SIDR_REQ's, echoed */
	m.sidr_status = 0;
	m.local_qpn = 0x00FEDC;
	m.service_id = cma_service_id(0x0111, 7174);
	m.local_qkey = 0x01234567;
	m.ari_len = 4;
	memcpy(m.ari, "\xd1\xd2\xd3\xd4", 4);
	m.private_data[0] = 0x5A;
	m.private_data[135] = 0xA5;
	m.private_data_len = 136;
	rc |= emit("SIDR_REP", 4, b4, a4, "", &m);
	return rc;
}
