/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester's in-flight cap and its RTT-based retransmission timeout (stack/droce_inflight.c):
 * the cap holds on the wire (PSNs sent and not acknowledged, counted from the frames the wire
 * carried and the times their ACKs arrived), a lost tail is resent after about an RTO and not a
 * local ACK timeout, the RTO stays under the IBTA bound (4.096 us x 2^timeout, C9-140), and an
 * early resend spends no retry: RETRY_EXC_ERR after retry_cnt + 1 local ACK timeouts as before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_ext.h"
#include "droce_pkt.h"
#include "droce_psn.h"
#include "droce_test.h"

#include "sim_model.h"
#include "sim_scen.h"

#define US    1000ull
#define MS    1000000ull
#define MAXEV (1u << 17)

/* What the wire carried on the one flow node 0 -> node 1: each request's PSN and when it left,
 * each ACK's or NAK's "acknowledged below" PSN and when it reached node 0. */
struct wire_ev {
	uint64_t t;
	uint32_t psn;
};

struct wire_log {
	struct sim_trace *trace;
	struct wire_ev req[MAXEV], ack[MAXEV];
	unsigned int n_req, n_ack;
	/* test_tail: the first transmission of this PSN is lost (on the way to node 1) */
	bool drop_armed;
	uint32_t drop_psn;
	unsigned int dropped;
};

static struct wire_log *wl;

static void
log_hook(void *arg, unsigned int src, unsigned int dst, const uint8_t *frame, uint32_t len,
	 unsigned int fate, uint64_t now, uint64_t arrive)
{
	struct droce_pkt p;

	sim_trace_hook(wl->trace, src, dst, frame, len, fate, now, arrive);
	(void)arg;
	memset(&p, 0, sizeof(p));
	if (droce_parse(frame, len, &p, DROCE_PARSE_NO_ICRC) != DROCE_DROP_NONE)
		return;
	if (src == 0 && (droce_opcode_info(p.opcode)->flags & DROCE_OPF_REQ) && wl->n_req < MAXEV)
		wl->req[wl->n_req++] = (struct wire_ev){ now, p.psn };
	if (src == 1 && p.opcode == DROCE_OP_RC_ACKNOWLEDGE && wl->n_ack < MAXEV &&
	    !(fate & (SIM_FATE_LOST | SIM_FATE_NOROUTE | SIM_FATE_CORRUPT))) {
		/* IBTA 9.7.5.1: an ACK acknowledges its PSN and those before; a NAK those before */
		uint32_t below = (p.aeth_syn >> 5) == 0 ? droce_psn_add(p.psn, 1) : p.psn;

		wl->ack[wl->n_ack++] = (struct wire_ev){ arrive, below };
	}
}

static int
by_time(const void *a, const void *b)
{
	const struct wire_ev *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* The most PSNs ever out: at each request's departure, one past the highest PSN sent so far
 * minus the highest acknowledgement node 0 had received by then. */
static uint32_t
max_inflight(uint32_t first_psn)
{
	uint32_t hi = first_psn, una = first_psn, most = 0;
	unsigned int i, j = 0;

	qsort(wl->ack, wl->n_ack, sizeof(wl->ack[0]), by_time);
	for (i = 0; i < wl->n_req; i++) {
		uint32_t end = droce_psn_add(wl->req[i].psn, 1);

		for (; j < wl->n_ack && wl->ack[j].t <= wl->req[i].t; j++)
			if (droce_psn_lt(una, wl->ack[j].psn))
				una = wl->ack[j].psn;
		if (droce_psn_lt(hi, end))
			hi = end;
		if ((uint32_t)droce_psn_diff(hi, una) > most)
			most = (uint32_t)droce_psn_diff(hi, una);
	}
	return most;
}

/* Node 1's receive, with the first transmission of wl->drop_psn taken out. */
static const struct sim_node_ops *rx_orig;

static void
rx_filter(void *ctx, const uint8_t *const *frames, const uint32_t *lens, unsigned int n,
	  uint64_t now)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct droce_pkt p;

		memset(&p, 0, sizeof(p));
		if (wl->drop_armed &&
		    droce_parse(frames[i], lens[i], &p, DROCE_PARSE_NO_ICRC) == DROCE_DROP_NONE &&
		    (droce_opcode_info(p.opcode)->flags & DROCE_OPF_REQ) && p.psn == wl->drop_psn) {
			wl->drop_armed = false;
			wl->dropped++;
			continue;
		}
		rx_orig->rx(ctx, &frames[i], &lens[i], 1, now);
	}
}

static struct sim_node_ops rx_ops;

static void
setup(struct scen *s, const struct sim_link_cfg *link, const struct sim_qp_params *p,
      const struct droce_inflight_cfg *inf)
{
	unsigned int n;

	CU_ASSERT_FATAL(scen_init(s, 1, link, DROCE_QPT_RC, p, 0) == 0);
	for (n = 0; n < 2; n++)
		CU_ASSERT_FATAL(droce_qp_set_inflight(s->qp[n], inf) == 0);
	wl = calloc(1, sizeof(*wl));
	CU_ASSERT_FATAL(wl != NULL);
	wl->trace = &s->trace;
	s->net.tx_hook = log_hook;
	rx_orig = s->net.node[1].ops;
	rx_ops = *rx_orig;
	rx_ops.rx = rx_filter;
	s->net.node[1].ops = &rx_ops;
}

static void
teardown(struct scen *s)
{
	scen_fini(s);
	free(wl);
	wl = NULL;
}

static void
inf_cfg(struct droce_inflight_cfg *c, uint32_t cap, bool rto)
{
	droce_inflight_defaults(c);
	c->cap = cap;
	c->path_bps = 25000000000ull;
	c->rto = rto;
}

/* 64 KiB WRITEs, 16 posted at a time, over a lossy and reordering link: never more than the cap
 * of PSNs out, whatever the losses and rewinds; without the cap, far more. */
static uint32_t
run_writes(uint32_t cap, double loss, uint64_t *vtime)
{
	struct sim_link_cfg link = scen_clean_link;
	struct droce_inflight_cfg inf;
	struct sim_qp_params p;
	struct scen s;
	uint32_t most, first;
	unsigned int k, done = 0;

	link.loss = loss;
	link.reorder = loss / 2;
	link.reorder_ns = 3 * US;
	sim_qp_params_default(&p);
	first = p.sq_psn;
	inf_cfg(&inf, cap, true);
	setup(&s, &link, &p, &inf);
	for (k = 0; k < 16; k++)
		CU_ASSERT(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, k, k * 65536, 65536,
				    scen_addr(&s, 1, k * 65536), droce_mr_rkey(s.mr[1]), 0) == 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 16, 500 * MS), SIM_DONE);
	for (k = 0; k < s.nwc[0]; k++)
		done += s.wc[0][k].status == DROCE_WC_SUCCESS;
	CU_ASSERT_EQUAL(done, 16);
	CU_ASSERT(memcmp(s.mem[0], s.mem[1], 16 * 65536) == 0);
	most = max_inflight(first);
	*vtime = s.net.now;
	printf("\n    cap %u loss %.1f%%: at most %u PSNs out, %u request packets for 1024, %.3f "
	       "ms",
	       cap, loss * 100, most, wl->n_req, (double)s.net.now / 1e6);
	teardown(&s);
	return most;
}

static void
test_cap_holds(void)
{
	uint64_t t;

	CU_ASSERT(run_writes(12, 0, &t) <= 12);
	CU_ASSERT(run_writes(12, 0.01, &t) <= 12);
	CU_ASSERT(run_writes(12, 0.05, &t) <= 12);
	CU_ASSERT(run_writes(5, 0.02, &t) <= 5);
	/* from the BDP: 25 Gbit/s x 10 us over 1024 B is 31 packets */
	CU_ASSERT(run_writes(DROCE_INFLIGHT_CAP_BDP, 0.01, &t) <= 31);
	/* none: the whole send queue goes out */
	CU_ASSERT(run_writes(0, 0, &t) > 200);
}

/* The cap's info: the BDP in packets, an AckReq every quarter of it. */
static void
test_cap_info(void)
{
	struct droce_inflight_info info;
	struct droce_inflight_cfg inf;
	struct sim_qp_params p;
	struct scen s;

	sim_qp_params_default(&p);
	inf_cfg(&inf, DROCE_INFLIGHT_CAP_BDP, true);
	setup(&s, &scen_clean_link, &p, &inf);
	CU_ASSERT_EQUAL(droce_qp_inflight(s.qp[0], &info), 0);
	CU_ASSERT_EQUAL(info.cap, 31);
	CU_ASSERT_EQUAL(info.ackreq_every, 7);
	CU_ASSERT_EQUAL(info.srtt_ns, 0);
	CU_ASSERT_EQUAL(info.rto_ns, 0); /* no sample: the local ACK timeout alone */
	CU_ASSERT_EQUAL(info.ibta_ns, 4096ull << 8);
	inf.rtt_ns = 40000; /* 4 x the round trip, 4 x the cap */
	CU_ASSERT_EQUAL(droce_qp_set_inflight(s.qp[0], &inf), 0);
	CU_ASSERT_EQUAL(droce_qp_inflight(s.qp[0], &info), 0);
	CU_ASSERT_EQUAL(info.cap, 123);
	inf.cap = 0;
	CU_ASSERT_EQUAL(droce_qp_set_inflight(s.qp[0], &inf), 0);
	CU_ASSERT_EQUAL(droce_qp_inflight(s.qp[0], &info), 0);
	CU_ASSERT_EQUAL(info.cap, 0);
	CU_ASSERT_EQUAL(droce_qp_set_inflight(s.qp[0], NULL), -EINVAL);
	teardown(&s);
}

/* inflight_cap=auto: one-packet WRITEs one after the other over a path of this one-way delay,
 * then the cap the smoothed round trip gives. */
static uint32_t
auto_cap_after(struct scen *s, uint64_t one_way, unsigned int n)
{
	struct droce_inflight_info info;
	unsigned int k, want;

	s->net.node[0].down.cfg.delay_ns = one_way;
	s->net.node[1].down.cfg.delay_ns = one_way;
	for (k = 0; k < n; k++) {
		want = s->nwc[0] + 1;
		CU_ASSERT(scen_post(s, 0, DROCE_WR_RDMA_WRITE, k, 0, 512, scen_addr(s, 1, 0),
				    droce_mr_rkey(s->mr[1]), 0) == 0);
		CU_ASSERT_EQUAL(scen_run_until(s, 0, want, 100 * MS), SIM_DONE);
	}
	CU_ASSERT_EQUAL(droce_qp_inflight(s->qp[0], &info), 0);
	printf("\n    auto, one-way %.0f us: SRTT %.1f us, cap %u", (double)one_way / 1e3,
	       (double)info.srtt_ns / 1e3, info.cap);
	return info.cap;
}

/* The auto cap starts at the configured round trip's BDP (25 Gbit/s x 10 us over 1024 B: 31
 * packets), follows the smoothed round trip up when the path's grows (200 us: 610 packets)
 * and back down to that floor when it shrinks again. */
static void
test_cap_auto(void)
{
	struct droce_inflight_info info;
	struct droce_inflight_cfg inf;
	struct sim_qp_params p;
	struct scen s;
	uint32_t cap;

	sim_qp_params_default(&p);
	inf_cfg(&inf, DROCE_INFLIGHT_CAP_AUTO, true);
	setup(&s, &scen_clean_link, &p, &inf);
	CU_ASSERT_EQUAL(droce_qp_inflight(s.qp[0], &info), 0);
	CU_ASSERT_EQUAL(info.cap, 31); /* no sample yet */
	CU_ASSERT_EQUAL(info.ackreq_every, 7);
	/* 2 us each way: a round trip below the floor's 10 us */
	CU_ASSERT_EQUAL(auto_cap_after(&s, 2 * US, 40), 31);
	cap = auto_cap_after(&s, 100 * US, 60);
	CU_ASSERT(cap >= 600 && cap <= 640);
	CU_ASSERT_EQUAL(droce_qp_inflight(s.qp[0], &info), 0);
	CU_ASSERT_EQUAL(info.ackreq_every, cap / 4);
	CU_ASSERT_EQUAL(auto_cap_after(&s, 2 * US, 60), 31);
	/* rto off: the auto cap still samples round trips */
	inf.rto = false;
	CU_ASSERT_EQUAL(droce_qp_set_inflight(s.qp[0], &inf), 0);
	cap = auto_cap_after(&s, 100 * US, 60);
	CU_ASSERT(cap >= 600 && cap <= 640);
	CU_ASSERT_EQUAL(s.nwc[0], 220);
	for (unsigned int k = 0; k < s.nwc[0]; k++)
		CU_ASSERT(s.wc[0][k].status == DROCE_WC_SUCCESS);
	teardown(&s);
}

/* Warm up: 20 one-packet WRITEs one after the other give the estimator its samples. */
static void
warm_up(struct scen *s)
{
	unsigned int k;

	for (k = 0; k < 20; k++) {
		CU_ASSERT(scen_post(s, 0, DROCE_WR_RDMA_WRITE, 100 + k, 0, 512, scen_addr(s, 1, 0),
				    droce_mr_rkey(s->mr[1]), 0) == 0);
		CU_ASSERT_EQUAL(scen_run_until(s, 0, k + 1, 10 * MS), SIM_DONE);
	}
}

/* A 4-packet WRITE whose last packet is lost: nothing after it draws a NAK, so only a timer
 * resends it. Returns the time from posting to the completion. */
static uint64_t
lost_tail(bool rto, uint64_t *early, uint64_t *timeouts)
{
	struct droce_inflight_info info;
	struct droce_inflight_cfg inf;
	struct sim_qp_params p;
	struct scen s;
	uint64_t t0, dt;

	sim_qp_params_default(&p); /* timeout 8: 1.05 ms */
	inf_cfg(&inf, DROCE_INFLIGHT_CAP_BDP, rto);
	setup(&s, &scen_clean_link, &p, &inf);
	warm_up(&s);
	CU_ASSERT_EQUAL(droce_qp_inflight(s.qp[0], &info), 0);
	if (rto) {
		CU_ASSERT(info.srtt_ns > 4 * US && info.srtt_ns < 10 * US);
		CU_ASSERT_EQUAL(info.rto_ns, DROCE_INFLIGHT_RTO_MIN_NS);
	}
	wl->drop_psn = droce_psn_add(p.sq_psn, 20 + 3);
	wl->drop_armed = true;
	t0 = s.net.now;
	CU_ASSERT(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 7, 4096, 4096, scen_addr(&s, 1, 4096),
			    droce_mr_rkey(s.mr[1]), 0) == 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 21, 50 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 20, 7, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(wl->dropped, 1);
	CU_ASSERT(memcmp(s.mem[0] + 4096, s.mem[1] + 4096, 4096) == 0);
	dt = s.wc_t[0][20] - t0;
	*early = scen_cnt(&s, 0, DROCE_CNT_RTO_RESEND);
	*timeouts = scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR);
	printf("\n    RTO %s: lost tail recovered in %.1f us (%llu early resends, %llu local ACK "
	       "timeouts)",
	       rto ? "on" : "off", (double)dt / 1e3, (unsigned long long)*early,
	       (unsigned long long)*timeouts);
	teardown(&s);
	return dt;
}

static void
test_lost_tail(void)
{
	uint64_t early, to, dt;

	dt = lost_tail(true, &early, &to);
	/* about an RTO (20 us, the floor) and a round trip, not 1.05 ms */
	CU_ASSERT(dt >= DROCE_INFLIGHT_RTO_MIN_NS);
	CU_ASSERT(dt < DROCE_INFLIGHT_RTO_MIN_NS + 20 * US);
	CU_ASSERT_EQUAL(early, 1);
	CU_ASSERT_EQUAL(to, 0);
	dt = lost_tail(false, &early, &to);
	CU_ASSERT(dt >= 4096ull << 8);
	CU_ASSERT(dt < (4096ull << 8) + 20 * US);
	CU_ASSERT_EQUAL(early, 0);
	CU_ASSERT_EQUAL(to, 1);
}

/* Round trips of 2 ms with a 2.1 ms local ACK timeout (code 9), and with one of 33 ms (code 13),
 * under loss: whatever the samples, the RTO is never above the IBTA bound. (No jitter: on the
 * simulated wire it reorders, every rewind leaves nothing timed, Karn's rule.) */
static void
rto_bound(uint8_t timeout, uint64_t delay)
{
	struct sim_link_cfg link = scen_clean_link;
	struct droce_inflight_info info;
	struct droce_inflight_cfg inf;
	struct sim_qp_params p;
	struct scen s;
	uint64_t most = 0, bound = 4096ull << timeout, samples = 0;
	unsigned int k, posted = 0;

	link.delay_ns = delay;
	link.loss = 0.05;
	sim_qp_params_default(&p);
	p.timeout = timeout;
	p.retry_cnt = 7;
	inf_cfg(&inf, DROCE_INFLIGHT_CAP_BDP, true);
	setup(&s, &link, &p, &inf);
	for (k = 0; k < 200 && s.nwc[0] < SCEN_WC - 8; k++) {
		while (posted < s.nwc[0] + 8 && posted < SCEN_WC - 8) {
			CU_ASSERT(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, posted, 0, 3000,
					    scen_addr(&s, 1, 0), droce_mr_rkey(s.mr[1]), 0) == 0);
			posted++;
		}
		s.wake = s.net.now + delay / 4;
		scen_run_until(&s, 0, SCEN_WC, delay / 4);
		CU_ASSERT_EQUAL_FATAL(droce_qp_inflight(s.qp[0], &info), 0);
		CU_ASSERT(info.rto_ns <= bound);
		CU_ASSERT_EQUAL(info.ibta_ns, bound);
		if (info.rto_ns > most)
			most = info.rto_ns;
		samples += info.srtt_ns != 0;
	}
	printf("\n    timeout %u (%.3f ms), one-way %.3f ms: RTO at most %.3f ms, %llu WRs done",
	       timeout, (double)bound / 1e6, (double)delay / 1e6, (double)most / 1e6,
	       (unsigned long long)s.nwc[0]);
	CU_ASSERT(samples > 0);
	CU_ASSERT(most > 0);
	for (k = 0; k < s.nwc[0]; k++)
		CU_ASSERT(s.wc[0][k].status == DROCE_WC_SUCCESS);
	teardown(&s);
}

static void
test_rto_bound(void)
{
	rto_bound(9, 1 * MS);
	rto_bound(13, 1 * MS);
}

/* The peer vanishes after the estimator has samples: early resends come every RTO (doubling),
 * but the error comes as IBTA says, after retry_cnt + 1 local ACK timeouts, no sooner. */
static void
test_retry_cnt_unchanged(void)
{
	struct droce_inflight_cfg inf;
	struct sim_qp_params p;
	struct scen s;
	uint64_t t_out = 4096ull << 10, t0;

	sim_qp_params_default(&p);
	p.timeout = 10; /* 4.19 ms */
	p.retry_cnt = 3;
	inf_cfg(&inf, DROCE_INFLIGHT_CAP_BDP, true);
	setup(&s, &scen_clean_link, &p, &inf);
	warm_up(&s);
	s.net.node[1].down.cfg.down = true;
	t0 = s.net.now;
	CU_ASSERT(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 10, 0, 2000, scen_addr(&s, 1, 0),
			    droce_mr_rkey(s.mr[1]), 0) == 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 21, 1000 * MS), SIM_DONE);
	scen_expect_wc(&s, 0, 20, 10, DROCE_WC_RETRY_EXC_ERR);
	printf("\n    RETRY_EXC_ERR after %.3f ms (IBTA: %.3f ms), %llu early resends",
	       (double)(s.wc_t[0][20] - t0) / 1e6, (double)(4 * t_out) / 1e6,
	       (unsigned long long)scen_cnt(&s, 0, DROCE_CNT_RTO_RESEND));
	CU_ASSERT(s.wc_t[0][20] - t0 >= 4 * t_out);
	CU_ASSERT(s.wc_t[0][20] - t0 <= 4 * t_out + t_out / 10);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 4);
	CU_ASSERT_EQUAL(scen_cnt(&s, 0, DROCE_CNT_RETRY_EXCEEDED_ERR), 1);
	/* after 20 us, 40, 80, ... 2.56 ms: 7 before the first timeout, then fewer (backed off) */
	CU_ASSERT(scen_cnt(&s, 0, DROCE_CNT_RTO_RESEND) >= 7);
	teardown(&s);
}

/* Two QPs with a WRITE each in flight when the peer goes quiet: one QP's early resends probe
 * the silence, the other's wait (rto_deferred) instead of resending into it too; once the peer
 * answers again the waiting one resends at its next RTO, and both complete before any local ACK
 * timeout. */
static void
test_quiet_path_one_probe(void)
{
	struct droce_inflight_cfg inf;
	struct droce_qp_init_attr ia;
	struct droce_qp *b[2], *a[2];
	struct sim_qp_params p;
	uint64_t t0, res_a, res_b, def_a, def_b;
	unsigned int n, k;
	struct scen s;
	int err = 0;

	sim_qp_params_default(&p);
	p.timeout = 10; /* 4.19 ms: the early resends alone act in the first 2 ms */
	inf_cfg(&inf, DROCE_INFLIGHT_CAP_BDP, true);
	setup(&s, &scen_clean_link, &p, &inf);
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = DROCE_QPT_RC;
	ia.cap.max_send_wr = 32;
	ia.cap.max_recv_wr = 32;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	for (n = 0; n < 2; n++) {
		ia.send_cq = ia.recv_cq = s.cq[n];
		b[n] = droce_qp_create(s.pd[n], &ia, &err);
		CU_ASSERT_FATAL(b[n] != NULL);
		CU_ASSERT_FATAL(droce_qp_set_inflight(b[n], &inf) == 0);
		a[n] = s.qp[n];
	}
	for (n = 0; n < 2; n++)
		CU_ASSERT_FATAL(sim_qp_bring_up(b[n], DROCE_QPT_RC, &s.ep[!n], droce_qp_num(b[!n]),
						&p) == 0);
	/* both learn a round trip: 20 WRITEs on each, one after the other */
	warm_up(&s);
	s.qp[0] = b[0];
	s.qp[1] = b[1];
	for (k = 0; k < 20; k++) {
		CU_ASSERT(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 200 + k, 0, 512,
				    scen_addr(&s, 1, 0), droce_mr_rkey(s.mr[1]), 0) == 0);
		CU_ASSERT_EQUAL(scen_run_until(&s, 0, 21 + k, 10 * MS), SIM_DONE);
	}
	s.net.node[1].down.cfg.down = true;
	t0 = s.net.now;
	s.qp[0] = a[0];
	CU_ASSERT(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 1, 0, 512, scen_addr(&s, 1, 0),
			    droce_mr_rkey(s.mr[1]), 0) == 0);
	s.qp[0] = b[0];
	CU_ASSERT(scen_post(&s, 0, DROCE_WR_RDMA_WRITE, 2, 512, 512, scen_addr(&s, 1, 512),
			    droce_mr_rkey(s.mr[1]), 0) == 0);
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 42, 2 * MS), SIM_TIME_LIMIT);
	res_a = droce_qp_counter(a[0], DROCE_CNT_RTO_RESEND);
	res_b = droce_qp_counter(b[0], DROCE_CNT_RTO_RESEND);
	def_a = droce_qp_counter(a[0], DROCE_CNT_RTO_DEFERRED);
	def_b = droce_qp_counter(b[0], DROCE_CNT_RTO_DEFERRED);
	printf("\n    peer quiet 2 ms: early resends %llu and %llu, deferred %llu and %llu",
	       (unsigned long long)res_a, (unsigned long long)res_b, (unsigned long long)def_a,
	       (unsigned long long)def_b);
	/* the first to fire probes (20 us, 40, 80 ... within 2 ms); the other never resends */
	CU_ASSERT(res_a + res_b >= 4);
	CU_ASSERT(res_a == 0 || res_b == 0);
	CU_ASSERT(res_a == 0 ? def_a >= 4 && def_b == 0 : def_b >= 4 && def_a == 0);
	s.net.node[1].down.cfg.down = false;
	CU_ASSERT_EQUAL(scen_run_until(&s, 0, 42, 10 * MS), SIM_DONE);
	CU_ASSERT_EQUAL(s.nwc[0], 42);
	for (k = 40; k < 42 && k < s.nwc[0]; k++) {
		CU_ASSERT_EQUAL(s.wc[0][k].status, DROCE_WC_SUCCESS);
		CU_ASSERT(s.wc_t[0][k] - t0 < 4096ull << 10);
	}
	CU_ASSERT(s.wc[0][40].wr_id + s.wc[0][41].wr_id == 3); /* wr_ids 1 and 2 */
	/* the one that waited resent once the peer answered the probe */
	CU_ASSERT(droce_qp_counter(res_a == 0 ? a[0] : b[0], DROCE_CNT_RTO_RESEND) >= 1);
	CU_ASSERT_EQUAL(droce_qp_counter(a[0], DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
	CU_ASSERT_EQUAL(droce_qp_counter(b[0], DROCE_CNT_LOCAL_ACK_TIMEOUT_ERR), 0);
	for (n = 0; n < 2; n++) {
		s.qp[n] = a[n];
		droce_qp_destroy(b[n]);
	}
	teardown(&s);
}

DROCE_TEST_MAIN("sim_inflight", DROCE_TEST(test_cap_holds), DROCE_TEST(test_cap_info),
		DROCE_TEST(test_cap_auto), DROCE_TEST(test_lost_tail), DROCE_TEST(test_rto_bound),
		DROCE_TEST(test_retry_cnt_unchanged), DROCE_TEST(test_quiet_path_one_probe))
