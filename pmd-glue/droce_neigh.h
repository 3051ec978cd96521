/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_NEIGH_H
#define DROCE_NEIGH_H

/*
 * Neighbour resolution for the runtime: ARP (RFC 826) for IPv4 and Neighbor Discovery (RFC 4861)
 * for IPv6, a small cache with expiry, retries with a "peer unreachable" verdict, and callbacks
 * for resolutions that wait. Pure logic: frames in and out as byte buffers, time as a parameter,
 * so crafted frames test it without EAL. Not thread-safe: the poll lcore owns it.
 * Addresses are 16 bytes, IPv4 as ::ffff:a.b.c.d (the RoCEv2 GID form).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	DROCE_NEIGH_ENTRIES = 64, /* scanned linearly: resolution is not on the data path */
	DROCE_NEIGH_WAITERS = 32,
	DROCE_NEIGH_FRAME_MAX = 90, /* 802.1Q-tagged NS/NA with one link-layer option */
	DROCE_NEIGH_ERR_MAX = 160,
};

struct droce_neigh_conf {
	uint8_t mac[6];
	bool has_ipv4;
	uint8_t ipv4[4];
	uint8_t ipv4_prefix;
	bool has_gw4;
	uint8_t gw4[4];
	bool has_ipv6;
	uint8_t ipv6[16];
	uint8_t ipv6_prefix;
	bool has_gw6;
	uint8_t gw6[16];
	uint64_t timeout_ns; /* lifetime of a learned entry */
	uint64_t retry_ns;   /* between requests for an unresolved address */
	uint32_t tries;	     /* requests before the address is declared unreachable */
	uint16_t vlan;	     /* 802.1Q VLAN id 1..4094 of every frame in and out; 0: untagged */
	uint8_t vlan_pcp;    /* priority code point of our tagged frames */
};

/* Frame output: the callee copies the frame; returns 0 or -errno (counted as tx_fail). */
struct droce_neigh_ops {
	int (*tx)(void *ctx, const uint8_t *frame, uint32_t len);
	void *ctx;
};

/* Called once when a waiting resolution ends: status 0 with the MAC, or -EHOSTUNREACH. */
struct droce_neigh_waiter {
	void (*cb)(void *arg, int status, const uint8_t mac[6]);
	void *arg;
	uint8_t addr[16]; /* the next hop waited for */
	bool used;
};

enum droce_neigh_state {
	DROCE_NEIGH_FREE,
	DROCE_NEIGH_INCOMPLETE, /* request sent, no answer yet */
	DROCE_NEIGH_REACHABLE,
	DROCE_NEIGH_FAILED, /* no answer after conf.tries: lookups fail fast until it ages */
};

struct droce_neigh_entry {
	uint8_t addr[16];
	uint8_t mac[6];
	uint8_t state;
	uint8_t tries;
	uint64_t deadline_ns; /* REACHABLE: expiry; INCOMPLETE: next retry; FAILED: forget */
};

/* clang-format off */
#define DROCE_NEIGH_STATS(X) \
	X(arp_req_rx) X(arp_req_tx) X(arp_rep_rx) X(arp_rep_tx) X(garp_tx) X(ns_rx) X(ns_tx) \
	X(na_rx) X(na_tx) X(learned) X(expired) X(unreachable) X(malformed) X(csum_bad) \
	X(ignored) X(conflict) X(table_full) X(waiters_full) X(tx_fail) X(vlan_other) X(flushed)
/* clang-format on */

struct droce_neigh_stats {
#define DROCE_X_NEIGH_FIELD(name) uint64_t name;
	DROCE_NEIGH_STATS(DROCE_X_NEIGH_FIELD)
#undef DROCE_X_NEIGH_FIELD
};

struct droce_neigh {
	struct droce_neigh_conf conf;
	struct droce_neigh_ops ops;
	struct droce_neigh_entry ent[DROCE_NEIGH_ENTRIES];
	struct droce_neigh_waiter wait[DROCE_NEIGH_WAITERS];
	struct droce_neigh_stats stats;
	char last_err[DROCE_NEIGH_ERR_MAX];
};

int droce_neigh_init(struct droce_neigh *n, const struct droce_neigh_conf *conf,
		     const struct droce_neigh_ops *ops);

/* Whether a frame belongs here: ARP, or ICMPv6 Neighbor Solicitation/Advertisement, untagged
 * or behind one 802.1Q tag (of any VLAN: droce_neigh_input() checks which). */
bool droce_neigh_match(const uint8_t *frame, uint32_t len);

/* Consume a matched frame: answer requests for our addresses, learn answers. 0, or -EINVAL
 * (malformed, counted) / -EBADMSG (ICMPv6 checksum, counted) / -EXDEV (a VLAN other than
 * conf.vlan, counted as vlan_other; untagged and priority-tagged frames are VLAN 0). */
int droce_neigh_input(struct droce_neigh *n, const uint8_t *frame, uint32_t len, uint64_t now);

/*
 * MAC of the next hop towards addr: 0 with mac filled; -EAGAIN while a request is out (one is
 * sent now if none is); -EHOSTUNREACH when it went unanswered (droce_neigh_strerror() says which
 * peer and how many tries); -ENETUNREACH off-prefix with no gateway; -EAFNOSUPPORT when that IP
 * version has no local address; -ENOSPC when the table is full of unresolved entries.
 * A multicast group (224.0.0.0/4, ff00::/8) resolves at once to its derived MAC.
 * With cb set and -EAGAIN returned, cb(arg, ...) runs once when the resolution ends.
 */
int droce_neigh_resolve(struct droce_neigh *n, const uint8_t addr[16], uint64_t now, uint8_t mac[6],
			void (*cb)(void *arg, int status, const uint8_t mac[6]), void *arg);

/* Retry requests, declare peers unreachable, expire entries. Returns the next deadline. */
uint64_t droce_neigh_timer(struct droce_neigh *n, uint64_t now);

/* Earliest time droce_neigh_timer() has work (UINT64_MAX: none). */
uint64_t droce_neigh_next_deadline(const struct droce_neigh *n);

/* Gratuitous ARP and unsolicited Neighbor Advertisement for our addresses (at start, link up). */
void droce_neigh_announce(struct droce_neigh *n);

/*
 * The link went down or came up: whoever is behind it now may not be whom we learnt (a peer
 * process restarted with another MAC) nor whom we gave up on. Reachable and failed entries are
 * forgotten, as Linux flushes a device's neighbours on a carrier change; resolutions in
 * progress go on, their requests now reaching the new peer.
 */
void droce_neigh_flush(struct droce_neigh *n);

/* The last unreachable verdict, e.g. "peer unreachable (no ARP reply from 198.18.0.2 after 4
 * tries)"; "" when none. */
const char *droce_neigh_strerror(const struct droce_neigh *n);

/* Format a 16-byte address (IPv4-mapped shown dotted). */
void droce_neigh_addr_str(const uint8_t addr[16], char *buf, size_t len);

/* ---- Frame codecs (droce_neigh_wire.c), exposed for tests ---- */
enum droce_arp_op { DROCE_ARP_REQUEST = 1, DROCE_ARP_REPLY = 2 };
enum droce_nd_type { DROCE_ND_NS = 135, DROCE_ND_NA = 136 };
enum droce_nd_flags { DROCE_NA_ROUTER = 0x80, DROCE_NA_SOLICITED = 0x40, DROCE_NA_OVERRIDE = 0x20 };

struct droce_neigh_msg {
	bool is_arp;
	bool has_vlan;	   /* an 802.1Q tag preceded the EtherType */
	uint16_t vlan_tci; /* PCP(3) DEI(1) VID(12), when has_vlan */
	uint16_t op;	   /* enum droce_arp_op or enum droce_nd_type */
	uint8_t na_flags;
	uint8_t eth_src[6];
	uint8_t eth_dst[6];
	uint8_t sender_mac[6]; /* ARP sender / ND link-layer option */
	bool has_lladdr;
	uint8_t sender_ip[16]; /* ARP sender / IPv6 source, IPv4-mapped for ARP */
	uint8_t target_ip[16]; /* ARP target / ND target */
	uint8_t ip_dst[16];    /* IPv6 destination (ND only) */
	uint8_t target_mac[6]; /* ARP only */
};

/* Parse: 0, -EINVAL (malformed), -EBADMSG (ICMPv6 checksum), -ENOENT (not ARP/NS/NA). */
int droce_neigh_parse(const uint8_t *frame, uint32_t len, struct droce_neigh_msg *m);
/* Build into buf (>= DROCE_NEIGH_FRAME_MAX bytes); returns the frame length. */
uint32_t droce_arp_build(uint8_t *buf, enum droce_arp_op op, const uint8_t eth_dst[6],
			 const uint8_t smac[6], const uint8_t sip[4], const uint8_t tmac[6],
			 const uint8_t tip[4]);
uint32_t droce_nd_build(uint8_t *buf, enum droce_nd_type type, uint8_t na_flags,
			const uint8_t eth_dst[6], const uint8_t smac[6], const uint8_t src[16],
			const uint8_t dst[16], const uint8_t target[16]);
/* Insert an 802.1Q tag (tci) after the MACs of the len-byte frame, in place: buf holds len + 4
 * bytes. Returns the new length. */
uint32_t droce_neigh_vlan_insert(uint8_t *frame, uint32_t len, uint16_t tci);
/* ICMPv6 checksum (RFC 4443 2.3) over the pseudo-header and msg (checksum field included). */
uint16_t droce_icmp6_csum(const uint8_t src[16], const uint8_t dst[16], const uint8_t *msg,
			  uint32_t len);

#endif /* DROCE_NEIGH_H */
