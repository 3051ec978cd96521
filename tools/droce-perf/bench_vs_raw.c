/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-bench-perf: droce-perf next to the raw memif baseline (droce-rawpp) in one run, same
 * machine, same cores (server lcore 0, client lcore 1, --no-huge):
 *   latency   rawpp 64 B ping-pong p50/p99  vs  droce-perf write lat 8 B p50/p99
 *             (client inline, and the client's loop on a poll lcore)
 *   bandwidth rawpp 1518 B frames Gbit/s    vs  droce-perf write bw 64 KiB Gbit/s (goodput)
 *   shards    droce-perf write bw 64 B, 4 QPs, message rate: 1 shard vs 2 shards a side (both
 *             inline), and 2 shards with the client's on poll lcores floating over CPUs 0-1
 * three times interleaved, and prints the medians and ratios. A measurement, not a test: it
 * fails only when a run does.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "droce_bench_c2c.h"

#ifndef PERF_EXE
#define PERF_EXE "droce-perf"
#endif
#ifndef RAWPP_EXE
#define RAWPP_EXE "droce-rawpp"
#endif

enum { BOUND_S = 60, MAX_ARGS = 32 };

struct side {
	const char *argv[MAX_ARGS];
	const char *env[8]; /* NAME=value */
	char out[160];	    /* stdout + stderr go here */
};

static pid_t
spawn(struct side *s)
{
	char *av[MAX_ARGS] = { NULL };
	pid_t p = fork();
	unsigned int i;

	if (p != 0)
		return p;
	/* the child's own copies: exec and putenv take non-const strings */
	for (i = 0; i < MAX_ARGS - 1 && s->argv[i] != NULL; i++)
		av[i] = strdup(s->argv[i]);
	if (freopen(s->out, "w", stdout) == NULL || dup2(fileno(stdout), 2) < 0)
		_exit(126);
	for (i = 0; s->env[i] != NULL; i++)
		putenv(strdup(s->env[i]));
	alarm(BOUND_S);
	execv(av[0], av);
	_exit(127);
}

static int
reap(pid_t p)
{
	int st = 0;

	if (waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The number after the first occurrence of key in file, or -1. */
static double
find(const char *file, const char *key)
{
	static char buf[1 << 16];
	FILE *f = fopen(file, "r");
	size_t n;
	char *p;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, key);
	return p != NULL ? strtod(p + strlen(key), NULL) : -1;
}

static void
dump(const char *file)
{
	char line[512];
	FILE *f = fopen(file, "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		fprintf(stderr, "  | %s", line);
	if (f != NULL)
		fclose(f);
}

static int
pair(struct side *srv, struct side *cli, const char *port_file)
{
	char port[16] = "", arg[32];
	pid_t ps, pc;
	unsigned int i;
	int rs, rcl;
	FILE *f;

	if (port_file != NULL)
		unlink(port_file);
	ps = spawn(srv);
	if (ps < 0)
		return -1;
	for (i = 0; i < 100; i++) { /* the server's port (droce-perf) or its memif socket */
		usleep(100000);
		if (port_file == NULL && i >= 10)
			break;
		f = port_file != NULL ? fopen(port_file, "r") : NULL;
		if (f != NULL && fgets(port, sizeof(port), f) != NULL && port[0] != '\0') {
			fclose(f);
			break;
		}
		if (f != NULL)
			fclose(f);
	}
	if (port_file != NULL) {
		snprintf(arg, sizeof(arg), "%d", atoi(port));
		for (i = 0; cli->argv[i] != NULL; i++)
			if (strcmp(cli->argv[i], "PORT") == 0)
				cli->argv[i] = arg;
	}
	pc = spawn(cli);
	rcl = reap(pc);
	rs = reap(ps);
	if (rcl != 0 || rs != 0) {
		fprintf(stderr, "droce-bench-perf: %s exited %d, %s exited %d\n", cli->argv[0], rcl,
			srv->argv[0], rs);
		dump(srv->out);
		dump(cli->out);
		return -1;
	}
	return 0;
}

static void
rawpp_side(struct side *s, bool server, const char *vdev, const char *mode, const char *size,
	   const char *count_opt, const char *count, const char *out)
{
	const char *a[] = { RAWPP_EXE,	"--no-huge",   "-m",	 "128",
			    "--no-pci", "--no-shconf", "-l",	 server ? "0" : "1",
			    vdev,	"--",	       "--role", server ? "server" : "client",
			    "--mode",	mode,	       "--size", size,
			    count_opt,	count,	       NULL };

	memset(s, 0, sizeof(*s));
	memcpy(s->argv, a, sizeof(a));
	snprintf(s->out, sizeof(s->out), "%s", out);
}

static void
perf_side(struct side *s, bool server, const char *sock, const char *lcores, const char *out,
	  const char *const *args)
{
	static char vdev[2][128], lc[2][32];
	unsigned int i = 0, k = server ? 0 : 1;

	memset(s, 0, sizeof(*s));
	s->argv[i++] = PERF_EXE;
	while (*args != NULL && i < MAX_ARGS - 1)
		s->argv[i++] = *args++;
	snprintf(vdev[k], sizeof(vdev[k]), "DROCE_VDEV=net_memif0,role=%s,socket=%s",
		 server ? "server" : "client", sock);
	snprintf(lc[k], sizeof(lc[k]), "DROCE_LCORES=%s", lcores);
	s->env[0] = "DROCE_EAL=--no-huge -m 512 --no-pci";
	s->env[1] = server ? "DROCE_IPV4=198.18.0.1/24" : "DROCE_IPV4=198.18.0.2/24";
	s->env[2] = vdev[k];
	s->env[3] = lc[k];
	snprintf(s->out, sizeof(s->out), "%s", out);
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_d);
	return v[n / 2];
}

enum {
	REPS = 3,
	M_RAW_P50,
	M_RAW_P99,
	M_RAW_GBPS,
	M_LAT_P50,
	M_LAT_P99,
	M_LCORE_P50,
	M_LCORE_P99,
	M_BW,
	M_SH1,
	M_SH2,
	M_SH2_LCORE,
	M_C2C0,
	M_C2C1,
	M_C2C2,
	M_N
};

/* The probes around a pair of runs, as a tag: both CPUs sharing a cache, neither, or moved. */
static const char *
placement(double before, double after)
{
	bool a = before >= 0 && before < DROCE_BENCH_C2C_NEAR_NS;
	bool b = after >= 0 && after < DROCE_BENCH_C2C_NEAR_NS;

	if (before < 0 || after < 0)
		return "?";
	return a && b ? "near" : !a && !b ? "far" : "moved";
}

int
main(void)
{
	char dir[] = "/tmp/droce-bench-perf.XXXXXX", so[160], co[160], pf[160], sock[64];
	char vd_s[128], vd_c[128];
	static double m[M_N][REPS];
	struct side s, c;
	const char *srv_args[] = { "-p", "0", "--port-file", pf, "-Q", NULL };
	double v[M_N];
	int k, r, i;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(so, sizeof(so), "%s/server.out", dir);
	snprintf(co, sizeof(co), "%s/client.out", dir);
	snprintf(pf, sizeof(pf), "%s/port", dir);
	snprintf(sock, sizeof(sock), "/droce-bench-perf-%d", (int)getpid());
	snprintf(vd_s, sizeof(vd_s), "--vdev=net_memif0,role=server,socket=%s-raw", sock);
	snprintf(vd_c, sizeof(vd_c), "--vdev=net_memif0,role=client,socket=%s-raw", sock);

	/* raw and droce runs interleaved, REPS times, medians: the machine's load drifts */
	for (r = 0; r < REPS; r++) {
		m[M_C2C0][r] = droce_bench_c2c_ns(0, 1, 100000);
		rawpp_side(&s, true, vd_s, "pingpong", "64", "-D", "30", so);
		rawpp_side(&c, false, vd_c, "pingpong", "64", "-n", "100000", co);
		if (pair(&s, &c, NULL) != 0)
			return 1;
		m[M_RAW_P50][r] = find(co, " p50=");
		m[M_RAW_P99][r] = find(co, " p99=");
		/* droce-perf write lat 8 B: client inline, then its loop on a poll lcore */
		for (k = 0; k < 2; k++) {
			const char *ca[] = {
				"-p",  "PORT", "-o",	    "write", "-m",
				"lat", "-s",   "8",	    "-n",    k == 0 ? "20000" : "2000",
				"-J",  "-Q",   "127.0.0.1", NULL
			};

			perf_side(&s, true, sock, "0", so, srv_args);
			perf_side(&c, false, sock, k == 0 ? "1" : "0,1", co, ca);
			if (pair(&s, &c, pf) != 0)
				return 1;
			m[k == 0 ? M_LAT_P50 : M_LCORE_P50][r] = find(co, "\"p50\":");
			m[k == 0 ? M_LAT_P99 : M_LCORE_P99][r] = find(co, "\"p99\":");
		}
		m[M_C2C1][r] = droce_bench_c2c_ns(0, 1, 100000);
		rawpp_side(&s, true, vd_s, "tput", "1518", "-D", "30", so);
		rawpp_side(&c, false, vd_c, "tput", "1518", "-D", "2", co);
		if (pair(&s, &c, NULL) != 0)
			return 1;
		m[M_RAW_GBPS][r] = find(so, "Gbit/s=");
		{
			const char *ca[] = { "-p", "PORT", "-o", "write", "-s",	       "65536",
					     "-D", "2",	   "-J", "-Q",	  "127.0.0.1", NULL };

			perf_side(&s, true, sock, "0", so, srv_args);
			perf_side(&c, false, sock, "1", co, ca);
			if (pair(&s, &c, pf) != 0)
				return 1;
			m[M_BW][r] = find(co, "\"gbps\":");
		}
		m[M_C2C2][r] = droce_bench_c2c_ns(0, 1, 100000);
		/* message rate by shards: 1, 2 (inline), 2 with the client's on poll lcores */
		for (k = 0; k < 3; k++) {
			const char *ca[] = { "-p", "PORT", "-o", "write", "-q", "4",	     "-s",
					     "64", "-D",   "2",	 "-J",	  "-Q", "127.0.0.1", NULL };

			perf_side(&s, true, sock, "0", so, srv_args);
			perf_side(&c, false, sock, k == 2 ? "0,1,2" : "1", co, ca);
			s.env[4] = c.env[4] = k == 0 ? "DROCE_SHARDS=1" : "DROCE_SHARDS=2";
			if (k == 2)
				c.env[0] = "DROCE_EAL=--no-huge -m 512 --no-pci "
					   "--lcores=0@(0-1),1@(0-1),2@(0-1)";
			if (pair(&s, &c, pf) != 0)
				return 1;
			m[M_SH1 + k][r] = find(co, "\"mmsg_per_s\":");
		}
	}
	for (i = M_RAW_P50; i < M_N; i++)
		v[i] = median(m[i], REPS);
	printf("droce-bench-perf (memif, --no-huge, server lcore 0, client lcore 1; median of %d "
	       "interleaved runs)\n",
	       REPS);
	printf("%-46s", "CPUs 0-1 cache-line round trip per run, ns:");
	for (r = 0; r < REPS; r++)
		printf(" %.0f/%.0f/%.0f", m[M_C2C0][r], m[M_C2C1][r], m[M_C2C2][r]);
	printf("  (near < %.0f: a shared cache)\n", DROCE_BENCH_C2C_NEAR_NS);
	printf("%-46s %10s %10s\n", "latency (round trip)", "p50 us", "p99 us");
	printf("%-46s %10.2f %10.2f\n", "rawpp ping-pong 64 B", v[M_RAW_P50], v[M_RAW_P99]);
	printf("%-46s %10.2f %10.2f  x%.1f raw p50\n", "droce-perf write lat 8 B, client inline",
	       v[M_LAT_P50], v[M_LAT_P99], v[M_LAT_P50] / v[M_RAW_P50]);
	/* Each run's ratio: raw ping-pong and droce-perf ran next to each other, while the
	 * VM's CPUs 0 and 1 move between sharing a cache and not (droce_bench_c2c.h). */
	printf("  %-44s", "per run, inline p50 / raw p50:");
	for (r = 0; r < REPS; r++)
		printf(" x%.2f (%s)", m[M_RAW_P50][r] > 0 ? m[M_LAT_P50][r] / m[M_RAW_P50][r] : 0.0,
		       placement(m[M_C2C0][r], m[M_C2C1][r]));
	printf("\n");
	printf("%-46s %10.2f %10.2f  x%.1f raw p50\n", "droce-perf write lat 8 B, client lcore 0,1",
	       v[M_LCORE_P50], v[M_LCORE_P99], v[M_LCORE_P50] / v[M_RAW_P50]);
	printf("%-46s %10s\n", "bandwidth", "Gbit/s");
	printf("%-46s %10.3f\n", "rawpp 1518 B frames (with FCS)", v[M_RAW_GBPS]);
	printf("%-46s %10.3f  %.0f %% of raw\n", "droce-perf write bw 64 KiB (goodput)", v[M_BW],
	       100 * v[M_BW] / v[M_RAW_GBPS]);
	printf("  %-44s", "per run, droce-perf / raw:");
	for (r = 0; r < REPS; r++)
		printf(" %.0f %% (%s)",
		       m[M_RAW_GBPS][r] > 0 ? 100 * m[M_BW][r] / m[M_RAW_GBPS][r] : 0.0,
		       placement(m[M_C2C1][r], m[M_C2C2][r]));
	printf("\n");
	printf("%-46s %10s\n", "message rate, write bw 64 B, 4 QPs", "Mmsg/s");
	printf("%-46s %10.3f\n", "1 shard a side, inline", v[M_SH1]);
	printf("%-46s %10.3f  x%.2f 1 shard\n", "2 shards a side, inline", v[M_SH2],
	       v[M_SH2] / v[M_SH1]);
	printf("%-46s %10.3f  x%.2f 1 shard\n", "2 shards a side, client on 2 poll lcores",
	       v[M_SH2_LCORE], v[M_SH2_LCORE] / v[M_SH1]);
	unlink(so);
	unlink(co);
	unlink(pf);
	rmdir(dir);
	return v[M_RAW_P50] > 0 && v[M_RAW_GBPS] > 0 && v[M_LAT_P50] > 0 && v[M_BW] > 0 ? 0 : 1;
}
