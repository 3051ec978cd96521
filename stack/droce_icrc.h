/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_ICRC_H
#define DROCE_ICRC_H

/*
 * RoCEv2 Invariant CRC (IBTA Annex A17.3.3; InfiniBand 7.8.1): CRC-32 (IEEE 802.3, reflected,
 * as zlib's crc32) over 8 bytes of 0xFF standing for the masked LRH, the IP header with its variant
 * fields set to ones, the UDP header with the checksum set to ones, the BTH with byte 4 set to
 * ones, then the rest of the packet up to the ICRC. It goes on the wire least-significant byte first.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * zlib-compatible CRC-32: crc is the value returned by a previous call (0 to start); the
 * inversion at both ends happens inside, so calls chain over split buffers.
 * droce_crc32() picks the fastest implementation this CPU runs; the others are kept for
 * tests and benchmarks, and all must agree on every input.
 */
uint32_t droce_crc32(uint32_t crc, const void *buf, size_t len);
/* Copy len bytes from src to dst and return droce_crc32(crc, src, len): one pass where the CPU
 * allows (the fold's registers are stored), else a memcpy then the CRC of the copy. */
uint32_t droce_crc32_copy(uint32_t crc, void *dst, const void *src, size_t len);
uint32_t droce_crc32_bitwise(uint32_t crc, const void *buf, size_t len);
uint32_t droce_crc32_table(uint32_t crc, const void *buf, size_t len);

/* Name of the implementation droce_crc32() dispatches to ("pclmul", "table", ...). */
const char *droce_crc32_impl_name(void);

/*
 * The ICRC of a RoCEv2 packet. l3 points at the IPv4 or IPv6 header; len counts the bytes
 * from there to the end of the pad, i.e. the ICRC itself excluded. The result is the value
 * whose little-endian bytes are the wire ICRC (droce_icrc_get/put).
 */
uint32_t droce_icrc(const uint8_t *l3, uint32_t len);
/* The same, computed by the bitwise reference over a masked copy: slow, for tests. */
uint32_t droce_icrc_ref(const uint8_t *l3, uint32_t len);

/*
 * IPv4 without options (IHL 5), as droce sends and as nearly every peer does: the masked prefix
 * is the 40 bytes of IPv4 (20), UDP (8) and BTH (12) headers at fixed places.
 */
#define DROCE_ICRC_V4_HDR 40

/* droce_icrc() for an IPv4 header of IHL 5 (the caller checked it and len >= 40), masking by
 * constant offsets instead of parsing the header. */
uint32_t droce_icrc_v4(const uint8_t *l3, uint32_t len);

/*
 * Per-connection ICRC state (sender side). Every byte of the masked IPv4/UDP/BTH prefix is fixed
 * for a connected QP except the IPv4 total length and identification (droce's is fixed, Linux
 * changes it per packet), the UDP length, BTH bytes 0-1 (opcode, SE, PadCnt, TVer) and 8-11
 * (AckReq, PSN). CRC-32 is linear, so the register after the prefix is a per-QP base over the
 * prefix with those bytes zero, XOR one table entry per variable byte.
 * droce_icrc_v4_base() takes a prefix whose variable bytes may hold anything; droce_icrc_v4_fast()
 * then equals droce_icrc_v4() on any packet whose fixed prefix bytes match it.
 */
uint32_t droce_icrc_v4_base(const uint8_t *l3);
uint32_t droce_icrc_v4_fast(uint32_t base, const uint8_t *l3, uint32_t len);

/* For frames whose prefix changes only in the BTH's last word (AckReq, PSN), e.g. ACKs: the
 * register after the prefix with that word zero, then with the word at bth8 folded in. */
uint32_t droce_icrc_v4_reg_nopsn(const uint8_t *l3);
uint32_t droce_icrc_v4_psn(uint32_t reg_nopsn, const uint8_t *bth8);

/* Receiver side: the fixed prefix bytes of the last frame seen (masked bytes set, variable ones
 * zero) and their base. A frame with the same fixed bytes (every frame of one connection) costs
 * a 40-byte compare instead of a CRC over the prefix; any other is computed in full and cached.
 * The result always equals droce_icrc_v4(l3, len). */
struct droce_icrc_v4_cache {
	uint64_t hdr[DROCE_ICRC_V4_HDR / 8];
	uint32_t base;
	bool valid;
};

uint32_t droce_icrc_v4_cached(struct droce_icrc_v4_cache *c, const uint8_t *l3, uint32_t len);

static inline uint32_t
droce_icrc_get(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline void
droce_icrc_put(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

#endif /* DROCE_ICRC_H */
