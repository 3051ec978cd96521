/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table against IBTA Vol 1 9.2.1 table 38 (and Annex A17.9.3 for the CNP). The
 * expectations below are written from the spec, header by header, not derived from the table.
 */
#include <string.h>

#include "droce_opcode.h"
#include "droce_test.h"

/* Extension header sizes, IBTA 9.3.2 .. 9.3.7 and 9.5.3; the CNP body is A17.9.3. */
enum {
	BTH = 12,
	DETH = 8,
	RETH = 16,
	ATMETH = 28,
	AETH = 4,
	ATMACK = 8,
	IMMDT = 4,
	IETH = 4,
	CNPB = 16
};

enum svc { RC, UC, UD, CNP };
enum pos { FIRST, MIDDLE, LAST, ONLY };
enum kind { SEND, WRITE, READ, ATOMIC, ACK, CN };

/* Offset of each header from the BTH, 0 when absent, in table 38's "Packet contents" order. */
struct spec_op {
	uint8_t value;
	enum svc svc;
	enum pos pos;
	enum kind kind;
	int payload; /* "PYLD" in table 38 */
	int resp;    /* responder to requester */
	int imm, inv;
	uint8_t deth, reth, atmeth, aeth, atmack, immdt, ieth, cnp;
	uint8_t hdr_len; /* BTH + extension headers */
};

static const struct spec_op spec[] = {
	/* RC, opcode 000xxxxx */
	{ 0x00, RC, FIRST, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x01, RC, MIDDLE, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x02, RC, LAST, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x03, RC, LAST, SEND, 1, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 0, 16 },
	{ 0x04, RC, ONLY, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x05, RC, ONLY, SEND, 1, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 0, 16 },
	{ 0x06, RC, FIRST, WRITE, 1, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 28 },
	{ 0x07, RC, MIDDLE, WRITE, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x08, RC, LAST, WRITE, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x09, RC, LAST, WRITE, 1, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 0, 16 },
	{ 0x0A, RC, ONLY, WRITE, 1, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 28 },
	{ 0x0B, RC, ONLY, WRITE, 1, 0, 1, 0, 0, 12, 0, 0, 0, 28, 0, 0, 32 },
	{ 0x0C, RC, ONLY, READ, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 28 },
	{ 0x0D, RC, FIRST, READ, 1, 1, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 16 },
	{ 0x0E, RC, MIDDLE, READ, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x0F, RC, LAST, READ, 1, 1, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 16 },
	{ 0x10, RC, ONLY, READ, 1, 1, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 16 },
	{ 0x11, RC, ONLY, ACK, 0, 1, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 16 },
	{ 0x12, RC, ONLY, ATOMIC, 0, 1, 0, 0, 0, 0, 0, 12, 16, 0, 0, 0, 24 },
	{ 0x13, RC, ONLY, ATOMIC, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 40 },
	{ 0x14, RC, ONLY, ATOMIC, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 40 },
	/* 0x15 reserved */
	{ 0x16, RC, LAST, SEND, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 16 },
	{ 0x17, RC, ONLY, SEND, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 16 },
	/* 0x18-0x1B reserved, 0x1C FLUSH (release 1.5, not offered); 0x1D ATOMIC WRITE (1.5):
	 * RETH and 8 bytes of payload */
	{ 0x1D, RC, ONLY, WRITE, 1, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 28 },
	/* UC, opcode 001xxxxx: SEND and RDMA WRITE only */
	{ 0x20, UC, FIRST, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x21, UC, MIDDLE, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x22, UC, LAST, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x23, UC, LAST, SEND, 1, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 0, 16 },
	{ 0x24, UC, ONLY, SEND, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x25, UC, ONLY, SEND, 1, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 0, 16 },
	{ 0x26, UC, FIRST, WRITE, 1, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 28 },
	{ 0x27, UC, MIDDLE, WRITE, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x28, UC, LAST, WRITE, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12 },
	{ 0x29, UC, LAST, WRITE, 1, 0, 1, 0, 0, 0, 0, 0, 0, 12, 0, 0, 16 },
	{ 0x2A, UC, ONLY, WRITE, 1, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 28 },
	{ 0x2B, UC, ONLY, WRITE, 1, 0, 1, 0, 0, 12, 0, 0, 0, 28, 0, 0, 32 },
	/* UD, opcode 011xxxxx: SEND Only, with and without immediate */
	{ 0x64, UD, ONLY, SEND, 1, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 20 },
	{ 0x65, UD, ONLY, SEND, 1, 0, 1, 0, 12, 0, 0, 0, 0, 20, 0, 0, 24 },
	/* RoCEv2 CNP, A17.9.3: BTH + 16 reserved bytes, no payload */
	{ 0x81, CNP, ONLY, CN, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 28 },
};
#define N_SPEC (sizeof(spec) / sizeof(spec[0]))

static const struct spec_op *
spec_find(unsigned int v)
{
	size_t i;

	for (i = 0; i < N_SPEC; i++)
		if (spec[i].value == v)
			return &spec[i];
	return NULL;
}

static void
test_hdr_sizes(void)
{
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_DETH], DETH);
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_RETH], RETH);
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_ATMETH], ATMETH);
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_AETH], AETH);
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_ATMACK], ATMACK);
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_IMMDT], IMMDT);
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_IETH], IETH);
	CU_ASSERT_EQUAL(droce_hdr_size[DROCE_HDR_CNP], CNPB);
}

/* The spec lengths above must add up: a check on this file's own transcription. */
static void
test_spec_self_consistent(void)
{
	size_t i;

	for (i = 0; i < N_SPEC; i++) {
		const struct spec_op *s = &spec[i];
		unsigned int len = BTH + (s->deth ? DETH : 0) + (s->reth ? RETH : 0) +
				   (s->atmeth ? ATMETH : 0) + (s->aeth ? AETH : 0) +
				   (s->atmack ? ATMACK : 0) + (s->immdt ? IMMDT : 0) +
				   (s->ieth ? IETH : 0) + (s->cnp ? CNPB : 0);

		CU_ASSERT_EQUAL(len, s->hdr_len);
		CU_ASSERT_EQUAL(s->value >> 5, s->svc == RC ? 0 :
					       s->svc == UC ? 1 :
					       s->svc == UD ? 3 :
							      4);
	}
}

/* Exactly the opcodes of the spec list are supported; everything else (reserved, RD, XRC,
 * manufacturer-specific, IB's own CNP 0x80) is not. */
static void
test_supported_set(void)
{
	unsigned int v, n = 0, i;

	for (v = 0; v < 256; v++) {
		const struct droce_opcode_info *op = droce_opcode_info((uint8_t)v);

		if (spec_find(v) != NULL) {
			CU_ASSERT_PTR_NOT_NULL(op->name);
			n++;
		} else {
			CU_ASSERT_PTR_NULL(op->name);
			CU_ASSERT_EQUAL(op->hdr_len, 0);
			CU_ASSERT_STRING_EQUAL(droce_opcode_name((uint8_t)v), "UNKNOWN");
		}
	}
	CU_ASSERT_EQUAL(n, N_SPEC);
	CU_ASSERT_EQUAL(droce_opcode_count, N_SPEC);
	for (i = 0; i < droce_opcode_count; i++)
		CU_ASSERT_PTR_NOT_NULL(spec_find(droce_opcode_values[i]));
	CU_ASSERT_PTR_NULL(droce_opcode_info(0x15)->name);
	CU_ASSERT_PTR_NULL(droce_opcode_info(0x40)->name); /* RD SEND First */
	CU_ASSERT_PTR_NULL(droce_opcode_info(0x80)->name); /* IB CC CNP, not RoCEv2's */
	CU_ASSERT_PTR_NULL(droce_opcode_info(0xA0)->name); /* XRC */
	CU_ASSERT_PTR_NULL(droce_opcode_info(0xC0)->name); /* manufacturer */
}

static void
check_hdr(const struct droce_opcode_info *op, enum droce_hdr h, uint8_t want_off)
{
	int present = (op->hdrs & (1u << h)) != 0;

	CU_ASSERT_EQUAL(present, want_off != 0);
	CU_ASSERT_EQUAL(op->off[h], want_off);
}

static void
test_headers_and_lengths(void)
{
	size_t i;

	for (i = 0; i < N_SPEC; i++) {
		const struct spec_op *s = &spec[i];
		const struct droce_opcode_info *op = droce_opcode_info(s->value);

		CU_ASSERT_EQUAL(op->hdr_len, s->hdr_len);
		check_hdr(op, DROCE_HDR_DETH, s->deth);
		check_hdr(op, DROCE_HDR_RETH, s->reth);
		check_hdr(op, DROCE_HDR_ATMETH, s->atmeth);
		check_hdr(op, DROCE_HDR_AETH, s->aeth);
		check_hdr(op, DROCE_HDR_ATMACK, s->atmack);
		check_hdr(op, DROCE_HDR_IMMDT, s->immdt);
		check_hdr(op, DROCE_HDR_IETH, s->ieth);
		check_hdr(op, DROCE_HDR_CNP, s->cnp);
		CU_ASSERT_EQUAL(op->hdrs >> DROCE_HDR_MAX, 0);
		if (op->hdr_len != s->hdr_len)
			fprintf(stderr, "opcode 0x%02x: hdr_len %u, spec %u\n", s->value,
				op->hdr_len, s->hdr_len);
	}
}

static int
flag(uint32_t flags, uint32_t f)
{
	return (flags & f) != 0;
}

static void
test_flags(void)
{
	size_t i;

	for (i = 0; i < N_SPEC; i++) {
		const struct spec_op *s = &spec[i];
		uint32_t f = droce_opcode_info(s->value)->flags;

		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_RC), s->svc == RC);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_UC), s->svc == UC);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_UD), s->svc == UD);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_CNP), s->svc == CNP);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_FIRST), s->pos == FIRST || s->pos == ONLY);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_MIDDLE), s->pos == MIDDLE);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_LAST), s->pos == LAST || s->pos == ONLY);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_PAYLOAD), s->payload);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_RESP), s->resp);
		/* a CNP is neither request nor response of a QP's message stream */
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_REQ), !s->resp && s->svc != CNP);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_WRITE), s->kind == WRITE);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_READ), s->kind == READ);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_ATOMIC), s->kind == ATOMIC);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_IMM), s->imm);
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_INV), s->inv);
		/* IBTA 9.4.3 / 10.7.1: RDMA WRITE with immediate consumes a receive WQE like a SEND */
		CU_ASSERT_EQUAL(flag(f, DROCE_OPF_SEND),
				s->kind == SEND || (s->kind == WRITE && s->imm));
		/* at most one position, and position given */
		CU_ASSERT_TRUE(flag(f, DROCE_OPF_FIRST) || flag(f, DROCE_OPF_MIDDLE) ||
			       flag(f, DROCE_OPF_LAST));
		if (flag(f, DROCE_OPF_MIDDLE))
			CU_ASSERT_FALSE(flag(f, DROCE_OPF_FIRST) || flag(f, DROCE_OPF_LAST));
	}
}

static void
test_enum_values_and_names(void)
{
	size_t i, j;

	CU_ASSERT_EQUAL(DROCE_OP_RC_SEND_FIRST, 0x00);
	CU_ASSERT_EQUAL(DROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x0B);
	CU_ASSERT_EQUAL(DROCE_OP_RC_RDMA_READ_REQUEST, 0x0C);
	CU_ASSERT_EQUAL(DROCE_OP_RC_ACKNOWLEDGE, 0x11);
	CU_ASSERT_EQUAL(DROCE_OP_RC_ATOMIC_ACKNOWLEDGE, 0x12);
	CU_ASSERT_EQUAL(DROCE_OP_RC_COMPARE_SWAP, 0x13);
	CU_ASSERT_EQUAL(DROCE_OP_RC_FETCH_ADD, 0x14);
	CU_ASSERT_EQUAL(DROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE, 0x17);
	CU_ASSERT_EQUAL(DROCE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x2B);
	CU_ASSERT_EQUAL(DROCE_OP_UD_SEND_ONLY, 0x64);
	CU_ASSERT_EQUAL(DROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 0x65);
	CU_ASSERT_EQUAL(DROCE_OP_CNP, 0x81);
	CU_ASSERT_STRING_EQUAL(droce_opcode_name(0x11), "RC_ACKNOWLEDGE");
	CU_ASSERT_STRING_EQUAL(droce_opcode_name(0x81), "CNP");
	/* names are unique and carry their service prefix */
	for (i = 0; i < N_SPEC; i++) {
		const char *a = droce_opcode_name(spec[i].value);
		const char *pfx = spec[i].svc == RC ? "RC_" :
				  spec[i].svc == UC ? "UC_" :
				  spec[i].svc == UD ? "UD_" :
						      "CNP";

		CU_ASSERT_EQUAL(strncmp(a, pfx, strlen(pfx)), 0);
		for (j = i + 1; j < N_SPEC; j++)
			CU_ASSERT_NOT_EQUAL(strcmp(a, droce_opcode_name(spec[j].value)), 0);
	}
}

DROCE_TEST_MAIN("opcode", DROCE_TEST(test_hdr_sizes), DROCE_TEST(test_spec_self_consistent),
		DROCE_TEST(test_supported_set), DROCE_TEST(test_headers_and_lengths),
		DROCE_TEST(test_flags), DROCE_TEST(test_enum_values_and_names))
