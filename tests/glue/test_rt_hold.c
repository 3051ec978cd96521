/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline droce_rt_run_until() lets the engine hold an iteration's ACKs (stack/droce_ackpol.h)
 * until the next iteration, which sends them in one burst with what the application posted in
 * answer; nothing stays held once run_until returns. droce_rt_poll_hold() (the verbs shim's)
 * holds them one iteration at a time, and only ACKs: a READ response never waits. Two RC QPs
 * of one device play WRITE ping-pong over a net_ring port, which loops every frame it sends
 * back to its own Rx queue.
 * EAL starts once per process: the case runs in a child (glue_child.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_rt.h"
#include "droce_test.h"
#include "glue_child.h"

enum { ROUNDS = 200, SLOT = 64 };

/* What the child saw; checked in the parent. */
struct seen {
	int open_rc, setup_rc, run_rc, bad_wc;
	char err[256];
	unsigned int rounds;
	uint64_t tx_pkts, tx_bursts, engine_pkts, acks_held;
};

struct side {
	struct droce_qp *qp;
	struct droce_mr *mr;
	uint8_t *buf; /* slot 0 receives, slot 1 sends */
};

struct game {
	struct side s[2];
	struct droce_cq *cq;
	unsigned int round; /* side 0 sent this round and waits for its echo */
	bool echoed;	    /* side 1 answered the current round */
	int bad_wc;
};

static int
post_write(struct game *g, unsigned int from, unsigned int round)
{
	struct side *me = &g->s[from], *peer = &g->s[1 - from];
	struct droce_sge sge = { .addr = (uintptr_t)(me->buf + SLOT),
				 .length = 8,
				 .lkey = droce_mr_lkey(me->mr) };
	struct droce_send_wr wr = { .wr_id = round,
				    .sg_list = &sge,
				    .num_sge = 1,
				    .opcode = DROCE_WR_RDMA_WRITE,
				    .send_flags = DROCE_SEND_SIGNALED },
			     *bad;

	me->buf[SLOT + 7] = (uint8_t)(round + 1);
	wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
	wr.wr.rdma.rkey = droce_mr_rkey(peer->mr);
	return droce_post_send(me->qp, &wr, &bad);
}

/* The application's step, between two iterations: answer what arrived. */
static bool
step(void *arg)
{
	struct game *g = arg;
	struct droce_wc wc[8];
	int n, i;

	n = droce_cq_poll(g->cq, 8, wc);
	for (i = 0; i < n; i++)
		if (wc[i].status != DROCE_WC_SUCCESS && g->bad_wc == 0)
			g->bad_wc = wc[i].status;
	if (!g->echoed && g->s[1].buf[7] == (uint8_t)(g->round + 1)) {
		g->echoed = true;
		if (post_write(g, 1, g->round) != 0)
			g->bad_wc = -1;
	}
	if (g->echoed && g->s[0].buf[7] == (uint8_t)(g->round + 1)) {
		/* Done at the last echo, with its ACK just built: it must still leave. */
		if (++g->round == ROUNDS)
			return true;
		g->echoed = false;
		if (post_write(g, 0, g->round) != 0)
			g->bad_wc = -1;
	}
	return g->bad_wc != 0;
}

static int
connect_qp(struct droce_qp *qp, uint32_t dqpn, const uint8_t gid[16], unsigned int gid_index,
	   const uint8_t mac[6])
{
	struct droce_qp_conn c = {
		.dest_qp_num = dqpn,
		.rq_psn = 0x100,
		.sq_psn = 0x100,
		.path_mtu = DROCE_MTU_1024,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
		.min_rnr_timer = 1,
		.max_dest_rd_atomic = 1,
	};
	int rc = droce_qp_init(qp, DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ, 0);

	if (rc != 0)
		return rc;
	memcpy(c.av.dgid, gid, 16);
	c.av.sgid_index = (uint8_t)gid_index;
	memcpy(c.av.dmac, mac, 6);
	c.av.hop_limit = 64;
	return droce_qp_connect(qp, &c);
}

static int
setup(struct droce_rt *rt, struct game *g, uint8_t *mem)
{
	struct droce_dev *dev = droce_rt_dev(rt);
	struct droce_qp_init_attr ia = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };
	uint8_t gid[16], mac[6];
	struct droce_pd *pd;
	unsigned int i, gi;
	int e = 0, rc;

	/* the IPv4 GID (::ffff:198.18.0.1): frames go out to our own address and MAC */
	for (gi = 0; droce_rt_gid(rt, gi, gid) > gi; gi++)
		if (memcmp(gid, v4, sizeof(v4)) == 0)
			break;
	if (droce_rt_gid(rt, gi, gid) <= gi)
		return -ENOENT;
	droce_rt_mac(rt, mac);
	pd = droce_pd_alloc(dev, &e);
	if (pd == NULL)
		return -e;
	g->cq = droce_cq_create(dev, 64, NULL, &e);
	if (g->cq == NULL)
		return -e;
	ia.send_cq = ia.recv_cq = g->cq;
	for (i = 0; i < 2; i++) {
		g->s[i].buf = mem + i * 2 * SLOT;
		g->s[i].mr = droce_mr_reg(pd, g->s[i].buf, 2 * SLOT,
					  DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
						  DROCE_ACCESS_REMOTE_READ,
					  &e);
		if (g->s[i].mr == NULL)
			return -e;
		g->s[i].qp = droce_qp_create(pd, &ia, &e);
		if (g->s[i].qp == NULL)
			return -e;
	}
	for (i = 0; i < 2; i++) {
		rc = connect_qp(g->s[i].qp, droce_qp_num(g->s[1 - i].qp), gid, gi, mac);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static bool
never(void *arg)
{
	(void)arg;
	return false;
}

static void
counters(struct droce_rt *rt, uint64_t v[4])
{
	droce_rt_counter(rt, "rt.tx_pkts", &v[0]);
	droce_rt_counter(rt, "rt.tx_bursts", &v[1]);
	droce_rt_counter(rt, "dev.sent_pkts", &v[2]);
	droce_rt_counter(rt, "dev.ack_held", &v[3]);
}

/* The runtime on a looped-back net_ring port and the game's two QPs, start-up frames (the
 * gratuitous ARP) gone and back; NULL with *open_rc / *setup_rc and err saying why. */
static struct droce_rt *
open_game(struct game *g, uint8_t *mem, int *open_rc, int *setup_rc, char *err, size_t errlen)
{
	struct droce_rt_config c;
	struct droce_rt *rt;

	droce_rt_config_defaults(&c);
	if (droce_rt_config_set(&c, "ipv4", "198.18.0.1/24", err, errlen) != 0 ||
	    droce_rt_config_set(&c, "eal", "--no-huge -m 128 --no-pci", err, errlen) != 0) {
		*open_rc = -EINVAL;
		return NULL;
	}
	c.mbufs = 4095;
	snprintf(c.vdev, sizeof(c.vdev), "net_ring0");
	rt = droce_rt_open_config(&c, "test_rt_hold", err, errlen);
	*open_rc = rt != NULL ? 0 : -1;
	if (rt == NULL)
		return NULL;
	memset(g, 0, sizeof(*g));
	*setup_rc = setup(rt, g, mem);
	if (*setup_rc != 0) {
		droce_rt_close(rt);
		return NULL;
	}
	droce_rt_run_until(rt, never, NULL, 50);
	return rt;
}

static void
child(void *out, const void *arg)
{
	struct seen *s = out;
	static uint8_t mem[4 * SLOT] __attribute__((aligned(64)));
	struct game g;
	struct droce_rt *rt;
	uint64_t before[4], after[4];

	(void)arg;
	rt = open_game(&g, mem, &s->open_rc, &s->setup_rc, s->err, sizeof(s->err));
	if (rt == NULL)
		return;
	counters(rt, before);
	if (post_write(&g, 0, 0) != 0)
		g.bad_wc = -1;
	s->run_rc = droce_rt_run_until(rt, step, &g, 10000);
	counters(rt, after);
	s->rounds = g.round;
	s->bad_wc = g.bad_wc;
	s->tx_pkts = after[0] - before[0];
	s->tx_bursts = after[1] - before[1];
	s->engine_pkts = after[2] - before[2];
	s->acks_held = after[3] - before[3];
	droce_rt_close(rt);
}

/* The child's runtime opened and its game set up; why not, on stderr. */
static bool
opened(int open_rc, int setup_rc, const char *err)
{
	if (open_rc != 0 || setup_rc != 0)
		fprintf(stderr, "open %d setup %d: %s\n", open_rc, setup_rc, err);
	return open_rc == 0 && setup_rc == 0;
}

static void
test_run_until_holds_acks(void)
{
	struct seen s;

	CU_ASSERT_EQUAL_FATAL(glue_in_child(child, NULL, &s, sizeof(s), 30), 0);
	CU_ASSERT_FATAL(opened(s.open_rc, s.setup_rc, s.err));
	CU_ASSERT_EQUAL(s.run_rc, 0);
	CU_ASSERT_EQUAL(s.bad_wc, 0);
	CU_ASSERT_EQUAL(s.rounds, ROUNDS);
	fprintf(stderr,
		"%u rounds: %llu frames built, %llu sent in %llu bursts, %llu ACKs held for the "
		"answer\n",
		s.rounds, (unsigned long long)s.engine_pkts, (unsigned long long)s.tx_pkts,
		(unsigned long long)s.tx_bursts, (unsigned long long)s.acks_held);
	/* two WRITEs and up to two ACKs a round */
	CU_ASSERT(s.engine_pkts >= 3 * ROUNDS && s.engine_pkts <= 4 * ROUNDS + 2);
	/* nothing held back when run_until returned: the last echo's ACK left too */
	CU_ASSERT_EQUAL(s.tx_pkts, s.engine_pkts);
	/* each side's ACK waited for the WRITE that answers it, twice a round (never without
	 * the hold, where ACKs leave as they are made), and left in its burst: about two frames
	 * a burst (one without the hold) */
	CU_ASSERT(s.acks_held >= 2 * ROUNDS - 2);
	CU_ASSERT(s.tx_pkts * 10 >= s.tx_bursts * 18);
}

/* droce_rt_poll_hold, step by step: what each iteration held and sent. */
enum { PH_STEPS = 7 };
struct ph_seen {
	int open_rc, setup_rc, post_rc;
	char err[256];
	unsigned int held[PH_STEPS];
	uint64_t sent[PH_STEPS], bursts[PH_STEPS], waited[PH_STEPS];
	bool placed[PH_STEPS];
};

static int
post_read(struct game *g, unsigned int from)
{
	struct side *me = &g->s[from], *peer = &g->s[1 - from];
	struct droce_sge sge = { .addr = (uintptr_t)(me->buf + SLOT),
				 .length = 8,
				 .lkey = droce_mr_lkey(me->mr) };
	struct droce_send_wr wr = { .wr_id = 99,
				    .sg_list = &sge,
				    .num_sge = 1,
				    .opcode = DROCE_WR_RDMA_READ,
				    .send_flags = DROCE_SEND_SIGNALED },
			     *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)peer->buf;
	wr.wr.rdma.rkey = droce_mr_rkey(peer->mr);
	return droce_post_send(me->qp, &wr, &bad);
}

static void
ph_step(struct droce_rt *rt, struct ph_seen *s, unsigned int k, bool hold, bool placed)
{
	uint64_t before[4], after[4];

	counters(rt, before);
	if (!hold)
		droce_rt_poll(rt);
	else
		droce_rt_poll_hold(rt, &s->held[k]);
	counters(rt, after);
	s->sent[k] = after[0] - before[0];
	s->bursts[k] = after[1] - before[1];
	s->waited[k] = after[3] - before[3];
	s->placed[k] = placed;
}

static void
child_poll_hold(void *out, const void *arg)
{
	struct ph_seen *s = out;
	static uint8_t mem[4 * SLOT] __attribute__((aligned(64)));
	struct droce_wc wc[8];
	struct droce_rt *rt;
	struct game g;
	int i;

	(void)arg;
	rt = open_game(&g, mem, &s->open_rc, &s->setup_rc, s->err, sizeof(s->err));
	if (rt == NULL)
		return;
	/* 0: side 0's WRITE leaves before Rx, comes back, is placed; its ACK is held */
	s->post_rc |= post_write(&g, 0, 0);
	ph_step(rt, s, 0, true, false);
	s->placed[0] = g.s[1].buf[7] == 1;
	/* 1: side 1's answer leaves with that ACK, in one burst; the answer's own ACK is held */
	s->post_rc |= post_write(&g, 1, 0);
	ph_step(rt, s, 1, true, g.s[0].buf[7] == 1);
	s->placed[1] = g.s[0].buf[7] == 1;
	/* 2: a plain iteration sends what is held */
	ph_step(rt, s, 2, false, true);
	/* 3: a READ: its response (data, not an ACK) is never held */
	s->post_rc |= post_read(&g, 0);
	ph_step(rt, s, 3, true, true);
	for (i = 0; i < 100; i++)
		droce_rt_poll(rt);
	/* 4: a WRITE: its ACK is held */
	s->post_rc |= post_write(&g, 0, 1);
	ph_step(rt, s, 4, true, true);
	s->placed[4] = g.s[1].buf[7] == 2;
	/* 5: the answer leaves in one burst with that ACK */
	s->post_rc |= post_write(&g, 1, 1);
	ph_step(rt, s, 5, true, true);
	s->placed[5] = g.s[0].buf[7] == 2;
	/* 6: a plain iteration sends the answer's ACK */
	ph_step(rt, s, 6, false, true);
	for (i = 0; i < 100; i++)
		droce_rt_poll(rt);
	while (droce_cq_poll(g.cq, 8, wc) > 0)
		;
	droce_rt_close(rt);
}

static void
test_poll_hold(void)
{
	struct ph_seen s;
	unsigned int k;

	CU_ASSERT_EQUAL_FATAL(glue_in_child(child_poll_hold, NULL, &s, sizeof(s), 30), 0);
	CU_ASSERT_FATAL(opened(s.open_rc, s.setup_rc, s.err));
	CU_ASSERT_EQUAL(s.post_rc, 0);
	for (k = 0; k < PH_STEPS; k++)
		fprintf(stderr,
			"step %u: held %u, sent %llu in %llu bursts (%llu ACKs held), placed %d\n",
			k, s.held[k], (unsigned long long)s.sent[k],
			(unsigned long long)s.bursts[k], (unsigned long long)s.waited[k],
			s.placed[k]);
	/* 0: the WRITE went out alone and was placed; its ACK waits */
	CU_ASSERT(s.sent[0] == 1 && s.bursts[0] == 1 && s.held[0] == 1 && s.waited[0] == 1 &&
		  s.placed[0]);
	/* 1: the answer and the held ACK in one burst; the answer placed, its ACK waits */
	CU_ASSERT(s.sent[1] == 2 && s.bursts[1] == 1 && s.held[1] == 1 && s.waited[1] == 1 &&
		  s.placed[1]);
	/* 2: droce_rt_poll sends it */
	CU_ASSERT(s.sent[2] == 1 && s.held[2] == 0);
	/* 3: READ request and its response both left, nothing held */
	CU_ASSERT(s.sent[3] == 2 && s.held[3] == 0 && s.waited[3] == 0);
	/* 4, 5: as 0 and 1 */
	CU_ASSERT(s.sent[4] == 1 && s.held[4] == 1 && s.placed[4]);
	CU_ASSERT(s.sent[5] == 2 && s.bursts[5] == 1 && s.held[5] == 1 && s.placed[5]);
	/* 6: droce_rt_poll sends the last ACK */
	CU_ASSERT(s.sent[6] == 1 && s.held[6] == 0);
}

DROCE_TEST_MAIN("rt_hold", DROCE_TEST(test_run_until_holds_acks), DROCE_TEST(test_poll_hold))
