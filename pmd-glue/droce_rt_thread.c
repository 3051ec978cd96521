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
#include <rte_pause.h>
#include <rte_ring.h>

#include "droce_rt_priv.h"

static int
lcore_main(void *arg)
{
	struct droce_rt *rt = arg;
	unsigned int work;

	/* Idle sleeps are bounded by the next timer: keep the kernel's 50 us slack off them. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	rt->on_lcore = true;
	while (!__atomic_load_n(&rt->stop, __ATOMIC_ACQUIRE)) {
		work = droce_rt_iter(rt);
		droce_rt_backoff(rt, work);
	}
	droce_rt_iter(rt);	/* run closures enqueued before the stop */
	rt->on_lcore = false;
	return 0;
}

int
droce_rt_start(struct droce_rt *rt)
{
	int rc;

	if (rt->started)
		return -EALREADY;
	if (rt->cfg.nb_lcores < 2 || rt->poll_lcore == rte_get_main_lcore()) {
		snprintf(rt->err, sizeof(rt->err), "no poll lcore: configure two lcores "
			 "(DROCE_LCORES=0,1) or drive the loop inline with droce_rt_poll()");
		return -ENOTSUP;
	}
	__atomic_store_n(&rt->stop, 0, __ATOMIC_RELEASE);
	rc = rte_eal_remote_launch(lcore_main, rt, rt->poll_lcore);
	if (rc != 0) {
		snprintf(rt->err, sizeof(rt->err), "cannot launch the poll loop on lcore %u (%s): "
			 "is it among EAL's lcores (DROCE_LCORES, -l in DROCE_EAL)?",
			 rt->poll_lcore, strerror(-rc));
		return rc;
	}
	rt->started = true;
	return 0;
}

int
droce_rt_stop(struct droce_rt *rt)
{
	if (!rt->started)
		return 0;
	__atomic_store_n(&rt->stop, 1, __ATOMIC_RELEASE);
	rte_eal_wait_lcore(rt->poll_lcore);
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

int
droce_rt_call(struct droce_rt *rt, int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	struct droce_rt_call_req req = { .fn = fn, .arg = arg };
	unsigned int spins = 0;

	if (!rt->started || rte_lcore_id() == rt->poll_lcore)
		return fn(rt, arg);
	while (rte_ring_mp_enqueue(rt->calls, &req) != 0)
		sched_yield();
	droce_rt_wake(rt);
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
droce_rt_run_until(struct droce_rt *rt, bool (*cond)(void *arg), void *arg, uint32_t timeout_ms)
{
	uint64_t end = droce_rt_clock(rt) + (uint64_t)timeout_ms * 1000000u;
	struct timespec ts = { 0, 20000 };
	unsigned int checks = 0;

	while (!cond(arg)) {
		if (droce_rt_clock(rt) >= end)
			return -ETIMEDOUT;
		/* Lcore mode: ask again at once for idle_spins checks (yielding the core between
		 * them), then every 20 us so a cond that calls into the device does not keep the
		 * loop busy for long. */
		if (!rt->started)
			droce_rt_backoff(rt, droce_rt_iter(rt));
		else if (++checks < rt->cfg.idle_spins)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
	return 0;
}
