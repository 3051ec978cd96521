/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poll loop: Rx burst -> classify -> engine / neighbours / exception, closures from other
 * threads, engine timers and transmit, batched Tx; idle back-off so a loop never starves a core.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>
#include <rte_random.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_rt_priv.h"

uint64_t
droce_rt_clock(const struct droce_rt *rt)
{
	return (uint64_t)(((unsigned __int128)(rte_rdtsc() - rt->tsc_base) * rt->ns_mult) >> 32);
}

unsigned int
droce_rt_flush(struct droce_rt *rt)
{
	unsigned int i;
	uint16_t sent;

	if (rt->ntx == 0)
		return 0;
	sent = rte_eth_tx_burst(rt->port.port_id, 0, rt->txb, (uint16_t)rt->ntx);
	for (i = 0; i < sent; i++)
		rt->st.tx_bytes += rte_pktmbuf_pkt_len(rt->txb[i]);
	rt->st.tx_pkts += sent;
	/* Unsent frames stay queued in order: the next flush retries them; meanwhile tx_alloc
	 * refuses, which makes the engine hold its work (backpressure, not loss). */
	if (sent < rt->ntx)
		memmove(rt->txb, rt->txb + sent, (rt->ntx - sent) * sizeof(rt->txb[0]));
	rt->ntx -= sent;
	return sent;
}

/* A batch slot for one more buffer, counting those handed out and not yet sent (the engine
 * may allocate several before sending them). */
static bool
tx_room(struct droce_rt *rt)
{
	if (rt->ntx + rt->tx_out < rt->cfg.burst)
		return true;
	droce_rt_flush(rt);
	if (rt->ntx + rt->tx_out < rt->cfg.burst)
		return true;
	rt->st.tx_batch_full++;
	return false;
}

static uint8_t *
rt_tx_alloc(void *ctx, uint32_t len, void **cookie)
{
	struct droce_rt *rt = ctx;
	struct rte_mbuf *m;

	if (len > rt->port.max_frame) {
		rt->st.tx_too_long++;
		return NULL;
	}
	if (!tx_room(rt))
		return NULL;
	m = rte_pktmbuf_alloc(rt->port.mp);
	if (m == NULL) {
		rt->st.tx_alloc_fail++;
		return NULL;
	}
	rt->tx_out++;
	*cookie = m;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

static void
rt_tx_send(void *ctx, void *cookie, uint32_t len)
{
	struct droce_rt *rt = ctx;
	struct rte_mbuf *m = cookie;

	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	if (rt->cap != NULL)
		droce_rt_capture_frame(rt, rte_pktmbuf_mtod(m, const uint8_t *), len, len);
	/* tx_alloc reserved this slot. */
	rt->tx_out--;
	rt->txb[rt->ntx++] = m;
	if (rt->ntx == rt->cfg.burst)
		droce_rt_flush(rt);
}

static uint64_t
rt_rand64(void *ctx)
{
	(void)ctx;
	return rte_rand();
}

int
droce_rt_tx_copy(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct droce_rt *rt = ctx;
	void *cookie;
	uint8_t *buf = rt_tx_alloc(rt, len, &cookie);

	if (buf == NULL)
		return -ENOBUFS;
	memcpy(buf, frame, len);
	rt_tx_send(rt, cookie, len);
	return 0;
}

void
droce_rt_io_init(struct droce_rt *rt, struct droce_io *io, struct droce_neigh_ops *nops)
{
	io->tx_alloc = rt_tx_alloc;
	io->tx_send = rt_tx_send;
	io->rand64 = rt_rand64;
	io->ctx = rt;
	nops->tx = droce_rt_tx_copy;
	nops->ctx = rt;
}

static void
exception(struct droce_rt *rt, struct rte_mbuf *m, enum droce_rt_drop why)
{
	if (rt->exc != NULL && why != DROCE_RT_DROP_SHORT && why != DROCE_RT_DROP_NOT_FOR_US) {
		if (rte_ring_sp_enqueue(rt->exc, m) == 0) {
			rt->st.exception++;
			return;
		}
		why = DROCE_RT_DROP_EXC_FULL;
	}
	rt->st.drop[why]++;
	rte_pktmbuf_free(m);
}

/* One Rx burst of one queue; RoCE frames go to the engine in one call. */
static unsigned int
rx_queue(struct droce_rt *rt, uint16_t q)
{
	struct rte_mbuf *pkts[DROCE_RT_BURST_MAX], *roce[DROCE_RT_BURST_MAX];
	const uint8_t *frames[DROCE_RT_BURST_MAX];
	uint32_t lens[DROCE_RT_BURST_MAX];
	unsigned int nroce = 0, i;
	enum droce_rt_drop why;
	struct rte_mbuf *m;
	uint16_t n;
	uint8_t *p;
	uint32_t len;

	n = rte_eth_rx_burst(rt->port.port_id, q, pkts, (uint16_t)rt->cfg.burst);
	for (i = 0; i < n; i++) {
		m = pkts[i];
		rt->st.rx_pkts++;
		rt->st.rx_bytes += rte_pktmbuf_pkt_len(m);
		if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
			rt->st.drop[DROCE_RT_DROP_MULTISEG]++;
			rte_pktmbuf_free(m);
			continue;
		}
		p = rte_pktmbuf_mtod(m, uint8_t *);
		len = rte_pktmbuf_data_len(m);
		if (rt->cap != NULL)
			droce_rt_capture_frame(rt, p, len, rte_pktmbuf_pkt_len(m));
		switch (droce_rt_classify(p, len, rt->port.mac, &why)) {
		case DROCE_RT_CLS_ROCE:
			if (rt->dev == NULL) {
				exception(rt, m, DROCE_RT_DROP_NO_DEVICE);
				break;
			}
			roce[nroce] = m;
			frames[nroce] = p;
			lens[nroce++] = len;
			break;
		case DROCE_RT_CLS_NEIGH:
			rt->st.rx_neigh++;
			if (droce_neigh_input(&rt->neigh, p, len, rt->now) != 0)
				rt->st.drop[DROCE_RT_DROP_NEIGH_BAD]++;
			rt->neigh_deadline = droce_neigh_next_deadline(&rt->neigh);
			rte_pktmbuf_free(m);
			break;
		default:
			exception(rt, m, why);
			break;
		}
	}
	if (nroce > 0) {
		rt->st.rx_roce += nroce;
		droce_dev_rx_burst(rt->dev, frames, lens, nroce, rt->now);
		rte_pktmbuf_free_bulk(roce, nroce);
	}
	return n;
}

static unsigned int
drain_calls(struct droce_rt *rt)
{
	void *reqs[16];
	struct droce_rt_call_req *r;
	unsigned int n, i;

	n = rte_ring_sc_dequeue_burst(rt->calls, reqs, 16, NULL);
	for (i = 0; i < n; i++) {
		r = reqs[i];
		r->rc = r->fn(rt, r->arg);
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	}
	rt->st.calls += n;
	return n;
}

unsigned int
droce_rt_iter(struct droce_rt *rt)
{
	unsigned int work = 0;
	bool up;
	uint16_t q;

	rt->now = droce_rt_clock(rt);
	rt->st.iterations++;
	for (q = 0; q < rt->port.nb_queues; q++)
		work += rx_queue(rt, q);
	if (rt->calls != NULL)
		work += drain_calls(rt);
	/* A telemetry read waits for a snapshot taken here, on the engine's thread. */
	if (__atomic_load_n(&rt->tel_req, __ATOMIC_RELAXED) != rt->tel_done) {
		droce_rt_telemetry_serve(rt);
		work++;
	}
	if (rt->now >= rt->neigh_deadline)
		rt->neigh_deadline = droce_neigh_timer(&rt->neigh, rt->now);
	if (rt->now >= rt->next_link_check) {
		rt->next_link_check = rt->now + DROCE_RT_LINK_CHECK_NS;
		up = droce_rt_port_link_up(&rt->port);
		if (up && !rt->link_up) {
			/* A peer (memif) or cable came: tell it who we are. */
			rt->st.link_up++;
			droce_neigh_announce(&rt->neigh);
			work++;
		}
		__atomic_store_n(&rt->link_up, up, __ATOMIC_RELAXED);
	}
	if (rt->dev != NULL && droce_dev_next_deadline(rt->dev) <= rt->now)
		work += droce_dev_process(rt->dev, rt->now, rt->cfg.burst);
	/* Only frames that left count as work: a PMD refusing everything (link down) must not
	 * keep the loop from backing off. */
	work += droce_rt_flush(rt);
	return work;
}

void
droce_rt_backoff(struct droce_rt *rt, unsigned int work)
{
	uint64_t deadline, now, wait;
	struct timespec ts;
	uint32_t seq;

	if (work != 0) {
		rt->idle = 0;
		return;
	}
	if (++rt->idle < rt->cfg.idle_spins) {
		rte_pause();
		return;
	}
	deadline = rt->next_link_check;
	if (rt->neigh_deadline < deadline)
		deadline = rt->neigh_deadline;
	if (rt->dev != NULL && droce_dev_next_deadline(rt->dev) < deadline)
		deadline = droce_dev_next_deadline(rt->dev);
	now = droce_rt_clock(rt);
	if (deadline <= now)
		return;
	wait = deadline - now;
	if (wait > (uint64_t)rt->cfg.idle_sleep_us * 1000)
		wait = (uint64_t)rt->cfg.idle_sleep_us * 1000;
	/* Below a few microseconds a sleep overshoots the deadline: give the core away once. */
	if (wait < 5000) {
		rt->st.idle_yields++;
		sched_yield();
		return;
	}
	rt->st.idle_sleeps++;
	ts.tv_sec = (time_t)(wait / 1000000000u);
	ts.tv_nsec = (long)(wait % 1000000000u);
	if (!rt->on_lcore) {
		nanosleep(&ts, NULL);
		return;
	}
	/* Lcore mode: sleep on a futex that droce_rt_call() bumps, so a closure does not wait
	 * for the sleep to end. Announce the sleep, then look at the ring once more: a caller
	 * that enqueued before seeing `sleeping` is caught here, one after it wakes us. */
	seq = __atomic_load_n(&rt->wake_seq, __ATOMIC_ACQUIRE);
	__atomic_store_n(&rt->sleeping, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rte_ring_empty(rt->calls))
		syscall(SYS_futex, &rt->wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
	__atomic_store_n(&rt->sleeping, 0, __ATOMIC_RELAXED);
}

void
droce_rt_wake(struct droce_rt *rt)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&rt->sleeping, __ATOMIC_SEQ_CST))
		return;
	__atomic_fetch_add(&rt->wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &rt->wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
