/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN reaction point (Zhu et al., SIGCOMM 2015; RoCEv2 Annex A17.9): a rate limiter per QP
 * that a CNP cuts (RC *= 1 - alpha/2, RT keeps the rate before the cut, or with
 * target_cut_pct all but that share of the cut; with level_cut_pct a QP among few, with
 * paced_cut_pct a QP its limiter holds, lowers RT from its level instead) and that recovers
 * by timer and byte-counter stages: fast recovery towards RT, then additive, then hyper
 * increase of RT. alpha rises on a CNP and decays in every alpha period without one.
 * Parameters keep mlx5's names (rpg_*, dce_tcp_*); each QP reads its own (s->params).
 *
 * No timer of its own: the periods that passed are applied when the QP next sends or hears a
 * CNP (the rate only matters then), a bounded catch-up in virtual time.
 */
#include <errno.h>
#include <string.h>

#include "droce_cc.h"

/* alpha is kept in 1/2^20: in mlx5's 1/1024 a decay by 1019/1024 every microsecond would
 * truncate a small alpha to 0 within a millisecond, whatever the marks */
#define ALPHA_SHIFT 20
#define ALPHA_ONE   (1ull << ALPHA_SHIFT)
#define G_ONE	    1024u /* dce_tcp_g, initial_alpha_value: in 1/1024 */

/* State words of struct droce_cc_state */
enum {
	W_RC,		 /* current rate, bit/s */
	W_RT,		 /* target rate, bit/s */
	W_ALPHA,	 /* 0..ALPHA_ONE */
	W_T_STAGE,	 /* rate-increase timer periods since the last cut */
	W_B_STAGE,	 /* byte-counter periods since the last cut */
	W_BYTES,	 /* bytes sent in the current byte period */
	W_T_ALPHA,	 /* start of the current alpha period */
	W_CNP_IN_PERIOD, /* a CNP came in the current alpha period */
	W_T_TIMER,	 /* start of the current rate-increase timer period */
	W_T_CUT,	 /* the last cut (rate_reduce_monitor_period) */
	W_CUTS,		 /* cuts made (low 32 bits), CNPs that did not cut (high 32) */
	W_SENT,		 /* bytes sent since the last cut (the rate a cut starts from) */
	W_SRTT,		 /* smoothed round trip (cut_per_rtt), 0: no sample yet */
	W_RC_CUT,	 /* the rate the last cut set */
	W_T_START,	 /* when the QP started */
};
#define IGNORED_ONE (1ull << 32)

/*
 * Defaults for a port of link_bps. The shape is the paper's (made for 40G: g = 1/256, T = 55
 * us, F = 5, B = 10 MB, R_AI 40 Mb/s, R_HAI 200 Mb/s, alpha every K = 55 us, CNPs 50 us apart);
 * the values were chosen in droce-sim-cc over N = 1..16 flows at 25 and 2 Gbit/s behind the
 * paper's marking (pmd-glue/README.md, "Congestion control"):
 * - alpha's period is the CNP interval, so alpha is the share of CNP windows that had a CNP.
 *   g = 1/128: at 1/256 alpha stays near its start value of 1 for most of 10 ms, and 2-16
 *   flows at 25 Gbit/s took past 10 ms to share in 4-5 of 10 seeds (1/128: 0-1).
 * - R_AI = link / 10000 every 35 us after F = 4 stages: 16 flows' steps then climb from Kmin
 *   to Kmax no faster than RED's 1 % marks answer (at link / 2500, CE 16 %). R_HAI is
 *   link / 2500.
 * - T = 35 us and F = 4: a cut's recovery ends sooner, so the next CNP finds a flow back at
 *   its rate and cuts the faster flow of a pair more often (at 55 us and F = 5, 2 flows took
 *   past 10 ms to share in half of the seeds, 4 flows left the link 72 % used).
 * - One cut per round trip (cut_per_rtt): a cut shows in the marks only a round trip later.
 * - RT takes 3 % of each cut (target_cut_pct) and the additive step adds 300 millionths of
 *   RT (ai_rate_ppm). With RT at the rate cut from, fast recovery undoes a cut that comes
 *   after it ended, so a QP's level only falls when CNPs come within recovery: 16 flows
 *   behind an in-flight cap climbed to Kmax (CE 8-12 %) before it did. With each CNP taking a
 *   little off the level, the step can grow with the rate, so that 2-4 flows also regain
 *   the link: over seeds 100..149 these two met 1278 of 1400 seed-cases (the paper's and
 *   ConnectX's marking, netem's behind a cap, the runtime's and the engine's cap; 2-16
 *   flows, 2 and 25 Gbit/s), the fixed step alone 1123, and no case did worse there
 *   (the README has a second set of seeds).
 * - A QP whose target is at least a sixth of the link, once alpha is under 0.7, lowers the
 *   target by 5 % of the way from it to the new rate (level_cut_pct): 1308 of those 1400
 *   (1311 against 1266 over seeds 300..349), 2 flows behind netem's marking 41 against 22.
 * - A paced QP (it sent at least the rate its last cut set) whose target is at least a tenth
 *   of the link lowers the target by 15 % of the way (paced_cut_pct): 1340 (1354 against
 *   1311 on 300..349), ConnectX's marking with 16 flows 38 against 29, netem's with 2 flows
 *   50 against 41.
 * - The first cut of a QP its window held (it sent under 90 % of RC) takes the target down
 *   with the rate (first_cut_pct 100), so flows that start together stay level through the
 *   start: 1372 (1384 against 1354 on 300..349), ConnectX's marking with 8 flows 46 against
 *   15. Ungated, a flow alone on its link that one CNP cut aimed at half of it.
 * - B = 1 MB, not the paper's 10: byte stages come as often as a QP sends, so one with much
 *   of the link reaches hyper increase soon after a cut, one with a sixteenth of it seldom.
 *   A lone flow whose NIC is faster than the bottleneck (40 into 25 Gbit/s) is cut to about
 *   half in the start; at 10 MB it climbed back on additive steps alone for 18 ms (90 % of
 *   the link used). With 1 MB six such cases (one flow, NICs of 40 and 100 into 25 Gbit/s,
 *   3, 4 and 25 into 2) met the targets at 290 of 300 seed-cases against 211, and the 1400
 *   above at 1377 against 1372 (1388 against 1384 on 300..349).
 * - Below 25 Gbit/s the same run, slowed down: the timers and the notification point's CNP
 *   interval stretch by 25G / link, R_AI and R_HAI are the same shares of the link and B
 *   stays. A flow then sends as many packets per timer period as at 25 Gbit/s, RED marks as
 *   many, and the queue in bytes follows the 25 Gbit/s one on a time axis 25G / link as long.
 */
#define DCQCN_UNKNOWN_LINK 100000000000ull /* 100G when the port's rate is unknown */
#define DCQCN_SCALE_LINK   25000000000ull  /* below it, the timers stretch */

/* 25G / link in 1/1024, at least 1 */
static uint64_t
stretch_1024(uint64_t link_bps)
{
	uint64_t l = link_bps != 0 ? link_bps : DCQCN_UNKNOWN_LINK;

	return l >= DCQCN_SCALE_LINK ? 1024 : DCQCN_SCALE_LINK * 1024 / l;
}

void
droce_cc_dcqcn_defaults(struct droce_dcqcn_params *p, uint64_t link_bps)
{
	uint64_t l = link_bps != 0 ? link_bps : DCQCN_UNKNOWN_LINK, x = stretch_1024(l);

	p->line_rate_bps = p->max_rate_bps = l;			     /* rpg_max_rate 0: line rate */
	p->min_rate_bps = l / 10000 > 1000000 ? l / 10000 : 1000000; /* rpg_min_rate */
	p->ai_rate_bps = l / 10000;				     /* rpg_ai_rate */
	p->hai_rate_bps = l / 2500;				     /* rpg_hai_rate */
	p->time_reset_ns = 35000 * x / 1024;			     /* rpg_time_reset */
	p->byte_reset = 1000000;				     /* rpg_byte_reset */
	p->threshold = 4;					     /* rpg_threshold (F) */
	p->min_dec_fac = 50;		       /* rpg_min_dec_fac, percent kept */
	p->g = 1016;			       /* dce_tcp_g: 1/128 */
	p->alpha_period_ns = 50000 * x / 1024; /* dce_tcp_rtt: the CNP interval */
	p->reduce_period_ns = 4000;	       /* rate_reduce_monitor_period */
	p->initial_alpha = 1023;	       /* initial_alpha_value */
	p->cut_per_rtt = 1;
	p->cut_from_sent = 0;
	p->ai_rate_ppm = 300;
	p->target_cut_pct = 3;
	p->clamp_tgt_rate = 1;
	p->level_cut_pct = 5;
	p->level_min_share = 6;
	p->level_max_alpha = 716; /* 0.7 */
	p->first_cut_pct = 100;
	p->paced_cut_pct = 15;
	p->paced_min_share = 10;
}

uint64_t
droce_cc_dcqcn_cnp_interval(uint64_t link_bps)
{
	return 50000 * stretch_1024(link_bps) / 1024; /* the paper's 50 us */
}

/*
 * ConnectX-5's firmware values (mlxconfig's names) at 25 Gbit/s and above. They are tuned for
 * 25-100G, where a flow's packets come a microsecond or less apart. Below 25G the same run
 * is slowed down, as droce's defaults are: the timers (rate increase, alpha, the cut monitor,
 * the NP's CNP interval) stretch by 25G / link and the rate steps shrink by link / 25G. Left
 * at 1 us, alpha decays between one flow's packets at 2 Gbit/s (16 flows: 260 us apart), cuts
 * stay near nothing, and 8-16 flows hold the queue at the sum of their windows (CE 100 %).
 * The increase follows the HPCC simulator's model of the firmware (rdma-hw.cc, "Mellanox's
 * version of DCQCN"): the timer alone (byte_reset 0, where the firmware lists 32767), and
 * mlx5's target clamp. With a 32 KB byte stage and rpg_threshold 1, hyper increase came every
 * 10 us at 25 Gbit/s and 4-16 flows used 52-77 % of the link with CE 20-56 %.
 */
void
droce_cc_dcqcn_mlx5(struct droce_dcqcn_params *p, uint64_t link_bps)
{
	uint64_t l = link_bps != 0 ? link_bps : DCQCN_UNKNOWN_LINK, x = stretch_1024(l);

	p->line_rate_bps = p->max_rate_bps = l;	  /* rpg_max_rate 0 */
	p->min_rate_bps = 1000000;		  /* rpg_min_rate 1 */
	p->ai_rate_bps = 5000000ull * 1024 / x;	  /* rpg_ai_rate 5 */
	p->hai_rate_bps = 50000000ull * 1024 / x; /* rpg_hai_rate 50 */
	p->time_reset_ns = 300000 * x / 1024;	  /* rpg_time_reset 300 */
	p->byte_reset = 0;			  /* rpg_byte_reset: see above */
	p->threshold = 1;			  /* rpg_threshold */
	p->min_dec_fac = 50;			  /* rpg_min_dec_fac */
	p->g = 1019;				  /* dce_tcp_g */
	p->alpha_period_ns = 1000 * x / 1024;	  /* dce_tcp_rtt 1 */
	p->reduce_period_ns = 4000 * x / 1024;	  /* rate_reduce_monitor_period 4 */
	p->initial_alpha = 1023;		  /* initial_alpha_value */
	p->cut_per_rtt = 0;
	p->cut_from_sent = 0;
	p->ai_rate_ppm = 0;
	p->target_cut_pct = 0;
	p->clamp_tgt_rate = 0; /* clamp_tgt_rate 0, clamp_tgt_rate_after_time_inc 1 */
	p->level_cut_pct = 0;
	p->level_min_share = 0;
	p->level_max_alpha = 0;
	p->first_cut_pct = 0;
	p->paced_cut_pct = 0;
	p->paced_min_share = 0;
}

uint64_t
droce_cc_dcqcn_mlx5_cnp_interval(uint64_t link_bps)
{
	return 4000 * stretch_1024(link_bps) / 1024; /* min_time_between_cnps 4 us */
}

int
droce_cc_dcqcn_check(const struct droce_dcqcn_params *p)
{
	if (p == NULL || p->line_rate_bps == 0 || p->max_rate_bps == 0 || p->min_rate_bps == 0 ||
	    p->min_rate_bps > p->max_rate_bps || p->time_reset_ns == 0 || p->min_dec_fac > 100 ||
	    p->g > G_ONE || p->alpha_period_ns == 0 || p->initial_alpha > G_ONE ||
	    p->cut_per_rtt > 1 || p->cut_from_sent > 64 || p->clamp_tgt_rate > 1 ||
	    p->ai_rate_ppm > 1000000 || p->target_cut_pct > 100 || p->level_cut_pct > 100 ||
	    p->level_max_alpha > G_ONE || p->first_cut_pct > 100 || p->paced_cut_pct > 100)
		return -EINVAL;
	return 0;
}

static void
dcqcn_defaults_op(union droce_cc_params *p, uint64_t link_bps)
{
	droce_cc_dcqcn_defaults(&p->dcqcn, link_bps);
}

static int
dcqcn_check_op(const union droce_cc_params *p)
{
	return droce_cc_dcqcn_check(&p->dcqcn);
}

static void
dcqcn_init(struct droce_cc_state *s, uint64_t now_ns)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;

	s->w[W_RC] = s->w[W_RT] = P->max_rate_bps;
	s->w[W_ALPHA] = (uint64_t)P->initial_alpha << (ALPHA_SHIFT - 10);
	s->w[W_T_ALPHA] = s->w[W_T_TIMER] = now_ns;
	s->w[W_T_CUT] = UINT64_MAX;
	s->w[W_T_START] = now_ns;
	s->next_send_ns = now_ns;
}

/* The additive step: R_AI, and ai_rate_ppm millionths of RT */
static uint64_t
ai_step(const struct droce_dcqcn_params *P, uint64_t rt)
{
	return P->ai_rate_bps + rt / 1000000 * P->ai_rate_ppm;
}

/* One rate-increase event (a timer or byte-counter stage ended) on rates rc and rt, after t
 * timer and b byte stages. */
static void
increase_rates(const struct droce_dcqcn_params *P, uint64_t t, uint64_t b, uint64_t *rc,
	       uint64_t *rt)
{
	uint64_t hi = t > b ? t : b, lo = t < b ? t : b, f = P->threshold;

	if (P->byte_reset == 0) {
		/* no byte counter: the timer's stages alone, F of fast recovery, one additive
		 * step, then hyper steps */
		if (t > f + 1)
			*rt += P->hai_rate_bps;
		else if (t == f + 1)
			*rt += ai_step(P, *rt);
	} else if (hi >= f && lo >= f) { /* hyper increase */
		*rt += (lo - f + 1) * P->hai_rate_bps;
	} else if (hi >= f) { /* additive increase */
		*rt += ai_step(P, *rt);
	}
	/* and in fast recovery RT stays: RC climbs half way to it */
	if (*rt > P->max_rate_bps)
		*rt = P->max_rate_bps;
	/* rounded up, so that RC reaches RT (and line rate) instead of stopping 1 bit/s short */
	*rc = (*rt + *rc + 1) / 2;
}

static void
increase(struct droce_cc_state *s)
{
	increase_rates(&s->params->dcqcn, s->w[W_T_STAGE], s->w[W_B_STAGE], &s->w[W_RC],
		       &s->w[W_RT]);
}

/* Apply the alpha and timer periods that ended before now. */
static void
advance(struct droce_cc_state *s, uint64_t now)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	unsigned int i;

	for (i = 0; now >= s->w[W_T_ALPHA] && now - s->w[W_T_ALPHA] >= P->alpha_period_ns; i++) {
		s->w[W_T_ALPHA] += P->alpha_period_ns;
		if (s->w[W_CNP_IN_PERIOD]) {
			s->w[W_CNP_IN_PERIOD] = 0;
			continue; /* the CNP's own update stands for this period */
		}
		s->w[W_ALPHA] = s->w[W_ALPHA] * P->g / G_ONE;
		if (s->w[W_ALPHA] == 0 || i == 4096) {
			/* fully decayed, or a long idle: skip the rest at once */
			s->w[W_T_ALPHA] = now - (now - s->w[W_T_ALPHA]) % P->alpha_period_ns;
			if (i == 4096)
				s->w[W_ALPHA] = 0;
			break;
		}
	}
	/* A QP idle for more stages than recovery could take from the floor is back at line
	 * rate (bounds the walk: 5 Mb/s steps every 300 us from 1 Mb/s to 100G are 20000) */
	if (now >= s->w[W_T_TIMER] && (now - s->w[W_T_TIMER]) / P->time_reset_ns > 100000) {
		s->w[W_RC] = s->w[W_RT] = P->max_rate_bps;
		s->w[W_T_TIMER] = now - (now - s->w[W_T_TIMER]) % P->time_reset_ns;
	}
	while (now >= s->w[W_T_TIMER] && now - s->w[W_T_TIMER] >= P->time_reset_ns) {
		s->w[W_T_TIMER] += P->time_reset_ns;
		if (s->w[W_RC] == P->max_rate_bps) {
			/* recovered: nothing left to increase */
			s->w[W_T_TIMER] = now - (now - s->w[W_T_TIMER]) % P->time_reset_ns;
			break;
		}
		s->w[W_T_STAGE]++;
		increase(s);
	}
}

/*
 * The next packet may leave once this one's bytes have drained, at the rate the timer raises on
 * the way: a QP cut to a low rate would otherwise wait out the whole gap at that rate (a 4 KiB
 * packet at 1 Mbit/s: 33 ms) while its timer stages would have recovered it within a few
 * hundred microseconds. The stages are only foreseen here; advance() applies them when they
 * have passed. Bounded: after 64 stages the rest drains at the rate reached.
 */
static void
pace(struct droce_cc_state *s, uint32_t bytes, uint64_t now)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	uint64_t rc = s->w[W_RC], rt = s->w[W_RT], ts = s->w[W_T_STAGE], t, tt, bits, gap, d;
	unsigned int i;

	droce_cc_pace(s, bytes, now, rc, P->line_rate_bps);
	tt = s->w[W_T_TIMER] + P->time_reset_ns; /* the next timer stage */
	if (rc >= P->line_rate_bps || rc >= P->max_rate_bps || s->next_send_ns <= tt)
		return;
	gap = (uint64_t)bytes * 8u * 1000000000u / rc;
	t = s->next_send_ns - gap; /* where droce_cc_pace() started the gap */
	bits = (uint64_t)bytes * 8u;
	for (i = 0; i < 64 && t + bits * 1000000000u / rc > tt; i++) {
		d = tt > t ? tt - t : 0;
		bits -= d * rc / 1000000000u;
		t = tt;
		tt += P->time_reset_ns;
		increase_rates(P, ++ts, s->w[W_B_STAGE], &rc, &rt);
	}
	s->next_send_ns = t + bits * 1000000000u / rc;
}

static void
dcqcn_on_send(struct droce_cc_state *s, uint32_t bytes, uint64_t now_ns)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	advance(s, now_ns);
	s->w[W_BYTES] += bytes;
	s->w[W_SENT] += bytes;
	while (P->byte_reset != 0 && s->w[W_BYTES] >= P->byte_reset) {
		s->w[W_BYTES] -= P->byte_reset;
		if (s->w[W_RC] < P->max_rate_bps) {
			s->w[W_B_STAGE]++;
			increase(s);
		}
	}
	pace(s, bytes, now_ns);
}

/*
 * cut_per_rtt: the time after a cut in which a CNP does not cut again. A cut shows in the
 * marks only a round trip later, so the CNPs before that answer marks it answered already;
 * but no longer than the fast recovery takes (F timer stages), or a deep queue (a long round
 * trip) would hold the next cut back while it grows.
 */
static uint64_t
cut_spacing(const struct droce_cc_state *s)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	uint64_t fr = (uint64_t)(P->threshold != 0 ? P->threshold : 1) * P->time_reset_ns;

	return s->w[W_SRTT] < fr ? s->w[W_SRTT] : fr;
}

/* What the QP sent since t (its last cut, or its start before the first), in bit/s; false
 * when there is no such time or the span is shorter than a timer period, where one burst
 * says little of a rate. */
static bool
sent_since(const struct droce_cc_state *s, uint64_t t, uint64_t now, uint64_t *bps)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	uint64_t b = s->w[W_SENT], d;

	if (t == UINT64_MAX || now < t || now - t < P->time_reset_ns)
		return false;
	d = now - t;
	/* in ns, us or ms, whichever keeps b * 8 * units below 2^64 */
	if (b < (1ull << 31))
		*bps = b * 8u * 1000000000u / d;
	else if (b < (1ull << 40))
		*bps = b * 8u * 1000000u / (d / 1000 + 1);
	else
		*bps = b / (d / 1000000 + 1) * 8000u;
	return true;
}

/*
 * The rate a cut starts from: RC, or with cut_from_sent N, N times what the QP sent since the
 * last cut when that is less. RC is a ceiling: a QP held back by something else (its window,
 * the loop, a path slower than the port's link_bps) sends below it, and cuts of RC alone must
 * take RC down to the bottleneck before one shows in the queue (10 Gbit/s over a 2 Gbit/s
 * path: RC stayed near 8 Gbit/s live while the queue stayed marked). Over a span shorter than
 * a timer period RC stands. Off by default: in the simulator, flows that a two-message window
 * holds below RC are cut deeper and leave the link less used (pmd-glue/README.md, Congestion
 * control).
 */
static uint64_t
sent_rate(const struct droce_cc_state *s, uint64_t rc, uint64_t now)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	uint64_t r;

	if (P->cut_from_sent == 0 || !sent_since(s, s->w[W_T_CUT], now, &r))
		return rc;
	r *= P->cut_from_sent;
	if (r < P->min_rate_bps)
		r = P->min_rate_bps; /* a QP that sent nothing: the cut below would underflow */
	return r < rc ? r : rc;
}

/*
 * level_cut_pct: whether this cut lowers the target from its level rather than setting it to
 * the rate cut from. Where a CNP lands in a QP's recovery is chance; a target set to the
 * rate cut from inherits it, and with few flows, each a large share of the link, that left
 * 2 flows unequal for longer than 10 ms and the queue under Kmin while they recovered. Many
 * flows, and all of them while alpha is high from the start, need the rate cut from: it
 * brings their levels down to their shares within the first drain (the simulator's cases,
 * pmd-glue/README.md, Congestion control).
 */
static bool
level_cut(const struct droce_cc_state *s)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;

	return P->level_cut_pct != 0 && P->level_min_share != 0 &&
	       s->w[W_RT] >= P->max_rate_bps / P->level_min_share &&
	       s->w[W_ALPHA] < ((uint64_t)P->level_max_alpha << (ALPHA_SHIFT - 10));
}

/*
 * paced_cut_pct: whether the limiter, not the window, held this QP since its last cut: it
 * sent at least the rate that cut set. Such a QP's rate follows RC, and a target set to the
 * rate cut from would inherit where in its recovery the CNP landed; one its window holds
 * sends below RC (every flow in the start, while the queue holds the windows), and there the
 * cuts must take RT down to the window's rate (lowered from their levels instead, 16 flows
 * from line rate kept the queue marked for most of 20 ms).
 */
static bool
paced_cut(const struct droce_cc_state *s, uint64_t now)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	uint64_t r;

	return P->paced_cut_pct != 0 && P->paced_min_share != 0 &&
	       s->w[W_RT] >= P->max_rate_bps / P->paced_min_share &&
	       sent_since(s, s->w[W_T_CUT], now, &r) && r >= s->w[W_RC_CUT];
}

/* The share of the way from its level down to the new rate by which a cut lowers the target:
 * the level cut's for a QP among few past the start, else the paced cut's for a QP its
 * limiter holds; 0: neither, and target_cut_pct's rule holds. */
static uint32_t
level_step_pct(const struct droce_cc_state *s, uint64_t now)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;

	if (level_cut(s))
		return P->level_cut_pct;
	if (paced_cut(s, now))
		return P->paced_cut_pct;
	return 0;
}

/*
 * first_cut_pct: whether the QP's window, not its rate, held it since its start or last cut:
 * it sent under 90 % of RC. In the start every flow's window sits in the queue and the
 * first CNPs land over some 100 us; a flow alone on its link sends at its rate, and a CNP
 * that its own bursts drew (behind a Kmin of a frame) must not halve its target.
 */
static bool
window_held(const struct droce_cc_state *s, uint64_t now)
{
	uint64_t t = s->w[W_T_CUT] != UINT64_MAX ? s->w[W_T_CUT] : s->w[W_T_START], r;

	return sent_since(s, t, now, &r) && r < s->w[W_RC] / 100 * 90;
}

static void
dcqcn_on_cnp(struct droce_cc_state *s, uint64_t now_ns)
{
	const struct droce_dcqcn_params *P = &s->params->dcqcn;
	/* The cut starts from RC as the QP last sent at: timer stages that passed since, while
	 * it sent nothing (its window full), are not counted into the rate it is cut from, and
	 * the cut's RT replaces what they raised. Counting them (advance() first) cut flows
	 * held by their windows from rates they never used: over the simulator's 28 cases
	 * x 50 seeds 748 met every target against 1278; 16 flows at no seed, 8 at none
	 * without an in-flight cap. */
	uint64_t rc = sent_rate(s, s->w[W_RC], now_ns), cut, floor;
	uint32_t pct;

	advance(s, now_ns);
	/* alpha = (1 - g) alpha + g, in mlx5's terms G/1024 alpha + (1 - G/1024) */
	s->w[W_ALPHA] = (s->w[W_ALPHA] * P->g + (G_ONE - P->g) * ALPHA_ONE) / G_ONE;
	s->w[W_CNP_IN_PERIOD] = 1;
	if (s->w[W_T_CUT] != UINT64_MAX && now_ns - s->w[W_T_CUT] < P->reduce_period_ns) {
		s->w[W_CUTS] += IGNORED_ONE; /* at most one cut per monitor period */
		return;
	}
	if (P->cut_per_rtt && s->w[W_T_CUT] != UINT64_MAX &&
	    now_ns - s->w[W_T_CUT] < cut_spacing(s)) {
		/* The last cut cannot show in the queue before a round trip: cutting again
		 * compounds on marks it answered already (16 flows starting at line rate halved
		 * a dozen times in one drain). The CNP says the queue has not drained yet, so
		 * the recovery waits. */
		s->w[W_CUTS] += IGNORED_ONE;
		s->w[W_T_STAGE] = s->w[W_B_STAGE] = s->w[W_BYTES] = 0;
		s->w[W_T_TIMER] = now_ns;
		return;
	}
	cut = rc - rc / 2 * s->w[W_ALPHA] / ALPHA_ONE;
	floor = rc / 100 * P->min_dec_fac;
	if (cut < floor)
		cut = floor;
	if (cut < P->min_rate_bps)
		cut = P->min_rate_bps;
	if (P->first_cut_pct != 0 && s->w[W_RT] >= P->max_rate_bps && window_held(s, now_ns)) {
		s->w[W_RT] = rc - (rc - cut) * P->first_cut_pct / 100;
	} else if ((pct = level_step_pct(s, now_ns)) != 0) {
		uint64_t level = s->w[W_RT] > rc ? s->w[W_RT] : rc;

		s->w[W_RT] = level - (level - cut) / 100 * pct;
	} else if (P->clamp_tgt_rate || s->w[W_T_STAGE] != 0)
		s->w[W_RT] = rc - (rc - cut) / 100 * P->target_cut_pct;
	s->w[W_RC] = cut;
	s->w[W_RC_CUT] = cut;
	s->w[W_T_STAGE] = s->w[W_B_STAGE] = s->w[W_BYTES] = 0;
	s->w[W_T_TIMER] = now_ns;
	s->w[W_T_CUT] = now_ns;
	s->w[W_SENT] = 0;
	s->w[W_CUTS]++;
}

void
droce_cc_dcqcn_stats(const struct droce_cc_state *s, struct droce_dcqcn_stats *st)
{
	st->rate_bps = s->w[W_RC];
	st->target_bps = s->w[W_RT];
	st->alpha = (uint32_t)(s->w[W_ALPHA] >> (ALPHA_SHIFT - 10));
	st->cuts = s->w[W_CUTS] & (IGNORED_ONE - 1);
	st->cnp_ignored = s->w[W_CUTS] >> 32;
}

static unsigned int
dcqcn_stats(const struct droce_cc_state *s, struct droce_cc_stat *out, unsigned int n)
{
	static const char *const names[] = { "rate_mbps", "target_mbps", "alpha_1024", "cuts",
					     "cnp_ignored" };
	struct droce_dcqcn_stats st;
	int64_t v[5];

	droce_cc_dcqcn_stats(s, &st);
	v[0] = (int64_t)(st.rate_bps / 1000000);
	v[1] = (int64_t)(st.target_bps / 1000000);
	v[2] = st.alpha;
	v[3] = (int64_t)st.cuts;
	v[4] = (int64_t)st.cnp_ignored;
	return droce_cc_stats_fill(out, n, names, v, 5);
}

/* The round trip a cut takes to show (cut_per_rtt): an EWMA of 1/8, as TCP's SRTT. */
static void
dcqcn_on_rtt(struct droce_cc_state *s, uint64_t rtt_ns, uint64_t now_ns)
{
	(void)now_ns;
	s->w[W_SRTT] = s->w[W_SRTT] != 0 ? (s->w[W_SRTT] * 7 + rtt_ns) / 8 : rtt_ns;
}

const struct droce_cc_ops droce_cc_dcqcn = {
	.name = "dcqcn",
	.defaults = dcqcn_defaults_op,
	.check = dcqcn_check_op,
	.init = dcqcn_init,
	.on_send = dcqcn_on_send,
	.on_cnp = dcqcn_on_cnp,
	.on_ack = droce_cc_ignore, /* DCQCN hears the network only through CNPs */
	.next_send_time = droce_cc_next_send_ns,
	.on_rtt = dcqcn_on_rtt,
	.stats = dcqcn_stats,
};
