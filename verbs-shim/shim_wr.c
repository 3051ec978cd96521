/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ibv_wr_* table of struct ibv_qp_ex. Verbs semantics: ibv_wr_start() opens a batch,
 * each builder adds one WR (the setters complete the last one), ibv_wr_complete() posts the
 * batch and returns the first error, ibv_wr_abort() drops it. A builder cannot return an
 * error, so the first failure is kept in wr_err for ibv_wr_complete().
 *
 * Opcodes the engine will never support (memory windows, XRC, TSO, atomic write) fail with
 * EOPNOTSUPP for good. The others fail the same way until the engine is reachable from the
 * shim (next step of issue 5), where the builders will fill struct droce_send_wr.
 */
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

/* A WR the engine cannot take (yet): see the header comment. */
static void
shim_wr_open(struct ibv_qp_ex *qpx)
{
	shim_wr_fail(qpx, EOPNOTSUPP);
}

static void
shim_wr_start(struct ibv_qp_ex *qpx)
{
	shim_qp(qpx)->wr_err = 0;
}

static int
shim_wr_complete(struct ibv_qp_ex *qpx)
{
	int err = shim_qp(qpx)->wr_err;

	shim_qp(qpx)->wr_err = 0;
	return err;
}

static void
shim_wr_abort(struct ibv_qp_ex *qpx)
{
	shim_qp(qpx)->wr_err = 0;
}

static void
shim_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		       uint64_t compare, uint64_t swap)
{
	(void)rkey, (void)remote_addr, (void)compare, (void)swap;
	shim_wr_open(qpx);
}

static void
shim_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			 uint64_t add)
{
	(void)rkey, (void)remote_addr, (void)add;
	shim_wr_open(qpx);
}

static void
shim_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		const struct ibv_mw_bind_info *bind_info)
{
	(void)mw, (void)rkey, (void)bind_info;
	shim_wr_fail(qpx, EOPNOTSUPP);	/* no memory windows (ibv_alloc_mw fails) */
}

static void
shim_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	(void)invalidate_rkey;
	shim_wr_open(qpx);
}

static void
shim_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	(void)rkey, (void)remote_addr;
	shim_wr_open(qpx);
}

static void
shim_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	(void)rkey, (void)remote_addr;
	shim_wr_open(qpx);
}

static void
shim_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		       __be32 imm_data)
{
	(void)rkey, (void)remote_addr, (void)imm_data;
	shim_wr_open(qpx);
}

static void
shim_wr_send(struct ibv_qp_ex *qpx)
{
	shim_wr_open(qpx);
}

static void
shim_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	(void)imm_data;
	shim_wr_open(qpx);
}

static void
shim_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	(void)invalidate_rkey;
	shim_wr_open(qpx);
}

static void
shim_wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	shim_wr_fail(qpx, EOPNOTSUPP);	/* TSO is for raw packet / UD-LSO hardware */
}

static void
shim_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn,
		    uint32_t remote_qkey)
{
	(void)ah, (void)remote_qpn, (void)remote_qkey;
	shim_wr_open(qpx);
}

static void
shim_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	(void)remote_srqn;
	shim_wr_fail(qpx, EOPNOTSUPP);	/* no XRC (ibv_open_xrcd fails) */
}

static void
shim_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	(void)addr, (void)length;
	shim_wr_open(qpx);
}

static void
shim_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
			     const struct ibv_data_buf *buf_list)
{
	(void)num_buf, (void)buf_list;
	shim_wr_open(qpx);
}

static void
shim_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	(void)lkey, (void)addr, (void)length;
	shim_wr_open(qpx);
}

static void
shim_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	(void)num_sge, (void)sg_list;
	shim_wr_open(qpx);
}

static void
shim_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		     const void *atomic_wr)
{
	(void)rkey, (void)remote_addr, (void)atomic_wr;
	shim_wr_fail(qpx, EOPNOTSUPP);	/* IBTA 1.5 atomic write: not implemented */
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
