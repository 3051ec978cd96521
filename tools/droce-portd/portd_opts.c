/* SPDX-License-Identifier: BSD-3-Clause */
#include "portd_opts.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_portd.h"
#include "droce_portd_proto.h"

static void
usage(const char *me)
{
	printf("usage: %s (--iface IFACE | --vdev SPEC) --ip A.B.C.D/P [options]\n"
	       "Owns the port and shares it with droce programs on this host: each finds the\n"
	       "service at its control socket, gets a QPN range and a memif, and runs its own\n"
	       "engine; it falls back to owning a port itself when no service answers.\n"
	       "  --iface IFACE       a kernel interface, through net_af_packet\n"
	       "  --vdev SPEC         any DPDK virtual device instead (its name up to the first "
	       "',')\n"
	       "  --ip A.B.C.D/P      the port's address (ARP answered here)\n"
	       "  --gw A.B.C.D        the programs' gateway\n"
	       "  --mtu N             Ethernet MTU (default: the port's)\n"
	       "  --socket PATH       control socket (default %s; programs: DROCE_PORTD)\n"
	       "  --memif-socket NAME the programs' memif socket (default: PATH.memif, abstract)\n"
	       "  --programs N        program slots, 1..31 (default 7); QPN top bits follow\n"
	       "  --eal 'WORDS'       EAL words (default '--no-huge -m 256 --no-pci "
	       "--no-telemetry')\n"
	       "  --idle-spins N, --idle-sleep-us N   idle back-off (default 2000, 20)\n"
	       "Stops on SIGTERM/SIGINT and prints its counters.\n",
	       me, DROCE_PORTD_SOCK);
}

static int
bad(const char *what, const char *v)
{
	fprintf(stderr, "droce-portd: %s '%s'\n", what, v);
	return -1;
}

int
portd_opts_parse(struct portd_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", 1, NULL, 'i' },
		{ "vdev", 1, NULL, 'v' },
		{ "ip", 1, NULL, 'a' },
		{ "gw", 1, NULL, 'g' },
		{ "mtu", 1, NULL, 'm' },
		{ "socket", 1, NULL, 's' },
		{ "memif-socket", 1, NULL, 'M' },
		{ "programs", 1, NULL, 'n' },
		{ "eal", 1, NULL, 'e' },
		{ "idle-spins", 1, NULL, 'S' },
		{ "idle-sleep-us", 1, NULL, 'U' },
		{ "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *slash, *end;
	unsigned long v;
	bool has_ip = false;
	int c;

	memset(o, 0, sizeof(*o));
	snprintf(o->sock, sizeof(o->sock), "%s", DROCE_PORTD_SOCK);
	snprintf(o->eal, sizeof(o->eal), "--no-huge -m 256 --no-pci --no-telemetry");
	o->slot_bits = 3;
	o->idle_spins = 2000;
	o->idle_sleep_us = 20;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			snprintf(o->vdev, sizeof(o->vdev), "net_af_packet0,iface=%s", optarg);
			break;
		case 'v':
			snprintf(o->vdev, sizeof(o->vdev), "%s", optarg);
			break;
		case 'a':
			slash = strchr(optarg, '/');
			if (slash == NULL)
				return bad("--ip: expected A.B.C.D/P, got", optarg);
			*slash = '\0';
			v = strtoul(slash + 1, &end, 10);
			if (inet_pton(AF_INET, optarg, o->ipv4) != 1 || *end != '\0' || v < 1 ||
			    v > 32)
				return bad("--ip: expected A.B.C.D/P, got", optarg);
			o->ipv4_prefix = (uint8_t)v;
			has_ip = true;
			break;
		case 'g':
			if (inet_pton(AF_INET, optarg, o->gw4) != 1)
				return bad("--gw: expected A.B.C.D, got", optarg);
			break;
		case 'm':
			v = strtoul(optarg, &end, 10);
			if (*end != '\0' || v < 576 || v > 9702)
				return bad("--mtu: expected 576..9702, got", optarg);
			o->mtu = (uint32_t)v;
			break;
		case 's':
			if (strlen(optarg) >= sizeof(o->sock) - 6)
				return bad("--socket: too long", optarg);
			snprintf(o->sock, sizeof(o->sock), "%s", optarg);
			break;
		case 'M':
			snprintf(o->memif_sock, sizeof(o->memif_sock), "%s", optarg);
			break;
		case 'n':
			v = strtoul(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v >= (1u << DROCE_PORTD_MAX_BITS))
				return bad("--programs: expected 1..31, got", optarg);
			for (o->slot_bits = 1; (1ul << o->slot_bits) < v + 1; o->slot_bits++)
				;
			break;
		case 'e':
			snprintf(o->eal, sizeof(o->eal), "%s", optarg);
			break;
		case 'S':
			o->idle_spins = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'U':
			o->idle_sleep_us = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(argv[0]);
			return 1;
		default:
			usage(argv[0]);
			return -1;
		}
	}
	if (optind != argc)
		return bad("unexpected argument", argv[optind]);
	if (o->vdev[0] == '\0' || !has_ip) {
		fprintf(stderr, "droce-portd: give the port (--iface IFACE or --vdev SPEC) and its "
				"address (--ip A.B.C.D/P); --help for more\n");
		return -1;
	}
	snprintf(o->port_name, sizeof(o->port_name), "%.*s", (int)strcspn(o->vdev, ","), o->vdev);
	if (o->memif_sock[0] == '\0')
		snprintf(o->memif_sock, sizeof(o->memif_sock), "%.100s.memif", o->sock);
	return 0;
}

static int
word(char **argv, int *argc, char **p, char *end, const char *fmt, const char *s, unsigned int u)
{
	int n;

	if (*argc >= PORTD_EAL_ARGS - 1)
		return -E2BIG;
	n = snprintf(*p, (size_t)(end - *p), fmt, s, u);
	if (n < 0 || n >= end - *p)
		return -E2BIG;
	argv[(*argc)++] = *p;
	*p += n + 1;
	return 0;
}

int
portd_opts_eal(const struct portd_opts *o, const char *argv0, char **argv, char *buf, size_t len)
{
	char *p = buf, *end = buf + len, words[512], *w, *save = NULL;
	bool prefix = false, cores = false;
	unsigned int s;
	int argc = 0, rc;

	rc = word(argv, &argc, &p, end, "%s%.0u", argv0, 0);
	snprintf(words, sizeof(words), "%s", o->eal);
	for (w = strtok_r(words, " \t", &save); rc == 0 && w != NULL;
	     w = strtok_r(NULL, " \t", &save)) {
		prefix |= strncmp(w, "--file-prefix", 13) == 0 || strcmp(w, "--in-memory") == 0;
		cores |= strcmp(w, "-l") == 0 || strncmp(w, "--lcores", 8) == 0 ||
			 strcmp(w, "-c") == 0;
		rc = word(argv, &argc, &p, end, "%s%.0u", w, 0);
	}
	if (rc == 0 && !prefix)
		rc = word(argv, &argc, &p, end, "--file-prefix=droce-portd-%s%u", "",
			  (unsigned int)getpid());
	if (rc == 0 && !cores)
		rc = word(argv, &argc, &p, end, "-l%s%u", "", 0);
	if (rc == 0)
		rc = word(argv, &argc, &p, end, "--vdev=%s%.0u", o->vdev, 0);
	for (s = 1; rc == 0 && s < (1u << o->slot_bits); s++) {
		char spec[200];

		snprintf(spec, sizeof(spec), "net_memif%u,role=server,socket=%s,id=", s,
			 o->memif_sock);
		rc = word(argv, &argc, &p, end, "--vdev=%s%u", spec, s);
	}
	argv[argc] = NULL;
	return rc == 0 ? argc : rc;
}
