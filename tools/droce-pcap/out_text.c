/* SPDX-License-Identifier: BSD-3-Clause */
/* One human-readable line per packet. */
#include <inttypes.h>
#include <stdio.h>

#include "droce_pcap.h"
#include "wire/droce_bth.h"

static void
text_flags(FILE *o, const struct droce_pkt *p)
{
	if (p->ackreq)
		fputs(" AckReq", o);
	if (p->se)
		fputs(" SE", o);
	if (p->mig)
		fputs(" MigReq", o);
	if (p->fecn)
		fputs(" FECN", o);
	if (p->becn)
		fputs(" BECN", o);
}

/* Extension headers the opcode has, in wire order. */
static void
text_ext(FILE *o, const struct droce_pkt *p)
{
	unsigned int h = droce_opcode_info(p->opcode)->hdrs;
	char aeth[64];

	if (h & H_DETH)
		fprintf(o, " DETH qkey 0x%08x sqp 0x%06x", p->deth_qkey, p->deth_sqpn);
	if (h & H_RETH)
		fprintf(o, " RETH va 0x%016" PRIx64 " rkey 0x%08x len %u", p->reth_va, p->reth_rkey,
			p->reth_len);
	if (h & H_ATMETH)
		fprintf(o,
			" AtomicETH va 0x%016" PRIx64 " rkey 0x%08x swap_add 0x%" PRIx64
			" compare 0x%" PRIx64,
			p->atomic_va, p->atomic_rkey, p->atomic_swap_add, p->atomic_compare);
	if (h & H_AETH) {
		droce_pcap_fmt_aeth(aeth, sizeof(aeth), p->aeth_syn);
		fprintf(o, " AETH %s msn %u", aeth, p->aeth_msn);
	}
	if (h & H_ATMACK)
		fprintf(o, " AtomicAckETH orig 0x%" PRIx64, p->atomic_orig);
	if (h & H_IMMDT)
		fprintf(o, " ImmDt 0x%08x", p->imm);
	if (h & H_IETH)
		fprintf(o, " IETH rkey 0x%08x", p->ieth_rkey);
}

/* Whatever the parser filled, layer by layer (r->stage). */
static void
text_fields(FILE *o, const struct droce_pcap_rec *r)
{
	const struct droce_pkt *p = &r->pkt;
	char a[DROCE_PCAP_ADDR_LEN], b[DROCE_PCAP_ADDR_LEN];

	if (r->stage >= DROCE_PCAP_ST_IP) {
		droce_pcap_fmt_ip(a, p, p->sgid);
		droce_pcap_fmt_ip(b, p, p->dgid);
		fprintf(o, " %s -> %s", a, b);
	} else if (r->stage >= DROCE_PCAP_ST_MAC) {
		droce_pcap_fmt_mac(a, p->smac);
		droce_pcap_fmt_mac(b, p->dmac);
		fprintf(o, " %s -> %s", a, b);
	}
	if (r->stage >= DROCE_PCAP_ST_L2 && p->has_vlan)
		fprintf(o, " vlan %u prio %u", p->vlan_tci & 0x0FFF, p->vlan_tci >> 13);
	if (r->stage >= DROCE_PCAP_ST_UDP)
		fprintf(o, " sport %u", p->udp_sport);
	if (r->stage >= DROCE_PCAP_ST_BTH) {
		if (droce_opcode_info(p->opcode)->name != NULL)
			fprintf(o, " %s", droce_opcode_name(p->opcode));
		else
			fprintf(o, " opcode 0x%02x", p->opcode);
		fprintf(o, " qp 0x%06x psn %u", p->dqpn, p->psn);
		text_flags(o, p);
		if (p->pkey != DROCE_PKEY_DEFAULT)
			fprintf(o, " pkey 0x%04x", p->pkey);
		if (p->tver != DROCE_BTH_TVER)
			fprintf(o, " tver %u", p->tver);
		if (r->reason == DROCE_DROP_PADCNT)
			fprintf(o, " pad %u", p->padcnt);
	}
	if (r->stage >= DROCE_PCAP_ST_IP)
		fprintf(o, " ecn %s", droce_pcap_ecn_name(p->tclass));
	if (r->stage >= DROCE_PCAP_ST_ALL) {
		text_ext(o, p);
		fprintf(o, " pay %u", p->pay_len);
	}
	if (r->stage >= DROCE_PCAP_ST_BTH)
		fputs(r->icrc_ok ? " icrc ok" : " icrc BAD", o);
}

void
droce_pcap_text(FILE *o, const struct droce_pcap_rec *r)
{
	char t[32];

	droce_pcap_fmt_us(t, sizeof(t), r->rel_us);
	fprintf(o, "%" PRIu64 " %s", r->n, t);
	if (r->cls == DROCE_DROP_CLASS_NOT_ROCE) {
		fprintf(o, " skipped (%s)\n", droce_drop_desc(r->reason));
		return;
	}
	/* A bad ICRC is the last check: the line is a full one ending in "icrc BAD". */
	if (r->reason != DROCE_DROP_NONE && r->reason != DROCE_DROP_ICRC) {
		fprintf(o, " BAD %s: %s", droce_drop_name(r->reason), droce_drop_desc(r->reason));
		if (r->caplen < r->wirelen)
			fprintf(o, " (captured %u of %u bytes)", r->caplen, r->wirelen);
		if (r->stage > DROCE_PCAP_ST_NONE)
			fputs(" |", o);
	}
	text_fields(o, r);
	fputc('\n', o);
}
