/* SPDX-License-Identifier: BSD-3-Clause */
/* One-way throughput: the client streams numbered frames, the server counts them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include "rawpp.h"

#define MAX_BURST 512

/* Gbit/s counts frame bytes with the FCS (RFC 2544 sizes), not the preamble and gap. */
static void
report(const char *who, const struct droce_rawpp_ctx *c, uint64_t frames, uint64_t intervals,
       uint64_t bytes, uint64_t cycles, const char *extra)
{
	double s = (double)cycles / (double)c->hz;
	double pps = s > 0 ? (double)intervals / s : 0.0;
	double size = frames != 0 ? (double)bytes / (double)frames : 0.0;

	printf("rawpp tput %s: size=%.0f frames=%" PRIu64
	       " elapsed_s=%.3f Mpps=%.3f Gbit/s=%.3f%s\n",
	       who, size, frames, s, pps / 1e6, pps * size * 8 / 1e9, extra);
	fflush(stdout);
}

int
droce_rawpp_tput_client(struct droce_rawpp_ctx *c)
{
	const struct droce_rawpp_opts *o = &c->o;
	uint64_t total = o->iters != 0 ? o->iters : UINT64_MAX, seq = 0, sent = 0, full = 0;
	uint64_t t0 = rte_rdtsc(), deadline = t0 + o->duration_ns / 1000 * c->hz / 1000000, t1;
	uint16_t len = (uint16_t)(o->size - DROCE_RAWPP_FCS), have = 0, want, k, i;
	struct rte_mbuf *b[MAX_BURST];
	uint32_t loops = 0;
	char extra[64];

	while (sent < total && !*c->stop) {
		if ((++loops & 63) == 0 && rte_rdtsc() >= deadline)
			break;
		want = (uint16_t)RTE_MIN((uint64_t)o->burst, total - seq + have);
		if (want > have && rte_pktmbuf_alloc_bulk(c->mp, b + have, want - have) == 0) {
			/* Every tx mbuf holds the template already: set length and seq. */
			for (i = have; i < want; i++) {
				b[i]->data_len = len;
				b[i]->pkt_len = len;
				droce_rawpp_put64(b[i], DROCE_RAWPP_OFF_SEQ, seq++);
			}
			have = want;
		}
		k = rte_eth_tx_burst(o->port, 0, b, have);
		sent += k;
		if (k < have) {
			full++; /* the ring is full: keep the rest, in order, for the next try */
			memmove(b, b + k, (size_t)(have - k) * sizeof(*b));
		}
		have = (uint16_t)(have - k);
	}
	t1 = rte_rdtsc();
	for (i = 0; i < have; i++)
		rte_pktmbuf_free(b[i]);
	snprintf(extra, sizeof(extra), " ring_full=%" PRIu64, full);
	report("tx", c, sent, sent, sent * o->size, t1 - t0, extra);
	/* Let the receiver drain, then tell it how many frames were sent. */
	rte_delay_us_sleep(2000);
	droce_rawpp_send_end(c, sent);
	return sent != 0 ? 0 : -EIO;
}

int
droce_rawpp_tput_server(struct droce_rawpp_ctx *c)
{
	const struct droce_rawpp_opts *o = &c->o;
	uint64_t deadline = rte_rdtsc() + o->duration_ns / 1000 * c->hz / 1000000;
	uint64_t frames = 0, ce = 0, reordered = 0, expect = 0, first = 0, last = 0, now, seq;
	uint64_t client_sent = UINT64_MAX, bytes = 0;
	struct rte_mbuf *pkts[MAX_BURST];
	const struct rte_ipv4_hdr *ip;
	uint32_t polls = 0;
	uint16_t nb, i;
	char extra[160];

	while (client_sent == UINT64_MAX && !*c->stop) {
		nb = rte_eth_rx_burst(o->port, 0, pkts, (uint16_t)o->burst);
		now = rte_rdtsc();
		if (now >= deadline)
			break;
		if (nb == 0) {
			/* Sleep only before the first frame: in the stream it costs frames. */
			if (frames == 0)
				droce_rawpp_idle(&polls, o->idle_us);
			continue;
		}
		for (i = 0; i < nb; i++) {
			switch (droce_rawpp_type_of(pkts[i])) {
			case DROCE_RAWPP_DATA:
				if (frames++ == 0)
					first = now;
				last = now;
				bytes += rte_pktmbuf_pkt_len(pkts[i]) + DROCE_RAWPP_FCS;
				ip = rte_pktmbuf_mtod_offset(pkts[i], const struct rte_ipv4_hdr *,
							     DROCE_RAWPP_OFF_IP);
				ce += (ip->type_of_service & 3) == 3;
				seq = droce_rawpp_get64(pkts[i], DROCE_RAWPP_OFF_SEQ);
				if (seq < expect)
					reordered++;
				else
					expect = seq + 1;
				break;
			case DROCE_RAWPP_END:
				client_sent = droce_rawpp_get64(pkts[i], DROCE_RAWPP_OFF_SEQ);
				break;
			default:
				break;
			}
		}
		rte_pktmbuf_free_bulk(pkts, nb);
	}
	if (client_sent != UINT64_MAX)
		snprintf(extra, sizeof(extra),
			 " client_sent=%" PRIu64 " lost=%" PRId64 " ce=%" PRIu64
			 " reordered=%" PRIu64,
			 client_sent, (int64_t)(client_sent - frames), ce, reordered);
	else
		snprintf(extra, sizeof(extra),
			 " client_sent=unknown ce=%" PRIu64 " reordered=%" PRIu64, ce, reordered);
	/* The rate counts from the first to the last frame: start-up and the end wait excluded. */
	report("rx", c, frames, frames > 1 ? frames - 1 : 0, bytes, last - first, extra);
	return frames != 0 ? 0 : -EIO;
}
