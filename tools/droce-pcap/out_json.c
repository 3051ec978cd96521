/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One JSON object per packet (JSON Lines). Keys are the struct droce_pkt member names, so a
 * test can compare them one for one with another decoder; only the layers the parser reached
 * (r->stage) and only the extension headers the opcode has are present. Every string written
 * here is a fixed name or an address, so none needs escaping.
 */
#include <inttypes.h>
#include <stdio.h>

#include "droce_pcap.h"

static void
ju(FILE *o, const char *k, uint64_t v)
{
	fprintf(o, ",\"%s\":%" PRIu64, k, v);
}

static void
jb(FILE *o, const char *k, bool v)
{
	fprintf(o, ",\"%s\":%s", k, v ? "true" : "false");
}

static void
js(FILE *o, const char *k, const char *v)
{
	fprintf(o, ",\"%s\":\"%s\"", k, v);
}

static void
json_ext(FILE *o, const struct droce_pkt *p)
{
	unsigned int h = droce_opcode_info(p->opcode)->hdrs;

	if (h & H_DETH) {
		ju(o, "deth_qkey", p->deth_qkey);
		ju(o, "deth_sqpn", p->deth_sqpn);
	}
	if (h & H_RETH) {
		ju(o, "reth_va", p->reth_va);
		ju(o, "reth_rkey", p->reth_rkey);
		ju(o, "reth_len", p->reth_len);
	}
	if (h & H_ATMETH) {
		ju(o, "atomic_va", p->atomic_va);
		ju(o, "atomic_rkey", p->atomic_rkey);
		ju(o, "atomic_swap_add", p->atomic_swap_add);
		ju(o, "atomic_compare", p->atomic_compare);
	}
	if (h & H_AETH) {
		ju(o, "aeth_syn", p->aeth_syn);
		ju(o, "aeth_msn", p->aeth_msn);
	}
	if (h & H_ATMACK)
		ju(o, "atomic_orig", p->atomic_orig);
	if (h & H_IMMDT)
		ju(o, "imm", p->imm);
	if (h & H_IETH)
		ju(o, "ieth_rkey", p->ieth_rkey);
}

static void
json_bth(FILE *o, const struct droce_pkt *p)
{
	ju(o, "opcode", p->opcode);
	js(o, "opcode_name", droce_opcode_name(p->opcode));
	jb(o, "se", p->se);
	jb(o, "mig", p->mig);
	ju(o, "padcnt", p->padcnt);
	ju(o, "tver", p->tver);
	ju(o, "pkey", p->pkey);
	jb(o, "fecn", p->fecn);
	jb(o, "becn", p->becn);
	ju(o, "dqpn", p->dqpn);
	jb(o, "ackreq", p->ackreq);
	ju(o, "psn", p->psn);
	ju(o, "icrc", p->icrc);
	ju(o, "frame_len", p->frame_len);
}

static void
json_ip(FILE *o, const struct droce_pkt *p)
{
	char a[DROCE_PCAP_ADDR_LEN];

	ju(o, "ip_ver", p->ip_ver);
	ju(o, "tclass", p->tclass);
	ju(o, "hop_limit", p->hop_limit);
	ju(o, "flow_label", p->flow_label);
	ju(o, "ip_id", p->ip_id);
	droce_pcap_fmt_gid(a, p->sgid);
	js(o, "sgid", a);
	droce_pcap_fmt_gid(a, p->dgid);
	js(o, "dgid", a);
	droce_pcap_fmt_ip(a, p, p->sgid);
	js(o, "src", a);
	droce_pcap_fmt_ip(a, p, p->dgid);
	js(o, "dst", a);
}

void
droce_pcap_json(FILE *o, const struct droce_pcap_rec *r)
{
	const struct droce_pkt *p = &r->pkt;
	const char *status;
	char a[DROCE_PCAP_ADDR_LEN];

	if (r->reason == DROCE_DROP_NONE)
		status = "ok";
	else if (r->cls == DROCE_DROP_CLASS_NOT_ROCE)
		status = "skipped";
	else
		status = "bad";
	fprintf(o, "{\"n\":%" PRIu64 ",\"ts\":%lld.%06ld", r->n, (long long)r->ts.tv_sec,
		(long)r->ts.tv_usec);
	js(o, "status", status);
	js(o, "reason", droce_drop_name(r->reason));
	jb(o, "icrc_ok", r->icrc_ok);
	if (r->stage >= DROCE_PCAP_ST_MAC) {
		droce_pcap_fmt_mac(a, p->dmac);
		js(o, "dmac", a);
		droce_pcap_fmt_mac(a, p->smac);
		js(o, "smac", a);
	}
	if (r->stage >= DROCE_PCAP_ST_L2) {
		jb(o, "has_vlan", p->has_vlan);
		ju(o, "vlan_tci", p->vlan_tci);
		ju(o, "l3_off", p->l3_off);
	}
	if (r->stage >= DROCE_PCAP_ST_IP)
		json_ip(o, p);
	if (r->stage >= DROCE_PCAP_ST_L4)
		ju(o, "l4_off", p->l4_off);
	if (r->stage >= DROCE_PCAP_ST_UDP) {
		ju(o, "udp_sport", p->udp_sport);
		ju(o, "udp_csum", p->udp_csum);
	}
	if (r->stage >= DROCE_PCAP_ST_BTHOFF)
		ju(o, "bth_off", p->bth_off);
	if (r->stage >= DROCE_PCAP_ST_BTH)
		json_bth(o, p);
	if (r->stage >= DROCE_PCAP_ST_ALL) {
		ju(o, "pay_off", p->pay_off);
		ju(o, "pay_len", p->pay_len);
		json_ext(o, p);
	}
	fputs("}\n", o);
}
