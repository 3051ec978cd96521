/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime on a VLAN (net_null port without Rx, inline mode): droce_rt_resolve_av() puts the VLAN and
 * priority in the address vector (and nothing without a VLAN); RC frames the engine builds from
 * that vector, or from one without the tag, the announcement and untagged exception frames
 * leave tagged, frames already tagged leave as they are (the capture shows what was queued
 * for Tx). EAL starts once per process: each case forks a child, bounded
 * by alarm(); the child reports through its exit status and stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "droce_rt.h"
#include "droce_test.h"

#define CHECK(c, ...) \
	do { \
		if (!(c)) { \
			printf("child: " __VA_ARGS__); \
			printf("\n"); \
			fails++; \
		} \
	} while (0)

enum { MARK_TYPE = 0x88B5 }; /* IEEE 802 local experimental EtherType: our test frames */

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Frames of the capture sent from mac: how many, how many tagged tci, and the tags of the
 * MARK_TYPE frames (untagged: 0) in order. */
struct txseen {
	unsigned int n, tagged, nmark, roce, roce_tagged;
	uint32_t mark_tag[4];
};

static int
read_capture(const char *path, const uint8_t mac[6], uint16_t tci, struct txseen *t)
{
	uint8_t hdr[24], rec[16], f[2048];
	uint32_t caplen, type;
	FILE *fp = fopen(path, "rb");

	memset(t, 0, sizeof(*t));
	if (fp == NULL || fread(hdr, 1, sizeof(hdr), fp) != sizeof(hdr))
		return -1;
	while (fread(rec, 1, sizeof(rec), fp) == sizeof(rec)) {
		memcpy(&caplen, rec + 8, 4); /* pcap records are in the writer's byte order */
		if (caplen > sizeof(f) || fread(f, 1, caplen, fp) != caplen)
			break;
		if (caplen < 18 || memcmp(f + 6, mac, 6) != 0)
			continue;
		t->n++;
		if (be16(f + 12) == 0x8100 && be16(f + 14) == tci)
			t->tagged++;
		type = be16(f + 12) == 0x8100 ? be16(f + 16) : be16(f + 12);
		if (type == 0x0800 && caplen >= 18 + 28 && be16(f + 18 + 22) == 4791) {
			t->roce++; /* IPv4 (IHL 5 from droce_build) + UDP 4791, tagged */
			t->roce_tagged += be16(f + 14) == tci;
		} else if (type == 0x0800 && caplen >= 14 + 28 && be16(f + 14 + 22) == 4791) {
			t->roce++; /* untagged */
		}
		if (type == MARK_TYPE && t->nmark < 4)
			t->mark_tag[t->nmark++] =
				be16(f + 12) == 0x8100 ? 0x10000u | be16(f + 14) : 0;
	}
	fclose(fp);
	return 0;
}

/* An RC QP to QPN 0x12 over av, and one SEND on it (the engine builds the frame from av). */
static int
rc_send(struct droce_rt *rt, const struct droce_av *av, uint8_t *buf)
{
	struct droce_qp_init_attr ia = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct droce_qp_attr a = { 0 };
	struct droce_send_wr wr = { .opcode = DROCE_WR_SEND, .num_sge = 1 }, *bad;
	struct droce_sge sge = { .addr = (uintptr_t)buf, .length = 8 };
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_qp *qp;
	int e = 0, rc;

	pd = droce_pd_alloc(droce_rt_dev(rt), &e);
	mr = pd == NULL ? NULL : droce_mr_reg(pd, buf, 64, DROCE_ACCESS_LOCAL_WRITE, &e);
	ia.send_cq = ia.recv_cq =
		mr == NULL ? NULL : droce_cq_create(droce_rt_dev(rt), 8, NULL, &e);
	qp = ia.send_cq == NULL ? NULL : droce_qp_create(pd, &ia, &e);
	if (qp == NULL)
		return -e;
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	rc = droce_qp_modify(qp, &a,
			     DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
				     DROCE_QP_ACCESS_FLAGS);
	a.qp_state = DROCE_QPS_RTR;
	a.path_mtu = DROCE_MTU_1024;
	a.dest_qp_num = 0x12;
	a.ah_attr = *av;
	if (rc == 0)
		rc = droce_qp_modify(qp, &a,
				     DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
					     DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
					     DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER);
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.timeout = 14;
	if (rc == 0)
		rc = droce_qp_modify(qp, &a,
				     DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
					     DROCE_QP_RNR_RETRY | DROCE_QP_SQ_PSN |
					     DROCE_QP_MAX_QP_RD_ATOMIC);
	sge.lkey = droce_mr_lkey(mr);
	wr.sg_list = &sge;
	return rc != 0 ? rc : droce_post_send(qp, &wr, &bad); /* left to droce_rt_close */
}

static int
child(const char *vlan, const char *pcp, const char *cap)
{
	struct droce_rt_config cfg;
	struct droce_rt *rt;
	struct droce_av av;
	struct txseen t;
	static uint8_t buf[128];
	uint8_t f[64], mac[6], peer[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
	uint16_t tci = (uint16_t)(atoi(pcp) << 13 | atoi(vlan));
	char err[256];
	int fails = 0, i, rc;

	droce_rt_config_defaults(&cfg);
	droce_rt_config_set(&cfg, "ipv4", "198.18.0.1/24", err, sizeof(err));
	droce_rt_config_set(&cfg, "eal", "--no-huge -m 128 --no-pci --no-telemetry", err,
			    sizeof(err));
	droce_rt_config_set(&cfg, "vdev", "net_null0,no-rx=1", err, sizeof(err));
	droce_rt_config_set(&cfg, "mbufs", "4095", err, sizeof(err));
	droce_rt_config_set(&cfg, "capture", cap, err, sizeof(err));
	CHECK(droce_rt_config_set(&cfg, "vlan", vlan, err, sizeof(err)) == 0, "vlan: %s", err);
	CHECK(droce_rt_config_set(&cfg, "vlan_pcp", pcp, err, sizeof(err)) == 0, "pcp: %s", err);
	rt = droce_rt_open_config(&cfg, "test_rt_vlan", err, sizeof(err));
	if (rt == NULL) {
		printf("child: open: %s\n", err);
		return 1;
	}
	droce_rt_mac(rt, mac);
	/* our own address resolves at once; the AV gets the VLAN (or explicitly none) */
	memset(&av, 0, sizeof(av));
	av.has_vlan = true;
	av.vlan_tci = 0xFFFF;
	memcpy(av.dgid, peer, 16);
	rc = droce_rt_resolve_av(rt, &av, 1000);
	CHECK(rc == 0, "resolve_av: %d %s", rc, droce_rt_strerror(rt));
	CHECK(memcmp(av.dmac, mac, 6) == 0, "resolve_av: not our MAC");
	CHECK(av.has_vlan == (atoi(vlan) != 0), "has_vlan %d", av.has_vlan);
	CHECK(av.vlan_tci == (atoi(vlan) != 0 ? tci : 0), "vlan_tci %#x", av.vlan_tci);
	for (i = 0; i < 50; i++)
		droce_rt_poll(rt); /* link up: the announcement */
	/* RoCE from that AV (the engine tags), and from one without a tag (droce-perf's way) */
	rc = rc_send(rt, &av, buf);
	CHECK(rc == 0, "SEND over the resolved AV: %d", rc);
	av.has_vlan = false;
	av.vlan_tci = 0;
	rc = rc_send(rt, &av, buf + 64);
	CHECK(rc == 0, "SEND over an untagged AV: %d", rc);
	for (i = 0; i < 50; i++)
		droce_rt_poll(rt);
	/* one untagged frame, one already tagged for VLAN 7, PCP 1 */
	memset(f, 0, sizeof(f));
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	f[12] = MARK_TYPE >> 8;
	f[13] = MARK_TYPE & 0xFF;
	CHECK(droce_rt_exception_send(rt, f, 60) == 0, "exception_send untagged");
	memmove(f + 16, f + 12, 44);
	f[12] = 0x81;
	f[13] = 0x00;
	f[14] = 0x20;
	f[15] = 7;
	CHECK(droce_rt_exception_send(rt, f, 64) == 0, "exception_send tagged");
	droce_rt_poll(rt);
	droce_rt_close(rt);
	if (read_capture(cap, mac, tci, &t) != 0) {
		printf("child: cannot read %s\n", cap);
		return 1;
	}
	unlink(cap);
	printf("child: vlan %s pcp %s: %u frames sent, %u tagged %#x, marks %#x %#x, RoCE %u "
	       "(%u tagged)\n",
	       vlan, pcp, t.n, t.tagged, tci, t.mark_tag[0], t.mark_tag[1], t.roce, t.roce_tagged);
	CHECK(t.roce >= 2, "%u RoCE frames sent", t.roce);
	CHECK(t.roce_tagged == (atoi(vlan) != 0 ? t.roce : 0), "%u of %u RoCE frames tagged",
	      t.roce_tagged, t.roce);
	CHECK(t.nmark == 2, "%u marked frames", t.nmark);
	CHECK(t.mark_tag[1] == (0x10000u | 0x2007), "the VLAN 7 frame was re-tagged");
	if (atoi(vlan) != 0) {
		CHECK(t.n >= 5 && t.tagged == t.n - 1, "not every frame tagged");
		CHECK(t.mark_tag[0] == (0x10000u | tci), "the untagged frame left with %#x",
		      t.mark_tag[0]);
	} else {
		CHECK(t.n >= 5 && t.tagged == 0, "tagged frames without a VLAN");
		CHECK(t.mark_tag[0] == 0, "the untagged frame was tagged");
	}
	return fails;
}

static void
run(const char *vlan, const char *pcp)
{
	char cap[64];
	int status = 0;
	pid_t pid;

	snprintf(cap, sizeof(cap), "/tmp/droce-test-rt-vlan-%ld.pcap", (long)getpid());
	fflush(stdout);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		alarm(30);
		_exit(child(vlan, pcp, cap) == 0 ? 0 : 3);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status));
	CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
	unlink(cap);
}

static void
test_vlan_100_pcp_5(void)
{
	run("100", "5");
}

static void
test_vlan_4094_pcp_0(void)
{
	run("4094", "0");
}

static void
test_no_vlan(void)
{
	run("0", "3");
}

DROCE_TEST_MAIN("rt_vlan", DROCE_TEST(test_vlan_100_pcp_5), DROCE_TEST(test_vlan_4094_pcp_0),
		DROCE_TEST(test_no_vlan))
