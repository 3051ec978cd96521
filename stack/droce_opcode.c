/* SPDX-License-Identifier: BSD-3-Clause */
/* The opcode table, generated at compile time from DROCE_OPCODE_LIST. */
#include "droce_opcode.h"
#include "wire/droce_bth.h"
#include "wire/droce_deth.h"
#include "wire/droce_reth.h"
#include "wire/droce_atomiceth.h"
#include "wire/droce_aeth.h"
#include "wire/droce_atomicacketh.h"
#include "wire/droce_immdt.h"
#include "wire/droce_ieth.h"
#include "wire/droce_cnp.h"

#define SZ_DETH	  sizeof(struct droce_deth)
#define SZ_RETH	  sizeof(struct droce_reth)
#define SZ_ATMETH sizeof(struct droce_atomiceth)
#define SZ_AETH	  sizeof(struct droce_aeth)
#define SZ_ATMACK sizeof(struct droce_atomicacketh)
#define SZ_IMMDT  sizeof(struct droce_immdt)
#define SZ_IETH	  sizeof(struct droce_ieth)
#define SZ_CNP	  sizeof(struct droce_cnp)

const uint8_t droce_hdr_size[DROCE_HDR_MAX] = {
	[DROCE_HDR_DETH] = SZ_DETH, [DROCE_HDR_RETH] = SZ_RETH,	    [DROCE_HDR_ATMETH] = SZ_ATMETH,
	[DROCE_HDR_AETH] = SZ_AETH, [DROCE_HDR_ATMACK] = SZ_ATMACK, [DROCE_HDR_IMMDT] = SZ_IMMDT,
	[DROCE_HDR_IETH] = SZ_IETH, [DROCE_HDR_CNP] = SZ_CNP,
};

/* Bytes taken by the headers of mask m that come before header index h (wire order). */
#define HAS(m, b) (((m) & (1u << (b))) ? 1 : 0)
#define BEFORE(m, h) \
	(sizeof(struct droce_bth) + \
	 ((h) > DROCE_HDR_DETH ? HAS(m, DROCE_HDR_DETH) * SZ_DETH : 0) + \
	 ((h) > DROCE_HDR_RETH ? HAS(m, DROCE_HDR_RETH) * SZ_RETH : 0) + \
	 ((h) > DROCE_HDR_ATMETH ? HAS(m, DROCE_HDR_ATMETH) * SZ_ATMETH : 0) + \
	 ((h) > DROCE_HDR_AETH ? HAS(m, DROCE_HDR_AETH) * SZ_AETH : 0) + \
	 ((h) > DROCE_HDR_ATMACK ? HAS(m, DROCE_HDR_ATMACK) * SZ_ATMACK : 0) + \
	 ((h) > DROCE_HDR_IMMDT ? HAS(m, DROCE_HDR_IMMDT) * SZ_IMMDT : 0) + \
	 ((h) > DROCE_HDR_IETH ? HAS(m, DROCE_HDR_IETH) * SZ_IETH : 0) + \
	 ((h) > DROCE_HDR_CNP ? HAS(m, DROCE_HDR_CNP) * SZ_CNP : 0))
#define OFF(m, h) (HAS(m, h) ? BEFORE(m, h) : 0)

#define DROCE_X_TABLE(opname, val, m, f) \
	[val] = { \
		.name = #opname, \
		.flags = (f), \
		.hdrs = (m), \
		.hdr_len = BEFORE(m, DROCE_HDR_MAX), \
		.off = { OFF(m, 0), OFF(m, 1), OFF(m, 2), OFF(m, 3), OFF(m, 4), OFF(m, 5), \
			 OFF(m, 6), OFF(m, 7) }, \
	},

const struct droce_opcode_info droce_opcode_table[256] = { DROCE_OPCODE_LIST(DROCE_X_TABLE) };

#define DROCE_X_VALUE(opname, val, m, f) val,
const uint8_t droce_opcode_values[] = { DROCE_OPCODE_LIST(DROCE_X_VALUE) };
const unsigned int droce_opcode_count = sizeof(droce_opcode_values);

_Static_assert(DROCE_HDR_MAX == 8, "OFF() initialiser above lists eight headers");
