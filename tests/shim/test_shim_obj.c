/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Object layouts of the shim, built from its internal initialisers (no QP or CQ can be
 * created through the API until the data path is wired): verbs_qp with the ibv_wr_* table,
 * ibv_cq_ex with its poll/read table, and the event plumbing (completion channel, async
 * events, acknowledgement counters). Linked with the shim's objects, not the .so.
 */
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "droce_shim.h"
#include "droce_test.h"

static struct ibv_device **list;
static struct ibv_context *ctx;

static void
open_ctx(void)
{
	int n = -1;

	list = ibv_get_device_list(&n);
	CU_ASSERT_FATAL(list != NULL && n == 1);
	ctx = ibv_open_device(list[0]);
	CU_ASSERT_FATAL(ctx != NULL);
}

static void
close_ctx(void)
{
	CU_ASSERT(ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
}

static void
test_qp_layout(void)
{
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC, .qp_context = &attr };
	struct droce_shim_qp qp, plain;
	struct ibv_qp_ex *x;

	open_ctx();
	droce_shim_init_qp(&qp, ctx, &attr);
	CU_ASSERT(qp.qp.context == ctx && qp.qp.qp_context == &attr);
	CU_ASSERT(qp.qp.state == IBV_QPS_RESET && qp.qp.events_completed == 0);
	x = ibv_qp_to_qp_ex(&qp.qp);
	CU_ASSERT_FATAL(x == &qp.qp_ex);
	CU_ASSERT((void *)&x->qp_base == (void *)&qp.qp);
	CU_ASSERT(x->wr_send != NULL && x->wr_send_imm != NULL && x->wr_send_inv != NULL);
	CU_ASSERT(x->wr_rdma_write != NULL && x->wr_rdma_write_imm != NULL);
	CU_ASSERT(x->wr_rdma_read != NULL && x->wr_atomic_cmp_swp != NULL);
	CU_ASSERT(x->wr_atomic_fetch_add != NULL && x->wr_local_inv != NULL);
	CU_ASSERT(x->wr_bind_mw != NULL && x->wr_send_tso != NULL);
	CU_ASSERT(x->wr_set_ud_addr != NULL && x->wr_set_xrc_srqn != NULL);
	CU_ASSERT(x->wr_set_inline_data != NULL && x->wr_set_inline_data_list != NULL);
	CU_ASSERT(x->wr_set_sge != NULL && x->wr_set_sge_list != NULL);
	CU_ASSERT(x->wr_start != NULL && x->wr_complete != NULL && x->wr_abort != NULL);
	CU_ASSERT(x->wr_atomic_write != NULL);

	/* An empty batch succeeds; a WR the shim cannot post yet fails at complete. */
	ibv_wr_start(x);
	CU_ASSERT(ibv_wr_complete(x) == 0);
	ibv_wr_start(x);
	x->wr_id = 7;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 0x1000, 64);
	CU_ASSERT(ibv_wr_complete(x) == EOPNOTSUPP);
	ibv_wr_start(x);
	ibv_wr_set_xrc_srqn(x, 3);
	ibv_wr_abort(x);
	ibv_wr_start(x);
	CU_ASSERT(ibv_wr_complete(x) == 0); /* abort dropped the failed batch */

	memset(&plain, 0, sizeof(plain)); /* no VERBS_QP_EX: not an extended QP */
	errno = 0;
	CU_ASSERT(ibv_qp_to_qp_ex(&plain.qp) == NULL && errno == EOPNOTSUPP);
	close_ctx();
}

static void
test_cq_layout(void)
{
	struct ibv_poll_cq_attr pa = { 0 }, bad = { .comp_mask = 1 };
	struct ibv_comp_channel *ch;
	struct droce_shim_cq cq;
	struct ibv_cq_ex *x = &cq.cq_ex;

	open_ctx();
	ch = ibv_create_comp_channel(ctx);
	CU_ASSERT_FATAL(ch != NULL);
	droce_shim_init_cq(&cq, ctx, ch, &pa, 32);
	CU_ASSERT(ibv_cq_ex_to_cq(x) == &cq.cq);
	CU_ASSERT(cq.cq.channel == ch && cq.cq.cq_context == &pa && cq.cq.cqe == 32);
	CU_ASSERT(ch->refcnt == 1);
	CU_ASSERT(ibv_destroy_comp_channel(ch) == EBUSY); /* a CQ still uses it */
	CU_ASSERT(x->start_poll && x->next_poll && x->end_poll && x->read_opcode);
	CU_ASSERT(x->read_vendor_err && x->read_byte_len && x->read_imm_data);
	CU_ASSERT(x->read_qp_num && x->read_src_qp && x->read_wc_flags && x->read_slid);
	CU_ASSERT(x->read_sl && x->read_dlid_path_bits && x->read_completion_ts);
	CU_ASSERT(x->read_cvlan && x->read_flow_tag && x->read_tm_info);
	CU_ASSERT(x->read_completion_wallclock_ns != NULL);

	/* the readers report the current completion */
	cq.cur.opcode = DROCE_WC_RECV;
	cq.cur.byte_len = 77;
	cq.cur.qp_num = 0x123;
	cq.cur.imm_data = htobe32(5);
	cq.cur.wc_flags = DROCE_WC_WITH_IMM;
	CU_ASSERT(ibv_wc_read_opcode(x) == IBV_WC_RECV);
	CU_ASSERT(ibv_wc_read_byte_len(x) == 77);
	CU_ASSERT(ibv_wc_read_qp_num(x) == 0x123);
	CU_ASSERT(ibv_wc_read_imm_data(x) == htobe32(5));
	CU_ASSERT(ibv_wc_read_wc_flags(x) == IBV_WC_WITH_IMM);
	CU_ASSERT(ibv_start_poll(x, &bad) == EINVAL);
	CU_ASSERT(ibv_start_poll(x, &pa) == ENODEV); /* no runtime in this process */

	ch->refcnt--;
	CU_ASSERT(ibv_destroy_comp_channel(ch) == 0);
	pthread_cond_destroy(&cq.cq.cond);
	pthread_mutex_destroy(&cq.cq.mutex);
	close_ctx();
}

static void
test_events(void)
{
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_RC };
	struct ibv_async_event ev = { .event_type = IBV_EVENT_COMM_EST }, got;
	struct droce_shim_qp qp;
	struct droce_shim_cq cq;
	struct ibv_comp_channel *ch;
	struct pollfd pfd;
	struct ibv_cq *ecq;
	void *ectx;

	open_ctx();
	/* asynchronous: delivered through context.async_fd, counted on the QP when acked */
	droce_shim_init_qp(&qp, ctx, &attr);
	droce_shim_track_qp(&qp, true);
	ev.element.qp = &qp.qp;
	CU_ASSERT(droce_shim_post_async(ctx, &ev) == 0);
	pfd = (struct pollfd){ .fd = ctx->async_fd, .events = POLLIN };
	CU_ASSERT(poll(&pfd, 1, 0) == 1);
	CU_ASSERT_FATAL(ibv_get_async_event(ctx, &got) == 0);
	CU_ASSERT(got.event_type == IBV_EVENT_COMM_EST && got.element.qp == &qp.qp);
	CU_ASSERT(qp.async_reported == 1 && qp.qp.events_completed == 0);
	ibv_ack_async_event(&got);
	CU_ASSERT(qp.qp.events_completed == 1);
	/* an event still in the pipe when its QP goes is dropped, not returned */
	CU_ASSERT(droce_shim_post_async(ctx, &ev) == 0);
	droce_shim_track_qp(&qp, false); /* returns: every event read was acked */
	CU_ASSERT(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK) == 0);
	errno = 0;
	CU_ASSERT(ibv_get_async_event(ctx, &got) == -1 && errno == EAGAIN);
	/* port events name no object */
	ev.event_type = IBV_EVENT_PORT_ACTIVE;
	ev.element.port_num = 1;
	CU_ASSERT(droce_shim_post_async(ctx, &ev) == 0);
	CU_ASSERT(ibv_get_async_event(ctx, &got) == 0 && got.element.port_num == 1);
	ibv_ack_async_event(&got);

	/* completion: the notified CQ comes out of the channel with its context */
	ch = ibv_create_comp_channel(ctx);
	CU_ASSERT_FATAL(ch != NULL);
	droce_shim_init_cq(&cq, ctx, ch, &attr, 8);
	droce_shim_track_cq(&cq, true);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	CU_ASSERT(poll(&pfd, 1, 0) == 0);
	CU_ASSERT(droce_shim_cq_notify(&cq.cq) == 0);
	CU_ASSERT(poll(&pfd, 1, 0) == 1);
	CU_ASSERT_FATAL(ibv_get_cq_event(ch, &ecq, &ectx) == 0);
	CU_ASSERT(ecq == &cq.cq && ectx == &attr);
	CU_ASSERT(cq.ev_reported == 1);
	ibv_ack_cq_events(ecq, 1);
	CU_ASSERT(cq.cq.comp_events_completed == 1);
	droce_shim_track_cq(&cq, false);
	CU_ASSERT(droce_shim_cq_notify(&cq.cq) == 0); /* for a CQ no longer tracked */
	CU_ASSERT(fcntl(ch->fd, F_SETFL, O_NONBLOCK) == 0);
	errno = 0;
	CU_ASSERT(ibv_get_cq_event(ch, &ecq, &ectx) == -1 && errno == EAGAIN);

	ch->refcnt--;
	CU_ASSERT(ibv_destroy_comp_channel(ch) == 0);
	close_ctx();
}

/* A reply's address from the GRH area of a UD receive: IPv4 in its last 20 bytes, or IPv6. */
static void
test_ah_from_wc(void)
{
	static const uint8_t v4peer[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 };
	static const uint8_t v6peer[16] = { 0x20, 0x01, 0, 2, [15] = 2 };
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .sl = 3 };
	struct ibv_ah_attr a;
	uint8_t grh[40];

	open_ctx();
	memset(grh, 0, sizeof(grh));
	grh[20] = 0x45;
	grh[21] = 0x68; /* DSCP 26 */
	memcpy(grh + 32, (const uint8_t[]){ 198, 18, 0, 2, 198, 18, 0, 1 }, 8);
	CU_ASSERT_FATAL(ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)grh, &a) == 0);
	CU_ASSERT(a.is_global == 1 && a.port_num == 1 && a.sl == 3);
	CU_ASSERT(memcmp(a.grh.dgid.raw, v4peer, 16) == 0);
	CU_ASSERT(a.grh.sgid_index == 0 && a.grh.traffic_class == 0x68);

	memset(grh, 0, sizeof(grh));
	grh[0] = 0x60 | 0x2; /* version 6, traffic class 0x2a, flow label 0x12345 */
	grh[1] = 0xa1;
	grh[2] = 0x23;
	grh[3] = 0x45;
	memcpy(grh + 8, v6peer, 16);
	memcpy(grh + 24, v6peer, 15);
	grh[39] = 1; /* 2001:2::1, our GID 1 */
	CU_ASSERT_FATAL(ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)grh, &a) == 0);
	CU_ASSERT(memcmp(a.grh.dgid.raw, v6peer, 16) == 0 && a.grh.sgid_index == 1);
	CU_ASSERT(a.grh.traffic_class == 0x2a && a.grh.flow_label == 0x12345);

	grh[39] = 9; /* not one of our addresses */
	errno = 0;
	CU_ASSERT(ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)grh, &a) == -1 &&
		  errno == ENOENT);
	wc.wc_flags = 0; /* RoCE: no address without the GRH */
	errno = 0;
	CU_ASSERT(ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)grh, &a) == -1 &&
		  errno == EINVAL);
	close_ctx();
}

/* A unicast destination's hop limit is the route's (64), whatever the program asks, as a
 * kernel RoCE device does (ibv_rc_pingpong asks 1); a multicast one stays the program's. */
static void
test_av_hop_limit(void)
{
	static const uint8_t v4[16] = { [10] = 0xFF, [11] = 0xFF, 198, 18, 0, 2 };
	static const uint8_t v4mc[16] = { [10] = 0xFF, [11] = 0xFF, 239, 1, 2, 3 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0x00, 0x02, [15] = 2 };
	static const uint8_t v6mc[16] = { 0xFF, 0x0E, [15] = 1 };
	const uint8_t *gids[4] = { v4, v6, v4mc, v6mc };
	const uint8_t want[4] = { 64, 64, 1, 1 };
	struct ibv_ah_attr a;
	struct droce_av av;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		memset(&a, 0, sizeof(a));
		a.is_global = 1;
		a.port_num = 1;
		a.grh.hop_limit = 1;
		memcpy(a.grh.dgid.raw, gids[i], 16);
		CU_ASSERT_EQUAL_FATAL(droce_shim_av(&av, &a), 0);
		CU_ASSERT_EQUAL(av.hop_limit, want[i]);
	}
}

DROCE_TEST_MAIN("shim_obj", DROCE_TEST(test_av_hop_limit), DROCE_TEST(test_ah_from_wc),
		DROCE_TEST(test_qp_layout), DROCE_TEST(test_cq_layout), DROCE_TEST(test_events))
