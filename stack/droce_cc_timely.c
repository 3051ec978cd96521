/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1): a per-QP rate driven by round-trip times
 * instead of marks. Each RTT sample (on_rtt: a request to its ACK or response) updates an EWMA
 * of the RTT's change; below T_low the rate grows by delta, above T_high it falls in proportion
 * to how far above, in between it follows the normalised gradient: down by beta x gradient when
 * the RTT rises, up by delta (N delta after five falling samples in a row) when it does not.
 * A decrease happens at most once per round trip: a sample whose packet left before the last
 * one is not cut for again, and a gradient cut takes beta of the rate at most. An increase
 * below T_low counts the round trips since the previous sample (samples come per message: a
 * QP cut low hears few). Defaults scale to the link (droce_cc_timely_defaults()). The rate
 * paces data packets as DCQCN's does. Fixed point: gradients in 1/2^16.
 */
#include <errno.h>
#include <string.h>

#include "droce_cc.h"

#define FX_SHIFT 16
#define FX_ONE	 (1ll << FX_SHIFT)

enum {
	W_RATE,	    /* bit/s */
	W_PREV_RTT, /* ns; 0 before the first sample */
	W_RTT_DIFF, /* EWMA of the RTT's change, ns in 1/2^16 (signed, stored as uint64_t) */
	W_NEG_RUN,  /* samples in a row with a gradient <= 0 */
	W_SAMPLES,
	W_DECREASES,
	W_LAST_CUT,    /* when the rate last fell */
	W_LAST_SAMPLE, /* when the previous sample came */
};

/* Below T_low an increase counts the round trips since the previous sample, up to this many:
 * a QP cut low sends few messages and so hears few samples, and one delta per sample would
 * leave it near its floor for the rest of a run (a 64 KiB message at 250 Mbit/s is one sample
 * per 2 ms). */
#define TIMELY_MAX_STEPS  64
#define TIMELY_SCALE_LINK 25000000000ull /* below it, the RTT thresholds stretch */

static const struct droce_timely_params timely_defaults = {
	.line_rate_bps = 100000000000ull, /* unknown: 100G */
	.max_rate_bps = 100000000000ull,  /* line rate: 100G here */
	.min_rate_bps = 10000000ull,	  /* 10 Mbit/s */
	.delta_bps = 10000000ull,	  /* paper: 10 Mbit/s */
	.t_low_ns = 50000,		  /* 50 us */
	.t_high_ns = 500000,		  /* 500 us */
	.min_rtt_ns = 20000,		  /* 20 us */
	.ewma_alpha = 896,		  /* 0.875 in 1/1024 */
	.beta = 819,			  /* 0.8 in 1/1024 */
	.hai_n = 5,
};

/*
 * For a port of link_bps: delta is link / 1000 (the paper's 10 Mbit/s at 10G), and the RTT
 * thresholds are droce's, not the paper's 50 / 500 us with min_rtt 20 us. The paper times a
 * 64 KB segment from its first byte to its ACK; droce's sample runs from a message's last
 * packet to its ACK, without the segment's time on the wire. So at 25 Gbit/s T_low 10 us and
 * T_high 100 us (an empty path's sample in droce-sim-cc is 5-15 us), and min_rtt 50 us: at
 * 20 us another flow's 64 KiB burst ahead of a sample (21 us at 25G) reads as a gradient of
 * 1 and cuts by beta. With the paper's values 8 flows used 76 % of the link and 16 held
 * the round trip above T_high; with these, 1-16 flows meet the targets (droce-sim-cc --check)
 * at 25 Gbit/s. Below 25 Gbit/s the same run slowed down: the three times stretch by
 * 25G / link (2 Gbit/s: 125 us, 1.25 ms, 625 us). Unknown link: the paper's values.
 */
void
droce_cc_timely_defaults(struct droce_timely_params *p, uint64_t link_bps)
{
	uint64_t x;

	*p = timely_defaults;
	if (link_bps == 0)
		return;
	x = link_bps >= TIMELY_SCALE_LINK ? 1024 : TIMELY_SCALE_LINK * 1024 / link_bps;
	p->line_rate_bps = p->max_rate_bps = link_bps;
	p->delta_bps = link_bps / 1000;
	p->t_low_ns = 10000 * x / 1024;
	p->t_high_ns = 100000 * x / 1024;
	p->min_rtt_ns = 50000 * x / 1024;
}

int
droce_cc_timely_check(const struct droce_timely_params *p)
{
	if (p == NULL || p->line_rate_bps == 0 || p->max_rate_bps == 0 || p->min_rate_bps == 0 ||
	    p->min_rate_bps > p->max_rate_bps || p->t_low_ns >= p->t_high_ns ||
	    p->min_rtt_ns == 0 || p->ewma_alpha > 1024 || p->beta > 1024 || p->hai_n == 0)
		return -EINVAL;
	return 0;
}

static void
timely_defaults_op(union droce_cc_params *p, uint64_t link_bps)
{
	droce_cc_timely_defaults(&p->timely, link_bps);
}

static int
timely_check_op(const union droce_cc_params *p)
{
	return droce_cc_timely_check(&p->timely);
}

static void
timely_init(struct droce_cc_state *s, uint64_t now_ns)
{
	s->w[W_RATE] = s->params->timely.max_rate_bps;
	s->next_send_ns = now_ns;
}

static void
set_rate(struct droce_cc_state *s, int64_t r)
{
	const struct droce_timely_params *P = &s->params->timely;

	if (r < (int64_t)P->min_rate_bps)
		r = (int64_t)P->min_rate_bps;
	if (r > (int64_t)P->max_rate_bps)
		r = (int64_t)P->max_rate_bps;
	s->w[W_RATE] = (uint64_t)r;
}

static void
timely_on_rtt(struct droce_cc_state *s, uint64_t rtt_ns, uint64_t now_ns)
{
	const struct droce_timely_params *P = &s->params->timely;
	int64_t rate = (int64_t)s->w[W_RATE], rtt = (int64_t)rtt_ns, diff, grad, cut, steps;
	uint64_t sent = now_ns > rtt_ns ? now_ns - rtt_ns : 0; /* when the timed packet left */

	s->w[W_SAMPLES]++;
	steps = s->w[W_LAST_SAMPLE] != 0 && now_ns > s->w[W_LAST_SAMPLE] ?
			(int64_t)((now_ns - s->w[W_LAST_SAMPLE]) /
				  (rtt_ns > P->min_rtt_ns ? rtt_ns : P->min_rtt_ns)) :
			1;
	steps = steps < 1 ? 1 : steps > TIMELY_MAX_STEPS ? TIMELY_MAX_STEPS : steps;
	s->w[W_LAST_SAMPLE] = now_ns;
	if (s->w[W_PREV_RTT] == 0) { /* the first sample has no change to measure */
		s->w[W_PREV_RTT] = rtt_ns;
		return;
	}
	/* rtt_diff = (1 - alpha) rtt_diff + alpha new_rtt_diff */
	diff = (int64_t)s->w[W_RTT_DIFF];
	diff = (diff * (1024 - (int64_t)P->ewma_alpha) +
		(rtt - (int64_t)s->w[W_PREV_RTT]) * FX_ONE * (int64_t)P->ewma_alpha) /
	       1024;
	s->w[W_RTT_DIFF] = (uint64_t)diff;
	s->w[W_PREV_RTT] = rtt_ns;
	if (rtt_ns < P->t_low_ns) {
		s->w[W_NEG_RUN] = 0;
		set_rate(s, rate + (int64_t)P->delta_bps * steps);
		return;
	}
	/* A sample whose packet left before the last cut tells of the rate before it: no second
	 * cut for the same queue (once per round trip, as the HPCC simulator's TIMELY does). */
	if (rtt_ns > P->t_high_ns) {
		s->w[W_NEG_RUN] = 0;
		if (sent < s->w[W_LAST_CUT])
			return;
		/* rate (1 - beta (1 - T_high / rtt)) */
		cut = rate / 1024 * (int64_t)P->beta / rtt * (rtt - (int64_t)P->t_high_ns);
		s->w[W_DECREASES]++;
		s->w[W_LAST_CUT] = now_ns;
		set_rate(s, rate - cut);
		return;
	}
	grad = diff / (int64_t)P->min_rtt_ns; /* normalised gradient, 1/2^16 */
	if (grad <= 0) {
		s->w[W_NEG_RUN]++;
		set_rate(s, rate + (int64_t)P->delta_bps *
					    (s->w[W_NEG_RUN] >= 5 ? (int64_t)P->hai_n : 1));
		return;
	}
	s->w[W_NEG_RUN] = 0;
	if (sent < s->w[W_LAST_CUT])
		return;
	s->w[W_DECREASES]++;
	s->w[W_LAST_CUT] = now_ns;
	/* rate (1 - beta gradient), the gradient taken as 1 at most: a steep one (a queue
	 * building at the start) would otherwise take the rate to its floor in one sample, deeper
	 * than the T_high rule ever cuts */
	if (grad > FX_ONE)
		grad = FX_ONE;
	cut = rate / 1024 * (int64_t)P->beta / FX_ONE * grad;
	set_rate(s, rate - cut);
}

static void
timely_on_send(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns)
{
	const struct droce_timely_params *P = &s->params->timely;

	droce_cc_pace(s, bytes, now_ns, s->w[W_RATE], P->line_rate_bps);
}

void
droce_cc_timely_stats(const struct droce_cc_state *s, struct droce_timely_stats *st)
{
	st->rate_bps = s->w[W_RATE];
	st->prev_rtt_ns = s->w[W_PREV_RTT];
	st->rtt_diff_ns = (int64_t)s->w[W_RTT_DIFF] / FX_ONE;
	st->samples = s->w[W_SAMPLES];
	st->decreases = s->w[W_DECREASES];
}

static unsigned int
timely_stats(const struct droce_cc_state *s, struct droce_cc_stat *out, unsigned int n)
{
	static const char *const names[] = { "rate_mbps", "rtt_ns", "rtt_diff_ns", "samples",
					     "decreases" };
	struct droce_timely_stats st;
	int64_t v[5];

	droce_cc_timely_stats(s, &st);
	v[0] = (int64_t)(st.rate_bps / 1000000);
	v[1] = (int64_t)st.prev_rtt_ns;
	v[2] = st.rtt_diff_ns;
	v[3] = (int64_t)st.samples;
	v[4] = (int64_t)st.decreases;
	return droce_cc_stats_fill(out, n, names, v, 5);
}

const struct droce_cc_ops droce_cc_timely = {
	.name = "timely",
	.defaults = timely_defaults_op,
	.check = timely_check_op,
	.init = timely_init,
	.on_send = timely_on_send,
	.on_cnp = droce_cc_ignore, /* TIMELY hears the network through RTTs alone */
	.on_ack = droce_cc_ignore,
	.next_send_time = droce_cc_next_send_ns,
	.on_rtt = timely_on_rtt,
	.stats = timely_stats,
};
