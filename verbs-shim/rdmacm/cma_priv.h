/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CMA_PRIV_H
#define DROCE_CMA_PRIV_H

/*
 * Internals of the librdmacm replacement: rdma_cm ids and event channels on top of the verbs
 * shim, and the IB CM handshake (REQ/REP/RTU, REJ, DREQ/DREP) as MADs over the device's GSI QP
 * (QP1, UD, RoCEv2), so peers are kernel RoCE stacks and ConnectX as well as droce. The CM
 * itself is the engine's (stack/cm: states, resends, timeouts, duplicates); this library adapts
 * it to librdmacm's ids and events (cma_recv.c). One global lock (cma_lock) guards ids, channels
 * and the CM; the agent thread (cma_agent.c) hands it received MADs and its tick.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm/droce_cm.h"
#include "cma_hdr.h"

enum {
	CMA_PRIV_MAX = 224,
	CMA_MAX_RETRIES = 15, /* CM message resends (IBTA 12.6.5 MaxCMRetries) */
	/* A REQ rejected for want of a listener (REJ reason 8) is sent again 8 times, 250 ms
	 * apart (stack/cm's defaults), before RDMA_CM_EVENT_REJECTED: a server restarting its
	 * listener (perftest -R between its connections, a slow emulated peer) is not yet there,
	 * and perftest 4.5's own retry after a REJ uses ids it has freed. */
	CMA_CM_RESPONSE_TIMEOUT = 16, /* 4.096 us * 2^16 = 268 ms between resends */
	CMA_CM_CONNS = 8192,	      /* the CM's connection table (a power of two) */
	/* Local ACK timeout, 4.096 us * 2^17 = 537 ms: the kernel's rdma_cm on RoCE takes a
	 * packet life time of 16 and one more for the ACK; 14 (67 ms) ran out its 7 retries
	 * against a peer that stalls half a second (an emulated rxe under loss). */
	CMA_ACK_TIMEOUT = 17,
	CMA_MRA_SERVICE_TIMEOUT = 24, /* an MRA asks 4.096 us * 2^24 = 69 s more */
	CMA_DEFAULT_RETRY = 7,
	CMA_DEFAULT_RNR_RETRY = 7,
};

enum cma_state {
	CMA_IDLE,	/* created */
	CMA_ADDR_BOUND, /* bind_addr or resolve_addr done */
	CMA_ROUTE_OK,	/* resolve_route done: the peer's AH exists */
	CMA_LISTEN,
	CMA_REQ_SENT, /* active: REQ out, waiting for REP */
	CMA_REQ_RCVD, /* passive: CONNECT_REQUEST reported, accept/reject pending */
	CMA_REP_SENT, /* passive: REP out, waiting for RTU */
	CMA_ESTABLISHED,
	CMA_DREQ_SENT,
	CMA_DISCONNECTED,
};

struct cma_event {
	struct rdma_cm_event ev; /* first: the application holds &ev */
	struct cma_event *next;
	uint8_t priv[CMA_PRIV_MAX];
};

struct cma_channel {
	struct rdma_event_channel ch;	 /* first: ch.fd, read by the application */
	int wfd;			 /* write end of the pipe behind ch.fd */
	struct cma_event *head, *tail;	 /* queued, not yet got */
	unsigned int ids;		 /* ids on this channel */
	bool closed;			 /* destroyed: kept, its readers block for good */
	struct cma_channel *next_closed; /* the kept ones, listed */
};

struct cma_id {
	struct rdma_cm_id id; /* first: the application holds &id */
	struct cma_id *next;  /* all ids (cma_ids) */
	enum cma_state state;
	struct cma_id *listener; /* passive: the id the REQ came to */
	unsigned int events_out; /* got, not yet acked */
	bool destroyed;		 /* rdma_destroy_id waits for events_out */
	/* The peer and the connection. */
	uint8_t sgid[16], dgid[16];
	int sgid_index;
	struct ibv_ah *ah;	    /* to the peer's QP1 */
	struct droce_cm_conn *conn; /* the CM's connection (or SIDR request), until destroy */
	/* passive UD: the SIDR_REQ answered (request ID, transaction), the SIDR_REP sent */
	uint32_t remote_comm_id;
	uint64_t tid;
	uint64_t service_id;
	struct droce_cm_msg *sidr_rep;
	uint32_t remote_qpn, remote_psn, local_psn;
	uint8_t resp_res, init_depth;	      /* ours, as offered / accepted */
	uint8_t retry_count, rnr_retry_count; /* our QP's: the REQ's (passive), the REP's
						 * RNR count (active) */
	uint8_t rep_rnr_retry;		      /* passive: the REP's, what the peer's QP is to use */
	enum ibv_mtu mtu;
	/* Synchronous ids (no channel given): the channel their calls wait on; rdma_create_ep's
	 * QP attributes for rdma_get_request's ids (passive side). */
	struct rdma_event_channel *own_ch;
	struct ibv_qp_init_attr *ep_attr;
	struct ibv_pd *ep_pd;
	bool own_pd; /* id.pd made by this library (no PD given) */
	/* rdma_set_option */
	uint8_t tos;
	bool tos_set;
	uint8_t ack_timeout; /* RDMA_OPTION_ID_ACK_TIMEOUT, when ack_timeout_set */
	bool ack_timeout_set;
	struct cma_mc *mcs; /* multicast groups joined (cma_mc.c) */
};

/* A group an id joined: its address, GID, the join's context, whether id.qp is attached and
 * whether the host interface was joined to it (IGMP/MLD, droce_shim_mcast_report). */
struct cma_mc {
	struct cma_mc *next;
	struct sockaddr_storage addr;
	uint8_t mgid[16];
	void *context;
	bool attached;
	bool reported;
};

/* cma_mc.c: the groups an id leaves when it goes (lock held) */
void cma_mc_free_all(struct cma_id *c);

/* cma_event.c */
int cma_queue_event(struct cma_id *c, enum rdma_cm_event_type type, int status,
		    const struct droce_cm_msg *m, unsigned int priv_off);
void cma_drop_events(struct cma_id *c);
int cma_queue_ud_event(struct cma_id *c, enum rdma_cm_event_type type, int status,
		       const struct rdma_ud_param *u);
void cma_channel_free(struct rdma_event_channel *channel);
int cma_ack_locked(struct cma_event *e);

/* cma_id.c */
extern pthread_mutex_t cma_lock;
extern pthread_cond_t cma_acked; /* an event was acked (rdma_destroy_id waits) */
extern struct ibv_context *cma_verbs;
extern struct cma_id *cma_ids;
struct cma_id *cma_id_of(struct rdma_cm_id *id); /* an id of ours: a cast */
/* The application's id if it is live (EINVAL otherwise); _locked with cma_lock held. */
struct cma_id *cma_id_live(const struct rdma_cm_id *id);
struct cma_id *cma_id_live_locked(const struct rdma_cm_id *id);
uint16_t cma_dst_port(const struct cma_id *c);
void cma_free_id(struct cma_id *c);
struct cma_id *cma_find_peer(uint32_t remote_comm_id, const uint8_t dgid[16]);
struct cma_id *cma_find_listener(uint16_t ps, uint16_t port, const struct sockaddr *dst);
struct cma_id *cma_child(struct cma_id *listener);
int cma_child_route(struct cma_id *c, const struct sockaddr_storage *src,
		    const struct sockaddr_storage *dst, uint16_t port);
int cma_errno(int rc);
uint64_t cma_now_ns(void);
int cma_gid_of(const struct sockaddr *sa, uint8_t gid[16]);
socklen_t cma_sa_len(const struct sockaddr *sa); /* sockaddr_in or sockaddr_in6 */
int cma_sgid_index(const uint8_t gid[16]);

/* cma_park.c: requests for a port nobody listens on yet (the MAD being received is kept) */
bool cma_park(const struct droce_cm_msg *m, uint16_t ps, uint16_t port);
void cma_park_listen(uint16_t ps, uint16_t port);
void cma_park_timers(uint64_t now);
uint64_t cma_park_next(void);

/* cma_agent.c: the GSI QP, its thread, and the CM (cma_cm) */
extern struct droce_cm cma_cm;
int cma_agent_start(void);
void cma_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cma_agent_send(struct droce_cm_conn *conn, const uint8_t gid[16],
		    const uint8_t mad[DROCE_MAD_SIZE]);
struct ibv_ah *cma_agent_ah(const uint8_t dgid[16], int sgid_index, int *err);
uint64_t cma_agent_guid(void);

/* cma_qp.c */
void cma_ah_attr(const struct cma_id *c, struct ibv_ah_attr *a);
int cma_qp_connect(struct cma_id *c);
void cma_qp_error(struct cma_id *c);
enum ibv_mtu cma_port_mtu(void);

/* cma_recv.c: received MADs to the CM, the CM's events to the ids */
void cma_cm_recv(const uint8_t *mad, size_t len, const uint8_t src_gid[16]);
void cma_cm_rerecv(const uint8_t *mad, const uint8_t src_gid[16]); /* lock held */
extern const struct droce_cm_ops cma_cm_ops;
const uint8_t *cma_rx_mad(void); /* the MAD being received (lock held), or NULL */
const uint8_t *cma_rx_gid(void);
/* cma_conn.c: the handshake (lock held) */
void cma_reject_req(struct cma_id *c, const void *priv, uint8_t len);
int cma_req_rcvd(struct droce_cm_conn *conn, const struct droce_cm_msg *m);
void cma_rep_rcvd(struct cma_id *c, const struct droce_cm_msg *m);
void cma_rtu_rcvd(struct cma_id *c);
void cma_rej_rcvd(struct cma_id *c, const struct droce_cm_msg *m);
/* cma_disc.c */
void cma_disconnected(struct cma_id *c);
void cma_cm_release(struct cma_id *c);

/* cma_sync.c: synchronous ids */
int cma_sync_wait(struct cma_id *c, enum rdma_cm_event_type want, struct rdma_cm_event **keep);

/* cma_ud.c: RDMA_PS_UDP ids, SIDR (lock held) */
int cma_req_prepare(struct cma_id *c, struct droce_cm_msg *m, const struct rdma_conn_param *p);
int cma_ud_connect(struct cma_id *c, const struct rdma_conn_param *p);
int cma_ud_accept(struct cma_id *c, const struct rdma_conn_param *p);
int cma_ud_reject(struct cma_id *c, const void *priv, uint8_t len);
void cma_ud_req_rcvd(const struct droce_cm_msg *m);
void cma_ud_rep_rcvd(struct cma_id *c, const struct droce_cm_msg *m);

#endif
