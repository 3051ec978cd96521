/* SPDX-License-Identifier: BSD-3-Clause */
/* Ping-pong: the client sends one frame, waits for its echo, and keeps RTT samples. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "rawpp.h"

#define RX_BURST 32

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct_us(const uint64_t *v, uint64_t n, double q)
{
	uint64_t i = (uint64_t)(q * (double)n);

	return (double)v[i < n ? i : n - 1] / 1000.0;
}

/* Send one ping; retries while the ring is full, up to the echo timeout. */
static int
send_ping(struct droce_rawpp_ctx *c, uint64_t seq, uint64_t timeout)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(c->mp);
	uint64_t t0 = rte_rdtsc();

	if (m == NULL)
		return -ENOMEM;
	m->data_len = (uint16_t)(c->o.size - DROCE_RAWPP_FCS);
	m->pkt_len = m->data_len;
	*rte_pktmbuf_mtod_offset(m, uint8_t *, DROCE_RAWPP_OFF_TYPE) = DROCE_RAWPP_DATA;
	droce_rawpp_put64(m, DROCE_RAWPP_OFF_SEQ, seq);
	for (;;) {
		droce_rawpp_put64(m, DROCE_RAWPP_OFF_TS, rte_rdtsc());
		if (rte_eth_tx_burst(c->o.port, 0, &m, 1) == 1)
			return 0;
		if (rte_rdtsc() - t0 > timeout) {
			rte_pktmbuf_free(m);
			return -EAGAIN;
		}
	}
}

/* Wait for the echo of seq; returns its RTT in cycles, or 0 on timeout. */
static uint64_t
await_echo(struct droce_rawpp_ctx *c, uint64_t seq, uint64_t t_send, uint64_t timeout,
	   uint64_t *late, uint64_t *ce)
{
	struct rte_mbuf *pkts[RX_BURST];
	uint64_t now, rtt = 0;
	const uint8_t *p;
	uint32_t polls = 0;
	uint16_t nb, i;

	for (;;) {
		nb = rte_eth_rx_burst(c->o.port, 0, pkts, RX_BURST);
		now = rte_rdtsc();
		for (i = 0; i < nb; i++) {
			if (droce_rawpp_type_of(pkts[i]) != DROCE_RAWPP_ECHO) {
				rte_pktmbuf_free(pkts[i]);
				continue;
			}
			if (rtt == 0 && droce_rawpp_get64(pkts[i], DROCE_RAWPP_OFF_SEQ) == seq) {
				rtt = now - droce_rawpp_get64(pkts[i], DROCE_RAWPP_OFF_TS);
				rtt += rtt == 0;
				p = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
				*ce += p[DROCE_RAWPP_OFF_FLAGS] != 0;
			} else {
				(*late)++; /* an earlier ping's echo, or a duplicate */
			}
			rte_pktmbuf_free(pkts[i]);
		}
		if (rtt != 0 || now - t_send > timeout || *c->stop)
			return rtt;
		if (nb == 0)
			droce_rawpp_idle(&polls, c->o.idle_us);
	}
}

int
droce_rawpp_pingpong_client(struct droce_rawpp_ctx *c)
{
	const struct droce_rawpp_opts *o = &c->o;
	uint64_t n = o->iters != 0 ? o->iters : 1000000, total = n + o->warmup;
	uint64_t timeout = o->timeout_ns * c->hz / 1000000000ull;
	uint64_t t0 = rte_rdtsc(), deadline = t0 + o->duration_ns / 1000 * c->hz / 1000000;
	uint64_t sent = 0, recvd = 0, late = 0, ce = 0, tx_fail = 0, nsamp = 0;
	uint64_t seq, t_send, rtt, sum = 0, elapsed, *samp;

	samp = malloc(n * sizeof(*samp));
	if (samp == NULL)
		return -ENOMEM;
	for (seq = 1; seq <= total && !*c->stop && rte_rdtsc() < deadline; seq++) {
		if (send_ping(c, seq, timeout) != 0) {
			tx_fail++;
			continue;
		}
		t_send = rte_rdtsc();
		sent++;
		rtt = await_echo(c, seq, t_send, timeout, &late, &ce);
		if (rtt == 0)
			continue;
		recvd++;
		if (seq > o->warmup) {
			samp[nsamp] = rtt * 1000000000ull / c->hz;
			sum += samp[nsamp++];
		}
	}
	elapsed = rte_rdtsc() - t0;
	droce_rawpp_send_end(c, sent);
	printf("rawpp pingpong: size=%u sent=%" PRIu64 " received=%" PRIu64 " lost=%" PRIu64
	       " loss=%.2f%% late=%" PRIu64 " ce=%" PRIu64 " tx_fail=%" PRIu64 " elapsed_s=%.3f\n",
	       o->size, sent, recvd, sent - recvd,
	       sent != 0 ? 100.0 * (double)(sent - recvd) / (double)sent : 0.0, late, ce, tx_fail,
	       (double)elapsed / (double)c->hz);
	if (nsamp != 0) {
		qsort(samp, nsamp, sizeof(*samp), cmp_u64);
		printf("rawpp rtt_us: samples=%" PRIu64 " min=%.2f mean=%.2f p50=%.2f p90=%.2f"
		       " p99=%.2f p99.9=%.2f max=%.2f\n",
		       nsamp, (double)samp[0] / 1000.0, (double)sum / (double)nsamp / 1000.0,
		       pct_us(samp, nsamp, 0.5), pct_us(samp, nsamp, 0.9),
		       pct_us(samp, nsamp, 0.99), pct_us(samp, nsamp, 0.999),
		       (double)samp[nsamp - 1] / 1000.0);
	} else {
		printf("rawpp rtt_us: samples=0\n");
	}
	fflush(stdout);
	free(samp);
	return recvd != 0 ? 0 : -EIO;
}

/*
 * Turn a data frame into its echo: addresses swapped, the CE mark reported in the flags byte (as a
 * RoCE CNP would) and the reply sent as ECT(0) again. Returns 1 if the frame was CE-marked.
 */
static int
make_echo(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	int ce = (ip->type_of_service & 3) == 3;
	struct rte_ether_addr a;

	rte_ether_addr_copy(&eth->src_addr, &a);
	rte_ether_addr_copy(&eth->dst_addr, &eth->src_addr);
	rte_ether_addr_copy(&a, &eth->dst_addr);
	p[DROCE_RAWPP_OFF_FLAGS] = (uint8_t)ce;
	p[DROCE_RAWPP_OFF_TYPE] = DROCE_RAWPP_ECHO;
	if (ce) {
		ip->type_of_service &= (uint8_t)~1u;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	return ce;
}

/* Echo every data frame back, CE seen reported in the flags byte, until the end frame. */
int
droce_rawpp_pingpong_server(struct droce_rawpp_ctx *c)
{
	const struct droce_rawpp_opts *o = &c->o;
	uint64_t deadline = rte_rdtsc() + o->duration_ns / 1000 * c->hz / 1000000;
	uint64_t echoed = 0, ce = 0, other = 0, tx_fail = 0;
	struct rte_mbuf *pkts[RX_BURST], *tx[RX_BURST];
	uint32_t polls = 0;
	uint16_t nb, n, i, sent;
	bool end = false;

	while (!end && !*c->stop && rte_rdtsc() < deadline) {
		nb = rte_eth_rx_burst(o->port, 0, pkts, RX_BURST);
		if (nb == 0) {
			droce_rawpp_idle(&polls, o->idle_us);
			continue;
		}
		polls = 0;
		for (i = 0, n = 0; i < nb; i++) {
			switch (droce_rawpp_type_of(pkts[i])) {
			case DROCE_RAWPP_DATA:
				ce += make_echo(pkts[i]);
				tx[n++] = pkts[i];
				break;
			case DROCE_RAWPP_END:
				end = true;
				rte_pktmbuf_free(pkts[i]);
				break;
			default:
				other++;
				rte_pktmbuf_free(pkts[i]);
			}
		}
		sent = rte_eth_tx_burst(o->port, 0, tx, n);
		echoed += sent;
		for (i = sent; i < n; i++) {
			tx_fail++;
			rte_pktmbuf_free(tx[i]);
		}
	}
	printf("rawpp pingpong server: echoed=%" PRIu64 " ce=%" PRIu64 " other=%" PRIu64
	       " tx_fail=%" PRIu64 " end=%s\n",
	       echoed, ce, other, tx_fail, end ? "yes" : "timeout");
	fflush(stdout);
	return 0;
}
