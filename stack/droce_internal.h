/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_INTERNAL_H
#define DROCE_INTERNAL_H

/*
 * Engine object layouts, shared by the engine's files only. Every ring and table is sized at
 * creation; the data path allocates nothing. Indices into rings are free-running uint32_t
 * counters (slot = counter & mask), so "empty" is head == tail and wrap is harmless.
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_ackpol.h"
#include "droce_cc.h"
#include "droce_counters.h"
#include "droce_drop.h"
#include "droce_icrc.h"
#include "droce_inflight.h"
#include "droce_pkt.h"
#include "droce_slots.h"
#include "droce_verbs.h"
#include "wire/droce_bth.h"

#define DROCE_MAX_SGE	      32
#define DROCE_MAX_INLINE      1024
#define DROCE_MAX_WR	      (1u << 15)
#define DROCE_MAX_MSG	      (1u << 31) /* verbs max_msg_sz */
#define DROCE_ACKREQ_EVERY    32   /* AckReq on every Nth packet besides each message's last */
#define DROCE_MAX_INFLIGHT    1024 /* unacknowledged PSNs a requester keeps out (go-back-N) */
#define DROCE_RD_WIN	      2048 /* PSNs past una a READ/atomic response may be kept from */
#define DROCE_RD_RR	      16   /* re-requests awaiting their answer (droce_comp_rd.c) */
#define DROCE_RESP_RING_SPARE 48   /* response ring slots beyond 2 per responder resource */
#define DROCE_EVENT_RING      256
#define DROCE_UD_GRH	      40
#define DROCE_PORT_NUM	      1
#define DROCE_CNP_INTERVAL_NS 4000 /* mlx5 min_time_between_cnps default (4 us) */

/* Branch layout hints for the per-packet paths. */
#define droce_likely(x)	  __builtin_expect(!!(x), 1)
#define droce_unlikely(x) __builtin_expect(!!(x), 0)

struct droce_dev;
struct droce_sr;

struct droce_pd {
	struct droce_dev *dev;
	uint32_t refs; /* MRs, MWs, QPs, SRQs, AHs using it */
	bool used;
};

struct droce_mr {
	struct droce_pd *pd;
	uintptr_t addr;
	uint64_t length;
	uint32_t lkey;
	uint32_t rkey;
	unsigned int access;
	uint32_t mw_refs; /* windows bound to it: it stays registered (droce_mw.c) */
	bool used;
};

/* R_Keys of memory windows have this bit set and MR keys never do: one test tells which table
 * a key names. Below it a window's key is random bits, its slot, and (bits 0-7) the "key"
 * part a bind may change (IBTA 10.6.7.2: the consumer owns those 8 bits). */
#define DROCE_KEY_MW	    0x80000000u
#define DROCE_MW_SLOT_SHIFT 8

struct droce_mw {
	struct droce_pd *pd;
	struct droce_mr *mr; /* bound to; NULL while unbound */
	struct droce_qp *qp; /* type 2: the QP it was bound through, the one it serves */
	uint64_t addr;
	uint64_t length;
	uint32_t rkey;
	unsigned int access;
	enum droce_mw_type type;
	bool used;
};

struct droce_cq {
	struct droce_dev *dev;
	struct droce_wc *ring;
	uint32_t cap;  /* exactly the cqe asked for: overflow is observable */
	uint32_t head; /* next to poll, 0..cap-1 */
	uint32_t count;
	uint32_t refs;
	bool overflow;
	bool armed;
	bool solicited_only;
	uint64_t events; /* completion events raised by req_notify arming */
	void *context;
	bool used;
};

/* A receive WQE; its SGEs live in the owner's sge table, max_sge per slot. */
struct droce_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length; /* sum of SGE lengths */
	struct droce_sge *sge;
};

/* Byte position inside an SGE list, advanced as data is copied in order. */
struct droce_cursor {
	uint32_t sge;
	uint32_t off; /* within that SGE */
	uint32_t pos; /* from the start of the message */
};

struct droce_rq {
	struct droce_rwqe *ring;
	struct droce_sge *sges;
	uint32_t mask;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t head; /* posted */
	uint32_t tail; /* consumed */
};

struct droce_srq {
	struct droce_pd *pd;
	struct droce_rq rq;
	uint32_t limit; /* armed when non-zero (IBTA 10.2.9.2: one event, then disarmed) */
	uint32_t refs;
	void *context;
	bool used;
};

struct droce_ah {
	struct droce_pd *pd;
	struct droce_av av;
	bool used;
};

/* Ethernet to UDP of a connected QP's frames, built once; per packet only lengths, the IPv4
 * checksum, the BTH and the extension headers are written. */
struct droce_hdr_tmpl {
	uint8_t b[64];
	uint16_t l3_off, l4_off, bth_off;
	uint32_t csum_base; /* IPv4 header sum with total length and checksum zero */
	uint32_t icrc_base; /* droce_icrc_v4_base() of these headers and the QP's BTH */
	uint32_t dqpn;	    /* the BTH DestQP icrc_base holds */
	/* The whole ACK frame (opcode 0x11, PSN 0, AETH 0) up to the ICRC, and the ICRC register
	 * after its prefix with the PSN word zero: an ACK/NAK writes PSN and AETH only. */
	uint8_t ack[64];
	uint16_t ack_len; /* frame length, ICRC included */
	uint32_t ack_reg;
	bool valid;
};

enum droce_swqe_state {
	DROCE_SWQE_POSTED,  /* not yet sent */
	DROCE_SWQE_STARTED, /* some packet sent */
	DROCE_SWQE_SENT,    /* every packet sent, waiting for the response */
	DROCE_SWQE_DONE,    /* completed (READ data in, or acknowledged) */
};

struct droce_swqe {
	uint64_t wr_id;
	enum droce_wr_opcode opcode;
	unsigned int flags;
	uint32_t imm; /* network order, as posted */
	uint32_t inv_rkey;
	uint32_t rkey;
	uint64_t raddr;
	uint64_t compare_add;
	uint64_t swap;
	struct droce_ah *ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t length;
	uint32_t num_sge;
	struct droce_sge *sge;
	uint32_t first_psn;
	uint32_t npkts; /* PSNs the message spans (READ: response packets) */
	enum droce_swqe_state state;
	bool checked;	 /* local SGEs validated */
	bool timed;	 /* its last packet left once, at sent_ns: an RTT sample (on_rtt) */
	bool part_asked; /* READ: a part of it was re-requested (droce_comp_rd.c) */
	uint32_t sr_ord; /* selective repeat: its receive ordinal (stack/wire/droce_srh.h) */
	bool sr;	 /* marked for selective repeat, placement headers (droce_sr.h) */
	uint64_t sent_ns;
	/* BIND_MW: the window, the MR and access; the range is raddr + compare_add bytes, the
	 * new key rkey. */
	struct droce_mw *mw;
	struct droce_mr *bind_mr;
	unsigned int bind_access;
};

enum droce_resp_kind {
	DROCE_RESP_ACK,
	DROCE_RESP_NAK, /* syndrome in .syn */
	DROCE_RESP_READ,
	DROCE_RESP_ATOMIC,
};

struct droce_resp_item {
	enum droce_resp_kind kind;
	uint8_t syn;
	bool first;   /* READ: nothing sent yet */
	bool dup;     /* READ/atomic: answers a duplicate (holds no responder resource) */
	bool sel;     /* NAK: a selective NAK, its MSN field a PSN (droce_sr.h) */
	uint32_t psn; /* next PSN to send (READ), or the PSN acknowledged */
	uint32_t msn;
	uintptr_t va;  /* READ: next byte */
	uint32_t left; /* READ: bytes still to send */
	uint64_t orig; /* atomic: the original value */
};

struct droce_atomic_res {
	uint32_t psn;
	uint64_t orig;
	bool valid;
};

/* Responder's view of the message in progress (IBTA 9.7.5.1). */
enum droce_rmsg {
	DROCE_RMSG_NONE,
	DROCE_RMSG_SEND,
	DROCE_RMSG_WRITE,
};

struct droce_responder {
	uint32_t epsn;
	uint32_t msn;
	bool nak_seq_sent;    /* one sequence-error NAK per gap (IBTA 9.7.5.1.1) */
	bool nak_seq_unacked; /* a sequence NAK went out, no ACK or response since */
	enum droce_rmsg msg;
	bool have_rwqe;
	struct droce_rwqe rwqe; /* its SGEs copied to sges: the ring slot may be reposted */
	struct droce_sge sges[DROCE_MAX_SGE];
	struct droce_cursor cur;
	uintptr_t wr_va;  /* RDMA WRITE: next byte */
	uint32_t wr_left; /* RDMA WRITE: bytes still expected */
	uint32_t wr_len;  /* RDMA WRITE: the RETH length */
	bool uc_drop;	  /* UC: discard the rest of this message */
	/* Sized by max_dest_rd_atomic (droce_resp_reserve): each responder resource's response,
	 * a replay of it, and the ACKs between them. */
	struct droce_resp_item *ring;
	uint32_t ring_mask;
	uint32_t ring_head, ring_tail;
	struct droce_atomic_res *atomics; /* n_atomics results: one per responder resource */
	uint32_t n_atomics, atomic_next;
	uint32_t rd_pending; /* new READ/atomic requests in ring: max_dest_rd_atomic bounds it */
	/* The NAK that ends the QP: sent once the ring (earlier requests' responses) is empty,
	 * then the QP enters ERR (IBTA 9.5, 9.7.5.1, 10.3.1); requests are dropped meanwhile. */
	struct droce_resp_item final_nak;
	bool final_nak_pending;
	enum droce_event_type final_ev; /* raised when the QP enters ERR */
	bool comm_est;			/* COMM_EST raised */
};

struct droce_requester {
	struct droce_swqe *ring;
	struct droce_sge *sges;
	uint8_t *inline_buf;
	uint32_t mask;
	uint32_t max_wr;
	uint32_t head;	       /* posted */
	uint32_t comp;	       /* oldest not completed */
	uint32_t next;	       /* WQE being or to be transmitted */
	uint32_t sent_hi;      /* one past the last WQE ever started (> next after a rewind) */
	uint32_t psn;	       /* next PSN to send */
	uint32_t una;	       /* oldest unacknowledged PSN */
	uint32_t max_psn_sent; /* one past the highest PSN ever sent (ghost-ACK check) */
	uint32_t off;	       /* bytes of ring[next] already sent */
	struct droce_cursor cur;
	uint32_t rd_out; /* READ/atomic outstanding */
	uint32_t since_ackreq;
	/* Completer side */
	struct droce_cursor rd_cur; /* READ response data position in ring[comp] */
	uint32_t retry_left;
	uint32_t rnr_left;
	/* READ/atomic responses past a gap (droce_comp_rd.c), bit psn & (DROCE_RD_WIN - 1) for
	 * PSNs in [una, rd_hi): placed as they come, so a lost one costs one re-request. */
	uint64_t rd_got[DROCE_RD_WIN / 64];   /* answered: response placed, or implicitly ACKed */
	uint64_t rd_asked[DROCE_RD_WIN / 64]; /* missing and re-requested, not known lost again */
	uint32_t rd_hi;			      /* the responder has answered every PSN below it */
	uint32_t rd_hint; /* ring index of the WQE the last response ahead belonged to */
	uint32_t rd_rr_n; /* entries of rd_rr */
	bool rd_scan;	  /* a PSN below rd_hi may want a re-request */
	bool sr_scan;	  /* selective repeat: a PSN may want resending (droce_sr_req.c) */
	uint64_t rto_at;  /* local ACK timeout, UINT64_MAX when nothing is outstanding */
	uint64_t rnr_at;  /* RNR wait end, UINT64_MAX when not waiting */
	bool drained_notified;
	/* Re-requests whose answer may still come, oldest first: [psn, end) asked, wm =
	 * max_psn_sent when it left. Answers come in the order the requests were sent. Last:
	 * read only while rd_rr_n is not 0. */
	struct droce_rd_rereq {
		uint32_t psn, end, wm;
	} rd_rr[DROCE_RD_RR];
};

struct droce_qp {
	struct droce_dev *dev;
	struct droce_pd *pd;
	struct droce_cq *scq;
	struct droce_cq *rcq;
	struct droce_srq *srq;
	enum droce_qp_type type;
	enum droce_qp_state state;
	uint32_t qpn;
	struct droce_qp_attr attr;
	struct droce_qp_cap cap;
	bool sq_sig_all;
	void *context;
	uint32_t mtu;	     /* bytes */
	uint32_t seg;	     /* SEND/WRITE data bytes per packet: mtu less any placement header */
	struct droce_sr *sr; /* selective repeat state (droce_sr.h); NULL: go-back-N */
	uint16_t udp_sport;
	struct droce_pkt tmpl;	     /* connected QPs: every header field that never changes */
	struct droce_hdr_tmpl htmpl; /* the same as bytes, for the IPv4 fast path */
	struct droce_rq rq;
	struct droce_requester req;
	struct droce_inflight inf; /* the requester's cap and RTO (droce_inflight.c) */
	struct droce_responder resp;
	struct droce_cc_state cc;
	const struct droce_cc_ops *cc_ops;
	union droce_cc_params cc_params; /* cc.params points here */
	/* Scheduling */
	struct droce_qp *rnext, *rprev; /* ready list */
	bool ready;
	uint64_t deadline; /* its timer heap key; in the heap when dev->heap_pos[slot] is set */
	uint64_t cc_at;	   /* CC holds the next data packet until then */
	/* A pure ACK waiting for company (droce_ackpol.c): on the device's held list */
	struct droce_ack_policy ackpol; /* this QP's delay and bound, when ackpol_own */
	bool ackpol_own;
	bool ack_held;
	uint32_t ack_reqs; /* AckReq requests it answers */
	uint64_t ack_due;  /* it goes then at the latest; UINT64_MAX when none waits */
	struct droce_qp *hnext, *hprev;
	/* DCQCN notification point: one CNP owed to the data sender (Annex A17.9.3) */
	bool np_pending;
	uint32_t np_dqpn;
	uint64_t np_last;	 /* when the last CNP left; UINT64_MAX: never */
	struct droce_pkt *np_ud; /* UD: the sender's address, from the marked packet */
	uint64_t cnt[DROCE_CNT_MAX];
	uint32_t mcast_n;   /* multicast groups it is attached to (droce_mcast.c) */
	uint32_t mw_n;	    /* type 2 windows bound to it (droce_mw.c) */
	bool mcast_no_self; /* block_self_mcast_lb */
	/* RC/UC receive address check (droce_rx_addr.h): the path's IPv4 addresses as numbers,
	 * set with the AV (droce_qp_build_tmpl); an IPv6 path compares tmpl's GIDs. */
	bool rx_v4;
	uint32_t rx_sip; /* the remote GID's address: a request's source */
	uint32_t rx_dip; /* the local GID's (sgid_index) */
	bool used;
};

/* A multicast group this device has members of: its GID and the UD QPs attached. */
struct droce_mcast_grp {
	uint8_t gid[16];
	uint8_t mac[6]; /* the Ethernet group address its frames arrive on */
	uint32_t nqp;	/* 0: a free slot */
	struct droce_qp *qps[DROCE_MCAST_QPS];
};

struct droce_timer_ent {
	uint64_t key;  /* the QP's deadline */
	uint32_t slot; /* qpn & qp_mask */
};

struct droce_dev {
	struct droce_dev_attr attr;
	bool sr_default; /* new RC QPs use selective repeat (droce_dev_set_recovery) */
	struct droce_io io;
	uint32_t active_mtu;		       /* enum droce_mtu */
	unsigned int rx_parse_flags;	       /* checks offloaded to the NIC */
	uint64_t cnp_interval_ns;	       /* at most one CNP per QP per interval */
	struct droce_inflight_cfg inflight;    /* what new QPs start with */
	const struct droce_cc_ops *cc_default; /* what new QPs start with (NULL: "none") */
	union droce_cc_params cc_params;       /* and with which parameters */
	struct droce_cc_registry cc_reg;       /* algorithms beyond the built-in ones */
	struct droce_pd *pds;
	struct droce_mr *mrs;
	uint32_t mr_mask; /* mrs has mr_mask + 1 slots; key & mr_mask is the slot */
	struct droce_mw *mws;
	uint32_t mw_mask; /* mws has mw_mask + 1 slots; the slot is in bits 8.. of the key */
	struct droce_cq *cqs;
	struct droce_srq *srqs;
	struct droce_ah *ahs;
	struct droce_qp *qps;
	uint32_t qp_mask; /* qps has qp_mask + 1 slots; qpn & qp_mask is the slot */
	uint32_t qpn_gen;
	/* free slots of qps, mrs and cqs: a create finds one without a scan */
	struct droce_slots qp_slots, mr_slots, cq_slots;
	struct droce_qp *ready_head, *ready_tail;
	unsigned int tx_quantum; /* frames a ready QP sends a turn */
	unsigned int tx_turn;	 /* frames turn_qp has sent this turn */
	const struct droce_qp *turn_qp;
	bool turn_end;			/* the frame being built is turn_qp's last of its turn */
	struct droce_ack_policy ackpol; /* order; delay and bound of QPs without their own */
	bool ack_hold;			/* ACKs may wait now (droce_dev_ack_hold) */
	struct droce_qp *held_head;	/* QPs whose ACK waits */
	unsigned int n_held;
	/* Timer min-heap: the key beside the QP's slot and each slot's position in a dense
	 * array, so a sift compares and moves 16 B entries and touches no other QP's state
	 * (with a thousand QPs a sift read another QP's line per level and wrote its index). */
	struct droce_timer_ent *heap;
	uint32_t *heap_pos; /* by QP slot; UINT32_MAX: not in the heap */
	uint32_t heap_n;
	struct droce_async_event ev[DROCE_EVENT_RING];
	uint32_t ev_head, ev_tail;
	uint64_t ev_lost;
	uint64_t now; /* the latest now_ns the caller gave */
	/* Early resends (droce_inflight.c): one QP probes while the device hears nothing */
	bool rto_heard;			  /* a frame came in since the last early resend */
	uint32_t rto_prober;		  /* the QPN whose early resend that was */
	uint64_t cnt_gone[DROCE_CNT_MAX]; /* counters of destroyed QPs */
	struct droce_drop_stats drops;
	/* Received frames' ICRC prefix state, one per QP slot (DestQP & qp_mask, droce_parse_rx):
	 * live QPs never share one, so any number of QPs in turn hit their own */
	struct droce_icrc_v4_cache *icrc_rx;
	struct droce_mcast_grp mcast[DROCE_MCAST_GROUPS];
	/* The GID table's IPv4 addresses as numbers, for the receive address check */
	uint32_t gid_v4[DROCE_MAX_GIDS];
	uint8_t n_gid_v4;
};

/* A READ or atomic: answered by responses, counted against max_rd_atomic. */
static inline bool
droce_wr_is_rd_atomic(enum droce_wr_opcode op)
{
	return op == DROCE_WR_RDMA_READ || op == DROCE_WR_ATOMIC_CMP_AND_SWP ||
	       op == DROCE_WR_ATOMIC_FETCH_AND_ADD;
}

/* One request whatever its length, resent whole: a READ, an atomic, an ATOMIC WRITE. */
static inline bool
droce_wr_one_request(enum droce_wr_opcode op)
{
	return droce_wr_is_rd_atomic(op) || op == DROCE_WR_ATOMIC_WRITE;
}

/* The slot of the first live QP at or above from, or -1: slots 0 and 1 (the special QPs) lie
 * below the slot pool, the rest are the pool's taken slots, so unused slots stay untouched (a
 * table sized for max_qp costs memory only where QPs are). */
static inline int64_t
droce_qp_slot_next(const struct droce_dev *dev, uint32_t from)
{
	int64_t s;

	for (; from < 2; from++)
		if (dev->qps[from].used)
			return from;
	for (s = droce_slots_next_taken(&dev->qp_slots, from); s >= 0;
	     s = droce_slots_next_taken(&dev->qp_slots, (uint32_t)s + 1))
		if (dev->qps[s].used)
			return s;
	return -1;
}

static inline uint32_t
droce_pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static inline uint32_t
droce_mtu_bytes(uint32_t mtu_enum)
{
	return 128u << mtu_enum;
}

/* Packets a message of len bytes spans at the QP's path MTU (a power of two: a shift, not a
 * division); a zero-length message still takes one. */
static inline uint32_t
droce_qp_npkts(const struct droce_qp *qp, uint64_t len)
{
	return len == 0 ? 1 : (uint32_t)((len + qp->mtu - 1) >> __builtin_ctz(qp->mtu));
}

/* Packets a SEND or WRITE of len bytes spans, seg data bytes per packet. */
static inline uint32_t
droce_qp_data_npkts(const struct droce_qp *qp, uint64_t len, uint32_t seg)
{
	if (droce_likely(seg == qp->mtu))
		return droce_qp_npkts(qp, len);
	return len == 0 ? 1 : (uint32_t)((len + seg - 1) / seg);
}

/* Data bytes per packet of a message w: qp->seg once it is marked for selective repeat. */
static inline uint32_t
droce_swqe_seg(const struct droce_qp *qp, const struct droce_swqe *w)
{
	return w->sr ? qp->seg : qp->mtu;
}

/* Data bytes per packet of the message a received request belongs to: only a packet marked
 * for selective repeat (wire/droce_bth.h) to a QP that has it carries a placement header. */
static inline uint32_t
droce_rx_seg(const struct droce_qp *qp, const struct droce_pkt *p)
{
	return qp->sr != NULL && p->srcap ? qp->seg : qp->mtu;
}

static inline void
droce_qp_cnt(struct droce_qp *qp, enum droce_cnt c)
{
	qp->cnt[c]++;
}

/* IBTA 9.6.1.1 (C9-40..42): the low 15 bits of a request's P_Key must match ours (default). */
static inline bool
droce_pkey_ok(uint16_t pkey)
{
	return (pkey & 0x7FFF) == (DROCE_PKEY_DEFAULT & 0x7FFF);
}

/* droce_mcast.c: a datagram for DestQP 0xFFFFFF; a destroyed QP leaves its groups */
/* A datagram the device sends to a group, handed to the group's members on this device. */
void droce_mcast_loop(struct droce_qp *sender, const uint8_t *frame, uint32_t len);
void droce_mcast_rx(struct droce_dev *dev, const struct droce_pkt *p, const uint8_t *frame,
		    uint32_t len, uint64_t now);
void droce_mcast_detach_all(struct droce_qp *qp);
/* A multicast Ethernet address of a group some QP of this device has joined. */
bool droce_mcast_mac_joined(const struct droce_dev *dev, const uint8_t mac[6]);

/* droce_dev.c: scheduling, timers, events, drops */
void droce_dev_event(struct droce_dev *dev, enum droce_event_type type, void *elem);

/* Ready list: QPs that may have something to transmit now (inline: several times per frame). */
static inline void
droce_sched_ready(struct droce_qp *qp)
{
	struct droce_dev *dev = qp->dev;

	if (qp->ready)
		return;
	qp->ready = true;
	qp->rnext = NULL;
	qp->rprev = dev->ready_tail;
	if (dev->ready_tail)
		dev->ready_tail->rnext = qp;
	else
		dev->ready_head = qp;
	dev->ready_tail = qp;
}

static inline void
droce_sched_unready(struct droce_qp *qp)
{
	struct droce_dev *dev = qp->dev;

	if (!qp->ready)
		return;
	if (qp->rprev)
		qp->rprev->rnext = qp->rnext;
	else
		dev->ready_head = qp->rnext;
	if (qp->rnext)
		qp->rnext->rprev = qp->rprev;
	else
		dev->ready_tail = qp->rprev;
	qp->ready = false;
	qp->rnext = qp->rprev = NULL;
}

void droce_sched_deadline(struct droce_qp *qp);

/* Whether the QP has an entry in the device's timer heap (keyed by qp->deadline). */
static inline bool
droce_sched_timed(const struct droce_qp *qp)
{
	return qp->dev->heap_pos[qp->qpn & qp->dev->qp_mask] != UINT32_MAX;
}

void droce_dev_drop(struct droce_dev *dev, enum droce_drop reason);

/* O(1) lookups, inline: one per received frame (QP), one per SGE or R_Key check (MR). */
static inline struct droce_qp *
droce_dev_qp(struct droce_dev *dev, uint32_t qpn)
{
	struct droce_qp *qp = &dev->qps[qpn & dev->qp_mask];

	return qp->used && qp->qpn == qpn ? qp : NULL;
}

static inline struct droce_mr *
droce_dev_mr(struct droce_dev *dev, uint32_t key)
{
	struct droce_mr *mr = &dev->mrs[key & dev->mr_mask];

	return mr->used ? mr : NULL;
}

/* droce_ah.c: whether the AV's source GID (index already checked) and dgid share an IP family */
bool droce_av_same_family(const struct droce_dev *dev, const struct droce_av *av);

/* droce_pd_mr.c: memory checks (IBTA 10.6.3.x, 9.7.4.1.x). */
int droce_mr_check_local(struct droce_pd *pd, const struct droce_sge *sge, unsigned int access);
struct droce_mr *droce_mr_check_remote(struct droce_qp *qp, uint32_t rkey, uint64_t va,
				       uint64_t len, unsigned int access);

/* [va, va + len) inside [start, start + size), without 64-bit overflow (IBTA C9-88, C10-75):
 * for MRs, windows, and a window inside its MR. */
static inline bool
droce_range_in(uint64_t start, uint64_t size, uint64_t va, uint64_t len)
{
	return va >= start && len <= size && va - start <= size - len;
}

/* BIND_MW and LOCAL_INV: executed by the requester, no packet, no PSN (droce_req.c). */
static inline bool
droce_wr_is_local(enum droce_wr_opcode op)
{
	return op == DROCE_WR_BIND_MW || op == DROCE_WR_LOCAL_INV;
}

/* droce_mw.c: memory windows. Check a remote access through a window's key (the window's MR,
 * or NULL); bind (a status: MW_BIND_ERR when refused); invalidate a type 2 window (LOCAL_INV
 * here, SEND with Invalidate from the peer: 0 or -EINVAL); free the windows bound through a QP
 * that goes away. */
struct droce_mr *droce_mw_check_remote(struct droce_qp *qp, uint32_t rkey, uint64_t va,
				       uint64_t len, unsigned int access);
enum droce_wc_status droce_mw_bind(struct droce_qp *qp, const struct droce_swqe *w);
int droce_mw_invalidate(struct droce_qp *qp, uint32_t rkey);
void droce_mw_qp_gone(struct droce_qp *qp);

/* droce_cq.c: push = slot (NULL when the CQ overran: the completion is lost), fill, commit */
void droce_cq_push(struct droce_cq *cq, const struct droce_wc *wc, bool solicited);
struct droce_wc *droce_cq_slot(struct droce_cq *cq);
void droce_cq_commit(struct droce_cq *cq, struct droce_wc *wc, bool solicited);

/* droce_srq.c / droce_qp.c: receive WQEs */
bool droce_rq_pop(struct droce_qp *qp, struct droce_rwqe *out);
void droce_srq_consumed(struct droce_srq *srq);
int droce_rq_init(struct droce_rq *rq, uint32_t max_wr, uint32_t max_sge);
void droce_rq_fini(struct droce_rq *rq);
int droce_rq_post(struct droce_rq *rq, struct droce_recv_wr *wr, struct droce_recv_wr **bad_wr);

/* droce_qp.c */
void droce_qp_error(struct droce_qp *qp);
void droce_qp_sq_error(struct droce_qp *qp);
void droce_qp_flush(struct droce_qp *qp);
void droce_qp_reset(struct droce_qp *qp);
void droce_qp_send_cqe(struct droce_qp *qp, const struct droce_swqe *w, enum droce_wc_status st);
void droce_qp_recv_cqe(struct droce_qp *qp, struct droce_wc *wc, bool solicited);
void droce_qp_recv_count(struct droce_qp *qp, enum droce_wc_status st);
void droce_qp_set_mtu(struct droce_qp *qp, enum droce_mtu mtu);
void droce_qp_build_tmpl(struct droce_qp *qp);
void droce_qp_tmpl_from_av(const struct droce_qp *qp, const struct droce_av *av,
			   struct droce_pkt *p);

/* droce_copy.c: payload between SGE lists and frames */
void droce_cursor_seek(struct droce_cursor *c, const struct droce_sge *sge, uint32_t num_sge,
		       uint32_t pos);
void droce_copy_out(uint8_t *dst, const struct droce_sge *sge, struct droce_cursor *c,
		    uint32_t len);
uint32_t droce_copy_out_crc(uint8_t *dst, const struct droce_sge *sge, struct droce_cursor *c,
			    uint32_t len, uint32_t crc);
void droce_copy_in(const struct droce_sge *sge, struct droce_cursor *c, const uint8_t *src,
		   uint32_t len);

/* droce_req.c: requester transmit; 1 sent, 0 nothing to send, -EAGAIN no buffer,
 * -EBUSY blocked until qp->deadline. */
int droce_req_tx(struct droce_qp *qp, uint64_t now);
void droce_req_go_back(struct droce_qp *qp, uint32_t psn);

/* A WQE waits to be (re)sent and no RNR wait holds it (inline: asked per frame and per ACK). */
static inline bool
droce_req_has_work(const struct droce_qp *qp)
{
	return (qp->req.next != qp->req.head || qp->req.rd_scan || qp->req.sr_scan) &&
	       qp->req.rnr_at == UINT64_MAX;
}

/* droce_comp.c: completer */
void droce_comp_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame,
		   uint64_t now);
void droce_comp_timer(struct droce_qp *qp, uint64_t now);
void droce_comp_arm_rto(struct droce_qp *qp, uint64_t now);
void droce_comp_complete(struct droce_qp *qp, enum droce_wc_status st);

/* droce_comp_rd.c: READ/atomic responses ahead of una, and the re-requests for the gaps */
bool droce_rd_got(const struct droce_qp *qp, uint32_t psn);
void droce_rd_passed(struct droce_qp *qp, uint32_t old_una);
void droce_rd_answered(struct droce_qp *qp, uint32_t hi);
void droce_rd_go_back(struct droce_qp *qp, uint32_t psn);
void droce_rd_heard(struct droce_qp *qp, uint32_t psn);
void droce_rd_timeout(struct droce_qp *qp);
struct droce_swqe *droce_rd_find(struct droce_qp *qp, uint32_t psn);
void droce_rd_ahead(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame);
struct droce_swqe *droce_rd_rereq_next(struct droce_qp *qp, uint32_t *psn, uint32_t *n);
uint32_t droce_rd_first_missing(const struct droce_qp *qp, const struct droce_swqe *w,
				uint32_t psn);
void droce_rd_rereq_sent(struct droce_qp *qp, struct droce_swqe *w, uint32_t psn, uint32_t n);
bool droce_rd_resp_fits(const struct droce_qp *qp, const struct droce_swqe *w,
			const struct droce_pkt *p);

/* resp/: the responder (resp/README.md) */
void droce_resp_rx(struct droce_qp *qp, const struct droce_pkt *p, const uint8_t *frame,
		   uint64_t now);
int droce_resp_tx(struct droce_qp *qp, uint64_t now);

/* A held ACK is no work until it is released (droce_ackpol.c). */
static inline bool
droce_resp_has_work(const struct droce_qp *qp)
{
	return !qp->ack_held &&
	       (qp->resp.final_nak_pending || qp->resp.ring_head != qp->resp.ring_tail);
}

struct droce_resp_item *droce_resp_push(struct droce_qp *qp);
int droce_resp_reserve(struct droce_qp *qp, uint32_t max_dest_rd_atomic);
void droce_resp_free(struct droce_qp *qp);
void droce_resp_ack(struct droce_qp *qp, uint32_t psn);

/* droce_ackpol.c: a pure ACK held back (droce_ackpol.h). note: one was queued or merged at the
 * ring's tail; release: it may go now; drop: the ring was emptied without it; timer: its delay
 * may have ended; release_all: every held ACK to the head (lead) or tail of the ready list. */
void droce_ack_note(struct droce_qp *qp);
void droce_ack_release(struct droce_qp *qp);
void droce_ack_drop(struct droce_qp *qp);
void droce_ack_timer(struct droce_qp *qp, uint64_t now);
void droce_ack_release_all(struct droce_dev *dev, bool lead);

/* droce_np.c: congestion notification point (CNP generation) */
void droce_np_rx(struct droce_qp *qp, const struct droce_pkt *p, uint64_t now);
int droce_np_tx(struct droce_qp *qp, uint64_t now);

/* droce_tx.c: frame output. A connected QP over IPv4 writes its frames from the byte template,
 * reading only the BTH and extension fields of the packet description: those start cleared and
 * the rest of qp->tmpl is not copied. Others (UD, IPv6) build from the whole description. */
static inline void
droce_tx_pkt_init(const struct droce_qp *qp, struct droce_pkt *p)
{
	if (droce_likely(qp->htmpl.valid && qp->type != DROCE_QPT_UD)) {
		p->dqpn = qp->tmpl.dqpn;
		p->se = false;
		p->ackreq = false;
		p->srcap = false;
	} else {
		*p = qp->tmpl;
	}
}

/* droce_tx.c: frame output */
uint8_t *droce_tx_begin(struct droce_qp *qp, struct droce_pkt *p, uint32_t pay_len, void **cookie,
			uint8_t **payload);
/* An ACK or NAK (AETH syndrome syn) from the ACK template; only when qp->htmpl.valid.
 * srcap: the selective-repeat mark. 1 sent, -EAGAIN no buffer. */
int droce_tx_ack(struct droce_qp *qp, uint32_t psn, uint8_t syn, uint32_t msn, bool srcap);
void droce_tx_end(struct droce_qp *qp, struct droce_pkt *p, uint8_t *buf, void *cookie);
/* droce_tx_end() after copying p->pay_len bytes from the SGE list at c to data (large payloads
 * copied and ICRCed in one pass). */
void droce_tx_payload_end(struct droce_qp *qp, struct droce_pkt *p, uint8_t *buf, void *cookie,
			  uint8_t *data, const struct droce_sge *sge, struct droce_cursor *c);

#endif /* DROCE_INTERNAL_H */
