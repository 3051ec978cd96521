/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs data path on a real runtime (net_null port, --no-huge, inline mode), through the
 * replacement library's API only: object life cycles, attribute checks, QP states, flushes.
 * Environment in tests/shim/meson.build. No peer: nothing reaches RTS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "droce_shim_gsi.h"
#include "droce_test.h"

static struct ibv_device **list;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static char buf[8192];

static void
setup(void)
{
	int n = 0;

	list = ibv_get_device_list(&n);
	CU_ASSERT_FATAL(list != NULL && n == 1);
	ctx = ibv_open_device(list[0]);
	CU_ASSERT_FATAL(ctx != NULL);
	pd = ibv_alloc_pd(ctx); /* starts the runtime */
	CU_ASSERT_FATAL(pd != NULL);
	CU_ASSERT(pd->context == ctx);
}

static void
teardown(void)
{
	CU_ASSERT(ibv_dealloc_pd(pd) == 0);
	CU_ASSERT(ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
}

static void
test_mr(void)
{
	struct ibv_mr *mr, *mr2;
	uint32_t lkey;

	setup();
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CU_ASSERT_FATAL(mr != NULL);
	CU_ASSERT(mr->addr == buf && mr->length == sizeof(buf) && mr->pd == pd);
	CU_ASSERT(mr->context == ctx && mr->lkey != 0);
	/* RELAXED_ORDERING is an optional hint: reg_mr goes through ibv_reg_mr_iova2 */
	mr2 = ibv_reg_mr(pd, buf, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	CU_ASSERT_FATAL(mr2 != NULL);
	CU_ASSERT(mr2->lkey != mr->lkey);
	errno = 0;
	CU_ASSERT(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL);
	errno = 0;
	CU_ASSERT(ibv_reg_mr(pd, buf, 64, IBV_ACCESS_ON_DEMAND) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CU_ASSERT(ibv_reg_mr_iova(pd, buf, 64, 0, IBV_ACCESS_LOCAL_WRITE) == NULL &&
		  errno == EOPNOTSUPP);
	/* rereg: new range and access, new keys, the old region gone */
	lkey = mr2->lkey;
	CU_ASSERT(ibv_rereg_mr(mr2, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
			       NULL, buf + 128, 256,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) == 0);
	CU_ASSERT(mr2->addr == buf + 128 && mr2->length == 256 && mr2->pd == pd);
	CU_ASSERT(mr2->lkey != lkey);
	errno = 0;
	CU_ASSERT(ibv_rereg_mr(mr2, 0, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT &&
		  errno == EINVAL);
	errno = 0; /* refused access: the old region stays valid */
	CU_ASSERT(ibv_rereg_mr(mr2, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			       IBV_ACCESS_REMOTE_WRITE) == IBV_REREG_MR_ERR_INPUT &&
		  errno == EINVAL);
	CU_ASSERT(mr2->addr == buf + 128);
	CU_ASSERT(ibv_dealloc_pd(pd) == EBUSY); /* MRs still registered */
	CU_ASSERT(ibv_dereg_mr(mr2) == 0);
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	teardown();
}

static void
test_cq(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_device_attr da;
	struct ibv_cq *cq, *cqc;
	struct ibv_wc wc[4];

	setup();
	errno = 0;
	CU_ASSERT(ibv_create_cq(ctx, 0, NULL, NULL, 0) == NULL && errno == EINVAL);
	/* ib_write_bw -q 1024 asks 128 CQEs a QP in one CQ; a device reports its max_cqe */
	CU_ASSERT(ibv_query_device(ctx, &da) == 0);
	CU_ASSERT(da.max_cqe >= 131072);
	cq = ibv_create_cq(ctx, 131072, NULL, NULL, 0);
	CU_ASSERT(cq != NULL && cq->cqe >= 131072);
	CU_ASSERT(cq != NULL && ibv_destroy_cq(cq) == 0);
	errno = 0;
	CU_ASSERT(ibv_create_cq(ctx, da.max_cqe + 1, NULL, NULL, 0) == NULL && errno == EINVAL);
	cq = ibv_create_cq(ctx, 16, &cq, NULL, 0);
	CU_ASSERT_FATAL(cq != NULL);
	CU_ASSERT(cq->context == ctx && cq->cq_context == &cq && cq->cqe >= 16);
	CU_ASSERT(ibv_poll_cq(cq, 4, wc) == 0);
	CU_ASSERT(ibv_req_notify_cq(cq, 0) == 0);
	ch = ibv_create_comp_channel(ctx);
	CU_ASSERT_FATAL(ch != NULL);
	cqc = ibv_create_cq(ctx, 8, NULL, ch, 0);
	CU_ASSERT_FATAL(cqc != NULL);
	CU_ASSERT(ch->refcnt == 1);
	CU_ASSERT(ibv_req_notify_cq(cqc, 0) == 0); /* the event watcher runs in every model */
	CU_ASSERT(ibv_req_notify_cq(cqc, 1) == 0);
	CU_ASSERT(ibv_destroy_comp_channel(ch) == EBUSY);
	CU_ASSERT(ibv_destroy_cq(cqc) == 0);
	CU_ASSERT(ch->refcnt == 0);
	CU_ASSERT(ibv_destroy_comp_channel(ch) == 0);
	CU_ASSERT(ibv_destroy_cq(cq) == 0);
	teardown();
}

static struct ibv_qp *
make_qp(struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.qp_context = &a,
		.cap = { .max_send_wr = 8,
			 .max_recv_wr = 8,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp != NULL) {
		CU_ASSERT(a.cap.max_send_wr >= 8 && a.cap.max_recv_wr >= 8);
		CU_ASSERT(a.cap.max_inline_data >= 64);
		CU_ASSERT(qp->qp_type == type && qp->pd == pd && qp->send_cq == cq);
	}
	return qp;
}

static void
test_qp(void)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64 };
	struct ibv_recv_wr rwr = { .wr_id = 42, .sg_list = &sge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_send_wr swr = { .wr_id = 7,
				   .sg_list = &sge,
				   .num_sge = 1,
				   .opcode = IBV_WR_SEND },
			   *sbad = NULL;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *ud;
	struct ibv_mr *mr;
	struct ibv_wc wc[4];

	setup();
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CU_ASSERT_FATAL(cq != NULL && mr != NULL);
	sge.lkey = mr->lkey;
	qp = make_qp(cq, IBV_QPT_RC);
	CU_ASSERT_FATAL(qp != NULL);
	CU_ASSERT(qp->qp_num != 0 && qp->state == IBV_QPS_RESET);
	CU_ASSERT(ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0) == 0); /* no promise */
	CU_ASSERT(ibv_qp_to_qp_ex(qp) != NULL);
	ud = make_qp(cq, IBV_QPT_UD);
	CU_ASSERT_FATAL(ud != NULL);
	CU_ASSERT(ud->qp_num != qp->qp_num);
	errno = 0;
	CU_ASSERT(make_qp(cq, IBV_QPT_XRC_SEND) == NULL && errno == EOPNOTSUPP);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	CU_ASSERT_FATAL(ibv_modify_qp(qp, &attr,
				      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					      IBV_QP_ACCESS_FLAGS) == 0);
	CU_ASSERT(qp->state == IBV_QPS_INIT);
	CU_ASSERT(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &init) == 0);
	CU_ASSERT(attr.qp_state == IBV_QPS_INIT && attr.port_num == 1);
	CU_ASSERT(attr.qp_access_flags == IBV_ACCESS_REMOTE_WRITE);
	CU_ASSERT(attr.cap.max_recv_wr >= 8 && init.send_cq == cq && init.qp_type == IBV_QPT_RC);

	CU_ASSERT(ibv_post_recv(qp, &rwr, &rbad) == 0);
	CU_ASSERT(ibv_post_send(qp, &swr, &sbad) != 0 && sbad == &swr); /* INIT: no send */
	CU_ASSERT(ibv_poll_cq(cq, 4, wc) == 0);

	/* RoCE needs the GRH; an unreachable peer fails RTR after the neighbour tries */
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = 0x11;
	attr.ah_attr.port_num = 1;
	CU_ASSERT(ibv_modify_qp(qp, &attr,
				IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					IBV_QP_MIN_RNR_TIMER) == EINVAL);
	attr.ah_attr.is_global = 1;
	attr.ah_attr.grh.dgid.raw[10] = 0xff;
	attr.ah_attr.grh.dgid.raw[11] = 0xff;
	attr.ah_attr.grh.dgid.raw[12] = 198;
	attr.ah_attr.grh.dgid.raw[13] = 18;
	attr.ah_attr.grh.dgid.raw[15] = 99;
	attr.ah_attr.grh.hop_limit = 64;
	CU_ASSERT(ibv_modify_qp(qp, &attr,
				IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					IBV_QP_MIN_RNR_TIMER) == EHOSTUNREACH);
	CU_ASSERT(qp->state == IBV_QPS_INIT);
	CU_ASSERT(ibv_modify_qp(qp, &attr, IBV_QP_RATE_LIMIT) == EOPNOTSUPP);

	/* ERR flushes the posted receive with its wr_id */
	attr.qp_state = IBV_QPS_ERR;
	CU_ASSERT(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == 0);
	CU_ASSERT_FATAL(ibv_poll_cq(cq, 4, wc) == 1);
	CU_ASSERT(wc[0].wr_id == 42 && wc[0].status == IBV_WC_WR_FLUSH_ERR);
	CU_ASSERT(wc[0].qp_num == qp->qp_num);
	CU_ASSERT(ibv_poll_cq(cq, 4, wc) == 0);

	CU_ASSERT(ibv_destroy_cq(cq) == EBUSY); /* QPs still attached */
	CU_ASSERT(ibv_dealloc_pd(pd) == EBUSY);
	CU_ASSERT(ibv_destroy_qp(ud) == 0);
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	CU_ASSERT(ibv_destroy_cq(cq) == 0);
	teardown();
}

static void
test_srq_ah(void)
{
	struct ibv_srq_init_attr si = { .srq_context = &si,
					.attr = { .max_wr = 16, .max_sge = 1, .srq_limit = 0 } };
	struct ibv_srq_attr sa = { .srq_limit = 4 };
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64 };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_qp_init_attr qa;
	uint8_t mac[6];
	uint16_t vid;
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	setup();
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CU_ASSERT_FATAL(mr != NULL && cq != NULL);
	sge.lkey = mr->lkey;
	srq = ibv_create_srq(pd, &si);
	CU_ASSERT_FATAL(srq != NULL);
	CU_ASSERT(srq->srq_context == &si && srq->pd == pd && srq->events_completed == 0);
	CU_ASSERT(ibv_post_srq_recv(srq, &rwr, &bad) == 0);
	CU_ASSERT(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0);
	memset(&sa, 0, sizeof(sa));
	CU_ASSERT(ibv_query_srq(srq, &sa) == 0);
	CU_ASSERT(sa.max_wr == 16 && sa.srq_limit == 4);
	sa.srq_limit = 99; /* above max_wr */
	CU_ASSERT(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) != 0);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.srq = srq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = 1;
	qp = ibv_create_qp(pd, &qa);
	CU_ASSERT_FATAL(qp != NULL);
	CU_ASSERT(qp->srq == srq);
	CU_ASSERT(ibv_destroy_srq(srq) == EBUSY); /* the QP uses it */
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	CU_ASSERT(ibv_destroy_srq(srq) == 0);

	/* address handles: GRH required, then the peer must resolve */
	errno = 0;
	CU_ASSERT(ibv_create_ah(pd, &aa) == NULL && errno == EINVAL);
	aa.is_global = 1;
	aa.grh.dgid.raw[10] = 0xff;
	aa.grh.dgid.raw[11] = 0xff;
	aa.grh.dgid.raw[12] = 198;
	aa.grh.dgid.raw[13] = 18;
	aa.grh.dgid.raw[15] = 98;
	errno = 0;
	CU_ASSERT(ibv_create_ah(pd, &aa) == NULL && errno == EHOSTUNREACH);
	CU_ASSERT(ibv_resolve_eth_l2_from_gid(ctx, &aa, mac, &vid) == EHOSTUNREACH);
	aa.is_global = 0;
	CU_ASSERT(ibv_resolve_eth_l2_from_gid(ctx, &aa, mac, &vid) == EINVAL);

	CU_ASSERT(ibv_destroy_cq(cq) == 0);
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	teardown();
}

/* An RC QP on cq, in INIT, with n receives (wr_id id0..) into buf posted: moving it to ERR
 * flushes them into cq. */
static struct ibv_qp *
qp_with_recvs(struct ibv_cq *cq, struct ibv_mr *mr, int n, uint64_t id0)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 2, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 }
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	int i;

	CU_ASSERT_FATAL(qp != NULL);
	CU_ASSERT(ibv_modify_qp(qp, &attr,
				IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS) == 0);
	for (i = 0; i < n; i++) {
		rwr.wr_id = id0 + (uint64_t)i;
		CU_ASSERT(ibv_post_recv(qp, &rwr, &bad) == 0);
	}
	return qp;
}

static void
qp_to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	CU_ASSERT(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == 0);
}

/* ibv_create_cq_ex and the ibv_start_poll / ibv_wc_read_* interface, fed by a flush. */
static void
test_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 8,
					  .cq_context = &ca,
					  .wc_flags =
						  IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cqx;
	struct ibv_mr *mr;
	struct ibv_qp *qp;

	setup();
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CU_ASSERT_FATAL(mr != NULL);
	cqx = ibv_create_cq_ex(ctx, &ca);
	CU_ASSERT_FATAL(cqx != NULL);
	CU_ASSERT(cqx->cq_context == &ca && cqx->context == ctx);
	CU_ASSERT(ibv_start_poll(cqx, &pa) == ENOENT);
	qp = qp_with_recvs(ibv_cq_ex_to_cq(cqx), mr, 2, 100);
	qp_to_err(qp);
	CU_ASSERT_FATAL(ibv_start_poll(cqx, &pa) == 0);
	CU_ASSERT(cqx->wr_id == 100 && cqx->status == IBV_WC_WR_FLUSH_ERR);
	CU_ASSERT(ibv_wc_read_qp_num(cqx) == qp->qp_num);
	CU_ASSERT(ibv_next_poll(cqx) == 0);
	CU_ASSERT(cqx->wr_id == 101 && cqx->status == IBV_WC_WR_FLUSH_ERR);
	CU_ASSERT(ibv_next_poll(cqx) == ENOENT);
	ibv_end_poll(cqx);
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	CU_ASSERT(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0);
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	teardown();
}

/* ibv_resize_cq: flushed receives waiting in a CQ survive a resize in order; fewer slots than
 * are waiting is EINVAL, and the CQ's cqe says the new size. */
static void
test_cq_resize(void)
{
	struct ibv_wc wc[8];
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int i;

	setup();
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CU_ASSERT_FATAL(mr != NULL);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CU_ASSERT_FATAL(cq != NULL);
	qp = qp_with_recvs(cq, mr, 3, 10);
	qp_to_err(qp);
	CU_ASSERT(ibv_resize_cq(cq, 2) == EINVAL); /* three wait */
	CU_ASSERT(ibv_resize_cq(cq, 0) == EINVAL);
	CU_ASSERT(cq->cqe == 4);
	CU_ASSERT(ibv_resize_cq(cq, 3) == 0);
	CU_ASSERT(ibv_resize_cq(cq, 100) == 0);
	CU_ASSERT(cq->cqe == 100);
	CU_ASSERT_FATAL(ibv_poll_cq(cq, 8, wc) == 3);
	for (i = 0; i < 3; i++)
		CU_ASSERT(wc[i].wr_id == 10 + (uint64_t)i && wc[i].status == IBV_WC_WR_FLUSH_ERR);
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	CU_ASSERT(ibv_destroy_cq(cq) == 0);
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	teardown();
}

static uint64_t
realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Completion timestamps (ibv_rc_pingpong --ts): the engine's ns clock, which
 * ibv_query_rt_values_ex reads, and the wall clock. */
static void
test_cq_ex_timestamps(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 8,
					  .wc_flags =
						  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
						  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_device_attr_ex dx;
	uint64_t ts[2], wall[2], raw0, raw1, real;
	struct ibv_cq_ex *cqx;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	int i;

	setup();
	CU_ASSERT_FATAL(ibv_query_device_ex(ctx, NULL, &dx) == 0);
	CU_ASSERT(dx.completion_timestamp_mask == UINT64_MAX);
	CU_ASSERT(dx.hca_core_clock == 1000000); /* kHz: ticks are ns */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CU_ASSERT_FATAL(mr != NULL);
	cqx = ibv_create_cq_ex(ctx, &ca);
	CU_ASSERT_FATAL(cqx != NULL);
	qp = qp_with_recvs(ibv_cq_ex_to_cq(cqx), mr, 2, 0);
	CU_ASSERT_FATAL(ibv_query_rt_values_ex(ctx, &v) == 0);
	CU_ASSERT(v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && v.raw_clock.tv_sec == 0);
	raw0 = (uint64_t)v.raw_clock.tv_nsec;
	qp_to_err(qp);
	CU_ASSERT_FATAL(ibv_start_poll(cqx, &pa) == 0);
	for (i = 0; i < 2; i++) {
		CU_ASSERT(cqx->status == IBV_WC_WR_FLUSH_ERR);
		ts[i] = ibv_wc_read_completion_ts(cqx);
		wall[i] = ibv_wc_read_completion_wallclock_ns(cqx);
		CU_ASSERT(ibv_next_poll(cqx) == (i == 0 ? 0 : ENOENT));
	}
	ibv_end_poll(cqx);
	real = realtime_ns();
	CU_ASSERT_FATAL(ibv_query_rt_values_ex(ctx, &v) == 0);
	raw1 = (uint64_t)v.raw_clock.tv_nsec;
	/* the flush happened between the two clock reads, at the time of the verb that made it
	 * (not the loop's last iteration, which may be long before); both in one step */
	CU_ASSERT(raw0 > 0 && raw0 <= raw1);
	CU_ASSERT(ts[0] == ts[1]);
	CU_ASSERT(raw0 <= ts[0] && ts[0] <= raw1);
	CU_ASSERT(wall[0] - ts[0] == wall[1] - ts[1]);
	/* two clocks: the engine's (TSC) may run a little apart from CLOCK_REALTIME */
	CU_ASSERT(llabs((long long)(real - wall[0])) < 1000000000);
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	CU_ASSERT(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0);
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	teardown();
}

/* The ibv_wr_* batch of a QP created with send_ops_flags. */
static void
test_wr_api(void)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
		.cap = { .max_send_wr = 2,
			 .max_recv_wr = 2,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = 16 }
	};
	char big[64] = { 0 };
	struct ibv_qp_ex *x;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	setup();
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	CU_ASSERT_FATAL(cq != NULL);
	qa.pd = pd;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp_ex(ctx, &qa);
	CU_ASSERT_FATAL(qp != NULL);
	x = ibv_qp_to_qp_ex(qp);
	CU_ASSERT_FATAL(x != NULL);

	ibv_wr_start(x);
	CU_ASSERT(ibv_wr_complete(x) == 0); /* empty batch */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, big, sizeof(big)); /* above max_inline_data */
	CU_ASSERT(ibv_wr_complete(x) == EINVAL);
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_send(x);
	ibv_wr_send(x); /* a third WR in a 2-deep send queue */
	CU_ASSERT(ibv_wr_complete(x) == ENOMEM);
	ibv_wr_start(x);
	x->wr_id = 5;
	ibv_wr_rdma_write(x, 1, 0x1000);
	ibv_wr_set_inline_data(x, big, 8);
	CU_ASSERT(ibv_wr_complete(x) != 0); /* RESET QP: the engine refuses */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_abort(x);
	ibv_wr_start(x);
	CU_ASSERT(ibv_wr_complete(x) == 0); /* abort dropped the WR */
	CU_ASSERT(ibv_destroy_qp(qp) == 0);

	qa.send_ops_flags = IBV_QP_EX_WITH_TSO; /* UD LSO: not offered */
	errno = 0;
	CU_ASSERT(ibv_create_qp_ex(ctx, &qa) == NULL && errno == EOPNOTSUPP);
	CU_ASSERT(ibv_destroy_cq(cq) == 0);
	teardown();
}

/* droce_shim_gsi.h: QP1 for the librdmacm replacement. qp_num 1, one at a time (EBUSY), UD
 * only (EINVAL); otherwise an ordinary UD QP: INIT with the GSI Q_Key, RTR, RTS, receives,
 * flushed with qp_num 1; created again after destroy. (No peer here: the engine test
 * tests/unit/test_gsi.c sends to and from it.) */
/* The runtime, one CQ for both directions of qa, an MR over buf and sge's key in it. */
static void
qp_fixture(struct ibv_cq **cq, struct ibv_mr **mr, struct ibv_sge *sge, struct ibv_qp_init_attr *qa)
{
	setup();
	*cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	*mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CU_ASSERT_FATAL(*cq != NULL && *mr != NULL);
	sge->lkey = (*mr)->lkey;
	qa->send_cq = qa->recv_cq = *cq;
}

static void
test_gsi(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.qp_context = &qa,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 }
	};
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 256 };
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_qp *gsi, *qp;
	struct ibv_wc wc[4];
	struct ibv_mr *mr;
	struct ibv_cq *cq;

	qp_fixture(&cq, &mr, &sge, &qa);
	gsi = droce_shim_create_gsi_qp(pd, &qa);
	CU_ASSERT_FATAL(gsi != NULL);
	CU_ASSERT(gsi->qp_num == 1 && gsi->qp_type == IBV_QPT_UD && gsi->pd == pd);
	CU_ASSERT(gsi->state == IBV_QPS_RESET && gsi->qp_context == &qa);
	CU_ASSERT(qa.cap.max_send_wr >= 4 && qa.cap.max_recv_wr >= 4);
	errno = 0;
	CU_ASSERT(droce_shim_create_gsi_qp(pd, &qa) == NULL && errno == EBUSY);
	qa.qp_type = IBV_QPT_RC;
	errno = 0;
	CU_ASSERT(droce_shim_create_gsi_qp(pd, &qa) == NULL && errno == EINVAL);
	qa.qp_type = IBV_QPT_UC;
	errno = 0;
	CU_ASSERT(droce_shim_create_gsi_qp(pd, &qa) == NULL && errno == EINVAL);
	qa.qp_type = IBV_QPT_UD;
	errno = 0;
	CU_ASSERT(droce_shim_create_gsi_qp(NULL, &qa) == NULL && errno == EINVAL);
	qp = ibv_create_qp(pd, &qa); /* ordinary UD QPs go on, never numbered 0 or 1 */
	CU_ASSERT_FATAL(qp != NULL);
	CU_ASSERT(qp->qp_num > 1);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qkey = 0x80010000; /* the well-known GSI Q_Key */
	CU_ASSERT_FATAL(
		ibv_modify_qp(gsi, &attr,
			      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
	memset(&attr, 0, sizeof(attr));
	CU_ASSERT(ibv_query_qp(gsi, &attr, IBV_QP_STATE | IBV_QP_QKEY, &init) == 0);
	CU_ASSERT(attr.qp_state == IBV_QPS_INIT && attr.qkey == 0x80010000);
	CU_ASSERT(init.qp_type == IBV_QPT_UD && init.send_cq == cq);
	CU_ASSERT(ibv_post_recv(gsi, &rwr, &bad) == 0);
	attr.qp_state = IBV_QPS_RTR;
	CU_ASSERT(ibv_modify_qp(gsi, &attr, IBV_QP_STATE) == 0);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	CU_ASSERT(ibv_modify_qp(gsi, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
	CU_ASSERT(gsi->state == IBV_QPS_RTS);
	CU_ASSERT(ibv_poll_cq(cq, 4, wc) == 0);
	attr.qp_state = IBV_QPS_ERR;
	CU_ASSERT(ibv_modify_qp(gsi, &attr, IBV_QP_STATE) == 0);
	CU_ASSERT_FATAL(ibv_poll_cq(cq, 4, wc) == 1);
	CU_ASSERT(wc[0].wr_id == 77 && wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].qp_num == 1);

	CU_ASSERT(ibv_destroy_qp(gsi) == 0);
	gsi = droce_shim_create_gsi_qp(pd, &qa); /* the slot is free again */
	CU_ASSERT_FATAL(gsi != NULL);
	CU_ASSERT(gsi->qp_num == 1);
	CU_ASSERT(ibv_destroy_qp(gsi) == 0);
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	CU_ASSERT(ibv_destroy_cq(cq) == 0);
	teardown();
}

/* A QP may have a queue of depth 0 (only initiating WRITEs/READs, or only receiving), as on
 * rxe and mlx5: created, and a post to it finds it full (ENOMEM). More SGEs than the device
 * advertises are refused at creation (a post could not carry them). ibv_query_qp makes
 * qp->state follow the state it read, as libibverbs' does. */
static void
test_qp_caps(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 0, .max_send_sge = 1 }
	};
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64 };
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	struct ibv_device_attr dev;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_cq *cq;

	qp_fixture(&cq, &mr, &sge, &qa);
	qp = ibv_create_qp(pd, &qa); /* no receive queue, no SRQ */
	CU_ASSERT_FATAL(qp != NULL);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	CU_ASSERT_FATAL(ibv_modify_qp(qp, &attr,
				      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					      IBV_QP_ACCESS_FLAGS) == 0);
	CU_ASSERT(ibv_post_recv(qp, &rwr, &bad) == ENOMEM && bad == &rwr);
	/* qp->state follows a query (here set back by hand: the shim keeps it in step itself) */
	qp->state = IBV_QPS_RESET;
	CU_ASSERT(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0);
	CU_ASSERT(attr.qp_state == IBV_QPS_INIT && qp->state == IBV_QPS_INIT);
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	qa.cap.max_send_wr = 0; /* receive only */
	qa.cap.max_recv_wr = 4;
	qp = ibv_create_qp(pd, &qa);
	CU_ASSERT_FATAL(qp != NULL);
	CU_ASSERT(ibv_destroy_qp(qp) == 0);
	CU_ASSERT_FATAL(ibv_query_device(ctx, &dev) == 0);
	qa.cap.max_send_wr = 4;
	qa.cap.max_send_sge = (uint32_t)dev.max_sge + 1;
	errno = 0;
	CU_ASSERT(ibv_create_qp(pd, &qa) == NULL && errno == EINVAL);
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = (uint32_t)dev.max_sge + 1;
	errno = 0;
	CU_ASSERT(ibv_create_qp(pd, &qa) == NULL && errno == EINVAL);
	qa.cap.max_recv_sge = 1;
	{
		/* the one creation flag taken: no multicast loopback to the QP itself */
		struct ibv_qp_init_attr_ex x = {
			.qp_type = IBV_QPT_UD,
			.send_cq = cq,
			.recv_cq = cq,
			.cap = qa.cap,
			.pd = pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
			.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
		};

		qp = ibv_create_qp_ex(ctx, &x);
		CU_ASSERT_FATAL(qp != NULL);
		CU_ASSERT(ibv_destroy_qp(qp) == 0);
		x.create_flags = IBV_QP_CREATE_SCATTER_FCS;
		errno = 0;
		CU_ASSERT(ibv_create_qp_ex(ctx, &x) == NULL && errno == EINVAL);
	}
	CU_ASSERT(ibv_dereg_mr(mr) == 0);
	CU_ASSERT(ibv_destroy_cq(cq) == 0);
	teardown();
}

DROCE_TEST_MAIN("shim_dp", DROCE_TEST(test_qp_caps), DROCE_TEST(test_gsi), DROCE_TEST(test_wr_api),
		DROCE_TEST(test_cq_ex), DROCE_TEST(test_cq_ex_timestamps),
		DROCE_TEST(test_cq_resize), DROCE_TEST(test_srq_ah), DROCE_TEST(test_mr),
		DROCE_TEST(test_cq), DROCE_TEST(test_qp))
