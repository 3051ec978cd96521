/* SPDX-License-Identifier: BSD-3-Clause */
/* Neighbour cache: resolution, answers, retries, expiry, waiters. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "droce_neigh.h"
#include "droce_pkt.h"
#include "wire/droce_eth.h"

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t zero16[16];

static bool
is_v4(const uint8_t a[16])
{
	return memcmp(a, v4_mapped, 12) == 0;
}

static bool
same_prefix(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int full = bits / 8, rest = bits % 8;
	uint8_t mask;

	if (memcmp(a, b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	mask = (uint8_t)(0xFF << (8 - rest));
	return ((a[full] ^ b[full]) & mask) == 0;
}

void
droce_neigh_addr_str(const uint8_t addr[16], char *buf, size_t len)
{
	if (is_v4(addr))
		inet_ntop(AF_INET, addr + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, addr, buf, (socklen_t)len);
}

int
droce_neigh_init(struct droce_neigh *n, const struct droce_neigh_conf *conf,
		 const struct droce_neigh_ops *ops)
{
	/* IEEE 802.1Q Table 9-2: VID 4095 is reserved; PCP is 3 bits. */
	if (conf->mac[0] & 1 || ops->tx == NULL || conf->tries == 0 || conf->retry_ns == 0 ||
	    conf->vlan > 4094 || conf->vlan_pcp > 7)
		return -EINVAL;
	memset(n, 0, sizeof(*n));
	n->conf = *conf;
	n->ops = *ops;
	return 0;
}

/* Send a built frame (buffer of DROCE_NEIGH_FRAME_MAX), tagged with our VLAN when we have one:
 * requests, answers and announcements stay on the VLAN RoCE runs on. */
static void
tx(struct droce_neigh *n, uint8_t *frame, uint32_t len, uint64_t *counter)
{
	if (n->conf.vlan != 0)
		len = droce_neigh_vlan_insert(
			frame, len,
			(uint16_t)(n->conf.vlan_pcp << DROCE_VLAN_PCP_SHIFT | n->conf.vlan));
	if (n->ops.tx(n->ops.ctx, frame, len) != 0)
		n->stats.tx_fail++;
	else
		(*counter)++;
}

/* The next hop for addr: itself on our prefix, else the gateway of its family. */
static int
next_hop(const struct droce_neigh *n, const uint8_t addr[16], uint8_t nh[16])
{
	const struct droce_neigh_conf *c = &n->conf;

	if (is_v4(addr)) {
		if (!c->has_ipv4)
			return -EAFNOSUPPORT;
		memcpy(nh, v4_mapped, 12);
		if (same_prefix(addr + 12, c->ipv4, c->ipv4_prefix))
			memcpy(nh + 12, addr + 12, 4);
		else if (c->has_gw4)
			memcpy(nh + 12, c->gw4, 4);
		else
			return -ENETUNREACH;
		return 0;
	}
	if (!c->has_ipv6)
		return -EAFNOSUPPORT;
	if (same_prefix(addr, c->ipv6, c->ipv6_prefix))
		memcpy(nh, addr, 16);
	else if (c->has_gw6)
		memcpy(nh, c->gw6, 16);
	else
		return -ENETUNREACH;
	return 0;
}

static struct droce_neigh_entry *
find(struct droce_neigh *n, const uint8_t addr[16])
{
	unsigned int i;

	for (i = 0; i < DROCE_NEIGH_ENTRIES; i++)
		if (n->ent[i].state != DROCE_NEIGH_FREE && memcmp(n->ent[i].addr, addr, 16) == 0)
			return &n->ent[i];
	return NULL;
}

/* A free slot, else the settled entry closest to its deadline; NULL when all are pending. */
static struct droce_neigh_entry *
alloc(struct droce_neigh *n, const uint8_t addr[16])
{
	struct droce_neigh_entry *e, *victim = NULL;
	unsigned int i;

	for (i = 0; i < DROCE_NEIGH_ENTRIES; i++) {
		e = &n->ent[i];
		if (e->state == DROCE_NEIGH_FREE) {
			victim = e;
			break;
		}
		if (e->state != DROCE_NEIGH_INCOMPLETE &&
		    (victim == NULL || e->deadline_ns < victim->deadline_ns))
			victim = e;
	}
	if (victim == NULL) {
		n->stats.table_full++;
		return NULL;
	}
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->addr, addr, 16);
	return victim;
}

static void
send_request(struct droce_neigh *n, const uint8_t addr[16])
{
	uint8_t f[DROCE_NEIGH_FRAME_MAX], dst[16], mac[6];
	static const uint8_t zmac[6];
	uint32_t len;

	if (is_v4(addr)) {
		len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, n->conf.mac, n->conf.ipv4, zmac,
				      addr + 12);
		tx(n, f, len, &n->stats.arp_req_tx);
		return;
	}
	/* Solicited-node multicast ff02::1:ffXX:XXXX and its MAC 33:33:ff:XX:XX:XX (RFC 4291
	 * 2.7.1, RFC 2464 7). */
	memset(dst, 0, 16);
	dst[0] = 0xff;
	dst[1] = 0x02;
	dst[11] = 0x01;
	dst[12] = 0xff;
	memcpy(dst + 13, addr + 13, 3);
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, dst + 12, 4);
	len = droce_nd_build(f, DROCE_ND_NS, 0, mac, n->conf.mac, n->conf.ipv6, dst, addr);
	tx(n, f, len, &n->stats.ns_tx);
}

static void
notify(struct droce_neigh *n, const uint8_t addr[16], int status, const uint8_t mac[6])
{
	struct droce_neigh_waiter *w;
	unsigned int i;

	for (i = 0; i < DROCE_NEIGH_WAITERS; i++) {
		w = &n->wait[i];
		if (!w->used || memcmp(w->addr, addr, 16) != 0)
			continue;
		w->used = false; /* before the call: the callback may resolve again */
		w->cb(w->arg, status, mac);
	}
}

static void
learn(struct droce_neigh *n, const uint8_t addr[16], const uint8_t mac[6], uint64_t now,
      bool create)
{
	struct droce_neigh_entry *e = find(n, addr);
	bool was_reachable;

	if (e == NULL) {
		if (!create)
			return;
		e = alloc(n, addr);
		if (e == NULL)
			return;
	}
	was_reachable = e->state == DROCE_NEIGH_REACHABLE;
	memcpy(e->mac, mac, 6);
	e->state = DROCE_NEIGH_REACHABLE;
	e->tries = 0;
	e->deadline_ns = now + n->conf.timeout_ns;
	n->stats.learned++;
	if (!was_reachable)
		notify(n, addr, 0, mac);
}

static int
add_waiter(struct droce_neigh *n, const uint8_t nh[16],
	   void (*cb)(void *arg, int status, const uint8_t mac[6]), void *arg)
{
	unsigned int i;

	for (i = 0; i < DROCE_NEIGH_WAITERS; i++)
		if (!n->wait[i].used) {
			n->wait[i].used = true;
			n->wait[i].cb = cb;
			n->wait[i].arg = arg;
			memcpy(n->wait[i].addr, nh, 16);
			return 0;
		}
	n->stats.waiters_full++;
	return -ENOBUFS;
}

int
droce_neigh_resolve(struct droce_neigh *n, const uint8_t addr[16], uint64_t now, uint8_t mac[6],
		    void (*cb)(void *arg, int status, const uint8_t mac[6]), void *arg)
{
	struct droce_neigh_entry *e;
	uint8_t nh[16];
	int rc;

	/* A group has no neighbour to ask: its MAC is derived (RFC 1112 6.4: 01:00:5e and the
	 * low 23 bits; RFC 2464 7: 33:33 and the low 32 bits). */
	if (droce_gid_is_multicast(addr)) {
		if (is_v4(addr) ? !n->conf.has_ipv4 : !n->conf.has_ipv6)
			return -EAFNOSUPPORT;
		droce_gid_mcast_mac(addr, mac);
		return 0;
	}
	rc = next_hop(n, addr, nh);
	if (rc != 0)
		return rc;
	if ((is_v4(nh) && memcmp(nh + 12, n->conf.ipv4, 4) == 0) ||
	    (!is_v4(nh) && memcmp(nh, n->conf.ipv6, 16) == 0)) {
		memcpy(mac, n->conf.mac, 6); /* ourselves: loopback QPs */
		return 0;
	}
	e = find(n, nh);
	if (e != NULL && e->state == DROCE_NEIGH_REACHABLE && e->deadline_ns > now) {
		memcpy(mac, e->mac, 6);
		return 0;
	}
	if (e != NULL && e->state == DROCE_NEIGH_FAILED)
		return -EHOSTUNREACH;
	if (e == NULL || e->state == DROCE_NEIGH_REACHABLE) {
		if (e == NULL)
			e = alloc(n, nh);
		if (e == NULL)
			return -ENOSPC;
		e->state = DROCE_NEIGH_INCOMPLETE;
		e->tries = 1;
		e->deadline_ns = now + n->conf.retry_ns;
		send_request(n, nh);
	}
	if (cb != NULL && add_waiter(n, nh, cb, arg) != 0)
		return -ENOBUFS;
	return -EAGAIN;
}

static void
input_arp(struct droce_neigh *n, const struct droce_neigh_msg *m, uint64_t now)
{
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	bool for_us = n->conf.has_ipv4 && memcmp(m->target_ip + 12, n->conf.ipv4, 4) == 0;
	uint32_t len;

	if (m->op == DROCE_ARP_REQUEST)
		n->stats.arp_req_rx++;
	else
		n->stats.arp_rep_rx++;
	if (n->conf.has_ipv4 && memcmp(m->sender_ip + 12, n->conf.ipv4, 4) == 0) {
		if (memcmp(m->sender_mac, n->conf.mac, 6) != 0)
			n->stats.conflict++; /* someone else claims our address */
		return;
	}
	/* RFC 826 merge: refresh a known sender; add it when the packet is for us. A probe
	 * (sender 0.0.0.0, RFC 5227) teaches nothing. */
	if (memcmp(m->sender_ip + 12, zero16, 4) != 0)
		learn(n, m->sender_ip, m->sender_mac, now, for_us);
	if (m->op != DROCE_ARP_REQUEST || !for_us) {
		if (!for_us)
			n->stats.ignored++;
		return;
	}
	len = droce_arp_build(f, DROCE_ARP_REPLY, m->sender_mac, n->conf.mac, n->conf.ipv4,
			      m->sender_mac, m->sender_ip + 12);
	tx(n, f, len, &n->stats.arp_rep_tx);
}

static void
input_nd(struct droce_neigh *n, const struct droce_neigh_msg *m, uint64_t now)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	bool for_us = n->conf.has_ipv6 && memcmp(m->target_ip, n->conf.ipv6, 16) == 0;
	bool dad = memcmp(m->sender_ip, zero16, 16) == 0;
	uint32_t len;

	if (m->op == DROCE_ND_NA) {
		n->stats.na_rx++;
		if (for_us) {
			if (!m->has_lladdr || memcmp(m->sender_mac, n->conf.mac, 6) != 0)
				n->stats.conflict++;
			return;
		}
		/* RFC 4861 7.2.5: an advertisement updates an entry, never creates one. */
		if (m->has_lladdr)
			learn(n, m->target_ip, m->sender_mac, now, false);
		return;
	}
	n->stats.ns_rx++;
	if (!for_us) {
		n->stats.ignored++;
		return;
	}
	if (dad) {
		/* RFC 4861 7.2.4: answer a DAD probe to all-nodes, not solicited. */
		len = droce_nd_build(f, DROCE_ND_NA, DROCE_NA_OVERRIDE, all_nodes_mac, n->conf.mac,
				     n->conf.ipv6, all_nodes, n->conf.ipv6);
		tx(n, f, len, &n->stats.na_tx);
		return;
	}
	if (m->has_lladdr)
		learn(n, m->sender_ip, m->sender_mac, now, true);
	len = droce_nd_build(f, DROCE_ND_NA, DROCE_NA_SOLICITED | DROCE_NA_OVERRIDE,
			     m->has_lladdr ? m->sender_mac : m->eth_src, n->conf.mac, n->conf.ipv6,
			     m->sender_ip, n->conf.ipv6);
	tx(n, f, len, &n->stats.na_tx);
}

int
droce_neigh_input(struct droce_neigh *n, const uint8_t *frame, uint32_t len, uint64_t now)
{
	struct droce_neigh_msg m;
	int rc = droce_neigh_parse(frame, len, &m);

	if (rc == -EBADMSG) {
		n->stats.csum_bad++;
		return rc;
	}
	if (rc == -ENOENT) {
		n->stats.ignored++;
		return rc;
	}
	if (rc != 0) {
		n->stats.malformed++;
		return rc;
	}
	/* Only our VLAN's neighbours are ours; a priority tag (VID 0, IEEE 802.1Q 9.6) is the
	 * untagged VLAN. */
	if ((m.has_vlan ? m.vlan_tci & DROCE_VLAN_VID_MASK : 0) != n->conf.vlan) {
		n->stats.vlan_other++;
		return -EXDEV;
	}
	if (m.is_arp)
		input_arp(n, &m, now);
	else
		input_nd(n, &m, now);
	return 0;
}

uint64_t
droce_neigh_next_deadline(const struct droce_neigh *n)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < DROCE_NEIGH_ENTRIES; i++)
		if (n->ent[i].state != DROCE_NEIGH_FREE && n->ent[i].deadline_ns < next)
			next = n->ent[i].deadline_ns;
	return next;
}

static void
declare_unreachable(struct droce_neigh *n, struct droce_neigh_entry *e, uint64_t now)
{
	char a[48]; /* INET6_ADDRSTRLEN */

	droce_neigh_addr_str(e->addr, a, sizeof(a));
	snprintf(n->last_err, sizeof(n->last_err),
		 "peer unreachable (no %s from %s after %u "
		 "tries)",
		 is_v4(e->addr) ? "ARP reply" : "Neighbor Advertisement", a, e->tries);
	e->state = DROCE_NEIGH_FAILED;
	e->deadline_ns = now + n->conf.retry_ns * n->conf.tries;
	n->stats.unreachable++;
	notify(n, e->addr, -EHOSTUNREACH, NULL);
}

uint64_t
droce_neigh_timer(struct droce_neigh *n, uint64_t now)
{
	struct droce_neigh_entry *e;
	unsigned int i;

	for (i = 0; i < DROCE_NEIGH_ENTRIES; i++) {
		e = &n->ent[i];
		if (e->state == DROCE_NEIGH_FREE || e->deadline_ns > now)
			continue;
		switch (e->state) {
		case DROCE_NEIGH_REACHABLE:
			e->state = DROCE_NEIGH_FREE;
			n->stats.expired++;
			break;
		case DROCE_NEIGH_INCOMPLETE:
			if (e->tries >= n->conf.tries) {
				declare_unreachable(n, e, now);
				break;
			}
			e->tries++;
			e->deadline_ns = now + n->conf.retry_ns;
			send_request(n, e->addr);
			break;
		default:
			e->state = DROCE_NEIGH_FREE;
			break;
		}
	}
	return droce_neigh_next_deadline(n);
}

void
droce_neigh_announce(struct droce_neigh *n)
{
	static const uint8_t all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
	static const uint8_t all_nodes_mac[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	static const uint8_t zmac[6];
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	uint32_t len;

	if (n->conf.has_ipv4) {
		/* ARP Announcement (RFC 5227 3): a request with sender = target = our address. */
		len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, n->conf.mac, n->conf.ipv4, zmac,
				      n->conf.ipv4);
		tx(n, f, len, &n->stats.garp_tx);
	}
	if (n->conf.has_ipv6) {
		len = droce_nd_build(f, DROCE_ND_NA, DROCE_NA_OVERRIDE, all_nodes_mac, n->conf.mac,
				     n->conf.ipv6, all_nodes, n->conf.ipv6);
		tx(n, f, len, &n->stats.na_tx);
	}
}

void
droce_neigh_flush(struct droce_neigh *n)
{
	struct droce_neigh_entry *e;
	unsigned int i;

	for (i = 0; i < DROCE_NEIGH_ENTRIES; i++) {
		e = &n->ent[i];
		if (e->state != DROCE_NEIGH_REACHABLE && e->state != DROCE_NEIGH_FAILED)
			continue;
		e->state = DROCE_NEIGH_FREE;
		n->stats.flushed++;
	}
}

const char *
droce_neigh_strerror(const struct droce_neigh *n)
{
	return n->last_err;
}
