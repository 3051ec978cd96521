/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared progress model (DROCE_SHIM_PROGRESS=shared, shim_engine.c picks it): an engine
 * lock says who drives the inline runtime. A verb takes it and runs one loop iteration whose
 * ACKs wait for its next one (held ACKs); a progress thread drives the loop whenever no verb
 * does, on its application's CPU and at real-time priority while the application uses verbs;
 * background threads hand their calls to whichever thread drives next (deferred calls).
 * verbs-shim/README.md ("Threading") says why each rule is there and what it measured.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "droce_rt.h"
#include "droce_shim.h"
#include "shim_progress.h"

enum {
	/* A verb drove the loop this recently: the application is in a poll loop and the
	 * progress thread keeps away, for twice as long each time it finds it still there
	 * (every wake-up takes the CPU from the application when they share it). Longer than
	 * a wake-up itself, which on a VM takes several microseconds from the application it
	 * preempts: at 5 us the thread took its own wake-up for the application's absence
	 * and kept polling. */
	SHIM_APP_ACTIVE_NS = 50 * 1000,
	SHIM_APP_NAP_MIN_NS = 5 * 1000,
	SHIM_APP_NAP_MAX_NS = 1000 * 1000,
	/* An idle progress thread naps this long (the application may spin on memory and
	 * wait for us: short naps, each a cheap wake-up that preempts it)... */
	SHIM_NAP_NS = 3 * 1000,
	/* At real-time priority a wake-up preempts at once, but each costs the CPU a few
	 * microseconds the application does not get: longer naps. */
	SHIM_RT_NAP_NS = 20 * 1000,
	/* Frames a verb's iteration held for the application's answer leave this late at
	 * most (the progress thread sends them when no verb has). */
	SHIM_HOLD_NS = 10 * 1000,
	/* ...and the progress thread holds ACKs only for an application that used verbs
	 * this recently (it may answer them). While it does, the thread checks for held
	 * ACKs it stopped sending at least this often (a shorter nap would wake it, and
	 * preempt the application, at every iteration of a receiver's poll loop). */
	SHIM_HOLD_APP_NS = 1000 * 1000,
	SHIM_HOLD_CHECK_NS = 100 * 1000,
	/* A deferred call runs in the next loop iteration anyone drives; after this long
	 * without one, its caller runs it (droce_shim_call_deferred). */
	SHIM_DEFER_NS = 2 * 1000 * 1000,
	SHIM_DEFER_NAP_NS = 20 * 1000,
	/* After work it keeps polling this long: traffic comes in bursts. */
	SHIM_SPIN_NS = 50 * 1000,
	/* ...and after this many empty rounds, longer ones (nothing moves: save the CPU). */
	SHIM_IDLE_ROUNDS = 20000,
	SHIM_LONG_NAP_NS = 50 * 1000,
};

static struct droce_rt *eng_rt; /* the runtime the shared model drives */
static uint32_t eng_lock;	/* 1 while a thread drives the runtime */
static uint32_t eng_waiting;	/* verbs spinning for the lock: the progress thread yields */
static uint64_t eng_app_ns;	/* when a verb last drove the loop (runtime clock) */
static uint64_t eng_held_ns;	/* when that left frames held for the next iteration; 0 none */
static int eng_app_cpu = -1;	/* the CPU that verb ran on (the progress thread follows it) */

/* A call for whichever thread drives the loop next (droce_shim_call_deferred). */
struct shim_deferred {
	int (*fn)(struct droce_rt *rt, void *arg);
	void *arg;
	int rc;
	uint32_t done;
};
static struct shim_deferred *eng_deferred;
static bool prog_running;
static uint32_t prog_stop;
static pthread_t prog_tid;

void
droce_shim_eng_enter(void)
{
	unsigned int spins = 0;

	if (!__atomic_exchange_n(&eng_lock, 1, __ATOMIC_ACQUIRE))
		return;
	__atomic_fetch_add(&eng_waiting, 1, __ATOMIC_RELAXED);
	do {
		while (__atomic_load_n(&eng_lock, __ATOMIC_RELAXED)) {
			/* the holder may be descheduled on our core: give it the CPU */
			if (++spins < 256)
				rte_pause();
			else
				sched_yield();
		}
	} while (__atomic_exchange_n(&eng_lock, 1, __ATOMIC_ACQUIRE));
	__atomic_fetch_sub(&eng_waiting, 1, __ATOMIC_RELAXED);
}

void
droce_shim_eng_leave(void)
{
	__atomic_store_n(&eng_lock, 0, __ATOMIC_RELEASE);
}

/*
 * Whether this thread may run the loop: DPDK's data path expects an lcore id (net_af_xdp stops
 * receiving for good when its queues are polled from a thread without one), so a thread that
 * has none registers as a non-EAL lcore on first use; if none is left it leaves the loop to
 * the progress thread.
 */
static __thread int eng_thread_ok; /* 0 not known yet, 1 yes, -1 no */

bool
droce_shim_eng_can_poll(void)
{
	if (eng_thread_ok == 0)
		eng_thread_ok =
			rte_lcore_id() != LCORE_ID_ANY || rte_thread_register() == 0 ? 1 : -1;
	return eng_thread_ok > 0;
}

/*
 * One loop iteration on behalf of the application (engine lock held). The engine holds its
 * ACKs (only ACKs: data never waits) for the next iteration, which sends them first: an
 * application answering what it just polled (ib_write_lat: the peer's WRITE arrives while it
 * polls for its own completion, and it answers at once) sends the ACK and the answer in one
 * burst, so the peer, polling its CQ, gets its completion and the answer together and
 * answers in turn without leaving the verbs for a spin on memory that only the progress
 * thread could end. The progress thread sends what is held when no verb has for
 * SHIM_HOLD_NS. hold false: send everything now.
 */
/* Engine lock held: run the deferred call, if one waits. */
static inline void
eng_run_deferred(void)
{
	struct shim_deferred *d;

	if (__atomic_load_n(&eng_deferred, __ATOMIC_RELAXED) == NULL)
		return;
	d = __atomic_exchange_n(&eng_deferred, NULL, __ATOMIC_ACQUIRE);
	if (d == NULL)
		return;
	d->rc = d->fn(eng_rt, d->arg);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
}

void
droce_shim_eng_poll(bool hold)
{
	unsigned int held = 0;
	uint64_t now;

	if (!droce_shim_eng_can_poll())
		return;
	if (hold)
		droce_rt_poll_hold(eng_rt, &held);
	else
		droce_rt_poll(eng_rt);
	now = droce_rt_now(eng_rt);
	__atomic_store_n(&eng_held_ns, held != 0 ? now : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&eng_app_ns, now, __ATOMIC_RELAXED);
	__atomic_store_n(&eng_app_cpu, sched_getcpu(), __ATOMIC_RELAXED);
	eng_run_deferred();
}

void
droce_shim_nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/*
 * An application that waits by spinning on memory (ib_write_lat) keeps its CPU busy: a progress
 * thread of the same priority waking from its nap then waits for the scheduler's slice to end
 * (milliseconds) before it can poll. The lowest real-time priority lets it in at once. It then
 * never spins (it would keep the application from the CPU): it naps whenever a round finds
 * nothing, and the kernel's real-time throttling bounds it anyway. Without the privilege
 * (CAP_SYS_NICE) it stays a normal thread; DROCE_SHIM_RT=0 keeps it one.
 *
 * Only while the application uses verbs (within SHIM_HOLD_APP_NS): for a passive side (a
 * server that sleeps while its peer WRITEs) the thread polls flat out, and as a real-time
 * thread it stays on the CPU it woke on (the kernel does not move a waking real-time thread
 * off a CPU that runs a normal one) even when that is where the peer's application runs:
 * that program got the CPU only while we napped (ib_write_bw 7-15 Gbit/s instead of ~50). As
 * a normal thread the scheduler spreads the two.
 */
static bool
prog_rt_allowed(void)
{
	const char *v = getenv("DROCE_SHIM_RT");

	return v == NULL || strcmp(v, "0") != 0;
}

/* Real-time (SCHED_FIFO 1) or normal; false when the system refuses real-time. */
static bool
prog_priority(bool rt)
{
	struct sched_param sp = { .sched_priority = rt ? 1 : 0 };

	return pthread_setschedparam(pthread_self(), rt ? SCHED_FIFO : SCHED_OTHER, &sp) == 0 && rt;
}

/*
 * While the application uses verbs, the progress thread runs on the CPU of the thread that last
 * drove the loop. A wake-up then preempts only its own application, which, when it needs us,
 * spins on memory and can do nothing else; left to float, it lands on the CPU of another
 * process's application (two programs on one 2-CPU host) and takes a few microseconds from it
 * at every wake-up: that program falls behind, spins on memory in turn, and both end up
 * waiting on progress threads (ib_write_lat ~34 us round trips instead of ~1.3). An
 * application that has not used verbs for SHIM_HOLD_APP_NS (a passive server, one asleep) is
 * not followed: the thread floats again, to whichever CPU is free. A system call only when
 * the CPU changes.
 */
static void
prog_follow(int *cpu, uint64_t now, const cpu_set_t *all)
{
	int app = __atomic_load_n(&eng_app_cpu, __ATOMIC_RELAXED);
	cpu_set_t one;

	if (now - __atomic_load_n(&eng_app_ns, __ATOMIC_RELAXED) >= SHIM_HOLD_APP_NS)
		app = -1;
	if (app == *cpu || app >= CPU_SETSIZE || (app >= 0 && !CPU_ISSET(app, all)))
		return;
	if (app < 0) {
		pthread_setaffinity_np(pthread_self(), sizeof(*all), all);
	} else {
		CPU_ZERO(&one);
		CPU_SET(app, &one);
		if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0)
			return;
	}
	*cpu = app;
}

static void *
prog_thread(void *arg)
{
	unsigned int idle = 0, work, nheld;
	uint64_t now, last_work = 0, spin_ns, held;
	int cpu = -1; /* the CPU it is pinned to; -1 floating */
	cpu_set_t all;
	long nap;
	bool rt, rt_ok, engaged;
	long app_nap = SHIM_APP_NAP_MIN_NS;

	(void)arg;
	if (!droce_shim_eng_can_poll())
		fprintf(stderr,
			"droce: the progress thread has no DPDK lcore id (%s): some PMDs "
			"(net_af_xdp) may stop receiving; lower the number of threads using "
			"verbs\n",
			rte_strerror(rte_errno));
	/* naps are a few microseconds: keep the kernel's 50 us timer slack off them */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	rt_ok = prog_rt_allowed();
	rt = false;
	if (pthread_getaffinity_np(pthread_self(), sizeof(all), &all) != 0)
		cpu = CPU_SETSIZE; /* not known: never moved */
	while (!__atomic_load_n(&prog_stop, __ATOMIC_ACQUIRE)) {
		now = droce_rt_now(eng_rt);
		engaged = now - __atomic_load_n(&eng_app_ns, __ATOMIC_RELAXED) < SHIM_HOLD_APP_NS;
		if (rt_ok && engaged != rt) {
			rt = prog_priority(engaged);
			rt_ok = rt || !engaged; /* refused: stay a normal thread */
		}
		spin_ns = rt ? 0 : SHIM_SPIN_NS;
		nap = rt ? SHIM_RT_NAP_NS : SHIM_NAP_NS;
		if (cpu != CPU_SETSIZE)
			prog_follow(&cpu, now, &all);
		if (__atomic_load_n(&eng_waiting, __ATOMIC_RELAXED) != 0) {
			droce_shim_nap(nap); /* a verb waits: maybe on our CPU */
			continue;
		}
		held = __atomic_load_n(&eng_held_ns, __ATOMIC_RELAXED);
		if (held != 0 && now - held >= SHIM_HOLD_NS &&
		    !__atomic_exchange_n(&eng_lock, 1, __ATOMIC_ACQUIRE)) {
			/* no verb sent what one held: send it, whatever the application does */
			if (__atomic_load_n(&eng_held_ns, __ATOMIC_RELAXED) == held) {
				droce_rt_poll(eng_rt);
				__atomic_store_n(&eng_held_ns, 0, __ATOMIC_RELAXED);
			}
			eng_run_deferred();
			droce_shim_eng_leave();
			continue;
		}
		/* a verb drove the loop lately, or is driving it now (one iteration of a
		 * 64 KiB post builds and checksums 64 frames: tens of microseconds, more when
		 * preempted) */
		if (now - __atomic_load_n(&eng_app_ns, __ATOMIC_RELAXED) < SHIM_APP_ACTIVE_NS ||
		    __atomic_load_n(&eng_lock, __ATOMIC_RELAXED) != 0) {
			idle = 0;
			/* the application's next verb sends what it holds; if it went quiet,
			 * we do, at most SHIM_HOLD_CHECK_NS late */
			droce_shim_nap(held != 0 && app_nap > SHIM_HOLD_CHECK_NS ?
					       SHIM_HOLD_CHECK_NS :
					       app_nap);
			if (app_nap < SHIM_APP_NAP_MAX_NS)
				app_nap *= 2;
			continue;
		}
		app_nap = SHIM_APP_NAP_MIN_NS;
		work = 0;
		nheld = 0;
		if (!__atomic_exchange_n(&eng_lock, 1, __ATOMIC_ACQUIRE)) {
			/* ACKs held too while the application uses verbs: spinning on memory
			 * for what this placed, it answers in one burst with our ACK, and its
			 * peer, polling for the ACK, gets both at once (back to the
			 * verbs-driven rhythm above). A passive side (ib_write_bw's server)
			 * is not held up: its loop runs on. */
			if (engaged)
				work = droce_rt_poll_hold(eng_rt, &nheld);
			else
				work = droce_rt_poll(eng_rt);
			__atomic_store_n(&eng_held_ns, nheld != 0 ? now : 0, __ATOMIC_RELAXED);
			eng_run_deferred();
			droce_shim_eng_leave();
		}
		if (nheld != 0) {
			idle = 0;
			last_work = now;
			droce_shim_events_kick();
			/* the application's turn, maybe on this CPU */
			droce_shim_nap(SHIM_HOLD_NS);
			continue;
		}
		if (work != 0) {
			idle = 0;
			last_work = now;
			droce_shim_events_kick();
			continue;
		}
		if (now - last_work < spin_ns) {
			rte_pause();
			continue;
		}
		++idle;
		/* At real-time priority each empty round took its application's CPU for
		 * ~20 us (a VM's wake-up), for nothing: an application that merely lost its CPU
		 * a while looked absent, and rounds every 20 us kept it from getting it back
		 * (ib_write_bw at a tenth of its rate, 99 % of rounds empty). Twice as long a
		 * nap after each empty round, up to SHIM_APP_NAP_MAX_NS. */
		if (rt)
			droce_shim_nap(idle < 7 ? nap << (idle - 1) : SHIM_APP_NAP_MAX_NS);
		else
			droce_shim_nap(idle < SHIM_IDLE_ROUNDS ? nap : SHIM_LONG_NAP_NS);
	}
	return NULL;
}

int
droce_shim_prog_start(struct droce_rt *rt)
{
	int rc;

	eng_rt = rt;
	__atomic_store_n(&prog_stop, 0, __ATOMIC_RELEASE);
	rc = pthread_create(&prog_tid, NULL, prog_thread, NULL);
	if (rc != 0)
		return -rc;
	pthread_setname_np(prog_tid, "droce-progress");
	prog_running = true;
	return 0;
}

void
droce_shim_prog_stop(void)
{
	if (!prog_running)
		return;
	__atomic_store_n(&prog_stop, 1, __ATOMIC_RELEASE);
	pthread_join(prog_tid, NULL);
	prog_running = false;
}

/*
 * fn under the engine lock, run by whichever thread drives the loop next (a verb, the progress
 * thread); after SHIM_DEFER_NS without one, by the caller itself (shared model). For the event watcher: a
 * thread that takes the engine lock can be preempted holding it, and one woken every
 * millisecond, on a CPU a busy real-time thread holds, stalled the application's verbs for
 * half a millisecond a time (ib_write_bw at half its rate: the application waited on the lock
 * 70 000 times in 3 s).
 */
int
droce_shim_eng_call_deferred(int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	struct shim_deferred d = { .fn = fn, .arg = arg }, *mine;
	uint64_t start;
	int rc;

	start = droce_rt_now(eng_rt);
	mine = NULL;
	/* one slot, one user (the watcher); another caller waits its turn */
	while (!__atomic_compare_exchange_n(&eng_deferred, &mine, &d, false, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED)) {
		mine = NULL;
		droce_shim_nap(SHIM_DEFER_NAP_NS);
	}
	while (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE)) {
		if (droce_rt_now(eng_rt) - start >= SHIM_DEFER_NS) {
			mine = &d;
			if (__atomic_compare_exchange_n(&eng_deferred, &mine, NULL, false,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				/* nobody drives the loop: the lock is free, take it */
				droce_shim_eng_enter();
				rc = fn(eng_rt, arg);
				droce_shim_eng_leave();
				return rc;
			}
			/* a driver took it and is running it now */
		}
		droce_shim_nap(SHIM_DEFER_NAP_NS);
	}
	return d.rc;
}
