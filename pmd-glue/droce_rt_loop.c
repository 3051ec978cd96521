/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poll loop: Rx burst -> classify -> engine / neighbours / exception, closures from other
 * threads, engine timers and transmit, batched Tx; idle back-off so a loop never starves a core.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
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

#include "droce_ackpol.h"
#include "droce_rt_guard.h"
#include "droce_rt_priv.h"
#include "droce_rt_vlan.h"

uint64_t
droce_rt_clock(const struct droce_rt *rt)
{
	return (uint64_t)(((unsigned __int128)(rte_rdtsc() - rt->tsc_base) * rt->ns_mult) >> 32);
}

unsigned int
droce_rt_flush(struct droce_rt_shard *s)
{
	unsigned int i;
	uint16_t sent;

	if (s->ntx == 0)
		return 0;
	if (unlikely(s->rt->port.guard)) {
		uint64_t faults = s->st.burst_faults;

		/* A memif client waiting for its server to come back: the frames wait too. */
		if (__atomic_load_n(&s->rt->port.stopped, __ATOMIC_RELAXED))
			return 0;
		sent = droce_rt_guard_tx(s->rt->port.port_id, (uint16_t)s->idx, s->txb,
					 (uint16_t)s->ntx, &s->st.burst_faults);
		if (s->st.burst_faults != faults) {
			/* The peer left mid-burst: the PMD freed some frames, the rest leak. */
			s->st.tx_lost_teardown += s->ntx;
			s->ntx = 0;
			return 0;
		}
	} else {
		sent = rte_eth_tx_burst(s->rt->port.port_id, (uint16_t)s->idx, s->txb,
					(uint16_t)s->ntx);
	}
	for (i = 0; i < sent; i++)
		s->st.tx_bytes += rte_pktmbuf_pkt_len(s->txb[i]);
	s->st.tx_pkts += sent;
	s->st.tx_bursts += sent != 0;
	/* Unsent frames stay queued in order: the next flush retries them; meanwhile tx_alloc
	 * refuses, which makes the engine hold its work (backpressure, not loss). */
	if (sent < s->ntx)
		memmove(s->txb, s->txb + sent, (s->ntx - sent) * sizeof(s->txb[0]));
	s->ntx -= sent;
	return sent;
}

/* A batch slot for one more buffer, counting those handed out and not yet sent (the engine
 * may allocate several before sending them). */
static bool
tx_room(struct droce_rt_shard *s)
{
	if (s->ntx + s->tx_out < s->rt->cfg.burst)
		return true;
	droce_rt_flush(s);
	if (s->ntx + s->tx_out < s->rt->cfg.burst)
		return true;
	s->st.tx_batch_full++;
	return false;
}

static uint8_t *
rt_tx_alloc(void *ctx, uint32_t len, void **cookie)
{
	struct droce_rt_shard *s = ctx;
	struct rte_mbuf *m;

	if (len > s->rt->port.max_frame) {
		s->st.tx_too_long++;
		return NULL;
	}
	if (!tx_room(s))
		return NULL;
	m = rte_pktmbuf_alloc(s->rt->port.mp);
	if (m == NULL) {
		s->st.tx_alloc_fail++;
		return NULL;
	}
	s->tx_out++;
	*cookie = m;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

static void
rt_tx_send(void *ctx, void *cookie, uint32_t len)
{
	struct droce_rt_shard *s = ctx;
	struct rte_mbuf *m = cookie;

	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	if (s->rt->cfg.vlan != 0)
		len = droce_rt_vlan_tx(m, &s->rt->cfg);
	if (s->rt->cap != NULL)
		droce_rt_capture_frame(s, rte_pktmbuf_mtod(m, const uint8_t *), len, len);
	/* tx_alloc reserved this slot. */
	s->tx_out--;
	s->txb[s->ntx++] = m;
	if (s->ntx == s->rt->cfg.burst)
		droce_rt_flush(s);
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
	struct droce_rt_shard *s = ctx;
	void *cookie;
	uint8_t *buf = rt_tx_alloc(s, len, &cookie);

	if (buf == NULL)
		return -ENOBUFS;
	memcpy(buf, frame, len);
	rt_tx_send(s, cookie, len);
	return 0;
}

void
droce_rt_io_init(struct droce_rt_shard *s, struct droce_io *io)
{
	io->tx_alloc = rt_tx_alloc;
	io->tx_send = rt_tx_send;
	io->rand64 = rt_rand64;
	io->ctx = s;
}

static void
exception(struct droce_rt_shard *s, struct rte_mbuf *m, enum droce_drop why)
{
	struct droce_rt *rt = s->rt;

	if (rt->exc != NULL && !droce_rt_drop_final(why)) {
		if (rte_ring_enqueue(rt->exc, m) == 0) {
			s->st.exception++;
			return;
		}
		why = DROCE_DROP_EXC_FULL;
	}
	s->st.drop[why]++;
	rte_pktmbuf_free(m);
}

/* Hand the frames gathered for other shards over; what a full ring refuses stays, in order,
 * for the next iteration. Returns the frames handed over. */
static unsigned int
steer_flush(struct droce_rt_shard *s)
{
	struct droce_rt *rt = s->rt;
	unsigned int i, done, work = 0;

	s->out_pending = false;
	for (i = 0; i < rt->nb_shards; i++) {
		if (s->nout[i] == 0)
			continue;
		done = rte_ring_mp_enqueue_burst(rt->sh[i].steer, (void **)s->out[i], s->nout[i],
						 NULL);
		s->st.steered += done;
		work += done;
		if (done > 0)
			droce_rt_shard_wake(&rt->sh[i]);
		if (done < s->nout[i]) {
			memmove(s->out[i], s->out[i] + done,
				(s->nout[i] - done) * sizeof(s->out[i][0]));
			s->out_pending = true;
		}
		s->nout[i] -= done;
	}
	return work;
}

/*
 * Dispatch frames: a RoCE frame to the engine of the shard its DestQP names, ARP/ND to shard 0,
 * the rest to the exception path or a named drop. Frames that came over the steering ring
 * (steered_in) are this shard's already and were counted and captured where they arrived.
 */
static void
dispatch(struct droce_rt_shard *s, struct rte_mbuf **pkts, unsigned int n, bool steered_in)
{
	struct droce_rt *rt = s->rt;
	struct rte_mbuf *roce[DROCE_RT_BURST_MAX];
	const uint8_t *frames[DROCE_RT_BURST_MAX];
	uint32_t lens[DROCE_RT_BURST_MAX];
	unsigned int nroce = 0, i, to;
	bool any_out = false;
	enum droce_drop why;
	struct rte_mbuf *m;
	uint32_t len, dqpn;
	uint8_t *p;

	for (i = 0; i < n; i++) {
		m = pkts[i];
		if (!steered_in) {
			s->st.rx_pkts++;
			s->st.rx_bytes += rte_pktmbuf_pkt_len(m);
			if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
				s->st.drop[DROCE_DROP_MULTISEG]++;
				rte_pktmbuf_free(m);
				continue;
			}
		}
		p = rte_pktmbuf_mtod(m, uint8_t *);
		len = rte_pktmbuf_data_len(m);
		if (!steered_in && rt->cap != NULL)
			droce_rt_capture_frame(s, p, len, rte_pktmbuf_pkt_len(m));
		switch (droce_rt_classify_vlan(p, len, rt->port.mac, (uint16_t)rt->cfg.vlan, &why,
					       &dqpn)) {
		case DROCE_RT_CLS_ROCE:
			to = droce_rt_qpn_shard(dqpn, rt->shard_bits, rt->nb_shards);
			if (to != s->idx) {
				s->out[to][s->nout[to]++] = m;
				any_out = true;
				break;
			}
			if (s->dev == NULL) {
				exception(s, m, DROCE_DROP_NO_DEVICE);
				break;
			}
			roce[nroce] = m;
			frames[nroce] = p;
			lens[nroce++] = len;
			break;
		case DROCE_RT_CLS_NEIGH:
			if (s->idx != 0) {
				s->out[0][s->nout[0]++] = m;
				any_out = true;
				break;
			}
			s->st.rx_neigh++;
			if (droce_neigh_input(&rt->neigh, p, len, s->now) != 0)
				s->st.drop[DROCE_DROP_NEIGH_BAD]++;
			rt->neigh_deadline = droce_neigh_next_deadline(&rt->neigh);
			rte_pktmbuf_free(m);
			break;
		default:
			exception(s, m, why);
			break;
		}
	}
	if (any_out)
		steer_flush(s);
	if (nroce > 0) {
		s->st.rx_roce += nroce;
		/* their ACKs and responses leave in the same call, held only as the policy says */
		droce_dev_rx_process(s->dev, frames, lens, nroce, s->now, rt->cfg.burst);
		rte_pktmbuf_free_bulk(roce, nroce);
	}
}

/* One Rx burst of one queue. */
static unsigned int
rx_queue(struct droce_rt_shard *s, uint16_t q)
{
	struct rte_mbuf *pkts[DROCE_RT_BURST_MAX];
	uint16_t n;

	if (unlikely(s->rt->port.guard)) {
		if (__atomic_load_n(&s->rt->port.stopped, __ATOMIC_RELAXED))
			return 0; /* a memif client between reconnects */
		n = droce_rt_guard_rx(s->rt->port.port_id, q, pkts, (uint16_t)s->rt->cfg.burst,
				      &s->st.burst_faults);
	} else {
		n = rte_eth_rx_burst(s->rt->port.port_id, q, pkts, (uint16_t)s->rt->cfg.burst);
	}
	if (n > 0)
		dispatch(s, pkts, n, false);
	return n;
}

/* Frames the other shards received for this one: as many bursts as there are producers, so
 * the ring drains as fast as the other shards' queues fill it. */
static unsigned int
rx_steered(struct droce_rt_shard *s)
{
	struct rte_mbuf *pkts[DROCE_RT_BURST_MAX];
	unsigned int n, i, work = 0;

	for (i = 1; i < s->rt->nb_shards + 1; i++) {
		n = rte_ring_sc_dequeue_burst(s->steer, (void **)pkts, s->rt->cfg.burst, NULL);
		if (n == 0)
			break;
		s->st.steered_in += n;
		dispatch(s, pkts, n, true);
		work += n;
	}
	return work;
}

/* A closure's verbs run at the time they are called, not at the last iteration's: the
 * completions they make (flushes) carry it (droce_wc.timestamp). */
void
droce_rt_shard_clock(struct droce_rt_shard *s)
{
	uint64_t now = droce_rt_clock(s->rt);

	if (now > s->now)
		s->now = now;
	if (s->dev != NULL)
		droce_dev_set_now(s->dev, s->now);
}

static unsigned int
drain_calls(struct droce_rt_shard *s)
{
	void *reqs[16];
	struct droce_rt_call_req *r;
	unsigned int n, i;

	n = rte_ring_sc_dequeue_burst(s->calls, reqs, 16, NULL);
	if (n != 0)
		droce_rt_shard_clock(s);
	for (i = 0; i < n; i++) {
		r = reqs[i];
		r->rc = r->fn(s->rt, r->arg);
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	}
	s->st.calls += n;
	return n;
}

/* Shard 0's extra duties: telemetry, neighbour timers, the link state. */
static unsigned int
shard0_duties(struct droce_rt_shard *s)
{
	struct droce_rt *rt = s->rt;
	unsigned int work = 0;
	bool up;

	/* A telemetry read waits for a snapshot taken here, on the engine's thread. */
	if (__atomic_load_n(&rt->tel_req, __ATOMIC_RELAXED) != rt->tel_done) {
		droce_rt_telemetry_serve(rt);
		work++;
	}
	if (s->now >= rt->neigh_deadline)
		rt->neigh_deadline = droce_neigh_timer(&rt->neigh, s->now);
	if (s->now >= rt->next_link_check) {
		rt->next_link_check = s->now + DROCE_RT_LINK_CHECK_NS;
		work += droce_rt_host_poll(s);
		up = droce_rt_port_link_up(&rt->port);
		if (up != rt->link_up) {
			/* Another peer may be behind the link now (a process restarted, with
			 * another MAC): nothing learnt of the last one, or of its absence, holds. */
			droce_neigh_flush(&rt->neigh);
			rt->next_reconnect = s->now + DROCE_RT_RECONNECT_NS;
		}
		if (up && !rt->link_up) {
			/* A peer (memif) or cable came: tell it who we are. */
			s->st.link_up++;
			droce_neigh_announce(&rt->neigh);
			work++;
		}
		if (!up && rt->link_up)
			s->st.link_down++;
		if (!up && rt->port.memif_client && s->now >= rt->next_reconnect) {
			/* Its server left: connect again, for the one that comes next. */
			rt->next_reconnect = s->now + DROCE_RT_RECONNECT_NS;
			if (droce_rt_port_reconnect(&rt->port) == 0)
				s->st.reconnects++;
			work++;
		}
		__atomic_store_n(&rt->link_up, up, __ATOMIC_RELAXED);
	}
	return work;
}

unsigned int
droce_rt_shard_iter(struct droce_rt_shard *s)
{
	struct droce_rt *rt = s->rt;
	unsigned int work = 0, rx = 0, calls = 0;
	uint64_t now;
	uint16_t q;

	now = droce_rt_clock(rt);
	/* The engine's time never goes back: threads taking turns at the loop (the verbs shim)
	 * read TSCs that a VM does not keep in step across CPUs. */
	if (now > s->now)
		s->now = now;
	else
		s->st.clock_behind++;
	s->st.iterations++;
	/* Work posted since the last iteration (an inline application's step, a closure) goes
	 * out before the Rx poll: a ping-pong's answer does not wait behind an empty burst. The
	 * application had its turn: the ACKs the engine held for it go too, in the order its
	 * policy says (droce_ackpol.h); those of this iteration's Rx may wait for the next turn
	 * when an inline caller holds (droce_rt_poll_hold). */
	if (s->dev != NULL) {
		droce_dev_ack_hold(s->dev, false);
		if (droce_dev_next_deadline(s->dev) <= s->now)
			work += droce_dev_process(s->dev, s->now, rt->cfg.burst);
		droce_dev_ack_hold(s->dev, rt->ack_hold);
	}
	work += droce_rt_flush(s);
	/* Room for a whole burst per target (Rx is polled only with nothing held back). */
	if (s->out_pending)
		work += steer_flush(s);
	if (s->out_pending)
		s->st.steer_held++;
	else
		for (q = (uint16_t)s->idx; q < rt->port.nb_queues && !s->out_pending;
		     q = (uint16_t)(q + rt->nb_shards))
			rx += rx_queue(s, q);
	if (rt->nb_shards > 1)
		rx += rx_steered(s);
	if (s->calls != NULL)
		calls = drain_calls(s);
	work += rx + calls;
	if (s->idx == 0)
		work += shard0_duties(s);
	else
		droce_rt_host_sync(s); /* shard 0 follows the interface's addresses */
	/* Received frames had their transmit turn in droce_dev_rx_process at this time; timers
	 * of an idle iteration and work a closure posted have theirs here. */
	if (s->dev != NULL && (rx == 0 || calls != 0) && droce_dev_next_deadline(s->dev) <= s->now)
		work += droce_dev_process(s->dev, s->now, rt->cfg.burst);
	/* Only frames that left count as work: a PMD refusing everything (link down) must not
	 * keep the loop from backing off. */
	work += droce_rt_flush(s);
	return work;
}

unsigned int
droce_rt_iter(struct droce_rt *rt)
{
	unsigned int work = 0, i;

	for (i = 0; i < rt->nb_shards; i++)
		work += droce_rt_shard_iter(&rt->sh[i]);
	return work;
}

static uint64_t
shard_deadline(const struct droce_rt_shard *s, uint64_t deadline)
{
	const struct droce_rt *rt = s->rt;

	if (s->idx == 0) {
		if (rt->next_link_check < deadline)
			deadline = rt->next_link_check;
		if (rt->neigh_deadline < deadline)
			deadline = rt->neigh_deadline;
	}
	if (s->dev != NULL && droce_dev_next_deadline(s->dev) < deadline)
		deadline = droce_dev_next_deadline(s->dev);
	return deadline;
}

static __thread bool slack_set;

void
droce_rt_shard_backoff(struct droce_rt *rt, struct droce_rt_shard *s, unsigned int work)
{
	unsigned int *idle = s != NULL ? &s->idle : &rt->idle, i;
	struct droce_rt_stats *st = s != NULL ? &s->st : &rt->sh[0].st;
	uint64_t deadline = UINT64_MAX, now, wait;
	struct timespec ts;
	uint32_t seq;

	if (work != 0) {
		*idle = 0;
		return;
	}
	if (++*idle < rt->cfg.idle_spins) {
		rte_pause();
		return;
	}
	if (s != NULL)
		deadline = shard_deadline(s, deadline);
	else
		for (i = 0; i < rt->nb_shards; i++)
			deadline = shard_deadline(&rt->sh[i], deadline);
	now = droce_rt_clock(rt);
	if (deadline <= now)
		return;
	wait = deadline - now;
	if (wait > (uint64_t)rt->cfg.idle_sleep_us * 1000)
		wait = (uint64_t)rt->cfg.idle_sleep_us * 1000;
	/* Below a few microseconds a sleep overshoots the deadline: give the core away once.
	 * So too while frames wait for another shard's ring: its lcore may need this core. */
	if (wait < 5000 || (s != NULL && s->out_pending)) {
		st->idle_yields++;
		sched_yield();
		return;
	}
	st->idle_sleeps++;
	/* Linux lets a normal thread's sleep end up to 50 us late (its timer slack): paced
	 * traffic (a congestion control's next send) would lose that much each time. 1 us,
	 * set once per thread that sleeps here. */
	if (!slack_set) {
		prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
		slack_set = true;
	}
	ts.tv_sec = (time_t)(wait / 1000000000u);
	ts.tv_nsec = (long)(wait % 1000000000u);
	if (s == NULL || !s->on_lcore) {
		nanosleep(&ts, NULL);
		return;
	}
	/* Lcore mode: sleep on a futex that droce_rt_call() (and a shard steering a frame here)
	 * bumps, so a closure does not wait for the sleep to end. Announce the sleep, then look
	 * at the rings once more: a producer that enqueued before seeing `sleeping` is caught
	 * here, one after it wakes us. */
	seq = __atomic_load_n(&s->wake_seq, __ATOMIC_ACQUIRE);
	__atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rte_ring_empty(s->calls) && (s->steer == NULL || rte_ring_empty(s->steer)) &&
	    (s->idx != 0 || __atomic_load_n(&rt->tel_req, __ATOMIC_RELAXED) == rt->tel_done))
		syscall(SYS_futex, &s->wake_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
	__atomic_store_n(&s->sleeping, 0, __ATOMIC_RELAXED);
}

void
droce_rt_backoff(struct droce_rt *rt, unsigned int work)
{
	droce_rt_shard_backoff(rt, NULL, work);
}

void
droce_rt_shard_wake(struct droce_rt_shard *s)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&s->sleeping, __ATOMIC_SEQ_CST))
		return;
	__atomic_fetch_add(&s->wake_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void
droce_rt_wake(struct droce_rt *rt)
{
	droce_rt_shard_wake(&rt->sh[0]);
}
