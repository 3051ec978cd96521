/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Workload generation and the predicted memory. Each work request is drawn from the run's
 * workload stream; buffers are placed so that the final contents are a pure function of the
 * posting order: RC applies writes in order per QP (IBTA 9.5: RC delivers in order, once),
 * atomics on a word come from one QP only, so their results follow the posting order too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_model.h"

#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))

static bool
op_allowed(enum droce_qp_type t, enum sim_op op)
{
	if (t == DROCE_QPT_UD)
		return op == SIM_OP_SEND || op == SIM_OP_SEND_IMM;
	if (t == DROCE_QPT_UC)
		return op != SIM_OP_READ && op != SIM_OP_CAS && op != SIM_OP_FADD &&
		       op != SIM_OP_AWRITE;
	return true;
}

static uint32_t
pick_len(struct sim_world *w)
{
	const struct sim_cfg *c = w->cfg;
	uint32_t lo = c->size_min, hi = c->size_max, m = w->mtu_bytes, v;
	static const int near[] = { -1, 0, 1 };

	if (c->qpt == DROCE_QPT_UD && hi > m)
		hi = m;
	if (lo > hi)
		lo = hi;
	switch (sim_rng_below(&w->rng, 10)) {
	case 0:
		return lo;
	case 1:
		return hi;
	case 2:
		/* Segment boundaries: one byte short of, at and past a multiple of the MTU. */
		v = m * (uint32_t)sim_rng_range(&w->rng, 1, 2) +
		    (uint32_t)near[sim_rng_below(&w->rng, 3)];
		return v < lo ? lo : v > hi ? hi : v;
	default:
		return (uint32_t)sim_rng_range(&w->rng, lo, hi);
	}
}

/* Split len bytes into n pieces of at least one byte each. */
static void
split(struct sim_world *w, uint32_t len, unsigned int n, uint32_t *out)
{
	unsigned int i;
	uint32_t left = len;

	for (i = 0; i + 1 < n; i++) {
		uint32_t max = left - (n - 1 - i);

		out[i] = (uint32_t)sim_rng_range(&w->rng, 1, max);
		left -= out[i];
	}
	out[n - 1] = left;
}

static unsigned int
pick_nsge(struct sim_world *w, uint32_t len)
{
	unsigned int n = 1 + (unsigned int)sim_rng_below(&w->rng, SIM_MAX_SGE);

	if (len == 0)
		return 0;
	return n > len ? len : n;
}

/* Now and then a zero-length SGE somewhere in a list: legal in verbs, and a trap for cursor
 * arithmetic (say, resuming a message from its middle). Drawn from the flags stream. */
static void
maybe_empty_sge(struct sim_world *w, struct sim_piece *sge, uint8_t *nsge)
{
	unsigned int at, i;

	if (*nsge >= SIM_SGE_CAP || sim_rng_below(&w->flags_rng, 6) != 0)
		return;
	at = (unsigned int)sim_rng_below(&w->flags_rng, *nsge + 1u);
	for (i = *nsge; i > at; i--)
		sge[i] = sge[i - 1];
	sge[at].off = *nsge != 0 ? sge[at == *nsge ? at - 1 : at + 1].off : 0;
	sge[at].len = 0;
	(*nsge)++;
}

static void
gen_one(struct sim_world *w, struct sim_wr *wr, const enum sim_op *ops, unsigned int n_ops)
{
	const struct sim_cfg *c = w->cfg;
	struct sim_side *me, *peer;
	uint32_t lens[SIM_MAX_SGE];
	unsigned int i;

	memset(wr, 0, sizeof(*wr));
	wr->side = c->one_way ? 0 : (uint8_t)sim_rng_below(&w->rng, 2);
	wr->qp = (uint8_t)sim_rng_below(&w->rng, c->qps);
	wr->op = (uint8_t)ops[sim_rng_below(&w->rng, n_ops)];
	wr->recv_idx = -1;
	me = &w->node[wr->side].side[wr->qp];
	peer = &w->node[!wr->side].side[wr->qp];
	wr->signaled = sim_rng_below(&w->rng, 4) != 0;
	wr->fence = c->qpt == DROCE_QPT_RC && sim_rng_below(&w->flags_rng, 10) == 0;
	wr->solicited = sim_rng_below(&w->flags_rng, 5) == 0;
	wr->imm = (uint32_t)sim_rng_next(&w->rng);

	if (wr->op == SIM_OP_CAS || wr->op == SIM_OP_FADD) {
		unsigned int word = (unsigned int)sim_rng_below(&w->rng, SIM_ATOM_WORDS);
		uint64_t *val = &peer->atom_val[word];

		wr->len = 8;
		wr->roff = word * 8;
		wr->loff = me->ares_len;
		me->ares_len += 8;
		wr->orig = *val;
		if (wr->op == SIM_OP_CAS) {
			/* Half the compares succeed. */
			wr->cmp = sim_rng_below(&w->rng, 2) ? *val : sim_rng_next(&w->rng);
			wr->swap_add = sim_rng_next(&w->rng);
			if (*val == wr->cmp)
				*val = wr->swap_add;
		} else {
			wr->swap_add = sim_rng_next(&w->rng) >> sim_rng_below(&w->rng, 64);
			*val += wr->swap_add;
		}
		wr->nsge = 1;
		wr->sge[0].off = wr->loff;
		wr->sge[0].len = 8;
		return;
	}
	if (wr->op == SIM_OP_AWRITE) {
		/* A word of the same atomic area: the value follows the posting order with the
		 * atomics of its QP, and a duplicate placed again after a later one shows. */
		unsigned int word = (unsigned int)sim_rng_below(&w->rng, SIM_ATOM_WORDS);

		wr->len = 8;
		wr->roff = word * 8;
		wr->swap_add = sim_rng_next(&w->rng);
		peer->atom_val[word] = wr->swap_add;
		return;
	}
	wr->len = pick_len(w);
	wr->nsge = (uint8_t)pick_nsge(w, wr->len);
	split(w, wr->len, wr->nsge != 0 ? wr->nsge : 1, lens);
	if (wr->op == SIM_OP_READ) {
		wr->roff = (uint32_t)sim_rng_below(&w->rng, peer->rsrc_len - wr->len + 1);
		wr->loff = me->rdst_len;
		me->rdst_len += ALIGN_UP(wr->len, 8);
		for (i = 0; i < wr->nsge; i++) {
			wr->sge[i].off =
				wr->loff +
				(i == 0 ? 0 : wr->sge[i - 1].off - wr->loff + wr->sge[i - 1].len);
			wr->sge[i].len = lens[i];
		}
		maybe_empty_sge(w, wr->sge, &wr->nsge);
		return;
	}
	for (i = 0; i < wr->nsge; i++) {
		wr->sge[i].len = lens[i];
		wr->sge[i].off = (uint32_t)sim_rng_below(&w->rng, me->src_len - lens[i] + 1);
	}
	maybe_empty_sge(w, wr->sge, &wr->nsge);
	wr->inl = wr->len <= SIM_INLINE_MAX && sim_rng_below(&w->rng, 2) == 0;
	if (wr->op == SIM_OP_WRITE || wr->op == SIM_OP_WRITE_IMM) {
		if (c->qpt == DROCE_QPT_RC) {
			wr->roff = (uint32_t)sim_rng_below(&w->rng, peer->wtgt_len - wr->len + 1);
		} else {
			/* Unreliable writes get disjoint targets: each byte is then either old or
			 * new, never a mix of two writes. */
			wr->roff = peer->wtgt_len;
			peer->wtgt_len += ALIGN_UP(wr->len, 8);
		}
	}
	if (wr->op != SIM_OP_WRITE)
		wr->recv_idx = (int32_t)peer->n_in++;
}

static void
gen_recv(struct sim_world *w, struct sim_recv *r)
{
	uint32_t lens[SIM_MAX_SGE], slot = w->node[0].side[0].slot_len, pos = 0;
	unsigned int n = 1 + (unsigned int)sim_rng_below(&w->rng, SIM_MAX_SGE), rot, i;
	struct sim_piece p[SIM_MAX_SGE];

	split(w, slot, n, lens);
	for (i = 0; i < n; i++) {
		p[i].off = pos;
		p[i].len = lens[i];
		pos += lens[i];
	}
	/* List the pieces rotated so the scatter order differs from the memory order. */
	rot = (unsigned int)sim_rng_below(&w->rng, n);
	r->nsge = (uint8_t)n;
	for (i = 0; i < n; i++)
		r->sge[i] = p[(i + rot) % n];
	maybe_empty_sge(w, r->sge, &r->nsge);
}

static void
fix_offsets(struct sim_world *w)
{
	uint32_t i;
	unsigned int k;

	for (i = 0; i < w->n_wr; i++) {
		struct sim_wr *wr = &w->wr[i];
		struct sim_side *me = &w->node[wr->side].side[wr->qp];
		struct sim_side *peer = &w->node[!wr->side].side[wr->qp];

		switch (wr->op) {
		case SIM_OP_READ:
			wr->roff += peer->rsrc;
			for (k = 0; k < wr->nsge; k++)
				wr->sge[k].off += me->rdst;
			break;
		case SIM_OP_CAS:
		case SIM_OP_FADD:
			wr->roff += peer->atom;
			wr->loff += me->ares;
			wr->sge[0].off += me->ares;
			break;
		case SIM_OP_AWRITE:
			wr->roff += peer->atom;
			break;
		default:
			if (wr->op == SIM_OP_WRITE || wr->op == SIM_OP_WRITE_IMM)
				wr->roff += peer->wtgt;
			for (k = 0; k < wr->nsge; k++)
				wr->sge[k].off += me->src;
			break;
		}
	}
}

static uint32_t
layout(struct sim_world *w, unsigned int n)
{
	uint32_t off = 0, q;

	for (q = 0; q < w->cfg->qps; q++) {
		struct sim_side *s = &w->node[n].side[q];
		uint32_t k;

		s->blk = off;
#define PLACE(field, len) \
	do { \
		s->field = off; \
		off = ALIGN_UP(off + (len), 64); \
	} while (0)
		PLACE(src, s->src_len);
		PLACE(wtgt, s->wtgt_len);
		PLACE(rsrc, s->rsrc_len);
		PLACE(rdst, s->rdst_len);
		PLACE(atom, SIM_ATOM_WORDS * 8);
		PLACE(ares, s->ares_len);
		PLACE(scratch, SIM_INLINE_MAX);
		PLACE(rslot, s->slot_len * s->n_recv);
#undef PLACE
		s->blk_len = off - s->blk;
		for (k = 0; k < s->n_recv; k++) {
			unsigned int i;

			for (i = 0; i < s->recv[k].nsge; i++)
				s->recv[k].sge[i].off += s->rslot + k * s->slot_len;
		}
	}
	if (w->node[n].n_srecv != 0) {
		struct sim_node_mem *m = &w->node[n];
		uint32_t slot = m->side[0].slot_len, k;
		unsigned int i;

		m->srslot = off;
		off = ALIGN_UP(off + slot * m->n_srecv, 64);
		for (k = 0; k < m->n_srecv; k++)
			for (i = 0; i < m->srecv[k].nsge; i++)
				m->srecv[k].sge[i].off += m->srslot + k * slot;
	}
	return off != 0 ? off : 64;
}

void
sim_wr_payload(const struct sim_world *w, const struct sim_wr *wr, uint8_t *out)
{
	const uint8_t *mem = w->node[wr->side].mem;
	uint32_t pos = 0;
	unsigned int i;

	/* Sources are never written, so the payload is what they held at the start. */
	for (i = 0; i < wr->nsge; i++) {
		memcpy(out + pos, mem + wr->sge[i].off, wr->sge[i].len);
		pos += wr->sge[i].len;
	}
}

/* Walk a receive WR's scatter list over logical bytes [skip, skip + len): copy src into base
 * (to_mem) or base into src (from memory). Returns the bytes that fitted. */
uint32_t
sim_scatter(const struct sim_recv *r, uint32_t skip, uint8_t *buf, uint32_t len, uint8_t *base,
	    bool to_mem)
{
	uint32_t pos = 0, done = 0;
	unsigned int i;

	for (i = 0; i < r->nsge && done < len; i++) {
		uint32_t a = r->sge[i].off, l = r->sge[i].len, n;

		if (pos + l <= skip) {
			pos += l;
			continue;
		}
		if (skip > pos) {
			a += skip - pos;
			l -= skip - pos;
		}
		pos += r->sge[i].len;
		n = l < len - done ? l : len - done;
		if (to_mem)
			memcpy(base + a, buf + done, n);
		else
			memcpy(buf + done, base + a, n);
		done += n;
	}
	return done;
}

/*
 * Node memory at a fixed virtual address, so that the RETH/AtomicETH addresses on the wire (and
 * with them every ICRC and the -v trace) are the same from one replay to the next.
 */
static uint8_t *
node_mem(unsigned int n, uint32_t len)
{
	uintptr_t hint = (uintptr_t)0x200000000000ull + (uintptr_t)n * 0x10000000000ull;
	size_t sz = ALIGN_UP((size_t)len, 4096);
	void *p = mmap((void *)hint, sz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The predicted effect of every WR that is certain at generation time. */
static void
predict(struct sim_world *w, uint8_t *tmp)
{
	bool rc = w->cfg->qpt == DROCE_QPT_RC;
	uint32_t i, q;
	unsigned int n, k;

	for (i = 0; i < w->n_wr; i++) {
		const struct sim_wr *wr = &w->wr[i];
		struct sim_node_mem *me = &w->node[wr->side], *pn = &w->node[!wr->side];
		uint32_t pos = 0;

		switch (wr->op) {
		case SIM_OP_WRITE:
		case SIM_OP_WRITE_IMM:
			sim_wr_payload(w, wr, tmp);
			memcpy(pn->exp + wr->roff, tmp, wr->len);
			if (!rc)
				memset(pn->care + wr->roff, SIM_CARE_EITHER, wr->len);
			break;
		case SIM_OP_READ:
			for (k = 0; k < wr->nsge; k++) {
				memcpy(me->exp + wr->sge[k].off, pn->mem + wr->roff + pos,
				       wr->sge[k].len);
				pos += wr->sge[k].len;
			}
			break;
		case SIM_OP_CAS:
		case SIM_OP_FADD:
			memcpy(me->exp + wr->loff, &wr->orig, 8);
			break;
		case SIM_OP_AWRITE:
			break; /* the atomic words are set below */
		default:
			/* RC: the n-th message that consumes a receive lands in the n-th receive
			 * WR (IBTA 9.7.5.1.2); the bytes past the message stay untouched. */
			if (rc && wr->op != SIM_OP_WRITE_IMM && !w->cfg->srq) {
				struct sim_side *ps = &pn->side[wr->qp];

				sim_wr_payload(w, wr, tmp);
				sim_scatter(&ps->recv[wr->recv_idx], 0, tmp, wr->len, pn->exp,
					    true);
			}
			break;
		}
	}
	for (n = 0; n < 2; n++)
		for (q = 0; q < w->cfg->qps; q++) {
			struct sim_side *s = &w->node[n].side[q];

			memcpy(w->node[n].exp + s->atom, s->atom_val, sizeof(s->atom_val));
			memset(w->node[n].care + s->scratch, SIM_CARE_ANY, SIM_INLINE_MAX);
			/* Unreliable receive buffers are checked message by message as they
			 * complete; RC ones must hold exactly the predicted bytes (sim_check.c). */
			if (!rc)
				memset(w->node[n].care + s->rslot, SIM_CARE_ANY,
				       (size_t)s->slot_len * s->n_recv);
		}
	/* Which shared receive a message lands in is only known when it completes. */
	for (n = 0; n < 2; n++)
		if (!rc && w->node[n].n_srecv != 0)
			memset(w->node[n].care + w->node[n].srslot, SIM_CARE_ANY,
			       (size_t)w->node[n].side[0].slot_len * w->node[n].n_srecv);
}

int
sim_gen(struct sim_world *w)
{
	const struct sim_cfg *c = w->cfg;
	enum sim_op ops[SIM_OP_MAX];
	unsigned int n_ops = 0, n, i;
	uint32_t q, max = c->size_max, slot;
	uint8_t *tmp;

	for (i = 0; i < SIM_OP_MAX; i++)
		if ((c->ops & (1u << i)) && op_allowed(c->qpt, (enum sim_op)i))
			ops[n_ops++] = (enum sim_op)i;
	if (n_ops == 0 || c->qps == 0 || c->qps > SIM_MAX_QPS)
		return -EINVAL;
	if (c->qpt == DROCE_QPT_UD && max > w->mtu_bytes)
		max = w->mtu_bytes;
	slot = ALIGN_UP((max != 0 ? max : 1) + (c->qpt == DROCE_QPT_UD ? SIM_UD_GRH : 0), 8);
	for (n = 0; n < 2; n++)
		for (q = 0; q < c->qps; q++) {
			struct sim_side *s = &w->node[n].side[q];

			s->src_len = max + 64;
			s->rsrc_len = max + 64;
			s->wtgt_len = c->qpt == DROCE_QPT_RC ? 2 * max + 64 : 0;
			s->slot_len = slot;
			for (i = 0; i < SIM_ATOM_WORDS; i++)
				s->atom_init[i] = s->atom_val[i] = sim_rng_next(&w->rng);
		}
	w->n_wr = c->msgs;
	w->wr = calloc(w->n_wr != 0 ? w->n_wr : 1, sizeof(*w->wr));
	if (w->wr == NULL)
		return -ENOMEM;
	for (i = 0; i < w->n_wr; i++)
		gen_one(w, &w->wr[i], ops, n_ops);

	/* Per-side lists; the last WR of each send queue is signaled so that everything
	 * completes visibly, and so is at least every sq_depth/2-th so the queue drains. */
	for (n = 0; n < 2; n++)
		for (q = 0; q < c->qps; q++) {
			struct sim_side *s = &w->node[n].side[q];
			uint32_t since = 0;

			s->wr = calloc(w->n_wr + 1, sizeof(*s->wr));
			s->in = calloc(s->n_in + 1, sizeof(*s->in));
			if (s->wr == NULL || s->in == NULL)
				return -ENOMEM;
			for (i = 0; i < w->n_wr; i++) {
				struct sim_wr *wr = &w->wr[i];

				if (wr->side == n && wr->qp == q) {
					s->wr[s->n_wr++] = i;
					since = wr->signaled ? 0 : since + 1;
					if (since >= c->sq_depth / 2) {
						wr->signaled = true;
						since = 0;
					}
				}
				if (wr->side != n && wr->qp == q && wr->recv_idx >= 0)
					s->in[wr->recv_idx] = i;
			}
			if (s->n_wr != 0)
				w->wr[s->wr[s->n_wr - 1]].signaled = true;
		}
	for (n = 0; n < 2; n++)
		for (q = 0; q < c->qps; q++) {
			struct sim_side *s = &w->node[n].side[q];

			s->n_recv = s->n_in;
			if (c->qpt == DROCE_QPT_UD && c->link.dup > 0)
				s->n_recv += s->n_in / 2 + 4;
			if (c->srq) {
				w->node[n].n_srecv += s->n_recv;
				s->n_recv = 0;
			}
			s->recv = calloc(s->n_recv + 1, sizeof(*s->recv));
			s->in_seen = calloc(s->n_in + 1, 1);
			if (s->recv == NULL || s->in_seen == NULL)
				return -ENOMEM;
			for (i = 0; i < s->n_recv; i++)
				gen_recv(w, &s->recv[i]);
		}

	for (n = 0; n < 2; n++) {
		struct sim_node_mem *m = &w->node[n];

		m->srecv = calloc(m->n_srecv + 1, sizeof(*m->srecv));
		m->srecv_used = calloc(m->n_srecv + 1, 1);
		if (m->srecv == NULL || m->srecv_used == NULL)
			return -ENOMEM;
		for (i = 0; i < m->n_srecv; i++)
			gen_recv(w, &m->srecv[i]);
	}
	for (n = 0; n < 2; n++) {
		struct sim_node_mem *m = &w->node[n];

		m->len = layout(w, n);
		m->mem = node_mem(n, m->len);
		m->exp = malloc(m->len);
		m->alt = malloc(m->len);
		m->care = calloc(m->len, 1);
		if (m->mem == NULL || m->exp == NULL || m->alt == NULL || m->care == NULL)
			return -ENOMEM;
		for (i = 0; i + 8 <= m->len; i += 8) {
			uint64_t v = sim_rng_next(&w->rng);

			memcpy(m->mem + i, &v, 8);
		}
		for (q = 0; q < c->qps; q++)
			memcpy(m->mem + m->side[q].atom, m->side[q].atom_init,
			       sizeof(m->side[q].atom_init));
		memcpy(m->exp, m->mem, m->len);
		memcpy(m->alt, m->mem, m->len);
	}
	fix_offsets(w);
	tmp = malloc(max + 1);
	if (tmp == NULL)
		return -ENOMEM;
	predict(w, tmp);
	free(tmp);
	return 0;
}

void
sim_gen_free(struct sim_world *w)
{
	unsigned int n, q;

	for (n = 0; n < 2; n++) {
		struct sim_node_mem *m = &w->node[n];

		for (q = 0; q < SIM_MAX_QPS; q++) {
			free(m->side[q].wr);
			free(m->side[q].in);
			free(m->side[q].recv);
			free(m->side[q].in_seen);
		}
		free(m->srecv);
		free(m->srecv_used);
		if (m->mem != NULL)
			munmap(m->mem, ALIGN_UP((size_t)m->len, 4096));
		free(m->exp);
		free(m->alt);
		free(m->care);
	}
	free(w->wr);
}
