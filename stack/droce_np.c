/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion notification point (DCQCN; RoCEv2 Annex A17.9.3): a CE-marked data packet makes the
 * QP owe its data sender one CNP, at most one per QP per interval. The CNP is BTH opcode 0x81 with
 * BECN set, P_Key 0xFFFF, PSN 0 and 16 reserved bytes, addressed to the sender's QP.
 */
#include <errno.h>
#include <string.h>

#include "droce_ext.h"
#include "droce_internal.h"
#include "wire/droce_bth.h"
#include "wire/droce_cnp.h"
#include "wire/droce_ipv4.h"

int
droce_dev_set_cnp_interval(struct droce_dev *dev, uint64_t ns)
{
	if (dev == NULL)
		return -EINVAL;
	dev->cnp_interval_ns = ns;
	return 0;
}

void
droce_np_rx(struct droce_qp *qp, const struct droce_pkt *p, uint64_t now)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);

	droce_qp_cnt(qp, DROCE_CNT_NP_ECN_MARKED);
	/* Data flows to us in requests and in READ responses; an ACK carries none. */
	if (!(op->flags & DROCE_OPF_REQ) && !(op->flags & DROCE_OPF_READ))
		return;
	if (qp->state < DROCE_QPS_RTR || qp->state == DROCE_QPS_ERR)
		return;
	if (qp->np_pending ||
	    (qp->np_last != UINT64_MAX && now - qp->np_last < qp->dev->cnp_interval_ns))
		return;
	if (qp->type == DROCE_QPT_UD) {
		struct droce_pkt *a = qp->np_ud;

		if (a == NULL)
			return;
		memset(a, 0, sizeof(*a));
		memcpy(a->dmac, p->smac, 6);
		memcpy(a->smac, p->dmac, 6);
		memcpy(a->dgid, p->sgid, 16);
		memcpy(a->sgid, p->dgid, 16);
		a->ip_ver = p->ip_ver;
		a->has_vlan = p->has_vlan;
		a->vlan_tci = p->vlan_tci;
		a->hop_limit = 64;
		a->udp_sport = qp->udp_sport;
		qp->np_dqpn = p->deth_sqpn;
	} else {
		qp->np_dqpn = qp->attr.dest_qp_num;
	}
	qp->np_pending = true;
	droce_sched_ready(qp);
}

int
droce_np_tx(struct droce_qp *qp, uint64_t now)
{
	struct droce_pkt p;
	uint8_t *buf;
	void *cookie;

	if (qp->type == DROCE_QPT_UD) {
		if (qp->np_ud == NULL) {
			qp->np_pending = false;
			return 0;
		}
		p = *qp->np_ud;
	} else {
		p = qp->tmpl;
	}
	p.opcode = DROCE_OP_CNP;
	p.pkey = DROCE_PKEY_DEFAULT;
	p.becn = true;
	p.fecn = false;
	p.se = false;
	p.ackreq = false;
	p.psn = 0;
	p.dqpn = qp->np_dqpn;
	/* ConnectX sends CNPs at DSCP 48, not ECN-capable: a CNP is never marked itself; on a
	 * VLAN at priority 6 (its cnp_802p_prio), so that PFC pausing the data's priority does
	 * not hold the CNP that would slow the data. */
	p.tclass = (uint8_t)(DROCE_CNP_DSCP << 2 | DROCE_ECN_NOT_ECT);
	if (p.has_vlan)
		p.vlan_tci = (uint16_t)(DROCE_CNP_VLAN_PRIO << 13 | (p.vlan_tci & 0x1FFF));
	buf = qp->dev->io.tx_alloc(qp->dev->io.ctx, droce_build_frame_len(&p, 0), &cookie);
	if (buf == NULL)
		return -EAGAIN;
	if (droce_build_hdrs(buf, droce_build_frame_len(&p, 0), &p, 0) < 0) {
		qp->dev->io.tx_send(qp->dev->io.ctx, cookie, 0); /* hand the buffer back */
		qp->np_pending = false;
		return 0;
	}
	qp->dev->io.tx_send(qp->dev->io.ctx, cookie, droce_build_finish(buf, &p));
	qp->np_pending = false;
	qp->np_last = now;
	droce_qp_cnt(qp, DROCE_CNT_NP_CNP_SENT);
	droce_qp_cnt(qp, DROCE_CNT_SENT_PKTS);
	qp->cnt[DROCE_CNT_SENT_BYTES] += p.frame_len;
	return 1;
}
