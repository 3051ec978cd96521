/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QPN ranges of a shared port (stack/droce_portd.c): slots handed out lowest first from 1, a
 * freed slot handed out again, every slot held means -ENOSPC; a DestQP maps to its slot only
 * while held; an engine device given a slot as its shard makes QPNs only inside that range.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "droce_portd.h"
#include "droce_test.h"
#include "droce_opcode.h"
#include "num_dev.h"

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

/* An engine given slot s as its shard (what the runtime does under droce-portd) makes QPNs in
 * s's range only, across slot reuse and generations, and cannot make QP1 there. */
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

DROCE_TEST_MAIN("portd", DROCE_TEST(test_route), DROCE_TEST(test_slots_order_and_reuse),
		DROCE_TEST(test_qpn_slot), DROCE_TEST(test_engine_qpns_in_range))
