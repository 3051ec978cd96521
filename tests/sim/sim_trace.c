/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "droce_pkt.h"
#include "droce_psn.h"
#include "wire/droce_aeth.h"

#include "sim_net.h"
#include "sim_trace.h"

/* FNV-1a, 64 bits: the frames a run sends, byte for byte, as one number (--digest) */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

static uint64_t
fnv1a(uint64_t h, const uint8_t *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

void
sim_trace_init(struct sim_trace *tr, int verbose, FILE *out, uint32_t mtu_bytes)
{
	memset(tr, 0, sizeof(*tr));
	tr->st.digest = FNV_OFFSET;
	tr->verbose = verbose;
	tr->out = out != NULL ? out : stdout;
	tr->mtu_bytes = mtu_bytes != 0 ? mtu_bytes : 1024;
}

int
sim_trace_pcap_open(struct sim_trace *tr, const char *path)
{
	/* little-endian microsecond pcap, DLT_EN10MB */
	const uint32_t hdr[6] = { 0xA1B2C3D4, 0x00040002, 0, 0, 65535, 1 };

	tr->pcap = fopen(path, "wb");
	if (tr->pcap == NULL)
		return -1;
	fwrite(hdr, sizeof(hdr), 1, tr->pcap);
	return 0;
}

void
sim_trace_pcap_close(struct sim_trace *tr)
{
	if (tr->pcap != NULL)
		fclose(tr->pcap);
	tr->pcap = NULL;
}

static struct sim_trace_flow *
flow_get(struct sim_trace *tr, uint32_t key, uint32_t psn)
{
	unsigned int i;

	for (i = 0; i < tr->n_flow; i++)
		if (tr->flow[i].key == key)
			return &tr->flow[i];
	if (tr->n_flow == SIM_TRACE_FLOWS)
		return NULL;
	tr->flow[tr->n_flow].key = key;
	tr->flow[tr->n_flow].next_psn = psn;
	return &tr->flow[tr->n_flow++];
}

static void
count(struct sim_trace *tr, unsigned int src, const struct droce_pkt *p, unsigned int fate)
{
	const struct droce_opcode_info *oi = droce_opcode_info(p->opcode);
	struct sim_wire_stats *st = &tr->st;

	if (p->pay_len != 0) {
		st->data_pkts++;
		st->payload_bytes += p->pay_len;
	}
	if (oi->flags & DROCE_OPF_CNP) {
		st->cnps++;
		return;
	}
	if (oi->flags & DROCE_OPF_REQ) {
		struct sim_trace_flow *f = flow_get(tr, (uint32_t)src << 24 | p->dqpn, p->psn);
		uint32_t span = 1;

		st->req_pkts++;
		if (src < 8)
			st->per_node_req[src]++;
		if (oi->flags & DROCE_OPF_READ && p->reth_len > tr->mtu_bytes)
			span = (p->reth_len + tr->mtu_bytes - 1) / tr->mtu_bytes;
		if (f != NULL) {
			if (droce_psn_lt(p->psn, f->next_psn)) {
				st->retransmits++;
				if (oi->flags & DROCE_OPF_READ)
					st->read_rereq++;
			} else
				f->next_psn = droce_psn_add(p->psn, span);
		}
		return;
	}
	if (src < 8)
		st->per_node_resp[src]++;
	if (oi->flags & DROCE_OPF_READ) {
		st->read_resp++;
		if (!(fate & (SIM_FATE_LOST | SIM_FATE_NOROUTE | SIM_FATE_CORRUPT)))
			st->read_resp_rx++;
	}
	if (p->opcode == DROCE_OP_RC_ATOMIC_ACKNOWLEDGE)
		st->atomic_acks++;
	if (oi->hdrs & H_AETH) {
		struct sim_trace_flow *f =
			flow_get(tr, 1u << 31 | (uint32_t)src << 24 | p->dqpn, p->psn);

		/* IBTA 9.7.5.2.1 table 43: the top three syndrome bits give the kind. */
		switch (p->aeth_syn >> 5) {
		case 0:
			if (p->opcode == DROCE_OP_RC_ACKNOWLEDGE)
				st->acks++;
			if (f != NULL && f->nak_open && !droce_psn_lt(p->psn, f->nak_psn))
				f->nak_open = false;
			break;
		case 1:
			st->rnr_naks++;
			break;
		case 3:
			st->naks++;
			if ((p->aeth_syn & 0x1F) < 4)
				st->nak_code[p->aeth_syn & 0x1F]++;
			/* A second sequence NAK with no ACK since the first: a requester that
			 * ignores it until an ACK (rxe) waits for its timeout. */
			if (p->aeth_syn == (DROCE_AETH_TYPE_NAK | DROCE_NAK_PSN_SEQ_ERR) &&
			    f != NULL) {
				if (f->nak_open)
					st->seq_nak_unacked++;
				f->nak_open = true;
				f->nak_psn = p->psn;
			}
			break;
		default:
			break;
		}
	}
}

void
sim_trace_hook(void *arg, unsigned int src, unsigned int dst, const uint8_t *frame, uint32_t len,
	       unsigned int fate, uint64_t now, uint64_t arrive)
{
	struct sim_trace *tr = arg;
	struct droce_pkt p;
	enum droce_drop d;

	tr->st.frames++;
	tr->st.digest = fnv1a(tr->st.digest, (const uint8_t *)&len, sizeof(len));
	tr->st.digest = fnv1a(tr->st.digest, frame, len);
	if (tr->pcap != NULL) {
		const uint32_t rec[4] = { (uint32_t)(now / 1000000000ull),
					  (uint32_t)(now % 1000000000ull / 1000), len, len };

		fwrite(rec, sizeof(rec), 1, tr->pcap);
		fwrite(frame, len, 1, tr->pcap);
	}
	memset(&p, 0, sizeof(p));
	d = droce_parse(frame, len, &p, DROCE_PARSE_NO_ICRC);
	if (d != DROCE_DROP_NONE)
		tr->st.unparsable++;
	else
		count(tr, src, &p, fate);
	if (!tr->verbose)
		return;
	fprintf(tr->out, "%12.3fus n%u->n%u ", (double)now / 1000.0, src, dst);
	if (d != DROCE_DROP_NONE) {
		fprintf(tr->out, "unparsable (%s) len=%u", droce_drop_name(d), len);
	} else {
		fprintf(tr->out, "%-34s qp=0x%06x psn=0x%06x%s len=%u pay=%u",
			droce_opcode_name(p.opcode), p.dqpn, p.psn, p.ackreq ? " A" : "", len,
			p.pay_len);
		if (droce_opcode_info(p.opcode)->hdrs & H_AETH)
			fprintf(tr->out, " syn=0x%02x msn=%u", p.aeth_syn, p.aeth_msn);
		if (droce_opcode_info(p.opcode)->hdrs & H_RETH)
			fprintf(tr->out, " va=0x%llx rkey=0x%x dlen=%u",
				(unsigned long long)p.reth_va, p.reth_rkey, p.reth_len);
	}
	if (fate & SIM_FATE_NOROUTE)
		fprintf(tr->out, " [NO ROUTE]");
	if (fate & SIM_FATE_LOST)
		fprintf(tr->out, " [LOST]");
	if (fate & SIM_FATE_DUP)
		fprintf(tr->out, " [DUP]");
	if (fate & SIM_FATE_CORRUPT)
		fprintf(tr->out, " [CORRUPT]");
	if (fate & SIM_FATE_CE)
		fprintf(tr->out, " [CE]");
	if (fate & SIM_FATE_REORDER)
		fprintf(tr->out, " [REORDER]");
	if (!(fate & (SIM_FATE_LOST | SIM_FATE_NOROUTE)))
		fprintf(tr->out, " arrive=%.3fus", (double)arrive / 1000.0);
	fputc('\n', tr->out);
}
