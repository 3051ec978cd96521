/* SPDX-License-Identifier: BSD-3-Clause */
/* One frame through the stack's parser, plus what the tools need to report it. */
#include <stdbool.h>
#include <string.h>

#include "droce_icrc.h"
#include "droce_pcap.h"
#include "wire/droce_ipv4.h"

/*
 * Mirrors the check order of droce_parse() (stack/droce_parse.c): a parser reason added there
 * belongs here too. Reasons the engine appends (transport checks) never come from droce_parse().
 */
enum droce_pcap_stage
droce_pcap_stage_of(enum droce_drop reason)
{
	switch (reason) {
	case DROCE_DROP_ETH_SHORT:
		return DROCE_PCAP_ST_NONE;
	case DROCE_DROP_VLAN_SHORT:
		return DROCE_PCAP_ST_MAC;
	case DROCE_DROP_NOT_IP:
	case DROCE_DROP_IP_SHORT:
	case DROCE_DROP_IP_VERSION:
	case DROCE_DROP_IP_IHL:
	case DROCE_DROP_IP_LEN:
	case DROCE_DROP_IP_FRAG:
	case DROCE_DROP_IP_CSUM:
		return DROCE_PCAP_ST_L2;
	case DROCE_DROP_NOT_UDP:
		return DROCE_PCAP_ST_IP;
	case DROCE_DROP_UDP_SHORT:
		return DROCE_PCAP_ST_L4;
	case DROCE_DROP_NOT_ROCE_PORT:
	case DROCE_DROP_UDP_LEN:
		return DROCE_PCAP_ST_UDP;
	case DROCE_DROP_BTH_SHORT:
		return DROCE_PCAP_ST_BTHOFF;
	case DROCE_DROP_BTH_TVER:
	case DROCE_DROP_OPCODE:
	case DROCE_DROP_HDR_SHORT:
	case DROCE_DROP_PADCNT:
	case DROCE_DROP_PAYLOAD_LEN:
		return DROCE_PCAP_ST_BTH;
	case DROCE_DROP_ICRC: /* the last check: everything else was parsed */
	case DROCE_DROP_NONE:
		return DROCE_PCAP_ST_ALL;
	default:
		return DROCE_PCAP_ST_NONE;
	}
}

/* The IP header at l3 (its fixed part present: IP_LEN is checked after it) carries UDP. */
static bool
ip_is_udp(const uint8_t *f, uint16_t l3)
{
	const uint8_t *ip = f + l3;

	return (ip[0] >> 4) == 4 ? ip[9] == DROCE_IPPROTO_UDP : ip[6] == DROCE_IPPROTO_UDP;
}

void
droce_pcap_rec_parse(struct droce_pcap_rec *r, const struct droce_pcap_frame *f, uint64_t n,
		     struct timeval *first)
{
	const struct droce_pkt *p = &r->pkt;

	if (n == 1)
		*first = f->ts;
	r->n = n;
	r->ts = f->ts;
	r->rel_us = ((int64_t)f->ts.tv_sec - first->tv_sec) * 1000000 +
		    ((int64_t)f->ts.tv_usec - first->tv_usec);
	r->frame = f->data;
	r->caplen = f->caplen;
	r->wirelen = f->wirelen;
	memset(&r->pkt, 0, sizeof(r->pkt));
	r->reason = droce_parse(f->data, f->caplen, &r->pkt, 0);
	if (r->reason == DROCE_DROP_IP_LEN && !ip_is_udp(f->data, r->pkt.l3_off))
		/* a TCP segment larger than the capture's slot (GRO, TSO on the capturing side)
		 * arrives cut: not RoCEv2, and no fault of the wire's */
		r->reason = DROCE_DROP_NOT_UDP; /* its IP fields parsed all the same */
	r->stage = droce_pcap_stage_of(r->reason);
	r->cls = droce_drop_class(r->reason);
	if (r->reason == DROCE_DROP_NONE)
		r->icrc_ok = true;
	else if (r->reason == DROCE_DROP_ICRC)
		r->icrc_ok = false;
	else if (r->stage >= DROCE_PCAP_ST_BTH)
		/* A later check failed first; the ICRC is still worth knowing (IBTA A17.3.3). */
		r->icrc_ok = droce_icrc(f->data + p->l3_off,
					p->frame_len - DROCE_ICRC_LEN - p->l3_off) == p->icrc;
	else
		r->icrc_ok = false;
}
