/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows end to end over the loopback harness: node 1 exposes part of an MR through a
 * window, node 0 reaches it with the window's key. Binds and refusals (each IBTA item), type 1
 * rebinding, type 2 QP association, LOCAL_INV, SEND with Invalidate, completion order behind an
 * unacknowledged WRITE (with its first transmission lost), and the MR and QP lifetimes.
 */
#include "droce_test.h"
#include "engine_harness.h"

#define ALL_ACCESS \
	(DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | \
	 DROCE_ACCESS_REMOTE_ATOMIC)
#define REMOTE (DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC)

static uint8_t la[16384], ra[16384];

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *lmr, *rmr; /* rmr: node 1's, windows may bind to it */
	struct eh_qp_opts o;
};

static void
fx_init(struct fx *f, unsigned int rmr_access)
{
	int err = 0;

	eh_init(&f->w, 4200);
	eh_opts_default(&f->o);
	eh_pair(&f->w, DROCE_QPT_RC, &f->o, f->qp, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[1]);
	f->lmr = droce_mr_reg(f->w.n[0].pd, la, sizeof(la), ALL_ACCESS, &err);
	f->rmr = droce_mr_reg(f->w.n[1].pd, ra, sizeof(ra), rmr_access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->lmr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->rmr);
	memset(la, 0x11, sizeof(la));
	memset(ra, 0x22, sizeof(ra));
}

/* A BIND_MW on qp of [off, off + len) of ra, the window to take rkey. */
static int
post_bind_key(struct droce_qp *qp, struct droce_mw *mw, struct droce_mr *mr, uint64_t off,
	      uint64_t len, unsigned int access, uint32_t rkey, uint64_t id)
{
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = DROCE_WR_BIND_MW;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.bind_mw.mw = mw;
	wr.wr.bind_mw.mr = mr;
	wr.wr.bind_mw.addr = (uintptr_t)ra + off;
	wr.wr.bind_mw.length = len;
	wr.wr.bind_mw.access = access;
	wr.wr.bind_mw.rkey = rkey;
	return droce_post_send(qp, &wr, &bad);
}

/* The same, with the window's key and its low byte set to key (ibv_inc_rkey's way). */
static int
post_bind(struct droce_qp *qp, struct droce_mw *mw, struct droce_mr *mr, uint64_t off, uint64_t len,
	  unsigned int access, uint8_t key, uint64_t id)
{
	return post_bind_key(qp, mw, mr, off, len, access,
			     mw != NULL ? (droce_mw_rkey(mw) & ~0xFFu) | key : 0, id);
}

static int
post_local_inv(struct droce_qp *qp, uint32_t rkey, uint64_t id)
{
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = DROCE_WR_LOCAL_INV;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	return droce_post_send(qp, &wr, &bad);
}

/* node 0 -> node 1: op of len bytes from la to ra + off under rkey (inv: IETH key) */
static int
post_op(struct fx *f, enum droce_wr_opcode op, uint32_t len, uint64_t off, uint32_t rkey,
	uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)la, len, droce_mr_lkey(f->lmr) };

	return eh_post1(f->qp[0], op, &sge, (uintptr_t)ra + off, rkey, 5, id);
}

static int
post_recv1(struct fx *f, uint32_t len, uint64_t id)
{
	struct droce_sge sge = { (uintptr_t)ra, len, droce_mr_lkey(f->rmr) };
	struct droce_recv_wr wr = { id, NULL, &sge, 1 }, *bad;

	return droce_post_recv(f->qp[1], &wr, &bad);
}

/* Run, then expect exactly one completion on node i; returns it. */
static struct droce_wc
one_wc(struct fx *f, unsigned int i)
{
	struct droce_wc wc[4];
	int n;

	eh_run(&f->w, 100000000);
	n = eh_poll(&f->w.n[i], wc, 4);
	CU_ASSERT_EQUAL(n, 1);
	if (n < 1)
		memset(wc, 0xFF, sizeof(wc[0]));
	return wc[0];
}

/* fx_init, and a window of type t over [off, off + len) of ra with every remote access and
 * key byte key, bound through qp[1]: its bind has completed. */
static struct droce_mw *
fx_window(struct fx *f, enum droce_mw_type t, uint64_t off, uint64_t len, uint8_t key)
{
	struct droce_mw *mw;
	int err = 0;

	fx_init(f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	mw = droce_mw_alloc(f->w.n[1].pd, t, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mw);
	CU_ASSERT_EQUAL(post_bind(f->qp[1], mw, f->rmr, off, len, REMOTE, key, 100), 0);
	CU_ASSERT_EQUAL(one_wc(f, 1).status, DROCE_WC_SUCCESS);
	return mw;
}

static void
test_alloc_rules(void)
{
	struct droce_mw *mw[9];
	struct droce_mr *mr;
	struct fx f;
	unsigned int i;
	int err = 0;

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	CU_ASSERT_PTR_NULL(droce_mw_alloc(f.w.n[1].pd, (enum droce_mw_type)3, &err));
	CU_ASSERT_EQUAL(err, EINVAL);
	CU_ASSERT_PTR_NULL(droce_mw_alloc(NULL, DROCE_MW_TYPE_1, &err));
	for (i = 0; i < 8; i++) {
		mw[i] = droce_mw_alloc(f.w.n[1].pd, i & 1 ? DROCE_MW_TYPE_2 : DROCE_MW_TYPE_1,
				       &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(mw[i]);
		/* a window's key is never an MR's: the top bit tells them apart */
		CU_ASSERT_TRUE(droce_mw_rkey(mw[i]) & 0x80000000u);
	}
	CU_ASSERT_FALSE(droce_mr_rkey(f.rmr) & 0x80000000u);
	CU_ASSERT_FALSE(droce_mr_lkey(f.rmr) & 0x80000000u);
	CU_ASSERT_NOT_EQUAL(droce_mw_rkey(mw[0]), droce_mw_rkey(mw[1]));
	mw[8] = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_1, &err); /* max_mw 8 */
	CU_ASSERT_PTR_NULL(mw[8]);
	CU_ASSERT_EQUAL(err, ENOMEM);
	/* a window holds its PD */
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0);
	CU_ASSERT_EQUAL(droce_qp_destroy(f.qp[1]), 0);
	CU_ASSERT_EQUAL(droce_pd_dealloc(f.w.n[1].pd), -EBUSY);
	for (i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(droce_mw_dealloc(mw[i]), 0);
	CU_ASSERT_EQUAL(droce_mw_dealloc(mw[0]), -EINVAL);
	CU_ASSERT_EQUAL(droce_pd_dealloc(f.w.n[1].pd), 0);
	/* the MR flag is accepted; an unknown one is not */
	mr = droce_mr_reg(f.w.n[0].pd, la, 64, DROCE_ACCESS_MW_BIND, &err);
	CU_ASSERT_PTR_NOT_NULL(mr);
	CU_ASSERT_PTR_NULL(droce_mr_reg(f.w.n[0].pd, la, 64, 1u << 5, &err));
	eh_fini(&f.w);
}

/* Type 2: bound by a work request, reached with its key through the QP it was bound through,
 * inside its range only, for the access it was given only. */
static void
test_type2_access(void)
{
	struct droce_mw *mw;
	struct droce_wc wc;
	struct fx f;
	uint32_t key;
	int err = 0;

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	mw = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_2, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mw);
	CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, f.rmr, 4096, 4096,
				  DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_ATOMIC, 0x5A, 7),
			0);
	wc = one_wc(&f, 1);
	CU_ASSERT_EQUAL(wc.wr_id, 7);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc.opcode, DROCE_WC_BIND_MW);
	key = droce_mw_rkey(mw);
	CU_ASSERT_EQUAL(key & 0xFF, 0x5A);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_MW_BIND), 1);
	/* the MR is held while a window is bound to it */
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), -EBUSY);

	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, 4096, 4096, key, 1), 0);
	wc = one_wc(&f, 0);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(memcmp(ra + 4096, la, 4096), 0);
	CU_ASSERT_EQUAL(ra[4095], 0x22);
	CU_ASSERT_EQUAL(ra[8192], 0x22);
	ra[4096] = 0;
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_ATOMIC_FETCH_AND_ADD, 8, 4096, key, 2), 0);
	wc = one_wc(&f, 0);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(ra[4096], 5);

	/* READ was not granted (C9-87 through the window's access) */
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_READ, 64, 4096, key, 3), 0);
	wc = one_wc(&f, 0);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_RKEY), 1);
	eh_fini(&f.w);
}

static void
expect_write_refused(void (*setup)(struct fx *, struct droce_mw *), uint64_t off, uint32_t len)
{
	struct droce_mw *mw;
	struct droce_wc wc;
	struct fx f;

	mw = fx_window(&f, DROCE_MW_TYPE_2, 4096, 4096, 1);
	if (setup != NULL)
		setup(&f, mw);
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, len, off, droce_mw_rkey(mw), 1), 0);
	wc = one_wc(&f, 0);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[0]), DROCE_QPS_ERR);
	CU_ASSERT_EQUAL(ra[4096], 0x22);
	CU_ASSERT_EQUAL(ra[4095], 0x22);
	eh_fini(&f.w);
}

static void
test_type2_bounds_and_key(void)
{
	expect_write_refused(NULL, 4096 - 1, 16); /* starts before the window */
	expect_write_refused(NULL, 8192 - 8, 16); /* ends after it */
}

/* Another QP of the same PD cannot use a type 2 window bound through qp[1]. */
static void
test_type2_other_qp(void)
{
	struct droce_qp *q2[2];
	struct droce_mw *mw;
	struct droce_sge sge;
	struct droce_wc wc[4];
	struct fx f;

	mw = fx_window(&f, DROCE_MW_TYPE_2, 0, 4096, 3);
	eh_pair(&f.w, DROCE_QPT_RC, &f.o, q2, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(q2[0]);
	sge = (struct droce_sge){ (uintptr_t)la, 64, droce_mr_lkey(f.lmr) };
	CU_ASSERT_EQUAL(
		eh_post1(q2[0], DROCE_WR_RDMA_WRITE, &sge, (uintptr_t)ra, droce_mw_rkey(mw), 0, 9),
		0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(ra[0], 0x22);
	/* the QP it serves still works */
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, 64, 0, droce_mw_rkey(mw), 1), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 0).status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(ra[0], 0x11);
	eh_fini(&f.w);
}

/* Type 1: rebinding moves the window and changes its key; the old key is refused; length 0
 * unbinds. */
static void
test_type1_rebind(void)
{
	struct droce_mw *mw;
	struct droce_wc wc;
	struct fx f;
	uint32_t k1, k2;

	mw = fx_window(&f, DROCE_MW_TYPE_1, 0, 1024, 0x10);
	k1 = droce_mw_rkey(mw);
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, 1024, 0, k1, 1), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 0).status, DROCE_WC_SUCCESS);
	/* rebound while bound (type 1 may be), elsewhere, with a new key byte */
	CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, f.rmr, 8192, 1024, REMOTE, 0x11, 2), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 1).status, DROCE_WC_SUCCESS);
	k2 = droce_mw_rkey(mw);
	CU_ASSERT_EQUAL(k2, (k1 & ~0xFFu) | 0x11);
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, 1024, 8192, k2, 2), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 0).status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(ra[8192], 0x11);
	/* unbind (length 0, no MR): the MR may go */
	CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, NULL, 0, 0, 0, 0x12, 3), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 1).status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0);
	/* the old key, after the rebind: refused, nothing written */
	memset(ra, 0x22, sizeof(ra));
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, 64, 0, k1, 3), 0);
	wc = one_wc(&f, 0);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(ra[0], 0x22);
	eh_fini(&f.w);
}

struct bind_case {
	const char *what;
	enum droce_mw_type type;
	unsigned int mr_access;
	uint64_t off, len;
	unsigned int access;
	bool bind_twice;
};

/* A refused bind: MW_BIND_ERR, the QP in ERR, counted, the window unchanged. */
static void
bind_refused(const struct bind_case *c)
{
	struct droce_mw *mw;
	struct droce_wc wc;
	struct fx f;
	uint32_t key;
	int err = 0;

	fx_init(&f, c->mr_access);
	mw = droce_mw_alloc(f.w.n[1].pd, c->type, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mw);
	if (c->bind_twice) {
		CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, f.rmr, 0, 64, REMOTE, 1, 1), 0);
		CU_ASSERT_EQUAL(one_wc(&f, 1).status, DROCE_WC_SUCCESS);
	}
	key = droce_mw_rkey(mw);
	CU_ASSERT_EQUAL(
		post_bind(f.qp[1], mw, c->len ? f.rmr : NULL, c->off, c->len, c->access, 0x77, 2),
		0);
	wc = one_wc(&f, 1);
	if (wc.status != DROCE_WC_MW_BIND_ERR)
		fprintf(stderr, "bind case \"%s\": status %d\n", c->what, wc.status);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(wc.opcode, DROCE_WC_BIND_MW);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[1]), DROCE_QPS_ERR);
	CU_ASSERT_EQUAL(droce_mw_rkey(mw), key);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_MW_OP_ERR), 1);
	eh_fini(&f.w);
}

static void
test_bind_refused(void)
{
	static const struct bind_case cases[] = {
		/* C10-73 */
		{ "MR without MW_BIND", DROCE_MW_TYPE_1, ALL_ACCESS, 0, 64, REMOTE, false },
		/* C10-74 */
		{ "writable window, MR without local write", DROCE_MW_TYPE_2,
		  DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_MW_BIND, 0, 64, DROCE_ACCESS_REMOTE_WRITE,
		  false },
		/* C10-75 */
		{ "past the MR's end", DROCE_MW_TYPE_2, ALL_ACCESS | DROCE_ACCESS_MW_BIND,
		  sizeof(ra) - 32, 64, REMOTE, false },
		/* o10-37.2.30 */
		{ "type 2 already bound", DROCE_MW_TYPE_2, ALL_ACCESS | DROCE_ACCESS_MW_BIND, 0, 64,
		  REMOTE, true },
		/* o10-37.2.40 */
		{ "type 2, length 0", DROCE_MW_TYPE_2, ALL_ACCESS | DROCE_ACCESS_MW_BIND, 0, 0,
		  REMOTE, false },
		{ "local write is not a window's", DROCE_MW_TYPE_1,
		  ALL_ACCESS | DROCE_ACCESS_MW_BIND, 0, 64, DROCE_ACCESS_LOCAL_WRITE, false },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		bind_refused(&cases[i]);
}

/* The consumer owns the key's low byte only: a bind naming other upper bits is refused, and
 * so is one posted for a window deallocated before it ran, whose slot a new window took. */
static void
test_bind_key_and_stale(void)
{
	struct droce_mw *mw, *mw2;
	struct droce_wc wc;
	struct fx f;
	uint32_t key;
	int err = 0;

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	mw = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_1, &err);
	key = droce_mw_rkey(mw);
	CU_ASSERT_EQUAL(post_bind_key(f.qp[1], mw, f.rmr, 0, 64, REMOTE, key ^ 0x100, 1), 0);
	wc = one_wc(&f, 1);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(droce_mw_rkey(mw), key);
	eh_fini(&f.w);

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	mw = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_1, &err);
	CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, f.rmr, 0, 64, REMOTE, 7, 1), 0);
	CU_ASSERT_EQUAL(droce_mw_dealloc(mw), 0); /* before the bind runs */
	mw2 = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_1, &err);
	CU_ASSERT_PTR_EQUAL(mw2, mw); /* the same slot */
	key = droce_mw_rkey(mw2);
	wc = one_wc(&f, 1);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_MW_BIND_ERR);
	CU_ASSERT_EQUAL(droce_mw_rkey(mw2), key);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0); /* nothing bound to it */
	eh_fini(&f.w);
}

/* Posting checks, and windows on the other side's QP types */
static void
test_post_rules(void)
{
	struct droce_qp_init_attr ia;
	struct droce_mw *mw;
	struct droce_qp *ud;
	struct fx f;
	int err = 0;

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	CU_ASSERT_EQUAL(post_bind(f.qp[1], NULL, f.rmr, 0, 64, REMOTE, 1, 1), -EINVAL);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_UD;
	ia.send_cq = ia.recv_cq = f.w.n[1].cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ud = droce_qp_create(f.w.n[1].pd, &ia, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ud);
	CU_ASSERT_EQUAL(eh_bring_up(ud, DROCE_QPT_UD, &f.w.n[0], 0, &f.o, 0, 0), 0);
	mw = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_2, &err);
	CU_ASSERT_EQUAL(post_bind(ud, mw, f.rmr, 0, 64, REMOTE, 1, 1), -EINVAL);
	CU_ASSERT_EQUAL(post_local_inv(ud, droce_mw_rkey(mw), 2), -EINVAL);
	eh_fini(&f.w);
}

/* LOCAL_INV frees a type 2 window (then it binds again); a type 1 window or an MR key cannot
 * be invalidated: LOC_QP_OP_ERR. */
static void
test_local_inv(void)
{
	struct droce_mw *mw, *mw1;
	struct droce_wc wc;
	struct fx f;
	uint32_t key;
	int err = 0;

	mw = fx_window(&f, DROCE_MW_TYPE_2, 0, 4096, 1);
	key = droce_mw_rkey(mw);
	CU_ASSERT_EQUAL(post_local_inv(f.qp[1], key, 2), 0);
	wc = one_wc(&f, 1);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc.opcode, DROCE_WC_LOCAL_INV);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_MW_INVALIDATE), 1);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0); /* nothing bound to it now */
	f.rmr = droce_mr_reg(f.w.n[1].pd, ra, sizeof(ra), ALL_ACCESS | DROCE_ACCESS_MW_BIND, &err);
	CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, f.rmr, 0, 64, REMOTE, 2, 3), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 1).status, DROCE_WC_SUCCESS);
	/* the invalidated key is refused */
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, 64, 0, key, 4), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 0).status, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(ra[0], 0x22);
	eh_fini(&f.w);

	mw1 = fx_window(&f, DROCE_MW_TYPE_1, 0, 64, 1);
	CU_ASSERT_EQUAL(post_local_inv(f.qp[1], droce_mw_rkey(mw1), 2), 0); /* o10-37.2.26 */
	wc = one_wc(&f, 1);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_LOC_QP_OP_ERR);
	CU_ASSERT_EQUAL(wc.opcode, DROCE_WC_LOCAL_INV);
	CU_ASSERT_EQUAL(eh_qp_state(f.qp[1]), DROCE_QPS_ERR);
	eh_fini(&f.w);

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	CU_ASSERT_EQUAL(post_local_inv(f.qp[1], droce_mr_rkey(f.rmr), 2), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 1).status, DROCE_WC_LOC_QP_OP_ERR);
	eh_fini(&f.w);
}

/* SEND with Invalidate naming node 1's type 2 window: the receive completes WITH_INV and the
 * key, the window is free (its MR deregisters) and the key no longer works. */
static void
test_send_with_inv(void)
{
	struct droce_mw *mw;
	struct droce_wc wc;
	struct fx f;
	uint32_t key;

	mw = fx_window(&f, DROCE_MW_TYPE_2, 8192, 4096, 9);
	key = droce_mw_rkey(mw);
	CU_ASSERT_EQUAL(post_recv1(&f, 4096, 5), 0);
	/* two packets at MTU 1024 + 3: the IETH rides on the LAST */
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_SEND_WITH_INV, 3000, 0, key, 2), 0);
	wc = one_wc(&f, 1);
	CU_ASSERT_EQUAL(wc.wr_id, 5);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wc.opcode, DROCE_WC_RECV);
	CU_ASSERT_EQUAL(wc.byte_len, 3000);
	CU_ASSERT_TRUE(wc.wc_flags & DROCE_WC_WITH_INV);
	CU_ASSERT_FALSE(wc.wc_flags & DROCE_WC_WITH_IMM);
	CU_ASSERT_EQUAL(wc.imm_data, key);
	CU_ASSERT_EQUAL(memcmp(ra, la, 3000), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 0).status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_MW_INVALIDATE), 1);
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_RDMA_WRITE, 64, 8192, key, 3), 0);
	CU_ASSERT_EQUAL(one_wc(&f, 0).status, DROCE_WC_REM_ACCESS_ERR);
	CU_ASSERT_EQUAL(ra[8192], 0x22);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0);
	eh_fini(&f.w);
}

/* A type 1 window cannot be invalidated by a peer (o10-37.2.26): REM_INV_REQ_ERR on both
 * sides, the drop named, and the window stays bound. */
static void
test_send_with_inv_type1(void)
{
	struct droce_mw *mw;
	struct droce_wc wc;
	struct fx f;

	mw = fx_window(&f, DROCE_MW_TYPE_1, 8192, 4096, 9);
	CU_ASSERT_EQUAL(post_recv1(&f, 4096, 5), 0);
	CU_ASSERT_EQUAL(post_op(&f, DROCE_WR_SEND_WITH_INV, 100, 0, droce_mw_rkey(mw), 2), 0);
	wc = one_wc(&f, 1);
	CU_ASSERT_EQUAL(wc.status, DROCE_WC_REM_INV_REQ_ERR);
	CU_ASSERT_FALSE(wc.wc_flags & DROCE_WC_WITH_INV);
	CU_ASSERT_EQUAL(one_wc(&f, 0).status, DROCE_WC_REM_INV_REQ_ERR);
	CU_ASSERT_EQUAL(droce_dev_drops(f.w.n[1].dev, DROCE_DROP_INVALIDATE), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RESP_REMOTE_INVALID_REQUEST), 1);
	/* still bound: its MR stays */
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), -EBUSY);
	eh_fini(&f.w);
}

/* Drop the first frame a node sends (here node 0's first ACK): the WRITE is acknowledged late. */
static bool
drop_first(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	unsigned int *n = arg;

	(void)from;
	(void)frame;
	(void)len;
	return (*n)++ != 0;
}

/* A bind behind an unacknowledged WRITE completes after it, executed once, whatever the
 * retransmission in between; a LOCAL_INV after them completes last. */
static void
test_order_behind_write(void)
{
	struct droce_sge sge;
	struct droce_wc wc[8];
	struct droce_mw *mw;
	unsigned int dropped = 0;
	struct fx f;
	int err = 0, n;

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	f.w.n[0].filter = drop_first; /* node 1 writes to node 0: node 0 sends the ACKs */
	f.w.n[0].filter_arg = &dropped;
	mw = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_2, &err);
	sge = (struct droce_sge){ (uintptr_t)ra, 2048, droce_mr_lkey(f.rmr) };
	CU_ASSERT_EQUAL(eh_post1(f.qp[1], DROCE_WR_RDMA_WRITE, &sge, (uintptr_t)la,
				 droce_mr_rkey(f.lmr), 0, 1),
			0);
	CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, f.rmr, 0, 64, REMOTE, 4, 2), 0);
	CU_ASSERT_EQUAL(post_local_inv(f.qp[1], (droce_mw_rkey(mw) & ~0xFFu) | 4, 3), 0);
	eh_run(&f.w, 1000000000);
	n = eh_poll(&f.w.n[1], wc, 8);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_EQUAL(wc[0].wr_id, 1);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_RDMA_WRITE);
	CU_ASSERT_EQUAL(wc[1].wr_id, 2);
	CU_ASSERT_EQUAL(wc[1].opcode, DROCE_WC_BIND_MW);
	CU_ASSERT_EQUAL(wc[2].wr_id, 3);
	CU_ASSERT_EQUAL(wc[2].opcode, DROCE_WC_LOCAL_INV);
	CU_ASSERT_EQUAL(wc[0].status | wc[1].status | wc[2].status, DROCE_WC_SUCCESS);
	CU_ASSERT_TRUE(dropped >= 2); /* the ACK was lost: a retransmission came between */
	CU_ASSERT_TRUE(droce_qp_counter(f.qp[1], DROCE_CNT_RETRANSMITTED_PKTS) >= 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_MW_BIND), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_MW_INVALIDATE), 1);
	CU_ASSERT_EQUAL(memcmp(la, ra, 2048), 0);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0); /* invalidated: unbound */
	eh_fini(&f.w);
}

/* A READ or an atomic completes on its response, with no ACK after it: a bind or LOCAL_INV
 * right behind (the send queue's last requests) completes with it, in order. */
static void
test_behind_read_atomic(void)
{
	struct droce_sge sge;
	struct droce_wc wc[8];
	struct droce_mw *mw;
	struct fx f;
	int err = 0;

	fx_init(&f, ALL_ACCESS | DROCE_ACCESS_MW_BIND);
	mw = droce_mw_alloc(f.w.n[1].pd, DROCE_MW_TYPE_2, &err);
	sge = (struct droce_sge){ (uintptr_t)ra, 512, droce_mr_lkey(f.rmr) };
	CU_ASSERT_EQUAL(eh_post1(f.qp[1], DROCE_WR_RDMA_READ, &sge, (uintptr_t)la,
				 droce_mr_rkey(f.lmr), 0, 1),
			0);
	CU_ASSERT_EQUAL(post_bind(f.qp[1], mw, f.rmr, 4096, 64, REMOTE, 4, 2), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 8), 2);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_RDMA_READ);
	CU_ASSERT_EQUAL(wc[1].opcode, DROCE_WC_BIND_MW);
	CU_ASSERT_EQUAL(wc[0].status | wc[1].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(ra[0], 0x11);
	sge.length = 8;
	CU_ASSERT_EQUAL(eh_post1(f.qp[1], DROCE_WR_ATOMIC_FETCH_AND_ADD, &sge, (uintptr_t)la,
				 droce_mr_rkey(f.lmr), 1, 3),
			0);
	CU_ASSERT_EQUAL(post_local_inv(f.qp[1], droce_mw_rkey(mw), 4), 0);
	eh_run(&f.w, 100000000);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[1], wc, 8), 2);
	CU_ASSERT_EQUAL(wc[0].opcode, DROCE_WC_FETCH_ADD);
	CU_ASSERT_EQUAL(wc[1].opcode, DROCE_WC_LOCAL_INV);
	CU_ASSERT_EQUAL(wc[0].status | wc[1].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0); /* the window was invalidated */
	eh_fini(&f.w);
}

/* A destroyed QP's type 2 windows are free again: their MR deregisters, they bind anew. */
static void
test_qp_destroy_frees(void)
{
	struct droce_mw *mw;
	struct fx f;

	mw = fx_window(&f, DROCE_MW_TYPE_2, 0, 64, 4);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), -EBUSY);
	CU_ASSERT_EQUAL(droce_qp_destroy(f.qp[1]), 0);
	CU_ASSERT_EQUAL(droce_mr_dereg(f.rmr), 0);
	CU_ASSERT_EQUAL(droce_mw_dealloc(mw), 0);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("mw", DROCE_TEST(test_alloc_rules), DROCE_TEST(test_type2_access),
		DROCE_TEST(test_type2_bounds_and_key), DROCE_TEST(test_type2_other_qp),
		DROCE_TEST(test_type1_rebind), DROCE_TEST(test_bind_refused),
		DROCE_TEST(test_bind_key_and_stale), DROCE_TEST(test_post_rules),
		DROCE_TEST(test_local_inv), DROCE_TEST(test_send_with_inv),
		DROCE_TEST(test_send_with_inv_type1), DROCE_TEST(test_order_behind_write),
		DROCE_TEST(test_behind_read_atomic), DROCE_TEST(test_qp_destroy_frees))
