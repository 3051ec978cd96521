/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ENGINE_HARNESS_H
#define ENGINE_HARNESS_H

/*
 * A two-device loopback for engine unit tests: frames go into a FIFO per direction, an optional
 * filter may drop or alter each one, and time jumps to the next deadline when nothing moves.
 * Deterministic: rand64 is a xorshift seeded per device.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_ext.h"
#include "droce_pkt.h"
#include "droce_verbs.h"
#include "wire/droce_ipv4.h"

#define EH_FRAMES    4096
#define EH_FRAME_MAX 9200

struct eh_frame {
	uint32_t len;
	uint8_t b[EH_FRAME_MAX];
};

struct eh_node;
/* Return false to drop the frame (it may also be modified in place). */
typedef bool (*eh_filter)(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg);

struct eh_node {
	struct droce_dev *dev;
	uint64_t rng;
	struct eh_frame *q; /* frames sent by this node, not yet delivered */
	unsigned int head, tail;
	uint8_t mac[6];
	uint8_t gid[16];
	uint64_t sent;
	eh_filter filter;
	void *filter_arg;
	struct droce_pd *pd;
	struct droce_cq *cq;
	/* Impairments on frames this node sends, in 1/1000 */
	unsigned int loss, dup, reorder, corrupt;
	uint64_t net_rng;
	uint64_t dropped;
};

struct eh_world {
	struct eh_node n[2];
	uint64_t now;
	bool ipv6; /* GIDs are IPv6 addresses (eh_init_v) */
};

static uint8_t *
eh_tx_alloc(void *ctx, uint32_t len, void **cookie)
{
	struct eh_node *n = ctx;
	struct eh_frame *f;

	if (n->head - n->tail >= EH_FRAMES || len > EH_FRAME_MAX)
		return NULL;
	f = &n->q[n->head % EH_FRAMES];
	*cookie = f;
	return f->b;
}

static unsigned int
eh_net_rand(struct eh_node *n)
{
	n->net_rng ^= n->net_rng << 13;
	n->net_rng ^= n->net_rng >> 7;
	n->net_rng ^= n->net_rng << 17;
	return (unsigned int)(n->net_rng % 1000);
}

static void
eh_tx_send(void *ctx, void *cookie, uint32_t len)
{
	struct eh_node *n = ctx;
	struct eh_frame *f = cookie;

	f->len = len;
	n->sent++;
	if (n->filter && !n->filter(n, f->b, len, n->filter_arg))
		return;
	if (len == 0)
		return;
	if (eh_net_rand(n) < n->loss) {
		n->dropped++;
		return;
	}
	if (eh_net_rand(n) < n->corrupt)
		f->b[eh_net_rand(n) % len] ^= 0x10;
	n->head++;
	if (eh_net_rand(n) < n->dup && n->head - n->tail < EH_FRAMES) {
		n->q[n->head % EH_FRAMES] = *f;
		n->head++;
	}
	if (eh_net_rand(n) < n->reorder && n->head - n->tail >= 2) {
		struct eh_frame t = n->q[(n->head - 1) % EH_FRAMES];

		n->q[(n->head - 1) % EH_FRAMES] = n->q[(n->head - 2) % EH_FRAMES];
		n->q[(n->head - 2) % EH_FRAMES] = t;
	}
}

static uint64_t
eh_rand64(void *ctx)
{
	struct eh_node *n = ctx;

	n->rng ^= n->rng << 13;
	n->rng ^= n->rng >> 7;
	n->rng ^= n->rng << 17;
	return n->rng;
}

static inline void eh_init_v(struct eh_world *w, uint32_t eth_mtu, bool ipv6);
static inline void eh_init_sized(struct eh_world *w, uint32_t eth_mtu, bool ipv6, uint32_t max_qp,
				 uint32_t max_mr);

static inline void
eh_init(struct eh_world *w, uint32_t eth_mtu)
{
	eh_init_v(w, eth_mtu, false);
}

/* Frame rings (37 MB each) kept from one world to the next, in a pool: freed and allocated
 * again per world, their pages were faulted in anew each time, most of a many-seed test's
 * time. Worlds alive at once each take their own. */
static struct eh_frame *eh_ring_pool[4];

static inline struct eh_frame *
eh_ring_get(void)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		struct eh_frame *q = eh_ring_pool[i];

		if (q != NULL) {
			eh_ring_pool[i] = NULL;
			return q;
		}
	}
	return calloc(EH_FRAMES, sizeof(struct eh_frame));
}

static inline void
eh_ring_put(struct eh_frame *q)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		if (eh_ring_pool[i] == NULL) {
			eh_ring_pool[i] = q;
			return;
		}
	}
	free(q);
}

static inline void
eh_init_v(struct eh_world *w, uint32_t eth_mtu, bool ipv6)
{
	eh_init_sized(w, eth_mtu, ipv6, 16, 64);
}

/* Devices with room for max_qp QPs and max_mr MRs; the CQ holds a completion of each QP. */
static inline void
eh_init_sized(struct eh_world *w, uint32_t eth_mtu, bool ipv6, uint32_t max_qp, uint32_t max_mr)
{
	unsigned int i;

	memset(w, 0, sizeof(*w));
	w->ipv6 = ipv6;
	for (i = 0; i < 2; i++) {
		struct eh_node *n = &w->n[i];
		struct droce_dev_attr a;
		struct droce_io io = { eh_tx_alloc, eh_tx_send, eh_rand64, n };
		int err = 0;

		memset(&a, 0, sizeof(a));
		n->rng = 0x9E3779B97F4A7C15ull * (i + 1);
		n->net_rng = 0x2545F4914F6CDD1Dull * (i + 3);
		n->q = eh_ring_get();
		n->mac[0] = 2;
		n->mac[5] = (uint8_t)(i + 1);
		droce_gid_from_v4(n->gid, 0x0A000001u + i);
		if (w->ipv6) {
			/* 2001:db8::(i+1): the IPv6 path (UDP checksum, no header template) */
			memset(n->gid, 0, 16);
			n->gid[0] = 0x20;
			n->gid[1] = 0x01;
			n->gid[2] = 0x0d;
			n->gid[3] = 0xb8;
			n->gid[15] = (uint8_t)(i + 1);
		}
		memcpy(a.mac, n->mac, 6);
		memcpy(a.gids[0], n->gid, 16);
		a.num_gids = 1;
		a.eth_mtu = eth_mtu;
		a.max_qp = max_qp;
		a.max_cq = 16;
		a.max_mr = max_mr;
		a.max_mw = 8;
		a.max_srq = 4;
		a.max_ah = 8;
		a.max_pd = 4;
		n->dev = droce_dev_create(&a, &io, &err);
		n->pd = droce_pd_alloc(n->dev, &err);
		n->cq = droce_cq_create(n->dev, max_qp > 16 ? 4096 + 2 * max_qp : 4096, NULL, &err);
	}
}

static inline void
eh_fini(struct eh_world *w)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		droce_dev_destroy(w->n[i].dev);
		eh_ring_put(w->n[i].q);
		w->n[i].q = NULL;
	}
}

static inline void
eh_av(const struct eh_node *to, struct droce_av *av)
{
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, to->gid, 16);
	memcpy(av->dmac, to->mac, 6);
	av->hop_limit = 64;
}

struct eh_qp_opts {
	enum droce_mtu mtu;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, max_rd_atomic;
	uint32_t access;
	uint32_t psn[2];
	/* each side's congestion control (struct droce_qp_init_attr; NULL: its device's) */
	const char *cc[2];
	const union droce_cc_params *cc_params[2];
};

static inline void
eh_opts_default(struct eh_qp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mtu = DROCE_MTU_1024;
	o->timeout = 14;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;
	o->max_rd_atomic = 4;
	o->access = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
		    DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC;
	o->psn[0] = 0xFFFFF0; /* wraps within the first messages */
	o->psn[1] = 0x100;
}

static inline int
eh_bring_up(struct droce_qp *qp, enum droce_qp_type t, const struct eh_node *peer, uint32_t dqpn,
	    const struct eh_qp_opts *o, uint32_t rq_psn, uint32_t sq_psn)
{
	struct droce_qp_conn c;
	int rc;

	rc = droce_qp_init(qp, o->access, 0x11111111);
	if (rc)
		return rc;
	memset(&c, 0, sizeof(c));
	if (t != DROCE_QPT_UD)
		eh_av(peer, &c.av);
	c.dest_qp_num = dqpn;
	c.rq_psn = rq_psn;
	c.sq_psn = sq_psn;
	c.path_mtu = o->mtu;
	c.timeout = o->timeout;
	c.retry_cnt = o->retry_cnt;
	c.rnr_retry = o->rnr_retry;
	c.max_rd_atomic = o->max_rd_atomic;
	c.max_dest_rd_atomic = o->max_rd_atomic;
	c.min_rnr_timer = o->min_rnr_timer;
	return droce_qp_connect(qp, &c);
}

/* A connected pair: qp[0] on node 0, qp[1] on node 1. */
static inline void
eh_pair(struct eh_world *w, enum droce_qp_type t, const struct eh_qp_opts *o, struct droce_qp **qp,
	uint32_t max_wr)
{
	struct droce_qp_init_attr ia;
	unsigned int i;
	int err = 0;

	for (i = 0; i < 2; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.qp_type = t;
		ia.send_cq = w->n[i].cq;
		ia.recv_cq = w->n[i].cq;
		ia.cap.max_send_wr = max_wr;
		ia.cap.max_recv_wr = max_wr;
		ia.cap.max_send_sge = 4;
		ia.cap.max_recv_sge = 4;
		ia.cap.max_inline_data = 64;
		ia.cc = o->cc[i];
		ia.cc_params = o->cc_params[i];
		qp[i] = droce_qp_create(w->n[i].pd, &ia, &err);
	}
	if (qp[0] && qp[1]) {
		eh_bring_up(qp[0], t, &w->n[1], droce_qp_num(qp[1]), o, o->psn[1], o->psn[0]);
		eh_bring_up(qp[1], t, &w->n[0], droce_qp_num(qp[0]), o, o->psn[0], o->psn[1]);
	}
}

/* A congestion-control state block run by ops with parameters p from now on, started as the
 * engine starts a QP's (zeroed, pointing at its parameters). */
static inline void
eh_cc_start(const struct droce_cc_ops *ops, struct droce_cc_state *s,
	    const union droce_cc_params *p, uint64_t now)
{
	memset(s, 0, sizeof(*s));
	s->params = p;
	ops->init(s, now);
}

/*
 * What the congestion-control tests start from: a world with an RC pair whose node 0 runs ops
 * with parameters p (NULL: its defaults; node 1 keeps "none") and an MR over a on node 0 and b on node 1, len bytes each. 0, or
 * -EINVAL when the algorithm is refused, -ENOMEM when a QP or MR is missing.
 */
static inline int
eh_cc_pair(struct eh_world *w, const struct droce_cc_ops *ops, const union droce_cc_params *p,
	   struct eh_qp_opts *o, struct droce_qp **qp, struct droce_mr **mr, uint8_t *a, uint8_t *b,
	   size_t len)
{
	int err = 0;

	qp[0] = qp[1] = NULL;
	mr[0] = mr[1] = NULL;
	eh_init(w, 1500);
	if (droce_dev_set_cc(w->n[0].dev, ops, p) != 0)
		return -EINVAL;
	eh_opts_default(o);
	eh_pair(w, DROCE_QPT_RC, o, qp, 64);
	mr[0] = droce_mr_reg(w->n[0].pd, a, len, o->access, &err);
	mr[1] = droce_mr_reg(w->n[1].pd, b, len, o->access, &err);
	return qp[0] && qp[1] && mr[0] && mr[1] ? 0 : -ENOMEM;
}

/* An eh_filter: data frames the node sends get CE (ECT ones), as a RED queue past Kmax would
 * mark them, so the peer answers with CNPs; arg counts them. The IPv4 header checksum is
 * redone (it covers the ECN bits). */
static inline bool
eh_mark_ce(struct eh_node *from, uint8_t *frame, uint32_t len, void *arg)
{
	unsigned int *n = arg;
	uint8_t *ip = frame + 14;

	(void)from;
	if (len < 34 || ip[0] != 0x45 || (ip[1] & 3) == 0)
		return true;
	ip[1] |= DROCE_ECN_CE;
	ip[10] = ip[11] = 0;
	droce_put_be16(ip + 10, droce_ipv4_csum(ip, 20));
	(*n)++;
	return true;
}

/* EH_TRACE=1 in the environment prints every delivered frame. */
static inline void
eh_trace(uint64_t now, unsigned int from, const uint8_t *fp, uint32_t len)
{
	struct droce_pkt pk;

	if (droce_parse(fp, len, &pk, 0) != DROCE_DROP_NONE) {
		fprintf(stderr, "%lu %u->%u bad\n", (unsigned long)now, from, 1 - from);
		return;
	}
	fprintf(stderr, "%lu %u->%u %s psn %u%s len %u syn %x\n", (unsigned long)now, from,
		1 - from, droce_opcode_name(pk.opcode), pk.psn, pk.ackreq ? " A" : "", pk.pay_len,
		pk.aeth_syn);
}

/* Deliver everything queued, process both devices; jump time when idle. Runs until nothing is
 * pending or max_ns of virtual time passed. */
static inline void
eh_run(struct eh_world *w, uint64_t max_ns)
{
	uint64_t end = w->now + max_ns;

	while (w->now <= end) {
		bool moved = false;
		unsigned int i;

		for (i = 0; i < 2; i++) {
			struct eh_node *src = &w->n[i], *dst = &w->n[1 - i];

			while (src->tail != src->head) {
				struct eh_frame *f = &src->q[src->tail % EH_FRAMES];
				const uint8_t *fp = f->b;

				if (getenv("EH_TRACE"))
					eh_trace(w->now, i, fp, f->len);
				droce_dev_rx_burst(dst->dev, &fp, &f->len, 1, w->now);
				src->tail++;
				moved = true;
			}
		}
		for (i = 0; i < 2; i++)
			if (droce_dev_process(w->n[i].dev, w->now, 64) > 0)
				moved = true;
		if (!moved) {
			uint64_t d0 = droce_dev_next_deadline(w->n[0].dev);
			uint64_t d1 = droce_dev_next_deadline(w->n[1].dev);
			uint64_t d = d0 < d1 ? d0 : d1;

			if (d == UINT64_MAX || d > end)
				return;
			w->now = d > w->now ? d : w->now + 1;
		} else {
			w->now += 1000; /* 1 us per round: timers see time pass */
		}
	}
}

static inline int
eh_poll(struct eh_node *n, struct droce_wc *wc, unsigned int max)
{
	return droce_cq_poll(n->cq, max, wc);
}

/* A signaled request of one SGE to raddr/rkey (the atomic fields for an atomic, adding or
 * comparing cmp_add; the IETH names rkey for SEND_WITH_INV). droce_post_send's result. */
static inline int
eh_post1(struct droce_qp *qp, enum droce_wr_opcode op, struct droce_sge *sge, uint64_t raddr,
	 uint32_t rkey, uint64_t cmp_add, uint64_t id)
{
	struct droce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = DROCE_SEND_SIGNALED;
	if (op == DROCE_WR_ATOMIC_CMP_AND_SWP || op == DROCE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (op == DROCE_WR_SEND_WITH_INV)
		wr.invalidate_rkey = rkey;
	return droce_post_send(qp, &wr, &bad);
}

static inline enum droce_qp_state
eh_qp_state(struct droce_qp *qp)
{
	struct droce_qp_attr a;

	droce_qp_query(qp, &a, NULL);
	return a.qp_state;
}

/* Move the QP pair (qp[i] on node i) to SQD and back with an 802.1Q address vector carrying
 * tci (SQD -> SQD may change the AV): every later frame, templates included, is tagged.
 * Returns 0 or the first modify's -errno. */
static inline int
eh_pair_vlan(struct eh_world *w, struct droce_qp *const qp[2], uint16_t tci)
{
	struct droce_qp_attr a;
	unsigned int i;
	int rc = 0;

	for (i = 0; i < 2 && rc == 0; i++) {
		memset(&a, 0, sizeof(a));
		a.qp_state = DROCE_QPS_SQD;
		rc = droce_qp_modify(qp[i], &a, DROCE_QP_STATE);
		eh_av(&w->n[1 - i], &a.ah_attr);
		a.ah_attr.has_vlan = true;
		a.ah_attr.vlan_tci = tci;
		if (rc == 0)
			rc = droce_qp_modify(qp[i], &a, DROCE_QP_STATE | DROCE_QP_AV);
		a.qp_state = DROCE_QPS_RTS;
		if (rc == 0)
			rc = droce_qp_modify(qp[i], &a, DROCE_QP_STATE);
	}
	return rc;
}

#endif /* ENGINE_HARNESS_H */
