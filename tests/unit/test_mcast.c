/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast: attach rules, delivery of a datagram sent to a group (DestQP 0xFFFFFF) to every
 * member and no one else, each with its own Q_Key check and receive WQE, detach, a destroyed
 * member leaving its groups, the named drops, and the loop back to the sender's own device's
 * members (block_self_mcast_lb). IPv4 (224.0.0.0/4) and IPv6 (ff00::/8).
 */
#include <errno.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_test.h"
#include "engine_harness.h"
#include "num_dev.h"

enum { NQ = 3, SLOT = 2048 };

static uint8_t src[4096], dst[NQ * SLOT];

struct mc {
	struct eh_world w;
	struct droce_qp *tx, *rx[NQ];
	struct droce_mr *mtx, *mrx;
	struct droce_ah *ah;
	uint8_t group[16];
};

static struct droce_qp *
ud_qp(struct eh_world *w, unsigned int node, uint32_t qkey)
{
	struct droce_qp_init_attr ia;
	struct droce_qp_conn c;
	struct droce_qp *qp;
	int err = 0;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_UD;
	ia.send_cq = ia.recv_cq = w->n[node].cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	qp = droce_qp_create(w->n[node].pd, &ia, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp);
	CU_ASSERT_EQUAL_FATAL(droce_qp_init(qp, 0, qkey), 0);
	memset(&c, 0, sizeof(c));
	c.sq_psn = 1;
	CU_ASSERT_EQUAL_FATAL(droce_qp_connect(qp, &c), 0);
	return qp;
}

/* Node 0 sends to the group; on node 1, rx[0] and rx[1] use the sender's Q_Key, rx[2] another. */
static void
mc_init(struct mc *m, bool ipv6)
{
	static const uint8_t g4[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 };
	static const uint8_t g6[16] = { 0xff, 0x0e, [14] = 0x12, 0x34 };
	struct droce_av av;
	unsigned int i;
	int err = 0;

	eh_init_v(&m->w, 1500, ipv6);
	memcpy(m->group, ipv6 ? g6 : g4, 16);
	m->tx = ud_qp(&m->w, 0, 0x11111111);
	for (i = 0; i < NQ; i++)
		m->rx[i] = ud_qp(&m->w, 1, i < 2 ? 0x11111111 : 0x22222222);
	m->mtx = droce_mr_reg(m->w.n[0].pd, src, sizeof(src), DROCE_ACCESS_LOCAL_WRITE, &err);
	m->mrx = droce_mr_reg(m->w.n[1].pd, dst, sizeof(dst), DROCE_ACCESS_LOCAL_WRITE, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->mrx);
	memset(&av, 0, sizeof(av));
	memcpy(av.dgid, m->group, 16);
	/* what the runtime maps the group to (RFC 1112 / RFC 2464): no ARP for a group */
	memcpy(av.dmac,
	       ipv6 ? (const uint8_t[6]){ 0x33, 0x33, 0, 0, 0x12, 0x34 } :
		      (const uint8_t[6]){ 0x01, 0x00, 0x5e, 1, 2, 3 },
	       6);
	av.hop_limit = 1;
	m->ah = droce_ah_create(m->w.n[0].pd, &av, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m->ah);
	memset(dst, 0, sizeof(dst));
}

static void
post_recvs(struct mc *m)
{
	struct droce_recv_wr rw, *bad;
	struct droce_sge sge;
	unsigned int i;

	for (i = 0; i < NQ; i++) {
		sge.addr = (uintptr_t)dst + i * SLOT;
		sge.length = SLOT;
		sge.lkey = droce_mr_lkey(m->mrx);
		memset(&rw, 0, sizeof(rw));
		rw.wr_id = i;
		rw.sg_list = &sge;
		rw.num_sge = 1;
		CU_ASSERT_EQUAL(droce_post_recv(m->rx[i], &rw, &bad), 0);
	}
}

/* One datagram of len bytes (filled with tag) to the group, or to dqpn; runs the world. */
static void
send_to(struct mc *m, uint32_t dqpn, uint32_t len, uint8_t tag)
{
	struct droce_send_wr wr, *bad;
	struct droce_sge sge;
	struct droce_wc wc[4];

	memset(src, tag, len);
	sge.addr = (uintptr_t)src;
	sge.length = len;
	sge.lkey = droce_mr_lkey(m->mtx);
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.ud.ah = m->ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = 0x11111111;
	CU_ASSERT_EQUAL(droce_post_send(m->tx, &wr, &bad), 0);
	eh_run(&m->w, 1000000);
	CU_ASSERT_EQUAL(eh_poll(&m->w.n[0], wc, 4), 1); /* UD: complete once sent */
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
}

/* Which of rx[] completed a receive (bit i), each checked: status, GRH (destination: the
 * group, or node 1 when unicast), payload. */
static unsigned int
delivered_to(struct mc *m, const uint8_t *dgid, uint32_t len, uint8_t tag)
{
	struct droce_wc wc[8];
	unsigned int got = 0;
	int n, i, k;

	n = eh_poll(&m->w.n[1], wc, 8);
	for (i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
		CU_ASSERT_EQUAL(wc[i].byte_len, 40 + len);
		CU_ASSERT_TRUE(wc[i].wc_flags & DROCE_WC_GRH);
		CU_ASSERT_EQUAL(wc[i].src_qp, droce_qp_num(m->tx));
		for (k = 0; k < NQ; k++)
			if (wc[i].qp_num == droce_qp_num(m->rx[k]))
				break;
		CU_ASSERT_FATAL(k < NQ && (uint64_t)k == wc[i].wr_id);
		got |= 1u << k;
		/* the GRH area holds the group as destination: IPv4's address or IPv6's GID */
		if (m->w.ipv6) {
			CU_ASSERT_EQUAL(memcmp(dst + k * SLOT + 24, dgid, 16), 0);
		} else {
			CU_ASSERT_EQUAL(memcmp(dst + k * SLOT + 20 + 16, dgid + 12, 4), 0);
		}
		CU_ASSERT_EQUAL(dst[k * SLOT + 40], tag);
		CU_ASSERT_EQUAL(dst[k * SLOT + 40 + len - 1], tag);
	}
	return got;
}

static unsigned int
delivered(struct mc *m, uint32_t len, uint8_t tag)
{
	return delivered_to(m, m->group, len, tag);
}

static void
attach_rules(void)
{
	static const uint8_t unicast[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
	uint8_t g[16];
	struct droce_qp *rc[2];
	struct eh_qp_opts o;
	struct mc m;
	unsigned int i;

	mc_init(&m, false);
	eh_opts_default(&o);
	eh_pair(&m.w, DROCE_QPT_RC, &o, rc, 4);
	/* only UD QPs join, only group GIDs are joined */
	CU_ASSERT_EQUAL(droce_mcast_attach(rc[1], m.group), -EINVAL);
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], unicast), -EINVAL);
	CU_ASSERT_EQUAL(droce_mcast_attach(NULL, m.group), -EINVAL);
	CU_ASSERT_TRUE(droce_gid_is_multicast(m.group));
	CU_ASSERT_FALSE(droce_gid_is_multicast(unicast));
	/* twice is fine; detaching what is not attached is not */
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], m.group), 0);
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], m.group), 0);
	CU_ASSERT_EQUAL(droce_mcast_detach(m.rx[1], m.group), -EINVAL);
	CU_ASSERT_EQUAL(droce_mcast_detach(m.rx[0], m.group), 0);
	CU_ASSERT_EQUAL(droce_mcast_detach(m.rx[0], m.group), -EINVAL);
	/* the tables' limits: groups a device, QPs a group */
	memcpy(g, m.group, 16);
	for (i = 0; i < DROCE_MCAST_GROUPS; i++) {
		g[15] = (uint8_t)i;
		CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], g), 0);
	}
	g[15] = 0xF0;
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], g), -ENOMEM);
	for (i = 0; i < DROCE_MCAST_GROUPS; i++) {
		g[15] = (uint8_t)i;
		CU_ASSERT_EQUAL(droce_mcast_detach(m.rx[0], g), 0);
	}
	{
		struct droce_qp *many[DROCE_MCAST_QPS + 1];

		for (i = 0; i <= DROCE_MCAST_QPS; i++) {
			many[i] = ud_qp(&m.w, 1, 1);
			CU_ASSERT_EQUAL(droce_mcast_attach(many[i], m.group),
					i < DROCE_MCAST_QPS ? 0 : -ENOMEM);
		}
		for (i = 0; i <= DROCE_MCAST_QPS; i++)
			CU_ASSERT_EQUAL(droce_qp_destroy(many[i]), 0);
	}
	/* the destroyed members left: the group is gone, a new attach finds room */
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[1], m.group), 0);
	eh_fini(&m.w);
}

/* A shard's device: groups only on shard 0, where the runtime hands DestQP 0xFFFFFF. */
static void
attach_shards(void)
{
	static const uint8_t g4[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 };
	struct num_dev n;
	struct droce_qp *qp;
	unsigned int shard;
	int err;

	for (shard = 0; shard < 2; shard++) {
		CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 4, (uint8_t)shard, 1, 4), 0);
		qp = num_qp(&n, DROCE_QPT_UD, false, &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(qp);
		CU_ASSERT_EQUAL(droce_mcast_attach(qp, g4), shard == 0 ? 0 : -EOPNOTSUPP);
		droce_dev_destroy(n.dev);
	}
}

static void
deliver_case(bool ipv6)
{
	struct mc m;
	uint64_t none;

	mc_init(&m, ipv6);
	post_recvs(&m);
	/* no member yet: a named drop, nothing consumed */
	send_to(&m, DROCE_MCAST_QPN, 100, 1);
	CU_ASSERT_EQUAL(droce_dev_drops(m.w.n[1].dev, DROCE_DROP_MCAST_NO_MEMBER), 1);
	CU_ASSERT_EQUAL(delivered(&m, 100, 1), 0);

	/* every member gets its own copy; the member with another Q_Key drops it (C10-15) */
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], m.group), 0);
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[1], m.group), 0);
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[2], m.group), 0);
	none = droce_dev_drops(m.w.n[1].dev, DROCE_DROP_NONE);
	send_to(&m, DROCE_MCAST_QPN, 1000, 2);
	CU_ASSERT_EQUAL(delivered(&m, 1000, 2), 3u);
	CU_ASSERT_EQUAL(droce_dev_drops(m.w.n[1].dev, DROCE_DROP_QKEY), 1);
	CU_ASSERT_EQUAL(droce_dev_drops(m.w.n[1].dev, DROCE_DROP_NONE), none + 1);
	CU_ASSERT_EQUAL(droce_qp_counter(m.rx[0], DROCE_CNT_MCAST_RCVD), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(m.rx[2], DROCE_CNT_MCAST_RCVD), 1);

	/* a member without a receive WQE drops its copy; the others still get theirs */
	post_recvs(&m); /* rx[0] and rx[1] again; rx[2] still holds its first */
	CU_ASSERT_EQUAL(droce_mcast_detach(m.rx[2], m.group), 0);
	send_to(&m, DROCE_MCAST_QPN, 10, 3);
	CU_ASSERT_EQUAL(delivered(&m, 10, 3), 3u);
	send_to(&m, DROCE_MCAST_QPN, 10, 4);
	CU_ASSERT_EQUAL(delivered(&m, 10, 4), 0);
	CU_ASSERT_EQUAL(droce_dev_drops(m.w.n[1].dev, DROCE_DROP_NO_RWQE), 2);

	/* a destroyed member leaves the group, the rest stay in it */
	post_recvs(&m);
	CU_ASSERT_EQUAL(droce_qp_destroy(m.rx[0]), 0);
	send_to(&m, DROCE_MCAST_QPN, 64, 5);
	CU_ASSERT_EQUAL(delivered(&m, 64, 5), 2u);
	eh_fini(&m.w);
}

static void
deliver_ipv4(void)
{
	deliver_case(false);
}

static void
deliver_ipv6(void)
{
	deliver_case(true);
}

/* DestQP 0xFFFFFF to a unicast address, and a group's datagram to a member's own QPN. */
static void
wrong_addressing(void)
{
	struct droce_av av;
	struct mc m;
	int err = 0;

	mc_init(&m, false);
	post_recvs(&m);
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], m.group), 0);
	droce_ah_destroy(m.ah);
	eh_av(&m.w.n[1], &av);
	m.ah = droce_ah_create(m.w.n[0].pd, &av, &err);
	send_to(&m, DROCE_MCAST_QPN, 8, 6);
	CU_ASSERT_EQUAL(droce_dev_drops(m.w.n[1].dev, DROCE_DROP_MCAST_NOT_GROUP), 1);
	CU_ASSERT_EQUAL(delivered(&m, 8, 6), 0);
	/* unicast to a member's QPN is ordinary UD */
	send_to(&m, droce_qp_num(m.rx[0]), 8, 7);
	CU_ASSERT_EQUAL(delivered_to(&m, m.w.n[1].gid, 8, 7), 1u);
	eh_fini(&m.w);
}

/* A receive of SLOT bytes at base for qp. */
static void
recv_into(struct droce_qp *qp, struct droce_mr *mr, uint8_t *base, uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)base, SLOT, droce_mr_lkey(mr) };
	struct droce_recv_wr rw = { id, NULL, &sge, 1 }, *bad;

	CU_ASSERT_EQUAL(droce_post_recv(qp, &rw, &bad), 0);
}

/*
 * Loopback (as mlx5 and rxe): a datagram node 0 sends to a group reaches node 0's own members,
 * the sender included, as well as node 1's; a sender made with block_self_mcast_lb does not get
 * its own, its device's other members still do. Each looped copy is counted on the sender.
 */
static void
loopback_case(bool block_self)
{
	static uint8_t lbuf[2 * SLOT];
	struct droce_qp_init_attr ia;
	struct droce_send_wr wr, *bad;
	struct droce_qp *peer, *tx;
	struct droce_mr *lmr;
	struct droce_sge sge;
	struct droce_wc wc[8];
	unsigned int sends = 0, own = 0, other = 0;
	int n, i, err = 0;
	struct mc m;

	mc_init(&m, false);
	tx = m.tx;
	if (block_self) {
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = DROCE_QPT_UD;
		ia.send_cq = ia.recv_cq = m.w.n[0].cq;
		ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
		ia.block_self_mcast_lb = true;
		tx = droce_qp_create(m.w.n[0].pd, &ia, &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(tx);
		CU_ASSERT_EQUAL(droce_qp_query(tx, NULL, &ia), 0);
		CU_ASSERT_TRUE(ia.block_self_mcast_lb);
		CU_ASSERT_EQUAL_FATAL(droce_qp_init(tx, 0, 0x11111111), 0);
		{
			struct droce_qp_conn c = { .sq_psn = 1 };

			CU_ASSERT_EQUAL_FATAL(droce_qp_connect(tx, &c), 0);
		}
		m.tx = tx; /* the sender node 1's member must name */
	}
	peer = ud_qp(&m.w, 0, 0x11111111); /* another member on the sender's device */
	lmr = droce_mr_reg(m.w.n[0].pd, lbuf, sizeof(lbuf), DROCE_ACCESS_LOCAL_WRITE, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(lmr);
	post_recvs(&m);
	CU_ASSERT_EQUAL(droce_mcast_attach(m.rx[0], m.group), 0);
	CU_ASSERT_EQUAL(droce_mcast_attach(tx, m.group), 0);
	CU_ASSERT_EQUAL(droce_mcast_attach(peer, m.group), 0);
	recv_into(tx, lmr, lbuf, 50);
	recv_into(peer, lmr, lbuf + SLOT, 51);
	memset(src, 0x6B, 200);
	sge.addr = (uintptr_t)src;
	sge.length = 200;
	sge.lkey = droce_mr_lkey(m.mtx);
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = DROCE_WR_SEND;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.ud.ah = m.ah;
	wr.wr.ud.remote_qpn = DROCE_MCAST_QPN;
	wr.wr.ud.remote_qkey = 0x11111111;
	CU_ASSERT_EQUAL(droce_post_send(tx, &wr, &bad), 0);
	eh_run(&m.w, 1000000);
	n = eh_poll(&m.w.n[0], wc, 8);
	for (i = 0; i < n; i++) {
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
		if (wc[i].opcode == DROCE_WC_SEND) {
			sends++;
			continue;
		}
		CU_ASSERT_EQUAL(wc[i].byte_len, 40 + 200);
		CU_ASSERT_TRUE(wc[i].wc_flags & DROCE_WC_GRH);
		CU_ASSERT_EQUAL(wc[i].src_qp, droce_qp_num(tx));
		if (wc[i].qp_num == droce_qp_num(tx) && wc[i].wr_id == 50)
			own++;
		else if (wc[i].qp_num == droce_qp_num(peer) && wc[i].wr_id == 51)
			other++;
	}
	CU_ASSERT_EQUAL(sends, 1);
	CU_ASSERT_EQUAL(own, block_self ? 0 : 1);
	CU_ASSERT_EQUAL(other, 1);
	CU_ASSERT_EQUAL(lbuf[SLOT + 40], 0x6B);
	CU_ASSERT_EQUAL(lbuf[SLOT + 40 + 199], 0x6B);
	/* the group's address in the GRH area, as for a datagram from the wire */
	CU_ASSERT_EQUAL(memcmp(lbuf + SLOT + 20 + 16, m.group + 12, 4), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(tx, DROCE_CNT_MCAST_LOOPED), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(peer, DROCE_CNT_MCAST_RCVD), 1);
	/* the wire copy still goes: node 1's member has it */
	CU_ASSERT_EQUAL(delivered(&m, 200, 0x6B), 1u);
	eh_fini(&m.w);
}

static void
loopback(void)
{
	loopback_case(false);
}

static void
loopback_block_self(void)
{
	loopback_case(true);
}

DROCE_TEST_MAIN("mcast", DROCE_TEST(attach_rules), DROCE_TEST(attach_shards),
		DROCE_TEST(deliver_ipv4), DROCE_TEST(deliver_ipv6), DROCE_TEST(wrong_addressing),
		DROCE_TEST(loopback), DROCE_TEST(loopback_block_self))
