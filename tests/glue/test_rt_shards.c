/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime's shard API over one memif port (no peer needed): shard devices, closures on each
 * shard's own poll lcore (the lcores float over the CPUs), QPNs created there carrying their
 * shard, per-shard counters, and the one-line refusal of lcore mode without an lcore per shard.
 * EAL starts once per process: each case forks a child, bounded by alarm().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "droce_rt.h"
#include "droce_rt_classify.h"
#include "droce_test.h"
#include "glue_child.h"

/* What a child saw; checked in the parent. */
struct seen {
	int open_rc;
	char err[256];
	unsigned int nb_shards;
	int distinct_devs, dev0_is_shard0, beyond_null, bad_shard_rc;
	unsigned int inline_lcore, main_lcore, lcore_of[2];
	int start_rc;
	uint32_t qpn[2];
	int qp_rc[2];
	uint64_t shards_counter, calls1;
	int counters_rc;
};

static void
config(struct droce_rt_config *c, const char *lcores, const char *eal)
{
	char err[256];

	droce_rt_config_defaults(c);
	CU_ASSERT_EQUAL(droce_rt_config_set(c, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(c, "eal", eal, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(c, "lcores", lcores, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(c, "shards", "2", err, sizeof(err)), 0);
	c->mbufs = 8191;
	snprintf(c->vdev, sizeof(c->vdev), "net_memif0,role=server,socket=/droce_rt_shards_%ld",
		 (long)getpid());
}

static int
where_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	*(unsigned int *)arg = rte_lcore_id();
	return 0;
}

struct qp_req {
	unsigned int shard;
	uint32_t qpn;
};

/* On the shard's own thread: a PD, CQ and RC QP of its device; the QP is left to close. */
static int
qp_fn(struct droce_rt *rt, void *arg)
{
	struct qp_req *r = arg;
	struct droce_dev *dev = droce_rt_shard_dev(rt, r->shard);
	struct droce_qp_init_attr ia = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct droce_pd *pd;
	struct droce_qp *qp;
	int e = 0;

	pd = droce_pd_alloc(dev, &e);
	if (pd == NULL)
		return -e;
	ia.send_cq = ia.recv_cq = droce_cq_create(dev, 16, NULL, &e);
	if (ia.send_cq == NULL)
		return -e;
	qp = droce_qp_create(pd, &ia, &e);
	if (qp == NULL)
		return -e;
	r->qpn = droce_qp_num(qp);
	return 0;
}

struct child_args {
	const struct droce_rt_config *c;
	bool start;
};

static void
child(void *out, const void *arg)
{
	const struct child_args *a = arg;
	const struct droce_rt_config *c = a->c;
	bool start = a->start;
	struct seen *s = out;
	struct qp_req q;
	struct droce_rt *rt;
	unsigned int i, lc;

	rt = droce_rt_open_config(c, "test_rt_shards", s->err, sizeof(s->err));
	s->open_rc = rt != NULL ? 0 : -1;
	if (rt == NULL)
		return;
	s->nb_shards = droce_rt_nb_shards(rt);
	s->distinct_devs = droce_rt_shard_dev(rt, 0) != NULL && droce_rt_shard_dev(rt, 1) != NULL &&
			   droce_rt_shard_dev(rt, 0) != droce_rt_shard_dev(rt, 1);
	s->dev0_is_shard0 = droce_rt_dev(rt) == droce_rt_shard_dev(rt, 0);
	s->beyond_null = droce_rt_shard_dev(rt, 2) == NULL;
	s->bad_shard_rc = droce_rt_call_shard(rt, 2, where_fn, &lc);
	s->main_lcore = rte_lcore_id();
	droce_rt_call_shard(rt, 1, where_fn, &s->inline_lcore);
	s->start_rc = start ? droce_rt_start(rt) : -1;
	if (s->start_rc != 0)
		snprintf(s->err, sizeof(s->err), "%s", droce_rt_strerror(rt));
	for (i = 0; i < 2; i++) {
		droce_rt_call_shard(rt, i, where_fn, &s->lcore_of[i]);
		q.shard = i;
		s->qp_rc[i] = droce_rt_call_shard(rt, i, qp_fn, &q);
		s->qpn[i] = q.qpn;
	}
	s->counters_rc = droce_rt_counter(rt, "rt.shards", &s->shards_counter);
	droce_rt_counter(rt, "rt.shard1_calls", &s->calls1);
	droce_rt_close(rt);
}

static struct seen
run(const struct droce_rt_config *c, bool start)
{
	const struct child_args a = { c, start };
	struct seen s;
	int rc = glue_in_child(child, &a, &s, sizeof(s), 30);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc == -EPIPE)
		s.open_rc = -EPIPE;
	return s;
}

static void
test_two_shards_on_lcores(void)
{
	struct droce_rt_config c;
	struct seen s;

	config(&c, "0,1,2", "--no-huge -m 128 --no-pci --lcores=0@(0-1),1@(0-1),2@(0-1)");
	s = run(&c, true);
	CU_ASSERT_EQUAL_FATAL(s.open_rc, 0);
	CU_ASSERT_EQUAL(s.nb_shards, 2);
	CU_ASSERT_TRUE(s.distinct_devs);
	CU_ASSERT_TRUE(s.dev0_is_shard0);
	CU_ASSERT_TRUE(s.beyond_null);
	CU_ASSERT_EQUAL(s.bad_shard_rc, -EINVAL);
	/* before droce_rt_start a closure runs on the caller's thread */
	CU_ASSERT_EQUAL(s.inline_lcore, s.main_lcore);
	CU_ASSERT_EQUAL(s.start_rc, 0);
	if (s.start_rc != 0)
		fprintf(stderr, "%s\n", s.err);
	/* after it, on lcores[1 + shard] */
	CU_ASSERT_EQUAL(s.lcore_of[0], 1);
	CU_ASSERT_EQUAL(s.lcore_of[1], 2);
	CU_ASSERT_EQUAL(s.qp_rc[0], 0);
	CU_ASSERT_EQUAL(s.qp_rc[1], 0);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(s.qpn[0], 1, 2), 0);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(s.qpn[1], 1, 2), 1);
	CU_ASSERT_EQUAL(s.counters_rc, 0);
	CU_ASSERT_EQUAL(s.shards_counter, 2);
	CU_ASSERT(s.calls1 >= 2); /* where_fn and qp_fn ran through shard 1's ring */
}

static void
test_inline_shards_refuse_start(void)
{
	struct droce_rt_config c;
	struct seen s;

	/* one lcore: both shards inline; lcore mode needs 1 + 2 lcores */
	config(&c, "0", "--no-huge -m 128 --no-pci");
	s = run(&c, true);
	CU_ASSERT_EQUAL_FATAL(s.open_rc, 0);
	CU_ASSERT_EQUAL(s.start_rc, -ENOTSUP);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.err, "DROCE_LCORES=0-2"));
	CU_ASSERT_PTR_NULL(strchr(s.err, '\n'));
	/* still usable inline: closures run on the caller's thread */
	CU_ASSERT_EQUAL(s.lcore_of[1], s.main_lcore);
	CU_ASSERT_EQUAL(s.qp_rc[1], 0);
	CU_ASSERT_EQUAL(droce_rt_qpn_shard(s.qpn[1], 1, 2), 1);
}

DROCE_TEST_MAIN("rt_shards", DROCE_TEST(test_two_shards_on_lcores),
		DROCE_TEST(test_inline_shards_refuse_start))
