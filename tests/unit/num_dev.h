/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NUM_DEV_H
#define NUM_DEV_H

/*
 * A device of its own, for tests of objects rather than traffic: it sends nothing, its first
 * random number (the QPN generation) is scripted, and its shard is the caller's.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "droce_pkt.h"
#include "droce_verbs.h"

struct num_dev {
	struct droce_dev *dev;
	struct droce_pd *pd;
	struct droce_cq *cq;
	uint64_t gen0; /* what droce_dev_create() draws first: the QPN generation */
	uint64_t rng;
	bool drawn;
};

static inline uint8_t *
num_tx_alloc(void *ctx, uint32_t len, void **cookie)
{
	(void)ctx;
	(void)len;
	(void)cookie;
	return NULL;
}

static inline void
num_tx_send(void *ctx, void *cookie, uint32_t len)
{
	(void)ctx;
	(void)cookie;
	(void)len;
}

static inline uint64_t
num_rand64(void *ctx)
{
	struct num_dev *n = ctx;

	if (!n->drawn) {
		n->drawn = true;
		return n->gen0;
	}
	n->rng ^= n->rng << 13;
	n->rng ^= n->rng >> 7;
	n->rng ^= n->rng << 17;
	return n->rng;
}

static inline int
num_dev_init_gsi(struct num_dev *n, uint32_t max_qp, uint8_t shard, uint8_t shard_bits,
		 uint64_t gen0, bool gsi_any_shard)
{
	struct droce_io io = { num_tx_alloc, num_tx_send, num_rand64, n };
	struct droce_dev_attr a;
	int err = 0;

	memset(n, 0, sizeof(*n));
	n->gen0 = gen0;
	n->rng = 0x9E3779B97F4A7C15ull;
	memset(&a, 0, sizeof(a));
	a.mac[0] = 2;
	droce_gid_from_v4(a.gids[0], 0x0A000001u);
	a.num_gids = 1;
	a.eth_mtu = 1500;
	a.max_qp = max_qp;
	a.max_cq = a.max_pd = a.max_mr = a.max_srq = a.max_ah = 1;
	a.shard = shard;
	a.shard_bits = shard_bits;
	a.gsi_any_shard = gsi_any_shard;
	n->dev = droce_dev_create(&a, &io, &err);
	if (n->dev == NULL)
		return -err;
	n->pd = droce_pd_alloc(n->dev, &err);
	n->cq = droce_cq_create(n->dev, 16, NULL, &err);
	return n->pd != NULL && n->cq != NULL ? 0 : -ENOMEM;
}

static inline int
num_dev_init(struct num_dev *n, uint32_t max_qp, uint8_t shard, uint8_t shard_bits, uint64_t gen0)
{
	return num_dev_init_gsi(n, max_qp, shard, shard_bits, gen0, false);
}

static inline struct droce_qp *
num_qp(struct num_dev *n, enum droce_qp_type t, bool gsi, int *err)
{
	struct droce_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.qp_type = t;
	ia.send_cq = n->cq;
	ia.recv_cq = n->cq;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.gsi = gsi;
	*err = 0;
	return droce_qp_create(n->pd, &ia, err);
}

#endif /* NUM_DEV_H */
