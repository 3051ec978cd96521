/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective repeat's window pieces alone (stack/droce_sr.h): which opcodes carry a placement
 * header and its bytes (stack/wire/droce_srh.h), the later WRITE winning over bytes a kept
 * request placed, and the window's bits freed as una passes them (across the PSN wrap).
 */
#include <stdlib.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_opcode.h"
#include "droce_psn.h"
#include "droce_sr.h"
#include "droce_test.h"
#include "wire/droce_srh.h"

static void
test_hdr_len(void)
{
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_RDMA_WRITE_FIRST), 0);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_RDMA_WRITE_ONLY), 0);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_RDMA_WRITE_MIDDLE), DROCE_SRH_WRITE_LEN);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_RDMA_WRITE_LAST), DROCE_SRH_WRITE_LEN);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE),
			DROCE_SRH_WRITE_LEN);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_SEND_FIRST), DROCE_SRH_SEND_LEN);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_SEND_MIDDLE), DROCE_SRH_SEND_LEN);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE),
			DROCE_SRH_SEND_LEN);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE), DROCE_SRH_SEND_LEN);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_RDMA_READ_REQUEST), 0);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_ATOMIC_WRITE), 0);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_FETCH_ADD), 0);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_RC_ACKNOWLEDGE), 0);
	/* UC has no selective repeat */
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_UC_RDMA_WRITE_MIDDLE), 0);
	CU_ASSERT_EQUAL(droce_sr_hdr_len(DROCE_OP_UC_SEND_MIDDLE), 0);
}

static void
test_hdr_bytes(void)
{
	static const uint8_t wr[16] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x7b, 0x78,
					0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x01, 0x00, 0x00 };
	static const uint8_t snd[8] = { 0, 0, 0, 7, 0, 0, 0x07, 0xe0 };
	struct droce_swqe w;
	uint8_t b[16];

	memset(&w, 0, sizeof(w));
	w.raddr = 0x1122334455667788ull;
	w.rkey = 0xaabbccdd;
	w.length = 65536;
	w.sr_ord = 7;
	droce_sr_hdr_put(b, DROCE_OP_RC_RDMA_WRITE_MIDDLE, &w, 1008); /* VA + 1008 */
	CU_ASSERT(memcmp(b, wr, sizeof(wr)) == 0);
	droce_sr_hdr_put(b, DROCE_OP_RC_SEND_LAST, &w, 2016);
	CU_ASSERT(memcmp(b, snd, sizeof(snd)) == 0);
}

/* Kept requests at PSNs psn0+1 and psn0+3 placed [40, 60) and [100, 140) of buf. */
static void
keep_two(struct droce_sr *sr, uint32_t psn0, uint8_t *buf)
{
	uint32_t p1 = droce_psn_add(psn0, 1), p3 = droce_psn_add(psn0, 3);

	memset(sr, 0, sizeof(*sr));
	droce_sr_bit_set(sr->kept, p1);
	droce_sr_bit_set(sr->kept, p3);
	sr->slot[p1 & (DROCE_SR_WIN - 1)].pva = (uintptr_t)(buf + 40);
	sr->slot[p1 & (DROCE_SR_WIN - 1)].pay_len = 20;
	sr->slot[p3 & (DROCE_SR_WIN - 1)].pva = (uintptr_t)(buf + 100);
	sr->slot[p3 & (DROCE_SR_WIN - 1)].pay_len = 40;
	sr->kept_n = 2;
	sr->kept_hi = droce_psn_add(p3, 1);
	sr->kmin = (uintptr_t)(buf + 40);
	sr->kmax = (uintptr_t)(buf + 140);
}

static void
test_later_write_wins(void)
{
	const uint32_t psn0 = 0xFFFFFE; /* the kept PSNs wrap past 0 */
	struct droce_qp qp;
	uint8_t buf[256], src[256];
	uint32_t i;

	memset(&qp, 0, sizeof(qp));
	qp.sr = malloc(sizeof(*qp.sr));
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp.sr);
	memset(src, 0xAB, sizeof(src));
	/* an earlier request (psn0) writing [0, 200): the bytes both kept ones placed stay */
	keep_two(qp.sr, psn0, buf);
	memset(buf, 0, sizeof(buf));
	droce_sr_write(&qp, psn0, buf, src, 200);
	for (i = 0; i < 200; i++)
		CU_ASSERT_EQUAL(buf[i], (i >= 40 && i < 60) || (i >= 100 && i < 140) ? 0 : 0xAB);
	/* psn0 + 2, between them: only psn0 + 3's bytes are later */
	memset(buf, 0, sizeof(buf));
	droce_sr_write(&qp, droce_psn_add(psn0, 2), buf, src, 200);
	for (i = 0; i < 200; i++)
		CU_ASSERT_EQUAL(buf[i], i >= 100 && i < 140 ? 0 : 0xAB);
	/* past both, or outside their bounds: a plain copy */
	memset(buf, 0, sizeof(buf));
	droce_sr_write(&qp, droce_psn_add(psn0, 4), buf, src, 200);
	CU_ASSERT(memcmp(buf, src, 200) == 0);
	memset(buf, 0, sizeof(buf));
	droce_sr_write(&qp, psn0, buf + 140, src, 100);
	CU_ASSERT(memcmp(buf + 140, src, 100) == 0);
	/* nothing kept: a plain copy */
	qp.sr->kept_n = 0;
	memset(buf, 0, sizeof(buf));
	droce_sr_write(&qp, psn0, buf, src, 200);
	CU_ASSERT(memcmp(buf, src, 200) == 0);
	free(qp.sr);
}

/* una moving frees the requester's bits it passes, and only those. */
static void
test_passed_frees_bits(void)
{
	const uint32_t old = 0xFFFFF0;
	struct droce_qp qp;
	uint32_t i, p;

	memset(&qp, 0, sizeof(qp));
	qp.sr = calloc(1, sizeof(*qp.sr));
	CU_ASSERT_PTR_NOT_NULL_FATAL(qp.sr);
	for (i = 0; i < 64; i++) {
		droce_sr_bit_set(qp.sr->sacked, droce_psn_add(old, i));
		droce_sr_bit_set(qp.sr->resent, droce_psn_add(old, i));
	}
	qp.req.una = droce_psn_add(old, 40); /* across the wrap */
	droce_sr_passed(&qp, old);
	for (i = 0; i < 64; i++) {
		p = droce_psn_add(old, i);
		CU_ASSERT_EQUAL(droce_sr_bit(qp.sr->sacked, p), i >= 40);
		CU_ASSERT_EQUAL(droce_sr_bit(qp.sr->resent, p), i >= 40);
	}
	/* a whole window or more: everything */
	qp.req.una = droce_psn_add(qp.req.una, DROCE_SR_WIN);
	droce_sr_passed(&qp, droce_psn_add(old, 40));
	for (i = 0; i < DROCE_SR_WIN / 64; i++)
		CU_ASSERT_EQUAL(qp.sr->sacked[i] | qp.sr->resent[i], 0);
	free(qp.sr);
}

DROCE_TEST_MAIN("sr_window", DROCE_TEST(test_hdr_len), DROCE_TEST(test_hdr_bytes),
		DROCE_TEST(test_later_write_wins), DROCE_TEST(test_passed_frees_bits))
