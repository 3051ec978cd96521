/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shards without EAL: the engine puts its shard in the QPN's top bits (droce_dev_attr.shard,
 * shard_bits), the runtime reads it back (droce_rt_qpn_shard) and from a received frame's BTH
 * (droce_rt_classify_vlan); the shard keys' cross-checks fail with one line naming the fix.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_rt_classify.h"
#include "droce_rt_config.h"
#include "droce_test.h"
#include "droce_verbs.h"

static uint8_t txbuf[4096];
static uint64_t next_rand;

static uint8_t *
t_alloc(void *ctx, uint32_t len, void **cookie)
{
	(void)ctx;
	*cookie = NULL;
	return len <= sizeof(txbuf) ? txbuf : NULL;
}

static void
t_send(void *ctx, void *cookie, uint32_t len)
{
	(void)ctx;
	(void)cookie;
	(void)len;
}

static uint64_t
t_rand(void *ctx)
{
	(void)ctx;
	return next_rand;
}

static struct droce_dev *
make_dev(unsigned int shard, unsigned int bits, uint32_t max_qp)
{
	static const struct droce_io io = { t_alloc, t_send, t_rand, NULL };
	struct droce_dev_attr a;
	int e = 0;

	memset(&a, 0, sizeof(a));
	a.mac[0] = 2;
	a.gids[0][10] = 0xff;
	a.gids[0][11] = 0xff;
	a.num_gids = 1;
	a.eth_mtu = 1500;
	a.max_qp = max_qp;
	a.max_cq = 4;
	a.max_mr = 4;
	a.max_pd = 2;
	a.shard = (uint8_t)shard;
	a.shard_bits = (uint8_t)bits;
	return droce_dev_create(&a, &io, &e);
}

static struct droce_qp *
make_qp(struct droce_pd *pd, struct droce_cq *cq, int *e)
{
	struct droce_qp_init_attr ia = {
		.qp_type = DROCE_QPT_RC,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return droce_qp_create(pd, &ia, e);
}

static void
test_qpn_shard_mapping(void)
{
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0xABCDEF, 0, 1), 0);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0x7FFFFF, 1, 2), 0);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0x800001, 1, 2), 1);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0xFFFFFF, 1, 2), 0); /* multicast */
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0x412345, 2, 3), 1);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0x812345, 2, 3), 2);
	/* shard 3 of 3 does not exist, nor does a truncated frame's QPN: shard 0 drops them */
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0xC12345, 2, 3), 0);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(UINT32_MAX, 2, 3), 0);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(0xF00001, 4, 16), 15);
}

/* Every QPN a device of shard s allocates maps back to s, and stays O(1) by slot. */
static void
test_engine_qpns_carry_shard(void)
{
	unsigned int bits, shard, nb, i, round;
	struct droce_qp *qps[6];
	struct droce_cq *cq;
	struct droce_pd *pd;
	struct droce_dev *dev;
	uint32_t seen[6], qpn;
	int e = 0;

	for (bits = 1; bits <= 4; bits++) {
		nb = 1u << bits;
		for (shard = 0; shard < nb; shard++) {
			next_rand = 0x12345678u * (shard + 1);
			dev = make_dev(shard, bits, 6);
			CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
			pd = droce_pd_alloc(dev, &e);
			cq = droce_cq_create(dev, 64, NULL, &e);
			CU_ASSERT_PTR_NOT_NULL_FATAL(pd);
			CU_ASSERT_PTR_NOT_NULL_FATAL(cq);
			for (round = 0; round < 3; round++) {
				for (i = 0; i < 6; i++) {
					qps[i] = make_qp(pd, cq, &e);
					CU_ASSERT_PTR_NOT_NULL_FATAL(qps[i]);
					qpn = droce_qp_num(qps[i]);
					CU_ASSERT(qpn <= 0xFFFFFF);
					CU_ASSERT(qpn > 1);
					CU_ASSERT_EQUAL(droce_rt_qpn_shard(qpn, bits, nb), shard);
					/* slot in the low bits: 8 slots for max_qp 6 */
					CU_ASSERT((qpn & 7) >= 2);
					if (round > 0)
						CU_ASSERT_NOT_EQUAL(qpn, seen[i]);
					seen[i] = qpn;
				}
				for (i = 0; i < 6; i++)
					CU_ASSERT_EQUAL(droce_qp_destroy(qps[i]), 0);
			}
			droce_cq_destroy(cq);
			droce_pd_dealloc(pd);
			droce_dev_destroy(dev);
		}
	}
}

/* The multicast QPN 0xFFFFFF (IBTA 10.5.2.2) is never handed out, even to the last shard's
 * last slot with an all-ones generation. */
static void
test_engine_skips_multicast_qpn(void)
{
	struct droce_qp *qps[6];
	struct droce_cq *cq;
	struct droce_pd *pd;
	struct droce_dev *dev;
	unsigned int i;
	int e = 0;

	next_rand = 0xFFFFFFFFu - 5; /* the sixth QP (slot 7) draws generation 0xFFFFFFFF */
	dev = make_dev(3, 2, 6);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	pd = droce_pd_alloc(dev, &e);
	cq = droce_cq_create(dev, 64, NULL, &e);
	for (i = 0; i < 6; i++) {
		qps[i] = make_qp(pd, cq, &e);
		CU_ASSERT_PTR_NOT_NULL_FATAL(qps[i]);
		CU_ASSERT_NOT_EQUAL(droce_qp_num(qps[i]), 0xFFFFFF);
		CU_ASSERT_EQUAL(droce_rt_qpn_shard(droce_qp_num(qps[i]), 2, 4), 3);
	}
	CU_ASSERT_EQUAL(droce_qp_num(qps[5]) & 7, 7);
	droce_dev_destroy(dev);
}

/* No generation bit left: QP creation refuses rather than alias slots or shards. */
static void
test_engine_refuses_no_room(void)
{
	struct droce_cq *cq;
	struct droce_pd *pd;
	struct droce_dev *dev;
	int e = 0;

	next_rand = 1;
	dev = make_dev(0, 9, 6); /* 9 shard bits: more than the engine allows */
	CU_ASSERT_PTR_NOT_NULL_FATAL(dev);
	pd = droce_pd_alloc(dev, &e);
	cq = droce_cq_create(dev, 64, NULL, &e);
	CU_ASSERT_PTR_NULL(make_qp(pd, cq, &e));
	CU_ASSERT_EQUAL(e, EINVAL);
	droce_dev_destroy(dev);
}

/* A RoCEv2 frame's DestQP comes out of the classifier; a short one gives UINT32_MAX. */
static void
test_classify_qpn(void)
{
	static const uint8_t me[6] = { 2, 0, 0, 0, 0, 1 };
	uint8_t f[14 + 20 + 8 + 12 + 4];
	enum droce_drop why;
	uint32_t qpn = 0;

	memset(f, 0, sizeof(f));
	memcpy(f, me, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = 17;
	f[34 + 2] = 0x12; /* UDP 4791 */
	f[34 + 3] = 0xb7;
	f[42 + 5] = 0x81;
	f[42 + 6] = 0x23;
	f[42 + 7] = 0x45;
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, sizeof(f), me, 0, &why, &qpn), DROCE_RT_CLS_ROCE);
	CU_ASSERT_EQUAL(qpn, 0x812345);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(qpn, 1, 2), 1);
	CU_ASSERT_EQUAL(droce_rt_classify_vlan(f, 42 + 7, me, 0, &why, &qpn), DROCE_RT_CLS_ROCE);
	CU_ASSERT_EQUAL(qpn, UINT32_MAX);
}

static void
base(struct droce_rt_config *c)
{
	char err[256];

	droce_rt_config_defaults(c);
	CU_ASSERT_EQUAL(droce_rt_config_set(c, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
}

static void
test_config_shards(void)
{
	struct droce_rt_config c;
	char err[256] = "";

	base(&c);
	CU_ASSERT_EQUAL(c.shards, 1);
	CU_ASSERT_EQUAL(droce_rt_config_shard_bits(&c), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "shards", "3", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_shard_bits(&c), 2);
	CU_ASSERT_EQUAL(droce_rt_config_nb_queues(&c), 3); /* queues 1, raised */
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "queues", "4", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_nb_queues(&c), 4);
	/* one lcore: the application drives the three shards inline */
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), 0);
	/* lcore mode: one poll lcore per shard */
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "lcores", "0,1", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "shards 3 need 4 lcores"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "DROCE_LCORES=0-3"));
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "lcores", "0-3", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), 0);
	/* QPN room: 2^20 QPs take 21 slot bits; 2 shard bits leave one generation bit, 3 none */
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "max_qp", "1048576", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "mbufs", "65536", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "shards", "5", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "lcores", "0-5", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "lower DROCE_MAX_QP"));
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "max_qp", "65536", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), 0);
	/* mempool for every queue */
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "mbufs", "2000", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "raise DROCE_MBUFS"));
	/* range */
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "shards", "0", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_set(&c, "shards", "16", err, sizeof(err)), -EINVAL);
}

DROCE_TEST_MAIN("rt_shard", DROCE_TEST(test_qpn_shard_mapping),
		DROCE_TEST(test_engine_qpns_carry_shard),
		DROCE_TEST(test_engine_skips_multicast_qpn),
		DROCE_TEST(test_engine_refuses_no_room), DROCE_TEST(test_classify_qpn),
		DROCE_TEST(test_config_shards))
