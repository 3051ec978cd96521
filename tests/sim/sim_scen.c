/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "sim_model.h"

#include "sim_scen.h"

int
scen_init(struct scen *s, uint64_t seed, const struct sim_link_cfg *link, enum droce_qp_type type,
	  const struct sim_qp_params *qp, uint32_t cq_depth)
{
	struct sim_qp_params def;
	struct droce_qp_init_attr ia;
	unsigned int n, i;
	int err = 0, rc;

	memset(s, 0, sizeof(*s));
	s->type = type;
	s->wake = UINT64_MAX;
	if (qp == NULL) {
		sim_qp_params_default(&def);
		qp = &def;
	}
	sim_net_init(&s->net, seed);
	sim_trace_init(&s->trace, getenv("SIM_TRACE") != NULL, stdout, 128u << qp->mtu);
	s->net.tx_hook = sim_trace_hook;
	s->net.tx_hook_arg = &s->trace;
	for (n = 0; n < 2; n++) {
		rc = sim_ep_create(&s->ep[n], &s->net, seed, link, 4096 + 200);
		if (rc != 0)
			return rc;
		s->mem[n] = aligned_alloc(4096, SCEN_MEM);
		if (s->mem[n] == NULL)
			return -ENOMEM;
		for (i = 0; i < SCEN_MEM; i++)
			s->mem[n][i] = (uint8_t)(i * 7 + n * 101 + 3);
		s->pd[n] = droce_pd_alloc(s->ep[n].dev, &err);
		if (s->pd[n] == NULL)
			return -err;
		s->mr[n] =
			droce_mr_reg(s->pd[n], s->mem[n], SCEN_MEM,
				     DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
					     DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC,
				     &err);
		if (s->mr[n] == NULL)
			return -err;
		s->cq[n] = droce_cq_create(s->ep[n].dev, cq_depth != 0 ? cq_depth : 64, NULL, &err);
		if (s->cq[n] == NULL)
			return -err;
		memset(&ia, 0, sizeof(ia));
		if (qp->srq) {
			struct droce_srq_attr sa = { .max_wr = 32, .max_sge = 4 };

			s->srq[n] = droce_srq_create(s->pd[n], &sa, NULL, &err);
			if (s->srq[n] == NULL)
				return -err;
			ia.srq = s->srq[n];
		}
		ia.qp_type = type;
		ia.send_cq = s->cq[n];
		ia.recv_cq = s->cq[n];
		ia.cap.max_send_wr = 32;
		ia.cap.max_recv_wr = 32;
		ia.cap.max_send_sge = 4;
		ia.cap.max_recv_sge = 4;
		ia.cap.max_inline_data = 64;
		s->qp[n] = droce_qp_create(s->pd[n], &ia, &err);
		if (s->qp[n] == NULL)
			return -err;
	}
	for (n = 0; n < 2; n++) {
		rc = sim_qp_bring_up(s->qp[n], type, &s->ep[!n], droce_qp_num(s->qp[!n]), qp);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void
scen_fini(struct scen *s)
{
	unsigned int n;

	for (n = 0; n < 2; n++) {
		if (s->ep[n].dev == NULL)
			continue;
		if (s->qp[n] != NULL)
			droce_qp_destroy(s->qp[n]);
		if (s->srq[n] != NULL)
			droce_srq_destroy(s->srq[n]);
		if (s->cq[n] != NULL)
			droce_cq_destroy(s->cq[n]);
		if (s->mr[n] != NULL)
			droce_mr_dereg(s->mr[n]);
		if (s->pd[n] != NULL)
			droce_pd_dealloc(s->pd[n]);
		sim_ep_destroy(&s->ep[n]);
		free(s->mem[n]);
	}
	sim_net_fini(&s->net);
}

uint64_t
scen_addr(const struct scen *s, unsigned int n, uint32_t off)
{
	return (uintptr_t)(s->mem[n] + off);
}

int
scen_post(struct scen *s, unsigned int n, enum droce_wr_opcode op, uint64_t wr_id, uint32_t off,
	  uint32_t len, uint64_t raddr, uint32_t rkey, unsigned int flags)
{
	struct droce_sge sge = { scen_addr(s, n, off), len, droce_mr_lkey(s->mr[n]) };
	struct droce_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	/* Signaled unless the caller asks for SCEN_UNSIGNALED. */
	wr.send_flags =
		(flags & SCEN_UNSIGNALED) ? flags & ~SCEN_UNSIGNALED : flags | DROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = len != 0 ? 1 : 0;
	wr.imm_data = 0x01020304;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (op == DROCE_WR_SEND_WITH_INV)
		wr.invalidate_rkey = rkey; /* the key its IETH names */
	return droce_post_send(s->qp[n], &wr, &bad);
}

int
scen_post_atomic(struct scen *s, unsigned int n, enum droce_wr_opcode op, uint64_t wr_id,
		 uint32_t off, uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct droce_sge sge = { scen_addr(s, n, off), 8, droce_mr_lkey(s->mr[n]) };
	struct droce_send_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.send_flags = DROCE_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return droce_post_send(s->qp[n], &wr, &bad);
}

int
scen_post_recv(struct scen *s, unsigned int n, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct droce_sge sge = { scen_addr(s, n, off), len, droce_mr_lkey(s->mr[n]) };
	struct droce_recv_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (s->srq[n] != NULL)
		return droce_post_srq_recv(s->srq[n], &wr, &bad);
	return droce_post_recv(s->qp[n], &wr, &bad);
}

struct scen_run {
	struct scen *s;
	unsigned int n;
	unsigned int count;
};

static void
scen_step(void *arg, uint64_t now)
{
	struct scen_run *r = arg;
	struct scen *s = r->s;
	unsigned int n;
	int got;

	if (s->wake <= now) {
		s->wake = UINT64_MAX;
		if (s->at_wake != NULL)
			s->at_wake(s);
	}
	for (n = 0; n < 2; n++) {
		if (s->no_poll[n])
			continue;
		while (s->nwc[n] < SCEN_WC) {
			got = droce_cq_poll(s->cq[n], 1, &s->wc[n][s->nwc[n]]);
			if (got < 0)
				s->poll_err[n] = got;
			if (got <= 0)
				break;
			s->wc_t[n][s->nwc[n]++] = now;
		}
	}
}

static bool
scen_done(void *arg)
{
	struct scen_run *r = arg;

	return r->s->nwc[r->n] >= r->count;
}

enum sim_result
scen_run_until(struct scen *s, unsigned int n, unsigned int count, uint64_t limit_ns)
{
	struct scen_run r = { s, n, count };
	struct sim_app app = { scen_step, scen_done, &r, s->wake };
	enum sim_result res;

	s->net.time_limit = s->net.now + limit_ns;
	s->net.event_limit = s->net.events + 2000000;
	/* Work posted before the run is transmitted by the first process() call. */
	for (n = 0; n < 2; n++)
		s->net.node[n].ops->process(s->net.node[n].ctx, s->net.now);
	res = sim_net_run(&s->net, &app);
	s->wake = app.wake;
	return res;
}

void
scen_expect_wc(const struct scen *s, unsigned int n, unsigned int i, uint64_t wr_id,
	       enum droce_wc_status st)
{
	CU_ASSERT_FATAL(s->nwc[n] > i);
	if (s->wc[n][i].wr_id != wr_id || s->wc[n][i].status != st)
		printf("\n    node %u completion %u: wr_id %llu status %s, expected wr_id %llu "
		       "%s\n",
		       n, i, (unsigned long long)s->wc[n][i].wr_id,
		       sim_wc_status_name(s->wc[n][i].status), (unsigned long long)wr_id,
		       sim_wc_status_name(st));
	CU_ASSERT_EQUAL(s->wc[n][i].wr_id, wr_id);
	CU_ASSERT_EQUAL(s->wc[n][i].status, st);
}

bool
scen_untouched(const struct scen *s, unsigned int n, uint32_t off, uint32_t len)
{
	uint32_t i;

	for (i = off; i < off + len; i++)
		if (s->mem[n][i] != (uint8_t)(i * 7 + n * 101 + 3))
			return false;
	return true;
}

uint64_t
scen_cnt(const struct scen *s, unsigned int n, enum droce_cnt c)
{
	return droce_qp_counter(s->qp[n], c);
}

unsigned int
scen_events(struct scen *s, unsigned int n, enum droce_event_type type)
{
	struct droce_async_event ev;
	unsigned int k = 0;

	while (droce_dev_get_async_event(s->ep[n].dev, &ev) == 0)
		k += ev.type == type;
	return k;
}

const struct sim_link_cfg scen_clean_link = { .rate_bps = 25000000000ull, .delay_ns = 2000 };

unsigned int
scen_pick_fate(void *arg, unsigned int src, const uint8_t *f, uint32_t len)
{
	struct scen *s = arg;
	int b = sim_frame_bth_off(f, len);
	unsigned int i;
	uint32_t psn;

	if (b < 0 || (uint32_t)b + 12 > len)
		return 0;
	psn = ((uint32_t)f[b + 9] << 16) | ((uint32_t)f[b + 10] << 8) | f[b + 11];
	for (i = 0; i < s->n_picks; i++)
		if (s->picks[i].src == src && s->picks[i].psn == psn && s->picks[i].times != 0) {
			s->picks[i].times--;
			return s->picks[i].fate;
		}
	return 0;
}

void
scen_pick(struct scen *s, unsigned int src, uint32_t psn, unsigned int fate, unsigned int times)
{
	CU_ASSERT_FATAL(s->n_picks < SCEN_PICKS);
	s->picks[s->n_picks++] =
		(struct scen_pick){ .src = src, .psn = psn, .fate = fate, .times = times };
	s->net.pick = scen_pick_fate;
	s->net.pick_arg = s;
}

void
scen_setup_rc(struct scen *s, const struct sim_qp_params *p)
{
	int rc = scen_init(s, 1, &scen_clean_link, DROCE_QPT_RC, p, 0);

	if (rc != 0)
		printf("\n    scen_init: %d\n", rc);
	CU_ASSERT_FATAL(rc == 0);
}
