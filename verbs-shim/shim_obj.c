/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The context's op tables and the layout of CQ and QP objects.
 *
 * The data-path entries (post_send, post_recv, post_srq_recv, poll_cq, req_notify_cq) and the
 * extended constructors are real functions that verbs.h's inlines call without a NULL check.
 * XRC / tag-matching SRQs are not offered: create_srq_ex fails with EOPNOTSUPP.
 */
#include <pthread.h>
#include <string.h>

#include "droce_shim.h"

static struct ibv_srq *
shim_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *attr)
{
	(void)c;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

/*
 * Ops left NULL make verbs.h's inlines fail cleanly with EOPNOTSUPP: open_xrcd/close_xrcd
 * (XRC: an xrcd we could not close would crash ibv_close_xrcd, which has no check),
 * alloc_dm, alloc_td, flows, WQs, counters. Memory windows: shim_mw.c.
 */
void
droce_shim_ctx_ops(struct verbs_context *v)
{
	v->context.ops.post_send = droce_shim_post_send;
	v->context.ops.post_recv = droce_shim_post_recv;
	v->context.ops.post_srq_recv = droce_shim_post_srq_recv;
	v->context.ops.poll_cq = droce_shim_poll_cq;
	v->context.ops.req_notify_cq = droce_shim_req_notify_cq;
	v->query_port = droce_shim_query_port;
	v->query_device_ex = droce_shim_query_device_ex;
	v->query_rt_values = droce_shim_query_rt_values;
	v->create_qp_ex = droce_shim_create_qp_ex;
	v->create_cq_ex = droce_shim_create_cq_ex;
	v->create_srq_ex = shim_create_srq_ex;
	droce_shim_mw_ops(v);
}

/* ---- struct ibv_cq_ex readers: they report the completion start/next_poll left in cur */
static inline struct droce_shim_cq *
shim_cq(struct ibv_cq_ex *cq)
{
	return (struct droce_shim_cq *)cq;
}

static int
shim_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask != 0)
		return EINVAL;
	droce_shim_progress();
	return droce_shim_cq_poll_one(shim_cq(cq));
}

static int
shim_next_poll(struct ibv_cq_ex *cq)
{
	return droce_shim_cq_poll_one(shim_cq(cq));
}

static void
shim_end_poll(struct ibv_cq_ex *cq)
{
	(void)cq;
}

static enum ibv_wc_opcode
shim_read_opcode(struct ibv_cq_ex *cq)
{
	return (enum ibv_wc_opcode)shim_cq(cq)->cur.opcode;
}

static uint32_t
shim_read_vendor_err(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.vendor_err;
}

static uint32_t
shim_read_byte_len(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.byte_len;
}

static __be32
shim_read_imm_data(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.imm_data; /* kept in network order, as verbs */
}

static uint32_t
shim_read_qp_num(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.qp_num;
}

static uint32_t
shim_read_src_qp(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.src_qp;
}

static unsigned int
shim_read_wc_flags(struct ibv_cq_ex *cq)
{
	return droce_shim_wc_flags(shim_cq(cq)->cur.wc_flags);
}

static uint32_t
shim_read_slid(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.slid;
}

static uint8_t
shim_read_sl(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.sl;
}

static uint8_t
shim_read_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.dlid_path_bits;
}

static uint64_t
shim_read_completion_ts(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.timestamp;
}

static uint64_t
shim_read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	return shim_cq(cq)->cur.timestamp + shim_cq(cq)->wall_off;
}

/* Fields no completion of ours carries (VLAN, flow tag, tag matching). */

static uint16_t
shim_read_cvlan(struct ibv_cq_ex *cq)
{
	(void)cq;
	return 0;
}

static uint32_t
shim_read_flow_tag(struct ibv_cq_ex *cq)
{
	(void)cq;
	return 0;
}

static void
shim_read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm_info)
{
	(void)cq;
	memset(tm_info, 0, sizeof(*tm_info));
}

void
droce_shim_init_cq(struct droce_shim_cq *cq, struct ibv_context *c, struct ibv_comp_channel *ch,
		   void *cq_context, int cqe)
{
	struct ibv_cq_ex *x = &cq->cq_ex;

	memset(cq, 0, sizeof(*cq));
	x->context = c;
	x->channel = ch;
	x->cq_context = cq_context;
	x->cqe = cqe;
	pthread_mutex_init(&x->mutex, NULL);
	pthread_cond_init(&x->cond, NULL);
	x->comp_events_completed = 0;
	x->async_events_completed = 0;
	x->start_poll = shim_start_poll;
	x->next_poll = shim_next_poll;
	x->end_poll = shim_end_poll;
	x->read_opcode = shim_read_opcode;
	x->read_vendor_err = shim_read_vendor_err;
	x->read_byte_len = shim_read_byte_len;
	x->read_imm_data = shim_read_imm_data;
	x->read_qp_num = shim_read_qp_num;
	x->read_src_qp = shim_read_src_qp;
	x->read_wc_flags = shim_read_wc_flags;
	x->read_slid = shim_read_slid;
	x->read_sl = shim_read_sl;
	x->read_dlid_path_bits = shim_read_dlid_path_bits;
	x->read_completion_ts = shim_read_completion_ts;
	x->read_cvlan = shim_read_cvlan;
	x->read_flow_tag = shim_read_flow_tag;
	x->read_tm_info = shim_read_tm_info;
	x->read_completion_wallclock_ns = shim_read_completion_wallclock_ns;
	if (ch != NULL)
		ch->refcnt++;
}

void
droce_shim_init_qp(struct droce_shim_qp *qp, struct ibv_context *c,
		   const struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *q = &qp->qp;

	memset(qp, 0, sizeof(*qp));
	q->context = c;
	q->qp_context = attr->qp_context;
	q->pd = attr->pd;
	q->send_cq = attr->send_cq;
	q->recv_cq = attr->recv_cq;
	q->srq = attr->srq;
	q->state = IBV_QPS_RESET;
	q->qp_type = attr->qp_type;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->events_completed = 0;
	qp->comp_mask = DROCE_SHIM_VERBS_QP_EX;
	droce_shim_qp_ex_ops(&qp->qp_ex);
}

/* Every shim QP has the verbs_qp layout with the ibv_wr_* table filled. */
struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct droce_shim_qp *q = (struct droce_shim_qp *)qp;

	if (!(q->comp_mask & DROCE_SHIM_VERBS_QP_EX)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &q->qp_ex;
}
