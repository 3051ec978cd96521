/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fork() and the verbs shim (run on the shim, over a port of DROCE_VDEV).
 *  1. Forked before the device is opened: two children one after the other (as qperf's
 *     server forks one per test) each start a runtime of their own and use it: PD, MR, CQ,
 *     an RC QP to INIT with a receive posted, a CQ polled empty, all destroyed.
 *  2. Forked after: the parent's runtime is up (PD, CQ, QP with a receive); the child's verbs
 *     on the parent's device and objects fail with EIO (ibv_alloc_pd, ibv_create_cq,
 *     ibv_post_recv, ibv_poll_cq) and never reach the port; after the child has exited, the
 *     parent's verbs still work on the same objects and on new ones.
 * Exit 0 when every step behaved; each failure is one line on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int fails;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			printf("%ld: ", (long)getpid()); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			fails++; \
		} \
	} while (0)

struct objs {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char buf[4096];
};

/* PD, MR, CQ, RC QP in INIT with a receive posted: 0, or the step that failed. */
static int
make(struct ibv_context *ctx, struct objs *o)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr a;
	struct ibv_sge sge;
	struct ibv_recv_wr rw, *bad;

	o->pd = ibv_alloc_pd(ctx);
	if (o->pd == NULL)
		return 1;
	o->mr = ibv_reg_mr(o->pd, o->buf, sizeof(o->buf), IBV_ACCESS_LOCAL_WRITE);
	o->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (o->mr == NULL || o->cq == NULL)
		return 2;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = o->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	o->qp = ibv_create_qp(o->pd, &qa);
	if (o->qp == NULL)
		return 3;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(o->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) !=
	    0)
		return 4;
	sge.addr = (uintptr_t)o->buf;
	sge.length = sizeof(o->buf);
	sge.lkey = o->mr->lkey;
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	if (ibv_post_recv(o->qp, &rw, &bad) != 0)
		return 5;
	return 0;
}

static int
unmake(struct objs *o)
{
	int rc = ibv_destroy_qp(o->qp);

	rc |= ibv_destroy_cq(o->cq);
	rc |= ibv_dereg_mr(o->mr);
	rc |= ibv_dealloc_pd(o->pd);
	return rc;
}

static struct ibv_context *
open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;

	if (l != NULL)
		ibv_free_device_list(l);
	return ctx;
}

static int
wait_child(pid_t p)
{
	int st;

	if (waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* 1: the child opens the device itself and uses it. */
static void
child_opens(void)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_wc wc;
	struct objs o;
	int step;

	CHECK(ctx != NULL, "child: ibv_open_device failed");
	if (ctx == NULL)
		exit(1);
	step = make(ctx, &o);
	CHECK(step == 0, "child: its own device, step %d failed: %s", step, strerror(errno));
	if (step == 0) {
		CHECK(ibv_poll_cq(o.cq, 1, &wc) == 0, "child: ibv_poll_cq on its own CQ");
		CHECK(unmake(&o) == 0, "child: destroying its objects");
	}
	CHECK(ibv_close_device(ctx) == 0, "child: ibv_close_device");
	exit(fails != 0);
}

/* 2: the child uses its parent's device and objects: EIO each time, nothing reaches them. */
static void
child_borrows(struct ibv_context *ctx, struct objs *po)
{
	struct ibv_recv_wr rw, *bad;
	struct ibv_wc wc;
	struct ibv_sge sge;

	errno = 0;
	CHECK(ibv_alloc_pd(ctx) == NULL && errno == EIO,
	      "child: ibv_alloc_pd on the parent's "
	      "device: errno %d, not EIO",
	      errno);
	errno = 0;
	CHECK(ibv_create_cq(ctx, 4, NULL, NULL, 0) == NULL && errno == EIO,
	      "child: ibv_create_cq: errno %d, not EIO", errno);
	sge.addr = (uintptr_t)po->buf;
	sge.length = 64;
	sge.lkey = po->mr->lkey;
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	CHECK(ibv_post_recv(po->qp, &rw, &bad) == EIO, "child: ibv_post_recv: not EIO");
	CHECK(ibv_poll_cq(po->cq, 1, &wc) < 0, "child: ibv_poll_cq on the parent's CQ succeeded");
	exit(fails != 0);
}

int
main(void)
{
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	struct objs o, o2;
	struct ibv_wc wc;
	pid_t p;
	int i, step;

	/* 1: the device listed and opened, no runtime yet (it starts at the first PD) */
	ctx = open_dev();
	CHECK(ctx != NULL, "parent: ibv_open_device failed");
	if (ctx == NULL)
		return 1;
	for (i = 0; i < 2; i++) {
		fflush(stdout);
		p = fork();
		if (p == 0)
			child_opens();
		CHECK(wait_child(p) == 0, "fork before open: child %d failed", i);
	}
	if (fails == 0)
		printf("fork before open: 2 children, each with its own runtime: ok\n");

	/* 2: the parent's runtime up */
	step = make(ctx, &o);
	CHECK(step == 0, "parent: step %d failed: %s", step, strerror(errno));
	if (step != 0)
		return 1;
	fflush(stdout);
	fflush(stderr);
	p = fork();
	if (p == 0)
		child_borrows(ctx, &o);
	CHECK(wait_child(p) == 0, "fork after open: the child's verbs did not all fail with EIO");
	/* the parent's port and objects are as they were */
	CHECK(ibv_poll_cq(o.cq, 1, &wc) == 0, "parent: ibv_poll_cq after the child");
	CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE,
	      "parent: port not active after the child");
	step = make(ctx, &o2);
	CHECK(step == 0, "parent: new objects after the child, step %d: %s", step, strerror(errno));
	if (step == 0)
		CHECK(unmake(&o2) == 0, "parent: destroying the new objects");
	CHECK(unmake(&o) == 0, "parent: destroying its objects");
	CHECK(ibv_close_device(ctx) == 0, "parent: ibv_close_device");
	if (fails == 0)
		printf("fork after open: the child's verbs failed with EIO, the parent's work: "
		       "ok\n");
	return fails != 0;
}
