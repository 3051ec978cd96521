/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QPN ranges of a shared port (stack/droce_portd.c): slots handed out lowest first from 1, a
 * freed slot handed out again, every slot held means -ENOSPC; a DestQP maps to its slot only
 * while held; an engine device given a slot as its shard makes QPNs only inside that range.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cm/droce_cm.h"
#include "cm/droce_cm_int.h"
#include "cm/droce_cm_msg.h"
#include "droce_opcode.h"
#include "droce_portd.h"
#include "droce_test.h"
#include "num_dev.h"
#include "wire/droce_mad.h"

static void
cm_send(void *ctx, struct droce_cm_conn *conn, const uint8_t gid[16],
	const uint8_t mad[DROCE_MAD_SIZE])
{
	(void)ctx;
	(void)conn;
	(void)gid;
	(void)mad;
}

static int
cm_event(void *ctx, struct droce_cm_conn *conn, enum droce_cm_event ev,
	 const struct droce_cm_msg *m)
{
	(void)ctx;
	(void)conn;
	(void)ev;
	(void)m;
	return 0;
}

static void
test_slots_order_and_reuse(void)
{
	struct droce_portd_slots t;
	unsigned int s;

	CU_ASSERT_EQUAL(droce_portd_slots_init(&t, 0), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slots_init(&t, DROCE_PORTD_MAX_BITS + 1), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 3), 0);
	for (s = 1; s < 8; s++)
		CU_ASSERT_EQUAL(droce_portd_slot_get(&t), (int)s);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), -ENOSPC);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 3), 0);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 3), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 0), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 8), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 5), 0);
	/* the lowest freed slot first: a dead program's range is the next one given out */
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 3);
	CU_ASSERT_EQUAL(t.gen[3], 2);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 5);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), -ENOSPC);
}

static void
test_qpn_slot(void)
{
	struct droce_portd_slots t;
	uint32_t first, last;

	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 3), 0);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 1);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 2);
	droce_portd_slot_range(&t, 2, &first, &last);
	CU_ASSERT_EQUAL(first, 0x400000);
	CU_ASSERT_EQUAL(last, 0x5FFFFF);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, first), 2);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, last), 2);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x200011), 1);
	/* QP0, QP1, multicast and slot 0 belong to no program; nor does a free slot */
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 1), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x1FFFFF), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0xFFFFFF), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x600000), -ENOENT);
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 1), 0);
	CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, 0x200011), -ENOENT);
}

/* An engine given slot s as its shard makes QPNs in s's range only, across slot reuse and
 * generations; QP1 there only with gsi_any_shard (what the runtime sets under droce-portd). */
static void
test_engine_qpns_in_range(void)
{
	struct droce_portd_slots t;
	struct droce_qp *qps[40];
	struct num_dev n;
	uint32_t first, last;
	unsigned int i, round;
	int s, err;

	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 3), 0);
	for (round = 0; round < 3; round++) {
		s = droce_portd_slot_get(&t);
		CU_ASSERT_EQUAL_FATAL(s, 1 + (int)round);
		droce_portd_slot_range(&t, (unsigned int)s, &first, &last);
		CU_ASSERT_EQUAL_FATAL(num_dev_init(&n, 32, (uint8_t)s, t.bits, 0xFFFF0 + round), 0);
		for (i = 0; i < 40; i++) {
			qps[i] = num_qp(&n, DROCE_QPT_RC, false, &err);
			if (qps[i] == NULL)
				break;
			CU_ASSERT(droce_qp_num(qps[i]) >= first && droce_qp_num(qps[i]) <= last);
			CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, droce_qp_num(qps[i])), s);
			/* destroy every other one: a reused engine slot gets a new generation */
			if (i % 2 == 1) {
				CU_ASSERT_EQUAL(droce_qp_destroy(qps[i]), 0);
				qps[i] = NULL;
			}
		}
		CU_ASSERT(i >= 32);
		CU_ASSERT_PTR_NULL(num_qp(&n, DROCE_QPT_UD, true, &err));
		CU_ASSERT_EQUAL(err, EINVAL);
		droce_dev_destroy(n.dev);
	}
	/* as the runtime makes it under the service (gsi_any_shard): QP1 too, for its CM */
	CU_ASSERT_EQUAL_FATAL(num_dev_init_gsi(&n, 32, 2, t.bits, 0, true), 0);
	qps[0] = num_qp(&n, DROCE_QPT_UD, true, &err);
	CU_ASSERT_PTR_NOT_NULL(qps[0]);
	if (qps[0] != NULL)
		CU_ASSERT_EQUAL(droce_qp_num(qps[0]), DROCE_QPN_GSI);
	qps[1] = num_qp(&n, DROCE_QPT_RC, false, &err);
	CU_ASSERT_PTR_NOT_NULL(qps[1]);
	if (qps[1] != NULL)
		CU_ASSERT_EQUAL(droce_portd_qpn_slot(&t, droce_qp_num(qps[1])), 2);
	droce_dev_destroy(n.dev);
}

static uint32_t
roce_frame(uint8_t *buf, uint32_t dqpn)
{
	struct droce_pkt p;
	uint8_t pay[8] = { 0 };
	int n;

	memset(&p, 0, sizeof(p));
	p.dmac[0] = 2;
	p.smac[0] = 2;
	p.ip_ver = 4;
	p.hop_limit = 64;
	droce_gid_from_v4(p.sgid, 0xC6120002u);
	droce_gid_from_v4(p.dgid, 0xC6120001u);
	p.udp_sport = 0xC000;
	p.opcode = DROCE_OP_RC_SEND_ONLY;
	p.pkey = 0xFFFF;
	p.dqpn = dqpn;
	n = droce_build(buf, 256, &p, pay, sizeof(pay));
	CU_ASSERT_FATAL(n > 0);
	return (uint32_t)n;
}

/* Frames from the port: RoCE by DestQP to the slot's program, ARP to the service, the rest
 * dropped with a reason (not RoCE, a free slot, QP1, multicast, cut before the DestQP). */
static void
test_route(void)
{
	struct droce_portd_slots t;
	enum droce_portd_drop d = DROCE_PORTD_DROP_COUNT;
	uint8_t f[256];
	unsigned int slot = 0;
	uint32_t n;

	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 3), 0);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 1);
	n = roce_frame(f, 0x200005);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_TO_PROGRAM);
	CU_ASSERT_EQUAL(slot, 1);
	n = roce_frame(f, 0x400005);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_no_program);
	n = roce_frame(f, 1);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_special_qp);
	n = roce_frame(f, 0xFFFFFF);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_special_qp);
	/* UDP 4791 cut inside the BTH */
	n = roce_frame(f, 0x200005);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, 14 + 20 + 8 + 6, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT(d == DROCE_PORTD_DROP_bth_short || d == DROCE_PORTD_DROP_not_roce);
	/* another UDP port */
	f[14 + 20 + 3] ^= 1;
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_not_roce);
	memset(f, 0, 60);
	f[12] = 0x08;
	f[13] = 0x06;
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, 60, &slot, &d), DROCE_PORTD_ARP);
	CU_ASSERT_STRING_EQUAL(droce_portd_drop_name(DROCE_PORTD_DROP_src_mac), "src_mac");
}

/* A CM MAD to QP1 (UD SEND Only, DETH, the MAD) as a peer sends it. */
static uint32_t
mad_frame(uint8_t *buf, uint16_t attr, uint32_t local_id, uint32_t remote_id, uint64_t sid,
	  uint8_t mgmt_class)
{
	struct droce_cm_msg m;
	struct droce_pkt p;
	uint8_t mad[DROCE_MAD_SIZE];
	int n;

	memset(&m, 0, sizeof(m));
	m.attr = attr;
	m.tid = 7;
	m.local_comm_id = local_id;
	m.remote_comm_id = remote_id;
	m.service_id = sid;
	m.max_cm_retries = 3;
	m.path_mtu = 3;
	CU_ASSERT_FATAL(droce_cm_msg_build(&m, mad) == 0);
	mad[1] = mgmt_class;
	memset(&p, 0, sizeof(p));
	p.dmac[0] = 2;
	p.smac[0] = 2;
	p.ip_ver = 4;
	p.hop_limit = 64;
	droce_gid_from_v4(p.sgid, 0xC6120002u);
	droce_gid_from_v4(p.dgid, 0xC6120001u);
	p.udp_sport = 0xC000;
	p.opcode = DROCE_OP_UD_SEND_ONLY;
	p.pkey = 0xFFFF;
	p.dqpn = DROCE_QPN_GSI;
	p.deth_qkey = DROCE_QKEY_GSI;
	p.deth_sqpn = DROCE_QPN_GSI;
	n = droce_build(buf, 512, &p, mad, sizeof(mad));
	CU_ASSERT_FATAL(n > 0);
	return (uint32_t)n;
}

/* QP1 shared: a REQ or SIDR_REQ to the slot listening on its service ID (none: dropped), every
 * other CM MAD to the slot in the top bits of the comm ID it names (ours), MADs of other classes
 * dropped; a listen is one slot's, and goes with the slot. */
static void
test_route_cm(void)
{
	const uint64_t sid = 0x01061d2f, sid2 = 0x01061d30; /* rdma_cm TCP ports 7471, 7472 */
	struct droce_portd_slots t;
	enum droce_portd_drop d = DROCE_PORTD_DROP_COUNT;
	uint8_t f[512];
	unsigned int slot = 0, i;
	uint32_t n;

	CU_ASSERT_EQUAL_FATAL(droce_portd_slots_init(&t, 2), 0);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 1);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 2);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 3, sid, true), -EINVAL); /* not held */
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, 0, true), -EINVAL);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, sid, false), -ENOENT);
	n = mad_frame(f, DROCE_CM_ATTR_REQ, 0x1234, 0, sid, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_no_listener);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, sid, true), 0);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, sid, true), 0);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 1, sid, true), -EADDRINUSE);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_TO_PROGRAM);
	CU_ASSERT_EQUAL(slot, 2);
	/* service ID 0 is nobody's, though empty listen entries hold 0 */
	n = mad_frame(f, DROCE_CM_ATTR_REQ, 0x1234, 0, 0, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_no_listener);
	n = mad_frame(f, DROCE_CM_ATTR_SIDR_REQ, 0x1234, 0, sid2, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_no_listener);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 1, sid2, true), 0);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_TO_PROGRAM);
	CU_ASSERT_EQUAL(slot, 1);
	/* the answers name our comm ID: slot 1's IDs start 01, slot 2's 10 (two slot bits) */
	n = mad_frame(f, DROCE_CM_ATTR_REP, 0x99, 0x40000123, 0, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_TO_PROGRAM);
	CU_ASSERT_EQUAL(slot, 1);
	n = mad_frame(f, DROCE_CM_ATTR_DREQ, 0x99, 0x80000123, 0, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_TO_PROGRAM);
	CU_ASSERT_EQUAL(slot, 2);
	n = mad_frame(f, DROCE_CM_ATTR_SIDR_REP, 0x80000777, 0, sid, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_TO_PROGRAM);
	CU_ASSERT_EQUAL(slot, 2);
	/* slot 3 is nobody's, nor slot 0 (a REJ of nothing carries 0) */
	n = mad_frame(f, DROCE_CM_ATTR_RTU, 0x99, 0xC0000123, 0, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_no_program);
	n = mad_frame(f, DROCE_CM_ATTR_REJ, 0x99, 0, 0, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_no_program);
	/* not the CM class (e.g. a PerfMgt MAD): nobody's */
	n = mad_frame(f, DROCE_CM_ATTR_REP, 0x99, 0x40000123, 0, 0x04);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_special_qp);
	/* a slot freed (its program killed) loses its listens; full table: -ENOSPC */
	CU_ASSERT_EQUAL(droce_portd_slot_put(&t, 2), 0);
	CU_ASSERT_EQUAL(droce_portd_slot_get(&t), 2);
	n = mad_frame(f, DROCE_CM_ATTR_REQ, 0x1234, 0, sid, DROCE_MAD_CLASS_CM);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_DROP);
	CU_ASSERT_EQUAL(d, DROCE_PORTD_DROP_no_listener);
	for (i = 0; i < DROCE_PORTD_LISTENS; i++)
		CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, 0x100 + i, true), 0);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, sid, true), -ENOSPC);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, 0x100, false), 0);
	CU_ASSERT_EQUAL(droce_portd_listen(&t, 2, sid, true), 0);
	CU_ASSERT_EQUAL(droce_portd_route(&t, f, n, &slot, &d), DROCE_PORTD_TO_PROGRAM);
	CU_ASSERT_EQUAL(slot, 2);
}

/* The CM's comm IDs carry a prefix in their top bits once set (the slot, under the service),
 * the rest as before (table index, a non-zero generation); a prefix too wide for its bits, or leaving no room for the
 * table's index, is refused. */
static void
test_cm_id_prefix(void)
{
	static struct droce_cm_conn conns[64];
	const struct droce_cm_ops ops = { cm_send, cm_event };
	uint8_t gid[16] = { 0 };
	struct droce_cm_conn *c[3];
	struct droce_cm cm;
	unsigned int i;

	CU_ASSERT_EQUAL_FATAL(droce_cm_init(&cm, conns, 64, &ops, NULL, NULL, 0xFFFF0000ull), 0);
	CU_ASSERT_EQUAL(droce_cm_set_id_prefix(&cm, 4, 2), -EINVAL);
	CU_ASSERT_EQUAL(droce_cm_set_id_prefix(&cm, 1, 26), -EINVAL);
	CU_ASSERT_EQUAL(droce_cm_set_id_prefix(&cm, 2, 2), 0);
	for (i = 0; i < 3; i++) {
		c[i] = droce_cm_conn_new(&cm, gid);
		CU_ASSERT_PTR_NOT_NULL_FATAL(c[i]);
		CU_ASSERT_EQUAL(c[i]->local_comm_id >> 30, 2);
		CU_ASSERT((c[i]->local_comm_id & 0x3FFFFFFF) >> 6 != 0);
		/* the low bits still index the table (droce_cm_by_comm_id) */
		CU_ASSERT_EQUAL(c[i]->local_comm_id & 63, (uint32_t)(c[i] - conns));
	}
	CU_ASSERT(c[0]->local_comm_id != c[1]->local_comm_id);
	CU_ASSERT_EQUAL(droce_cm_set_id_prefix(&cm, 0, 0), 0);
	c[0] = droce_cm_conn_new(&cm, gid);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c[0]);
	CU_ASSERT(c[0]->local_comm_id >> 30 != 2 || (c[0]->local_comm_id >> 6) != 0);
}

DROCE_TEST_MAIN("portd", DROCE_TEST(test_route), DROCE_TEST(test_slots_order_and_reuse),
		DROCE_TEST(test_qpn_slot), DROCE_TEST(test_engine_qpns_in_range),
		DROCE_TEST(test_route_cm), DROCE_TEST(test_cm_id_prefix))
