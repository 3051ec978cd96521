/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame output. A connected QP over IPv4 keeps its Ethernet/IP/UDP headers as bytes (built once by
 * the codec's builder) and writes only what changes per packet; UD and IPv6 (whose UDP checksum
 * covers the payload) go through droce_build_hdrs()/droce_build_finish().
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "droce_build_hdr.h"
#include "droce_icrc.h"
#include "droce_internal.h"

/* Template bytes copied into every frame: Ethernet (with or without 802.1Q) + IPv4 + UDP fit. */
#define DROCE_TMPL_COPY 48
/* Bytes of the ACK template copied as one constant-size block: past it only the PSN word and
 * the AETH follow, and both are written (ACK frames are 62 bytes, 66 with 802.1Q). */
#define DROCE_ACK_COPY 56

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
	struct droce_hdr_tmpl *t = &qp->htmpl;
	struct droce_pkt p;
	uint8_t buf[DROCE_HDR_ROOM_MAX + 4];
	uint8_t pre[DROCE_ICRC_V4_HDR];
	struct droce_bth *bth;

	droce_qp_tmpl_from_av(qp, &qp->attr.ah_attr, &qp->tmpl);
	qp->tmpl.dqpn = qp->attr.dest_qp_num;
	/* what a request from the peer carries, for the receive address check */
	qp->rx_v4 = droce_gid_is_v4(qp->tmpl.sgid) && droce_gid_is_v4(qp->tmpl.dgid);
	qp->rx_sip = droce_get_be32(qp->tmpl.dgid + 12);
	qp->rx_dip = droce_get_be32(qp->tmpl.sgid + 12);
	t->valid = false;
	if (qp->tmpl.ip_ver != 4)
		return;
	p = qp->tmpl;
	p.opcode = DROCE_OP_RC_ACKNOWLEDGE;
	if (droce_build_hdrs(buf, sizeof(buf), &p, 0) < 0 || p.bth_off > DROCE_TMPL_COPY ||
	    p.bth_off + sizeof(struct droce_bth) < DROCE_TMPL_COPY || p.pay_off > sizeof(t->ack) ||
	    p.pay_off < DROCE_ACK_COPY ||
	    p.bth_off + offsetof(struct droce_bth, ack_psn) > DROCE_ACK_COPY ||
	    p.bth_off - p.l3_off + sizeof(struct droce_bth) != DROCE_ICRC_V4_HDR)
		return;
	memcpy(t->b, buf, p.bth_off);
	t->l3_off = p.l3_off;
	t->l4_off = p.l4_off;
	t->bth_off = p.bth_off;
	t->csum_base = droce_ipv4_sum_base((const void *)(t->b + t->l3_off));
	/* The ICRC's fixed part: these headers and the BTH's P_Key and DestQP (A17.3.3). */
	memcpy(pre, t->b + t->l3_off, t->bth_off - t->l3_off);
	bth = (void *)(pre + (t->bth_off - t->l3_off));
	droce_bth_set(bth, 0, 0, DROCE_PKEY_DEFAULT, false, false, qp->tmpl.dqpn, false, 0);
	t->dqpn = qp->tmpl.dqpn & DROCE_BTH_QPN_MASK;
	t->icrc_base = droce_icrc_v4_base(pre);
	/* buf holds the ACK frame build_hdrs wrote for p: keep it whole for droce_tx_ack() */
	memcpy(t->ack, buf, p.pay_off);
	t->ack_len = (uint16_t)p.frame_len;
	t->ack_reg = droce_icrc_v4_reg_nopsn(buf + p.l3_off);
	t->valid = true;
}

/* Hand a finished frame to the caller's Tx and count it. */
static void
tx_send_counted(struct droce_qp *qp, void *cookie, uint32_t len)
{
	qp->dev->io.tx_send(qp->dev->io.ctx, cookie, len);
	qp->cnt[DROCE_CNT_SENT_PKTS]++;
	qp->cnt[DROCE_CNT_SENT_BYTES] += len;
}

int
droce_tx_ack(struct droce_qp *qp, uint32_t psn, uint8_t syn, uint32_t msn, bool srcap)
{
	const struct droce_hdr_tmpl *t = &qp->htmpl;
	struct droce_aeth *aeth;
	struct droce_bth *bth;
	uint8_t *buf;
	void *cookie;
	uint32_t reg;

	buf = qp->dev->io.tx_alloc(qp->dev->io.ctx, t->ack_len, &cookie);
	if (buf == NULL)
		return -EAGAIN;
	memcpy(buf, t->ack, DROCE_ACK_COPY);
	bth = (void *)(buf + t->bth_off);
	aeth = (void *)(bth + 1);
	if (srcap) /* BTH byte 4: the ICRC masks it (A17.4.2), the register stays */
		droce_bth_set_srcap(bth);
	droce_bth_set_psn(bth, false, psn);
	droce_aeth_set(aeth, syn, msn);
	/* ICRC (A17.3.3): the prefix register, the PSN word, then the AETH */
	reg = droce_icrc_v4_psn(t->ack_reg, (const uint8_t *)&bth->ack_psn);
	droce_icrc_put((uint8_t *)(aeth + 1), droce_crc32(~reg, aeth, sizeof(*aeth)));
	tx_send_counted(qp, cookie, t->ack_len);
	return 1;
}

static uint8_t *
tx_fast(struct droce_qp *qp, struct droce_pkt *p, uint32_t pay_len, void **cookie,
	uint8_t **payload)
{
	const struct droce_hdr_tmpl *t = &qp->htmpl;
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);
	uint32_t pad = (4 - (pay_len & 3)) & 3;
	uint32_t pay_off = t->bth_off + op->hdr_len;
	uint32_t len = pay_off + pay_len + pad + DROCE_ICRC_LEN;
	struct droce_udp_hdr *udp;
	uint8_t *buf;

	buf = qp->dev->io.tx_alloc(qp->dev->io.ctx, len, cookie);
	if (buf == NULL)
		return NULL;
	/* A constant-size copy the compiler inlines: past bth_off it only covers BTH bytes that
	 * are all written below (every frame is at least bth_off + BTH + ICRC long). */
	memcpy(buf, t->b, DROCE_TMPL_COPY);
	droce_ipv4_set_len((void *)(buf + t->l3_off), t->csum_base, (uint16_t)(len - t->l3_off));
	udp = (void *)(buf + t->l4_off);
	udp->len = droce_cpu_to_be16((uint16_t)(len - t->l4_off));
	/* what a connected QP's frames never change, as constants: P_Key the default, no MigReq,
	 * no FECN/BECN (only a CNP carries BECN) */
	droce_bth_set((void *)(buf + t->bth_off), p->opcode, droce_bth_flags(p->se, false, pad),
		      DROCE_PKEY_DEFAULT, false, false, p->dqpn, p->ackreq, p->psn);
	if (p->srcap)
		droce_bth_set_srcap((void *)(buf + t->bth_off));
	if (op->hdrs)
		droce_build_ext(buf + t->bth_off, op, p);
	p->l3_off = t->l3_off;
	p->l4_off = t->l4_off;
	p->bth_off = t->bth_off;
	p->pay_off = (uint16_t)pay_off;
	p->pay_len = pay_len;
	p->padcnt = (uint8_t)pad;
	p->frame_len = len;
	*payload = buf + pay_off;
	return buf;
}

uint8_t *
droce_tx_begin(struct droce_qp *qp, struct droce_pkt *p, uint32_t pay_len, void **cookie,
	       uint8_t **payload)
{
	uint32_t len;
	uint8_t *buf;
	int r;

	if (qp->htmpl.valid && qp->type != DROCE_QPT_UD)
		return tx_fast(qp, p, pay_len, cookie, payload);
	len = droce_build_frame_len(p, pay_len);
	buf = qp->dev->io.tx_alloc(qp->dev->io.ctx, len, cookie);
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
	uint32_t len;

	if (qp->htmpl.valid && qp->type != DROCE_QPT_UD) {
		uint8_t *end = buf + p->pay_off + p->pay_len;

		const struct droce_hdr_tmpl *t = &qp->htmpl;
		uint8_t *l3 = buf + t->l3_off;
		uint32_t l3_len;

		len = p->frame_len;
		l3_len = len - DROCE_ICRC_LEN - t->l3_off;
		memset(end, 0, p->padcnt);
		/* Per packet only the variable prefix bytes and what follows the BTH are folded;
		 * a DestQP other than the template's (no caller sends one) takes the full computation. */
		droce_icrc_put(end + p->padcnt,
			       droce_likely(p->dqpn == t->dqpn) ?
				       droce_icrc_v4_fast(t->icrc_base, l3, l3_len) :
				       droce_icrc_v4(l3, l3_len));
	} else {
		len = droce_build_finish(buf, p);
		if (droce_unlikely(p->dqpn == DROCE_MCAST_QPN))
			droce_mcast_loop(qp, buf, len); /* the device's own members */
	}
	tx_send_counted(qp, cookie, len);
}

/*
 * The payload from an SGE list into the frame, then the frame out. From DROCE_TX_FUSE_MIN bytes
 * on, a template frame takes one pass over the payload instead of two (a copy, then the ICRC's
 * read of it): the headers' ICRC is carried over the payload as it is copied
 * (droce_crc32_copy), then over the pad. Shorter payloads fit one CRC call over extension
 * headers and payload together, which is cheaper; UD, IPv6 and another DestQP take
 * droce_tx_end()'s own computation.
 */
#define DROCE_TX_FUSE_MIN 256

void
droce_tx_payload_end(struct droce_qp *qp, struct droce_pkt *p, uint8_t *buf, void *cookie,
		     uint8_t *data, const struct droce_sge *sge, struct droce_cursor *c)
{
	const struct droce_hdr_tmpl *t = &qp->htmpl;
	uint8_t *end = data + p->pay_len;
	uint32_t crc;

	if (p->pay_len < DROCE_TX_FUSE_MIN || !t->valid || qp->type == DROCE_QPT_UD ||
	    p->dqpn != t->dqpn) {
		if (p->pay_len != 0)
			droce_copy_out(data, sge, c, p->pay_len);
		droce_tx_end(qp, p, buf, cookie);
		return;
	}
	crc = droce_icrc_v4_fast(t->icrc_base, buf + t->l3_off, p->pay_off - t->l3_off);
	crc = droce_copy_out_crc(data, sge, c, p->pay_len, crc);
	memset(end, 0, p->padcnt);
	droce_icrc_put(end + p->padcnt, droce_crc32(crc, end, p->padcnt));
	tx_send_counted(qp, cookie, p->frame_len);
}
