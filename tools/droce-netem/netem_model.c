/* SPDX-License-Identifier: BSD-3-Clause */
/* One link direction: loss, duplication, corruption, a rate-limited RED queue, delay, reorder. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "netem_model.h"

#define PS_PER_NS 1000ull
/* Smallest frame corruption touches the payload of: an Ethernet header and one byte. */
#define CORRUPT_SKIP 14u

static const char *const drop_names[DROCE_NETEM_DROP__MAX] = {
	[DROCE_NETEM_DROP_NONE] = "none",	[DROCE_NETEM_DROP_LOSS] = "loss",
	[DROCE_NETEM_DROP_GE] = "ge_loss",	[DROCE_NETEM_DROP_QUEUE] = "queue_full",
	[DROCE_NETEM_DROP_RED] = "red_not_ect", [DROCE_NETEM_DROP_HOLD_FULL] = "hold_full",
	[DROCE_NETEM_DROP_TX] = "tx_refused",	[DROCE_NETEM_DROP_NOMBUF] = "no_mbuf",
};

const char *
droce_netem_drop_name(enum droce_netem_drop r)
{
	return (unsigned int)r < DROCE_NETEM_DROP__MAX ? drop_names[r] : "?";
}

static int
prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0;
}

int
droce_netem_cfg_check(const struct droce_netem_cfg *c, char *err, unsigned int errlen)
{
	const char *msg = NULL;

	if (!prob_ok(c->loss) || !prob_ok(c->reorder) || !prob_ok(c->duplicate) ||
	    !prob_ok(c->corrupt) || !prob_ok(c->red_pmax))
		msg = "probabilities must be within [0, 1]";
	else if (c->ge.on && (!prob_ok(c->ge.p) || !prob_ok(c->ge.r) || !prob_ok(c->ge.loss_bad) ||
			      !prob_ok(c->ge.loss_good)))
		msg = "Gilbert-Elliott probabilities must be within [0, 1]";
	else if (c->ge.on && c->ge.p > 0.0 && c->ge.r <= 0.0)
		msg = "Gilbert-Elliott r = 0 would stay in the bad state forever";
	else if (c->red_on && c->rate_bps == 0)
		msg = "RED marks on the queue the rate limit builds: give a rate";
	else if (c->red_on && c->red_kmin >= c->red_kmax)
		msg = "RED needs kmin < kmax";
	else if (c->reorder > 0.0 && c->reorder_delay_ns == 0)
		msg = "reorder needs an extra delay (reorder-delay) for frames to be overtaken";
	else if (c->delay_ns > 60ull * 1000000000ull || c->jitter_ns > 60ull * 1000000000ull ||
		 c->reorder_delay_ns > 60ull * 1000000000ull)
		msg = "delays are limited to 60 s";
	if (msg == NULL)
		return 0;
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
	return -EINVAL;
}

void
droce_netem_init(struct droce_netem *n, const struct droce_netem_cfg *cfg, uint64_t seed)
{
	memset(n, 0, sizeof(*n));
	n->cfg = *cfg;
	droce_netem_rng_seed(&n->rng, seed);
}

uint64_t
droce_netem_backlog(const struct droce_netem *n, uint64_t now_ns)
{
	uint64_t now_ps = now_ns * PS_PER_NS;

	if (n->cfg.rate_bps == 0 || n->link_free_ps <= now_ps)
		return 0;
	/* bytes = time * rate / 8; 128-bit because ps times bit/s overflows 64 bits quickly. */
	return (uint64_t)(((unsigned __int128)(n->link_free_ps - now_ps) * n->cfg.rate_bps) /
			  (8ull * 1000000000000ull));
}

uint64_t
droce_netem_queue_pct(const struct droce_netem_stats *st, double pct)
{
	uint64_t total = 0, want, seen = 0;
	unsigned int i;
	double w;

	for (i = 0; i < DROCE_NETEM_QHIST; i++)
		total += st->qhist[i];
	if (total == 0)
		return 0;
	/* the smallest bucket with at least pct % of the frames at or below it */
	w = (double)total * pct / 100.0;
	want = (uint64_t)w;
	if ((double)want < w)
		want++;
	if (want == 0)
		want = 1;
	for (i = 0; i < DROCE_NETEM_QHIST - 1; i++) {
		seen += st->qhist[i];
		if (seen >= want)
			break;
	}
	return (uint64_t)i << DROCE_NETEM_QHIST_SHIFT;
}

double
droce_netem_red_prob(const struct droce_netem_cfg *c, uint64_t q)
{
	if (!c->red_on || q < c->red_kmin)
		return 0.0;
	if (q >= c->red_kmax)
		return 1.0;
	return c->red_pmax * (double)(q - c->red_kmin) / (double)(c->red_kmax - c->red_kmin);
}

/* Gilbert-Elliott: move between states, then lose with the new state's probability. */
static int
ge_lose(struct droce_netem *n)
{
	const struct droce_netem_ge *ge = &n->cfg.ge;

	if (!ge->on)
		return 0;
	if (n->ge_bad) {
		if (droce_netem_rng_chance(&n->rng, ge->r))
			n->ge_bad = false;
	} else if (droce_netem_rng_chance(&n->rng, ge->p)) {
		n->ge_bad = true;
	}
	return droce_netem_rng_chance(&n->rng, n->ge_bad ? ge->loss_bad : ge->loss_good);
}

static void
corrupt(struct droce_netem *n, uint8_t *frame, uint32_t len)
{
	uint32_t skip = len > CORRUPT_SKIP ? CORRUPT_SKIP : 0;
	uint64_t bit;

	if (len == 0)
		return;
	bit = droce_netem_rng_below(&n->rng, (uint64_t)(len - skip) * 8);
	frame[skip + bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* RED decision for one copy at queue q; returns DROCE_NETEM_DROP_RED or NONE. */
static enum droce_netem_drop
red(struct droce_netem *n, uint8_t *frame, uint32_t len, uint64_t q, struct droce_netem_out *out)
{
	double p = droce_netem_red_prob(&n->cfg, q);

	if (!droce_netem_rng_chance(&n->rng, p))
		return DROCE_NETEM_DROP_NONE;
	switch (droce_netem_mark_ce(frame, len)) {
	case DROCE_NETEM_ECN_MARKED:
		n->st.ce_marked++;
		out->ce_marked = true;
		return DROCE_NETEM_DROP_NONE;
	case DROCE_NETEM_ECN_ALREADY_CE:
		n->st.ce_already++;
		return DROCE_NETEM_DROP_NONE;
	default:
		if (n->cfg.red_drop_not_ect)
			return DROCE_NETEM_DROP_RED;
		n->st.red_not_ect++;
		return DROCE_NETEM_DROP_NONE;
	}
}

static uint64_t
delay_draw(struct droce_netem *n)
{
	uint64_t j = n->cfg.jitter_ns;
	int64_t d;

	if (j == 0)
		return n->cfg.delay_ns;
	d = (int64_t)n->cfg.delay_ns - (int64_t)j +
	    (int64_t)droce_netem_rng_below(&n->rng, 2 * j + 1);
	return d < 0 ? 0 : (uint64_t)d;
}

/* Count a frame that found q bytes queued into its period's sample, which it returns (NULL:
 * no series, or past its last period). */
static struct droce_netem_sample *
series_at(struct droce_netem_series *se, uint64_t now_ns, uint64_t q)
{
	struct droce_netem_sample *sm;
	uint64_t i;

	if (se == NULL)
		return NULL;
	i = now_ns / se->period_ns;
	if (i >= se->cap) {
		se->beyond++;
		return NULL;
	}
	sm = &se->s[i];
	sm->frames++;
	sm->q_sum += q;
	if (q > sm->q_max)
		sm->q_max = q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
	if (i >= se->len)
		se->len = (uint32_t)i + 1;
	return sm;
}

/* Queue, serialise and delay one copy; returns its drop reason (NONE: scheduled). */
static enum droce_netem_drop
one_copy(struct droce_netem *n, uint8_t *frame, uint32_t len, uint64_t now_ns,
	 struct droce_netem_out *out)
{
	const struct droce_netem_cfg *c = &n->cfg;
	uint64_t now_ps = now_ns * PS_PER_NS;
	uint64_t q = droce_netem_backlog(n, now_ns);
	uint64_t finish_ns = now_ns, depart, marks = n->st.ce_marked;
	struct droce_netem_sample *sm = NULL;
	enum droce_netem_drop r;

	if (c->rate_bps != 0) {
		uint64_t b = q >> DROCE_NETEM_QHIST_SHIFT;

		n->st.qhist[b < DROCE_NETEM_QHIST ? b : DROCE_NETEM_QHIST - 1]++;
		sm = series_at(n->series, now_ns, q);
	}
	if (c->limit_bytes != 0 && q + len > c->limit_bytes)
		return DROCE_NETEM_DROP_QUEUE;
	r = red(n, frame, len, q, out);
	if (sm != NULL && n->st.ce_marked != marks)
		sm->ce++;
	if (r != DROCE_NETEM_DROP_NONE)
		return r;
	if (c->rate_bps != 0) {
		uint64_t bits = ((uint64_t)len + c->overhead) * 8;
		uint64_t start = n->link_free_ps > now_ps ? n->link_free_ps : now_ps;

		n->link_free_ps =
			start +
			(uint64_t)(((unsigned __int128)bits * 1000000000000ull + c->rate_bps - 1) /
				   c->rate_bps);
		finish_ns = (n->link_free_ps + PS_PER_NS - 1) / PS_PER_NS;
		q += len;
		if (q > n->st.max_backlog)
			n->st.max_backlog = q;
	}
	depart = finish_ns + delay_draw(n);
	if (droce_netem_rng_chance(&n->rng, c->reorder)) {
		/* Held back on its own: later frames overtake it, and keep_order ignores it. */
		depart += c->reorder_delay_ns;
		n->st.reordered++;
	} else if (c->keep_order) {
		if (depart < n->last_depart_ns)
			depart = n->last_depart_ns;
		n->last_depart_ns = depart;
	}
	out->depart_ns[out->n++] = depart;
	n->st.out++;
	n->st.out_bytes += len;
	return DROCE_NETEM_DROP_NONE;
}

uint32_t
droce_netem_submit(struct droce_netem *n, uint8_t *frame, uint32_t len, uint64_t now_ns,
		   struct droce_netem_out *out)
{
	enum droce_netem_drop r;
	uint32_t copies = 1, i;

	memset(out, 0, sizeof(*out));
	n->st.rx++;
	n->st.rx_bytes += len;
	if (ge_lose(n)) {
		out->drop = DROCE_NETEM_DROP_GE;
		n->st.drop[out->drop]++;
		return 0;
	}
	if (droce_netem_rng_chance(&n->rng, n->cfg.loss)) {
		out->drop = DROCE_NETEM_DROP_LOSS;
		n->st.drop[out->drop]++;
		return 0;
	}
	if (droce_netem_rng_chance(&n->rng, n->cfg.duplicate)) {
		copies = 2;
		n->st.duplicated++;
	}
	if (droce_netem_rng_chance(&n->rng, n->cfg.corrupt)) {
		corrupt(n, frame, len);
		out->corrupted = true;
		n->st.corrupted++;
	}
	for (i = 0; i < copies; i++) {
		r = one_copy(n, frame, len, now_ns, out);
		if (r != DROCE_NETEM_DROP_NONE) {
			out->drop = r;
			n->st.drop[r]++;
		}
	}
	return out->n;
}
