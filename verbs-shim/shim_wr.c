/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ibv_wr_* table of struct ibv_qp_ex. Verbs semantics: ibv_wr_start() opens a batch, each
 * builder adds one WR (taking qpx->wr_id and qpx->wr_flags), the setters complete the last
 * one, ibv_wr_complete() posts the batch and returns the first error, ibv_wr_abort() drops it.
 * A builder cannot return an error, so the first failure is kept for ibv_wr_complete().
 *
 * The batch lives in storage sized at QP creation (max_send_wr WRs with their SGEs and inline
 * bytes): no allocation while posting. Inline data is copied at once, as the API allows the
 * caller to reuse its buffer when ibv_wr_set_inline_data() returns. XRC and TSO are not
 * offered: they fail with EOPNOTSUPP.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_shim.h"

static inline struct droce_shim_qp *
shim_qp(struct ibv_qp_ex *qpx)
{
	return (struct droce_shim_qp *)qpx;
}

static void
shim_wr_fail(struct ibv_qp_ex *qpx, int err)
{
	if (shim_qp(qpx)->wr_err == 0)
		shim_qp(qpx)->wr_err = err;
}

/* A new WR of the batch, or NULL (error kept) when the batch is full or not available. */
static struct droce_send_wr *
shim_wr_open(struct ibv_qp_ex *qpx, enum droce_wr_opcode op)
{
	struct droce_shim_qp *q = shim_qp(qpx);
	struct droce_send_wr *w;

	if (q->wr.batch == NULL) { /* QP created without send_ops_flags */
		shim_wr_fail(qpx, EOPNOTSUPP);
		return NULL;
	}
	if (q->wr.n == q->wr.cap) {
		shim_wr_fail(qpx, ENOMEM);
		return NULL;
	}
	w = &q->wr.batch[q->wr.n];
	memset(w, 0, sizeof(*w));
	w->wr_id = qpx->wr_id;
	w->send_flags = qpx->wr_flags; /* IBV_SEND_* equal DROCE_SEND_* */
	w->opcode = op;
	w->sg_list = &q->wr.sges[(size_t)q->wr.n * q->wr.max_sge];
	q->wr.n++;
	q->wr.cur = w;
	return w;
}

static void
shim_wr_start(struct ibv_qp_ex *qpx)
{
	struct droce_shim_qp *q = shim_qp(qpx);

	q->wr_err = 0;
	q->wr.n = 0;
	q->wr.inl_used = 0;
	q->wr.cur = NULL;
}

struct shim_wr_post {
	struct droce_qp *qp;
	struct droce_send_wr *first;
};

static int
shim_wr_post_fn(struct droce_rt *rt, void *arg)
{
	struct shim_wr_post *p = arg;
	struct droce_send_wr *bad;

	(void)rt;
	return droce_post_send(p->qp, p->first, &bad);
}

static int
shim_wr_complete(struct ibv_qp_ex *qpx)
{
	struct droce_shim_qp *q = shim_qp(qpx);
	struct shim_wr_post p = { .qp = q->eqp, .first = q->wr.batch };
	int err = q->wr_err;
	uint32_t i;

	if (err == 0 && q->wr.n > 0) {
		for (i = 0; i + 1 < q->wr.n; i++)
			q->wr.batch[i].next = &q->wr.batch[i + 1];
		err = -droce_shim_call_send(shim_wr_post_fn, &p);
	}
	shim_wr_start(qpx); /* the batch is gone either way */
	return err;
}

static void
shim_wr_abort(struct ibv_qp_ex *qpx)
{
	shim_wr_start(qpx);
}

static void
shim_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint64_t compare,
		       uint64_t swap)
{
	struct droce_send_wr *w = shim_wr_open(qpx, DROCE_WR_ATOMIC_CMP_AND_SWP);

	if (w != NULL) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = remote_addr;
		w->wr.atomic.compare_add = compare;
		w->wr.atomic.swap = swap;
	}
}

static void
shim_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint64_t add)
{
	struct droce_send_wr *w = shim_wr_open(qpx, DROCE_WR_ATOMIC_FETCH_AND_ADD);

	if (w != NULL) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = remote_addr;
		w->wr.atomic.compare_add = add;
	}
}

static void
shim_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		const struct ibv_mw_bind_info *bind_info)
{
	struct droce_send_wr *w = shim_wr_open(qpx, DROCE_WR_BIND_MW);

	if (w != NULL && droce_shim_bind_wr(w, mw, rkey, bind_info) != 0)
		shim_wr_fail(qpx, EINVAL);
}

static void
shim_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct droce_send_wr *w = shim_wr_open(qpx, DROCE_WR_LOCAL_INV);

	if (w != NULL)
		w->invalidate_rkey = invalidate_rkey;
}

static void
shim_wr_rdma(struct ibv_qp_ex *qpx, enum droce_wr_opcode op, uint32_t rkey, uint64_t remote_addr,
	     __be32 imm)
{
	struct droce_send_wr *w = shim_wr_open(qpx, op);

	if (w != NULL) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = remote_addr;
		w->imm_data = imm;
	}
}

static void
shim_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	shim_wr_rdma(qpx, DROCE_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void
shim_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	shim_wr_rdma(qpx, DROCE_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void
shim_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	shim_wr_rdma(qpx, DROCE_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void
shim_wr_send(struct ibv_qp_ex *qpx)
{
	shim_wr_open(qpx, DROCE_WR_SEND);
}

static void
shim_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct droce_send_wr *w = shim_wr_open(qpx, DROCE_WR_SEND_WITH_IMM);

	if (w != NULL)
		w->imm_data = imm_data;
}

static void
shim_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct droce_send_wr *w = shim_wr_open(qpx, DROCE_WR_SEND_WITH_INV);

	if (w != NULL)
		w->invalidate_rkey = invalidate_rkey;
}

static void
shim_wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	shim_wr_fail(qpx, EOPNOTSUPP); /* TSO is for raw packet / UD-LSO hardware */
}

/* The setters complete the last WR of the batch; without one they are an error. */
static struct droce_send_wr *
shim_wr_cur(struct ibv_qp_ex *qpx)
{
	struct droce_send_wr *w = shim_qp(qpx)->wr.cur;

	if (w == NULL)
		shim_wr_fail(qpx, EINVAL);
	return w;
}

static void
shim_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
		    uint32_t remote_qkey)
{
	struct droce_send_wr *w = shim_wr_cur(qpx);

	if (w == NULL)
		return;
	if (ah == NULL) {
		shim_wr_fail(qpx, EINVAL);
		return;
	}
	w->wr.ud.ah = ((struct droce_shim_ah *)ah)->eah;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

static void
shim_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	(void)remote_srqn;
	shim_wr_fail(qpx, EOPNOTSUPP); /* no XRC (ibv_open_xrcd fails) */
}

static void
shim_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
			     const struct ibv_data_buf *buf_list)
{
	struct droce_shim_qp *q = shim_qp(qpx);
	struct droce_send_wr *w = shim_wr_cur(qpx);
	size_t len = 0, i;
	uint8_t *dst;

	if (w == NULL)
		return;
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > q->wr.max_inline || q->wr.inl_used + len > q->wr.inl_size) {
		shim_wr_fail(qpx, EINVAL);
		return;
	}
	dst = q->wr.inl + q->wr.inl_used;
	for (i = 0, len = 0; i < num_buf; i++) {
		memcpy(dst + len, buf_list[i].addr, buf_list[i].length);
		len += buf_list[i].length;
	}
	q->wr.inl_used += len;
	w->sg_list[0].addr = (uintptr_t)dst;
	w->sg_list[0].length = (uint32_t)len;
	w->sg_list[0].lkey = 0;
	w->num_sge = 1;
	w->send_flags |= DROCE_SEND_INLINE;
}

static void
shim_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	shim_wr_set_inline_data_list(qpx, 1, &b);
}

static void
shim_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct droce_send_wr *w = shim_wr_cur(qpx);
	size_t i;

	if (w == NULL)
		return;
	if (num_sge > shim_qp(qpx)->wr.max_sge) {
		shim_wr_fail(qpx, EINVAL);
		return;
	}
	for (i = 0; i < num_sge; i++) {
		w->sg_list[i].addr = sg_list[i].addr;
		w->sg_list[i].length = sg_list[i].length;
		w->sg_list[i].lkey = sg_list[i].lkey;
	}
	w->num_sge = (int)num_sge;
}

static void
shim_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge s = { .addr = addr, .length = length, .lkey = lkey };

	shim_wr_set_sge_list(qpx, 1, &s);
}

static void
shim_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		     const void *atomic_wr)
{
	struct droce_send_wr *w = shim_wr_open(qpx, DROCE_WR_ATOMIC_WRITE);

	/* IBTA 1.5: the 8 bytes are taken now, as rxe's provider copies them into its WQE */
	if (w != NULL) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = remote_addr;
		memcpy(&w->wr.atomic.swap, atomic_wr, sizeof(w->wr.atomic.swap));
	}
}

/* Opcodes of enum ibv_qp_create_send_ops_flags the builders above really post. */
enum {
	SHIM_WR_OPS = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		      IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
		      IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV |
		      IBV_QP_EX_WITH_ATOMIC_WRITE,
};

int
droce_shim_wr_alloc(struct droce_shim_qp *q, uint64_t send_ops, const struct ibv_qp_cap *cap)
{
	uint32_t sge = cap->max_send_sge > 0 ? cap->max_send_sge : 1;

	if ((send_ops & ~(uint64_t)SHIM_WR_OPS) != 0)
		return -EOPNOTSUPP;
	q->wr.cap = cap->max_send_wr;
	q->wr.max_sge = sge;
	q->wr.max_inline = cap->max_inline_data;
	q->wr.inl_size = (size_t)cap->max_inline_data * cap->max_send_wr;
	q->wr.batch = calloc(cap->max_send_wr, sizeof(*q->wr.batch));
	q->wr.sges = calloc((size_t)cap->max_send_wr * sge, sizeof(*q->wr.sges));
	q->wr.inl = q->wr.inl_size != 0 ? malloc(q->wr.inl_size) : NULL;
	if (q->wr.batch == NULL || q->wr.sges == NULL || (q->wr.inl_size && q->wr.inl == NULL)) {
		droce_shim_wr_free(q);
		return -ENOMEM;
	}
	return 0;
}

void
droce_shim_wr_free(struct droce_shim_qp *q)
{
	free(q->wr.batch);
	free(q->wr.sges);
	free(q->wr.inl);
	q->wr.batch = NULL;
	q->wr.sges = NULL;
	q->wr.inl = NULL;
}

void
droce_shim_qp_ex_ops(struct ibv_qp_ex *x)
{
	x->wr_atomic_cmp_swp = shim_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = shim_wr_atomic_fetch_add;
	x->wr_bind_mw = shim_wr_bind_mw;
	x->wr_local_inv = shim_wr_local_inv;
	x->wr_rdma_read = shim_wr_rdma_read;
	x->wr_rdma_write = shim_wr_rdma_write;
	x->wr_rdma_write_imm = shim_wr_rdma_write_imm;
	x->wr_send = shim_wr_send;
	x->wr_send_imm = shim_wr_send_imm;
	x->wr_send_inv = shim_wr_send_inv;
	x->wr_send_tso = shim_wr_send_tso;
	x->wr_set_ud_addr = shim_wr_set_ud_addr;
	x->wr_set_xrc_srqn = shim_wr_set_xrc_srqn;
	x->wr_set_inline_data = shim_wr_set_inline_data;
	x->wr_set_inline_data_list = shim_wr_set_inline_data_list;
	x->wr_set_sge = shim_wr_set_sge;
	x->wr_set_sge_list = shim_wr_set_sge_list;
	x->wr_start = shim_wr_start;
	x->wr_complete = shim_wr_complete;
	x->wr_abort = shim_wr_abort;
	x->wr_atomic_write = shim_wr_atomic_write;
}
