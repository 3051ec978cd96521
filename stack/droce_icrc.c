/* SPDX-License-Identifier: BSD-3-Clause */
/* ICRC framing: which bytes are masked, over a CRC-32 from droce_crc32*.c. */
#include <string.h>

#include "droce_crc_tables.h"
#include "droce_icrc.h"
#include "wire/droce_bth.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_ipv6.h"
#include "wire/droce_udp.h"

/* zlib-style CRC value after the 8 bytes of 0xFF that stand for the masked LRH: the raw register
 * is 0xDEBB20E3 (IBTA A17.3.3; rxe seeds with it), and zlib's convention stores its complement. */
#define DROCE_ICRC_SEED (~0xDEBB20E3u)

/* Longest IP + UDP + BTH prefix that is masked: IPv4 with options or IPv6, then UDP and BTH. */
#define MASKED_MAX (60 + sizeof(struct droce_udp_hdr) + sizeof(struct droce_bth))

/* Copy the IP, UDP and BTH headers with their variant fields set to ones; return its length,
 * or 0 when the IP header is not one we can frame. */
static uint32_t
icrc_masked_prefix(const uint8_t *l3, uint32_t len, uint8_t *out)
{
	uint32_t ip_len, n;

	if (len < 1)
		return 0;
	if ((l3[0] >> 4) == 4) {
		ip_len = (uint32_t)(l3[0] & 0x0F) * 4;
		if (ip_len < sizeof(struct droce_ipv4_hdr))
			return 0;
	} else if ((l3[0] >> 4) == 6) {
		ip_len = sizeof(struct droce_ipv6_hdr);
	} else {
		return 0;
	}
	n = ip_len + sizeof(struct droce_udp_hdr) + sizeof(struct droce_bth);
	if (n > len)
		return 0;
	memcpy(out, l3, n);
	if (ip_len == sizeof(struct droce_ipv6_hdr) && (l3[0] >> 4) == 6) {
		struct droce_ipv6_hdr *ip6 = (struct droce_ipv6_hdr *)out;

		/* traffic class and flow label: everything but the version nibble */
		out[0] |= 0x0F;
		out[1] = out[2] = out[3] = 0xFF;
		ip6->hop_limit = 0xFF;
	} else {
		struct droce_ipv4_hdr *ip4 = (struct droce_ipv4_hdr *)out;

		ip4->tos = 0xFF;
		ip4->ttl = 0xFF;
		ip4->hdr_csum = 0xFFFF;
	}
	((struct droce_udp_hdr *)(out + ip_len))->csum = 0xFFFF;
	out[ip_len + sizeof(struct droce_udp_hdr) + DROCE_BTH_ICRC_MASK_OFF] = 0xFF;
	return n;
}

uint32_t
droce_icrc(const uint8_t *l3, uint32_t len)
{
	uint8_t hdr[MASKED_MAX];
	uint32_t n = icrc_masked_prefix(l3, len, hdr);
	uint32_t crc;

	crc = droce_crc32(DROCE_ICRC_SEED, hdr, n);
	return droce_crc32(crc, l3 + n, len - n);
}

uint32_t
droce_icrc_ref(const uint8_t *l3, uint32_t len)
{
	static const uint8_t lrh[8] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
	uint8_t hdr[MASKED_MAX];
	uint32_t n = icrc_masked_prefix(l3, len, hdr);
	uint32_t crc;

	crc = droce_crc32_bitwise(0, lrh, sizeof(lrh));
	crc = droce_crc32_bitwise(crc, hdr, n);
	return droce_crc32_bitwise(crc, l3 + n, len - n);
}

/* Masked bytes of the IPv4 (IHL 5) prefix: ToS, TTL, header checksum, UDP checksum, BTH byte 4
 * (IBTA A17.3.3). */
static const uint8_t v4_masked[] = { 1, 8, 10, 11, 20 + 6, 20 + 7, 28 + DROCE_BTH_ICRC_MASK_OFF };
/* Bytes that change from packet to packet of one connection (see droce_icrc.h). */
static const uint8_t v4_variable[] = { 2,  3,  4,      5,      20 + 4,	20 + 5,
				       28, 29, 28 + 8, 28 + 9, 28 + 10, 28 + 11 };
#define V4_NVAR (sizeof(v4_variable) / sizeof(v4_variable[0]))
_Static_assert(V4_NVAR == DROCE_ICRC_V4_NVAR, "gen_crc_tables.py has the same list");

/* v4_tab[k][v]: the CRC register (raw, not inverted) after the 8 + 40 prefix bytes when all are
 * zero but byte v4_variable[k], which is v; register zero at the start. v4_keep zeroes the
 * variable and masked bytes of the 40, v4_ones sets the masked ones. Const, generated at build
 * time from the same two lists (gen_crc_tables.py; the unit tests check the fast paths
 * against the bitwise reference). */
#define v4_tab	droce_icrc_v4_tab
#define v4_keep droce_icrc_v4_keep.w
#define v4_ones droce_icrc_v4_ones.w

uint32_t
droce_icrc_v4(const uint8_t *l3, uint32_t len)
{
	uint8_t hdr[DROCE_ICRC_V4_HDR];
	unsigned int i;

	memcpy(hdr, l3, sizeof(hdr));
	for (i = 0; i < sizeof(v4_masked); i++)
		hdr[v4_masked[i]] = 0xFF;
	return droce_crc32(droce_crc32(DROCE_ICRC_SEED, hdr, sizeof(hdr)), l3 + sizeof(hdr),
			   len - sizeof(hdr));
}

uint32_t
droce_icrc_v4_base(const uint8_t *l3)
{
	uint8_t blk[8 + DROCE_ICRC_V4_HDR];
	unsigned int i;

	memset(blk, 0xFF, 8);
	memcpy(blk + 8, l3, DROCE_ICRC_V4_HDR);
	for (i = 0; i < sizeof(v4_masked); i++)
		blk[8 + v4_masked[i]] = 0xFF;
	for (i = 0; i < V4_NVAR; i++)
		blk[8 + v4_variable[i]] = 0;
	return ~droce_crc32(0, blk, sizeof(blk)); /* register, from all ones at the start */
}

uint32_t
droce_icrc_v4_fast(uint32_t base, const uint8_t *l3, uint32_t len)
{
	uint32_t reg = base ^ v4_tab[0][l3[2]] ^ v4_tab[1][l3[3]] ^ v4_tab[2][l3[4]] ^
		       v4_tab[3][l3[5]] ^ v4_tab[4][l3[24]] ^ v4_tab[5][l3[25]] ^
		       v4_tab[6][l3[28]] ^ v4_tab[7][l3[29]] ^ v4_tab[8][l3[36]] ^
		       v4_tab[9][l3[37]] ^ v4_tab[10][l3[38]] ^ v4_tab[11][l3[39]];

	return droce_crc32(~reg, l3 + DROCE_ICRC_V4_HDR, len - DROCE_ICRC_V4_HDR);
}

uint32_t
droce_icrc_v4_reg_nopsn(const uint8_t *l3)
{
	uint8_t hdr[DROCE_ICRC_V4_HDR];
	unsigned int i;

	memcpy(hdr, l3, sizeof(hdr));
	for (i = 0; i < sizeof(v4_masked); i++)
		hdr[v4_masked[i]] = 0xFF;
	memset(hdr + 28 + 8, 0, 4);
	return ~droce_crc32(DROCE_ICRC_SEED, hdr, sizeof(hdr));
}

uint32_t
droce_icrc_v4_psn(uint32_t reg_nopsn, const uint8_t *bth8)
{
	return reg_nopsn ^ v4_tab[8][bth8[0]] ^ v4_tab[9][bth8[1]] ^ v4_tab[10][bth8[2]] ^
	       v4_tab[11][bth8[3]];
}

uint32_t
droce_icrc_v4_cached(struct droce_icrc_v4_cache *c, const uint8_t *l3, uint32_t len)
{
	uint64_t w[DROCE_ICRC_V4_HDR / 8];
	unsigned int i;
	uint64_t diff = 0;

	memcpy(w, l3, sizeof(w));
	for (i = 0; i < DROCE_ICRC_V4_HDR / 8; i++) {
		w[i] = (w[i] & v4_keep[i]) | v4_ones[i];
		diff |= w[i] ^ c->hdr[i];
	}
	if (__builtin_expect(diff != 0 || !c->valid, 0)) {
		/* another peer address, port, DestQP...: the base of this prefix */
		memcpy(c->hdr, w, sizeof(w));
		c->base = ~droce_crc32(DROCE_ICRC_SEED, w, sizeof(w));
		c->valid = true;
	}
	return droce_icrc_v4_fast(c->base, l3, len);
}
