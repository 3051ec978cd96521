/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP state machine (IBTA 11.2.4.2, ibv_modify_qp(3)): every transition from every reachable
 * state with its required attributes, each required attribute left out, attributes not allowed,
 * out-of-range values, a wrong current state, and what ERR and RESET do to queued work; the
 * two-call helpers droce_qp_init() / droce_qp_connect().
 */
#include "droce_test.h"
#include "engine_harness.h"

static const enum droce_qp_type types[] = { DROCE_QPT_RC, DROCE_QPT_UC, DROCE_QPT_UD };

/* Attributes each transition requires, per type (RC, UC, UD), as the man page lists them. */
static unsigned int
required(enum droce_qp_type t, enum droce_qp_state from, enum droce_qp_state to)
{
	unsigned int m = DROCE_QP_STATE;

	if (to == DROCE_QPS_RESET || to == DROCE_QPS_ERR)
		return m;
	if (from == DROCE_QPS_RESET && to == DROCE_QPS_INIT)
		return m | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
		       (t == DROCE_QPT_UD ? DROCE_QP_QKEY : DROCE_QP_ACCESS_FLAGS);
	if (from == DROCE_QPS_INIT && to == DROCE_QPS_RTR) {
		if (t == DROCE_QPT_UD)
			return m;
		m |= DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN;
		if (t == DROCE_QPT_RC)
			m |= DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER;
		return m;
	}
	if (from == DROCE_QPS_RTR && to == DROCE_QPS_RTS) {
		m |= DROCE_QP_SQ_PSN;
		if (t == DROCE_QPT_RC)
			m |= DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			     DROCE_QP_MAX_QP_RD_ATOMIC;
		return m;
	}
	return m;
}

/* Transitions that exist (IBTA 11.2.4.2 figure, kernel qp_state_table), SQE excluded here. */
static bool
valid(enum droce_qp_state from, enum droce_qp_state to)
{
	if (to == DROCE_QPS_RESET || to == DROCE_QPS_ERR)
		return true;
	switch (from) {
	case DROCE_QPS_RESET:
		return to == DROCE_QPS_INIT;
	case DROCE_QPS_INIT:
		return to == DROCE_QPS_INIT || to == DROCE_QPS_RTR;
	case DROCE_QPS_RTR:
		return to == DROCE_QPS_RTS;
	case DROCE_QPS_RTS:
		return to == DROCE_QPS_RTS || to == DROCE_QPS_SQD;
	case DROCE_QPS_SQD:
		return to == DROCE_QPS_RTS || to == DROCE_QPS_SQD;
	default:
		return false;
	}
}

static void
fill_attr(struct droce_qp_attr *a, const struct eh_node *peer, enum droce_qp_state to)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	a->port_num = 1;
	a->qp_access_flags = DROCE_ACCESS_REMOTE_WRITE;
	a->qkey = 7;
	eh_av(peer, &a->ah_attr);
	a->path_mtu = DROCE_MTU_1024;
	a->dest_qp_num = 0x123;
	a->rq_psn = 5;
	a->sq_psn = 9;
	a->max_dest_rd_atomic = 4;
	a->max_rd_atomic = 4;
	a->min_rnr_timer = 12;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
}

static struct droce_qp *
new_qp(struct eh_world *w, enum droce_qp_type t)
{
	struct droce_qp_init_attr ia;
	int err = 0;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = t;
	ia.send_cq = w->n[0].cq;
	ia.recv_cq = w->n[0].cq;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	return droce_qp_create(w->n[0].pd, &ia, &err);
}

/* Walk RESET -> ... -> target along valid transitions. */
static int
reach(struct eh_world *w, struct droce_qp *qp, enum droce_qp_type t, enum droce_qp_state target)
{
	static const enum droce_qp_state path[] = { DROCE_QPS_INIT, DROCE_QPS_RTR, DROCE_QPS_RTS,
						    DROCE_QPS_SQD };
	enum droce_qp_state cur = DROCE_QPS_RESET;
	struct droce_qp_attr a;
	unsigned int i;
	int rc;

	if (target == DROCE_QPS_ERR) {
		fill_attr(&a, &w->n[1], DROCE_QPS_ERR);
		return droce_qp_modify(qp, &a, DROCE_QP_STATE);
	}
	for (i = 0; i < 4 && cur != target; i++) {
		fill_attr(&a, &w->n[1], path[i]);
		rc = droce_qp_modify(qp, &a, required(t, cur, path[i]));
		if (rc)
			return rc;
		cur = path[i];
	}
	return 0;
}

static void
test_transition_table(void)
{
	struct eh_world w;
	unsigned int ti;
	int from, to;

	eh_init(&w, 1500);
	for (ti = 0; ti < 3; ti++) {
		for (from = DROCE_QPS_RESET; from <= DROCE_QPS_ERR; from++) {
			if (from == DROCE_QPS_SQE)
				continue;
			for (to = DROCE_QPS_RESET; to <= DROCE_QPS_ERR; to++) {
				struct droce_qp *qp = new_qp(&w, types[ti]);
				struct droce_qp_attr a, q;
				int rc;

				CU_ASSERT_PTR_NOT_NULL_FATAL(qp);
				CU_ASSERT_EQUAL_FATAL(reach(&w, qp, types[ti], from), 0);
				fill_attr(&a, &w.n[1], to);
				rc = droce_qp_modify(qp, &a, required(types[ti], from, to));
				CU_ASSERT_EQUAL(rc, valid(from, to) ? 0 : -EINVAL);
				droce_qp_query(qp, &q, NULL);
				CU_ASSERT_EQUAL(q.qp_state, rc == 0 ? to : from);
				CU_ASSERT_EQUAL(droce_qp_destroy(qp), 0);
			}
		}
	}
	eh_fini(&w);
}

/* Each required attribute is required: leaving any one out fails and changes nothing. */
static void
test_missing_required(void)
{
	static const enum droce_qp_state steps[][2] = {
		{ DROCE_QPS_RESET, DROCE_QPS_INIT },
		{ DROCE_QPS_INIT, DROCE_QPS_RTR },
		{ DROCE_QPS_RTR, DROCE_QPS_RTS },
	};
	struct eh_world w;
	unsigned int ti, s, bit;

	eh_init(&w, 1500);
	for (ti = 0; ti < 3; ti++) {
		for (s = 0; s < 3; s++) {
			unsigned int req = required(types[ti], steps[s][0], steps[s][1]);

			for (bit = 1; bit < (1u << 21); bit <<= 1) {
				struct droce_qp *qp;
				struct droce_qp_attr a, q;

				if (!(req & bit) || bit == DROCE_QP_STATE)
					continue;
				qp = new_qp(&w, types[ti]);
				CU_ASSERT_EQUAL_FATAL(reach(&w, qp, types[ti], steps[s][0]), 0);
				fill_attr(&a, &w.n[1], steps[s][1]);
				CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req & ~bit), -EINVAL);
				droce_qp_query(qp, &q, NULL);
				CU_ASSERT_EQUAL(q.qp_state, steps[s][0]);
				droce_qp_destroy(qp);
			}
		}
	}
	eh_fini(&w);
}

/* Attributes a transition does not allow fail (e.g. SQ_PSN on INIT->RTR, QKEY on RC, CAP). */
static void
test_extra_attributes(void)
{
	struct eh_world w;
	struct droce_qp *qp;
	struct droce_qp_attr a;
	unsigned int req;

	eh_init(&w, 1500);
	qp = new_qp(&w, DROCE_QPT_RC);
	fill_attr(&a, &w.n[1], DROCE_QPS_INIT);
	req = required(DROCE_QPT_RC, DROCE_QPS_RESET, DROCE_QPS_INIT);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_QKEY), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_SQ_PSN), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_CAP), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), 0);
	a.qp_state = DROCE_QPS_RTR;
	req = required(DROCE_QPT_RC, DROCE_QPS_INIT, DROCE_QPS_RTR);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_SQ_PSN), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_TIMEOUT), -EINVAL);
	/* optional ones are fine */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_ACCESS_FLAGS | DROCE_QP_PKEY_INDEX),
			0);
	a.qp_state = DROCE_QPS_RTS;
	req = required(DROCE_QPT_RC, DROCE_QPS_RTR, DROCE_QPS_RTS);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_DEST_QPN), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_EN_SQD_ASYNC_NOTIFY), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req | DROCE_QP_MIN_RNR_TIMER), 0);
	/* RTS -> RTS: only the optional set */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE | DROCE_QP_ACCESS_FLAGS), 0);
	/* no STATE bit: a modify within the current state */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_MIN_RNR_TIMER), 0);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_PATH_MTU), -EINVAL);
	droce_qp_destroy(qp);
	eh_fini(&w);
}

/* Values outside their ranges fail with -EINVAL. */
static void
test_values(void)
{
	struct eh_world w;
	struct droce_qp *qp;
	struct droce_qp_attr a;
	unsigned int req;

	eh_init(&w, 1500); /* active MTU 1024 */
	qp = new_qp(&w, DROCE_QPT_RC);
	fill_attr(&a, &w.n[1], DROCE_QPS_INIT);
	req = required(DROCE_QPT_RC, DROCE_QPS_RESET, DROCE_QPS_INIT);
	a.port_num = 2;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.port_num = 1;
	a.pkey_index = 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.pkey_index = 0;
	a.qp_access_flags = 1u << 9;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	fill_attr(&a, &w.n[1], DROCE_QPS_INIT);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), 0);

	fill_attr(&a, &w.n[1], DROCE_QPS_RTR);
	req = required(DROCE_QPT_RC, DROCE_QPS_INIT, DROCE_QPS_RTR);
	a.path_mtu = DROCE_MTU_2048; /* above what a 1500-byte Ethernet MTU carries */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.path_mtu = (enum droce_mtu)0;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.path_mtu = DROCE_MTU_1024;
	a.min_rnr_timer = 32;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.min_rnr_timer = 0;
	a.max_dest_rd_atomic = DROCE_MAX_RD_ATOMIC + 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.max_dest_rd_atomic = 1;
	a.dest_qp_num = 1u << 24;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.dest_qp_num = 3;
	a.ah_attr.sgid_index = 1; /* one GID only */
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.ah_attr.sgid_index = 0;
	/* Annex A17: an IPv4 source GID towards an IPv6 destination makes no packet */
	a.ah_attr.dgid[10] = 0x12;
	a.ah_attr.dgid[0] = 0x20;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	CU_ASSERT_PTR_NULL(droce_ah_create(w.n[0].pd, &a.ah_attr, NULL));
	fill_attr(&a, &w.n[1], DROCE_QPS_RTR);
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), 0);

	fill_attr(&a, &w.n[1], DROCE_QPS_RTS);
	req = required(DROCE_QPT_RC, DROCE_QPS_RTR, DROCE_QPS_RTS);
	a.timeout = 32;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.timeout = 31;
	a.retry_cnt = 8;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.retry_cnt = 0;
	a.rnr_retry = 8;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.rnr_retry = 0;
	a.max_rd_atomic = DROCE_MAX_RD_ATOMIC + 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), -EINVAL);
	a.max_rd_atomic = 0;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, req), 0);
	droce_qp_destroy(qp);
	eh_fini(&w);
}

/* CUR_STATE, when given, must be the QP's state; RC has no SQE state to leave. */
static void
test_cur_state(void)
{
	struct eh_world w;
	struct droce_qp *qp;
	struct droce_qp_attr a;

	eh_init(&w, 1500);
	qp = new_qp(&w, DROCE_QPT_RC);
	CU_ASSERT_EQUAL(reach(&w, qp, DROCE_QPT_RC, DROCE_QPS_RTS), 0);
	fill_attr(&a, &w.n[1], DROCE_QPS_RTS);
	a.cur_qp_state = DROCE_QPS_RTR;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE | DROCE_QP_CUR_STATE), -EINVAL);
	a.cur_qp_state = DROCE_QPS_RTS;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE | DROCE_QP_CUR_STATE), 0);
	a.qp_state = (enum droce_qp_state)9;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), -EINVAL);
	droce_qp_destroy(qp);
	eh_fini(&w);
}

/* To ERR: outstanding send and receive WRs flush in order; RESET empties without completions;
 * posting is refused in RESET/INIT/RTR and flushed in ERR. */
static void
test_err_flush_and_reset(void)
{
	static uint8_t buf[256];
	struct eh_world w;
	struct droce_qp *qp;
	struct droce_qp_attr a;
	struct droce_mr *mr;
	struct droce_sge sge;
	struct droce_send_wr swr, *sbad;
	struct droce_recv_wr rwr, *rbad;
	struct droce_wc wc[16];
	int err = 0, i, n;

	eh_init(&w, 1500);
	mr = droce_mr_reg(w.n[0].pd, buf, sizeof(buf), DROCE_ACCESS_LOCAL_WRITE, &err);
	qp = new_qp(&w, DROCE_QPT_RC);
	sge.addr = (uintptr_t)buf;
	sge.length = 16;
	sge.lkey = droce_mr_lkey(mr);
	memset(&swr, 0, sizeof(swr));
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = DROCE_WR_SEND;
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	CU_ASSERT_EQUAL(droce_post_recv(qp, &rwr, &rbad), -EINVAL); /* RESET */
	CU_ASSERT_EQUAL(reach(&w, qp, DROCE_QPT_RC, DROCE_QPS_INIT), 0);
	CU_ASSERT_EQUAL(droce_post_send(qp, &swr, &sbad), -EINVAL);
	CU_ASSERT_PTR_EQUAL(sbad, &swr);
	for (i = 0; i < 3; i++) {
		rwr.wr_id = 10 + i;
		CU_ASSERT_EQUAL(droce_post_recv(qp, &rwr, &rbad), 0);
	}
	fill_attr(&a, &w.n[1], DROCE_QPS_RTR);
	CU_ASSERT_EQUAL(
		droce_qp_modify(qp, &a, required(DROCE_QPT_RC, DROCE_QPS_INIT, DROCE_QPS_RTR)), 0);
	a.qp_state = DROCE_QPS_RTS;
	CU_ASSERT_EQUAL(
		droce_qp_modify(qp, &a, required(DROCE_QPT_RC, DROCE_QPS_RTR, DROCE_QPS_RTS)), 0);
	for (i = 0; i < 2; i++) {
		swr.wr_id = 20 + i;
		CU_ASSERT_EQUAL(droce_post_send(qp, &swr, &sbad), 0);
	}
	a.qp_state = DROCE_QPS_ERR;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), 0);
	n = droce_cq_poll(w.n[0].cq, 16, wc);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_WR_FLUSH_ERR);
	CU_ASSERT_EQUAL(wc[0].wr_id, 20);
	CU_ASSERT_EQUAL(wc[1].wr_id, 21);
	CU_ASSERT_EQUAL(wc[2].wr_id, 10);
	CU_ASSERT_EQUAL(wc[2].opcode, DROCE_WC_RECV);
	CU_ASSERT_EQUAL(wc[4].wr_id, 12);
	/* posting in ERR completes at once with a flush */
	swr.wr_id = 30;
	CU_ASSERT_EQUAL(droce_post_send(qp, &swr, &sbad), 0);
	CU_ASSERT_EQUAL(droce_cq_poll(w.n[0].cq, 16, wc), 1);
	CU_ASSERT_EQUAL(wc[0].wr_id, 30);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_WR_FLUSH_ERR);
	/* RESET, then INIT: queued receives vanish without completions */
	a.qp_state = DROCE_QPS_RESET;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), 0);
	CU_ASSERT_EQUAL(reach(&w, qp, DROCE_QPT_RC, DROCE_QPS_INIT), 0);
	CU_ASSERT_EQUAL(droce_post_recv(qp, &rwr, &rbad), 0);
	a.qp_state = DROCE_QPS_RESET;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE), 0);
	CU_ASSERT_EQUAL(droce_cq_poll(w.n[0].cq, 16, wc), 0);
	droce_qp_destroy(qp);
	eh_fini(&w);
}

/* RTS -> SQD raises SQ_DRAINED when asked and nothing is outstanding. */
static void
test_sqd_event(void)
{
	struct eh_world w;
	struct droce_qp *qp;
	struct droce_qp_attr a;
	struct droce_async_event ev;

	eh_init(&w, 1500);
	qp = new_qp(&w, DROCE_QPT_UC);
	CU_ASSERT_EQUAL(reach(&w, qp, DROCE_QPT_UC, DROCE_QPS_RTS), 0);
	fill_attr(&a, &w.n[1], DROCE_QPS_SQD);
	a.en_sqd_async_notify = 1;
	CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, DROCE_QP_STATE | DROCE_QP_EN_SQD_ASYNC_NOTIFY), 0);
	CU_ASSERT_EQUAL(droce_dev_get_async_event(w.n[0].dev, &ev), 0);
	CU_ASSERT_EQUAL(ev.type, DROCE_EVENT_SQ_DRAINED);
	CU_ASSERT_PTR_EQUAL(ev.element.qp, qp);
	CU_ASSERT_EQUAL(droce_dev_get_async_event(w.n[0].dev, &ev), -EAGAIN);
	droce_qp_destroy(qp);
	eh_fini(&w);
}

/* SQD -> SQD: an RC QP may give the port with its new AV, as the kernel's table allows (and
 * its uverbs adds when AV is given); a UC QP may not, as there. */
static void
test_sqd_sqd_port(void)
{
	const unsigned int mask = DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PORT;
	struct eh_world w;
	struct droce_qp *qp;
	struct droce_qp_attr a;
	unsigned int i;

	eh_init(&w, 1500);
	for (i = 0; i < 2; i++) { /* types[]: RC, then UC */
		qp = new_qp(&w, types[i]);
		CU_ASSERT_EQUAL_FATAL(reach(&w, qp, types[i], DROCE_QPS_SQD), 0);
		fill_attr(&a, &w.n[1], DROCE_QPS_SQD);
		CU_ASSERT_EQUAL(droce_qp_modify(qp, &a, mask), i == 0 ? 0 : -EINVAL);
		droce_qp_destroy(qp);
	}
	eh_fini(&w);
}

/*
 * droce_qp_init() and droce_qp_connect(): each type reaches RTS with what it was given (the
 * query reads it back; UD ignores the peer fields), a QP not in INIT is refused and stays
 * where it was, a bad value fails the step it belongs to, NULL is refused.
 */
static void
test_connect_helpers(void)
{
	struct eh_world w;
	struct droce_qp_conn c;
	struct droce_qp_attr q;
	struct droce_qp *qp;
	unsigned int ti;

	eh_init(&w, 1500);
	memset(&c, 0, sizeof(c));
	eh_av(&w.n[1], &c.av);
	c.dest_qp_num = 0x123;
	c.rq_psn = 5;
	c.sq_psn = 9;
	c.path_mtu = DROCE_MTU_1024;
	c.timeout = 14;
	c.retry_cnt = 6;
	c.rnr_retry = 5;
	c.max_rd_atomic = 4;
	c.max_dest_rd_atomic = 3;
	c.min_rnr_timer = 12;
	for (ti = 0; ti < 3; ti++) {
		qp = new_qp(&w, types[ti]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(qp);
		/* RESET: connect refused, nothing moved */
		CU_ASSERT_EQUAL(droce_qp_connect(qp, &c), -EINVAL);
		CU_ASSERT_EQUAL(eh_qp_state(qp), DROCE_QPS_RESET);
		CU_ASSERT_EQUAL(droce_qp_init(qp, DROCE_ACCESS_REMOTE_WRITE, 0x77), 0);
		CU_ASSERT_EQUAL(eh_qp_state(qp), DROCE_QPS_INIT);
		CU_ASSERT_EQUAL(droce_qp_connect(qp, &c), 0);
		CU_ASSERT_EQUAL_FATAL(droce_qp_query(qp, &q, NULL), 0);
		CU_ASSERT_EQUAL(q.qp_state, DROCE_QPS_RTS);
		CU_ASSERT_EQUAL(q.sq_psn, 9);
		if (types[ti] == DROCE_QPT_UD) {
			CU_ASSERT_EQUAL(q.qkey, 0x77);
		} else {
			CU_ASSERT_EQUAL(q.qp_access_flags, DROCE_ACCESS_REMOTE_WRITE);
			CU_ASSERT_EQUAL(q.dest_qp_num, 0x123);
			CU_ASSERT_EQUAL(q.rq_psn, 5);
			CU_ASSERT_EQUAL(q.path_mtu, DROCE_MTU_1024);
			CU_ASSERT_EQUAL(memcmp(q.ah_attr.dmac, c.av.dmac, 6), 0);
		}
		if (types[ti] == DROCE_QPT_RC) {
			CU_ASSERT_EQUAL(q.timeout, 14);
			CU_ASSERT_EQUAL(q.retry_cnt, 6);
			CU_ASSERT_EQUAL(q.rnr_retry, 5);
			CU_ASSERT_EQUAL(q.max_rd_atomic, 4);
			CU_ASSERT_EQUAL(q.max_dest_rd_atomic, 3);
			CU_ASSERT_EQUAL(q.min_rnr_timer, 12);
		}
		/* RTS: connect again is refused (INIT -> RTR is the only way in) */
		CU_ASSERT_EQUAL(droce_qp_connect(qp, &c), -EINVAL);
		CU_ASSERT_EQUAL(eh_qp_state(qp), DROCE_QPS_RTS);
		droce_qp_destroy(qp);
	}
	/* A path MTU above the port's fails RTR: the QP stays in INIT. */
	qp = new_qp(&w, DROCE_QPT_RC);
	CU_ASSERT_EQUAL(droce_qp_init(qp, DROCE_ACCESS_REMOTE_WRITE, 0), 0);
	c.path_mtu = DROCE_MTU_4096;
	CU_ASSERT_EQUAL(droce_qp_connect(qp, &c), -EINVAL);
	CU_ASSERT_EQUAL(eh_qp_state(qp), DROCE_QPS_INIT);
	droce_qp_destroy(qp);
	CU_ASSERT_EQUAL(droce_qp_init(NULL, 0, 0), -EINVAL);
	CU_ASSERT_EQUAL(droce_qp_connect(NULL, &c), -EINVAL);
	eh_fini(&w);
}

DROCE_TEST_MAIN("qp_modify", DROCE_TEST(test_transition_table), DROCE_TEST(test_missing_required),
		DROCE_TEST(test_extra_attributes), DROCE_TEST(test_values),
		DROCE_TEST(test_cur_state), DROCE_TEST(test_err_flush_and_reset),
		DROCE_TEST(test_sqd_event), DROCE_TEST(test_sqd_sqd_port),
		DROCE_TEST(test_connect_helpers))
