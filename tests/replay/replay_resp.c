/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replay-resp: one RC responder QP on the droce runtime (pmd-glue/droce_rt.h), for replaying a
 * request capture through DPDK's net_pcap vdev (rx_pcap = the requests, tx_pcap = what we answer).
 *
 * The engine draws QPNs and R_Keys from the runtime's rte_rand(), seeded by DROCE_SEED, and the
 * memory region sits at a fixed virtual address, so a --params run and the replay run that follows
 * it with the same seed report the same QPN, R_Key and VA: the requests can be generated in
 * between. Memory content is written to --dump before (--params) or after (replay) the run.
 *
 *   replay-resp --params --peer-ip A --peer-mac M --peer-qpn Q --rq-psn P --dump FILE
 *   replay-resp --peer-ip A --peer-mac M --peer-qpn Q --rq-psn P --dump FILE [--idle-ms N]
 *   [--qps N] [--no-recv J]: N QPs (QP j answers peer QPN Q + j), QP j with no receive posted
 * Configuration (EAL, vdev, address, seed): the DROCE_* variables, pmd-glue/README.md.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "droce_rt.h"
#include "droce_verbs.h"

/* Far above EAL's reservations (from 4 GiB up), below the kernel's mmap base, outside ASan's
 * allocator (0x600000000000..). */
#define REPLAY_VA	  0x3e0000000000ull
#define REPLAY_MEM	  (64u * 1024) /* remote-accessible: WRITE, READ, atomics */
#define REPLAY_RECV_SLOT  4096u	       /* one receive buffer per posted receive */
#define REPLAY_RECVS	  4u	       /* per QP */
#define REPLAY_MAX_QPS	  6u
#define REPLAY_RECV_AREA  (REPLAY_MAX_QPS * REPLAY_RECVS * REPLAY_RECV_SLOT)
#define REPLAY_ATOMIC_OFF 0x8000u /* two 8-byte atomic targets */

struct opts {
	bool params;
	uint8_t peer_gid[16];
	uint8_t peer_mac[6];
	uint32_t peer_qpn; /* QP i talks to peer_qpn + i */
	unsigned int qps;
	int no_recv; /* the QP given no receive (an RNR NAK target), -1: none */
	bool have_peer;
	uint32_t rq_psn;
	const char *dump;
	unsigned int idle_ms;
};

static int
usage(const char *why)
{
	fprintf(stderr,
		"replay-resp: %s\nusage: replay-resp [--params] --peer-ip A --peer-mac M "
		"--peer-qpn Q --rq-psn P --dump FILE [--qps N] [--no-recv J] [--idle-ms N]\n",
		why);
	return 2;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	struct in_addr a4;
	int i;

	memset(o, 0, sizeof(*o));
	o->idle_ms = 300;
	o->qps = 1;
	o->no_recv = -1;
	for (i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(k, "--params") == 0) {
			o->params = true;
			continue;
		}
		if (v == NULL)
			return usage("option without a value");
		i++;
		if (strcmp(k, "--peer-ip") == 0) {
			memset(o->peer_gid, 0, 16);
			if (inet_pton(AF_INET, v, &a4) == 1) {
				o->peer_gid[10] = o->peer_gid[11] = 0xff; /* ::ffff:a.b.c.d */
				memcpy(o->peer_gid + 12, &a4, 4);
			} else if (inet_pton(AF_INET6, v, o->peer_gid) != 1) {
				return usage("--peer-ip: not an IPv4 or IPv6 address");
			}
			o->have_peer = true;
		} else if (strcmp(k, "--peer-mac") == 0) {
			uint8_t *m = o->peer_mac;

			if (sscanf(v, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &m[0], &m[1], &m[2], &m[3],
				   &m[4], &m[5]) != 6)
				return usage("--peer-mac: not a MAC address");
		} else if (strcmp(k, "--peer-qpn") == 0) {
			o->peer_qpn = (uint32_t)strtoul(v, NULL, 0) & 0xffffff;
		} else if (strcmp(k, "--rq-psn") == 0) {
			o->rq_psn = (uint32_t)strtoul(v, NULL, 0) & 0xffffff;
		} else if (strcmp(k, "--qps") == 0) {
			o->qps = (unsigned int)strtoul(v, NULL, 0);
			if (o->qps < 1 || o->qps > REPLAY_MAX_QPS)
				return usage("--qps: 1 to 6");
		} else if (strcmp(k, "--no-recv") == 0) {
			o->no_recv = atoi(v);
		} else if (strcmp(k, "--dump") == 0) {
			o->dump = v;
		} else if (strcmp(k, "--idle-ms") == 0) {
			o->idle_ms = (unsigned int)strtoul(v, NULL, 0);
		} else {
			return usage("unknown option");
		}
	}
	if (o->dump == NULL || !o->have_peer)
		return usage("--dump and --peer-ip are required");
	return 0;
}

/* The initial image: bytes that differ at every offset (a READ of the wrong place shows), and
 * two atomic targets with known values. */
static void
fill(uint8_t *mem, uint8_t *recv)
{
	uint64_t v;
	uint32_t i;

	for (i = 0; i < REPLAY_MEM; i++)
		mem[i] = (uint8_t)(i * 131u + (i >> 8) * 7u + 1u);
	v = 1000;
	memcpy(mem + REPLAY_ATOMIC_OFF, &v, 8);
	v = 5;
	memcpy(mem + REPLAY_ATOMIC_OFF + 8, &v, 8);
	memset(recv, 0xee, REPLAY_RECV_AREA);
}

static int
dump(const char *path, const uint8_t *mem, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(mem, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "replay-resp: cannot write %s\n", path);
		return -EIO;
	}
	return 0;
}

static int
connect_qp(struct droce_qp *qp, const struct opts *o, uint32_t peer_qpn)
{
	struct droce_qp_conn c;
	int rc;

	rc = droce_qp_init(qp,
			   DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
				   DROCE_ACCESS_REMOTE_ATOMIC,
			   0);
	if (rc != 0)
		return rc;
	/* RTS as an application would (the responder works from RTR on; this QP sends no
	 * request). */
	memset(&c, 0, sizeof(c));
	c.path_mtu = DROCE_MTU_1024;
	c.dest_qp_num = peer_qpn;
	c.rq_psn = o->rq_psn;
	c.sq_psn = 0x777;
	c.max_dest_rd_atomic = 16;
	c.max_rd_atomic = 16;
	c.min_rnr_timer = 1;
	c.timeout = 14;
	c.retry_cnt = 7;
	c.rnr_retry = 7;
	memcpy(c.av.dgid, o->peer_gid, 16);
	/* A static neighbour: nothing answers ARP inside a capture file. */
	memcpy(c.av.dmac, o->peer_mac, 6);
	c.av.sgid_index = 0; /* the runtime's first address: configure one */
	c.av.hop_limit = 64;
	return droce_qp_connect(qp, &c);
}

static uint64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Drive the loop until idle_ms pass with no frame in or out (net_pcap's Rx ends at the end of
 * the file; the responder has no timer of its own), at most 10 s. */
static void
drain(struct droce_rt *rt, unsigned int idle_ms)
{
	uint64_t start = ms_now(), last = start, now;

	do {
		if (droce_rt_poll(rt) != 0)
			last = ms_now();
		now = ms_now();
	} while (now - last < idle_ms && now - start < 10000);
}

static void
print_counters(struct droce_rt *rt)
{
	static struct droce_rt_counter cs[1024];
	int n = droce_rt_counters(rt, cs, 1024), i;

	for (i = 0; i < n && i < 1024; i++)
		if (cs[i].value != 0 &&
		    (strncmp(cs[i].name, "dev.", 4) == 0 || strncmp(cs[i].name, "rt.", 3) == 0))
			printf("replay counter: %s=%llu\n", cs[i].name,
			       (unsigned long long)cs[i].value);
}

int
main(int argc, char **argv)
{
	struct droce_qp_init_attr ia = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 16,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_mr *mr, *rmr;
	struct droce_dev *dev;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp[REPLAY_MAX_QPS] = { NULL };
	struct droce_rt *rt;
	struct droce_wc wc[16];
	struct opts o;
	uint8_t *mem, *recv, mac[6];
	char err[256];
	unsigned int i, j;
	int e = 0, rc = 0, n;

	rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc;
	/* Before EAL, so that nothing else takes the address. */
	mem = mmap((void *)REPLAY_VA, REPLAY_MEM + REPLAY_RECV_AREA, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (mem == MAP_FAILED || mem != (void *)REPLAY_VA) {
		fprintf(stderr, "replay-resp: cannot map 0x%llx: %s\n", REPLAY_VA, strerror(errno));
		return 1;
	}
	recv = mem + REPLAY_MEM;
	fill(mem, recv);
	rt = droce_rt_open(NULL, argv[0], err, sizeof(err));
	if (rt == NULL) {
		fprintf(stderr, "replay-resp: %s\n", err);
		return 1;
	}
	dev = droce_rt_dev(rt);
	pd = droce_pd_alloc(dev, &e);
	mr = pd ? droce_mr_reg(pd, mem, REPLAY_MEM,
			       DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				       DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC,
			       &e) :
		  NULL;
	rmr = mr ? droce_mr_reg(pd, recv, REPLAY_RECV_AREA, DROCE_ACCESS_LOCAL_WRITE, &e) : NULL;
	cq = rmr ? droce_cq_create(dev, 64, NULL, &e) : NULL;
	ia.send_cq = ia.recv_cq = cq;
	for (j = 0; cq != NULL && j < o.qps && (j == 0 || qp[j - 1] != NULL); j++)
		qp[j] = droce_qp_create(pd, &ia, &e);
	if (qp[o.qps - 1] == NULL) {
		fprintf(stderr, "replay-resp: engine object creation failed: %s\n", strerror(e));
		droce_rt_close(rt);
		return 1;
	}
	/* QP j's receives: wr_id 100 * (j + 1) + i into slot j * REPLAY_RECVS + i. Posted from
	 * INIT on (IBTA 10.3.1), so after the connection. */
	for (j = 0; rc == 0 && j < o.qps; j++) {
		rc = connect_qp(qp[j], &o, (o.peer_qpn + j) & 0xffffff);
		for (i = 0; rc == 0 && (int)j != o.no_recv && i < REPLAY_RECVS; i++) {
			uint8_t *b = recv + (j * REPLAY_RECVS + i) * REPLAY_RECV_SLOT;
			struct droce_sge sge = { (uintptr_t)b, REPLAY_RECV_SLOT,
						 droce_mr_lkey(rmr) };
			struct droce_recv_wr wr = { .wr_id = 100 * (j + 1) + i,
						    .sg_list = &sge,
						    .num_sge = 1 };
			struct droce_recv_wr *bad;

			rc = droce_post_recv(qp[j], &wr, &bad);
		}
	}
	if (rc != 0) {
		fprintf(stderr, "replay-resp: QP set-up failed: %s\n", strerror(-rc));
		droce_rt_close(rt);
		return 1;
	}
	droce_rt_mac(rt, mac);
	printf("replay params: qpns=");
	for (j = 0; j < o.qps; j++)
		printf("%s0x%06x", j ? "," : "", droce_qp_num(qp[j]));
	printf(" rkey=0x%08x va=0x%llx len=%u recv_va=0x%llx "
	       "recv_slot=%u recvs=%u atomic_off=0x%x mac=%02x:%02x:%02x:%02x:%02x:%02x "
	       "rq_psn=0x%06x\n",
	       droce_mr_rkey(mr), (unsigned long long)(uintptr_t)mem, REPLAY_MEM,
	       (unsigned long long)(uintptr_t)recv, REPLAY_RECV_SLOT, REPLAY_RECVS,
	       REPLAY_ATOMIC_OFF, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], o.rq_psn);
	fflush(stdout);
	if (!o.params) {
		drain(rt, o.idle_ms);
		while ((n = droce_cq_poll(cq, 16, wc)) > 0)
			for (i = 0; i < (unsigned int)n; i++)
				printf("replay wc: qpn=0x%06x wr_id=%llu status=%d opcode=%d "
				       "byte_len=%u flags=%u imm=0x%08x\n",
				       wc[i].qp_num, (unsigned long long)wc[i].wr_id, wc[i].status,
				       wc[i].opcode, wc[i].byte_len, wc[i].wc_flags,
				       ntohl(wc[i].imm_data));
		print_counters(rt);
	}
	rc = dump(o.dump, mem, REPLAY_MEM + REPLAY_RECV_AREA);
	droce_rt_close(rt); /* stops the port: net_pcap closes the tx_pcap */
	printf("replay done\n");
	return rc == 0 ? 0 : 1;
}
