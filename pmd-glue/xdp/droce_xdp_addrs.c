/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-xdp-addrs IFACE ADDR...: list droce's own addresses in the droce_addrs map of the XDP
 * program on IFACE (droce_xdp.o, loaded by net_af_xdp's xdp_prog= devarg), so that ARP and
 * neighbour discovery for them reach droce while the kernel keeps its own. The PMD loads the
 * program when the port's Rx queue is set up and pins nothing: the tool waits (up to
 * DROCE_XDP_WAIT_MS, default 5000) for a program holding that map to appear on IFACE.
 * Run it in the interface's network namespace. Exit 0 once every address is in the map.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* fd of the map named droce_addrs used by the XDP program on ifindex, or -1 */
static int
find_map(int ifindex)
{
	struct bpf_prog_info pi;
	struct bpf_map_info mi;
	__u32 prog_id = 0, ids[16], len, i;
	int pfd, fd;

	if (bpf_xdp_query_id(ifindex, 0, &prog_id) != 0 || prog_id == 0)
		return -1;
	pfd = bpf_prog_get_fd_by_id(prog_id);
	if (pfd < 0)
		return -1;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 16;
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(pfd, &pi, &len) != 0) {
		close(pfd);
		return -1;
	}
	close(pfd);
	for (i = 0; i < pi.nr_map_ids && i < 16; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 &&
		    strcmp(mi.name, "droce_addrs") == 0 && mi.key_size == 16)
			return fd;
		close(fd);
	}
	return -1;
}

int
main(int argc, char **argv)
{
	const char *w = getenv("DROCE_XDP_WAIT_MS");
	long wait_ms = w != NULL ? atol(w) : 5000;
	struct timespec ms = { .tv_nsec = 1000000 };
	unsigned char key[16];
	__u8 one = 1;
	int i, fd = -1, ifindex = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s IFACE ADDR... (IPv4 or IPv6 addresses of droce)\n",
			argv[0]);
		return 2;
	}
	for (; wait_ms >= 0 && fd < 0; wait_ms--) {
		if (ifindex == 0)
			ifindex = (int)if_nametoindex(argv[1]);
		if (ifindex != 0)
			fd = find_map(ifindex);
		if (fd < 0)
			nanosleep(&ms, NULL);
	}
	if (fd < 0) {
		fprintf(stderr, "%s: no XDP program with a droce_addrs map on %s (load droce_xdp.o "
			"with net_af_xdp's xdp_prog= devarg first)\n", argv[0], argv[1]);
		return 1;
	}
	for (i = 2; i < argc; i++) {
		memset(key, 0, sizeof(key));
		if (inet_pton(AF_INET, argv[i], key + 12) == 1) {
			key[10] = 0xff;		/* ::ffff:a.b.c.d, as in the GID table */
			key[11] = 0xff;
		} else if (inet_pton(AF_INET6, argv[i], key) != 1) {
			fprintf(stderr, "%s: '%s' is not an IPv4 or IPv6 address\n", argv[0],
				argv[i]);
			return 2;
		}
		if (bpf_map_update_elem(fd, key, &one, BPF_ANY) != 0) {
			fprintf(stderr, "%s: map update for %s: %s\n", argv[0], argv[i],
				strerror(errno));
			return 1;
		}
	}
	/* "::" last: the list is complete, RoCEv2 to any other address is the kernel's */
	memset(key, 0, sizeof(key));
	if (bpf_map_update_elem(fd, key, &one, BPF_ANY) != 0) {
		fprintf(stderr, "%s: map update: %s\n", argv[0], strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}
