/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-xdp-addrs: droce's XDP program (droce_xdp.o, loaded by net_af_xdp's xdp_prog= devarg)
 * on an interface, from outside the runtime. Run it in the interface's network namespace.
 *
 *   droce-xdp-addrs [--owner PID] IFACE ADDR...
 *	list droce's own addresses in the program's droce_addrs map, so that ARP and neighbour
 *	discovery for them reach droce while the kernel keeps its own; with --owner, record PID
 *	as the process the program belongs to. The PMD loads the program when the port's Rx
 *	queue is set up and pins nothing: the tool waits (up to DROCE_XDP_WAIT_MS, default
 *	5000) for it to appear on IFACE. Exit 0 once every address is in the map.
 *   droce-xdp-addrs --host --owner PID IFACE
 *	host-address mode (the runtime's addr_mode = host): droce's addresses are the kernel's,
 *	so none is listed (their ARP/ND stays with the kernel, every RoCEv2 datagram goes to
 *	droce); only the owner is recorded, with DROCE_XDP_HOST (droce_xdp.c) set.
 *   droce-xdp-addrs --check [--dry-run] IFACE
 *	may a new droce port load its program on IFACE? Exit 0: no XDP program there, or
 *	droce's own left by a process that is gone (detached now, unless --dry-run; a line on
 *	stdout says which); 3: droce's, of a live process (named); 4: another program (named).
 *   droce-xdp-addrs --release PID IFACE
 *	detach droce's program if PID, gone, owned it (droce-run's watcher at the exit of its
 *	program, which a kill -9 leaves attached: the PMD detaches only on a clean close).
 * A program is droce's by its name (droce_xdp) and its droce_addrs map; its owner is the PID
 * recorded under the all-zero key (droce_xdp.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static const char *me = "droce-xdp-addrs";

/* The XDP program on an interface, and what the tool needs of it. */
struct xdp_on {
	__u32 id;	 /* 0: none */
	__u32 mode_flag; /* XDP_FLAGS_DRV_MODE / _SKB_MODE / _HW_MODE it is attached in */
	int prog_fd;
	char name[BPF_OBJ_NAME_LEN];
	int map_fd; /* its droce_addrs map, or -1: not droce's */
};

static void
xdp_on_close(struct xdp_on *x)
{
	if (x->prog_fd >= 0)
		close(x->prog_fd);
	if (x->map_fd >= 0)
		close(x->map_fd);
	x->prog_fd = x->map_fd = -1;
}

/* 0 and x filled (x->id 0 when the interface has no program), or -1. */
static int
xdp_look(int ifindex, struct xdp_on *x)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info pi;
	struct bpf_map_info mi;
	__u32 ids[16], len, i;
	int fd;

	memset(x, 0, sizeof(*x));
	x->prog_fd = x->map_fd = -1;
	if (bpf_xdp_query(ifindex, 0, &q) != 0)
		return -1;
	x->id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id ? q.skb_prog_id : q.hw_prog_id;
	x->mode_flag = q.drv_prog_id ? XDP_FLAGS_DRV_MODE :
		       q.skb_prog_id ? XDP_FLAGS_SKB_MODE :
				       XDP_FLAGS_HW_MODE;
	if (x->id == 0)
		return 0;
	x->prog_fd = bpf_prog_get_fd_by_id(x->id);
	if (x->prog_fd < 0)
		return -1;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = 16;
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(x->prog_fd, &pi, &len) != 0)
		return -1;
	memcpy(x->name, pi.name, sizeof(x->name));
	x->name[sizeof(x->name) - 1] = '\0';
	if (strcmp(x->name, "droce_xdp") != 0)
		return 0;
	for (i = 0; i < pi.nr_map_ids && i < 16; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		len = sizeof(mi);
		if (bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 &&
		    strcmp(mi.name, "droce_addrs") == 0 && mi.key_size == 16) {
			x->map_fd = fd;
			return 0;
		}
		close(fd);
	}
	return 0;
}

/* The owner's value's flag: host-address mode, the list left incomplete (droce_xdp.c). */
#define DROCE_XDP_HOST 0x80000000u

/* The owner recorded in droce's map, 0 if none (yet). */
static __u32
owner_of(const struct xdp_on *x)
{
	unsigned char key[16] = { 0 };
	__u32 pid = 0;

	if (bpf_map_lookup_elem(x->map_fd, key, &pid) != 0)
		return 0;
	return pid & ~DROCE_XDP_HOST;
}

static bool
alive(__u32 pid)
{
	return pid != 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Detach exactly x's program (XDP_FLAGS_REPLACE: not one attached since). */
static int
detach(int ifindex, const struct xdp_on *x)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = x->prog_fd);

	return bpf_xdp_detach(ifindex, x->mode_flag, &o);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int
check(int ifindex, const char *ifname, bool dry)
{
	struct xdp_on x;
	__u32 pid = 0;
	int i, rc = 0;

	if (xdp_look(ifindex, &x) != 0) {
		fprintf(stderr, "%s: cannot read the XDP program on %s: %s\n", me, ifname,
			strerror(errno));
		xdp_on_close(&x);
		return 1;
	}
	if (x.id == 0)
		return 0;
	if (x.map_fd < 0) {
		printf("program %u '%s'\n", x.id, x.name);
		xdp_on_close(&x);
		return 4;
	}
	/* A port that has just loaded it records its owner within milliseconds (droce-run's
	 * watcher polls every 50): give it a second before calling the program a leftover. */
	for (i = 0; i < 20 && (pid = owner_of(&x)) == 0; i++)
		sleep_ms(50);
	if (alive(pid)) {
		printf("program %u of droce process %u\n", x.id, pid);
		rc = 3;
	} else if (dry) {
		printf("would detach droce's program %u, left by %s\n", x.id,
		       pid != 0 ? "a process that is gone" :
				  "a process that never recorded itself");
	} else if (detach(ifindex, &x) != 0) {
		fprintf(stderr, "%s: detaching droce's leftover program %u from %s: %s\n", me, x.id,
			ifname, strerror(errno));
		rc = 1;
	} else {
		printf("detached droce's program %u, left by %s %u\n", x.id,
		       pid != 0 ? "process" : "a process that never recorded itself, owner", pid);
	}
	xdp_on_close(&x);
	return rc;
}

static int
release(int ifindex, __u32 pid)
{
	struct xdp_on x;
	int rc = 0;

	if (xdp_look(ifindex, &x) == 0 && x.map_fd >= 0 && owner_of(&x) == pid && !alive(pid))
		rc = detach(ifindex, &x) == 0 ? 0 : 1;
	xdp_on_close(&x);
	return rc;
}

static int
list_addrs(const char *ifname, __u32 owner, bool host, char **addrs, int n)
{
	const char *w = getenv("DROCE_XDP_WAIT_MS");
	long wait_ms = w != NULL ? atol(w) : 5000;
	unsigned char key[16];
	__u32 one = 1;
	struct xdp_on x = { .prog_fd = -1, .map_fd = -1 };
	int i, ifindex = 0;

	for (; wait_ms >= 0; wait_ms--) {
		if (ifindex == 0)
			ifindex = (int)if_nametoindex(ifname);
		if (ifindex != 0 && xdp_look(ifindex, &x) == 0 && x.map_fd >= 0)
			break;
		xdp_on_close(&x);
		sleep_ms(1);
	}
	if (x.map_fd < 0) {
		fprintf(stderr,
			"%s: no XDP program with a droce_addrs map on %s (load droce_xdp.o "
			"with net_af_xdp's xdp_prog= devarg first)\n",
			me, ifname);
		return 1;
	}
	for (i = 0; i < n; i++) {
		memset(key, 0, sizeof(key));
		if (inet_pton(AF_INET, addrs[i], key + 12) == 1) {
			key[10] = 0xff; /* ::ffff:a.b.c.d, as in the GID table */
			key[11] = 0xff;
		} else if (inet_pton(AF_INET6, addrs[i], key) != 1) {
			fprintf(stderr, "%s: '%s' is not an IPv4 or IPv6 address\n", me, addrs[i]);
			xdp_on_close(&x);
			return 2;
		}
		if (bpf_map_update_elem(x.map_fd, key, &one, BPF_ANY) != 0)
			goto fail;
	}
	/* "::" last: the list is complete (RoCEv2 to any other address is the kernel's), its
	 * value the owner's PID (0: none recorded); in host mode the owner alone */
	memset(key, 0, sizeof(key));
	if (host)
		owner |= DROCE_XDP_HOST;
	if (bpf_map_update_elem(x.map_fd, key, &owner, BPF_ANY) != 0)
		goto fail;
	xdp_on_close(&x);
	return 0;
fail:
	fprintf(stderr, "%s: map update on %s: %s\n", me, ifname, strerror(errno));
	xdp_on_close(&x);
	return 1;
}

static int
usage(void)
{
	fprintf(stderr,
		"usage: %s [--owner PID] IFACE ADDR... (droce's IPv4 or IPv6 addresses)\n"
		"       %s --host --owner PID IFACE (host-address mode: no address listed)\n"
		"       %s --check [--dry-run] IFACE\n"
		"       %s --release PID IFACE\n",
		me, me, me, me);
	return 2;
}

int
main(int argc, char **argv)
{
	bool host = argc > 1 && strcmp(argv[1], "--host") == 0;
	bool is_check, is_release, dry = false;
	__u32 pid = 0;
	int ifindex, a = 1;

	if (host) {
		argv++;
		argc--;
	}
	is_check = strcmp(argv[argc > 1 ? 1 : 0], "--check") == 0;
	is_release = strcmp(argv[argc > 1 ? 1 : 0], "--release") == 0;
	if (argc < 3 || (host && (is_check || is_release || strcmp(argv[1], "--owner") != 0)))
		return usage();
	if (is_check) {
		a = 2;
		if (strcmp(argv[a], "--dry-run") == 0) {
			dry = true;
			a++;
		}
	} else if (is_release || strcmp(argv[1], "--owner") == 0) {
		pid = (__u32)strtoul(argv[2], NULL, 10);
		a = 3;
		if (pid == 0)
			return usage();
	}
	if (host)
		return argc == a + 1 ? list_addrs(argv[a], pid, true, NULL, 0) : usage();
	if (!is_check && !is_release)
		return argc >= a + 2 ? list_addrs(argv[a], pid, false, argv + a + 1, argc - a - 1) :
				       usage();
	if (argc != a + 1)
		return usage();
	ifindex = (int)if_nametoindex(argv[a]);
	if (ifindex == 0) {
		fprintf(stderr, "%s: no interface %s here\n", me, argv[a]);
		return 1;
	}
	return is_check ? check(ifindex, argv[a], dry) : release(ifindex, pid);
}
