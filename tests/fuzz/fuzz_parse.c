/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the wire codec. Each input is used twice:
 * - as a frame: parsed with and without DROCE_PARSE_NO_ICRC / NO_IPCSUM (the flags may only
 *   waive their own check); a frame that parses is rebuilt from its struct and the rebuilt frame
 *   must parse, with every check on, to the same fields and payload;
 * - as a packet description: fields taken from the bytes are built and the result parsed back,
 *   the builder's answer (-EINVAL, -ENOSPC or a length) checked against the rules independently.
 * droce_icrc() must also agree with droce_icrc_ref() on the raw bytes, and the receive path's
 * parser (droce_parse_rx) with droce_parse() on every frame: the same reason, the same fields.
 * A broken invariant is __builtin_trap(): libFuzzer reports it as a crash with the input saved.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "droce_icrc.h"
#include "droce_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) \
	do { \
		if (!(c)) \
			__builtin_trap(); \
	} while (0)

/* Largest frame either side may produce: 802.1Q + IPv6 + a 64 KiB payload length. */
#define FRAME_MAX (14 + 4 + 40 + 0xFFFF)

static uint8_t rebuilt[FRAME_MAX];

static uint32_t
be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t
be32(const uint8_t *p)
{
	return be16(p) << 16 | be16(p + 2);
}

static uint64_t
be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* Fields a packet description carries; offsets, lengths, checksums and the ICRC are derived. */
static void
same_fields(const struct droce_pkt *a, const struct droce_pkt *b)
{
	const struct droce_opcode_info *op = droce_opcode_info(a->opcode);

	CHECK(memcmp(a->dmac, b->dmac, 6) == 0 && memcmp(a->smac, b->smac, 6) == 0);
	CHECK(a->has_vlan == b->has_vlan && a->vlan_tci == b->vlan_tci);
	CHECK(a->ip_ver == b->ip_ver && a->tclass == b->tclass && a->hop_limit == b->hop_limit);
	CHECK(a->flow_label == b->flow_label && a->ip_id == b->ip_id);
	CHECK(memcmp(a->sgid, b->sgid, 16) == 0 && memcmp(a->dgid, b->dgid, 16) == 0);
	CHECK(a->udp_sport == b->udp_sport);
	CHECK(a->opcode == b->opcode && a->se == b->se && a->mig == b->mig);
	CHECK(a->padcnt == b->padcnt && a->tver == b->tver && a->pkey == b->pkey);
	CHECK(a->fecn == b->fecn && a->becn == b->becn && a->dqpn == b->dqpn);
	CHECK(a->ackreq == b->ackreq && a->psn == b->psn && a->pay_len == b->pay_len);
	CHECK(a->pay_off - a->bth_off == b->pay_off - b->bth_off);
	if (op->hdrs & H_RETH)
		CHECK(a->reth_va == b->reth_va && a->reth_rkey == b->reth_rkey &&
		      a->reth_len == b->reth_len);
	if (op->hdrs & H_AETH)
		CHECK(a->aeth_syn == b->aeth_syn && a->aeth_msn == b->aeth_msn);
	if (op->hdrs & H_ATMETH)
		CHECK(a->atomic_va == b->atomic_va && a->atomic_rkey == b->atomic_rkey &&
		      a->atomic_swap_add == b->atomic_swap_add &&
		      a->atomic_compare == b->atomic_compare);
	if (op->hdrs & H_ATMACK)
		CHECK(a->atomic_orig == b->atomic_orig);
	if (op->hdrs & H_IMMDT)
		CHECK(a->imm == b->imm);
	if (op->hdrs & H_IETH)
		CHECK(a->ieth_rkey == b->ieth_rkey);
	if (op->hdrs & H_DETH)
		CHECK(a->deth_qkey == b->deth_qkey && a->deth_sqpn == b->deth_sqpn);
}

/* What a good parse promises about where things are. */
static void
check_layout(const struct droce_pkt *p, uint32_t size)
{
	const struct droce_opcode_info *op = droce_opcode_info(p->opcode);

	CHECK(op->name != NULL);
	CHECK(p->frame_len <= size);
	CHECK(p->l3_off == (p->has_vlan ? 18 : 14));
	CHECK(p->l4_off > p->l3_off && p->bth_off == p->l4_off + 8);
	CHECK(p->pay_off == p->bth_off + op->hdr_len);
	CHECK((uint32_t)p->pay_off + p->pay_len + p->padcnt + DROCE_ICRC_LEN == p->frame_len);
	CHECK(((p->pay_len + p->padcnt) & 3) == 0 && p->padcnt < 4 && p->tver == 0);
	CHECK(p->pay_len == 0 || (op->flags & DROCE_OPF_PAYLOAD));
	CHECK(p->padcnt == 0 || (op->flags & DROCE_OPF_LAST));
	CHECK(p->ip_ver == 6 || (droce_gid_is_v4(p->sgid) && droce_gid_is_v4(p->dgid)));
}

static uint32_t
frame_len_for(const struct droce_pkt *p, uint32_t pay_len)
{
	return 14 + (p->has_vlan ? 4 : 0) + (p->ip_ver == 6 ? 40 : 20) + 8 +
	       droce_opcode_info(p->opcode)->hdr_len + ((pay_len + 3) & ~3u) + DROCE_ICRC_LEN;
}

/* parse(build(parse(frame))) == parse(frame), field for field. */
static void
rebuild(const uint8_t *data, const struct droce_pkt *p)
{
	struct droce_pkt q = *p, r;
	uint32_t want = frame_len_for(p, p->pay_len);
	int len;

	len = droce_build(rebuilt, sizeof(rebuilt), &q, data + p->pay_off, p->pay_len);
	if (want > 0xFFFF) {
		/* the builder keeps every frame within 64 KiB */
		CHECK(len == -ENOSPC);
		return;
	}
	CHECK(len == (int)want);
	memset(&r, 0, sizeof(r));
	CHECK(droce_parse(rebuilt, (uint32_t)len, &r, 0) == DROCE_DROP_NONE);
	check_layout(&r, (uint32_t)len);
	same_fields(p, &r);
	CHECK(memcmp(rebuilt + r.pay_off, data + p->pay_off, p->pay_len) == 0);
	CHECK(r.udp_csum == (p->ip_ver == 6 ? q.udp_csum : 0));
	CHECK(r.icrc == q.icrc);
}

/* droce_parse_rx() (constant offsets for IPv4 without options, an ICRC prefix cache) names the
 * reason droce_parse() names and, for a good frame, describes it identically. */
static void
rx_mode(const uint8_t *data, uint32_t size, enum droce_drop want, const struct droce_pkt *p0)
{
	static struct droce_icrc_v4_cache cache[2];
	struct droce_pkt a;

	memset(&a, 0, sizeof(a));
	CHECK(droce_parse_rx(data, size, &a, 0, cache, 1) == want);
	if (want == DROCE_DROP_NONE) {
		droce_parse_addrs(data, &a);
		CHECK(memcmp(&a, p0, sizeof(a)) == 0);
	}
	memset(&a, 0, sizeof(a));
	CHECK(droce_parse_rx(data, size, &a, 0, NULL, 0) == want);
	if (want == DROCE_DROP_NONE) {
		droce_parse_addrs(data, &a);
		CHECK(memcmp(&a, p0, sizeof(a)) == 0);
	}
}

static void
frame_mode(const uint8_t *data, uint32_t size)
{
	struct droce_pkt p0, p1, p2;
	enum droce_drop r0, r1, r2;

	memset(&p0, 0, sizeof(p0));
	memset(&p1, 0, sizeof(p1));
	memset(&p2, 0, sizeof(p2));
	r0 = droce_parse(data, size, &p0, 0);
	r1 = droce_parse(data, size, &p1, DROCE_PARSE_NO_ICRC);
	r2 = droce_parse(data, size, &p2, DROCE_PARSE_NO_IPCSUM);
	rx_mode(data, size, r0, &p0);
	CHECK((unsigned int)r0 < DROCE_DROP_MAX && (unsigned int)r1 < DROCE_DROP_MAX);
	CHECK(droce_drop_name(r0)[0] != '?');
	/* each flag waives its own check and nothing else */
	CHECK(r1 == r0 || (r0 == DROCE_DROP_ICRC && r1 == DROCE_DROP_NONE));
	CHECK(r2 == r0 || r0 == DROCE_DROP_IP_CSUM);
	CHECK(r1 != DROCE_DROP_ICRC && r2 != DROCE_DROP_IP_CSUM);
	if (r0 == DROCE_DROP_NONE) {
		check_layout(&p0, size);
		CHECK(memcmp(&p0, &p1, sizeof(p0)) == 0);
		CHECK(droce_icrc_ref(data + p0.l3_off, p0.frame_len - DROCE_ICRC_LEN - p0.l3_off) ==
		      p0.icrc);
		rebuild(data, &p0);
	} else if (r1 == DROCE_DROP_NONE) {
		/* ICRC wrong but everything else right: the rebuilt frame gets a good one */
		check_layout(&p1, size);
		rebuild(data, &p1);
	}
}

/* Bytes 0..127 describe a packet; the rest is its payload. */
#define DESC_LEN 128

static void
build_mode(const uint8_t *d, uint32_t size)
{
	const struct droce_opcode_info *op;
	struct droce_pkt p, got;
	uint32_t pay_len, want, cap;
	int len, valid;

	if (size < DESC_LEN)
		return;
	memset(&p, 0, sizeof(p));
	p.opcode = d[0];
	p.ip_ver = (d[1] & 1) ? 6 : 4;
	p.has_vlan = (d[1] & 2) != 0;
	p.se = (d[1] & 4) != 0;
	p.mig = (d[1] & 8) != 0;
	p.fecn = (d[1] & 16) != 0;
	p.becn = (d[1] & 32) != 0;
	p.ackreq = (d[1] & 64) != 0;
	p.vlan_tci = p.has_vlan ? (uint16_t)be16(d + 2) : 0;
	p.tclass = d[4];
	p.hop_limit = d[5];
	memcpy(p.dmac, d + 6, 6);
	memcpy(p.smac, d + 12, 6);
	memcpy(p.sgid, d + 18, 16);
	memcpy(p.dgid, d + 34, 16);
	if (p.ip_ver == 4) {
		p.flow_label = 0;
		p.ip_id = (uint16_t)be16(d + 50);
		/* mostly well-formed GIDs, sometimes not: the builder must refuse those */
		if (!(d[2] & 0x80))
			droce_gid_from_v4(p.sgid, be32(d + 30));
		if (!(d[2] & 0x40))
			droce_gid_from_v4(p.dgid, be32(d + 46));
	} else {
		p.flow_label = be32(d + 50) & 0xFFFFF;
	}
	p.udp_sport = (uint16_t)be16(d + 54);
	p.pkey = (uint16_t)be16(d + 56);
	p.dqpn = be32(d + 58) & 0xFFFFFF;
	p.psn = be32(d + 62) & 0xFFFFFF;
	p.reth_va = be64(d + 66);
	p.reth_rkey = be32(d + 74);
	p.reth_len = be32(d + 78);
	p.aeth_syn = d[82];
	p.aeth_msn = be32(d + 82) & 0xFFFFFF;
	p.atomic_va = be64(d + 86);
	p.atomic_rkey = be32(d + 94);
	p.atomic_swap_add = be64(d + 98);
	p.atomic_compare = be64(d + 106);
	p.atomic_orig = be64(d + 66) ^ be64(d + 114);
	p.imm = be32(d + 114);
	p.ieth_rkey = be32(d + 118);
	p.deth_qkey = be32(d + 122);
	p.deth_sqpn = be32(d + 124) & 0xFFFFFF;
	pay_len = size - DESC_LEN;
	/* now and then a length far past the input: must be refused before any copy */
	if ((d[3] & 0x0F) == 0x0F)
		pay_len = be32(d + 58) | 0x10000;

	op = droce_opcode_info(p.opcode);
	valid = op->name != NULL && (pay_len == 0 || (op->flags & DROCE_OPF_PAYLOAD)) &&
		((pay_len & 3) == 0 || (op->flags & DROCE_OPF_LAST)) &&
		(p.ip_ver == 6 || (droce_gid_is_v4(p.sgid) && droce_gid_is_v4(p.dgid)));
	want = pay_len > 0xFFFF ? 0xFFFFFFFF : frame_len_for(&p, pay_len);
	cap = (d[1] & 0x80) && want < sizeof(rebuilt) ? want - 1 : sizeof(rebuilt);

	len = droce_build(rebuilt, cap, &p, d + DESC_LEN, pay_len);
	if (!valid) {
		CHECK(len == -EINVAL);
		return;
	}
	if (want > 0xFFFF || want > cap) {
		CHECK(len == -ENOSPC);
		return;
	}
	CHECK(len == (int)want);
	memset(&got, 0, sizeof(got));
	CHECK(droce_parse(rebuilt, (uint32_t)len, &got, 0) == DROCE_DROP_NONE);
	check_layout(&got, (uint32_t)len);
	CHECK(got.pay_len == pay_len);
	CHECK(got.padcnt == ((4 - (pay_len & 3)) & 3));
	same_fields(&p, &got);
	CHECK(memcmp(rebuilt + got.pay_off, d + DESC_LEN, pay_len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t n = size > FRAME_MAX ? FRAME_MAX : (uint32_t)size;

	frame_mode(data, n);
	build_mode(data, n);
	/* the fast ICRC against the bitwise reference on raw bytes, aligned and not */
	CHECK(droce_icrc(data, n) == droce_icrc_ref(data, n));
	if (n > 1)
		CHECK(droce_icrc(data + 1, n - 1) == droce_icrc_ref(data + 1, n - 1));
	return 0;
}
