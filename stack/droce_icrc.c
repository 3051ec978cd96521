/* SPDX-License-Identifier: BSD-3-Clause */
/* ICRC framing: which bytes are masked, over a CRC-32 from droce_crc32*.c. */
#include <string.h>

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
