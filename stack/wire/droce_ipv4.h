/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_WIRE_IPV4_H
#define DROCE_WIRE_IPV4_H

/* IPv4 header (RFC 791); RoCEv2 never sends options but a receiver must honour IHL. */
#include "../droce_byteorder.h"

struct droce_ipv4_hdr {
	uint8_t version_ihl;	/* version(4) IHL(4), IHL in 32-bit words */
	uint8_t tos;		/* DSCP(6) ECN(2): the GRH traffic class */
	droce_be16_t total_len; /* header + UDP datagram */
	droce_be16_t id;
	droce_be16_t frag_off; /* flags(3) fragment offset(13) */
	uint8_t ttl;	       /* the GRH hop limit */
	uint8_t proto;	       /* 17 = UDP */
	droce_be16_t hdr_csum;
	droce_be32_t src;
	droce_be32_t dst;
} __attribute__((packed));
_Static_assert(sizeof(struct droce_ipv4_hdr) == 20, "IPv4 header is 20 bytes");

#define DROCE_IPV4_VERSION_IHL 0x45
#define DROCE_IPV4_DF	       0x4000
#define DROCE_IPV4_MF	       0x2000
#define DROCE_IPV4_OFF_MASK    0x1FFF
#define DROCE_IPPROTO_UDP      17

/* ECN codepoints (RFC 3168), the low two bits of ToS / traffic class. */
enum droce_ecn {
	DROCE_ECN_NOT_ECT = 0,
	DROCE_ECN_ECT1 = 1,
	DROCE_ECN_ECT0 = 2,
	DROCE_ECN_CE = 3,
};

/* RFC 1071 checksum of an IPv4 header of ihl_bytes (the checksum field included; a multiple of
 * 4 as IHL gives it). Summed 32 bits at a time in native order and folded (RFC 1071 2(B): the sum
 * is byte-order independent), then returned in host order. */
static inline uint16_t
droce_ipv4_csum(const void *hdr, unsigned int ihl_bytes)
{
	const uint8_t *p = hdr;
	uint64_t sum = 0;
	uint32_t w;
	unsigned int i;

	for (i = 0; i + 3 < ihl_bytes; i += 4) {
		memcpy(&w, p + i, sizeof(w));
		sum += w;
	}
	sum = (sum & 0xFFFFFFFF) + (sum >> 32);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	return droce_be16_to_cpu((uint16_t)~sum);
}

#endif /* DROCE_WIRE_IPV4_H */
