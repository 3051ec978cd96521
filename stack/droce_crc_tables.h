/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CRC_TABLES_H
#define DROCE_CRC_TABLES_H

/* The CRC tables, const, written at build time by gen_crc_tables.py (which says what each
 * holds): the engine fills no table at run time. */
#include <stdint.h>

#include "droce_icrc.h"

#define DROCE_ICRC_V4_NVAR 12

/* 40 bytes seen as bytes (how they are written, so any host order works) or 64-bit words */
union droce_icrc_v4_mask {
	uint8_t b[DROCE_ICRC_V4_HDR];
	uint64_t w[DROCE_ICRC_V4_HDR / 8];
};

extern const uint32_t droce_crc32_tab[8][256];
extern const uint32_t droce_icrc_v4_tab[DROCE_ICRC_V4_NVAR][256];
extern const union droce_icrc_v4_mask droce_icrc_v4_keep, droce_icrc_v4_ones;

#endif /* DROCE_CRC_TABLES_H */
