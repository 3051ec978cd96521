/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The usual walk of a QP to RTS (IBTA 10.3, figure 125: RESET -> INIT -> RTR -> RTS) in two
 * calls, for applications and tools that exchange QP numbers and PSNs themselves: INIT (then
 * receives may be posted), and once the peer is known, RTR and RTS. Each step is one
 * droce_qp_modify() with the attributes verbs requires for the QP's type (ibv_modify_qp(3)),
 * so the checks and errors are droce_qp_modify()'s own.
 */
#include <errno.h>
#include <string.h>

#include "droce_internal.h"

int
droce_qp_init(struct droce_qp *qp, unsigned int access, uint32_t qkey)
{
	struct droce_qp_attr a;
	unsigned int mask = DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT;

	if (qp == NULL)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_INIT;
	a.port_num = 1;
	if (qp->type == DROCE_QPT_UD) {
		a.qkey = qkey;
		mask |= DROCE_QP_QKEY;
	} else {
		a.qp_access_flags = access;
		mask |= DROCE_QP_ACCESS_FLAGS;
	}
	return droce_qp_modify(qp, &a, mask);
}

int
droce_qp_connect(struct droce_qp *qp, const struct droce_qp_conn *c)
{
	struct droce_qp_attr a;
	unsigned int mask = DROCE_QP_STATE;
	int rc;

	if (qp == NULL || c == NULL)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	if (qp->type != DROCE_QPT_UD) {
		a.ah_attr = c->av;
		a.path_mtu = c->path_mtu;
		a.dest_qp_num = c->dest_qp_num;
		a.rq_psn = c->rq_psn;
		mask |= DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN;
	}
	if (qp->type == DROCE_QPT_RC) {
		a.max_dest_rd_atomic = c->max_dest_rd_atomic;
		a.min_rnr_timer = c->min_rnr_timer;
		mask |= DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER;
	}
	rc = droce_qp_modify(qp, &a, mask);
	if (rc != 0)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = c->sq_psn;
	mask = DROCE_QP_STATE | DROCE_QP_SQ_PSN;
	if (qp->type == DROCE_QPT_RC) {
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt;
		a.rnr_retry = c->rnr_retry;
		a.max_rd_atomic = c->max_rd_atomic;
		mask |= DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY |
			DROCE_QP_MAX_QP_RD_ATOMIC;
	}
	return droce_qp_modify(qp, &a, mask);
}
