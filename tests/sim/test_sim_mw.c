/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows over a link that loses, duplicates and reorders frames, one run per seed (a
 * failing run prints its seed; the same seed replays it). Node 1 binds a type 2 window; node 0
 * WRITEs 16 KiB through it, SENDs with Invalidate naming its key, then WRITEs with that key
 * again. Whatever the network does (go-back-N resends, duplicate requests, reordered ACKs),
 * the window is invalidated exactly once: the receive completes WITH_INV with the key, both
 * of node 0's first requests succeed, the window holds the first WRITE's bytes, and only the
 * last WRITE fails (REM_ACCESS_ERR, or RETRY_EXC_ERR when its NAK is lost) without a byte of
 * it landing.
 */
#include <stdio.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define MS	1000000ull
#define SEEDS	40
#define WIN_OFF 65536u
#define WIN_LEN 16384u

static const struct sim_link_cfg lossy = {
	.rate_bps = 25000000000ull,
	.delay_ns = 2000,
	.loss = 0.05,
	.dup = 0.05,
	.reorder = 0.05,
	.reorder_ns = 5000,
};

static uint64_t dups_seen, resent_seen, nak_heard;

/* One seed; false (after printing why) on the first difference. */
static bool
one_seed(uint64_t seed)
{
	struct droce_send_wr wr, *bad;
	struct droce_mw *mw;
	struct droce_mr *mr;
	struct scen s;
	uint32_t key;
	int err = 0;
	bool ok = false;

	if (scen_init(&s, seed, &lossy, DROCE_QPT_RC, NULL, 0) != 0) {
		printf("\n    seed %llu: scen_init failed\n", (unsigned long long)seed);
		return false;
	}
	mr = droce_mr_reg(
		s.pd[1], s.mem[1], SCEN_MEM,
		DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_MW_BIND, &err);
	mw = droce_mw_alloc(s.pd[1], DROCE_MW_TYPE_2, &err);
	if (mr == NULL || mw == NULL)
		goto out;
	key = (droce_mw_rkey(mw) & ~0xFFu) | 0x42;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = DROCE_WR_BIND_MW;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.wr.bind_mw.mw = mw;
	wr.wr.bind_mw.mr = mr;
	wr.wr.bind_mw.addr = scen_addr(&s, 1, WIN_OFF);
	wr.wr.bind_mw.length = WIN_LEN;
	wr.wr.bind_mw.access = DROCE_ACCESS_REMOTE_WRITE;
	wr.wr.bind_mw.rkey = key;
	/* the bind runs at node 1's first process() call, before the first WRITE can arrive (a
	 * local request sends nothing: the run would find no event to wait for on its own) */
	if (droce_post_send(s.qp[1], &wr, &bad) != 0 || scen_post_recv(&s, 1, 2, 0, 4096) != 0) {
		printf("\n    seed %llu: posting on node 1 failed\n", (unsigned long long)seed);
		goto out;
	}
	if (scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, WIN_LEN, scen_addr(&s, 1, WIN_OFF), key,
		      0) != 0 ||
	    scen_post(&s, 0, DROCE_WR_SEND_WITH_INV, 11, 0, 100, 0, key, 0) != 0 ||
	    scen_run_until(&s, 0, 2, 2000 * MS) != SIM_DONE || s.nwc[0] != 2 ||
	    s.wc[0][0].status != DROCE_WC_SUCCESS || s.wc[0][1].status != DROCE_WC_SUCCESS) {
		printf("\n    seed %llu: WRITE + SEND with Invalidate: %u completions, %s %s\n",
		       (unsigned long long)seed, s.nwc[0],
		       s.nwc[0] > 0 ? sim_wc_status_name(s.wc[0][0].status) : "-",
		       s.nwc[0] > 1 ? sim_wc_status_name(s.wc[0][1].status) : "-");
		goto out;
	}
	scen_run_until(&s, 1, 2, 100 * MS);
	if (s.nwc[1] != 2 || s.wc[1][0].opcode != DROCE_WC_BIND_MW ||
	    s.wc[1][0].status != DROCE_WC_SUCCESS || s.wc[1][1].status != DROCE_WC_SUCCESS ||
	    !(s.wc[1][1].wc_flags & DROCE_WC_WITH_INV) || s.wc[1][1].imm_data != key ||
	    droce_qp_counter(s.qp[1], DROCE_CNT_MW_INVALIDATE) != 1) {
		printf("\n    seed %llu: the bind and the receive: %u completions, invalidations "
		       "%llu\n",
		       (unsigned long long)seed, s.nwc[1],
		       (unsigned long long)droce_qp_counter(s.qp[1], DROCE_CNT_MW_INVALIDATE));
		goto out;
	}
	if (memcmp(s.mem[1] + WIN_OFF, s.mem[0], WIN_LEN) != 0) {
		printf("\n    seed %llu: the window's bytes differ\n", (unsigned long long)seed);
		goto out;
	}
	/* from another part of node 0's buffer: none of it may land */
	if (scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 12, 2 * WIN_LEN, WIN_LEN,
		      scen_addr(&s, 1, WIN_OFF), key, 0) != 0 ||
	    scen_run_until(&s, 0, 3, 2000 * MS) != SIM_DONE || s.nwc[0] != 3 ||
	    (s.wc[0][2].status != DROCE_WC_REM_ACCESS_ERR &&
	     s.wc[0][2].status != DROCE_WC_RETRY_EXC_ERR)) {
		printf("\n    seed %llu: the WRITE with the invalidated key: %s\n",
		       (unsigned long long)seed,
		       s.nwc[0] > 2 ? sim_wc_status_name(s.wc[0][2].status) : "no completion");
		goto out;
	}
	if (memcmp(s.mem[1] + WIN_OFF, s.mem[0], WIN_LEN) != 0) {
		printf("\n    seed %llu: the refused WRITE changed the window\n",
		       (unsigned long long)seed);
		goto out;
	}
	/* Its NAK ends the responder's QP (ERR); when the network loses that NAK, the resends
	 * meet a QP in ERR and the requester runs out of retries: RETRY_EXC_ERR, as on rxe. */
	nak_heard += s.wc[0][2].status == DROCE_WC_REM_ACCESS_ERR;
	dups_seen += scen_cnt(&s, 1, DROCE_CNT_DUPLICATE_REQUEST);
	resent_seen += scen_cnt(&s, 0, DROCE_CNT_RETRANSMITTED_PKTS);
	ok = true;
out:
	scen_fini(&s);
	return ok;
}

static void
test_invalidate_once_under_loss(void)
{
	unsigned int bad = 0;
	uint64_t seed;

	for (seed = 1; seed <= SEEDS; seed++)
		if (!one_seed(seed))
			bad++;
	CU_ASSERT_EQUAL(bad, 0);
	/* the network did its part: requests were resent and duplicates arrived */
	CU_ASSERT(resent_seen > 0);
	CU_ASSERT(dups_seen > 0);
	CU_ASSERT(nak_heard >= SEEDS / 2); /* most runs hear the NAK itself */
	printf("\n    %u seeds: %llu packets resent, %llu duplicate requests, each window "
	       "invalidated once; the refused WRITE's NAK heard in %llu\n",
	       SEEDS, (unsigned long long)resent_seen, (unsigned long long)dups_seen,
	       (unsigned long long)nak_heard);
}

DROCE_TEST_MAIN("sim_mw", DROCE_TEST(test_invalidate_once_under_loss))
