/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs on the engine: create, modify (the address vector's MAC resolved by the runtime's
 * ARP/ND), query, destroy, and the post verbs. Work requests are converted one at a time into
 * the engine's form on the stack: no allocation on the data path.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_rt.h"
#include "droce_shim.h"
#include "droce_shim_gsi.h"

struct shim_qp_req {
	struct droce_pd *pd;
	struct droce_qp *qp;
	struct droce_qp_init_attr init;
	struct droce_qp_attr attr;
	unsigned int mask;
	enum ibv_qp_type type;
	struct ibv_send_wr *swr;
	struct ibv_recv_wr *rwr;
	void *bad;
};

static int
shim_qp_create_fn(struct droce_rt *rt, void *arg)
{
	struct shim_qp_req *r = arg;
	union droce_cc_params ccp; /* qp_cc's parameters, copied by the QP */
	int err = 0;

	err = droce_rt_qp_cc(rt, DROCE_RT_QP_NEXT, &r->init, &ccp);
	if (err != 0)
		return err;
	r->qp = droce_qp_create(r->pd, &r->init, &err);
	if (r->qp == NULL)
		return -err;
	/* the caps the QP really has, for the caller's init_attr */
	return droce_qp_query(r->qp, &r->attr, &r->init);
}

static int
shim_qp_destroy_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return droce_qp_destroy(((struct shim_qp_req *)arg)->qp);
}

static int
shim_qp_modify_fn(struct droce_rt *rt, void *arg)
{
	struct shim_qp_req *r = arg;

	(void)rt;
	return droce_qp_modify(r->qp, &r->attr, r->mask);
}

static int
shim_qp_query_fn(struct droce_rt *rt, void *arg)
{
	struct shim_qp_req *r = arg;

	(void)rt;
	return droce_qp_query(r->qp, &r->attr, &r->init);
}

static void
shim_cap_out(struct ibv_qp_cap *o, const struct droce_qp_cap *c)
{
	o->max_send_wr = c->max_send_wr;
	o->max_recv_wr = c->max_recv_wr;
	o->max_send_sge = c->max_send_sge;
	o->max_recv_sge = c->max_recv_sge;
	o->max_inline_data = c->max_inline_data;
}

/* gsi: the engine's QP1 (droce_qp_init_attr.gsi) instead of a numbered QP. */
static struct ibv_qp *
shim_create_qp(struct ibv_context *c, struct ibv_qp_init_attr_ex *a, bool gsi)
{
	struct shim_qp_req r;
	struct droce_shim_qp *qp;
	uint32_t flags;
	int rc;

	/* RC, UC, UD only (no XRC, raw packet, RSS, TSO) */
	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return droce_shim_null(-EOPNOTSUPP);
	/* The one creation flag: a UD QP's own multicast does not come back to it. */
	flags = (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ? a->create_flags : 0;
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL ||
	    (flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) != 0)
		return droce_shim_null(-EINVAL);
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD)
		return droce_shim_null(-EOPNOTSUPP);
	if (a->send_cq == NULL || a->recv_cq == NULL)
		return droce_shim_null(-EINVAL);
	/* No more than ibv_query_device advertises (and a post can carry), as rxe checks. */
	if (a->cap.max_send_wr > DROCE_SHIM_MAX_QP_WR ||
	    a->cap.max_recv_wr > DROCE_SHIM_MAX_QP_WR || a->cap.max_send_sge > DROCE_SHIM_MAX_SGE ||
	    a->cap.max_recv_sge > DROCE_SHIM_MAX_SGE)
		return droce_shim_null(-EINVAL);
	memset(&r, 0, sizeof(r));
	r.pd = ((struct droce_shim_pd *)a->pd)->epd;
	r.init.qp_type = (enum droce_qp_type)a->qp_type; /* equal to IBV_QPT_* */
	r.init.send_cq = ((struct droce_shim_cq *)a->send_cq)->ecq;
	r.init.recv_cq = ((struct droce_shim_cq *)a->recv_cq)->ecq;
	if (a->srq != NULL)
		r.init.srq = ((struct droce_shim_srq *)a->srq)->esrq;
	r.init.cap.max_send_wr = a->cap.max_send_wr;
	r.init.cap.max_recv_wr = a->cap.max_recv_wr;
	r.init.cap.max_send_sge = a->cap.max_send_sge;
	r.init.cap.max_recv_sge = a->cap.max_recv_sge;
	r.init.cap.max_inline_data = a->cap.max_inline_data;
	r.init.sq_sig_all = a->sq_sig_all != 0;
	r.init.gsi = gsi;
	r.init.block_self_mcast_lb = (flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) != 0;
	qp = malloc(sizeof(*qp));
	if (qp == NULL)
		return droce_shim_null(-ENOMEM);
	droce_shim_init_qp(qp, c, a);
	r.init.qp_context = qp;
	rc = droce_shim_call(shim_qp_create_fn, &r);
	if (rc != 0) {
		if (r.qp != NULL)
			droce_shim_call(shim_qp_destroy_fn, &r);
		free(qp);
		return droce_shim_null(rc);
	}
	qp->eqp = r.qp;
	qp->qp.qp_num = droce_qp_num(r.qp);
	droce_shim_track_qp(qp, true);
	shim_cap_out(&a->cap, &r.init.cap);
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		rc = droce_shim_wr_alloc(qp, a->send_ops_flags, &a->cap);
		if (rc != 0) {
			droce_shim_track_qp(qp, false);
			droce_shim_call(shim_qp_destroy_fn, &r);
			free(qp);
			return droce_shim_null(rc);
		}
	}
	return &qp->qp;
}

struct ibv_qp *
droce_shim_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	return shim_create_qp(c, a, false);
}

/* droce_shim_gsi.h. Every shim object lives on shard 0's device (droce_rt_dev), so the GSI
 * does too: the engine refuses QPN 1 elsewhere. */
struct ibv_qp *
droce_shim_create_gsi_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex x;
	struct ibv_qp *qp;

	/* QP1 is UD (IBTA 11.2.5, Annex A17.5.8) */
	if (pd == NULL || attr == NULL || attr->qp_type != IBV_QPT_UD)
		return droce_shim_null(-EINVAL);
	memset(&x, 0, sizeof(x));
	memcpy(&x, attr, sizeof(*attr)); /* ibv_qp_init_attr is ibv_qp_init_attr_ex's head */
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	x.pd = pd;
	qp = shim_create_qp(pd->context, &x, true);
	if (qp != NULL)
		attr->cap = x.cap;
	return qp;
}

struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex x;
	struct ibv_qp *qp;

	memset(&x, 0, sizeof(x));
	memcpy(&x, attr, sizeof(*attr)); /* ibv_qp_init_attr is ibv_qp_init_attr_ex's head */
	x.comp_mask = IBV_QP_INIT_ATTR_PD;
	x.pd = pd;
	qp = droce_shim_create_qp_ex(pd->context, &x);
	if (qp != NULL)
		attr->cap = x.cap;
	return qp;
}

int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct droce_shim_qp *q = (struct droce_shim_qp *)qp;
	struct shim_qp_req r = { .qp = q->eqp };
	int rc;

	droce_shim_flush(); /* what the QP owes the peer (its last ACK) leaves first */
	rc = droce_shim_call(shim_qp_destroy_fn, &r);
	if (rc != 0)
		return droce_shim_fail(-rc);
	droce_shim_track_qp(q, false);
	droce_shim_wr_free(q);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	free(q);
	return 0;
}

/* Masks the engine knows share IBV_QP_*'s bits 0..20; anything above is unsupported. */
enum { SHIM_QP_MASKS = (1 << 21) - 1 };

int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct droce_shim_qp *q = (struct droce_shim_qp *)qp;
	struct shim_qp_req r;
	int rc;

	if ((unsigned int)mask & ~(unsigned int)SHIM_QP_MASKS)
		return droce_shim_fail(EOPNOTSUPP);
	memset(&r, 0, sizeof(r));
	r.qp = q->eqp;
	r.mask = (unsigned int)mask;
	r.attr.qp_state = (enum droce_qp_state)a->qp_state;
	r.attr.cur_qp_state = (enum droce_qp_state)a->cur_qp_state;
	r.attr.path_mtu = (enum droce_mtu)a->path_mtu;
	r.attr.qkey = a->qkey;
	r.attr.rq_psn = a->rq_psn;
	r.attr.sq_psn = a->sq_psn;
	r.attr.dest_qp_num = a->dest_qp_num;
	r.attr.qp_access_flags = a->qp_access_flags;
	r.attr.pkey_index = a->pkey_index;
	r.attr.en_sqd_async_notify = a->en_sqd_async_notify;
	r.attr.max_rd_atomic = a->max_rd_atomic;
	r.attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	r.attr.min_rnr_timer = a->min_rnr_timer;
	r.attr.port_num = a->port_num;
	r.attr.timeout = a->timeout;
	r.attr.retry_cnt = a->retry_cnt;
	r.attr.rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_AV) {
		rc = droce_shim_av(&r.attr.ah_attr, &a->ah_attr);
		if (rc == 0)
			rc = droce_shim_resolve(&r.attr.ah_attr);
		if (rc != 0)
			return droce_shim_fail(-rc);
	}
	rc = droce_shim_call(shim_qp_modify_fn, &r);
	if (rc != 0)
		return droce_shim_fail(-rc);
	if (mask & IBV_QP_STATE)
		qp->state = a->qp_state;
	return 0;
}

int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init)
{
	struct droce_shim_qp *q = (struct droce_shim_qp *)qp;
	struct shim_qp_req r;
	int rc;

	/* everything is cheap to report; mask only decides whether qp->state follows */
	memset(&r, 0, sizeof(r));
	r.qp = q->eqp;
	rc = droce_shim_call(shim_qp_query_fn, &r);
	if (rc != 0)
		return droce_shim_fail(-rc);
	memset(a, 0, sizeof(*a));
	a->qp_state = (enum ibv_qp_state)r.attr.qp_state;
	a->cur_qp_state = (enum ibv_qp_state)r.attr.cur_qp_state;
	a->path_mtu = (enum ibv_mtu)r.attr.path_mtu;
	a->path_mig_state = IBV_MIG_MIGRATED;
	a->qkey = r.attr.qkey;
	a->rq_psn = r.attr.rq_psn;
	a->sq_psn = r.attr.sq_psn;
	a->dest_qp_num = r.attr.dest_qp_num;
	a->qp_access_flags = r.attr.qp_access_flags;
	shim_cap_out(&a->cap, &r.attr.cap);
	memcpy(a->ah_attr.grh.dgid.raw, r.attr.ah_attr.dgid, 16);
	a->ah_attr.grh.sgid_index = r.attr.ah_attr.sgid_index;
	a->ah_attr.grh.traffic_class = r.attr.ah_attr.traffic_class;
	a->ah_attr.grh.hop_limit = r.attr.ah_attr.hop_limit;
	a->ah_attr.grh.flow_label = r.attr.ah_attr.flow_label;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = r.attr.port_num;
	a->pkey_index = r.attr.pkey_index;
	a->en_sqd_async_notify = r.attr.en_sqd_async_notify;
	a->sq_draining = r.attr.sq_draining;
	a->max_rd_atomic = r.attr.max_rd_atomic;
	a->max_dest_rd_atomic = r.attr.max_dest_rd_atomic;
	a->min_rnr_timer = r.attr.min_rnr_timer;
	a->port_num = r.attr.port_num;
	a->timeout = r.attr.timeout;
	a->retry_cnt = r.attr.retry_cnt;
	a->rnr_retry = r.attr.rnr_retry;
	if (init != NULL) {
		memset(init, 0, sizeof(*init));
		init->qp_context = qp->qp_context;
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
		init->srq = qp->srq;
		shim_cap_out(&init->cap, &r.init.cap);
		init->qp_type = qp->qp_type;
		init->sq_sig_all = r.init.sq_sig_all;
	}
	/* As libibverbs' ibv_query_qp: the QP's state field follows what was read (after an
	 * async error moved the QP to ERR, a program reading qp->state sees it). */
	if (mask & IBV_QP_STATE)
		qp->state = a->qp_state;
	return 0;
}

/* ---- Posting: one WR at a time, converted on the stack ---- */
static int
shim_sges(struct droce_sge *out, const struct ibv_sge *in, int n)
{
	int i;

	if (n < 0 || n > DROCE_SHIM_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		out[i].addr = in[i].addr;
		out[i].length = in[i].length;
		out[i].lkey = in[i].lkey;
	}
	return 0;
}

static int
shim_post_send_fn(struct droce_rt *rt, void *arg)
{
	const unsigned int flags =
		IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
	struct shim_qp_req *r = arg;
	struct droce_sge sge[DROCE_SHIM_MAX_SGE];
	struct droce_send_wr d, *dbad;
	struct ibv_send_wr *w;
	int rc;

	(void)rt;
	for (w = r->swr; w != NULL; w = w->next) {
		r->bad = w;
		if (w->opcode > IBV_WR_SEND_WITH_INV || (w->send_flags & ~flags) != 0)
			return -EINVAL;
		rc = shim_sges(sge, w->sg_list, w->num_sge);
		if (rc != 0)
			return rc;
		memset(&d, 0, sizeof(d));
		d.wr_id = w->wr_id;
		d.sg_list = sge;
		d.num_sge = w->num_sge;
		d.opcode = (enum droce_wr_opcode)w->opcode; /* equal to IBV_WR_* */
		d.send_flags = w->send_flags;		    /* equal to IBV_SEND_* */
		d.imm_data = w->imm_data;
		d.invalidate_rkey = w->invalidate_rkey;
		if (w->opcode == IBV_WR_BIND_MW) {
			rc = droce_shim_bind_wr(&d, w->bind_mw.mw, w->bind_mw.rkey,
						&w->bind_mw.bind_info);
			if (rc != 0)
				return rc;
		} else if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			   w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			d.wr.atomic.remote_addr = w->wr.atomic.remote_addr;
			d.wr.atomic.compare_add = w->wr.atomic.compare_add;
			d.wr.atomic.swap = w->wr.atomic.swap;
			d.wr.atomic.rkey = w->wr.atomic.rkey;
		} else if (r->type == IBV_QPT_UD) {
			if (w->wr.ud.ah == NULL)
				return -EINVAL;
			d.wr.ud.ah = ((struct droce_shim_ah *)w->wr.ud.ah)->eah;
			d.wr.ud.remote_qpn = w->wr.ud.remote_qpn;
			d.wr.ud.remote_qkey = w->wr.ud.remote_qkey;
		} else {
			d.wr.rdma.remote_addr = w->wr.rdma.remote_addr;
			d.wr.rdma.rkey = w->wr.rdma.rkey;
		}
		rc = droce_post_send(r->qp, &d, &dbad);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
droce_shim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct shim_qp_req r = { .qp = ((struct droce_shim_qp *)qp)->eqp,
				 .swr = wr,
				 .type = qp->qp_type };
	int rc = droce_shim_call_send(shim_post_send_fn, &r);

	if (rc != 0)
		*bad_wr = r.bad;
	return -rc;
}

static int
shim_post_recv_fn(struct droce_rt *rt, void *arg)
{
	struct shim_qp_req *r = arg;
	struct droce_sge sge[DROCE_SHIM_MAX_SGE];
	struct droce_recv_wr d, *dbad;
	struct ibv_recv_wr *w;
	int rc;

	(void)rt;
	for (w = r->rwr; w != NULL; w = w->next) {
		r->bad = w;
		rc = shim_sges(sge, w->sg_list, w->num_sge);
		if (rc != 0)
			return rc;
		d.wr_id = w->wr_id;
		d.next = NULL;
		d.sg_list = sge;
		d.num_sge = w->num_sge;
		rc = droce_post_recv(r->qp, &d, &dbad);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
droce_shim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct shim_qp_req r = { .qp = ((struct droce_shim_qp *)qp)->eqp, .rwr = wr };
	int rc = droce_shim_call_send(shim_post_recv_fn, &r);

	if (rc != 0)
		*bad_wr = r.bad;
	return -rc;
}

/* No ordering promise beyond what IBTA gives (a message's data may land in any order). */
int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0;
}
