/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the engine's whole receive path: a device (node 1 of tests/unit's
 * engine harness) with an RC, a UC and a UD QP in RTS, an MR with every remote right on one
 * PD and a remote-write MR on a second PD, fed frames through droce_dev_rx_burst() and run by
 * droce_dev_process(). What it sends back is thrown away.
 *
 * Input: byte 0 flags, byte 1 selector, then frames, each a 2-byte big-endian length and the
 * bytes (the last one takes what is left). Flags: bit 0 fix the IPv4 and UDP lengths, the
 * IPv4 checksum and the ICRC of each frame so that it gets past the parser; bit 1 aim it at a
 * live QP (selector bits 0-1: RC, UC, UD); bit 2 set its PSN near the QP's expected one
 * (selector bits 2-7, signed, added to it); bit 3 put the MR's address and R_Key into a RETH
 * or AtomicETH that is there (the frame's own offsets and lengths are kept, relative to it).
 * Every input starts from the same state: the QPs are reset and brought back to RTS, four
 * receives posted on each.
 * A broken invariant is __builtin_trap(): bytes beside either MR changed.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "droce_icrc.h"
#include "droce_internal.h"
#include "droce_psn.h"
#include "engine_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) \
	do { \
		if (!(c)) \
			__builtin_trap(); \
	} while (0)

#define GUARD	   4096
#define GUARD_BYTE 0x5A

/* Each MR between two guards that nothing may write. */
struct fuzz_area {
	uint8_t lo[GUARD];
	uint8_t mem[1 << 16];
	uint8_t hi[GUARD];
};

static struct eh_world fw;
static struct droce_qp *fqp[3][2];
static struct droce_pd *fpd2;
static struct droce_mr *fmr, *fmr2;
static struct fuzz_area farea, farea2;
static uint8_t fbuf[EH_FRAME_MAX];
static const enum droce_qp_type ftypes[3] = { DROCE_QPT_RC, DROCE_QPT_UC, DROCE_QPT_UD };
static struct eh_qp_opts fopts;

static void
fuzz_setup(void)
{
	unsigned int t;
	int err = 0;

	eh_init(&fw, 4200);
	eh_opts_default(&fopts);
	for (t = 0; t < 3; t++)
		eh_pair(&fw, ftypes[t], &fopts, fqp[t], 16);
	fmr = droce_mr_reg(fw.n[1].pd, farea.mem, sizeof(farea.mem), fopts.access, &err);
	fpd2 = droce_pd_alloc(fw.n[1].dev, &err);
	fmr2 = droce_mr_reg(fpd2, farea2.mem, sizeof(farea2.mem),
			    DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE, &err);
	CHECK(fqp[0][1] && fqp[1][1] && fqp[2][1] && fmr && fmr2);
	memset(farea.lo, GUARD_BYTE, GUARD);
	memset(farea.hi, GUARD_BYTE, GUARD);
	memset(farea2.lo, GUARD_BYTE, GUARD);
	memset(farea2.hi, GUARD_BYTE, GUARD);
}

/* Node 1's QPs back to RTS with fresh receives, node 0's queue emptied. */
static void
fuzz_reset(void)
{
	struct droce_qp_attr a;
	struct droce_wc wc[32];
	unsigned int t, i;

	for (t = 0; t < 3; t++) {
		struct droce_qp *q = fqp[t][1];

		memset(&a, 0, sizeof(a));
		a.qp_state = DROCE_QPS_RESET;
		droce_qp_modify(q, &a, DROCE_QP_STATE);
		eh_bring_up(q, ftypes[t], &fw.n[0], droce_qp_num(fqp[t][0]), &fopts, fopts.psn[0],
			    fopts.psn[1]);
		for (i = 0; i < 4; i++) {
			struct droce_sge sg = { (uintptr_t)farea.mem + 4096 * (4 * t + i), 4096,
						droce_mr_lkey(fmr) };
			struct droce_recv_wr rw = { i, NULL, &sg, 1 }, *bad;

			droce_post_recv(q, &rw, &bad);
		}
	}
	while (droce_cq_poll(fw.n[1].cq, 32, wc) > 0)
		;
}

static uint32_t
get_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static void
put_be16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

static void
put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

/* The flags' rewrites on an untagged IPv4 (IHL 5) frame; anything else is left as it is. */
static void
fixup(uint8_t *f, uint32_t len, uint8_t flags, uint8_t sel)
{
	const uint32_t l3 = 14, udp = l3 + 20, bth = udp + 8, ext = bth + 12;
	struct droce_qp *q = fqp[(sel & 3) % 3][1];
	uint32_t sum, i;
	uint8_t op;

	if (len < ext + 4 || get_be16(f + 12) != 0x0800 || f[l3] != 0x45)
		return;
	op = f[bth];
	if (flags & 2)
		put_be32(f + bth + 4, (uint32_t)f[bth + 4] << 24 | droce_qp_num(q));
	if (flags & 4) {
		uint32_t base =
			(op & 0x1F) >= 0x0D && (op & 0x1F) <= 0x12 ? q->req.una : q->resp.epsn;

		put_be32(f + bth + 8,
			 (uint32_t)f[bth + 8] << 24 |
				 droce_psn_add(base, (uint32_t)(int32_t)(int8_t)(sel & 0xFC) >> 2));
	}
	if ((flags & 8) && len >= ext + 16 + 4) {
		const struct droce_opcode_info *oi = droce_opcode_info(op);

		if (oi->hdrs & (H_RETH | H_ATMETH)) {
			uint32_t off = ext + ((oi->hdrs & H_DETH) ? 8 : 0);
			uint64_t va = (uintptr_t)farea.mem + (get_be16(f + off + 6) & 0xFFFF);

			put_be64(f + off, va);
			put_be32(f + off + 8, droce_mr_rkey(fmr));
		}
	}
	if (flags & 1) {
		put_be16(f + l3 + 2, len - l3);
		put_be16(f + udp + 2, 4791);
		put_be16(f + udp + 4, len - udp);
		f[l3 + 6] &= 0x40; /* no fragment */
		f[l3 + 7] = 0;
		f[l3 + 10] = f[l3 + 11] = 0;
		for (sum = 0, i = 0; i < 20; i += 2)
			sum += get_be16(f + l3 + i);
		while (sum >> 16)
			sum = (sum & 0xFFFF) + (sum >> 16);
		put_be16(f + l3 + 10, ~sum & 0xFFFF);
		droce_icrc_put(f + len - 4, droce_icrc(f + l3, len - l3 - 4));
	}
}

static void
check_guards(const struct fuzz_area *a)
{
	unsigned int i;

	for (i = 0; i < GUARD; i++)
		CHECK(a->lo[i] == GUARD_BYTE && a->hi[i] == GUARD_BYTE);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_wc wc[32];
	uint8_t flags, sel;
	size_t off = 2;

	if (fw.n[1].dev == NULL)
		fuzz_setup();
	if (size < 2)
		return 0;
	flags = data[0];
	sel = data[1];
	fuzz_reset();
	while (off < size) {
		uint32_t len = (uint32_t)(size - off);
		const uint8_t *fp = fbuf;

		if (len >= 2 && get_be16(data + off) <= len - 2) {
			len = get_be16(data + off);
			off += 2;
		}
		if (len > sizeof(fbuf))
			len = sizeof(fbuf);
		memcpy(fbuf, data + off, len);
		off += len;
		fixup(fbuf, len, flags, sel);
		fw.now += 1000;
		droce_dev_rx_burst(fw.n[1].dev, &fp, &len, 1, fw.now);
		droce_dev_process(fw.n[1].dev, fw.now, 64);
		fw.n[1].tail = fw.n[1].head; /* node 1's answers: not needed */
		while (droce_cq_poll(fw.n[1].cq, 32, wc) > 0)
			;
		if (len == 0)
			break;
	}
	/* time passes: timers, retransmissions of whatever the frames started */
	fw.now += 1000000000ull;
	droce_dev_process(fw.n[1].dev, fw.now, 64);
	fw.n[1].tail = fw.n[1].head;
	check_guards(&farea);
	check_guards(&farea2);
	return 0;
}
