/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CM_H
#define DROCE_CM_H

/*
 * The IB Communication Manager (IBTA chapter 12) as an I/O-free state machine: MADs in
 * (droce_cm_recv), MADs out (ops->send), consumer events out (ops->event), time as a parameter
 * and timers run by the caller's droce_cm_tick. One struct droce_cm per port; its connections
 * live in a table the caller gives at init (no allocation afterwards).
 *
 * Connection states follow IBTA 12.9.2's diagrams, the passive "MRA sent" and the active
 * "MRA received" folded into REQ_RCVD and REQ_SENT (a flag and a longer timer):
 *
 *   active:  IDLE -connect-> REQ_SENT -REP-> REP_RCVD -rtu-> ESTABLISHED
 *   passive: REQ -> REQ_RCVD -accept-> REP_SENT -RTU-> ESTABLISHED
 *   either:  ESTABLISHED -disconnect-> DREQ_SENT -DREP or timeout-> TIMEWAIT
 *            ESTABLISHED -DREQ (DREP sent)-> TIMEWAIT -> CLOSED
 *   REJ sent or received, a timeout: TIMEWAIT -> CLOSED
 *
 * TimeWait keeps the last MAD sent, so that a late duplicate (a REQ, a DREQ) is answered with
 * the same REJ or DREP (IBTA 12.9.8.3/12.9.8.4); a REP received twice is answered with the RTU
 * again. A slot is reused once CLOSED and released by its consumer (droce_cm_release).
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_cm_msg.h"

enum droce_cm_state {
	DROCE_CM_IDLE,	   /* free slot */
	DROCE_CM_REQ_SENT, /* active: REQ out, waiting for REP (or an MRA's longer wait) */
	DROCE_CM_REP_RCVD, /* active: REP reported, the consumer sends RTU or REJ */
	DROCE_CM_REQ_RCVD, /* passive: REQ reported, the consumer accepts or rejects */
	DROCE_CM_REP_SENT, /* passive: REP out, waiting for RTU */
	DROCE_CM_ESTABLISHED,
	DROCE_CM_DREQ_SENT,
	DROCE_CM_TIMEWAIT,	/* ended: strays are answered or dropped */
	DROCE_CM_CLOSED,	/* ended, TimeWait over */
	DROCE_CM_SIDR_REQ_SENT, /* SIDR_REQ out, waiting for SIDR_REP (IBTA 12.11) */
	DROCE_CM_STATE_MAX,
};

/* What the consumer hears, at most once each per connection (ESTABLISHED... END once). */
enum droce_cm_event {
	DROCE_CM_EV_REQ,	  /* passive: a new connection (m: the REQ) */
	DROCE_CM_EV_REP,	  /* active: the REP (m); answer droce_cm_rtu or _reject */
	DROCE_CM_EV_ESTABLISHED,  /* passive: RTU received (m: the RTU, or NULL) */
	DROCE_CM_EV_REJECTED,	  /* a REJ ended it (m: the REJ, reason in m->reason) */
	DROCE_CM_EV_TIMEOUT,	  /* REQ or REP unanswered after every retry */
	DROCE_CM_EV_DISCONNECTED, /* DREQ received, or ours answered or timed out */
	DROCE_CM_EV_SIDR_REQ,	  /* m: a SIDR_REQ; answer with droce_cm_sidr_reply */
	DROCE_CM_EV_SIDR_REP,	  /* m: the SIDR_REP of our SIDR_REQ */
	DROCE_CM_EV_SIDR_TIMEOUT,
	DROCE_CM_EV_MAX,
};

/* Why a received MAD changed nothing (each counted in droce_cm.drops). */
enum droce_cm_drop {
	DROCE_CM_DROP_NONE,
	DROCE_CM_DROP_MALFORMED,       /* not a CM MAD this codec reads (IBTA 13.4.2, 12.6) */
	DROCE_CM_DROP_UNSUPPORTED,     /* LAP, APR, ClassPortInfo */
	DROCE_CM_DROP_UNKNOWN_COMM_ID, /* names a local comm ID we do not have (IBTA 12.6) */
	DROCE_CM_DROP_WRONG_PEER,      /* the remote comm ID differs from the connection's */
	DROCE_CM_DROP_STATE,	       /* not expected in the connection's state (IBTA 12.9.2) */
	DROCE_CM_DROP_NO_SLOT,	       /* a REQ and no free connection slot */
	DROCE_CM_DROP_CONSUMER,	       /* the consumer chose not to answer a REQ (yet) */
	DROCE_CM_DROP_MAX,
};

/* Timers and retries. Times as IBTA encodes them: 4.096 us * 2^t (IBTA 12.6.5). */
struct droce_cm_params {
	uint8_t mra_service_timeout;   /* what our MRAs ask for */
	uint8_t no_listener_retries;   /* a REQ refused with REJ reason 8 is sent again... */
	uint64_t no_listener_delay_ns; /* ...this long after the REJ */
	uint64_t timewait_ns;	       /* TimeWait (IBTA 12.9.8.4) */
	uint8_t sidr_retries;	       /* SIDR_REQ resends (IBTA 12.11.2) */
	uint8_t sidr_timeout;
};

struct droce_cm;
struct droce_cm_conn;

struct droce_cm_ops {
	/* One MAD to the GSI of the port whose GID is gid; conn NULL for a stateless answer. */
	void (*send)(void *ctx, struct droce_cm_conn *conn, const uint8_t gid[16],
		     const uint8_t mad[DROCE_MAD_SIZE]);
	/* An event. For DROCE_CM_EV_REQ the return says what to do: 0 the consumer will accept
	 * or reject; > 0 a REJ reason the CM sends now (e.g. 8, no listener); < 0 no answer
	 * (the REQ is forgotten: the peer's resend comes back). Other events: return 0. */
	int (*event)(void *ctx, struct droce_cm_conn *conn, enum droce_cm_event ev,
		     const struct droce_cm_msg *m);
};

/* One connection (or a SIDR request). Read-only for the consumer but for user. */
struct droce_cm_conn {
	enum droce_cm_state state;
	bool active;	       /* we sent the REQ */
	bool owned;	       /* the consumer holds it (until droce_cm_release) */
	bool mra_rcvd;	       /* the peer asked for a longer wait */
	bool no_listener_wait; /* REJ 8 seen, the REQ not sent again yet */
	void *user;
	uint32_t local_comm_id, remote_comm_id;
	uint64_t tid; /* of the REQ (or SIDR_REQ), then of our DREQ */
	uint8_t peer_gid[16];
	uint32_t remote_qpn; /* from REQ/REP: a DREQ names it */
	/* Resends: the last MAD sent, when it is due again, how many times more. */
	uint8_t mad[DROCE_MAD_SIZE];
	uint64_t deadline_ns; /* 0: no timer */
	uint64_t timeout_ns;  /* one wait for an answer */
	uint8_t retries_left;
	uint8_t max_retries;
	uint8_t no_listener_left;
	/* the table's links */
	int32_t hash_head; /* bucket i's first connection (index), -1 none */
	int32_t hash_next;
	int32_t free_next;
	uint16_t gen; /* bumped on reuse: stale comm IDs do not match */
};

struct droce_cm {
	struct droce_cm_conn *conns;
	uint32_t n; /* a power of two, at most 1 << 16 */
	uint32_t idx_bits;
	uint32_t id_prefix; /* the top id_prefix_bits of every local comm ID */
	uint8_t id_prefix_bits;
	int32_t free_head;
	uint64_t tid_next;
	struct droce_cm_ops ops;
	void *ctx;
	struct droce_cm_params p;
	uint64_t drops[DROCE_CM_DROP_MAX];
	uint64_t sent, resent, received;
};

/* The defaults: 8 reason-8 retries 250 ms apart, MRA 2^24 (as kernel rdma_cm), TimeWait 5 s. */
void droce_cm_params_default(struct droce_cm_params *p);

/* n a power of two (1..65536), conns n slots. seed: the first transaction ID. 0 or -EINVAL. */
int droce_cm_init(struct droce_cm *cm, struct droce_cm_conn *conns, uint32_t n,
		  const struct droce_cm_ops *ops, void *ctx, const struct droce_cm_params *p,
		  uint64_t seed);

/* Every local comm ID (and SIDR RequestID) made from now on starts with the bits prefix
 * (droce-portd routes a MAD to its program by them, stack/droce_portd.h); bits 0 clears it.
 * 0, or -EINVAL when prefix has more than bits bits or the table's index leaves no room. */
int droce_cm_set_id_prefix(struct droce_cm *cm, uint32_t prefix, unsigned int bits);

/* Active: send req (its REQ fields filled by the caller but the transaction and local comm
 * IDs, which the CM sets); retries per req's RemoteCMResponseTimeout and MaxCMRetries. */
int droce_cm_connect(struct droce_cm *cm, const uint8_t gid[16], struct droce_cm_msg *req,
		     void *user, uint64_t now_ns, struct droce_cm_conn **out);
/* Passive, in REQ_RCVD: rep's REP fields (comm IDs and transaction set by the CM). */
int droce_cm_accept(struct droce_cm *cm, struct droce_cm_conn *c, struct droce_cm_msg *rep,
		    uint64_t now_ns);
/* REQ_RCVD (a REQ) or REP_RCVD (a REP refused): REJ with reason, ARI and private data. */
int droce_cm_reject(struct droce_cm *cm, struct droce_cm_conn *c, uint16_t reason, const void *ari,
		    uint8_t ari_len, const void *priv, uint8_t priv_len, uint64_t now_ns);
/* Active, in REP_RCVD: RTU, ESTABLISHED. */
int droce_cm_rtu(struct droce_cm *cm, struct droce_cm_conn *c, const void *priv, uint8_t priv_len,
		 uint64_t now_ns);
/* ESTABLISHED or REP_SENT: DREQ, DREQ_SENT; 0 with nothing sent if already ending. */
int droce_cm_disconnect(struct droce_cm *cm, struct droce_cm_conn *c, const void *priv,
			uint8_t priv_len, uint64_t now_ns);
/* The consumer lets go: no more events; a live connection is ended (DREQ, or REJ for a REQ
 * not answered), and the slot is reused after TimeWait. */
void droce_cm_release(struct droce_cm *cm, struct droce_cm_conn *c, uint64_t now_ns);

/* SIDR (IBTA 12.11): a request with resends, and a stateless reply to a received one. */
int droce_cm_sidr_req(struct droce_cm *cm, const uint8_t gid[16], struct droce_cm_msg *req,
		      void *user, uint64_t now_ns, struct droce_cm_conn **out);
int droce_cm_sidr_reply(struct droce_cm *cm, const uint8_t gid[16], struct droce_cm_msg *rep);

/* A received MAD from the port with GID src_gid. Returns what was dropped (NONE if used). */
enum droce_cm_drop droce_cm_recv(struct droce_cm *cm, const uint8_t *mad, uint32_t len,
				 const uint8_t src_gid[16], uint64_t now_ns);
/* Resends, timeouts, TimeWait's end; returns the next deadline (0: none): call it again by
 * then, or sooner after a call that sent a MAD (it may have set an earlier one). */
uint64_t droce_cm_tick(struct droce_cm *cm, uint64_t now_ns);

const char *droce_cm_state_name(enum droce_cm_state s);
const char *droce_cm_event_name(enum droce_cm_event e);
const char *droce_cm_drop_name(enum droce_cm_drop d);
/* 4.096 us * 2^t in ns (t up to 31) */
uint64_t droce_cm_time_ns(uint8_t t);

#endif /* DROCE_CM_H */
