/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The model's checks: every completion is matched, as it is polled, against the one the
 * workload predicts (exactly once, in order, status, opcode, byte count, immediate, data);
 * at the end every byte of both nodes' memory is compared with the prediction.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "sim_model.h"

void
sim_fail(struct sim_world *w, const char *fmt, ...)
{
	va_list ap;

	if (w->failed)
		return;
	w->failed = true;
	va_start(ap, fmt);
	vsnprintf(w->sum->mismatch, sizeof(w->sum->mismatch), fmt, ap);
	va_end(ap);
}

const char *
sim_op_name(enum sim_op op)
{
	static const char *const names[SIM_OP_MAX] = {
		"WRITE", "WRITE_IMM",	"SEND",		 "SEND_IMM",
		"READ",	 "CMP_AND_SWP", "FETCH_AND_ADD", "ATOMIC_WRITE",
	};

	return (unsigned int)op < SIM_OP_MAX ? names[op] : "?";
}

const char *
sim_wc_status_name(enum droce_wc_status s)
{
	static const char *const names[] = {
		"SUCCESS",	    "LOC_LEN_ERR",	 "LOC_QP_OP_ERR",     "LOC_EEC_OP_ERR",
		"LOC_PROT_ERR",	    "WR_FLUSH_ERR",	 "MW_BIND_ERR",	      "BAD_RESP_ERR",
		"LOC_ACCESS_ERR",   "REM_INV_REQ_ERR",	 "REM_ACCESS_ERR",    "REM_OP_ERR",
		"RETRY_EXC_ERR",    "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",  "REM_INV_RD_REQ_ERR",
		"REM_ABORT_ERR",    "INV_EECN_ERR",	 "INV_EEC_STATE_ERR", "FATAL_ERR",
		"RESP_TIMEOUT_ERR", "GENERAL_ERR",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static enum droce_wc_opcode
wc_op_of(enum sim_op op)
{
	switch (op) {
	case SIM_OP_WRITE:
	case SIM_OP_WRITE_IMM:
		return DROCE_WC_RDMA_WRITE;
	case SIM_OP_SEND:
	case SIM_OP_SEND_IMM:
		return DROCE_WC_SEND;
	case SIM_OP_READ:
		return DROCE_WC_RDMA_READ;
	case SIM_OP_CAS:
		return DROCE_WC_COMP_SWAP;
	case SIM_OP_AWRITE:
		return DROCE_WC_ATOMIC_WRITE;
	default:
		return DROCE_WC_FETCH_ADD;
	}
}

/* "n1 qp0 rslot+120" for a byte of node memory. */
static void
describe(const struct sim_world *w, unsigned int n, uint32_t off, char *buf, size_t len)
{
	const struct sim_node_mem *m = &w->node[n];
	unsigned int q;

	for (q = 0; q < w->cfg->qps; q++) {
		const struct sim_side *s = &m->side[q];
		struct {
			const char *name;
			uint32_t at, len;
		} r[] = {
			{ "src", s->src, s->src_len },
			{ "write-target", s->wtgt, s->wtgt_len },
			{ "read-source", s->rsrc, s->rsrc_len },
			{ "read-dest", s->rdst, s->rdst_len },
			{ "atomic-words", s->atom, SIM_ATOM_WORDS * 8 },
			{ "atomic-results", s->ares, s->ares_len },
			{ "recv-slots", s->rslot, s->slot_len * s->n_recv },
		};
		unsigned int i;

		for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
			if (off >= r[i].at && off < r[i].at + r[i].len) {
				snprintf(buf, len, "n%u qp%u %s+%u", n, q, r[i].name,
					 off - r[i].at);
				return;
			}
	}
	if (m->n_srecv != 0 && off >= m->srslot &&
	    off < m->srslot + m->side[0].slot_len * m->n_srecv) {
		snprintf(buf, len, "n%u shared-recv-slots+%u", n, off - m->srslot);
		return;
	}
	snprintf(buf, len, "n%u +%u", n, off);
}

/* First byte in [off, off+len) of node n that differs from the prediction, or -1. */
static int64_t
first_diff(const struct sim_world *w, unsigned int n, uint32_t off, uint32_t len)
{
	const struct sim_node_mem *m = &w->node[n];
	uint32_t i;

	for (i = off; i < off + len; i++) {
		if (m->care[i] == SIM_CARE_ANY || m->mem[i] == m->exp[i])
			continue;
		if (m->care[i] == SIM_CARE_EITHER && m->mem[i] == m->alt[i])
			continue;
		return i;
	}
	return -1;
}

static void
fail_diff(struct sim_world *w, unsigned int n, uint32_t at, const char *what)
{
	char where[96];

	describe(w, n, at, where, sizeof(where));
	sim_fail(w, "%s: memory %s holds 0x%02x, model predicts 0x%02x", what, where,
		 w->node[n].mem[at], w->node[n].exp[at]);
}

static void
on_send_wc(struct sim_world *w, unsigned int n, unsigned int q, const struct droce_wc *wc)
{
	struct sim_side *s = &w->node[n].side[q];
	const struct sim_wr *wr;
	uint32_t k = s->next_done, idx, i;
	int64_t d;

	while (k < s->next_post && !w->wr[s->wr[k]].signaled)
		k++;
	if (k >= s->next_post) {
		sim_fail(w,
			 "n%u qp%u: unexpected send completion wr_id=%" PRIu64 " status=%s "
			 "(%u of %u WRs posted, all completed)",
			 n, q, wc->wr_id, sim_wc_status_name(wc->status), s->next_post, s->n_wr);
		return;
	}
	idx = s->wr[k];
	wr = &w->wr[idx];
	if (wc->wr_id != idx) {
		sim_fail(w,
			 "n%u qp%u: send completion wr_id=%" PRIu64 " status=%s, expected "
			 "wr_id=%u (%s len %u): out of order, duplicate or lost",
			 n, q, wc->wr_id, sim_wc_status_name(wc->status), idx, sim_op_name(wr->op),
			 wr->len);
		return;
	}
	if (wc->status != DROCE_WC_SUCCESS) {
		sim_fail(w, "n%u qp%u: wr_id=%u (%s len %u) completed with %s (vendor_err %u)", n,
			 q, idx, sim_op_name(wr->op), wr->len, sim_wc_status_name(wc->status),
			 wc->vendor_err);
		return;
	}
	if (wc->opcode != wc_op_of(wr->op) || wc->qp_num != s->qpn) {
		sim_fail(w,
			 "n%u qp%u: wr_id=%u (%s): completion opcode %d qp 0x%x, expected %d "
			 "qp 0x%x",
			 n, q, idx, sim_op_name(wr->op), wc->opcode, wc->qp_num, wc_op_of(wr->op),
			 s->qpn);
		return;
	}
	if (wr->op == SIM_OP_READ || wr->op == SIM_OP_CAS || wr->op == SIM_OP_FADD ||
	    wr->op == SIM_OP_AWRITE) {
		/* IBTA 11.4.2.1: byte_len is defined for READ and atomics (8 for ATOMIC WRITE,
		 * as rxe). */
		if (wc->byte_len != wr->len) {
			sim_fail(w, "n%u qp%u: wr_id=%u (%s len %u): byte_len %u", n, q, idx,
				 sim_op_name(wr->op), wr->len, wc->byte_len);
			return;
		}
		for (i = 0; i < wr->nsge; i++) {
			d = first_diff(w, n, wr->sge[i].off, wr->sge[i].len);
			if (d >= 0) {
				char what[80];

				snprintf(what, sizeof(what), "wr_id=%u (%s len %u) completed", idx,
					 sim_op_name(wr->op), wr->len);
				fail_diff(w, n, (uint32_t)d, what);
				return;
			}
		}
	}
	for (i = s->next_done; i <= k; i++) {
		w->wr[s->wr[i]].t_done = w->net.now;
		w->sum->msgs++;
		w->sum->bytes += w->wr[s->wr[i]].len;
	}
	s->next_done = k + 1;
}

/* Does the receive completion wc (its data in receive WR r) carry message wr? */
static const char *
msg_matches(struct sim_world *w, unsigned int n, const struct sim_wr *wr, const struct sim_recv *r,
	    const struct droce_wc *wc, uint8_t *a, uint8_t *b)
{
	bool imm = wr->op != SIM_OP_SEND;
	uint32_t skip = w->cfg->qpt == DROCE_QPT_UD ? SIM_UD_GRH : 0;
	enum droce_wc_opcode op =
		wr->op == SIM_OP_WRITE_IMM ? DROCE_WC_RECV_RDMA_WITH_IMM : DROCE_WC_RECV;

	if (wc->opcode != op)
		return "opcode";
	if (wc->byte_len != wr->len + skip)
		return "byte_len";
	if (!!(wc->wc_flags & DROCE_WC_WITH_IMM) != imm || (imm && wc->imm_data != wr->imm))
		return "immediate";
	sim_wr_payload(w, wr, a);
	if (wr->op == SIM_OP_WRITE_IMM) {
		/* The write arrived whole if its immediate did (IBTA 9.4.3: the last packet).
		 * Unreliable writes have targets of their own; RC ones may already be overwritten
		 * by later writes, and the final memory check covers them. */
		if (w->cfg->qpt != DROCE_QPT_RC &&
		    memcmp(w->node[n].mem + wr->roff, a, wr->len) != 0)
			return "written data";
		return NULL;
	}
	if (sim_scatter(r, skip, b, wr->len, w->node[n].mem, false) != wr->len)
		return "receive buffer too small for the message";
	if (memcmp(a, b, wr->len) != 0)
		return "data";
	return NULL;
}

static void
on_recv_wc(struct sim_world *w, unsigned int n, unsigned int q, const struct droce_wc *wc,
	   uint8_t *a, uint8_t *b)
{
	struct sim_node_mem *m = &w->node[n];
	struct sim_side *s = &m->side[q];
	struct sim_side *peer = &w->node[!n].side[q];
	const struct sim_recv *r;
	const char *why = "no message left";
	enum droce_qp_type t = w->cfg->qpt;
	uint32_t j, seen, first = s->in_cursor;
	uint32_t skip = t == DROCE_QPT_UD ? SIM_UD_GRH : 0;

	if (w->cfg->srq) {
		/* Shared receives are taken in posting order overall, but which QP takes which
		 * is up to arrival order: any posted, unused one is acceptable. */
		if (wc->wr_id >= m->srecv_posted || m->srecv_used[wc->wr_id]) {
			sim_fail(w,
				 "n%u qp%u: shared receive completion wr_id=%" PRIu64 " status=%s "
				 "was not posted or completed before (%u posted)",
				 n, q, wc->wr_id, sim_wc_status_name(wc->status), m->srecv_posted);
			return;
		}
		r = &m->srecv[wc->wr_id];
	} else if (wc->wr_id != s->recv_done || s->recv_done >= s->recv_posted) {
		sim_fail(w,
			 "n%u qp%u: receive completion wr_id=%" PRIu64 " status=%s, expected "
			 "wr_id=%u (%u posted)",
			 n, q, wc->wr_id, sim_wc_status_name(wc->status), s->recv_done,
			 s->recv_posted);
		return;
	} else {
		r = &s->recv[s->recv_done];
	}
	if (wc->status != DROCE_WC_SUCCESS || wc->qp_num != s->qpn) {
		sim_fail(w, "n%u qp%u: receive wr_id=%u completed with %s on qp 0x%x", n, q,
			 s->recv_done, sim_wc_status_name(wc->status), wc->qp_num);
		return;
	}
	if (t == DROCE_QPT_UD) {
		/* IBTA 11.4.2.1: UD completions report the source QP and that a GRH came. */
		if (wc->src_qp != peer->qpn || !(wc->wc_flags & DROCE_WC_GRH)) {
			sim_fail(w,
				 "n%u qp%u: UD receive wr_id=%u src_qp 0x%x (expected 0x%x), "
				 "wc_flags 0x%x",
				 n, q, s->recv_done, wc->src_qp, peer->qpn, wc->wc_flags);
			return;
		}
	}
	/* Unreliable service over a link that reorders or duplicates: a late or repeated packet
	 * that starts a message is taken as a new message (UC accepts any first packet after a
	 * PSN gap, IBTA 9.8.3; UD has no sequence at all), so any earlier message may show up. */
	if (t != DROCE_QPT_RC &&
	    (w->cfg->link.reorder > 0 || w->cfg->link.jitter_ns > 0 || w->cfg->link.dup > 0))
		first = 0;
	for (j = first, seen = UINT32_MAX; j < s->n_in; j++) {
		const char *mm = msg_matches(w, n, &w->wr[s->in[j]], r, wc, a, b);

		/* Identical messages (say two empty SENDs) are interchangeable: take one not
		 * received yet before calling it a duplicate. */
		if (mm == NULL && !s->in_seen[j])
			break;
		if (mm == NULL && seen == UINT32_MAX)
			seen = j;
		if (t == DROCE_QPT_RC || j == s->in_cursor)
			why = mm != NULL ? mm : "already received";
		if (t == DROCE_QPT_RC)
			j = s->n_in; /* RC: only the next message may match */
	}
	if (j >= s->n_in && seen != UINT32_MAX) {
		j = seen;
		/* The payload buffer must hold the match's bytes for what follows. */
		msg_matches(w, n, &w->wr[s->in[j]], r, wc, a, b);
	}
	if (j >= s->n_in) {
		uint32_t want = s->in_cursor < s->n_in ? s->in[s->in_cursor] : 0;

		sim_fail(w,
			 "n%u qp%u: receive wr_id=%u (opcode %d, byte_len %u) matches no sent "
			 "message (next expected wr_id=%u %s len %u: %s differs)",
			 n, q, s->recv_done, wc->opcode, wc->byte_len, want,
			 sim_op_name(w->wr[want].op), w->wr[want].len, why);
		return;
	}
	if (t == DROCE_QPT_UD) {
		/* The 40-byte GRH area: for RoCEv2 over IPv4 the IPv4 header sits in its last 20
		 * bytes (as rxe and ConnectX do; IBTA A17.4.5.1), from the sender to us. */
		uint8_t grh[SIM_UD_GRH];
		const uint8_t *sip = w->ep[!n].gid + 12, *dip = w->ep[n].gid + 12;

		sim_scatter(r, 0, grh, SIM_UD_GRH, m->mem, false);
		if (grh[20] != 0x45 || grh[29] != 17 || memcmp(grh + 32, sip, 4) != 0 ||
		    memcmp(grh + 36, dip, 4) != 0) {
			sim_fail(w,
				 "n%u qp%u: UD receive wr_id=%" PRIu64
				 ": no IPv4 header in the GRH "
				 "area (version/IHL 0x%02x, protocol %u, %u.%u.%u.%u -> "
				 "%u.%u.%u.%u)",
				 n, q, wc->wr_id, grh[20], grh[29], grh[32], grh[33], grh[34],
				 grh[35], grh[36], grh[37], grh[38], grh[39]);
			return;
		}
	}
	if (s->in_seen[j]) {
		if (w->cfg->link.dup <= 0) {
			sim_fail(w, "n%u qp%u: message wr_id=%u received twice", n, q, s->in[j]);
			return;
		}
		w->sum->msgs_dup++;
	}
	s->in_seen[j] = 1;
	if (j >= s->in_cursor)
		s->in_cursor = j + 1;
	if (w->cfg->srq) {
		const struct sim_wr *wr = &w->wr[s->in[j]];
		static const uint8_t exact[SIM_UD_GRH + 65536];

		m->srecv_used[wc->wr_id] = 1;
		m->srecv_done++;
		/* From now on the message must stay where it landed (a is its payload). */
		if (wr->op != SIM_OP_WRITE_IMM) {
			sim_scatter(r, skip, a, wr->len, m->exp, true);
			sim_scatter(r, skip, (uint8_t *)(uintptr_t)exact, wr->len, m->care, true);
		}
	}
	s->recv_done++;
	w->sum->recvs++;
}

static int
post_one_recv(struct sim_world *w, unsigned int n, int q, const struct sim_recv *r, uint64_t wr_id)
{
	struct sim_node_mem *m = &w->node[n];
	struct droce_qp *qp = q >= 0 ? m->side[q].qp : NULL;
	uint32_t lkey = droce_mr_lkey(q >= 0 ? m->side[q].mr : m->mr);
	struct droce_sge sge[SIM_SGE_CAP];
	struct droce_recv_wr rwr, *bad = NULL;
	unsigned int i;

	for (i = 0; i < r->nsge; i++) {
		sge[i].addr = (uintptr_t)(m->mem + r->sge[i].off);
		sge[i].length = r->sge[i].len;
		sge[i].lkey = lkey;
	}
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = wr_id;
	rwr.sg_list = sge;
	rwr.num_sge = r->nsge;
	return qp != NULL ? droce_post_recv(qp, &rwr, &bad) :
			    droce_post_srq_recv(m->srq, &rwr, &bad);
}

static void
post_recvs(struct sim_world *w, unsigned int n)
{
	struct sim_node_mem *m = &w->node[n];
	unsigned int q;
	int rc;

	if (w->cfg->srq) {
		while (!w->failed && m->srecv_posted < m->n_srecv &&
		       m->srecv_posted - m->srecv_done < w->cfg->rq_depth * w->cfg->qps) {
			rc = post_one_recv(w, n, -1, &m->srecv[m->srecv_posted], m->srecv_posted);
			if (rc != 0)
				sim_fail(w, "n%u: post_srq_recv #%u failed: %d", n, m->srecv_posted,
					 rc);
			m->srecv_posted++;
		}
		return;
	}
	for (q = 0; q < w->cfg->qps; q++) {
		struct sim_side *s = &m->side[q];

		while (!w->failed && s->recv_posted < s->n_recv &&
		       s->recv_posted - s->recv_done < w->cfg->rq_depth) {
			rc = post_one_recv(w, n, (int)q, &s->recv[s->recv_posted], s->recv_posted);
			if (rc != 0)
				sim_fail(w, "n%u qp%u: post_recv #%u failed: %d", n, q,
					 s->recv_posted, rc);
			s->recv_posted++;
		}
	}
}

static void
dispatch(struct sim_world *w, unsigned int n, int q, bool recv, const struct droce_wc *wc,
	 uint8_t *a, uint8_t *b)
{
	if ((unsigned int)wc->status < 32)
		w->sum->wc_status[wc->status]++;
	if (q < 0) {
		/* Shared CQ: the QP number says whose it is, the opcode which queue. */
		for (q = 0; q < (int)w->cfg->qps; q++)
			if (w->node[n].side[q].qpn == wc->qp_num)
				break;
		if (q == (int)w->cfg->qps) {
			sim_fail(w,
				 "n%u: completion wr_id=%" PRIu64 " status=%s for unknown qp 0x%x",
				 n, wc->wr_id, sim_wc_status_name(wc->status), wc->qp_num);
			return;
		}
		recv = (wc->opcode & DROCE_WC_RECV) != 0;
	}
	if (recv)
		on_recv_wc(w, n, (unsigned int)q, wc, a, b);
	else
		on_send_wc(w, n, (unsigned int)q, wc);
}

static void
drain_cq(struct sim_world *w, unsigned int n, int q, bool recv, struct droce_cq *cq, uint8_t *a,
	 uint8_t *b)
{
	struct droce_wc wc[16];
	int got = 0, i;

	while (!w->failed && (got = droce_cq_poll(cq, 16, wc)) > 0)
		for (i = 0; i < got && !w->failed; i++)
			dispatch(w, n, q, recv, &wc[i], a, b);
	if (got < 0)
		sim_fail(w, "n%u qp%d: %s CQ poll: %d", n, q, recv ? "receive" : "send", got);
}

void
sim_poll_all(struct sim_world *w)
{
	static uint8_t a[SIM_UD_GRH + 65536], b[SIM_UD_GRH + 65536];
	unsigned int n, q;

	for (n = 0; n < 2 && !w->failed; n++) {
		if (w->cfg->shared_cq) {
			drain_cq(w, n, -1, false, w->node[n].cq, a, b);
		} else {
			for (q = 0; q < w->cfg->qps; q++) {
				drain_cq(w, n, (int)q, false, w->node[n].side[q].scq, a, b);
				drain_cq(w, n, (int)q, true, w->node[n].side[q].rcq, a, b);
			}
		}
	}
	if (w->draining)
		return;
	/* With --recv-every the application replenishes receives only now and then, so the
	 * responder runs out of them: RNR NAKs and retries in random runs. */
	if (w->cfg->recv_every_ns != 0) {
		if (w->net.now < w->next_recv_post)
			return;
		w->next_recv_post = w->net.now + w->cfg->recv_every_ns;
		if (w->app != NULL && w->app->wake > w->next_recv_post)
			w->app->wake = w->next_recv_post;
	}
	for (n = 0; n < 2 && !w->failed; n++)
		post_recvs(w, n);
}

bool
sim_work_done(const struct sim_world *w)
{
	unsigned int n, q;

	if (w->failed)
		return true;
	for (n = 0; n < 2; n++)
		for (q = 0; q < w->cfg->qps; q++) {
			const struct sim_side *s = &w->node[n].side[q];

			if (s->next_done != s->n_wr)
				return false;
			if (w->cfg->qpt == DROCE_QPT_RC && s->recv_done != s->n_in)
				return false;
		}
	if (w->cfg->qpt != DROCE_QPT_RC) {
		/* Unreliable: done when nothing is left in flight or queued. */
		if (w->net.heap.n != 0)
			return false;
		for (n = 0; n < 2; n++)
			if (droce_dev_next_deadline(w->ep[n].dev) <= w->net.now)
				return false;
	}
	return true;
}

void
sim_check_memory(struct sim_world *w)
{
	unsigned int n;

	for (n = 0; n < 2 && !w->failed; n++) {
		int64_t d = first_diff(w, n, 0, w->node[n].len);

		if (d >= 0)
			fail_diff(w, n, (uint32_t)d, "final memory");
	}
}

void
sim_count_missing(struct sim_world *w)
{
	unsigned int n, q;
	uint32_t j;

	for (n = 0; n < 2; n++)
		for (q = 0; q < w->cfg->qps; q++) {
			const struct sim_side *s = &w->node[n].side[q];

			for (j = 0; j < s->n_in; j++)
				w->sum->msgs_missing += !s->in_seen[j];
		}
}

void
sim_check_events(struct sim_world *w)
{
	struct droce_async_event ev;
	unsigned int n;

	for (n = 0; n < 2; n++)
		while (droce_dev_get_async_event(w->ep[n].dev, &ev) == 0)
			if (ev.type != DROCE_EVENT_COMM_EST)
				sim_fail(w, "n%u: unexpected asynchronous event %d", n, ev.type);
}
