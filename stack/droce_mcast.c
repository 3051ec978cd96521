/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast: the groups a device's QPs are attached to, and the delivery of a datagram
 * sent to a group (DestQP 0xFFFFFF, the multicast QPN) to each member's receive queue, as
 * ibv_attach_mcast(3) defines it. No SM: on RoCE a group is just its GID (IP multicast).
 * Small fixed tables, searched linearly: a handful of groups, no allocation on the Rx path.
 */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_opcode.h"

static struct droce_mcast_grp *
grp_find(struct droce_dev *dev, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < DROCE_MCAST_GROUPS; i++)
		if (dev->mcast[i].nqp != 0 && memcmp(dev->mcast[i].gid, gid, 16) == 0)
			return &dev->mcast[i];
	return NULL;
}

bool
droce_mcast_mac_joined(const struct droce_dev *dev, const uint8_t mac[6])
{
	unsigned int i;

	for (i = 0; i < DROCE_MCAST_GROUPS; i++)
		if (dev->mcast[i].nqp != 0 && memcmp(dev->mcast[i].mac, mac, 6) == 0)
			return true;
	return false;
}

static int
grp_member(const struct droce_mcast_grp *g, const struct droce_qp *qp)
{
	uint32_t i;

	for (i = 0; i < g->nqp; i++)
		if (g->qps[i] == qp)
			return (int)i;
	return -1;
}

static void
grp_remove(struct droce_mcast_grp *g, unsigned int i)
{
	g->qps[i]->mcast_n--;
	g->qps[i] = g->qps[--g->nqp]; /* an empty group is a free slot */
}

int
droce_mcast_attach(struct droce_qp *qp, const uint8_t gid[16])
{
	struct droce_mcast_grp *g;
	unsigned int i;

	/* Only UD QPs join groups; the GID must be a group's, not a unicast address. */
	if (qp == NULL || !qp->used || gid == NULL || qp->type != DROCE_QPT_UD ||
	    !droce_gid_is_multicast(gid))
		return -EINVAL;
	/* A runtime of several shards hands DestQP 0xFFFFFF to shard 0 (as DestQP 1): a member
	 * on another shard would never receive, so it is refused, not left deaf. */
	if (qp->dev->attr.shard_bits != 0 && qp->dev->attr.shard != 0)
		return -EOPNOTSUPP;
	g = grp_find(qp->dev, gid);
	if (g == NULL) {
		for (i = 0; i < DROCE_MCAST_GROUPS && qp->dev->mcast[i].nqp != 0; i++)
			;
		if (i == DROCE_MCAST_GROUPS)
			return -ENOMEM;
		g = &qp->dev->mcast[i];
		memcpy(g->gid, gid, 16);
		droce_gid_mcast_mac(gid, g->mac);
	}
	if (grp_member(g, qp) >= 0)
		return 0; /* attached already: as in rxe, not an error */
	if (g->nqp == DROCE_MCAST_QPS)
		return -ENOMEM;
	g->qps[g->nqp++] = qp;
	qp->mcast_n++;
	return 0;
}

int
droce_mcast_detach(struct droce_qp *qp, const uint8_t gid[16])
{
	struct droce_mcast_grp *g;
	int i;

	if (qp == NULL || !qp->used || gid == NULL)
		return -EINVAL;
	g = grp_find(qp->dev, gid);
	i = g != NULL ? grp_member(g, qp) : -1;
	if (i < 0)
		return -EINVAL;
	grp_remove(g, (unsigned int)i);
	return 0;
}

void
droce_mcast_detach_all(struct droce_qp *qp)
{
	unsigned int k;
	int i;

	for (k = 0; k < DROCE_MCAST_GROUPS && qp->mcast_n != 0; k++) {
		i = qp->dev->mcast[k].nqp != 0 ? grp_member(&qp->dev->mcast[k], qp) : -1;
		if (i >= 0)
			grp_remove(&qp->dev->mcast[k], (unsigned int)i);
	}
}

/* Each member but skip takes its own copy (its Q_Key check, a receive WQE, a completion); the
 * receive path never changes a group, so its list is walked as it is. */
static void
deliver(const struct droce_mcast_grp *g, const struct droce_pkt *p, const uint8_t *frame,
	uint32_t len, uint64_t now, const struct droce_qp *skip)
{
	struct droce_qp *qp;
	uint32_t i;

	for (i = 0; i < g->nqp; i++) {
		qp = g->qps[i];
		if (qp == skip)
			continue;
		qp->cnt[DROCE_CNT_RCVD_PKTS]++;
		qp->cnt[DROCE_CNT_RCVD_BYTES] += len;
		qp->cnt[DROCE_CNT_MCAST_RCVD]++;
		droce_resp_rx(qp, p, frame, now);
	}
}

void
droce_mcast_rx(struct droce_dev *dev, const struct droce_pkt *p, const uint8_t *frame, uint32_t len,
	       uint64_t now)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	struct droce_mcast_grp *g;

	/* DestQP 0xFFFFFF means multicast: only a datagram (UD SEND) sent to a group's GID. */
	if (!(op->flags & DROCE_OPF_UD) || (op->flags & DROCE_OPF_CNP)) {
		droce_dev_drop(dev, DROCE_DROP_QPT_OPCODE);
		return;
	}
	if (!droce_gid_is_multicast(p->dgid)) {
		droce_dev_drop(dev, DROCE_DROP_MCAST_NOT_GROUP);
		return;
	}
	g = grp_find(dev, p->dgid);
	if (g == NULL) {
		droce_dev_drop(dev, DROCE_DROP_MCAST_NO_MEMBER);
		return;
	}
	/* Annex A17.4: the group's frames come to its MAC (RFC 1112 6.4, RFC 2464 7), or to
	 * this port's own; never broadcast, never another group's */
	if (memcmp(p->dmac, g->mac, 6) != 0 && memcmp(p->dmac, dev->attr.mac, 6) != 0) {
		droce_dev_drop(dev, DROCE_DROP_DST_MAC);
		return;
	}
	if (!droce_pkey_ok(p->pkey)) { /* as for a unicast datagram */
		droce_dev_drop(dev, DROCE_DROP_PKEY);
		return;
	}
	dev->drops.cnt[DROCE_DROP_NONE]++;
	deliver(g, p, frame, len, now, NULL);
}

/*
 * As on an RNIC's port (mlx5, and rxe through the kernel's IP multicast loop), a datagram a
 * device sends to a group also reaches the group's members on that device, the sender itself
 * included unless it was created with block_self_mcast_lb. The frame just built goes through
 * the receive path before it leaves: UD answers nothing, so nothing is sent from inside the
 * send. A frame the parser refuses cannot be one the builder wrote; it is simply not looped.
 */
void
droce_mcast_loop(struct droce_qp *sender, const uint8_t *frame, uint32_t len)
{
	struct droce_dev *dev = sender->dev;
	struct droce_mcast_grp *g;
	struct droce_pkt p;

	if (droce_parse(frame, len, &p, dev->rx_parse_flags) != DROCE_DROP_NONE)
		return;
	g = grp_find(dev, p.dgid);
	if (g == NULL)
		return;
	droce_qp_cnt(sender, DROCE_CNT_MCAST_LOOPED);
	deliver(g, &p, frame, len, dev->now, sender->mcast_no_self ? sender : NULL);
}
