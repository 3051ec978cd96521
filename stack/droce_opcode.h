/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_OPCODE_H
#define DROCE_OPCODE_H

/*
 * The BTH opcode table (IBTA 9.2.1 table 38; ATOMIC WRITE from release 1.5; Annex A17.9.3 for
 * the CNP). DROCE_OPCODE_LIST is
 * the single list: the enum, the names, header layouts and flags are all generated from it, and
 * both the parser and the builder are driven by the resulting table.
 */
#include <stddef.h>
#include <stdint.h>

/* Extension headers in wire order after the BTH (IBTA 9.2 figure 2x: DETH, RETH, AtomicETH,
 * AETH, AtomicAckETH, ImmDt, IETH). The CNP's 16 reserved bytes are treated as a header. */
enum droce_hdr {
	DROCE_HDR_DETH,
	DROCE_HDR_RETH,
	DROCE_HDR_ATMETH,
	DROCE_HDR_AETH,
	DROCE_HDR_ATMACK,
	DROCE_HDR_IMMDT,
	DROCE_HDR_IETH,
	DROCE_HDR_CNP,
	DROCE_HDR_MAX
};

#define H_DETH	 (1u << DROCE_HDR_DETH)
#define H_RETH	 (1u << DROCE_HDR_RETH)
#define H_ATMETH (1u << DROCE_HDR_ATMETH)
#define H_AETH	 (1u << DROCE_HDR_AETH)
#define H_ATMACK (1u << DROCE_HDR_ATMACK)
#define H_IMMDT	 (1u << DROCE_HDR_IMMDT)
#define H_IETH	 (1u << DROCE_HDR_IETH)
#define H_CNP	 (1u << DROCE_HDR_CNP)

/* Per-opcode flags. */
enum droce_opf {
	DROCE_OPF_RC = 1u << 0,
	DROCE_OPF_UC = 1u << 1,
	DROCE_OPF_UD = 1u << 2,
	DROCE_OPF_CNP = 1u << 3,
	DROCE_OPF_FIRST = 1u << 4, /* first packet of a message (ONLY = FIRST | LAST) */
	DROCE_OPF_MIDDLE = 1u << 5,
	DROCE_OPF_LAST = 1u << 6,
	DROCE_OPF_PAYLOAD = 1u << 7, /* may carry payload */
	DROCE_OPF_REQ = 1u << 8,     /* requester to responder */
	DROCE_OPF_RESP = 1u << 9,    /* responder to requester (ACK, READ response, atomic ACK) */
	DROCE_OPF_SEND = 1u << 10,   /* consumes a receive WQE */
	DROCE_OPF_WRITE = 1u << 11,
	DROCE_OPF_READ = 1u << 12,
	DROCE_OPF_ATOMIC = 1u << 13,
	DROCE_OPF_IMM = 1u << 14,	   /* carries ImmDt: completes a receive WQE */
	DROCE_OPF_INV = 1u << 15,	   /* carries IETH */
	DROCE_OPF_ATOMIC_WRITE = 1u << 16, /* an RDMA WRITE of 8 bytes, placed as one store */
};

#define F_ONLY (DROCE_OPF_FIRST | DROCE_OPF_LAST)
#define F_RCRQ (DROCE_OPF_RC | DROCE_OPF_REQ)
#define F_UCRQ (DROCE_OPF_UC | DROCE_OPF_REQ)
#define F_SND  (DROCE_OPF_SEND | DROCE_OPF_PAYLOAD)
#define F_WR   (DROCE_OPF_WRITE | DROCE_OPF_PAYLOAD)
#define F_IMM  DROCE_OPF_IMM

/* X(name, value, extension headers, flags) */
#define DROCE_OPCODE_LIST(X) \
	X(RC_SEND_FIRST, 0x00, 0, F_RCRQ | F_SND | DROCE_OPF_FIRST) \
	X(RC_SEND_MIDDLE, 0x01, 0, F_RCRQ | F_SND | DROCE_OPF_MIDDLE) \
	X(RC_SEND_LAST, 0x02, 0, F_RCRQ | F_SND | DROCE_OPF_LAST) \
	X(RC_SEND_LAST_WITH_IMMEDIATE, 0x03, H_IMMDT, F_RCRQ | F_SND | F_IMM | DROCE_OPF_LAST) \
	X(RC_SEND_ONLY, 0x04, 0, F_RCRQ | F_SND | F_ONLY) \
	X(RC_SEND_ONLY_WITH_IMMEDIATE, 0x05, H_IMMDT, F_RCRQ | F_SND | F_IMM | F_ONLY) \
	X(RC_RDMA_WRITE_FIRST, 0x06, H_RETH, F_RCRQ | F_WR | DROCE_OPF_FIRST) \
	X(RC_RDMA_WRITE_MIDDLE, 0x07, 0, F_RCRQ | F_WR | DROCE_OPF_MIDDLE) \
	X(RC_RDMA_WRITE_LAST, 0x08, 0, F_RCRQ | F_WR | DROCE_OPF_LAST) \
	X(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x09, H_IMMDT, \
	  F_RCRQ | F_WR | F_IMM | DROCE_OPF_SEND | DROCE_OPF_LAST) \
	X(RC_RDMA_WRITE_ONLY, 0x0A, H_RETH, F_RCRQ | F_WR | F_ONLY) \
	X(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x0B, H_RETH | H_IMMDT, \
	  F_RCRQ | F_WR | F_IMM | DROCE_OPF_SEND | F_ONLY) \
	X(RC_RDMA_READ_REQUEST, 0x0C, H_RETH, F_RCRQ | DROCE_OPF_READ | F_ONLY) \
	X(RC_RDMA_READ_RESPONSE_FIRST, 0x0D, H_AETH, \
	  DROCE_OPF_RC | DROCE_OPF_RESP | DROCE_OPF_READ | DROCE_OPF_PAYLOAD | DROCE_OPF_FIRST) \
	X(RC_RDMA_READ_RESPONSE_MIDDLE, 0x0E, 0, \
	  DROCE_OPF_RC | DROCE_OPF_RESP | DROCE_OPF_READ | DROCE_OPF_PAYLOAD | DROCE_OPF_MIDDLE) \
	X(RC_RDMA_READ_RESPONSE_LAST, 0x0F, H_AETH, \
	  DROCE_OPF_RC | DROCE_OPF_RESP | DROCE_OPF_READ | DROCE_OPF_PAYLOAD | DROCE_OPF_LAST) \
	X(RC_RDMA_READ_RESPONSE_ONLY, 0x10, H_AETH, \
	  DROCE_OPF_RC | DROCE_OPF_RESP | DROCE_OPF_READ | DROCE_OPF_PAYLOAD | F_ONLY) \
	X(RC_ACKNOWLEDGE, 0x11, H_AETH, DROCE_OPF_RC | DROCE_OPF_RESP | F_ONLY) \
	X(RC_ATOMIC_ACKNOWLEDGE, 0x12, H_AETH | H_ATMACK, \
	  DROCE_OPF_RC | DROCE_OPF_RESP | DROCE_OPF_ATOMIC | F_ONLY) \
	X(RC_COMPARE_SWAP, 0x13, H_ATMETH, F_RCRQ | DROCE_OPF_ATOMIC | F_ONLY) \
	X(RC_FETCH_ADD, 0x14, H_ATMETH, F_RCRQ | DROCE_OPF_ATOMIC | F_ONLY) \
	X(RC_SEND_LAST_WITH_INVALIDATE, 0x16, H_IETH, \
	  F_RCRQ | F_SND | DROCE_OPF_INV | DROCE_OPF_LAST) \
	X(RC_SEND_ONLY_WITH_INVALIDATE, 0x17, H_IETH, F_RCRQ | F_SND | DROCE_OPF_INV | F_ONLY) \
	X(RC_ATOMIC_WRITE, 0x1D, H_RETH, F_RCRQ | F_WR | DROCE_OPF_ATOMIC_WRITE | F_ONLY) \
	X(UC_SEND_FIRST, 0x20, 0, F_UCRQ | F_SND | DROCE_OPF_FIRST) \
	X(UC_SEND_MIDDLE, 0x21, 0, F_UCRQ | F_SND | DROCE_OPF_MIDDLE) \
	X(UC_SEND_LAST, 0x22, 0, F_UCRQ | F_SND | DROCE_OPF_LAST) \
	X(UC_SEND_LAST_WITH_IMMEDIATE, 0x23, H_IMMDT, F_UCRQ | F_SND | F_IMM | DROCE_OPF_LAST) \
	X(UC_SEND_ONLY, 0x24, 0, F_UCRQ | F_SND | F_ONLY) \
	X(UC_SEND_ONLY_WITH_IMMEDIATE, 0x25, H_IMMDT, F_UCRQ | F_SND | F_IMM | F_ONLY) \
	X(UC_RDMA_WRITE_FIRST, 0x26, H_RETH, F_UCRQ | F_WR | DROCE_OPF_FIRST) \
	X(UC_RDMA_WRITE_MIDDLE, 0x27, 0, F_UCRQ | F_WR | DROCE_OPF_MIDDLE) \
	X(UC_RDMA_WRITE_LAST, 0x28, 0, F_UCRQ | F_WR | DROCE_OPF_LAST) \
	X(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x29, H_IMMDT, \
	  F_UCRQ | F_WR | F_IMM | DROCE_OPF_SEND | DROCE_OPF_LAST) \
	X(UC_RDMA_WRITE_ONLY, 0x2A, H_RETH, F_UCRQ | F_WR | F_ONLY) \
	X(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x2B, H_RETH | H_IMMDT, \
	  F_UCRQ | F_WR | F_IMM | DROCE_OPF_SEND | F_ONLY) \
	X(UD_SEND_ONLY, 0x64, H_DETH, DROCE_OPF_UD | DROCE_OPF_REQ | F_SND | F_ONLY) \
	X(UD_SEND_ONLY_WITH_IMMEDIATE, 0x65, H_DETH | H_IMMDT, \
	  DROCE_OPF_UD | DROCE_OPF_REQ | F_SND | F_IMM | F_ONLY) \
	X(CNP, 0x81, H_CNP, DROCE_OPF_CNP | F_ONLY)

enum droce_opcode {
#define DROCE_X_ENUM(name, val, hdrs, flags) DROCE_OP_##name = val,
	DROCE_OPCODE_LIST(DROCE_X_ENUM)
#undef DROCE_X_ENUM
};

struct droce_opcode_info {
	const char *name;	    /* NULL: opcode not supported (IBTA: reserved or RD) */
	uint32_t flags;		    /* enum droce_opf */
	uint16_t hdrs;		    /* bit per enum droce_hdr present */
	uint8_t hdr_len;	    /* BTH + extension headers */
	uint8_t off[DROCE_HDR_MAX]; /* offset of each present header from the BTH */
};

extern const struct droce_opcode_info droce_opcode_table[256];

static inline const struct droce_opcode_info *
droce_opcode_info(uint8_t opcode)
{
	return &droce_opcode_table[opcode];
}

static inline const char *
droce_opcode_name(uint8_t opcode)
{
	const char *n = droce_opcode_table[opcode].name;

	return n != NULL ? n : "UNKNOWN";
}

/* Number of opcodes in the list, for tests that walk it. */
extern const unsigned int droce_opcode_count;
extern const uint8_t droce_opcode_values[];

/* Size in bytes of each extension header, indexed by enum droce_hdr. */
extern const uint8_t droce_hdr_size[DROCE_HDR_MAX];

#endif /* DROCE_OPCODE_H */
