/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_BUILD_HDR_H
#define DROCE_BUILD_HDR_H

/*
 * The header writers every frame the engine sends goes through: the builder (droce_build.c),
 * a connected QP's byte template and its ACK template (droce_tx.c). Each fills one wire
 * struct's fields from host-order values, so a template and the builder cannot disagree on a
 * bit; a template caller passes constants for what its QP never changes.
 */
#include <stdbool.h>
#include <stdint.h>

#include "wire/droce_aeth.h"
#include "wire/droce_bth.h"
#include "wire/droce_ipv4.h"
#include "wire/droce_udp.h"

/* IBTA 9.2: BTH byte 1, SE(1) MigReq(1) PadCnt(2) TVer(4). */
static inline uint8_t
droce_bth_flags(bool se, bool mig, uint32_t padcnt)
{
	return (uint8_t)((se ? DROCE_BTH_SE : 0) | (mig ? DROCE_BTH_MIG : 0) |
			 (padcnt << DROCE_BTH_PAD_SHIFT) | DROCE_BTH_TVER);
}

/* IBTA 9.2: the BTH's last word, AckReq(1) resv(7) PSN(24). */
static inline void
droce_bth_set_psn(struct droce_bth *bth, bool ackreq, uint32_t psn)
{
	bth->ack_psn =
		droce_cpu_to_be32((ackreq ? DROCE_BTH_ACKREQ : 0) | (psn & DROCE_BTH_PSN_MASK));
}

/* IBTA 9.2: the whole BTH. */
static inline void
droce_bth_set(struct droce_bth *bth, uint8_t opcode, uint8_t flags, uint16_t pkey, bool fecn,
	      bool becn, uint32_t dqpn, bool ackreq, uint32_t psn)
{
	bth->opcode = opcode;
	bth->flags = flags;
	bth->pkey = droce_cpu_to_be16(pkey);
	bth->fb_dqpn = droce_cpu_to_be32((fecn ? DROCE_BTH_FECN : 0) | (becn ? DROCE_BTH_BECN : 0) |
					 (dqpn & DROCE_BTH_QPN_MASK));
	droce_bth_set_psn(bth, ackreq, psn);
}

/* droce's selective-repeat mark in resv6 (stack/wire/README.md, "Capability mark"). */
static inline void
droce_bth_set_srcap(struct droce_bth *bth)
{
	bth->fb_dqpn |= droce_cpu_to_be32(DROCE_BTH_SRCAP);
}

/* IBTA 9.3.5: syndrome(8) MSN(24). */
static inline void
droce_aeth_set(struct droce_aeth *aeth, uint8_t syn, uint32_t msn)
{
	aeth->syn_msn = droce_cpu_to_be32(((uint32_t)syn << DROCE_AETH_SYN_SHIFT) |
					  (msn & DROCE_AETH_MSN_MASK));
}

/* RFC 791: the total length and, with it, the header checksum. csum_base: the RFC 1071 sum of
 * the header's 16-bit words with both fields zero (droce_ipv4_sum_base), which a template keeps
 * so that a frame pays one addition; the fold is RFC 1624's incremental update. */
static inline void
droce_ipv4_set_len(struct droce_ipv4_hdr *ip, uint32_t csum_base, uint16_t total_len)
{
	uint32_t sum = csum_base + total_len;

	sum = (sum & 0xFFFF) + (sum >> 16);
	sum = (sum & 0xFFFF) + (sum >> 16);
	ip->total_len = droce_cpu_to_be16(total_len);
	ip->hdr_csum = droce_cpu_to_be16((uint16_t)~sum);
}

/* The 16-bit word sum of an IPv4 header with its total length and checksum zero. */
static inline uint32_t
droce_ipv4_sum_base(const struct droce_ipv4_hdr *ip)
{
	struct droce_ipv4_hdr h = *ip;
	const uint8_t *b = (const uint8_t *)&h;
	uint32_t s = 0;
	unsigned int i;

	h.total_len = 0;
	h.hdr_csum = 0;
	for (i = 0; i + 1 < sizeof(h); i += 2)
		s += ((uint32_t)b[i] << 8) | b[i + 1];
	return s;
}

/* RFC 768 / IBTA A17.2: a RoCEv2 UDP header; the checksum 0 (IPv6 fills it at the end). */
static inline void
droce_udp_set(struct droce_udp_hdr *udp, uint16_t sport, uint16_t len)
{
	udp->src_port = droce_cpu_to_be16(sport);
	udp->dst_port = droce_cpu_to_be16(DROCE_ROCEV2_UDP_PORT);
	udp->len = droce_cpu_to_be16(len);
	udp->csum = 0;
}

#endif /* DROCE_BUILD_HDR_H */
