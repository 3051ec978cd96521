/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_PKT_H
#define DROCE_PKT_H

/*
 * A RoCEv2 packet described field by field, in host order. The parser fills it from a frame;
 * the builder writes a frame from it, so parse(build(p)) == p is the codec's contract.
 */
#include <stdbool.h>
#include <stdint.h>

#include "droce_drop.h"
#include "droce_opcode.h"

struct droce_pkt {
	/* Where things are in the frame (filled by the parser and the builder). */
	uint16_t l3_off; /* IP header */
	uint16_t l4_off; /* UDP header */
	uint16_t bth_off;
	uint16_t pay_off;   /* payload, after the extension headers */
	uint32_t pay_len;   /* payload bytes, pad excluded */
	uint32_t frame_len; /* Ethernet header to ICRC inclusive, no Ethernet padding */
	uint32_t icrc;	    /* as droce_icrc() returns it */

	/* Ethernet */
	uint8_t dmac[6];
	uint8_t smac[6];
	bool has_vlan;
	uint16_t vlan_tci; /* PCP(3) DEI(1) VID(12) */

	/* IP, in GRH terms: IPv4 addresses are GIDs in ::ffff:a.b.c.d form */
	uint8_t ip_ver;	     /* 4 or 6 */
	uint8_t tclass;	     /* ToS / traffic class: DSCP << 2 | ECN */
	uint8_t hop_limit;   /* TTL / hop limit */
	uint32_t flow_label; /* IPv6 only */
	uint16_t ip_id;	     /* IPv4 only */
	uint8_t sgid[16];
	uint8_t dgid[16];

	/* UDP */
	uint16_t udp_sport;
	uint16_t udp_csum; /* as received; the builder computes it for IPv6, 0 for IPv4 */

	/* BTH */
	uint8_t opcode;
	bool se;
	bool mig;
	uint8_t padcnt;
	uint8_t tver;
	uint16_t pkey;
	bool fecn;
	bool becn;
	bool srcap; /* droce's selective-repeat mark in resv6 (wire/droce_bth.h) */
	uint32_t dqpn;
	bool ackreq;
	uint32_t psn;

	/* Extension headers: valid where droce_opcode_info(opcode)->hdrs says so. */
	uint64_t reth_va;
	uint32_t reth_rkey;
	uint32_t reth_len;
	uint8_t aeth_syn;
	uint32_t aeth_msn;
	uint64_t atomic_va;
	uint32_t atomic_rkey;
	uint64_t atomic_swap_add;
	uint64_t atomic_compare;
	uint64_t atomic_orig;
	uint32_t imm; /* ImmDt as a host-order number; verbs hands it on big-endian */
	uint32_t ieth_rkey;
	uint32_t deth_qkey;
	uint32_t deth_sqpn;
};

/* Frame-level constants. */
#define DROCE_ICRC_LEN 4
/* Ethernet + 802.1Q + IPv6 + UDP + BTH + the longest extension chain + ICRC, a bound for headroom. */
#define DROCE_HDR_ROOM_MAX 128

enum droce_parse_flags {
	DROCE_PARSE_NO_ICRC = 1u << 0,	 /* the NIC checked it, or the caller will */
	DROCE_PARSE_NO_IPCSUM = 1u << 1, /* the NIC checked the IPv4 header checksum */
};

/*
 * Validate a frame in a fixed order (frame length, EtherType and VLAN, IP version, IHL, length,
 * fragments and checksum, UDP port and length, BTH TVer, opcode, header length, PadCnt, ICRC)
 * and describe it in *pkt. Returns DROCE_DROP_NONE or the first failed check; pkt is then
 * filled up to that check only.
 */
enum droce_drop droce_parse(const uint8_t *frame, uint32_t len, struct droce_pkt *pkt,
			    unsigned int flags);

/* The extension headers op names, read from their table offsets after the BTH at bth. */
void droce_parse_ext(const uint8_t *bth, const struct droce_opcode_info *op, struct droce_pkt *p);

/*
 * droce_parse() for the receive path: the same checks in the same order, the same reason for
 * every frame, and the common shape (Ethernet, 802.1Q or not, IPv4 without options) checked
 * at constant offsets, its ICRC through cache (NULL: none; cache_mask + 1 prefix states
 * indexed by DestQP). The MAC addresses and IPv4's GIDs may be left out: the receive path
 * compares the frame's bytes, and droce_parse_addrs() fills them where a packet needs them.
 */
struct droce_icrc_v4_cache;
enum droce_drop droce_parse_rx(const uint8_t *frame, uint32_t len, struct droce_pkt *pkt,
			       unsigned int flags, struct droce_icrc_v4_cache *cache,
			       uint32_t cache_mask);
/*
 * The first of droce_parse()'s steps, those that tell a RoCEv2 frame from any other: Ethernet
 * and 802.1Q, the IP version, IHL and protocol, the UDP destination port, each against the
 * frame's length. Not the ones that judge a RoCEv2 frame (IP and UDP lengths, fragments,
 * checksums, the transport): droce_parse() makes them where the frame is received.
 * DROCE_DROP_NONE for UDP to port 4791, with has_vlan, vlan_tci, ip_ver and the offsets up to
 * bth_off filled (the BTH may still be cut short); else the reason it is not RoCEv2 or was cut
 * short before it could tell.
 */
enum droce_drop droce_parse_l4(const uint8_t *frame, uint32_t len, struct droce_pkt *pkt);
/* The MAC addresses and IPv4's GIDs droce_parse_rx() left out. */
void droce_parse_addrs(const uint8_t *frame, struct droce_pkt *pkt);

/* Headers the builder writes for p, up to and including the extension headers. */
uint32_t droce_build_hdr_len(const struct droce_pkt *p);

/*
 * Write every header of p into buf (cap bytes), sized for pay_len payload bytes, plus PadCnt.
 * The payload goes at buf + return value; then droce_build_finish() pads it and fills the ICRC
 * (and the IPv6 UDP checksum). Returns the header length or -ENOSPC / -EINVAL (unknown opcode,
 * payload for an opcode that carries none, or addresses that do not fit the IP version).
 */
int droce_build_hdrs(uint8_t *buf, uint32_t cap, struct droce_pkt *p, uint32_t pay_len);
/* The extension headers of op, from p, at their table offsets after the BTH at bth (IBTA 9.3):
 * for callers that keep their own Ethernet/IP/UDP template and write only the transport part. */
void droce_build_ext(uint8_t *bth, const struct droce_opcode_info *op, const struct droce_pkt *p);

/* Zero the pad, fill the IPv6 UDP checksum and the ICRC; returns the frame length. */
uint32_t droce_build_finish(uint8_t *buf, struct droce_pkt *p);

/* The whole frame at once, copying pay_len bytes of payload. Returns its length or -errno. */
int droce_build(uint8_t *buf, uint32_t cap, struct droce_pkt *p, const void *payload,
		uint32_t pay_len);

/* Frame length a packet of this opcode and payload needs (headers, pad and ICRC). */
uint32_t droce_build_frame_len(const struct droce_pkt *p, uint32_t pay_len);

/* IPv4-mapped GID helpers (::ffff:a.b.c.d). */
bool droce_gid_is_v4(const uint8_t gid[16]);
/* A multicast group's GID: IPv4-mapped 224.0.0.0/4, or IPv6 ff00::/8. */
bool droce_gid_is_multicast(const uint8_t gid[16]);
void droce_gid_from_v4(uint8_t gid[16], uint32_t addr_host_order);
/* The Ethernet address a group's frames go to (RFC 1112 6.4, RFC 2464 7). */
void droce_gid_mcast_mac(const uint8_t gid[16], uint8_t mac[6]);

#endif /* DROCE_PKT_H */
