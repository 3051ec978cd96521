/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One run: build two endpoints on a simulated network, bring up the QPs, post the generated
 * workload as the send queues allow, poll and check every completion after each event, then
 * drain, look for stray completions, and compare both memories with the model.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "droce_counters.h"
#include "droce_drop.h"
#include "droce_ext.h"

#include "sim_model.h"

void
sim_cfg_default(struct sim_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = 1;
	cfg->link.rate_bps = 25000000000ull;
	cfg->link.delay_ns = 2000;
	cfg->ops = SIM_OPS_ALL;
	cfg->msgs = 200;
	cfg->size_min = 0;
	cfg->size_max = 4096;
	cfg->qps = 2;
	cfg->mtu = DROCE_MTU_1024;
	cfg->qpt = DROCE_QPT_RC;
	cfg->time_limit_ns = 60ull * 1000000000ull;
	cfg->event_limit = 20000000;
	cfg->sq_depth = 32;
	cfg->rq_depth = 32;
	cfg->timeout = 8;
	cfg->psn = 0xFFFFF0;
	cfg->min_rnr_timer = 1;
	droce_inflight_defaults(&cfg->inflight);
}

unsigned int
sim_ops_parse(const char *s)
{
	unsigned int mask = 0;
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "write") == 0)
			mask |= 1u << SIM_OP_WRITE;
		else if (strcmp(tok, "write_imm") == 0)
			mask |= 1u << SIM_OP_WRITE_IMM;
		else if (strcmp(tok, "send") == 0)
			mask |= 1u << SIM_OP_SEND;
		else if (strcmp(tok, "send_imm") == 0)
			mask |= 1u << SIM_OP_SEND_IMM;
		else if (strcmp(tok, "imm") == 0)
			mask |= 1u << SIM_OP_WRITE_IMM | 1u << SIM_OP_SEND_IMM;
		else if (strcmp(tok, "read") == 0)
			mask |= 1u << SIM_OP_READ;
		else if (strcmp(tok, "cas") == 0)
			mask |= 1u << SIM_OP_CAS;
		else if (strcmp(tok, "fadd") == 0)
			mask |= 1u << SIM_OP_FADD;
		else if (strcmp(tok, "awrite") == 0)
			mask |= 1u << SIM_OP_AWRITE;
		else if (strcmp(tok, "atomic") == 0)
			mask |= 1u << SIM_OP_CAS | 1u << SIM_OP_FADD | 1u << SIM_OP_AWRITE;
		else if (strcmp(tok, "all") == 0)
			mask |= SIM_OPS_ALL;
		else
			return 0;
	}
	return mask;
}

static enum droce_wr_opcode
wr_opcode(enum sim_op op)
{
	static const enum droce_wr_opcode map[SIM_OP_MAX] = {
		DROCE_WR_RDMA_WRITE,
		DROCE_WR_RDMA_WRITE_WITH_IMM,
		DROCE_WR_SEND,
		DROCE_WR_SEND_WITH_IMM,
		DROCE_WR_RDMA_READ,
		DROCE_WR_ATOMIC_CMP_AND_SWP,
		DROCE_WR_ATOMIC_FETCH_AND_ADD,
		DROCE_WR_ATOMIC_WRITE,
	};

	return map[op];
}

static int
post_one(struct sim_world *w, unsigned int n, unsigned int q, uint32_t idx)
{
	const struct sim_wr *wr = &w->wr[idx];
	struct sim_node_mem *me = &w->node[n], *pn = &w->node[!n];
	struct sim_side *s = &me->side[q], *ps = &pn->side[q];
	struct droce_sge sge[SIM_SGE_CAP];
	struct droce_send_wr swr, *bad = NULL;
	uint32_t lkey = droce_mr_lkey(s->mr), rkey = droce_mr_rkey(ps->mr);
	unsigned int i;
	int rc;

	memset(&swr, 0, sizeof(swr));
	swr.wr_id = idx;
	swr.opcode = wr_opcode((enum sim_op)wr->op);
	swr.send_flags =
		(wr->signaled ? DROCE_SEND_SIGNALED : 0) | (wr->fence ? DROCE_SEND_FENCE : 0);
	if (wr->solicited &&
	    (wr->op == SIM_OP_SEND || wr->op == SIM_OP_SEND_IMM || wr->op == SIM_OP_WRITE_IMM))
		swr.send_flags |= DROCE_SEND_SOLICITED;
	swr.imm_data = wr->imm;
	swr.sg_list = sge;
	swr.num_sge = wr->nsge;
	for (i = 0; i < wr->nsge; i++) {
		sge[i].addr = (uintptr_t)(me->mem + wr->sge[i].off);
		sge[i].length = wr->sge[i].len;
		sge[i].lkey = lkey;
	}
	if (wr->inl && wr->len != 0) {
		/* Inline data is copied at post time (IBTA 10.8.3.3 / verbs): post from a scratch
		 * buffer and scribble over it right after. */
		sim_wr_payload(w, wr, me->mem + s->scratch);
		sge[0].addr = (uintptr_t)(me->mem + s->scratch);
		sge[0].length = wr->len;
		swr.num_sge = 1;
		swr.send_flags |= DROCE_SEND_INLINE;
	}
	switch (wr->op) {
	case SIM_OP_WRITE:
	case SIM_OP_WRITE_IMM:
	case SIM_OP_READ:
		swr.wr.rdma.remote_addr = (uintptr_t)(pn->mem + wr->roff);
		swr.wr.rdma.rkey = rkey;
		break;
	case SIM_OP_CAS:
	case SIM_OP_FADD:
		swr.wr.atomic.remote_addr = (uintptr_t)(pn->mem + wr->roff);
		swr.wr.atomic.rkey = rkey;
		swr.wr.atomic.compare_add = wr->op == SIM_OP_CAS ? wr->cmp : wr->swap_add;
		swr.wr.atomic.swap = wr->swap_add;
		break;
	case SIM_OP_AWRITE:
		swr.wr.atomic.remote_addr = (uintptr_t)(pn->mem + wr->roff);
		swr.wr.atomic.rkey = rkey;
		swr.wr.atomic.swap = wr->swap_add; /* its 8 bytes, in memory order */
		break;
	default:
		if (w->cfg->qpt == DROCE_QPT_UD) {
			swr.wr.ud.ah = me->ah;
			swr.wr.ud.remote_qpn = ps->qpn;
			swr.wr.ud.remote_qkey = 0x11111111;
		}
		break;
	}
	rc = droce_post_send(s->qp, &swr, &bad);
	w->wr[idx].t_post = w->net.now;
	if (wr->inl)
		memset(me->mem + s->scratch, 0xEE, SIM_INLINE_MAX);
	if (rc != 0)
		sim_fail(w, "n%u qp%u: post_send wr_id=%u (%s len %u%s) failed: %d", n, q, idx,
			 sim_op_name(wr->op), wr->len, wr->inl ? " inline" : "", rc);
	return rc;
}

static void
post_sends(struct sim_world *w)
{
	unsigned int n, q;

	for (n = 0; n < 2; n++)
		for (q = 0; q < w->cfg->qps; q++) {
			struct sim_side *s = &w->node[n].side[q];

			while (!w->failed && s->next_post < s->n_wr &&
			       s->next_post - s->next_done < w->cfg->sq_depth - 1) {
				if (post_one(w, n, q, s->wr[s->next_post]) != 0)
					return;
				s->next_post++;
			}
		}
}

static void
app_step(void *arg, uint64_t now)
{
	struct sim_world *w = arg;

	(void)now;
	sim_poll_all(w);
	if (!w->draining)
		post_sends(w);
}

static bool
app_done(void *arg)
{
	return sim_work_done(arg);
}

static bool
app_never(void *arg)
{
	const struct sim_world *w = arg;

	return w->failed;
}

static int
setup(struct sim_world *w)
{
	const unsigned int all_access = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
					DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC;
	const struct sim_cfg *c = w->cfg;
	struct droce_inflight_cfg inf;
	struct sim_qp_params qp;
	unsigned int n, q;
	int err = 0, rc;

	sim_qp_params_default(&qp);
	qp.mtu = c->mtu;
	qp.timeout = c->timeout;
	qp.min_rnr_timer = c->min_rnr_timer;
	if (c->rd_atomic != 0)
		qp.max_rd_atomic = qp.max_dest_rd_atomic = c->rd_atomic;
	for (n = 0; n < 2; n++) {
		/* Ethernet MTU large enough for the path MTU plus headers. */
		rc = sim_ep_create(&w->ep[n], &w->net, c->seed, &c->link, w->mtu_bytes + 200);
		if (rc != 0) {
			sim_fail(w, "n%u: droce_dev_create: %d", n, rc);
			return rc;
		}
		w->ep[n].tx_busy = c->tx_busy;
		/* the algorithm's defaults for the port's rate, and the CNP interval that goes
		 * with DCQCN's, as the runtime sets them from link_mbps */
		if (c->cc != NULL) {
			union droce_cc_params ccp;

			droce_cc_defaults(c->cc, &ccp, c->link.rate_bps);
			droce_dev_set_cc(w->ep[n].dev, c->cc, &ccp);
			if (c->cc == &droce_cc_dcqcn)
				droce_dev_set_cnp_interval(
					w->ep[n].dev,
					droce_cc_dcqcn_cnp_interval(c->link.rate_bps));
		} else {
			droce_dev_set_cc(w->ep[n].dev, NULL, NULL);
		}
		inf = c->inflight;
		if (inf.path_bps == 0)
			inf.path_bps = c->link.rate_bps;
		droce_dev_set_inflight(w->ep[n].dev, &inf);
		droce_dev_set_recovery(w->ep[n].dev, c->sr || ((c->sr_nodes >> n) & 1) ?
							     DROCE_RECOVERY_SR :
							     DROCE_RECOVERY_GBN);
	}
	for (n = 0; n < 2; n++) {
		struct sim_node_mem *m = &w->node[n];
		struct droce_av av;

		m->pd = droce_pd_alloc(w->ep[n].dev, &err);
		if (m->pd == NULL)
			goto fail;
		for (q = 0; q < c->qps; q++) {
			m->side[q].mr = droce_mr_reg(m->pd, m->mem + m->side[q].blk,
						     m->side[q].blk_len, all_access, &err);
			if (m->side[q].mr == NULL)
				goto fail;
		}
		if (m->n_srecv != 0) {
			m->mr = droce_mr_reg(m->pd, m->mem + m->srslot, m->len - m->srslot,
					     DROCE_ACCESS_LOCAL_WRITE, &err);
			if (m->mr == NULL)
				goto fail;
		}
		if (c->qpt == DROCE_QPT_UD) {
			sim_ep_av(&w->ep[!n], &av);
			m->ah = droce_ah_create(m->pd, &av, &err);
			if (m->ah == NULL)
				goto fail;
		}
		if (c->srq) {
			struct droce_srq_attr sa = { .max_wr = c->rq_depth * c->qps, .max_sge = 4 };

			m->srq = droce_srq_create(m->pd, &sa, NULL, &err);
			if (m->srq == NULL)
				goto fail;
		}
		if (c->shared_cq) {
			m->cq = droce_cq_create(
				w->ep[n].dev, c->qps * 2 * (c->sq_depth + c->rq_depth), NULL, &err);
			if (m->cq == NULL)
				goto fail;
		}
		for (q = 0; q < c->qps; q++) {
			struct sim_side *s = &m->side[q];
			struct droce_qp_init_attr ia;

			if (!c->shared_cq) {
				s->scq = droce_cq_create(w->ep[n].dev, 2 * c->sq_depth, NULL, &err);
				s->rcq = droce_cq_create(w->ep[n].dev, 2 * c->rq_depth, NULL, &err);
				if (s->scq == NULL || s->rcq == NULL)
					goto fail;
			}
			memset(&ia, 0, sizeof(ia));
			ia.qp_type = c->qpt;
			ia.send_cq = c->shared_cq ? m->cq : s->scq;
			ia.recv_cq = c->shared_cq ? m->cq : s->rcq;
			ia.srq = m->srq;
			ia.cap.max_send_wr = c->sq_depth;
			ia.cap.max_recv_wr = c->rq_depth;
			ia.cap.max_send_sge = 4;
			ia.cap.max_recv_sge = 4;
			ia.cap.max_inline_data = SIM_INLINE_MAX;
			s->qp = droce_qp_create(m->pd, &ia, &err);
			if (s->qp == NULL)
				goto fail;
			s->qpn = droce_qp_num(s->qp);
		}
	}
	for (n = 0; n < 2; n++)
		for (q = 0; q < c->qps; q++) {
			struct sim_side *s = &w->node[n].side[q];

			/* Near 2^24 by default: the 24-bit PSN wraps early in the run. */
			qp.sq_psn = (c->psn + q * 0x1000 + n) & 0xFFFFFF;
			qp.rq_psn = (c->psn + q * 0x1000 + !n) & 0xFFFFFF;
			rc = sim_qp_bring_up(s->qp, c->qpt, &w->ep[!n], w->node[!n].side[q].qpn,
					     &qp);
			if (rc != 0) {
				sim_fail(w, "n%u qp%u: bring-up: %d", n, q, rc);
				return rc;
			}
		}
	return 0;
fail:
	sim_fail(w, "object creation failed: errno %d", err);
	return -err;
}

static void
teardown(struct sim_world *w)
{
	unsigned int n, q;

	for (n = 0; n < 2; n++) {
		struct sim_node_mem *m = &w->node[n];

		if (w->ep[n].dev == NULL)
			continue;
		for (q = 0; q < w->cfg->qps; q++) {
			if (m->side[q].qp != NULL)
				droce_qp_destroy(m->side[q].qp);
			if (m->side[q].scq != NULL)
				droce_cq_destroy(m->side[q].scq);
			if (m->side[q].rcq != NULL)
				droce_cq_destroy(m->side[q].rcq);
		}
		if (m->cq != NULL)
			droce_cq_destroy(m->cq);
		if (m->srq != NULL)
			droce_srq_destroy(m->srq);
		if (m->ah != NULL)
			droce_ah_destroy(m->ah);
		if (m->mr != NULL)
			droce_mr_dereg(m->mr);
		for (q = 0; q < w->cfg->qps; q++)
			if (m->side[q].mr != NULL)
				droce_mr_dereg(m->side[q].mr);
		if (m->pd != NULL)
			droce_pd_dealloc(m->pd);
		sim_ep_destroy(&w->ep[n]);
	}
}

static uint64_t
dev_sum(const struct sim_world *w, enum droce_cnt c)
{
	return droce_dev_counter(w->ep[0].dev, c) + droce_dev_counter(w->ep[1].dev, c);
}

/* The engine's own counters must tell the story the wire tells. */
static void
check_counters(struct sim_world *w)
{
	const struct sim_wire_stats *st = &w->trace.st;
	struct {
		const char *what;
		uint64_t engine, wire;
	} c[] = {
		{ "packets sent", dev_sum(w, DROCE_CNT_SENT_PKTS), st->frames },
		{ "packets retransmitted", dev_sum(w, DROCE_CNT_RETRANSMITTED_PKTS),
		  st->retransmits },
		{ "NAKs sent (sequence, invalid, access, operational, RNR)",
		  dev_sum(w, DROCE_CNT_NAKS_SENT), st->naks + st->rnr_naks },
		{ "RNR NAKs sent", dev_sum(w, DROCE_CNT_SEND_RNR_ERR), st->rnr_naks },
	};
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (c[i].engine != c[i].wire) {
			sim_fail(w, "engine counts %" PRIu64 " %s, the wire saw %" PRIu64,
				 c[i].engine, c[i].what, c[i].wire);
			return;
		}
	/* (selective repeat sends a selective NAK per request kept past a gap, by design) */
	if (st->seq_nak_unacked != 0 && !w->cfg->sr)
		sim_fail(w, "%" PRIu64 " sequence NAKs with no ACK since the previous one",
			 st->seq_nak_unacked);
}

static void
describe_hang(struct sim_world *w, enum sim_result r)
{
	unsigned int n, q;

	for (n = 0; n < 2; n++)
		for (q = 0; q < w->cfg->qps; q++) {
			const struct sim_side *s = &w->node[n].side[q];

			if (s->next_done != s->n_wr ||
			    (w->cfg->qpt == DROCE_QPT_RC && s->recv_done != s->n_in)) {
				sim_fail(w,
					 "%s at %.3f ms after %" PRIu64 " events: n%u qp%u has "
					 "%u/%u WRs completed (%u posted), %u/%u receives",
					 sim_result_name(r), (double)w->net.now / 1e6,
					 w->net.events, n, q, s->next_done, s->n_wr, s->next_post,
					 s->recv_done, s->n_in);
				return;
			}
		}
	sim_fail(w, "%s at %.3f ms", sim_result_name(r), (double)w->net.now / 1e6);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Completion time of every send WR that completed: its median and 99th percentile. */
static void
latency(struct sim_world *w)
{
	uint64_t *d = calloc(w->n_wr + 1, sizeof(*d));
	uint32_t i, n = 0;

	if (d == NULL)
		return;
	for (i = 0; i < w->n_wr; i++)
		if (w->wr[i].t_done >= w->wr[i].t_post && w->wr[i].t_done != 0) {
			d[n++] = w->wr[i].t_done - w->wr[i].t_post;
			if (w->wr[i].t_done > w->sum->last_done_ns)
				w->sum->last_done_ns = w->wr[i].t_done;
		}
	if (n != 0) {
		qsort(d, n, sizeof(*d), cmp_u64);
		w->sum->lat_p50_ns = d[n / 2];
		w->sum->lat_p99_ns = d[(n * 99 + 99) / 100 - 1];
	}
	free(d);
}

int
sim_run(const struct sim_cfg *cfg, struct sim_summary *sum)
{
	struct sim_world *w = calloc(1, sizeof(*w));
	struct sim_app app;
	enum sim_result r;
	unsigned int n;

	memset(sum, 0, sizeof(*sum));
	sum->seed = cfg->seed;
	if (w == NULL) {
		snprintf(sum->mismatch, sizeof(sum->mismatch), "out of memory");
		return 1;
	}
	w->cfg = cfg;
	w->sum = sum;
	w->mtu_bytes = 128u << cfg->mtu;
	sim_rng_seed(&w->rng, cfg->seed, 1);
	sim_rng_seed(&w->flags_rng, cfg->seed, 2);
	sim_net_init(&w->net, cfg->seed);
	sim_trace_init(&w->trace, cfg->verbose, stdout, w->mtu_bytes);
	w->net.tx_hook = sim_trace_hook;
	w->net.tx_hook_arg = &w->trace;
	if (cfg->pcap != NULL && sim_trace_pcap_open(&w->trace, cfg->pcap) != 0)
		sim_fail(w, "cannot write %s", cfg->pcap);
	w->net.time_limit = cfg->time_limit_ns;
	w->net.event_limit = cfg->event_limit;

	if (sim_gen(w) != 0) {
		sim_fail(w, "bad workload configuration (ops valid for this QP type?)");
		goto out;
	}
	if (setup(w) != 0)
		goto out;
	app.step = app_step;
	app.done = app_done;
	app.arg = w;
	app.wake = UINT64_MAX;
	w->app = &app;
	sim_poll_all(w); /* posts the first receives */
	post_sends(w);
	r = sim_net_run(&w->net, &app);
	if (!w->failed && r != SIM_DONE)
		describe_hang(w, r);
	if (!w->failed) {
		/* Drain: let late ACKs and timers play out, then nothing more may complete. */
		w->draining = true;
		app.done = app_never;
		w->net.time_limit = w->net.now + 100000000ull;
		w->net.event_limit = w->net.events + 1000000;
		sim_net_run(&w->net, &app);
		sim_poll_all(w);
	}
	sum->vtime_ns = w->net.now;
	for (n = 0; n < w->n_wr; n++)
		if (w->wr[n].op == SIM_OP_READ)
			sum->read_needed +=
				w->wr[n].len ? (w->wr[n].len + w->mtu_bytes - 1) / w->mtu_bytes : 1;
	sim_count_missing(w);
	if (!w->failed && cfg->qpt == DROCE_QPT_RC && sum->msgs_missing != 0)
		sim_fail(w, "%" PRIu64 " RC messages never reached a receive", sum->msgs_missing);
	if (!w->failed && cfg->qpt != DROCE_QPT_RC) {
		/* Unreliable service loses a message only for a reason: each frame the network
		 * lost, corrupted or (UC) delivered late costs at most one message, each receive the
		 * responder lacked one datagram; and only the network makes duplicates. */
		uint64_t bound = 0, dups = 0;

		for (n = 0; n < w->net.n_nodes; n++) {
			const struct sim_port_stats *p = &w->net.node[n].down.st;

			bound += p->lost + p->burst_lost + p->tail_drop + p->down_lost +
				 p->corrupted;
			if (cfg->qpt == DROCE_QPT_UC)
				bound += p->late;
			dups += p->duplicated;
		}
		for (n = 0; n < 2; n++)
			bound += droce_dev_drops(w->ep[n].dev, DROCE_DROP_NO_RWQE);
		if (sum->msgs_missing > bound)
			sim_fail(w,
				 "%" PRIu64
				 " messages missing, but the network lost or damaged only "
				 "%" PRIu64 " frames and no receive was lacking otherwise",
				 sum->msgs_missing, bound);
		else if (sum->msgs_dup > dups)
			sim_fail(w,
				 "%" PRIu64
				 " datagrams received twice, the network duplicated %" PRIu64,
				 sum->msgs_dup, dups);
	}
	sim_check_memory(w);
	sim_check_events(w);
	if (!w->failed)
		check_counters(w);
	sum->sr_kept = dev_sum(w, DROCE_CNT_SR_KEPT);
	sum->sr_peer = dev_sum(w, DROCE_CNT_SR_PEER);
	for (n = 0; n < 2 && w->ep[n].dev != NULL; n++) {
		struct sim_ep *ep = &w->ep[n];
		uint64_t icrc = droce_dev_drops(ep->dev, DROCE_DROP_ICRC);

		/* Every frame corrupted on the wire is caught by the ICRC check and counted
		 * (IBTA A17.3.3); nothing in flight is left when the run drained. */
		sum->icrc_drops += icrc;
		sum->rto_resends += droce_dev_counter(ep->dev, DROCE_CNT_RTO_RESEND);
		if (w->net.heap.n == 0 && icrc != w->net.node[ep->idx].down.st.corrupted)
			sim_fail(w,
				 "n%u: %" PRIu64
				 " frames corrupted on the wire, engine counted %" PRIu64
				 " ICRC drops",
				 n, w->net.node[ep->idx].down.st.corrupted, icrc);

		if (ep->tx_foreign != 0)
			sim_fail(w,
				 "n%u: tx_send of a buffer not from tx_alloc, or twice (%" PRIu64
				 " times)",
				 n, ep->tx_foreign);
		else if (ep->tx_overrun != 0)
			sim_fail(w,
				 "n%u: engine sent more bytes than it allocated (%" PRIu64
				 " times)",
				 n, ep->tx_overrun);
		else if (ep->n_out != 0)
			sim_fail(w, "n%u: %u transmit buffers allocated and never sent", n,
				 ep->n_out);
	}
	latency(w);
out:
	sum->events = w->net.events;
	sum->wire = w->trace.st;
	for (n = 0; n < w->net.n_nodes; n++) {
		const struct sim_port_stats *p = &w->net.node[n].down.st;
		uint64_t *d = (uint64_t *)&sum->net;
		const uint64_t *s = (const uint64_t *)p;
		size_t i;

		for (i = 0; i < sizeof(*p) / sizeof(uint64_t); i++)
			d[i] += s[i];
	}
	sum->ok = !w->failed;
	sim_trace_pcap_close(&w->trace);
	teardown(w);
	sim_net_fini(&w->net);
	sim_gen_free(w);
	free(w);
	return sum->ok ? 0 : 1;
}

void
sim_summary_print(const struct sim_cfg *cfg, const struct sim_summary *s, FILE *out)
{
	static const char *const qpt[] = {
		[DROCE_QPT_RC] = "rc", [DROCE_QPT_UC] = "uc", [DROCE_QPT_UD] = "ud"
	};
	unsigned int i;
	int first;

	fprintf(out,
		"seed=%" PRIu64 " %s msgs=%" PRIu64 " bytes=%" PRIu64 " recvs=%" PRIu64
		" pkts=%" PRIu64 " retx=%" PRIu64 " naks=%" PRIu64 " rnr=%" PRIu64,
		s->seed, qpt[cfg->qpt], s->msgs, s->bytes, s->recvs, s->wire.req_pkts,
		s->wire.retransmits, s->wire.naks, s->wire.rnr_naks);
	fprintf(out, " wc:");
	for (i = 0, first = 1; i < 32; i++)
		if (s->wc_status[i] != 0) {
			fprintf(out, "%s%s=%" PRIu64, first ? "" : ",",
				sim_wc_status_name((enum droce_wc_status)i), s->wc_status[i]);
			first = 0;
		}
	if (first)
		fprintf(out, "none");
	fprintf(out,
		" lost=%" PRIu64 " dup=%" PRIu64 " corrupt=%" PRIu64 "/icrc=%" PRIu64
		" ce=%" PRIu64,
		s->net.lost + s->net.burst_lost + s->net.tail_drop, s->net.duplicated,
		s->net.corrupted, s->icrc_drops, s->net.ce_marked);
	if (cfg->qpt != DROCE_QPT_RC)
		fprintf(out, " missing=%" PRIu64 " rxdup=%" PRIu64, s->msgs_missing, s->msgs_dup);
	if (s->read_needed != 0)
		fprintf(out, " rresp=%" PRIu64 "/%" PRIu64 " rereq=%" PRIu64, s->wire.read_resp_rx,
			s->read_needed, s->wire.read_rereq);
	if (s->rto_resends != 0)
		fprintf(out, " rto=%" PRIu64, s->rto_resends);
	if (cfg->lat)
		fprintf(out, " lat_p50=%.1fus lat_p99=%.1fus done=%.3fms",
			(double)s->lat_p50_ns / 1e3, (double)s->lat_p99_ns / 1e3,
			(double)s->last_done_ns / 1e6);
	if (cfg->sr || cfg->sr_nodes)
		fprintf(out, " kept=%" PRIu64, s->sr_kept);
	if (cfg->digest)
		fprintf(out, " frames=%" PRIu64 " digest=%016" PRIx64, s->wire.frames,
			s->wire.digest);
	fprintf(out, " vtime=%.3fms ", (double)s->vtime_ns / 1e6);
	if (s->ok)
		fprintf(out, "OK\n");
	else
		fprintf(out, "MISMATCH: %s\n", s->mismatch);
}
