/* SPDX-License-Identifier: BSD-3-Clause */
/* Frame output: headers from the QP's template, a buffer from the caller, counters. */
#include <string.h>

#include "droce_internal.h"
#include "wire/droce_bth.h"
#include "wire/droce_ipv4.h"

/* Addressing fields of an address vector (IBTA A17.4: the GRH maps to IP). ECT(0) is set so that
 * switches can mark CE instead of dropping (A17.9.1). */
void
droce_qp_tmpl_from_av(const struct droce_qp *qp, const struct droce_av *av, struct droce_pkt *p)
{
	const struct droce_dev *dev = qp->dev;

	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, av->dmac, 6);
	memcpy(p->smac, dev->attr.mac, 6);
	p->has_vlan = av->has_vlan;
	p->vlan_tci = av->vlan_tci;
	p->ip_ver = droce_gid_is_v4(av->dgid) ? 4 : 6;
	p->tclass = (uint8_t)((av->traffic_class & ~3u) | DROCE_ECN_ECT0);
	p->hop_limit = av->hop_limit ? av->hop_limit : 64;
	p->flow_label = av->flow_label;
	memcpy(p->sgid, dev->attr.gids[av->sgid_index < dev->attr.num_gids ? av->sgid_index : 0],
	       16);
	memcpy(p->dgid, av->dgid, 16);
	p->udp_sport = qp->udp_sport;
	p->pkey = DROCE_PKEY_DEFAULT;
}

void
droce_qp_build_tmpl(struct droce_qp *qp)
{
	droce_qp_tmpl_from_av(qp, &qp->attr.ah_attr, &qp->tmpl);
	qp->tmpl.dqpn = qp->attr.dest_qp_num;
}

uint8_t *
droce_tx_begin(struct droce_qp *qp, struct droce_pkt *p, uint32_t pay_len, void **cookie,
	       uint8_t **payload)
{
	uint32_t len = droce_build_frame_len(p, pay_len);
	uint8_t *buf = qp->dev->io.tx_alloc(qp->dev->io.ctx, len, cookie);
	int r;

	if (buf == NULL)
		return NULL;
	r = droce_build_hdrs(buf, len, p, pay_len);
	if (r < 0) {
		/* Cannot happen for lengths the engine chose; send nothing rather than garbage:
		 * an empty buffer is still handed back so the caller's accounting stays whole. */
		qp->dev->io.tx_send(qp->dev->io.ctx, *cookie, 0);
		return NULL;
	}
	*payload = buf + r;
	return buf;
}

void
droce_tx_end(struct droce_qp *qp, struct droce_pkt *p, uint8_t *buf, void *cookie)
{
	uint32_t len = droce_build_finish(buf, p);

	qp->dev->io.tx_send(qp->dev->io.ctx, cookie, len);
	qp->cnt[DROCE_CNT_SENT_PKTS]++;
	qp->cnt[DROCE_CNT_SENT_BYTES] += len;
}
