/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_SHIM_H
#define DROCE_SHIM_H

/*
 * Internals of the libibverbs replacement. Every object handed to the application starts
 * with the struct verbs.h expects (the inline data path, verbs_get_ctx_op() and the ibv_wr_*
 * / ibv_cq_ex function tables read them directly), followed by the shim's own fields.
 * Nothing here is exported: the version script keeps only the IBVERBS_* symbols (and
 * droce_shim_gsi.h's entry point, in its own node DROCE_SHIM_1.0).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_rt_config.h"
#include "droce_verbs.h"

/* One device, "droce0", for the one port a runtime configuration describes. */
enum {
	DROCE_SHIM_MAX_DEVS = 1,
	DROCE_SHIM_PORT = 1, /* verbs port numbers start at 1 */
	DROCE_SHIM_GID_TBL_LEN = DROCE_MAX_GIDS,
	/* The route's hop limit a kernel RoCE device puts in a unicast GRH whatever the
	 * program asked (ib_resolve_unicast_gid_dmac): Linux's default TTL and hop limit. */
	DROCE_SHIM_HOP_LIMIT = 64,
};

/* Limits the engine does not publish: the shim's own bounds on what it asks of it. */
enum {
	DROCE_SHIM_MAX_QP_WR = 4096,
	DROCE_SHIM_MAX_SGE = 16,
	/* the engine's bound less one, as mlx5's 4194303: perftest -q 1024 asks 128 x 1024 */
	DROCE_SHIM_MAX_CQE = (1 << 22) - 1,
	DROCE_SHIM_MAX_SRQ_WR = 4096,
};

/* hca_core_clock (kHz): completion timestamps count the engine's nanoseconds. */
#define DROCE_SHIM_CLOCK_KHZ 1000000ull

/* PortInfo encodings (IBTA 14.2.5.6) that verbs.h leaves as plain numbers. */
enum {
	DROCE_SHIM_WIDTH_1X = 1,
	DROCE_SHIM_SPEED_EDR = 32, /* 25.78125 Gb/s per lane */
	DROCE_SHIM_PHYS_LINKUP = 5,
};

/* gid_type of struct ibv_gid_entry / enum ibv_gid_type_sysfs (rdma-core driver.h). */
enum droce_shim_gid_sysfs { DROCE_SHIM_GID_SYSFS_ROCE_V1, DROCE_SHIM_GID_SYSFS_ROCE_V2 };

struct droce_shim_dev {
	struct ibv_device ibdev; /* first: the application holds &ibdev */
	struct droce_rt_config cfg;
	uint8_t gids[DROCE_SHIM_GID_TBL_LEN][16];
	unsigned int num_gids; /* IPv4 (::ffff:a.b.c.d) first when configured, then IPv6 */
	int host_ifindex;      /* addr_mode host: the interface the table follows; 0: own mode */
	uint8_t mac[6];
	uint64_t guid; /* EUI-64 of mac, host order */
	enum ibv_mtu active_mtu;
};

/* Host-address mode: bring d's GID table to the interface's addresses now (the runtime's
 * table once it runs, else the kernel's); a no-op in own mode. Before every read of it. */
void droce_shim_gids_refresh(const struct droce_shim_dev *d);
/* The runtime when this process opened it, else NULL (never opens it). */
struct droce_rt *droce_shim_rt_peek(void);

/* verbs_context must be first: verbs_get_ctx() finds it from &vctx.context by offset. */
struct droce_shim_ctx {
	struct verbs_context vctx;
	struct droce_shim_dev *dev;
	int async_wfd;			 /* write end of the pipe behind context.async_fd */
	struct droce_shim_ctx *reg_next; /* shim_events.c: port events go to every context */
};

struct droce_shim_pd {
	struct ibv_pd pd;
	struct droce_pd *epd;
};

struct droce_shim_mr {
	struct ibv_mr mr;
	struct droce_mr *emr;
	unsigned int access; /* as registered, for ibv_rereg_mr */
};

/* rdma-core's verbs_cq layout: ibv_cq_ex_to_cq() is a cast. */
struct droce_shim_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
	struct droce_cq *ecq;
	struct droce_wc cur; /* the completion ibv_start_poll/next_poll point at */
	uint64_t wall_off;   /* CLOCK_REALTIME ns minus the engine's clock, at creation */
	struct droce_shim_cq *armed_next; /* shim_events.c: armed on a channel */
	uint64_t ev_base;		  /* the engine's event count when armed */
	uint32_t ev_reported;		  /* channel events read by the application (cq.mutex) */
	uint32_t async_reported;	  /* CQ_ERR events read by the application (cq.mutex) */
	struct droce_shim_cq *reg_next;	  /* shim_events.c: to name a CQ_ERR event's CQ */
	bool armed;
};

/* rdma-core's verbs_qp layout: ibv_qp_to_qp_ex() and ibv_wr_* rely on it. */
enum { DROCE_SHIM_VERBS_QP_EX = 1 << 1 };

struct droce_shim_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	void *xrcd;
	struct droce_qp *eqp;
	uint32_t async_reported;	/* async events read by the application (qp.mutex) */
	struct droce_shim_qp *reg_next; /* shim_events.c: to validate an event's QP */
	int wr_err;			/* first failure inside an ibv_wr_start() batch */
	struct {			/* the ibv_wr_* batch (shim_wr.c), sized at creation */
		struct droce_send_wr *batch;
		struct droce_sge *sges; /* max_sge per WR */
		uint8_t *inl;		/* inline bytes, copied by the setters */
		struct droce_send_wr *cur;
		uint32_t cap, n, max_sge, max_inline;
		size_t inl_size, inl_used;
	} wr;
};

struct droce_shim_mw {
	struct ibv_mw mw;
	struct droce_mw *emw;
};

struct droce_shim_ah {
	struct ibv_ah ah;
	struct droce_ah *eah;
};

struct droce_shim_srq {
	struct ibv_srq srq;
	struct droce_srq *esrq;
	struct ibv_srq_attr attr;	 /* as set: the engine has no query */
	uint32_t async_reported;	 /* async events read by the application (srq.mutex) */
	struct droce_shim_srq *reg_next; /* shim_events.c: to name an SRQ event's SRQ */
};

/* Exported, but declared by rdma-core's driver.h, which Debian does not install. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
const char *ibv_get_sysfs_path(void);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum droce_shim_gid_sysfs *type);

static inline struct droce_shim_ctx *
droce_shim_ctx(struct ibv_context *c)
{
	return (struct droce_shim_ctx *)((char *)c - offsetof(struct verbs_context, context));
}

/* shim_dev.c */
struct droce_shim_dev *droce_shim_devices(unsigned int *n);
bool droce_shim_is_dev(const struct ibv_device *d);
void droce_shim_device_attr(const struct droce_shim_dev *d, struct ibv_device_attr *a);
int droce_shim_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t len);
int droce_shim_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			       struct ibv_device_attr_ex *a, size_t len);
int droce_shim_query_rt_values(struct ibv_context *c, struct ibv_values_ex *v);

/* shim_ctx.c: where the data path delivers completion-channel and asynchronous events */
int droce_shim_cq_notify(struct ibv_cq *cq);
int droce_shim_post_async(struct ibv_context *context, const struct ibv_async_event *ev);

/* shim_engine.c: the pmd-glue runtime behind the verbs, opened on first use */
struct droce_rt;
struct droce_rt *droce_shim_rt(const struct droce_shim_dev *d);
/* Run fn where the engine lives (any thread); _send also moves the loop once at once, for
 * verbs that queue work (posts). progress: one loop iteration for a poller (shared model);
 * these three leave the iteration's ACKs for the next verb's burst (shim_engine.c). flush:
 * one iteration that sends everything. */
int droce_shim_call(int (*fn)(struct droce_rt *rt, void *arg), void *arg);
int droce_shim_call_send(int (*fn)(struct droce_rt *rt, void *arg), void *arg);
void droce_shim_progress(void);
void droce_shim_flush(void);
/* fn where the engine lives, run by the next thread that drives the loop (or, after 2 ms
 * without one, by the caller): for background threads, which must not hold the engine
 * lock where they can be preempted for long (shim_engine.c). */
int droce_shim_call_deferred(int (*fn)(struct droce_rt *rt, void *arg), void *arg);
int droce_shim_resolve(struct droce_av *av);

/* shim_ah.c: an ibv_ah_attr's GRH as an engine address vector (0 or -EINVAL) */
int droce_shim_av(struct droce_av *av, const struct ibv_ah_attr *a);

/* The object an async event names, by its type (IBTA 11.6.3's affiliated events). */
enum droce_shim_ev_obj {
	DROCE_SHIM_EV_UNAFFILIATED, /* port and device events */
	DROCE_SHIM_EV_CQ,
	DROCE_SHIM_EV_QP,
	DROCE_SHIM_EV_SRQ,
};

static inline enum droce_shim_ev_obj
droce_shim_ev_obj(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return DROCE_SHIM_EV_CQ;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return DROCE_SHIM_EV_QP;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return DROCE_SHIM_EV_SRQ;
	default:
		return DROCE_SHIM_EV_UNAFFILIATED;
	}
}

/* shim_events.c: completion-channel and async event delivery */
int droce_shim_events_start(void);
void droce_shim_events_stop(void);
void droce_shim_events_kick(void);
int droce_shim_cq_arm(struct droce_shim_cq *cq, bool solicited_only);
void droce_shim_cq_disarm(struct droce_shim_cq *cq);
/*
 * Objects events may name, tracked from creation to destruction. An event read for an object
 * no longer tracked is dropped (it may still sit in a pipe when the object goes); one read
 * for a tracked object is counted, and untracking waits until every counted event is
 * acknowledged (verbs: destroy waits for ibv_ack_cq_events / ibv_ack_async_event).
 */
void droce_shim_track_ctx(struct droce_shim_ctx *c, bool add);
void droce_shim_track_cq(struct droce_shim_cq *cq, bool add);
void droce_shim_track_srq(struct droce_shim_srq *srq, bool add);
void droce_shim_track_qp(struct droce_shim_qp *qp, bool add);
bool droce_shim_take_cq_event(struct ibv_cq *cq);
bool droce_shim_take_async_event(const struct ibv_async_event *ev);

/* shim_cq.c, shim_qp.c, shim_srq.c: the data path behind the context's ops */
int droce_shim_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int droce_shim_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct ibv_cq_ex *droce_shim_create_cq_ex(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *a);
int droce_shim_cq_poll_one(struct droce_shim_cq *cq);
unsigned int droce_shim_wc_flags(unsigned int engine_flags);
struct ibv_qp *droce_shim_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *a);
int droce_shim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int droce_shim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int droce_shim_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);

/* shim_obj.c: object layouts and the ops the context points at */
void droce_shim_ctx_ops(struct verbs_context *v);
void droce_shim_init_cq(struct droce_shim_cq *cq, struct ibv_context *c,
			struct ibv_comp_channel *ch, void *cq_context, int cqe);
void droce_shim_init_qp(struct droce_shim_qp *qp, struct ibv_context *c,
			const struct ibv_qp_init_attr_ex *attr);

/* shim_mw.c: memory window ops, and a BIND_MW request in engine form (0 or -EINVAL) */
void droce_shim_mw_ops(struct verbs_context *v);
int droce_shim_bind_wr(struct droce_send_wr *d, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info);

/* shim_wr.c: the ibv_wr_* table of struct ibv_qp_ex and its batch storage */
void droce_shim_qp_ex_ops(struct ibv_qp_ex *qpx);
int droce_shim_wr_alloc(struct droce_shim_qp *q, uint64_t send_ops, const struct ibv_qp_cap *cap);
void droce_shim_wr_free(struct droce_shim_qp *q);

/* Internal errors are -errno; verbs return a positive errno and set errno as well. */
static inline int
droce_shim_fail(int err)
{
	errno = err;
	return err;
}

/* Constructors fail with NULL and errno (the verbs contract) from an internal -errno. */
static inline void *
droce_shim_null(int rc)
{
	errno = rc < 0 ? -rc : rc;
	return NULL;
}

#endif /* DROCE_SHIM_H */
