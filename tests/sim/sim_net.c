/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "droce_byteorder.h"
#include "wire/droce_eth.h"
#include "wire/droce_ipv4.h"

#include "sim_net.h"

void
sim_link_burst_loss(struct sim_link_cfg *c, double avg_loss, double burst)
{
	/* Bad state loses everything and lasts `burst` packets on average; the stationary share
	 * of the bad state, p_gb / (p_gb + p_bg), is then the average loss. */
	if (avg_loss <= 0) {
		c->ge_p_gb = c->ge_p_bg = c->ge_loss_bad = 0;
		return;
	}
	if (burst < 1)
		burst = 1;
	c->ge_loss_bad = 1.0;
	c->ge_p_bg = 1.0 / burst;
	c->ge_p_gb = avg_loss >= 1 ? 1.0 : avg_loss * c->ge_p_bg / (1.0 - avg_loss);
}

void
sim_net_init(struct sim_net *net, uint64_t seed)
{
	(void)seed;
	memset(net, 0, sizeof(*net));
	sim_heap_init(&net->heap);
	net->time_limit = UINT64_MAX;
	net->event_limit = UINT64_MAX;
}

void
sim_net_fini(struct sim_net *net)
{
	sim_heap_fini(&net->heap);
}

int
sim_net_add_node(struct sim_net *net, const uint8_t mac[6], const struct sim_node_ops *ops,
		 void *ctx, const struct sim_link_cfg *down, uint64_t seed)
{
	struct sim_node *n;
	unsigned int i = net->n_nodes;

	if (i >= SIM_MAX_NODES)
		return -ENOSPC;
	n = &net->node[i];
	memset(n, 0, sizeof(*n));
	n->ops = ops;
	n->ctx = ctx;
	memcpy(n->mac, mac, 6);
	if (down != NULL)
		n->down.cfg = *down;
	sim_rng_seed(&n->down.rng, seed, 100 + i);
	net->n_nodes++;
	return (int)i;
}

int
sim_frame_bth_off(const uint8_t *f, uint32_t len)
{
	uint32_t off = 12, l3;
	uint16_t et;

	if (len < 14)
		return -1;
	et = (uint16_t)(f[off] << 8 | f[off + 1]);
	if (et == DROCE_ETHERTYPE_VLAN) {
		off += 4;
		if (len < off + 2)
			return -1;
		et = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	l3 = off + 2;
	if (et == DROCE_ETHERTYPE_IPV4) {
		if (len < l3 + 20)
			return -1;
		off = l3 + (f[l3] & 0xF) * 4u + 8;
	} else if (et == DROCE_ETHERTYPE_IPV6) {
		off = l3 + 40 + 8;
	} else {
		return -1;
	}
	return off + 12 <= len ? (int)off : -1;
}

bool
sim_frame_mark_ce(uint8_t *f, uint32_t len)
{
	uint32_t l3 = 14;
	uint16_t et, csum;

	if (len < 14)
		return false;
	et = (uint16_t)(f[12] << 8 | f[13]);
	if (et == DROCE_ETHERTYPE_VLAN) {
		l3 = 18;
		if (len < 18)
			return false;
		et = (uint16_t)(f[16] << 8 | f[17]);
	}
	if (et == DROCE_ETHERTYPE_IPV4 && len >= l3 + 20) {
		unsigned int ihl = (f[l3] & 0xF) * 4u;

		/* RFC 3168 5: only ECN-capable transport may be marked; CE stays CE. */
		if ((f[l3 + 1] & 3) == DROCE_ECN_NOT_ECT || (f[l3 + 1] & 3) == DROCE_ECN_CE ||
		    len < l3 + ihl)
			return false;
		f[l3 + 1] |= DROCE_ECN_CE;
		f[l3 + 10] = f[l3 + 11] = 0;
		csum = droce_ipv4_csum(f + l3, ihl);
		f[l3 + 10] = (uint8_t)(csum >> 8);
		f[l3 + 11] = (uint8_t)csum;
		return true;
	}
	if (et == DROCE_ETHERTYPE_IPV6 && len >= l3 + 40) {
		unsigned int ecn = (f[l3 + 1] >> 4) & 3;

		if (ecn == DROCE_ECN_NOT_ECT || ecn == DROCE_ECN_CE)
			return false;
		f[l3 + 1] |= 0x30;
		return true;
	}
	return false;
}

/* Flip 1-3 bits where only the ICRC can tell (IBTA A17.3.3 covers them unmasked): from the BTH's
 * destination QP on (the BTH byte 4 before it is masked, and the opcode/PadCnt/TVer bytes are
 * checked structurally first), through the extension headers, payload and the ICRC itself. */
static void
corrupt_frame(struct sim_rng *rng, uint8_t *f, uint32_t len)
{
	int bth = sim_frame_bth_off(f, len);
	uint32_t lo = bth >= 0 ? (uint32_t)bth + 5 : 14;
	unsigned int k = 1 + (unsigned int)sim_rng_below(rng, 3), i;

	uint32_t pos[3];

	if (len <= lo)
		lo = 0;
	if (len - lo < k)
		k = 1;
	for (i = 0; i < k; i++) {
		unsigned int j;

		/* Distinct bytes: two flips of one bit would cancel. */
		do {
			pos[i] = lo + (uint32_t)sim_rng_below(rng, len - lo);
			for (j = 0; j < i && pos[j] != pos[i]; j++)
				;
		} while (j < i);
		f[pos[i]] ^= (uint8_t)(1u << sim_rng_below(rng, 8));
	}
}

/*
 * Gilbert-Elliott: one chain step per frame, plus one per MTU-sized slot of idle time, so that
 * a burst is a stretch of time rather than of frames (a retransmission a millisecond later does
 * not find the link still in the bad state). Two-state chain after k steps:
 * P(bad | bad) = pi + (1 - pi) l^k, P(bad | good) = pi (1 - l^k), pi = gb / (gb + bg),
 * l = 1 - gb - bg. Returns the probability of flipping the current state.
 */
static double
ge_flip(const struct sim_port *p, const struct sim_link_cfg *c, uint64_t now)
{
	uint64_t slot = c->rate_bps != 0 ? 1100ull * 8000000000ull / c->rate_bps : 1000;
	double k = 1, pi = c->ge_p_gb / (c->ge_p_gb + c->ge_p_bg), l = 1 - c->ge_p_gb - c->ge_p_bg;
	double lk;

	if (slot == 0)
		slot = 1;
	if (now > p->ge_last)
		k += (double)((now - p->ge_last) / slot);
	lk = pow(l, k);
	return p->ge_bad ? 1 - (pi + (1 - pi) * lk) : pi * (1 - lk);
}

static void
schedule(struct sim_net *net, unsigned int dst, uint8_t *buf, uint32_t len, uint64_t t,
	 uint64_t pseq)
{
	struct sim_event ev = { .t = t, .buf = buf, .len = len, .node = dst, .pseq = pseq };

	if (sim_heap_push(&net->heap, &ev) != 0)
		free(buf);
}

void
sim_net_send(struct sim_net *net, unsigned int src, uint8_t *buf, uint32_t len)
{
	struct sim_node *dn = NULL;
	struct sim_port *p;
	struct sim_link_cfg *c;
	unsigned int dst, fate = 0;
	uint64_t now = net->now, depart, arrive, backlog = 0, pseq;
	uint8_t *copy = NULL;

	for (dst = 0; dst < net->n_nodes; dst++)
		if (len >= 6 && memcmp(net->node[dst].mac, buf, 6) == 0) {
			dn = &net->node[dst];
			break;
		}
	if (dn == NULL || dst == src) {
		net->noroute++;
		if (net->tx_hook != NULL)
			net->tx_hook(net->tx_hook_arg, src, dst, buf, len, SIM_FATE_NOROUTE, now,
				     0);
		free(buf);
		return;
	}
	p = &dn->down;
	c = &p->cfg;
	pseq = ++p->pseq;
	p->st.frames++;
	p->st.bytes += len;

	/* The egress queue: FIFO serialisation at the port rate. */
	if (c->rate_bps != 0 && p->busy_until > now)
		backlog = (p->busy_until - now) * c->rate_bps / 8000000000ull;
	if (c->qcap_bytes != 0 && backlog + len > c->qcap_bytes) {
		p->st.tail_drop++;
		fate |= SIM_FATE_LOST;
		goto out;
	}
	if (backlog > p->st.max_backlog)
		p->st.max_backlog = backlog;
	p->st.backlog_sum += backlog;
	if (c->red_kmax != 0 && backlog > c->red_kmin) {
		double pm = backlog >= c->red_kmax ? 1.0 :
						     c->red_pmax * (double)(backlog - c->red_kmin) /
							     (double)(c->red_kmax - c->red_kmin);

		if (sim_rng_chance(&p->rng, pm) && sim_frame_mark_ce(buf, len)) {
			p->st.ce_marked++;
			fate |= SIM_FATE_CE;
		}
	}
	depart = p->busy_until > now ? p->busy_until : now;
	if (c->rate_bps != 0)
		depart += ((uint64_t)len * 8000000000ull + c->rate_bps - 1) / c->rate_bps;
	p->busy_until = depart;

	/* The wire. */
	if (c->down) {
		p->st.down_lost++;
		fate |= SIM_FATE_LOST;
		goto out;
	}
	if (net->pick != NULL) {
		unsigned int f = net->pick(net->pick_arg, src, buf, len);

		if (f != 0)
			p->st.picked++;
		if (f & SIM_FATE_LOST) {
			fate |= SIM_FATE_LOST;
			goto out;
		}
		if ((f & SIM_FATE_DUP) && (copy = malloc(len)) != NULL) {
			memcpy(copy, buf, len);
			fate |= SIM_FATE_DUP;
		}
	}
	if (c->ge_p_gb > 0) {
		if (sim_rng_chance(&p->rng, ge_flip(p, c, now)))
			p->ge_bad = !p->ge_bad;
		p->ge_last = now;
		if (p->ge_bad && sim_rng_chance(&p->rng, c->ge_loss_bad)) {
			p->st.burst_lost++;
			fate |= SIM_FATE_LOST;
			goto out;
		}
	}
	if (sim_rng_chance(&p->rng, c->loss)) {
		p->st.lost++;
		fate |= SIM_FATE_LOST;
		goto out;
	}
	arrive = depart + c->delay_ns;
	if (c->jitter_ns != 0)
		arrive += sim_rng_below(&p->rng, c->jitter_ns + 1);
	if (sim_rng_chance(&p->rng, c->reorder)) {
		arrive += c->reorder_ns != 0 ? c->reorder_ns : 10000;
		p->st.reordered++;
		fate |= SIM_FATE_REORDER;
	}
	if (sim_rng_chance(&p->rng, c->dup) && copy == NULL) {
		copy = malloc(len);
		if (copy != NULL) {
			memcpy(copy, buf, len);
			p->st.duplicated++;
			fate |= SIM_FATE_DUP;
		}
	}
	if (sim_rng_chance(&p->rng, c->corrupt))
		fate |= SIM_FATE_CORRUPT;
	/* The hook sees the frame as sent; the corruption happens on the wire after. */
	if (net->tx_hook != NULL)
		net->tx_hook(net->tx_hook_arg, src, dst, buf, len, fate, now, arrive);
	if (fate & SIM_FATE_CORRUPT) {
		corrupt_frame(&p->rng, buf, len);
		p->st.corrupted++;
	}
	p->st.delivered++;
	schedule(net, dst, buf, len, arrive, pseq);
	if (copy != NULL) {
		p->st.delivered++;
		/* The copy trails the original by a little, as a duplicating switch would. */
		schedule(net, dst, copy, len, arrive + 1 + sim_rng_below(&p->rng, 2000), pseq);
	}
	return;
out:
	if (net->tx_hook != NULL)
		net->tx_hook(net->tx_hook_arg, src, dst, buf, len, fate, now, 0);
	free(buf);
}

const char *
sim_result_name(enum sim_result r)
{
	switch (r) {
	case SIM_DONE:
		return "done";
	case SIM_IDLE:
		return "idle (nothing left to happen, work unfinished)";
	case SIM_TIME_LIMIT:
		return "hang: virtual-time limit reached";
	case SIM_EVENT_LIMIT:
		return "hang: event-count limit reached";
	}
	return "?";
}

/* Hand every frame due by now to its node, in bursts, then let each node that received or
 * whose deadline passed run its timers and transmit. */
static void
deliver_and_process(struct sim_net *net)
{
	uint8_t *bufs[SIM_MAX_NODES][SIM_BURST];
	const uint8_t *cbufs[SIM_BURST];
	uint32_t lens[SIM_MAX_NODES][SIM_BURST];
	unsigned int cnt[SIM_MAX_NODES] = { 0 }, i, j;
	bool got[SIM_MAX_NODES] = { false };
	struct sim_event ev;

	for (;;) {
		bool flush = sim_heap_min_time(&net->heap) > net->now;

		for (i = 0; i < net->n_nodes; i++) {
			if (cnt[i] == 0 || (!flush && cnt[i] < SIM_BURST))
				continue;
			for (j = 0; j < cnt[i]; j++)
				cbufs[j] = bufs[i][j];
			net->node[i].ops->rx(net->node[i].ctx, cbufs, lens[i], cnt[i], net->now);
			for (j = 0; j < cnt[i]; j++)
				free(bufs[i][j]);
			cnt[i] = 0;
		}
		if (flush)
			break;
		sim_heap_pop(&net->heap, &ev);
		/* Late: a frame that entered the port after this one was delivered before it. */
		if (ev.pseq < net->node[ev.node].down.max_pseq)
			net->node[ev.node].down.st.late++;
		else
			net->node[ev.node].down.max_pseq = ev.pseq;
		bufs[ev.node][cnt[ev.node]] = ev.buf;
		lens[ev.node][cnt[ev.node]++] = ev.len;
		got[ev.node] = true;
	}
	for (i = 0; i < net->n_nodes; i++) {
		struct sim_node *n = &net->node[i];

		if (got[i] || n->ops->deadline(n->ctx) <= net->now)
			n->ops->process(n->ctx, net->now);
	}
}

enum sim_result
sim_net_run(struct sim_net *net, struct sim_app *app)
{
	unsigned int i;

	for (;;) {
		uint64_t t;

		if (app->done(app->arg))
			return SIM_DONE;
		t = sim_heap_min_time(&net->heap);
		for (i = 0; i < net->n_nodes; i++) {
			uint64_t d = net->node[i].ops->deadline(net->node[i].ctx);

			if (d < t)
				t = d;
		}
		if (app->wake < t)
			t = app->wake;
		if (t == UINT64_MAX)
			return SIM_IDLE;
		if (t < net->now)
			t = net->now; /* an overdue deadline runs now */
		if (t > net->time_limit)
			return SIM_TIME_LIMIT;
		if (++net->events > net->event_limit)
			return SIM_EVENT_LIMIT;
		net->now = t;
		deliver_and_process(net);
		if (app->wake <= net->now)
			app->wake = UINT64_MAX;
		app->step(app->arg, net->now);
		for (i = 0; i < net->n_nodes; i++)
			if (net->node[i].ops->flush != NULL)
				net->node[i].ops->flush(net->node[i].ctx);
	}
}
