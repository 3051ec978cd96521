/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden-vector driver for the codec.
 *
 *   golden_build build SPEC OUT.pcap  build every packet of SPEC (written by gen_golden.py --spec:
 *                                     one packet per line, struct droce_pkt member=value, payload
 *                                     as hex) with droce_build() into OUT.pcap, packet k stamped
 *                                     TS_BASE + k s like the generator, so the files can be compared
 *                                     byte for byte with Scapy's.
 *   golden_build icrc PCAP            for every frame of PCAP (good packets), recompute the ICRC
 *                                     with droce_icrc() and droce_icrc_ref() and compare it with
 *                                     the one on the wire (Scapy's). Exit 1 on any difference.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "droce_icrc.h"
#include "droce_pkt.h"

#define TS_BASE	     1767225600 /* gen_golden.py TS_BASE */
#define FRAME_MAX    16384
#define LINE_MAX_LEN (4 * FRAME_MAX)

enum fkind { K_UINT, K_MAC, K_GID };

struct field {
	const char *name;
	size_t off;
	size_t size;
	enum fkind kind;
};

#define F(m, k) \
	{ \
#m, offsetof(struct droce_pkt, m), sizeof(((struct droce_pkt *)0)->m), k \
	}

/* The members a sender chooses; the builder derives the rest (offsets, PadCnt, lengths, ICRC). */
static const struct field fields[] = {
	F(dmac, K_MAC),
	F(smac, K_MAC),
	F(has_vlan, K_UINT),
	F(vlan_tci, K_UINT),
	F(ip_ver, K_UINT),
	F(tclass, K_UINT),
	F(hop_limit, K_UINT),
	F(flow_label, K_UINT),
	F(ip_id, K_UINT),
	F(sgid, K_GID),
	F(dgid, K_GID),
	F(udp_sport, K_UINT),
	F(opcode, K_UINT),
	F(se, K_UINT),
	F(mig, K_UINT),
	F(pkey, K_UINT),
	F(fecn, K_UINT),
	F(becn, K_UINT),
	F(dqpn, K_UINT),
	F(ackreq, K_UINT),
	F(psn, K_UINT),
	F(reth_va, K_UINT),
	F(reth_rkey, K_UINT),
	F(reth_len, K_UINT),
	F(aeth_syn, K_UINT),
	F(aeth_msn, K_UINT),
	F(atomic_va, K_UINT),
	F(atomic_rkey, K_UINT),
	F(atomic_swap_add, K_UINT),
	F(atomic_compare, K_UINT),
	F(atomic_orig, K_UINT),
	F(imm, K_UINT),
	F(ieth_rkey, K_UINT),
	F(deth_qkey, K_UINT),
	F(deth_sqpn, K_UINT),
};

static int
set_uint(uint8_t *dst, size_t size, const char *v)
{
	char *end;
	unsigned long long x;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno != 0 || *end != '\0' || *v == '\0' || *v == '-')
		return -EINVAL;
	if (size < 8 && (x >> (8 * size)) != 0)
		return -ERANGE;
	switch (size) {
	case 1:
		u8 = (uint8_t)x;
		memcpy(dst, &u8, 1);
		break;
	case 2:
		u16 = (uint16_t)x;
		memcpy(dst, &u16, 2);
		break;
	case 4:
		u32 = (uint32_t)x;
		memcpy(dst, &u32, 4);
		break;
	case 8:
		u64 = x;
		memcpy(dst, &u64, 8);
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static int
set_field(struct droce_pkt *p, const char *k, const char *v)
{
	uint8_t *base = (uint8_t *)p;
	unsigned int m[6];
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const struct field *f = &fields[i];

		if (strcmp(f->name, k) != 0)
			continue;
		switch (f->kind) {
		case K_UINT:
			/* bool members take 0/1 through the 1-byte path */
			return set_uint(base + f->off, f->size, v);
		case K_MAC:
			if (sscanf(v, "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3], &m[4],
				   &m[5]) != 6)
				return -EINVAL;
			for (i = 0; i < 6; i++)
				base[f->off + i] = (uint8_t)m[i];
			return 0;
		case K_GID:
			return inet_pton(AF_INET6, v, base + f->off) == 1 ? 0 : -EINVAL;
		}
	}
	return -ENOENT;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
parse_hex(const char *v, uint8_t *out, uint32_t cap, uint32_t *len)
{
	size_t n = strlen(v), i;

	if (n % 2 != 0 || n / 2 > cap)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*len = (uint32_t)(n / 2);
	return 0;
}

/* One spec line into *p and the payload; returns 0 or -errno, naming the bad token. */
static int
parse_line(char *line, struct droce_pkt *p, uint8_t *pay, uint32_t *pay_len, const char **bad)
{
	char *save = NULL, *tok;
	int r;

	memset(p, 0, sizeof(*p));
	*pay_len = 0;
	for (tok = strtok_r(line, " \t\n", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');

		*bad = tok;
		if (eq == NULL)
			return -EINVAL;
		*eq = '\0';
		if (strcmp(tok, "payload") == 0)
			r = parse_hex(eq + 1, pay, FRAME_MAX, pay_len);
		else
			r = set_field(p, tok, eq + 1);
		if (r < 0)
			return r;
	}
	return 0;
}

static int
cmd_build(const char *spec, const char *out)
{
	static char line[LINE_MAX_LEN];
	static uint8_t pay[FRAME_MAX], frame[FRAME_MAX];
	struct pcap_pkthdr h;
	struct droce_pkt p;
	pcap_dumper_t *d;
	const char *bad = "";
	unsigned int lineno = 0, k = 0;
	uint32_t pay_len;
	pcap_t *pc;
	FILE *in;
	int r;

	in = fopen(spec, "r");
	if (in == NULL) {
		perror(spec);
		return 2;
	}
	pc = pcap_open_dead(DLT_EN10MB, 65535);
	d = pc != NULL ? pcap_dump_open(pc, out) : NULL;
	if (d == NULL) {
		fprintf(stderr, "%s: %s\n", out, pc != NULL ? pcap_geterr(pc) : "pcap_open_dead");
		fclose(in);
		return 2;
	}
	r = 0;
	while (fgets(line, sizeof(line), in) != NULL) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		r = parse_line(line, &p, pay, &pay_len, &bad);
		if (r < 0) {
			fprintf(stderr, "%s:%u: bad token '%s': %s\n", spec, lineno, bad,
				strerror(-r));
			break;
		}
		r = droce_build(frame, sizeof(frame), &p, pay, pay_len);
		if (r < 0) {
			fprintf(stderr, "%s:%u: droce_build: %s\n", spec, lineno, strerror(-r));
			break;
		}
		h.ts.tv_sec = TS_BASE + k;
		h.ts.tv_usec = 0;
		h.caplen = h.len = (bpf_u_int32)r;
		pcap_dump((u_char *)d, &h, frame);
		k++;
		r = 0;
	}
	pcap_dump_close(d);
	pcap_close(pc);
	fclose(in);
	if (r < 0)
		return 1;
	printf("%s: %u packets built into %s\n", spec, k, out);
	return 0;
}

static int
cmd_icrc(const char *path)
{
	char err[PCAP_ERRBUF_SIZE];
	const uint8_t *data;
	struct pcap_pkthdr *h;
	struct droce_pkt p;
	unsigned int n = 0, bad = 0;
	pcap_t *pc;

	pc = pcap_open_offline(path, err);
	if (pc == NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 2;
	}
	while (pcap_next_ex(pc, &h, &data) == 1) {
		enum droce_drop why;
		uint32_t wire, ours, ref, len;

		n++;
		why = droce_parse(data, h->caplen, &p, DROCE_PARSE_NO_ICRC);
		if (why != DROCE_DROP_NONE) {
			printf("%s #%u: parse failed before the ICRC: %s\n", path, n,
			       droce_drop_name(why));
			bad++;
			continue;
		}
		len = p.frame_len - DROCE_ICRC_LEN - p.l3_off;
		wire = droce_icrc_get(data + p.frame_len - DROCE_ICRC_LEN);
		ours = droce_icrc(data + p.l3_off, len);
		ref = droce_icrc_ref(data + p.l3_off, len);
		if (ours != wire || ref != wire) {
			printf("%s #%u %s IPv%u: Scapy ICRC %08" PRIx32 ", droce_icrc %08" PRIx32
			       ", droce_icrc_ref %08" PRIx32 "\n",
			       path, n, droce_opcode_name(p.opcode), p.ip_ver, wire, ours, ref);
			bad++;
		}
	}
	pcap_close(pc);
	printf("%s: %u packets, %u ICRC mismatches\n", path, n, bad);
	return n == 0 || bad != 0 ? 1 : 0;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "build") == 0)
		return cmd_build(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "icrc") == 0)
		return cmd_icrc(argv[2]);
	fprintf(stderr, "usage: %s build SPEC OUT.pcap | icrc PCAP\n", argv[0]);
	return 2;
}
