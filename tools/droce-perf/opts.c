/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-perf: the command line. Bad options exit 2 with one line (main prints it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static const char *const op_names[] = {
	[PERF_OP_WRITE] = "write", [PERF_OP_READ] = "read",   [PERF_OP_SEND] = "send",
	[PERF_OP_FADD] = "fadd",   [PERF_OP_CSWAP] = "cswap", [PERF_OP_AWRITE] = "awrite",
};

const char *
perf_op_name(enum perf_op op)
{
	return op_names[op];
}

bool
perf_is_atomic(enum perf_op op)
{
	return op == PERF_OP_FADD || op == PERF_OP_CSWAP || op == PERF_OP_AWRITE;
}

void
perf_usage(FILE *f)
{
	fprintf(f,
		"usage: droce-perf [options] [SERVER_ADDRESS]\n"
		"  perftest-like RDMA benchmark over the droce runtime (DPDK). Without "
		"SERVER_ADDRESS it is\n"
		"  the server and follows the client's options; with it, the client.\n"
		"  -o, --op OP        write | read | send | fadd | cswap | atomic (= fadd) | "
		"awrite\n"
		"                     (ATOMIC WRITE, IBTA 1.5) (default write)\n"
		"  -m, --mode MODE    bw | lat (default bw)\n"
		"  -s, --size N       message bytes, 1..%u (default 65536; atomics: always 8)\n"
		"  -a, --all          sweep 1 B .. 1 MiB, powers of two\n"
		"      --sizes LIST   sweep these sizes, e.g. 8,4096,65536\n"
		"  -n, --iters N      iterations per size (default 1000)\n"
		"  -D, --duration S   seconds per size instead (still bounded by -n if given)\n"
		"  -q, --qps N        queue pairs, 1..%u (bw: round robin; lat uses the first)\n"
		"  -t, --depth N      outstanding WRs per QP in bw mode, 1..1024 (default 64)\n"
		"      --mtu N        RoCE path MTU: 256 512 1024 2048 4096 (default: the "
		"runtime's path_mtu)\n"
		"  -p, --port N       TCP port of the out-of-band exchange (default %u; 0: any, "
		"server)\n"
		"      --port-file F  server: write the bound TCP port to F\n"
		"      --verify       check every byte (send, read, write lat, write bw when the "
		"run fits the\n"
		"                     buffer; else the last write of each slot) and every atomic "
		"return value\n"
		"      --corrupt-for-test  the checking side flips one byte first (verification "
		"must fail)\n"
		"      --timeout-ms N no progress for N ms means the peer is gone (default 10000)\n"
		"      --max-outstanding N  bw client: at most N WRs in flight over all QPs\n"
		"      --buf-mb N     buffer MiB per shard and side (default %u): QPs beyond it "
		"share\n"
		"                     regions (a rate, not a --verify), so 1 and 1000 QPs can "
		"touch the\n"
		"                     same memory\n"
		"  -x, --gid-index N  0: IPv4 GID (default), 1: IPv6 GID\n"
		"      --shard-base K QP i lives on shard (i + K) %% shards (default 0); with the "
		"peer on\n"
		"                     another K its frames arrive on a queue whose shard must hand "
		"them over\n"
		"  -c, --config F     runtime config file (else $DROCE_CONFIG), then DROCE_* "
		"variables\n"
		"  -J, --json         one JSON object on stdout instead of the table\n"
		"  -Q, --quiet        no progress line on stderr\n"
		"      --counters     the runtime's non-zero counters on stderr at the end (this "
		"side)\n"
		"  -h, --help\n"
		"The runtime is configured as usual (pmd-glue/README.md): DROCE_VDEV, DROCE_IPV4, "
		"DROCE_EAL,\n"
		"DROCE_LCORES (one lcore: inline progress; two: the loop on a poll lcore), "
		"DROCE_MTU ...\n"
		"Example over memif (two shells):\n"
		"  DROCE_EAL='--no-huge -m 512 --no-pci' DROCE_LCORES=0 DROCE_IPV4=198.18.0.1/24 "
		"\\\n"
		"    DROCE_VDEV=net_memif0,role=server,socket=/perf.sock droce-perf\n"
		"  DROCE_EAL='--no-huge -m 512 --no-pci' DROCE_LCORES=1 DROCE_IPV4=198.18.0.2/24 "
		"\\\n"
		"    DROCE_VDEV=net_memif0,role=client,socket=/perf.sock droce-perf -o read -a "
		"--verify 127.0.0.1\n"
		"Exit: 0 ok, 1 run or verification failure, 2 bad options.\n",
		PERF_MAX_SIZE, PERF_MAX_QPS, PERF_DEF_PORT, PERF_BUF_MB);
}

static int
num(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || x < lo || x > hi)
		return -EINVAL;
	*v = x;
	return 0;
}

static int
parse_sizes(struct perf_plan *p, const char *s)
{
	char buf[512], *tok, *save = NULL;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	p->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (p->nsizes == PERF_MAX_SIZES || num(tok, 1, PERF_MAX_SIZE, &v) != 0)
			return -EINVAL;
		p->sizes[p->nsizes++] = (uint32_t)v;
	}
	return p->nsizes > 0 ? 0 : -EINVAL;
}

#define BAD(...) \
	do { \
		snprintf(err, errlen, __VA_ARGS__); \
		return -EINVAL; \
	} while (0)

static const char *
value(int argc, char **argv, int *i, char *err, size_t errlen)
{
	if (*i + 1 >= argc) {
		snprintf(err, errlen, "%s needs a value (see --help)", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

static bool
is(const char *a, const char *s, const char *l)
{
	return (s != NULL && strcmp(a, s) == 0) || strcmp(a, l) == 0;
}

int
perf_parse(int argc, char **argv, struct perf_opts *o, char *err, size_t errlen)
{
	struct perf_plan *p = &o->plan;
	bool sweep = false, sizes = false, iters = false;
	const char *a, *v;
	uint64_t x;
	int i;

	memset(o, 0, sizeof(*o));
	p->op = PERF_OP_WRITE;
	p->mode = PERF_MODE_BW;
	p->nsizes = 1;
	p->sizes[0] = 65536;
	p->iters = 1000;
	p->qps = 1;
	p->depth = 64;
	p->timeout_ms = 10000;
	p->buf_mb = PERF_BUF_MB;
	o->port = PERF_DEF_PORT;
	o->server = true;
	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (is(a, "-h", "--help"))
			return 1;
		if (is(a, "-a", "--all")) {
			sweep = true;
			continue;
		}
		if (is(a, NULL, "--verify")) {
			p->verify = 1;
			continue;
		}
		if (is(a, NULL, "--corrupt-for-test")) {
			p->corrupt = 1;
			continue;
		}
		if (is(a, "-J", "--json")) {
			o->json = true;
			continue;
		}
		if (is(a, NULL, "--counters")) {
			o->counters = true;
			continue;
		}
		if (is(a, "-Q", "--quiet")) {
			o->quiet = true;
			continue;
		}
		if (a[0] != '-') {
			if (o->addr != NULL)
				BAD("one server address only ('%s' and '%s')", o->addr, a);
			o->addr = a;
			o->server = false;
			continue;
		}
		if (!is(a, "-o", "--op") && !is(a, "-m", "--mode") && !is(a, "-s", "--size") &&
		    !is(a, NULL, "--sizes") && !is(a, "-n", "--iters") &&
		    !is(a, "-D", "--duration") && !is(a, "-q", "--qps") &&
		    !is(a, "-t", "--depth") && !is(a, NULL, "--mtu") && !is(a, "-p", "--port") &&
		    !is(a, NULL, "--port-file") && !is(a, NULL, "--timeout-ms") &&
		    !is(a, "-x", "--gid-index") && !is(a, "-c", "--config") &&
		    !is(a, NULL, "--shard-base") && !is(a, NULL, "--max-outstanding") &&
		    !is(a, NULL, "--buf-mb"))
			BAD("unknown option '%s' (see --help)", a);
		v = value(argc, argv, &i, err, errlen);
		if (v == NULL)
			return -EINVAL;
		if (is(a, "-o", "--op")) {
			if (strcmp(v, "atomic") == 0)
				v = "fadd";
			for (x = 0; x <= PERF_OP_LAST && strcmp(v, op_names[x]) != 0; x++)
				;
			if (x > PERF_OP_LAST)
				BAD("--op '%s': write, read, send, fadd, cswap or atomic", v);
			p->op = (uint32_t)x;
		} else if (is(a, "-m", "--mode")) {
			if (strcmp(v, "bw") != 0 && strcmp(v, "lat") != 0)
				BAD("--mode '%s': bw or lat", v);
			p->mode = strcmp(v, "bw") == 0 ? PERF_MODE_BW : PERF_MODE_LAT;
		} else if (is(a, "-s", "--size")) {
			if (num(v, 1, PERF_MAX_SIZE, &x) != 0)
				BAD("--size '%s': 1..%u bytes", v, PERF_MAX_SIZE);
			p->sizes[0] = (uint32_t)x;
			p->nsizes = 1;
		} else if (is(a, NULL, "--sizes")) {
			if (parse_sizes(p, v) != 0)
				BAD("--sizes '%s': up to %u comma-separated sizes of 1..%u bytes",
				    v, PERF_MAX_SIZES, PERF_MAX_SIZE);
			sizes = true;
		} else if (is(a, "-n", "--iters")) {
			if (num(v, 1, 1000000000, &x) != 0)
				BAD("--iters '%s': 1..1000000000", v);
			p->iters = x;
			iters = true;
		} else if (is(a, "-D", "--duration")) {
			if (num(v, 1, 3600, &x) != 0)
				BAD("--duration '%s': 1..3600 seconds", v);
			p->duration_ms = (uint32_t)x * 1000;
		} else if (is(a, "-q", "--qps")) {
			if (num(v, 1, PERF_MAX_QPS, &x) != 0)
				BAD("--qps '%s': 1..%u", v, PERF_MAX_QPS);
			p->qps = (uint32_t)x;
		} else if (is(a, "-t", "--depth")) {
			if (num(v, 1, 1024, &x) != 0)
				BAD("--depth '%s': 1..1024", v);
			p->depth = (uint32_t)x;
		} else if (is(a, NULL, "--mtu")) {
			if (num(v, 256, 4096, &x) != 0 || (x & (x - 1)) != 0)
				BAD("--mtu '%s': 256, 512, 1024, 2048 or 4096", v);
			p->mtu = (uint32_t)x;
		} else if (is(a, "-p", "--port")) {
			if (num(v, 0, 65535, &x) != 0)
				BAD("--port '%s': 0..65535", v);
			o->port = (uint16_t)x;
		} else if (is(a, NULL, "--port-file")) {
			o->port_file = v;
		} else if (is(a, NULL, "--timeout-ms")) {
			if (num(v, 100, 600000, &x) != 0)
				BAD("--timeout-ms '%s': 100..600000", v);
			p->timeout_ms = (uint32_t)x;
		} else if (is(a, "-x", "--gid-index")) {
			if (num(v, 0, 1, &x) != 0)
				BAD("--gid-index '%s': 0 or 1", v);
			p->gid_index = (uint32_t)x;
		} else if (is(a, NULL, "--shard-base")) {
			if (num(v, 0, PERF_MAX_QPS - 1, &x) != 0)
				BAD("--shard-base '%s': 0..%u", v, PERF_MAX_QPS - 1);
			o->shard_base = (unsigned int)x;
		} else if (is(a, NULL, "--max-outstanding")) {
			if (num(v, 1, 1u << 30, &x) != 0)
				BAD("--max-outstanding '%s': 1..%u", v, 1u << 30);
			o->max_out = (uint64_t)x;
		} else if (is(a, NULL, "--buf-mb")) {
			if (num(v, 1, 16384, &x) != 0)
				BAD("--buf-mb '%s': 1..16384", v);
			p->buf_mb = (uint32_t)x;
		} else {
			o->config = v;
		}
	}
	if (sweep && sizes)
		BAD("-a and --sizes exclude each other");
	if (sweep) {
		for (p->nsizes = 0; (1u << p->nsizes) <= PERF_MAX_SIZE; p->nsizes++)
			p->sizes[p->nsizes] = 1u << p->nsizes;
	}
	if (p->duration_ms != 0 && !iters)
		p->iters = 1000000000; /* the time bounds the run; still a finite count */
	if (perf_is_atomic(p->op)) {
		p->nsizes = 1;
		p->sizes[0] = 8;
	}
	if (o->server && o->port == 0 && o->port_file == NULL)
		BAD("--port 0 needs --port-file (the client must learn the port)");
	if (!o->server && o->port == 0)
		BAD("--port 0: the client needs the server's port");
	return 0;
}
