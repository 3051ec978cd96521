/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP state machine (IBTA 10.3, 11.2.4.2 "Modify QP"): one table [current][next] per service
 * type giving the attributes a transition requires and those it may carry, as the
 * ibv_modify_qp(3) tables and the kernel's ib_modify_qp_is_ok() list them. A transition not in
 * the table, a required attribute missing or an attribute not allowed fails with -EINVAL.
 */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"
#include "droce_psn.h"

enum {
	S_STATE = DROCE_QP_STATE,
	S_CUR = DROCE_QP_CUR_STATE,
	S_SQDN = DROCE_QP_EN_SQD_ASYNC_NOTIFY,
	S_ACC = DROCE_QP_ACCESS_FLAGS,
	S_PKEY = DROCE_QP_PKEY_INDEX,
	S_PORT = DROCE_QP_PORT,
	S_QKEY = DROCE_QP_QKEY,
	S_AV = DROCE_QP_AV,
	S_MTU = DROCE_QP_PATH_MTU,
	S_TO = DROCE_QP_TIMEOUT,
	S_RETRY = DROCE_QP_RETRY_CNT,
	S_RNR = DROCE_QP_RNR_RETRY,
	S_RQPSN = DROCE_QP_RQ_PSN,
	S_MRA = DROCE_QP_MAX_QP_RD_ATOMIC,
	S_ALT = DROCE_QP_ALT_PATH,
	S_MRNR = DROCE_QP_MIN_RNR_TIMER,
	S_SQPSN = DROCE_QP_SQ_PSN,
	S_MDRA = DROCE_QP_MAX_DEST_RD_ATOMIC,
	S_MIG = DROCE_QP_PATH_MIG_STATE,
	S_DQPN = DROCE_QP_DEST_QPN,
};

struct droce_qp_trans {
	bool valid;
	uint32_t req[3]; /* indexed RC, UC, UD */
	uint32_t opt[3];
};

#define NQPS (DROCE_QPS_ERR + 1)
#define ALL3(m) \
	{ \
		(m), (m), (m) \
	}

/* IBTA 11.2.4.2 table 97 / ibv_modify_qp(3). Every state may go to RESET and ERR. */
static const struct droce_qp_trans trans[NQPS][NQPS] = {
	[DROCE_QPS_RESET] = {
		[DROCE_QPS_RESET] = { .valid = true },
		[DROCE_QPS_INIT] = { .valid = true,
			.req = { S_PKEY | S_PORT | S_ACC, S_PKEY | S_PORT | S_ACC,
				 S_PKEY | S_PORT | S_QKEY } },
	},
	[DROCE_QPS_INIT] = {
		[DROCE_QPS_INIT] = { .valid = true,
			.opt = { S_PKEY | S_PORT | S_ACC, S_PKEY | S_PORT | S_ACC,
				 S_PKEY | S_PORT | S_QKEY } },
		[DROCE_QPS_RTR] = { .valid = true,
			.req = { S_AV | S_MTU | S_DQPN | S_RQPSN | S_MDRA | S_MRNR,
				 S_AV | S_MTU | S_DQPN | S_RQPSN, 0 },
			.opt = { S_ALT | S_ACC | S_PKEY, S_ALT | S_ACC | S_PKEY,
				 S_PKEY | S_QKEY } },
	},
	[DROCE_QPS_RTR] = {
		[DROCE_QPS_RTS] = { .valid = true,
			.req = { S_SQPSN | S_TO | S_RETRY | S_RNR | S_MRA, S_SQPSN, S_SQPSN },
			.opt = { S_CUR | S_ALT | S_ACC | S_MRNR | S_MIG,
				 S_CUR | S_ALT | S_ACC | S_MIG,
				 S_CUR | S_QKEY } },
	},
	[DROCE_QPS_RTS] = {
		[DROCE_QPS_RTS] = { .valid = true,
			.opt = { S_CUR | S_ACC | S_ALT | S_MIG | S_MRNR,
				 S_CUR | S_ACC | S_ALT | S_MIG,
				 S_CUR | S_QKEY } },
		[DROCE_QPS_SQD] = { .valid = true, .opt = ALL3(S_SQDN) },
	},
	[DROCE_QPS_SQD] = {
		[DROCE_QPS_RTS] = { .valid = true,
			.opt = { S_CUR | S_ALT | S_ACC | S_MRNR | S_MIG,
				 S_CUR | S_ALT | S_ACC | S_MIG,
				 S_CUR | S_QKEY } },
		/* RC may name the port again with the new AV (the kernel's qp_state_table; its
		 * uverbs adds PORT itself when AV is given here). */
		[DROCE_QPS_SQD] = { .valid = true,
			.opt = { S_PORT | S_AV | S_TO | S_RETRY | S_RNR | S_MRA | S_MDRA | S_ALT |
					 S_ACC | S_PKEY | S_MRNR | S_MIG,
				 S_AV | S_ALT | S_ACC | S_PKEY | S_MIG, S_PKEY | S_QKEY } },
	},
	[DROCE_QPS_SQE] = {
		/* SQE exists for UC and UD only (IBTA 10.3.1.6): RC leaves it invalid. */
		[DROCE_QPS_RTS] = { .valid = true, .opt = { 0, S_CUR | S_ACC, S_CUR | S_QKEY } },
	},
};

static int
type_idx(enum droce_qp_type t)
{
	return t == DROCE_QPT_RC ? 0 : t == DROCE_QPT_UC ? 1 : 2;
}

/* The mask is acceptable for cur -> next; SQE -> RTS is invalid for RC. */
static int
check_mask(const struct droce_qp *qp, enum droce_qp_state cur, enum droce_qp_state next,
	   uint32_t mask)
{
	const struct droce_qp_trans *t;
	int ti = type_idx(qp->type);

	if (next == DROCE_QPS_RESET || next == DROCE_QPS_ERR)
		return (mask & ~(uint32_t)(S_STATE | S_CUR)) ? -EINVAL : 0;
	t = &trans[cur][next];
	if (!t->valid || (cur == DROCE_QPS_SQE && qp->type == DROCE_QPT_RC))
		return -EINVAL;
	if ((mask & t->req[ti]) != t->req[ti])
		return -EINVAL;
	if (mask & ~(t->req[ti] | t->opt[ti] | S_STATE))
		return -EINVAL;
	return 0;
}

/* Attribute values (IBTA 11.2.4.2, verbs ranges). */
static int
check_values(const struct droce_qp *qp, const struct droce_qp_attr *a, uint32_t mask)
{
	const unsigned int acc = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				 DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC;

	if ((mask & S_ACC) && (a->qp_access_flags & ~acc))
		return -EINVAL;
	if ((mask & S_PKEY) && a->pkey_index != 0) /* one P_Key: the default */
		return -EINVAL;
	if ((mask & S_PORT) && a->port_num != DROCE_PORT_NUM)
		return -EINVAL;
	if ((mask & S_AV) && a->ah_attr.sgid_index >= qp->dev->attr.num_gids)
		return -EINVAL;
	/* RoCEv2 (Annex A17): a GID is an IP address, so source and destination must be of one
	 * family: an IPv4 source GID cannot reach an IPv6 destination (nor the reverse). */
	if ((mask & S_AV) && !droce_av_same_family(qp->dev, &a->ah_attr))
		return -EINVAL;
	if ((mask & S_MTU) &&
	    (a->path_mtu < DROCE_MTU_256 || (uint32_t)a->path_mtu > qp->dev->active_mtu))
		return -EINVAL;
	if ((mask & S_TO) && a->timeout > 31)
		return -EINVAL;
	if ((mask & S_RETRY) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & S_RNR) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & S_MRNR) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & S_MRA) && a->max_rd_atomic > DROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & S_MDRA) && a->max_dest_rd_atomic > DROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & S_DQPN) && a->dest_qp_num > DROCE_PSN_MASK)
		return -EINVAL;
	return 0;
}

static void
apply(struct droce_qp *qp, const struct droce_qp_attr *a, uint32_t mask)
{
	struct droce_qp_attr *q = &qp->attr;

	if (mask & S_ACC)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & S_PKEY)
		q->pkey_index = a->pkey_index;
	if (mask & S_QKEY)
		q->qkey = a->qkey;
	if (mask & S_AV)
		q->ah_attr = a->ah_attr;
	if (mask & S_MTU)
		droce_qp_set_mtu(qp, a->path_mtu);
	if (mask & S_TO)
		q->timeout = a->timeout;
	if (mask & S_RETRY) {
		q->retry_cnt = a->retry_cnt;
		qp->req.retry_left = a->retry_cnt;
	}
	if (mask & S_RNR) {
		q->rnr_retry = a->rnr_retry;
		qp->req.rnr_left = a->rnr_retry;
	}
	if (mask & S_MRNR)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & S_MRA)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & S_MDRA)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & S_DQPN)
		q->dest_qp_num = a->dest_qp_num;
	if (mask & S_SQDN)
		q->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & S_RQPSN) {
		q->rq_psn = a->rq_psn & DROCE_PSN_MASK;
		qp->resp.epsn = q->rq_psn;
	}
	if (mask & S_SQPSN) {
		q->sq_psn = a->sq_psn & DROCE_PSN_MASK;
		qp->req.psn = qp->req.una = qp->req.max_psn_sent = q->sq_psn;
		qp->req.rd_hi = q->sq_psn; /* no response kept ahead (droce_comp_rd.c) */
		memset(qp->req.rd_got, 0, sizeof(qp->req.rd_got));
		memset(qp->req.rd_asked, 0, sizeof(qp->req.rd_asked));
		qp->req.rd_rr_n = 0;
	}
	if (mask & (S_AV | S_DQPN))
		droce_qp_build_tmpl(qp);
}

int
droce_qp_modify(struct droce_qp *qp, const struct droce_qp_attr *attr, unsigned int mask)
{
	enum droce_qp_state cur, next;
	int e;

	if (qp == NULL || !qp->used || attr == NULL)
		return -EINVAL;
	cur = qp->state;
	next = (mask & S_STATE) ? attr->qp_state : cur;
	if ((unsigned int)next > DROCE_QPS_ERR)
		return -EINVAL;
	/* IBTA 11.2.4.2: a current state given must be the actual one. */
	if ((mask & S_CUR) && attr->cur_qp_state != cur)
		return -EINVAL;
	e = check_mask(qp, cur, next, mask);
	if (e == 0)
		e = check_values(qp, attr, mask);
	if (e != 0)
		return e;
	if (next == DROCE_QPS_RESET) {
		droce_qp_reset(qp);
		qp->state = qp->attr.qp_state = DROCE_QPS_RESET;
		return 0;
	}
	if (next == DROCE_QPS_ERR) {
		droce_qp_error(qp);
		return 0;
	}
	/* The only allocation a modify makes: nothing is applied if it fails. */
	if ((mask & S_MDRA) && droce_resp_reserve(qp, attr->max_dest_rd_atomic) != 0)
		return -ENOMEM;
	apply(qp, attr, mask);
	qp->state = qp->attr.qp_state = next;
	if (next == DROCE_QPS_RTS) {
		qp->req.drained_notified = false;
		droce_sched_ready(qp);
	} else if (next == DROCE_QPS_SQD && cur == DROCE_QPS_RTS) {
		qp->req.drained_notified = false;
		/* Already drained: the event is due now (IBTA 11.2.4.2 SQ Drain). */
		if (qp->req.comp == qp->req.next && qp->attr.en_sqd_async_notify) {
			qp->req.drained_notified = true;
			droce_dev_event(qp->dev, DROCE_EVENT_SQ_DRAINED, qp);
		}
	}
	return 0;
}
