/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device: object pools, receive dispatch by QPN (one table slot per QPN, O(1)), transmit
 * scheduling over a ready list of QPs with work, one deadline per QP kept in a min-heap, and the
 * asynchronous event queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "droce_ext.h"
#include "droce_internal.h"
#include "droce_rx_addr.h"
#include "wire/droce_bth.h"
#include "wire/droce_ipv4.h"

/* Largest path MTU whose packets (IPv6 + UDP + BTH + the longest extension chain + ICRC: 92 B)
 * fit the Ethernet MTU; rxe derives it the same way (netdev MTU minus headers). */
static uint32_t
active_mtu(uint32_t eth_mtu)
{
	uint32_t m;

	if (eth_mtu == 0)
		eth_mtu = 1500;
	for (m = DROCE_MTU_4096; m > DROCE_MTU_256; m--)
		if (droce_mtu_bytes(m) + 92 <= eth_mtu)
			break;
	return m;
}

/*
 * A table sized for the device's maxima, zeroed and touched only where objects are used. From
 * 4 MiB on, transparent huge pages where the system allows them on request: a table of 16384 QP
 * slots is 48 MB, and faulting it in 4 KiB at a time cost a page fault every one or two QPs
 * created (a few microseconds each in a VM), 2 MiB at a time one every 700.
 */
static void *
table_calloc(size_t n, size_t size)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	void *p = calloc(n, size);
	uintptr_t lo, hi;

	if (p == NULL || n * size < 2 * huge)
		return p;
	lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	hi = ((uintptr_t)p + n * size) & ~(huge - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: 4 KiB pages without */
	return p;
}

struct droce_dev *
droce_dev_create(const struct droce_dev_attr *attr, const struct droce_io *io, int *err)
{
	struct droce_dev *dev;
	uint32_t nqp, nmr;

	if (attr == NULL || io == NULL || io->tx_alloc == NULL || io->tx_send == NULL ||
	    io->rand64 == NULL || attr->num_gids == 0 || attr->num_gids > DROCE_MAX_GIDS ||
	    attr->max_qp == 0 || attr->max_qp > (1u << 20) || attr->max_mw > (1u << 20)) {
		if (err)
			*err = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		goto nomem;
	dev->attr = *attr;
	dev->io = *io;
	dev->active_mtu = active_mtu(attr->eth_mtu);
	/* QPNs 0 and 1 are the special QPs (IBTA 11.2.5): ordinary QPs never take slots 0 and 1.
	 * Slot 1 holds the GSI when one is created (QPN 1, droce_qp_init_attr.gsi); slot 0 stays
	 * empty: RoCEv2 has no SMI and drops DestQP 0 (Annex A17.6, CA17-33). */
	nqp = droce_pow2_at_least(attr->max_qp + 2);
	nmr = droce_pow2_at_least(attr->max_mr + 1);
	dev->qp_mask = nqp - 1;
	dev->tx_quantum = DROCE_TX_QUANTUM;
	dev->mr_mask = nmr - 1;
	dev->qps = table_calloc(nqp, sizeof(*dev->qps));
	dev->mrs = table_calloc(nmr, sizeof(*dev->mrs));
	if (attr->max_mw != 0) {
		/* a window's slot sits above its key byte and below DROCE_KEY_MW (droce_mw.c) */
		dev->mw_mask = droce_pow2_at_least(attr->max_mw + 1) - 1;
		dev->mws = calloc(dev->mw_mask + 1, sizeof(*dev->mws));
		if (dev->mws == NULL) {
			droce_dev_destroy(dev);
			goto nomem;
		}
	}
	dev->pds = calloc(attr->max_pd + 1, sizeof(*dev->pds));
	dev->cqs = calloc(attr->max_cq + 1, sizeof(*dev->cqs));
	dev->srqs = calloc(attr->max_srq + 1, sizeof(*dev->srqs));
	dev->ahs = calloc(attr->max_ah + 1, sizeof(*dev->ahs));
	dev->heap = calloc(nqp, sizeof(*dev->heap));
	dev->heap_pos = malloc(nqp * sizeof(*dev->heap_pos));
	if (dev->heap_pos != NULL)
		memset(dev->heap_pos, 0xff, nqp * sizeof(*dev->heap_pos));
	dev->icrc_rx = table_calloc(nqp, sizeof(*dev->icrc_rx));
	/* ordinary QPs take slots 2 .. max_qp + 1 */
	if (!dev->qps || !dev->mrs || !dev->pds || !dev->cqs || !dev->srqs || !dev->ahs ||
	    !dev->heap || !dev->heap_pos || !dev->icrc_rx ||
	    droce_slots_init(&dev->qp_slots, 2, attr->max_qp + 2) != 0 ||
	    droce_slots_init(&dev->mr_slots, 1, attr->max_mr + 1) != 0 ||
	    droce_slots_init(&dev->cq_slots, 0, attr->max_cq) != 0) {
		droce_dev_destroy(dev);
		goto nomem;
	}
	droce_dev_set_gids(dev, (const uint8_t(*)[16])attr->gids, attr->num_gids);
	dev->qpn_gen = (uint32_t)io->rand64(io->ctx);
	dev->cnp_interval_ns = DROCE_CNP_INTERVAL_NS;
	dev->rto_heard = true; /* the first early resend goes */
	droce_inflight_defaults(&dev->inflight);
	return dev;
nomem:
	if (err)
		*err = ENOMEM;
	return NULL;
}

static bool
gid_is_zero(const uint8_t gid[16])
{
	static const uint8_t z[16];

	return memcmp(gid, z, 16) == 0;
}

int
droce_dev_set_gids(struct droce_dev *dev, const uint8_t (*gids)[16], unsigned int n)
{
	unsigned int i;

	if (dev == NULL || (gids == NULL && n != 0) || n > DROCE_MAX_GIDS)
		return -EINVAL;
	memset(dev->attr.gids, 0, sizeof(dev->attr.gids));
	if (n != 0)
		memcpy(dev->attr.gids, gids, (size_t)n * 16);
	dev->attr.num_gids = (uint8_t)n;
	/* IPv4 destinations are matched as numbers (droce_rx_addr.h); an empty slot (the zero
	 * GID, an address removed) matches nothing. */
	dev->n_gid_v4 = 0;
	for (i = 0; i < n; i++)
		if (!gid_is_zero(gids[i]) && droce_gid_is_v4(gids[i]))
			dev->gid_v4[dev->n_gid_v4++] = droce_get_be32(gids[i] + 12);
	return 0;
}

void
droce_dev_destroy(struct droce_dev *dev)
{
	uint32_t i;
	int64_t q;

	if (dev == NULL)
		return;
	for (q = dev->qps ? droce_qp_slot_next(dev, 0) : -1; q >= 0;
	     q = droce_qp_slot_next(dev, (uint32_t)q + 1))
		droce_qp_destroy(&dev->qps[q]);
	for (i = 0; dev->srqs && i <= dev->attr.max_srq; i++)
		if (dev->srqs[i].used)
			droce_srq_destroy(&dev->srqs[i]);
	for (i = 0; dev->cqs && i <= dev->attr.max_cq; i++)
		if (dev->cqs[i].used)
			free(dev->cqs[i].ring);
	free(dev->qps);
	free(dev->mrs);
	free(dev->mws);
	free(dev->pds);
	free(dev->cqs);
	free(dev->srqs);
	free(dev->ahs);
	free(dev->heap);
	free(dev->heap_pos);
	free(dev->icrc_rx);
	droce_slots_fini(&dev->qp_slots);
	droce_slots_fini(&dev->mr_slots);
	droce_slots_fini(&dev->cq_slots);
	free(dev);
}

void
droce_dev_drop(struct droce_dev *dev, enum droce_drop reason)
{
	dev->drops.cnt[reason]++;
}

void
droce_dev_event(struct droce_dev *dev, enum droce_event_type type, void *elem)
{
	struct droce_async_event *ev;

	if (dev->ev_head - dev->ev_tail >= DROCE_EVENT_RING) {
		dev->ev_lost++;
		return;
	}
	ev = &dev->ev[dev->ev_head++ % DROCE_EVENT_RING];
	ev->type = type;
	switch (type) {
	case DROCE_EVENT_CQ_ERR:
		ev->element.cq = elem;
		break;
	case DROCE_EVENT_SRQ_LIMIT_REACHED:
		ev->element.srq = elem;
		break;
	case DROCE_EVENT_PORT_ACTIVE:
		ev->element.port_num = DROCE_PORT_NUM;
		break;
	default:
		ev->element.qp = elem;
		break;
	}
}

int
droce_dev_get_async_event(struct droce_dev *dev, struct droce_async_event *ev)
{
	if (dev->ev_head == dev->ev_tail)
		return -EAGAIN;
	*ev = dev->ev[dev->ev_tail++ % DROCE_EVENT_RING];
	return 0;
}

/* ---- Timer heap: one entry per QP, keyed by its earliest deadline ---- */
static inline void
heap_put(struct droce_dev *dev, uint32_t i, struct droce_timer_ent e)
{
	dev->heap[i] = e;
	dev->heap_pos[e.slot] = i;
}

static void
heap_fix(struct droce_dev *dev, uint32_t i)
{
	struct droce_timer_ent e = dev->heap[i];

	while (i > 0 && dev->heap[(i - 1) / 2].key > e.key) {
		heap_put(dev, i, dev->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = l;

		if (l >= dev->heap_n)
			break;
		if (r < dev->heap_n && dev->heap[r].key < dev->heap[l].key)
			m = r;
		if (dev->heap[m].key >= e.key)
			break;
		heap_put(dev, i, dev->heap[m]);
		i = m;
	}
	heap_put(dev, i, e);
}

static void
heap_remove(struct droce_dev *dev, uint32_t slot)
{
	uint32_t i = dev->heap_pos[slot];

	dev->heap_pos[slot] = UINT32_MAX;
	if (--dev->heap_n == i)
		return;
	heap_put(dev, i, dev->heap[dev->heap_n]);
	heap_fix(dev, i);
}

/* Recompute the QP's deadline from its timers and move it in the heap. */
void
droce_sched_deadline(struct droce_qp *qp)
{
	struct droce_dev *dev = qp->dev;
	uint32_t slot = qp->qpn & dev->qp_mask, i;
	uint64_t d = qp->req.rto_at;

	if (qp->req.rnr_at < d)
		d = qp->req.rnr_at;
	if (qp->cc_at < d)
		d = qp->cc_at;
	if (qp->ack_due < d)
		d = qp->ack_due;
	qp->deadline = d;
	i = dev->heap_pos[slot];
	if (d == UINT64_MAX) {
		if (i != UINT32_MAX)
			heap_remove(dev, slot);
		return;
	}
	if (i == UINT32_MAX)
		i = dev->heap_n++;
	dev->heap[i] = (struct droce_timer_ent){ .key = d, .slot = slot };
	heap_fix(dev, i);
}

static void
run_timers(struct droce_dev *dev, uint64_t now)
{
	while (dev->heap_n > 0 && dev->heap[0].key <= now) {
		struct droce_qp *qp = &dev->qps[dev->heap[0].slot];

		if (qp->cc_at <= now) {
			qp->cc_at = UINT64_MAX;
			droce_sched_ready(qp);
		}
		if (qp->req.rnr_at <= now) {
			/* IBTA 9.7.5.2.8: after the RNR wait, resend from the NAKed PSN. */
			qp->req.rnr_at = UINT64_MAX;
			droce_req_go_back(qp, qp->req.una);
		}
		if (qp->req.rto_at <= now)
			droce_comp_timer(qp, now);
		droce_ack_timer(qp, now);
		droce_sched_deadline(qp);
	}
}

/* One frame from a QP: responses first (they free the peer's window), then requests. */
static int
qp_tx(struct droce_qp *qp, uint64_t now)
{
	int r;

	if (qp->np_pending) {
		r = droce_np_tx(qp, now);
		if (r != 0)
			return r;
	}
	r = droce_resp_tx(qp, now);
	if (r != 0)
		return r;
	return droce_req_tx(qp, now);
}

/*
 * Transmit in the order the ACK policy asks (droce_ackpol.h): held ACKs ride with the other
 * frames of this pass, ahead of them (fifo) or after them (requests first), in one batch of
 * the caller's.
 */
unsigned int
droce_dev_process(struct droce_dev *dev, uint64_t now_ns, unsigned int budget)
{
	bool lead = dev->ackpol.order == DROCE_ACK_ORDER_FIFO, go = !dev->ack_hold;
	unsigned int sent = 0;

	dev->now = now_ns;
	run_timers(dev, now_ns);
	if (dev->held_head != NULL && lead && (go || dev->ready_head != NULL))
		droce_ack_release_all(dev, true);
again:
	while (sent < budget && dev->ready_head != NULL) {
		struct droce_qp *qp = dev->ready_head;
		int r;

		if (qp != dev->turn_qp) {
			dev->turn_qp = qp;
			dev->tx_turn = 0;
		}
		/* A request that ends the turn asks for an ACK (droce_req.c): the QP's next turn may
		 * be many QPs' quanta away, longer than its RTO. */
		dev->turn_end = qp->rnext != NULL && dev->tx_turn + 1 >= dev->tx_quantum;
		r = qp_tx(qp, now_ns);
		dev->turn_end = false;
		if (r == -EAGAIN) {
			qp->cnt[DROCE_CNT_TX_NO_BUF]++;
			break;
		}
		if (r != 1) {
			droce_sched_unready(qp);
			continue;
		}
		sent++;
		if (!qp->np_pending && !droce_resp_has_work(qp) && !droce_req_has_work(qp)) {
			/* that was its last frame: no probe pass to find out */
			droce_sched_unready(qp);
			continue;
		}
		if (qp->rnext != NULL && ++dev->tx_turn >= dev->tx_quantum) {
			/* round robin, a quantum a turn: to the tail, past the others */
			dev->turn_qp = NULL;
			droce_sched_unready(qp);
			droce_sched_ready(qp);
		}
	}
	if ((go || sent != 0) && sent < budget && dev->held_head != NULL) {
		droce_ack_release_all(dev, false);
		goto again;
	}
	return sent;
}

int
droce_dev_set_tx_quantum(struct droce_dev *dev, unsigned int frames)
{
	if (dev == NULL || frames == 0 || frames > DROCE_TX_QUANTUM_MAX)
		return -EINVAL;
	dev->tx_quantum = frames;
	return 0;
}

void
droce_dev_set_now(struct droce_dev *dev, uint64_t now_ns)
{
	if (now_ns > dev->now)
		dev->now = now_ns;
}

uint64_t
droce_dev_next_deadline(const struct droce_dev *dev)
{
	if (dev->ready_head != NULL || (!dev->ack_hold && dev->held_head != NULL))
		return dev->now;
	return dev->heap_n > 0 ? dev->heap[0].key : UINT64_MAX;
}

static uint32_t
qpt_flag(enum droce_qp_type t)
{
	return t == DROCE_QPT_RC ? DROCE_OPF_RC : t == DROCE_QPT_UC ? DROCE_OPF_UC : DROCE_OPF_UD;
}

static void
rx_one(struct droce_dev *dev, const uint8_t *frame, uint32_t len, uint64_t now)
{
	const struct droce_opcode_info *op;
	struct droce_pkt p;
	struct droce_qp *qp;
	enum droce_drop d;

	/* The addresses are compared as the frame's bytes; a packet that needs them as fields
	 * (a group's, a UD QP's) gets them below. */
	d = droce_parse_rx(frame, len, &p, dev->rx_parse_flags, dev->icrc_rx, dev->qp_mask);
	if (d != DROCE_DROP_NONE) {
		droce_dev_drop(dev, d);
		return;
	}
	if (droce_unlikely(p.dqpn == DROCE_MCAST_QPN)) {
		droce_parse_addrs(frame, &p);		  /* the group is the destination GID */
		droce_mcast_rx(dev, &p, frame, len, now); /* its own address checks */
		return;
	}
	if (droce_unlikely(!droce_rx_mac_ok(dev, frame))) {
		droce_dev_drop(dev, DROCE_DROP_DST_MAC);
		return;
	}
	/* DestQP 1 is the GSI's slot; DestQP 0, and 1 without a GSI, find no QP (CA17-33). */
	qp = droce_dev_qp(dev, p.dqpn);
	if (qp != NULL && qp->type != DROCE_QPT_UD && qp->state >= DROCE_QPS_RTR) {
		/* A connected QP hears its peer only, once it has one (RTR on; before, the
		 * responder drops for the state), CNPs included (Annex A17.9.3: the NP sends them
		 * on the data's path, reversed). Its own GID is one of ours: when the path
		 * matches, the port's check is implied. */
		d = droce_rx_path_check(qp, &p, frame);
		if (droce_unlikely(d != DROCE_DROP_NONE)) {
			droce_dev_drop(dev,
				       droce_rx_dip_ours(dev, &p, frame) ? d : DROCE_DROP_DST_IP);
			return;
		}
	} else {
		/* the destination is checked before the QP (as rxe_rcv, then its QP lookup) */
		if (droce_unlikely(!droce_rx_dip_ours(dev, &p, frame))) {
			droce_dev_drop(dev, DROCE_DROP_DST_IP);
			return;
		}
		if (droce_unlikely(qp == NULL)) {
			droce_dev_drop(dev, DROCE_DROP_BAD_QPN);
			return;
		}
		/* UD reads the sender's addresses (GRH, CNP destination); connected QPs do not. */
		if (qp->type == DROCE_QPT_UD)
			droce_parse_addrs(frame, &p);
	}
	op = droce_opcode_info(p.opcode);
	if (op->flags & DROCE_OPF_CNP) {
		/* Annex A17.9.3: the reaction point's rate limiter hears of congestion. */
		droce_qp_cnt(qp, DROCE_CNT_RP_CNP_HANDLED);
		qp->cc_ops->on_cnp(&qp->cc, now);
		dev->drops.cnt[DROCE_DROP_NONE]++;
		return;
	}
	if (!droce_pkey_ok(p.pkey)) {
		droce_dev_drop(dev, DROCE_DROP_PKEY);
		return;
	}
	/* IBTA 9.6.1.2 (C9-43): the opcode's transport must be the QP's service type. */
	if (!(op->flags & qpt_flag(qp->type))) {
		droce_dev_drop(dev, DROCE_DROP_QPT_OPCODE);
		return;
	}
	qp->cnt[DROCE_CNT_RCVD_PKTS]++;
	qp->cnt[DROCE_CNT_RCVD_BYTES] += len;
	if ((p.tclass & 3) == DROCE_ECN_CE)
		droce_np_rx(qp, &p, now);
	dev->drops.cnt[DROCE_DROP_NONE]++;
	if (op->flags & DROCE_OPF_RESP)
		droce_comp_rx(qp, &p, frame, now);
	else
		droce_resp_rx(qp, &p, frame, now);
}

void
droce_dev_rx_burst(struct droce_dev *dev, const uint8_t *const *frames, const uint32_t *lens,
		   unsigned int n, uint64_t now_ns)
{
	unsigned int i;

	dev->now = now_ns;
	if (n != 0)
		dev->rto_heard = true;
	for (i = 0; i < n; i++)
		rx_one(dev, frames[i], lens[i], now_ns);
}

/* What a poll loop calls: the frames' ACKs and responses leave in the same call, so a received
 * WRITE enters the engine once before its ACK is handed to tx_send. */
unsigned int
droce_dev_rx_process(struct droce_dev *dev, const uint8_t *const *frames, const uint32_t *lens,
		     unsigned int n, uint64_t now_ns, unsigned int budget)
{
	droce_dev_rx_burst(dev, frames, lens, n, now_ns);
	return droce_dev_next_deadline(dev) <= now_ns ? droce_dev_process(dev, now_ns, budget) : 0;
}

int
droce_dev_set_rx_offload(struct droce_dev *dev, unsigned int parse_flags)
{
	const unsigned int known = DROCE_PARSE_NO_ICRC | DROCE_PARSE_NO_IPCSUM;

	if (dev == NULL || (parse_flags & ~known))
		return -EINVAL;
	dev->rx_parse_flags = parse_flags;
	return 0;
}
