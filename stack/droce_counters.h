/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_COUNTERS_H
#define DROCE_COUNTERS_H

/*
 * Transport counters, kept per QP and summed per device. Names follow Linux rxe
 * (rxe_hw_counters.c) and mlx5 (hw_counters) where one of them has the counter; the rest are ours.
 * Every drop reason (droce_drop.h) is also a device counter, named "drop_<REASON>".
 */
#include <stdint.h>

struct droce_dev;
struct droce_qp;

/* X(enum suffix, name) */
#define DROCE_CNT_LIST(X) \
	X(SENT_PKTS, "sent_pkts") \
	X(RCVD_PKTS, "rcvd_pkts") \
	X(SENT_BYTES, "sent_bytes") \
	X(RCVD_BYTES, "rcvd_bytes") \
	X(RDMA_SENDS, "rdma_sends") \
	X(RDMA_RECVS, "rdma_recvs") \
	X(DUPLICATE_REQUEST, "duplicate_request") \
	X(OUT_OF_SEQ_REQUEST, "out_of_seq_request") \
	X(RCVD_RNR_ERR, "rcvd_rnr_err") \
	X(SEND_RNR_ERR, "send_rnr_err") \
	X(RCVD_SEQ_ERR, "rcvd_seq_err") \
	X(SEND_SEQ_ERR, "send_seq_err") \
	X(RETRY_EXCEEDED_ERR, "retry_exceeded_err") \
	X(RETRY_RNR_EXCEEDED_ERR, "retry_rnr_exceeded_err") \
	X(COMPLETER_RETRY_ERR, "completer_retry_err") \
	X(LOCAL_ACK_TIMEOUT_ERR, "local_ack_timeout_err") \
	X(IMPLIED_NAK_SEQ_ERR, "implied_nak_seq_err") \
	X(RX_READ_REQUESTS, "rx_read_requests") \
	X(RX_WRITE_REQUESTS, "rx_write_requests") \
	X(RX_ATOMIC_REQUESTS, "rx_atomic_requests") \
	X(RESP_LOCAL_LENGTH_ERROR, "resp_local_length_error") \
	X(RESP_REMOTE_ACCESS_ERRORS, "resp_remote_access_errors") \
	X(RESP_REMOTE_INVALID_REQUEST, "resp_remote_invalid_request") \
	X(REQ_REMOTE_ACCESS_ERRORS, "req_remote_access_errors") \
	X(REQ_REMOTE_INVALID_REQUEST, "req_remote_invalid_request") \
	X(REQ_REMOTE_OP_ERRORS, "req_remote_operational_errors") \
	X(REQ_LOCAL_LENGTH_ERROR, "req_local_length_error") \
	X(REQ_LOCAL_PROT_ERROR, "req_local_protection_error") \
	X(OUT_OF_BUFFER, "out_of_buffer") \
	X(ACKS_SENT, "ack_sent") \
	X(ACK_COALESCED, "ack_deferred") \
	X(NAKS_SENT, "nak_sent") \
	X(ATOMIC_REPLAYED, "atomic_replayed") \
	X(READ_REEXECUTED, "read_reexecuted") \
	X(RETRANSMITTED_PKTS, "roce_adp_retrans") \
	X(REQ_CQE_ERROR, "req_cqe_error") \
	X(RESP_CQE_ERROR, "resp_cqe_error") \
	X(REQ_CQE_FLUSH_ERROR, "req_cqe_flush_error") \
	X(RESP_CQE_FLUSH_ERROR, "resp_cqe_flush_error") \
	X(UC_MSG_DROPPED, "uc_msg_dropped") \
	X(RP_CNP_HANDLED, "rp_cnp_handled") \
	X(NP_ECN_MARKED, "np_ecn_marked_roce_packets") \
	X(NP_CNP_SENT, "np_cnp_sent") \
	X(TX_NO_BUF, "tx_no_buf") \
	X(CC_DEFERRED, "cc_deferred") \
	X(MCAST_RCVD, "mcast_rcvd_pkts") \
	X(MCAST_LOOPED, "mcast_looped_pkts") \
	X(MW_BIND, "mw_bind") \
	X(MW_INVALIDATE, "mw_invalidate") \
	X(MW_OP_ERR, "mw_op_err") \
	X(RX_ATOMIC_WRITE_REQUESTS, "rx_atomic_write_requests") \
	X(READ_RESP_AHEAD, "read_resp_ahead") \
	X(READ_REREQ, "read_rereq") \
	X(ACK_BEFORE_NAK, "ack_before_seq_nak") \
	X(SR_KEPT, "sr_kept") \
	X(SR_PEER, "sr_peer") \
	X(RTO_RESEND, "rto_resend") \
	X(RTO_DEFERRED, "rto_deferred") \
	X(ACK_HELD, "ack_held") \
	X(ACK_HELD_TIMEOUT, "ack_held_timeout")

enum droce_cnt {
#define DROCE_X_CNT_ENUM(e, n) DROCE_CNT_##e,
	DROCE_CNT_LIST(DROCE_X_CNT_ENUM)
#undef DROCE_X_CNT_ENUM
		DROCE_CNT_MAX
};

struct droce_counter {
	const char *name;
	uint64_t value;
};

const char *droce_cnt_name(enum droce_cnt c);
/* One counter of a QP, or the device total (QPs destroyed included). */
uint64_t droce_qp_counter(const struct droce_qp *qp, enum droce_cnt c);
uint64_t droce_dev_counter(const struct droce_dev *dev, enum droce_cnt c);
/* Fill up to n name/value pairs; returns how many exist (call with n = 0 to size). The device list
 * is the transport counters, then "drop_<REASON>" for every drop reason. */
unsigned int droce_qp_counters(const struct droce_qp *qp, struct droce_counter *out,
			       unsigned int n);
unsigned int droce_dev_counters(const struct droce_dev *dev, struct droce_counter *out,
				unsigned int n);
/* Drops of one reason on the device. */
uint64_t droce_dev_drops(const struct droce_dev *dev, unsigned int reason);

#endif /* DROCE_COUNTERS_H */
