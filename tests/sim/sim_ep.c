/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_ext.h"
#include "droce_pkt.h"

#include "sim_ep.h"

/*
 * The I/O callbacks do as little as possible, as a NIC driver's would: tx_alloc mallocs a frame
 * and remembers its size, tx_send queues it; the queue goes to the network when the engine call
 * returns (same virtual time), so the engine's cost can be measured apart from the simulator's.
 */
static uint8_t *
ep_tx_alloc(void *ctx, uint32_t len, void **cookie)
{
	struct sim_ep *ep = ctx;
	uint8_t *buf;

	if (sim_rng_chance(&ep->rng, ep->tx_busy) || ep->n_out == SIM_EP_OUT) {
		ep->tx_none++;
		return NULL;
	}
	buf = malloc(len != 0 ? len : 1);
	if (buf == NULL) {
		ep->tx_none++;
		return NULL;
	}
	ep->out[ep->n_out].buf = buf;
	ep->out[ep->n_out++].cap = len;
	ep->tx_allocs++;
	*cookie = buf;
	return buf;
}

static void
ep_tx_send(void *ctx, void *cookie, uint32_t len)
{
	struct sim_ep *ep = ctx;
	unsigned int i;

	ep->tx_sends++;
	for (i = 0; i < ep->n_out && ep->out[i].buf != cookie; i++)
		;
	if (i == ep->n_out) {
		ep->tx_foreign++; /* not a buffer we handed out, or sent twice */
		return;
	}
	if (len > ep->out[i].cap) {
		ep->tx_overrun++;
		len = ep->out[i].cap;
	}
	ep->out[i] = ep->out[--ep->n_out];
	if (ep->n_pend == ep->cap_pend) {
		unsigned int cap = ep->cap_pend != 0 ? 2 * ep->cap_pend : 64;
		void *np = realloc(ep->pend, cap * sizeof(*ep->pend));

		if (np == NULL) {
			free(cookie);
			return;
		}
		ep->pend = np;
		ep->cap_pend = cap;
	}
	ep->pend[ep->n_pend].buf = cookie;
	ep->pend[ep->n_pend++].cap = len;
}

void
sim_ep_flush(struct sim_ep *ep)
{
	unsigned int i;

	/* In transmit order. */
	for (i = 0; i < ep->n_pend; i++)
		sim_net_send(ep->net, ep->idx, ep->pend[i].buf, ep->pend[i].cap);
	ep->n_pend = 0;
}

static uint64_t
ep_rand64(void *ctx)
{
	struct sim_ep *ep = ctx;

	return sim_rng_next(&ep->rng);
}

static void
ep_rx(void *ctx, const uint8_t *const *frames, const uint32_t *lens, unsigned int n, uint64_t now)
{
	struct sim_ep *ep = ctx;

	ep->rx_frames += n;
	droce_dev_rx_burst(ep->dev, frames, lens, n, now);
	sim_ep_flush(ep);
}

static unsigned int
ep_process(void *ctx, uint64_t now)
{
	struct sim_ep *ep = ctx;
	unsigned int n = droce_dev_process(ep->dev, now, ep->budget);

	sim_ep_flush(ep);
	return n;
}

static uint64_t
ep_deadline(void *ctx)
{
	struct sim_ep *ep = ctx;

	return droce_dev_next_deadline(ep->dev);
}

static void
ep_flush(void *ctx)
{
	sim_ep_flush(ctx);
}

static const struct sim_node_ops ep_ops = {
	.rx = ep_rx,
	.process = ep_process,
	.deadline = ep_deadline,
	.flush = ep_flush,
};

int
sim_ep_create(struct sim_ep *ep, struct sim_net *net, uint64_t seed,
	      const struct sim_link_cfg *down, uint32_t eth_mtu)
{
	struct droce_dev_attr attr;
	struct droce_io io;
	unsigned int i = net->n_nodes;
	int err = 0, idx;

	memset(ep, 0, sizeof(*ep));
	ep->net = net;
	ep->budget = 64;
	sim_rng_seed(&ep->rng, seed, 200 + i);
	ep->mac[0] = 0x02;
	ep->mac[5] = (uint8_t)(i + 1);
	droce_gid_from_v4(ep->gid, 0x0A000001u + i);

	memset(&attr, 0, sizeof(attr));
	memcpy(attr.mac, ep->mac, 6);
	memcpy(attr.gids[0], ep->gid, 16);
	attr.num_gids = 1;
	attr.eth_mtu = eth_mtu;
	attr.max_qp = 64;
	attr.max_cq = 160;
	attr.max_mr = 64;
	attr.max_mw = 8;
	attr.max_srq = 8;
	attr.max_ah = 16;
	attr.max_pd = 4;
	io.tx_alloc = ep_tx_alloc;
	io.tx_send = ep_tx_send;
	io.rand64 = ep_rand64;
	io.ctx = ep;
	ep->dev = droce_dev_create(&attr, &io, &err);
	if (ep->dev == NULL)
		return -(err != 0 ? err : EINVAL);
	idx = sim_net_add_node(net, ep->mac, &ep_ops, ep, down, seed);
	if (idx < 0) {
		droce_dev_destroy(ep->dev);
		return idx;
	}
	ep->idx = (unsigned int)idx;
	return 0;
}

void
sim_ep_destroy(struct sim_ep *ep)
{
	unsigned int i;

	if (ep->dev != NULL)
		droce_dev_destroy(ep->dev);
	ep->dev = NULL;
	for (i = 0; i < ep->n_pend; i++)
		free(ep->pend[i].buf);
	free(ep->pend);
	ep->pend = NULL;
	ep->n_pend = 0;
}

void
sim_ep_av(const struct sim_ep *to, struct droce_av *av)
{
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, to->gid, 16);
	memcpy(av->dmac, to->mac, 6);
	av->hop_limit = 64;
}

void
sim_qp_params_default(struct sim_qp_params *p)
{
	memset(p, 0, sizeof(*p));
	p->mtu = DROCE_MTU_1024;
	p->access = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
		    DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC;
	p->sq_psn = 0x100;
	p->rq_psn = 0x100;
	p->qkey = 0x11111111;
	p->timeout = 8; /* ~1 ms */
	p->retry_cnt = 7;
	p->rnr_retry = 7;
	p->min_rnr_timer = 1; /* 0.01 ms */
	p->max_rd_atomic = 8;
	p->max_dest_rd_atomic = 8;
}

int
sim_qp_bring_up(struct droce_qp *qp, enum droce_qp_type type, const struct sim_ep *peer,
		uint32_t peer_qpn, const struct sim_qp_params *p)
{
	struct droce_qp_conn c;
	int rc;

	if (p->sr && (rc = droce_qp_set_recovery(qp, DROCE_RECOVERY_SR)) != 0)
		return rc;
	rc = droce_qp_init(qp, p->access, p->qkey);
	if (rc != 0)
		return rc;
	memset(&c, 0, sizeof(c));
	if (type != DROCE_QPT_UD)
		sim_ep_av(peer, &c.av);
	c.dest_qp_num = peer_qpn;
	c.rq_psn = p->rq_psn;
	c.sq_psn = p->sq_psn;
	c.path_mtu = p->mtu;
	c.timeout = p->timeout;
	c.retry_cnt = p->retry_cnt;
	c.rnr_retry = p->rnr_retry;
	c.max_rd_atomic = p->max_rd_atomic;
	c.max_dest_rd_atomic = p->max_dest_rd_atomic;
	c.min_rnr_timer = p->min_rnr_timer;
	return droce_qp_connect(qp, &c);
}
