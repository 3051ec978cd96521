/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_VERBS_H
#define DROCE_VERBS_H

/*
 * The engine's public API: verbs-like objects over an injected clock, packet I/O and randomness.
 * Enum values equal libibverbs' (IBTA 11) so the verbs shim converts nothing but error signs:
 * calls return 0 or -errno; constructors return NULL and set *err (or errno) to a positive errno.
 * Single-threaded: the caller serialises every call on one device (the DPDK runtime runs a device
 * on one lcore; the simulator is single-threaded).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct droce_dev;
union droce_cc_params; /* stack/droce_cc.h */
struct droce_pd;
struct droce_mr;
struct droce_mw;
struct droce_cq;
struct droce_qp;
struct droce_srq;
struct droce_ah;

/* ---- Packet I/O and randomness, implemented by the caller ---- */
struct droce_io {
	/* A transmit buffer of at least len bytes, or NULL when none is free now (the engine
	 * keeps the work and tries again on a later droce_dev_process()). */
	uint8_t *(*tx_alloc)(void *ctx, uint32_t len, void **cookie);
	/* Hand a filled buffer of len bytes to the wire; ownership passes to the caller. */
	void (*tx_send)(void *ctx, void *cookie, uint32_t len);
	/* 64 random bits: keys, initial values. Deterministic in the simulator. */
	uint64_t (*rand64)(void *ctx);
	void *ctx;
};

/* ---- Enumerations, numerically equal to libibverbs ---- */
enum droce_qp_type { DROCE_QPT_RC = 2, DROCE_QPT_UC = 3, DROCE_QPT_UD = 4 };

enum droce_qp_state {
	DROCE_QPS_RESET,
	DROCE_QPS_INIT,
	DROCE_QPS_RTR,
	DROCE_QPS_RTS,
	DROCE_QPS_SQD,
	DROCE_QPS_SQE,
	DROCE_QPS_ERR,
};

enum droce_mtu { DROCE_MTU_256 = 1, DROCE_MTU_512, DROCE_MTU_1024, DROCE_MTU_2048, DROCE_MTU_4096 };

enum droce_access {
	DROCE_ACCESS_LOCAL_WRITE = 1 << 0,
	DROCE_ACCESS_REMOTE_WRITE = 1 << 1,
	DROCE_ACCESS_REMOTE_READ = 1 << 2,
	DROCE_ACCESS_REMOTE_ATOMIC = 1 << 3,
	DROCE_ACCESS_MW_BIND = 1 << 4, /* an MR memory windows may be bound to (C10-73) */
};

/* Memory windows (IBTA 10.6.7), bound by a BIND_MW work request (verbs' ibv_bind_mw posts one
 * for type 1). Type 2 is bound to one QP and invalidated by LOCAL_INV or SEND with Invalidate. */
enum droce_mw_type { DROCE_MW_TYPE_1 = 1, DROCE_MW_TYPE_2 = 2 };

enum droce_qp_attr_mask {
	DROCE_QP_STATE = 1 << 0,
	DROCE_QP_CUR_STATE = 1 << 1,
	DROCE_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	DROCE_QP_ACCESS_FLAGS = 1 << 3,
	DROCE_QP_PKEY_INDEX = 1 << 4,
	DROCE_QP_PORT = 1 << 5,
	DROCE_QP_QKEY = 1 << 6,
	DROCE_QP_AV = 1 << 7,
	DROCE_QP_PATH_MTU = 1 << 8,
	DROCE_QP_TIMEOUT = 1 << 9,
	DROCE_QP_RETRY_CNT = 1 << 10,
	DROCE_QP_RNR_RETRY = 1 << 11,
	DROCE_QP_RQ_PSN = 1 << 12,
	DROCE_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	DROCE_QP_ALT_PATH = 1 << 14,
	DROCE_QP_MIN_RNR_TIMER = 1 << 15,
	DROCE_QP_SQ_PSN = 1 << 16,
	DROCE_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	DROCE_QP_PATH_MIG_STATE = 1 << 18,
	DROCE_QP_CAP = 1 << 19,
	DROCE_QP_DEST_QPN = 1 << 20,
};

enum droce_wr_opcode {
	DROCE_WR_RDMA_WRITE,
	DROCE_WR_RDMA_WRITE_WITH_IMM,
	DROCE_WR_SEND,
	DROCE_WR_SEND_WITH_IMM,
	DROCE_WR_RDMA_READ,
	DROCE_WR_ATOMIC_CMP_AND_SWP,
	DROCE_WR_ATOMIC_FETCH_AND_ADD,
	DROCE_WR_LOCAL_INV,
	DROCE_WR_BIND_MW,
	DROCE_WR_SEND_WITH_INV,
	/* IBTA 1.5 ATOMIC WRITE (RC): the 8 bytes of wr.atomic.swap, in memory order, land at
	 * wr.atomic.remote_addr (8-aligned) as one store, after everything sent before them. */
	DROCE_WR_ATOMIC_WRITE = 15,
};

enum droce_send_flags {
	DROCE_SEND_FENCE = 1 << 0,
	DROCE_SEND_SIGNALED = 1 << 1,
	DROCE_SEND_SOLICITED = 1 << 2,
	DROCE_SEND_INLINE = 1 << 3,
};

enum droce_wc_status {
	DROCE_WC_SUCCESS,
	DROCE_WC_LOC_LEN_ERR,
	DROCE_WC_LOC_QP_OP_ERR,
	DROCE_WC_LOC_EEC_OP_ERR,
	DROCE_WC_LOC_PROT_ERR,
	DROCE_WC_WR_FLUSH_ERR,
	DROCE_WC_MW_BIND_ERR,
	DROCE_WC_BAD_RESP_ERR,
	DROCE_WC_LOC_ACCESS_ERR,
	DROCE_WC_REM_INV_REQ_ERR,
	DROCE_WC_REM_ACCESS_ERR,
	DROCE_WC_REM_OP_ERR,
	DROCE_WC_RETRY_EXC_ERR,
	DROCE_WC_RNR_RETRY_EXC_ERR,
	DROCE_WC_LOC_RDD_VIOL_ERR,
	DROCE_WC_REM_INV_RD_REQ_ERR,
	DROCE_WC_REM_ABORT_ERR,
	DROCE_WC_INV_EECN_ERR,
	DROCE_WC_INV_EEC_STATE_ERR,
	DROCE_WC_FATAL_ERR,
	DROCE_WC_RESP_TIMEOUT_ERR,
	DROCE_WC_GENERAL_ERR,
};

enum droce_wc_opcode {
	DROCE_WC_SEND,
	DROCE_WC_RDMA_WRITE,
	DROCE_WC_RDMA_READ,
	DROCE_WC_COMP_SWAP,
	DROCE_WC_FETCH_ADD,
	DROCE_WC_BIND_MW,
	DROCE_WC_LOCAL_INV,
	DROCE_WC_ATOMIC_WRITE = 9,
	DROCE_WC_RECV = 1 << 7,
	DROCE_WC_RECV_RDMA_WITH_IMM,
};

enum droce_wc_flags {
	DROCE_WC_GRH = 1 << 0,
	DROCE_WC_WITH_IMM = 1 << 1,
	DROCE_WC_IP_CSUM_OK = 1 << 2,
	DROCE_WC_WITH_INV = 1 << 3,
};

enum droce_event_type { /* asynchronous events, as ibv_event_type */
			DROCE_EVENT_CQ_ERR = 0,
			DROCE_EVENT_QP_FATAL = 1,
			DROCE_EVENT_QP_REQ_ERR = 2,
			DROCE_EVENT_QP_ACCESS_ERR = 3,
			DROCE_EVENT_COMM_EST = 4,
			DROCE_EVENT_SQ_DRAINED = 5,
			DROCE_EVENT_PORT_ACTIVE = 9,
			DROCE_EVENT_SRQ_LIMIT_REACHED = 14,
			DROCE_EVENT_QP_LAST_WQE_REACHED = 16,
};

/* ---- Attributes and work requests ---- */
struct droce_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* Where a connected QP or a UD address handle sends to (the GRH/RoCEv2 addressing). */
struct droce_av {
	uint8_t dgid[16]; /* ::ffff:a.b.c.d for IPv4 */
	uint8_t sgid_index;
	uint8_t dmac[6];       /* resolved by the caller (ARP/ND in the runtime) */
	uint8_t traffic_class; /* DSCP << 2; the engine sets ECT(0) in the ECN bits */
	uint8_t hop_limit;
	uint32_t flow_label;
	uint16_t vlan_tci; /* used when has_vlan */
	bool has_vlan;
};

struct droce_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct droce_qp_init_attr {
	enum droce_qp_type qp_type;
	struct droce_cq *send_cq;
	struct droce_cq *recv_cq;
	struct droce_srq *srq;
	struct droce_qp_cap cap;
	bool sq_sig_all;
	void *qp_context;
	/* The GSI, QP1 (IBTA 11.2.5 Get Special QP; Annex A17.5.8: the only special QP of a
	 * RoCEv2 port): UD only (else -EINVAL), one per device (-EBUSY), on a device of shard 0
	 * or with gsi_any_shard (else -EINVAL). Otherwise an ordinary UD QP: the caller sets its Q_Key, DROCE_QKEY_GSI. */
	bool gsi;
	/* UD: the datagrams it sends to a group it is attached to do not come back to it (the
	 * device's other members still get them): IBV_QP_CREATE_BLOCK_SELF_MCAST_LB. */
	bool block_self_mcast_lb;
	/* Congestion control (stack/droce_cc.h): the algorithm's name, NULL for the device's
	 * (droce_dev_set_cc()); its parameters, NULL for the device's, or with a name that
	 * algorithm's defaults for the device's link_bps. -EINVAL: a name the device does not
	 * know, parameters the algorithm refuses. */
	const char *cc;
	const union droce_cc_params *cc_params;
};

/* QPN of the GSI and its well-known Q_Key (CM MADs are sent to QP1 with it). */
#define DROCE_QPN_GSI  1u
#define DROCE_QKEY_GSI 0x80010000u

struct droce_qp_attr {
	enum droce_qp_state qp_state;
	enum droce_qp_state cur_qp_state;
	enum droce_mtu path_mtu;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	struct droce_qp_cap cap;
	struct droce_av ah_attr;
	uint16_t pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;	    /* at most DROCE_MAX_RD_ATOMIC */
	uint8_t max_dest_rd_atomic; /* at most DROCE_MAX_RD_ATOMIC */
	uint8_t min_rnr_timer;	    /* an RNR timer code (IBTA 9.7.5.2.8) */
	uint8_t port_num;
	uint8_t timeout; /* local ACK timeout 4.096 us * 2^timeout; 0 = infinite */
	uint8_t retry_cnt;
	uint8_t rnr_retry; /* 7 = infinite */
};

struct droce_send_wr {
	uint64_t wr_id;
	struct droce_send_wr *next;
	struct droce_sge *sg_list;
	int num_sge;
	enum droce_wr_opcode opcode;
	unsigned int send_flags;
	uint32_t imm_data; /* network byte order, as verbs */
	uint32_t invalidate_rkey;
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct droce_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
		/* BIND_MW: the window takes rkey's low byte (its key; the rest is its index) */
		struct {
			struct droce_mw *mw;
			struct droce_mr *mr; /* NULL with length 0: unbind (type 1 only) */
			uint64_t addr;
			uint64_t length;
			uint32_t rkey;
			unsigned int access; /* DROCE_ACCESS_REMOTE_* */
		} bind_mw;
	} wr;
};

struct droce_recv_wr {
	uint64_t wr_id;
	struct droce_recv_wr *next;
	struct droce_sge *sg_list;
	int num_sge;
};

struct droce_wc {
	uint64_t wr_id;
	enum droce_wc_status status;
	enum droce_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* network byte order, as verbs; WITH_INV: the R_Key (host) */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
	/* When the engine made it: the now_ns of the call that did (droce_dev_process,
	 * droce_dev_rx_burst, or the last one before a verb that flushed a queue). */
	uint64_t timestamp;
};

struct droce_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

struct droce_async_event {
	enum droce_event_type type;
	union {
		struct droce_qp *qp;
		struct droce_cq *cq;
		struct droce_srq *srq;
		uint8_t port_num;
	} element;
};

/* ---- Device ---- */
/* READs and atomics a QP may have outstanding as requester (max_rd_atomic) and as responder
 * (max_dest_rd_atomic): as many as rxe offers. A QP's responder memory follows what it asks. */
#define DROCE_MAX_RD_ATOMIC 128
#define DROCE_MAX_GIDS	    16

struct droce_dev_attr {
	uint8_t mac[6];
	uint8_t gids[DROCE_MAX_GIDS][16]; /* index 0.. as the GID table; IPv4 as ::ffff:a.b.c.d */
	uint8_t num_gids;
	uint32_t eth_mtu; /* bounds the path MTU: the active MTU is the largest that fits */
	uint32_t max_qp;  /* object pools are sized at creation: no allocation on the data path */
	uint32_t max_cq;
	uint32_t max_mr;
	uint32_t max_mw; /* memory windows; 0: none */
	uint32_t max_srq;
	uint32_t max_ah;
	uint32_t max_pd;
	/* A runtime running several devices (shards) steers a frame to its device by the DestQP
	 * alone: the top shard_bits bits of every QPN this device allocates are shard (0: none). */
	uint8_t shard;
	uint8_t shard_bits;
	/* QP1 allowed on this device whatever its shard: the QPN range is not a runtime's shard
	 * but a droce-portd slot, and the service routes MADs to QP1 itself (by CM comm ID). */
	bool gsi_any_shard;
	/* The port's rate in bit/s (0: unknown): congestion control's defaults scale with it. */
	uint64_t link_bps;
};

struct droce_dev *droce_dev_create(const struct droce_dev_attr *attr, const struct droce_io *io,
				   int *err);
void droce_dev_destroy(struct droce_dev *dev);

/* Feed received frames; the engine copies what it keeps, so the caller frees them after. */
void droce_dev_rx_burst(struct droce_dev *dev, const uint8_t *const *frames, const uint32_t *lens,
			unsigned int n, uint64_t now_ns);
/* droce_dev_rx_burst, then droce_dev_process if anything is due (the ACKs and responses the
 * frames made): a poll loop's one call per burst. Returns frames sent. */
unsigned int droce_dev_rx_process(struct droce_dev *dev, const uint8_t *const *frames,
				  const uint32_t *lens, unsigned int n, uint64_t now_ns,
				  unsigned int budget);
/* Run expired timers and transmit up to budget frames; returns frames sent. */
unsigned int droce_dev_process(struct droce_dev *dev, uint64_t now_ns, unsigned int budget);
/* Earliest time droce_dev_process() has work to do (UINT64_MAX: none until new input). */
uint64_t droce_dev_next_deadline(const struct droce_dev *dev);
/* The caller's time for verbs it calls between droce_dev_process / droce_dev_rx_burst calls: a
 * completion they make (a flush) carries it. It never moves the engine's time back. */
void droce_dev_set_now(struct droce_dev *dev, uint64_t now_ns);
/* Pop one asynchronous event; returns 0, or -EAGAIN when there is none. */
int droce_dev_get_async_event(struct droce_dev *dev, struct droce_async_event *ev);

/* ---- Objects ---- */
struct droce_pd *droce_pd_alloc(struct droce_dev *dev, int *err);
int droce_pd_dealloc(struct droce_pd *pd);

struct droce_mr *droce_mr_reg(struct droce_pd *pd, void *addr, size_t length, unsigned int access,
			      int *err);
int droce_mr_dereg(struct droce_mr *mr);
uint32_t droce_mr_lkey(const struct droce_mr *mr);
uint32_t droce_mr_rkey(const struct droce_mr *mr);

/* A window of pd, unbound. Dealloc unbinds it first. An MR with windows bound to it does not
 * deregister (-EBUSY), and a destroyed QP's type 2 windows become free. */
struct droce_mw *droce_mw_alloc(struct droce_pd *pd, enum droce_mw_type type, int *err);
int droce_mw_dealloc(struct droce_mw *mw);
uint32_t droce_mw_rkey(const struct droce_mw *mw);

struct droce_cq *droce_cq_create(struct droce_dev *dev, uint32_t cqe, void *cq_context, int *err);
int droce_cq_destroy(struct droce_cq *cq);
/* Exactly cqe slots from now on, the completions waiting kept in order: -EINVAL when cqe is 0,
 * above the limit or below the number waiting, -ENOMEM (the CQ unchanged). */
int droce_cq_resize(struct droce_cq *cq, uint32_t cqe);
/* Returns the number of completions written to wc (0..n), or -errno (-EOVERFLOW after overrun). */
int droce_cq_poll(struct droce_cq *cq, unsigned int n, struct droce_wc *wc);
/* Arm for the next (solicited-only: next solicited) completion; the event is counted per CQ. */
int droce_cq_req_notify(struct droce_cq *cq, bool solicited_only);

struct droce_srq *droce_srq_create(struct droce_pd *pd, const struct droce_srq_attr *attr,
				   void *srq_context, int *err);
int droce_srq_modify(struct droce_srq *srq, const struct droce_srq_attr *attr, unsigned int mask);
int droce_srq_destroy(struct droce_srq *srq);
int droce_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr,
			struct droce_recv_wr **bad_wr);

struct droce_ah *droce_ah_create(struct droce_pd *pd, const struct droce_av *av, int *err);
int droce_ah_destroy(struct droce_ah *ah);

/*
 * UD multicast: a UD QP attached to a group's GID (IPv4-mapped 224.0.0.0/4, or ff00::/8)
 * receives what is sent to that GID with DestQP DROCE_MCAST_QPN, as every member does. Up to
 * DROCE_MCAST_GROUPS groups a device, DROCE_MCAST_QPS QPs a group. Attaching twice is no
 * error; 0, -EINVAL (not a UD QP, not a multicast GID; detach: not attached), -ENOMEM, or
 * -EOPNOTSUPP on a device of a shard other than 0 (the runtime gives multicast to shard 0).
 */
#define DROCE_MCAST_QPN	   0xFFFFFFu
#define DROCE_MCAST_GROUPS 16
#define DROCE_MCAST_QPS	   8
int droce_mcast_attach(struct droce_qp *qp, const uint8_t gid[16]);
int droce_mcast_detach(struct droce_qp *qp, const uint8_t gid[16]);

struct droce_qp *droce_qp_create(struct droce_pd *pd, const struct droce_qp_init_attr *attr,
				 int *err);
int droce_qp_destroy(struct droce_qp *qp);
uint32_t droce_qp_num(const struct droce_qp *qp);
int droce_qp_modify(struct droce_qp *qp, const struct droce_qp_attr *attr, unsigned int mask);
int droce_qp_query(const struct droce_qp *qp, struct droce_qp_attr *attr,
		   struct droce_qp_init_attr *init);

/* What droce_qp_connect() needs of the peer and of this QP (the RC fields only for RC). */
struct droce_qp_conn {
	struct droce_av av; /* the peer's address: GID, MAC, hop limit, ... */
	uint32_t dest_qp_num;
	uint32_t rq_psn; /* the first PSN the peer sends */
	uint32_t sq_psn; /* the first PSN this QP sends */
	enum droce_mtu path_mtu;
	uint8_t timeout, retry_cnt, rnr_retry, max_rd_atomic; /* RC requester */
	uint8_t min_rnr_timer, max_dest_rd_atomic;	      /* RC responder */
};

/* RESET -> INIT on port 1, P_Key index 0: RC and UC with these access flags, UD with qkey. */
int droce_qp_init(struct droce_qp *qp, unsigned int access, uint32_t qkey);
/* INIT -> RTR -> RTS with the attributes the QP's type needs (UD: only sq_psn). 0 or the
 * failing droce_qp_modify()'s -errno (the QP is then left in the state it reached). */
int droce_qp_connect(struct droce_qp *qp, const struct droce_qp_conn *c);

/* Post: 0, or -errno with *bad_wr the first WR not posted (verbs semantics). */
int droce_post_send(struct droce_qp *qp, struct droce_send_wr *wr, struct droce_send_wr **bad_wr);
int droce_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr, struct droce_recv_wr **bad_wr);

#endif /* DROCE_VERBS_H */
