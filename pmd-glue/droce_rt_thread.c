/* SPDX-License-Identifier: BSD-3-Clause */
/* Threading: the poll lcore (start/stop), inline progress (poll, run_until), closures (call). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "droce_ackpol.h"
#include "droce_rt_priv.h"

static int
lcore_main(void *arg)
{
	struct droce_rt_shard *s = arg;
	unsigned int work;

	/* Idle sleeps are bounded by the next timer: keep the kernel's 50 us slack off them. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	s->on_lcore = true;
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		work = droce_rt_shard_iter(s);
		droce_rt_shard_backoff(s->rt, s, work);
	}
	droce_rt_shard_iter(s); /* run closures enqueued before the stop */
	s->on_lcore = false;
	return 0;
}

/* Stop shard 0 first: its telemetry snapshot may wait on the others, never the reverse. */
static void
stop_shards(struct droce_rt *rt)
{
	unsigned int i;

	for (i = 0; i < rt->nb_shards; i++) {
		if (!rt->sh[i].launched)
			continue;
		__atomic_store_n(&rt->sh[i].stop, 1, __ATOMIC_RELEASE);
		droce_rt_shard_wake(&rt->sh[i]);
		rte_eal_wait_lcore(rt->sh[i].lcore);
		__atomic_store_n(&rt->sh[i].launched, false, __ATOMIC_RELEASE);
	}
}

int
droce_rt_start(struct droce_rt *rt)
{
	unsigned int i;
	int rc;

	if (rt->started)
		return -EALREADY;
	if (rt->cfg.nb_lcores < rt->nb_shards + 1 || rt->sh[0].lcore == rte_get_main_lcore()) {
		snprintf(rt->err, sizeof(rt->err),
			 "no poll lcore for each of %u shard(s): configure "
			 "%u lcores (DROCE_LCORES=0-%u) or drive the loop inline with "
			 "droce_rt_poll()",
			 rt->nb_shards, rt->nb_shards + 1, rt->nb_shards);
		return -ENOTSUP;
	}
	/* Shard 0 last: its telemetry snapshots call into the others, which must be running (a
	 * call goes to a shard's ring once it is marked launched). */
	for (i = rt->nb_shards; i-- > 0;) {
		__atomic_store_n(&rt->sh[i].stop, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&rt->sh[i].launched, true, __ATOMIC_RELEASE);
		rc = rte_eal_remote_launch(lcore_main, &rt->sh[i], rt->sh[i].lcore);
		if (rc != 0) {
			__atomic_store_n(&rt->sh[i].launched, false, __ATOMIC_RELEASE);
			snprintf(rt->err, sizeof(rt->err),
				 "cannot launch the poll loop of shard %u "
				 "on lcore %u (%s): is it among EAL's lcores (DROCE_LCORES, -l or "
				 "--lcores in DROCE_EAL)?",
				 i, rt->sh[i].lcore, strerror(-rc));
			stop_shards(rt);
			return rc;
		}
	}
	rt->started = true;
	return 0;
}

int
droce_rt_stop(struct droce_rt *rt)
{
	if (!rt->started)
		return 0;
	stop_shards(rt);
	rt->started = false;
	return 0;
}

unsigned int
droce_rt_poll(struct droce_rt *rt)
{
	if (rt->started)
		return 0;
	return droce_rt_iter(rt);
}

unsigned int
droce_rt_poll_hold(struct droce_rt *rt, unsigned int *held)
{
	unsigned int work, i;

	*held = 0;
	if (rt->started)
		return 0;
	rt->ack_hold = true;
	work = droce_rt_iter(rt);
	rt->ack_hold = false;
	for (i = 0; i < rt->nb_shards; i++)
		if (rt->sh[i].dev != NULL)
			*held += droce_dev_acks_held(rt->sh[i].dev);
	return work;
}

/* Inline: what the engine holds for the application goes now (it has the thread back). */
static void
release_held(struct droce_rt *rt)
{
	struct droce_rt_shard *s;
	unsigned int i;

	for (i = 0; i < rt->nb_shards; i++) {
		s = &rt->sh[i];
		if (s->dev != NULL) {
			droce_dev_ack_hold(s->dev, false);
			if (droce_dev_next_deadline(s->dev) <= s->now)
				droce_dev_process(s->dev, s->now, rt->cfg.burst);
		}
		droce_rt_flush(s);
	}
}

unsigned int
droce_rt_nb_shards(const struct droce_rt *rt)
{
	return rt->nb_shards;
}

struct droce_dev *
droce_rt_shard_dev(struct droce_rt *rt, unsigned int shard)
{
	return shard < rt->nb_shards ? rt->sh[shard].dev : NULL;
}

int
droce_rt_call_shard(struct droce_rt *rt, unsigned int shard,
		    int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	struct droce_rt_call_req req = { .fn = fn, .arg = arg };
	struct droce_rt_shard *s;
	unsigned int spins = 0;

	if (shard >= rt->nb_shards)
		return -EINVAL;
	s = &rt->sh[shard];
	if (!__atomic_load_n(&s->launched, __ATOMIC_ACQUIRE) || rte_lcore_id() == s->lcore) {
		droce_rt_shard_clock(s);
		return fn(rt, arg);
	}
	while (rte_ring_mp_enqueue(s->calls, &req) != 0)
		sched_yield();
	droce_rt_shard_wake(s);
	/* Spin briefly (the loop may be busy), then yield: the poll lcore may share our core. */
	while (!__atomic_load_n(&req.done, __ATOMIC_ACQUIRE)) {
		if (++spins < 256)
			rte_pause();
		else
			sched_yield();
	}
	return req.rc;
}

int
droce_rt_call(struct droce_rt *rt, int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	return droce_rt_call_shard(rt, 0, fn, arg);
}

int
droce_rt_run_until(struct droce_rt *rt, bool (*cond)(void *arg), void *arg, uint32_t timeout_ms)
{
	uint64_t end = droce_rt_clock(rt) + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = { 0, 20000 };
	unsigned int checks = 0, work, held;
	int rc = 0;

	while (!cond(arg)) {
		/* Lcore mode: ask again at once for idle_spins checks (yielding the core between
		 * them), then every 20 us so a cond that calls into the device does not keep the
		 * loop busy for long. Inline: an iteration's frames wait for cond (the
		 * application's step) and leave with what it posts, at the next iteration; the
		 * iteration's clock reading (shard 0's) serves the timeout. */
		if (!rt->started) {
			work = droce_rt_poll_hold(rt, &held);
			droce_rt_backoff(rt, work);
			if (rt->sh[0].now >= end) {
				rc = -ETIMEDOUT;
				break;
			}
			continue;
		}
		if (droce_rt_clock(rt) >= end) {
			rc = -ETIMEDOUT;
			break;
		}
		if (++checks < rt->cfg.idle_spins)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
	/* Nothing stays held once the application has the thread back. */
	if (!rt->started)
		release_held(rt);
	return rc;
}
