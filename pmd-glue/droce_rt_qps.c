/* SPDX-License-Identifier: BSD-3-Clause */
/* droce_rt_qps(): every QP with its counters and congestion-control state (droce_rt.h). */
#include <string.h>

#include "droce_ext.h"
#include "droce_rt_priv.h"

struct qps_ctx {
	struct droce_rt_qp_info *out;
	unsigned int n, count, shard;
};

static void
fill(struct droce_rt_qp_info *q, struct droce_qp *qp, unsigned int shard)
{
	const struct droce_cc_state *cs = NULL;
	const struct droce_cc_ops *ops = droce_qp_cc(qp, &cs);
	struct droce_qp_init_attr init;
	struct droce_qp_attr attr;

	memset(q, 0, sizeof(*q));
	q->qpn = droce_qp_num(qp);
	q->shard = (uint16_t)shard;
	if (droce_qp_query(qp, &attr, &init) == 0) {
		q->type = (uint8_t)init.qp_type;
		q->state = (uint8_t)attr.qp_state;
	}
	q->sent_pkts = droce_qp_counter(qp, DROCE_CNT_SENT_PKTS);
	q->rcvd_pkts = droce_qp_counter(qp, DROCE_CNT_RCVD_PKTS);
	q->retransmitted_pkts = droce_qp_counter(qp, DROCE_CNT_RETRANSMITTED_PKTS);
	q->cc_deferred = droce_qp_counter(qp, DROCE_CNT_CC_DEFERRED);
	q->cc = ops != NULL ? ops->name : "none";
	if (ops != NULL && ops->stats != NULL && cs != NULL) {
		q->n_cc = ops->stats(cs, q->cc_stats, DROCE_RT_QP_CC_STATS);
		if (q->n_cc > DROCE_RT_QP_CC_STATS)
			q->n_cc = DROCE_RT_QP_CC_STATS;
	}
}

/* On the shard's own thread: its device's QPs, appended. */
static int
shard_qps(struct droce_rt *rt, void *arg)
{
	struct qps_ctx *c = arg;
	struct droce_dev *dev = rt->sh[c->shard].dev;
	struct droce_qp *qp = NULL;

	if (dev == NULL)
		return 0;
	while ((qp = droce_dev_qp_next(dev, qp)) != NULL) {
		if (c->count < c->n)
			fill(&c->out[c->count], qp, c->shard);
		c->count++;
	}
	return 0;
}

int
droce_rt_qps(struct droce_rt *rt, struct droce_rt_qp_info *out, unsigned int n)
{
	struct qps_ctx c = { .out = out, .n = n };

	for (c.shard = 0; c.shard < rt->nb_shards; c.shard++)
		droce_rt_call_shard(rt, c.shard, shard_qps, &c);
	return (int)c.count;
}
