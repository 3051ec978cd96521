/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_HOSTADDR_H
#define DROCE_HOSTADDR_H

/*
 * Host-address mode (addr_mode = host): droce uses the kernel interface's own addresses, as an
 * RNIC does. The GID table is the interface's IPv4 and IPv6 addresses and follows
 * `ip addr add/del` (rtnetlink RTM_NEWADDR / RTM_DELADDR); next hops come from the kernel's
 * routing and neighbour tables (RTM_GETROUTE, RTM_GETNEIGH), the kernel asked to resolve a
 * missing one. The kernel keeps ARP/ND, ICMP and TCP; droce takes only UDP 4791.
 * Plain C, no EAL: the verbs shim fills its device's GID table with it before EAL, and the
 * message parsing is unit-tested on crafted messages.
 */
#include <stddef.h>
#include <stdint.h>

enum {
	DROCE_HOST_GIDS = 16, /* DROCE_MAX_GIDS */
	DROCE_HOST_NL_BUF = 16384,
};

/* The GID table: fixed slots, as an RNIC's, so an index keeps its address while it exists;
 * an address removed leaves an empty (all-zero) slot that the next address added takes. */
struct droce_host_gids {
	uint8_t gid[DROCE_HOST_GIDS][16];
	unsigned int n; /* slots up to the last one in use */
};

/* 1: added; 0: already there; -ENOSPC: no free slot. */
int droce_host_gids_add(struct droce_host_gids *t, const uint8_t gid[16]);
/* 1: removed; 0: not there. */
int droce_host_gids_del(struct droce_host_gids *t, const uint8_t gid[16]);

/*
 * Apply a buffer of rtnetlink messages: RTM_NEWADDR / RTM_DELADDR of interface ifindex change
 * the table (link-local IPv6 addresses are left out: a GID carries no scope, and rdma_cm
 * addresses them without one); other messages are skipped. Returns the number of changes, or
 * the -errno of an NLMSG_ERROR message. *done is set when NLMSG_DONE ends a dump.
 */
int droce_host_apply(struct droce_host_gids *t, int ifindex, const void *buf, size_t len,
		     int *done);

/* The interface's addresses now (IPv4 first, then IPv6, in the kernel's order): 0 or -errno. */
int droce_host_dump(int ifindex, struct droce_host_gids *t, char *err, size_t errlen);

/* A non-blocking rtnetlink socket subscribed to IPv4 and IPv6 address changes: fd or -errno.
 * Open it before droce_host_dump() so that no change falls between the two. */
int droce_host_listen(void);

/* Apply what arrived on the listening socket: changes made (0: none), or -errno. After
 * -ENOBUFS (the socket overran and lost changes) the table has been dumped again. */
int droce_host_poll(int fd, int ifindex, struct droce_host_gids *t);

/*
 * MAC of the next hop towards addr (16 bytes, IPv4 as ::ffff:a.b.c.d) out of ifindex, from
 * the kernel: the route gives the next hop (the gateway, or addr on a link), the neighbour
 * table its MAC. A missing or unresolved entry is handed to the kernel to resolve (RTM_NEWNEIGH
 * with NTF_USE: the kernel sends its ARP request or neighbour solicitation, as for a packet of
 * its own, and nothing else goes out), then polled every millisecond until timeout_ms.
 * 0, -EHOSTUNREACH (the kernel's entry FAILED), -ENETUNREACH (no route, or a route through
 * another interface), -ETIMEDOUT, or another -errno; err says which peer and why.
 */
int droce_host_neigh(int ifindex, const uint8_t addr[16], uint8_t mac[6], uint32_t timeout_ms,
		     char *err, size_t errlen);

#endif /* DROCE_HOSTADDR_H */
