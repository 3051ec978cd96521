/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * READ retries against a responder that moves a READ's origin: Linux rxe serves a duplicate
 * READ request only if its VA is at or past the VA of the last one it served for that READ
 * (IBTA 9.7.5.1 lets it: a duplicate READ asks for the original or a part of it) and then takes
 * that VA as the READ's start. A requester that asks for a later gap of a READ and then again
 * for an earlier one is never answered and exhausts its retries. Here node 1's droce responder
 * sits behind a filter applying that rule to node 0's requests; node 0 must get every READ
 * through whatever its responses lose, re-requests and rewinds each starting at the READ's
 * first missing PSN.
 */
#include "droce_test.h"
#include "droce_pkt.h"
#include "engine_harness.h"

#define NREAD 4
#define RLEN  8192 /* 8 responses at path MTU 1024 */

static uint8_t la[NREAD * RLEN] __attribute__((aligned(64)));
static uint8_t ra[NREAD * RLEN] __attribute__((aligned(64)));

/* the responder's view of one READ it executed (rxe's resp_res) */
struct rd_res {
	uint32_t first_psn, npkts;
	uint64_t va_org;
	uint32_t length;
};

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *lmr, *rmr;
	struct rd_res res[NREAD];
	unsigned int nres;
	unsigned int refused; /* duplicates the rule dropped */
	unsigned int resp;    /* node 1's READ responses so far */
	uint64_t drop;	      /* bit i: drop node 1's READ response number i + 1 */
};

static struct fx *cur;

/* Node 0's READ requests as rxe's responder takes them (duplicate_request in rdma_rxe). */
static bool
rxe_rule(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt p;
	unsigned int i;

	(void)from;
	(void)arg;
	if (droce_parse(frame, len, &p, 0) != DROCE_DROP_NONE ||
	    p.opcode != DROCE_OP_RC_RDMA_READ_REQUEST)
		return true;
	for (i = 0; i < cur->nres; i++) {
		struct rd_res *r = &cur->res[i];

		if (((p.psn - r->first_psn) & 0xFFFFFF) >= r->npkts)
			continue;
		if (p.reth_va < r->va_org || p.reth_len > r->length ||
		    p.reth_va + p.reth_len > r->va_org + r->length) {
			cur->refused++;
			return false;
		}
		r->va_org = p.reth_va;
		return true;
	}
	if (cur->nres < NREAD)
		cur->res[cur->nres++] =
			(struct rd_res){ p.psn, (p.reth_len + 1023) / 1024, p.reth_va, p.reth_len };
	return true;
}

static bool
drop_resp(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	struct droce_pkt p;
	unsigned int k;

	(void)from;
	(void)arg;
	if (droce_parse(frame, len, &p, 0) != DROCE_DROP_NONE ||
	    !(droce_opcode_info(p.opcode)->flags & DROCE_OPF_READ))
		return true;
	k = cur->resp++;
	return k >= 64 || !((cur->drop >> k) & 1);
}

/* NREAD READs of RLEN, node 1's responses numbered in drop lost: all complete, data intact.
 * rto: node 0 resends on the RTO from measured round trips (the default), or only at the local
 * ACK timeout. Returns the local ACK timeouts node 0 counted; *early its early resends. */
static uint64_t
run_rto(uint64_t drop, bool rto, uint64_t *early)
{
	static struct fx f;
	struct eh_qp_opts o;
	struct droce_wc wc[NREAD];
	int err = 0;
	unsigned int i;
	uint64_t tmo;

	memset(&f, 0, sizeof(f));
	eh_init(&f.w, 1500);
	eh_opts_default(&o);
	o.max_rd_atomic = 8;
	eh_pair(&f.w, DROCE_QPT_RC, &o, f.qp, 16);
	f.lmr = droce_mr_reg(f.w.n[0].pd, la, sizeof(la), o.access, &err);
	f.rmr = droce_mr_reg(f.w.n[1].pd, ra, sizeof(ra), o.access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.qp[0]);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.lmr);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.rmr);
	if (!rto) {
		struct droce_inflight_cfg inf;

		droce_inflight_defaults(&inf);
		inf.rto = false;
		CU_ASSERT_EQUAL_FATAL(droce_qp_set_inflight(f.qp[0], &inf), 0);
	}
	memset(la, 0, sizeof(la));
	for (i = 0; i < sizeof(ra); i++)
		ra[i] = (uint8_t)(i * 29 + 7);
	f.drop = drop;
	f.w.n[0].filter = rxe_rule;
	f.w.n[1].filter = drop_resp;
	cur = &f;
	for (i = 0; i < NREAD; i++) {
		struct droce_sge sge = { (uintptr_t)la + i * RLEN, RLEN, droce_mr_lkey(f.lmr) };

		CU_ASSERT_EQUAL_FATAL(eh_post1(f.qp[0], DROCE_WR_RDMA_READ, &sge,
					       (uintptr_t)ra + i * RLEN, droce_mr_rkey(f.rmr), 0,
					       i),
				      0);
	}
	eh_run(&f.w, 60000000000ull);
	CU_ASSERT_EQUAL_FATAL(eh_poll(&f.w.n[0], wc, NREAD), NREAD);
	for (i = 0; i < NREAD; i++) {
		CU_ASSERT_EQUAL(wc[i].wr_id, i);
		CU_ASSERT_EQUAL(wc[i].status, DROCE_WC_SUCCESS);
	}
	CU_ASSERT_EQUAL(memcmp(la, ra, sizeof(la)), 0);
	CU_ASSERT_EQUAL(f.refused, 0); /* no request the rule refuses was sent */
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[0], DROCE_CNT_RETRY_EXCEEDED_ERR), 0);
	tmo = droce_qp_counter(f.qp[0], DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR);
	*early = droce_qp_counter(f.qp[0], DROCE_CNT_RTO_RESEND);
	eh_fini(&f.w);
	return tmo;
}

static uint64_t
run(uint64_t drop)
{
	uint64_t early;

	return run_rto(drop, true, &early);
}

/* Two gaps in the first READ, the re-request for the first one lost again: the first gap
 * must not be asked for after the second. */
static void
test_gap_lost_again(void)
{
	CU_ASSERT_EQUAL(run(1ull << 2 | 1ull << 5 | 1ull << 32), 0);
}

/* A gap in the first two READs, the first one's re-request lost twice (the second time with
 * nothing behind it, so only a timer finds it). At the local ACK timeout the rewind resends the
 * first READ from its gap and passes over the second, answered through its own re-request,
 * whose start the responder took as the READ's: a resend from its first PSN would be refused.
 * With the RTO (the default) the early resend asks for the gap alone, and no retry is spent. */
static void
test_rewind_from_first_missing(void)
{
	const uint64_t drop = 1ull << 2 | 1ull << 11 | 1ull << 32 | 1ull << 34;
	uint64_t early;

	CU_ASSERT(run_rto(drop, false, &early) >= 1);
	CU_ASSERT_EQUAL(early, 0);
	CU_ASSERT_EQUAL(run_rto(drop, true, &early), 0);
	CU_ASSERT(early >= 1);
}

/* Every first response of the second and third READ and a later one of each */
static void
test_firsts_lost(void)
{
	(void)run(1ull << 8 | 1ull << 11 | 1ull << 16 | 1ull << 22 | 1ull << 33 | 1ull << 35);
}

DROCE_TEST_MAIN("read_origin", DROCE_TEST(test_gap_lost_again),
		DROCE_TEST(test_rewind_from_first_missing), DROCE_TEST(test_firsts_lost))
