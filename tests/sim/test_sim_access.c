/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every kind of remote access violation (IBTA 9.7.5.2.4 / 10.6.3), each asserting the exact
 * completion status, that the target memory is untouched, the counters and events on both sides,
 * and what follows: the QP goes to the error state and the WRs after it flush with WR_FLUSH_ERR
 * in posting order (IBTA 10.8.3.4, 11.6.2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_drop.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define MS 1000000ull

static void
faulty_then_flush(struct scen *s, enum droce_wc_status st, uint32_t toff, uint32_t tlen)
{
	bool acc = st == DROCE_WC_REM_ACCESS_ERR;
	uint32_t rkey = droce_mr_rkey(s->mr[1]);
	unsigned int i, sends = 0, recvs = 0;

	CU_ASSERT_EQUAL(scen_post_recv(s, 0, 100, 40000, 512), 0);
	CU_ASSERT_EQUAL(
		scen_post(s, 0, DROCE_WR_RDMA_WRITE, 11, 0, 64, scen_addr(s, 1, 20000), rkey, 0),
		0);
	CU_ASSERT_EQUAL(
		scen_post(s, 0, DROCE_WR_RDMA_READ, 12, 4096, 64, scen_addr(s, 1, 20000), rkey, 0),
		0);
	CU_ASSERT_EQUAL(scen_post(s, 0, DROCE_WR_SEND, 13, 0, 64, 0, 0, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(s, 0, 5, 500 * MS), SIM_DONE);
	CU_ASSERT_EQUAL_FATAL(s->nwc[0], 5);
	scen_expect_wc(s, 0, 0, 10, st);
	for (i = 1; i < 5; i++) {
		const struct droce_wc *wc = &s->wc[0][i];

		CU_ASSERT_EQUAL(wc->status, DROCE_WC_WR_FLUSH_ERR);
		if (wc->wr_id == 100) {
			recvs++;
		} else {
			/* Send-queue flushes keep the posting order. */
			CU_ASSERT_EQUAL(wc->wr_id, 11 + sends);
			sends++;
		}
	}
	CU_ASSERT_EQUAL(sends, 3);
	CU_ASSERT_EQUAL(recvs, 1);
	if (tlen != 0)
		CU_ASSERT(scen_untouched(s, 1, toff, tlen));
	CU_ASSERT(scen_untouched(s, 1, 20000, 64));
	CU_ASSERT(scen_untouched(s, 0, 4096, 64)); /* the flushed READ wrote nothing */
	CU_ASSERT_EQUAL(s->trace.st.naks, 1);
	/* Counters on both sides (names as rxe / mlx5 hw_counters). */
	CU_ASSERT_EQUAL(scen_cnt(s, 0,
				 acc ? DROCE_CNT_REQ_REMOTE_ACCESS_ERRORS :
				       DROCE_CNT_REQ_REMOTE_INVALID_REQUEST),
			1);
	CU_ASSERT_EQUAL(scen_cnt(s, 0, DROCE_CNT_REQ_CQE_ERROR), 1);
	CU_ASSERT_EQUAL(scen_cnt(s, 0, DROCE_CNT_REQ_CQE_FLUSH_ERROR), 3);
	CU_ASSERT_EQUAL(scen_cnt(s, 0, DROCE_CNT_RESP_CQE_FLUSH_ERROR), 1);
	CU_ASSERT_EQUAL(scen_cnt(s, 1,
				 acc ? DROCE_CNT_RESP_REMOTE_ACCESS_ERRORS :
				       DROCE_CNT_RESP_REMOTE_INVALID_REQUEST),
			1);
	CU_ASSERT_EQUAL(scen_cnt(s, 1, DROCE_CNT_NAKS_SENT), 1);
	/* The responder's QP is in error: IBTA 11.6.3 affiliated events, access violation
	 * (IBV_EVENT_QP_ACCESS_ERR) or invalid request (IBV_EVENT_QP_REQ_ERR). */
	CU_ASSERT_EQUAL(scen_events(s, 1, acc ? DROCE_EVENT_QP_ACCESS_ERR : DROCE_EVENT_QP_REQ_ERR),
			1);
	if (acc)
		CU_ASSERT_EQUAL(droce_dev_drops(s->ep[1].dev, DROCE_DROP_RKEY), 1);
}

static void
test_bad_rkey(void)
{
	struct scen s;

	scen_setup_rc(&s, NULL);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 100, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]) ^ 0x100, 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, 0, 100);
	CU_ASSERT_EQUAL(s.trace.st.nak_code[2], 1); /* remote access error NAK */
	scen_fini(&s);
}

static void
test_wrong_pd(void)
{
	struct scen s;
	struct droce_pd *pd2;
	struct droce_mr *mr2;
	int err = 0;

	scen_setup_rc(&s, NULL);
	/* IBTA 10.6.3.2 / C10-...: an R_Key is valid only with a QP of the same PD. */
	pd2 = droce_pd_alloc(s.ep[1].dev, &err);
	CU_ASSERT_FATAL(pd2 != NULL);
	mr2 = droce_mr_reg(pd2, s.mem[1] + 32768, 4096,
			   DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &err);
	CU_ASSERT_FATAL(mr2 != NULL);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 100, scen_addr(&s, 1, 32768),
				  droce_mr_rkey(mr2), 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, 32768, 100);
	droce_mr_dereg(mr2);
	droce_pd_dealloc(pd2);
	scen_fini(&s);
}

/* An MR on node 1 over [32768, 36864) with only `access`. */
static struct droce_mr *
limited_mr(struct scen *s, unsigned int access)
{
	int err = 0;
	struct droce_mr *mr = droce_mr_reg(s->pd[1], s->mem[1] + 32768, 4096, access, &err);

	CU_ASSERT_FATAL(mr != NULL);
	return mr;
}

static void
test_write_without_remote_write(void)
{
	struct scen s;
	struct droce_mr *mr;

	scen_setup_rc(&s, NULL);
	mr = limited_mr(&s, DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_READ);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 100, scen_addr(&s, 1, 32768),
				  droce_mr_rkey(mr), 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, 32768, 100);
	droce_mr_dereg(mr);
	scen_fini(&s);
}

static void
test_read_without_remote_read(void)
{
	struct scen s;
	struct droce_mr *mr;

	scen_setup_rc(&s, NULL);
	mr = limited_mr(&s, DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_READ, 10, 8192, 100, scen_addr(&s, 1, 32768),
				  droce_mr_rkey(mr), 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, 0, 0);
	CU_ASSERT(scen_untouched(&s, 0, 8192, 100));
	droce_mr_dereg(mr);
	scen_fini(&s);
}

static void
test_atomic_without_remote_atomic(void)
{
	struct scen s;
	struct droce_mr *mr;

	scen_setup_rc(&s, NULL);
	mr = limited_mr(&s, DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				    DROCE_ACCESS_REMOTE_READ);
	CU_ASSERT_EQUAL(scen_post_atomic(&s, 0, DROCE_WR_ATOMIC_FETCH_AND_ADD, 10, 8192,
					 scen_addr(&s, 1, 32768), droce_mr_rkey(mr), 5, 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, 32768, 8);
	CU_ASSERT(scen_untouched(&s, 0, 8192, 8));
	droce_mr_dereg(mr);
	scen_fini(&s);
}

static void
test_qp_without_remote_read(void)
{
	struct sim_qp_params p;
	struct scen s;

	/* IBTA 10.2.4 / 11.2.4.2: the responder QP's access flags gate incoming READs too; an
	 * operation the QP is not enabled for is an Invalid Request (IBTA 9.7.5.2.2, rxe). */
	sim_qp_params_default(&p);
	p.access = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE;
	scen_setup_rc(&s, &p);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_READ, 10, 8192, 100, scen_addr(&s, 1, 0),
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_INV_REQ_ERR, 0, 0);
	CU_ASSERT(scen_untouched(&s, 0, 8192, 100));
	scen_fini(&s);
}

static void
test_write_out_of_bounds(void)
{
	struct scen s;

	scen_setup_rc(&s, NULL);
	/* IBTA 9.7.4.1.6 / C9-...: VA + length must lie inside the region. */
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 100,
				  scen_addr(&s, 1, SCEN_MEM - 50), droce_mr_rkey(s.mr[1]), 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, SCEN_MEM - 50, 50);
	scen_fini(&s);
}

static void
test_read_below_start(void)
{
	struct scen s;

	scen_setup_rc(&s, NULL);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_READ, 10, 8192, 100, scen_addr(&s, 1, 0) - 8,
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, 0, 0);
	CU_ASSERT(scen_untouched(&s, 0, 8192, 100));
	scen_fini(&s);
}

static void
test_write_va_wraps(void)
{
	struct scen s;

	scen_setup_rc(&s, NULL);
	/* VA + length overflows 64 bits: a naive "va + len <= end" check passes it. */
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 100, UINT64_MAX - 15,
				  droce_mr_rkey(s.mr[1]), 0),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_ACCESS_ERR, 0, 0);
	CU_ASSERT(scen_untouched(&s, 1, 0, SCEN_MEM));
	scen_fini(&s);
}

static void
test_misaligned_atomic(void)
{
	struct scen s;

	scen_setup_rc(&s, NULL);
	/* IBTA 9.4.5: atomic VAs are 8-byte aligned; otherwise a NAK Invalid Request (class C,
	 * 9.9.3.1.2), seen by the requester as REM_INV_REQ_ERR. */
	CU_ASSERT_EQUAL(scen_post_atomic(&s, 0, DROCE_WR_ATOMIC_CMP_AND_SWP, 10, 8192,
					 scen_addr(&s, 1, 1028), droce_mr_rkey(s.mr[1]), 0, 1),
			0);
	faulty_then_flush(&s, DROCE_WC_REM_INV_REQ_ERR, 1024, 16);
	CU_ASSERT_EQUAL(s.trace.st.nak_code[1], 1);
	scen_fini(&s);
}

/* The edges that must pass: a WRITE ending on the MR's last byte, a READ of its last byte, an
 * atomic on its last word, and zero-length WRITE and READ at its very end (valid whether or not
 * a responder checks R_Key and VA for zero-length transfers). */
static void
test_edges_accepted(void)
{
	struct scen s;
	struct droce_mr *mr;
	uint64_t end;
	uint32_t rkey;
	int err = 0;

	scen_setup_rc(&s, NULL);
	/* A second MR over [32768, 36864) so that its end is inside the buffer. */
	mr = droce_mr_reg(s.pd[1], s.mem[1] + 32768, 4096,
			  DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				  DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC,
			  &err);
	CU_ASSERT_FATAL(mr != NULL);
	rkey = droce_mr_rkey(mr);
	end = scen_addr(&s, 1, 36864);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 1, 0, 1500, end - 1500, rkey, 0), 0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_READ, 2, 8192, 1, end - 1, rkey, 0), 0);
	CU_ASSERT_EQUAL(scen_post_atomic(&s, 0, DROCE_WR_ATOMIC_FETCH_AND_ADD, 3, 12288, end - 8,
					 rkey, 1, 0),
			0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 4, 0, 0, end, rkey, 0), 0);
	CU_ASSERT_EQUAL(scen_post(&s, 0, DROCE_WR_RDMA_READ, 5, 0, 0, end, rkey, 0), 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 5, 100 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 0, 1, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 1, 2, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 2, 3, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 3, 4, DROCE_WC_SUCCESS);
	scen_expect_wc(&s, 0, 4, 5, DROCE_WC_SUCCESS);
	/* The write's last byte is the MR's last byte; the atomic saw it and added one. */
	CU_ASSERT(memcmp(s.mem[1] + 36864 - 1500, s.mem[0], 1492) == 0);
	CU_ASSERT_EQUAL(s.mem[0][8192], s.mem[0][1499]);
	CU_ASSERT(scen_untouched(&s, 1, 36864, 1024));
	CU_ASSERT_EQUAL(s.trace.st.naks, 0);
	droce_mr_dereg(mr);
	scen_fini(&s);
}

DROCE_TEST_MAIN("sim_access", DROCE_TEST(test_edges_accepted), DROCE_TEST(test_bad_rkey),
		DROCE_TEST(test_wrong_pd), DROCE_TEST(test_write_without_remote_write),
		DROCE_TEST(test_read_without_remote_read),
		DROCE_TEST(test_atomic_without_remote_atomic),
		DROCE_TEST(test_qp_without_remote_read), DROCE_TEST(test_write_out_of_bounds),
		DROCE_TEST(test_read_below_start), DROCE_TEST(test_write_va_wraps),
		DROCE_TEST(test_misaligned_atomic))
