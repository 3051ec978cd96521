// SPDX-License-Identifier: BSD-3-Clause
/*
 * XDP program for net_af_xdp (devarg xdp_prog=droce_xdp.o): only droce's traffic goes to the
 * AF_XDP socket, the kernel keeps the rest of the interface (its own ARP, ICMP, TCP).
 *
 * Redirected into xsks_map (key: Rx queue index, the layout DPDK's af_xdp PMD fills):
 * - UDP destination port 4791 (RoCEv2) over IPv4 or IPv6, with at most one 802.1Q tag, to one
 *   of droce's addresses or to a multicast group, never to broadcast (the engine would drop it
 *   as DST_MAC / DST_IP: the kernel keeps it). Until droce_addrs is complete (its "::" key,
 *   written last by droce-xdp-addrs) every destination address goes to droce;
 * - ARP whose target protocol address, and ICMPv6 neighbour solicitations whose target (or
 *   advertisements whose IPv6 destination), is one of droce's own addresses listed in
 *   droce_addrs (::ffff:a.b.c.d for IPv4, as in the GID table). droce resolves its peers
 *   itself; an empty map leaves all neighbour discovery to the kernel.
 * Everything else: XDP_PASS. In host-address mode (addr_mode = host) the map holds no address:
 * all UDP 4791 goes to droce, all ARP/ND and the rest to the kernel.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

enum {
	DROCE_UDP_PORT = 4791,
	DROCE_ETH_P_8021Q = 0x8100,
	DROCE_IPPROTO_ICMPV6 = 58,
	DROCE_ND_NS = 135, /* ICMPv6 neighbour solicitation (RFC 4861 4.3) */
	DROCE_ND_NA = 136, /* neighbour advertisement (RFC 4861 4.4) */
};

/* Verdict when no AF_XDP socket is bound to the queue: the kernel gets the frame. The verdict
 * test builds the program with XDP_DROP here to tell "redirected" from "passed". */
#ifndef DROCE_XDP_NO_XSK
#define DROCE_XDP_NO_XSK XDP_PASS
#endif

struct droce_xdp_addr {
	__u8 a[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* droce's addresses (any value). The entry for :: (all zero: nobody's address, and no ARP
 * or ND key is ever all zero) is written last: it says the list is complete, and holds the PID
 * of the process whose port loaded the program (0: none recorded), so that a later droce-run
 * can tell a leftover of a dead process (droce-xdp-addrs --check). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, struct droce_xdp_addr);
	__type(value, __u32);
} droce_addrs SEC(".maps");

static __always_inline int
to_xsk(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, DROCE_XDP_NO_XSK);
}

static __always_inline int
ours(const struct droce_xdp_addr *k)
{
	return bpf_map_lookup_elem(&droce_addrs, k) != NULL;
}

/* The map lists all of droce's addresses ("::", never a destination, is its last key). In
 * host-address mode droce's addresses are the kernel's, whose ARP/ND the kernel keeps: the map
 * lists none, and "::" only records the owner, its value's DROCE_XDP_HOST bit set, leaving the
 * list incomplete so that every RoCEv2 datagram goes to droce. */
#define DROCE_XDP_HOST 0x80000000u

static __always_inline int
addrs_complete(void)
{
	struct droce_xdp_addr z = { 0 };
	__u32 *v = bpf_map_lookup_elem(&droce_addrs, &z);

	return v != NULL && !(*v & DROCE_XDP_HOST);
}

/* A RoCEv2 datagram to dst (a group's address when group): droce's only when addressed to it,
 * as the engine's receive checks (stack/droce_rx_addr.h) have it. */
static __always_inline int
roce(struct xdp_md *ctx, const __u8 *dmac, const struct droce_xdp_addr *dst, int group)
{
	/* Annex A17.4: never broadcast */
	if ((dmac[0] & dmac[1] & dmac[2] & dmac[3] & dmac[4] & dmac[5]) == 0xff)
		return XDP_PASS;
	if (group || ours(dst) || !addrs_complete())
		return to_xsk(ctx);
	return XDP_PASS; /* another address on this interface: the kernel's */
}

SEC("xdp")
int
droce_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct droce_xdp_addr k = { 0 };
	__u8 *p = data;
	__u16 proto;
	__u32 off = 14;

	if (p + 18 > (__u8 *)end)
		return XDP_PASS;
	proto = (__u16)(p[12] << 8 | p[13]);
	if (proto == DROCE_ETH_P_8021Q) {
		proto = (__u16)(p[16] << 8 | p[17]);
		off = 18;
	}
	p += off;
	if (proto == ETH_P_IP) {
		__u32 ihl;

		if (p + 20 > (__u8 *)end)
			return XDP_PASS;
		k.a[10] = 0xff; /* the destination as ::ffff:a.b.c.d */
		k.a[11] = 0xff;
		__builtin_memcpy(k.a + 12, p + 16, 4);
		ihl = (p[0] & 0xf) * 4u;
		/* not a first fragment: no UDP header to look at */
		if (p[9] != IPPROTO_UDP || ihl < 20 || ((p[6] & 0x1f) | p[7]) != 0)
			return XDP_PASS;
		if (ihl > 60)
			return XDP_PASS;
		p += ihl;
		if (p + 8 > (__u8 *)end)
			return XDP_PASS;
		if ((p[2] << 8 | p[3]) != DROCE_UDP_PORT)
			return XDP_PASS;
		return roce(ctx, data, &k, (k.a[12] & 0xf0) == 0xe0); /* 224.0.0.0/4 */
	}
	if (proto == ETH_P_IPV6) {
		if (p + 40 + 8 > (__u8 *)end)
			return XDP_PASS;
		/* no extension headers: droce sends none */
		if (p[6] == IPPROTO_UDP) {
			if ((p[42] << 8 | p[43]) != DROCE_UDP_PORT)
				return XDP_PASS;
			__builtin_memcpy(k.a, p + 24, 16);	   /* IPv6 destination */
			return roce(ctx, data, &k, p[24] == 0xff); /* ff00::/8 */
		}
		if (p[6] != DROCE_IPPROTO_ICMPV6 || (p[40] != DROCE_ND_NS && p[40] != DROCE_ND_NA))
			return XDP_PASS;
		if (p[40] == DROCE_ND_NA) {
			__builtin_memcpy(k.a, p + 24, 16); /* IPv6 destination */
		} else {
			if (p + 40 + 24 > (__u8 *)end)
				return XDP_PASS;
			__builtin_memcpy(k.a, p + 48, 16); /* NS target */
		}
		return ours(&k) ? to_xsk(ctx) : XDP_PASS;
	}
	if (proto == ETH_P_ARP) {
		/* Ethernet/IPv4 ARP: target protocol address at offset 24 */
		if (p + 28 > (__u8 *)end || p[4] != 6 || p[5] != 4)
			return XDP_PASS;
		k.a[10] = 0xff;
		k.a[11] = 0xff;
		__builtin_memcpy(k.a + 12, p + 24, 4);
		return ours(&k) ? to_xsk(ctx) : XDP_PASS;
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
