/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine behind the verbs: one pmd-glue runtime per process, opened on the first verb that
 * needs it (so ibv_devices / ibv_devinfo never start EAL), from the same configuration as the
 * device list. Two progress models (DROCE_SHIM_PROGRESS):
 *
 * - shared (default, shim_progress.c): the runtime runs inline and an engine lock says who
 *   drives it. A verb takes the lock, does its work and runs one loop iteration, so an
 *   application that posts and polls moves its own packets with no hand-over to another
 *   thread (the figures of an inline droce-perf). A progress thread drives the loop whenever
 *   no verb does: while the application spins on memory (ib_write_lat), sleeps in
 *   ibv_get_cq_event or computes. The lock is uncontended while only one of them is active;
 *   verbs providers lock these paths too (the verbs contract lets any thread post and poll).
 * - lcore: the runtime's loop runs on the second configured lcore and every verb is a
 *   closure handed to it (droce_rt_call): a thread hand-over per verb, kept for comparison.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_rt.h"
#include "droce_shim.h"
#include "shim_progress.h"

enum {
	/* At exit the loop runs until it has been idle a while (at most SHIM_DRAIN_NS), then
	 * the port stays up, unpolled, for SHIM_LINGER_NS: a memif peer loses what it has not
	 * read yet (the ACK of its last message) when we leave, and polling while the peer
	 * itself leaves races with the PMD's disconnect handling. */
	SHIM_DRAIN_NS = 100 * 1000 * 1000,
	SHIM_LINGER_NS = 20 * 1000 * 1000,
	SHIM_DRAIN_QUIET = 64,
};

static pthread_mutex_t shim_rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_rt *shim_rt;
static bool shim_rt_failed; /* said once; later verbs fail with ENODEV at once */
static bool shim_rt_lcore;  /* lcore model: the loop runs on its own lcore */
static pid_t shim_rt_pid;   /* the process that opened it (a forked child must not close it) */
/* This process is a fork() child of the one that opened the runtime: the port (AF_XDP rings
 * mmapped shared with the kernel, memif's shared memory, the parent's sockets) is the
 * parent's, so the child must never touch it. Set by the atfork handler, read by every verb
 * (a plain load: no getpid() syscall on the data path). */
static bool shim_forked;
static uint32_t shim_forked_said;

static void
shim_atfork_child(void)
{
	if (shim_rt != NULL)
		shim_forked = true;
}

static void __attribute__((constructor)) shim_atfork_init(void)
{
	pthread_atfork(NULL, NULL, shim_atfork_child);
}

/* The child's verbs on its parent's device: EIO, and once a line saying why and what works. */
static int
shim_forked_err(void)
{
	if (!__atomic_exchange_n(&shim_forked_said, 1, __ATOMIC_RELAXED))
		fprintf(stderr,
			"droce: process %ld is a fork() child of %ld, which opened droce0: its "
			"port "
			"and memory are the parent's, so this child's verbs on it fail (EIO); open "
			"the device in the child instead (fork before the first verb that starts "
			"droce: ibv_alloc_pd, ibv_create_cq), or exec\n",
			(long)getpid(), (long)shim_rt_pid);
	return -EIO;
}

/* DROCE_SHIM_PROGRESS: "shared" (default) or "lcore"; anything else is refused by name. */
static int
shim_progress_model(bool *lcore)
{
	const char *m = getenv("DROCE_SHIM_PROGRESS");

	*lcore = false;
	if (m == NULL || *m == '\0' || strcmp(m, "shared") == 0)
		return 0;
	if (strcmp(m, "lcore") == 0) {
		*lcore = true;
		return 0;
	}
	fprintf(stderr,
		"droce: DROCE_SHIM_PROGRESS=%s is not a progress model: use shared "
		"(default) or lcore\n",
		m);
	return -EINVAL;
}

static int
shim_rt_go(const struct droce_shim_dev *d)
{
	bool lcore;
	int rc = shim_progress_model(&lcore);

	if (rc != 0)
		return rc;
	if (lcore) {
		if (d->cfg.nb_lcores < 2) {
			fprintf(stderr, "droce: DROCE_SHIM_PROGRESS=lcore needs two lcores "
					"(DROCE_LCORES=0,1)\n");
			return -EINVAL;
		}
		rc = droce_rt_start(shim_rt);
		if (rc != 0) {
			fprintf(stderr, "droce: cannot start the poll lcore: %s\n",
				droce_rt_strerror(shim_rt));
			return rc;
		}
		shim_rt_lcore = true;
	} else {
		rc = droce_shim_prog_start(shim_rt);
		if (rc != 0) {
			fprintf(stderr, "droce: cannot start the progress thread: %s\n",
				strerror(-rc));
			return rc;
		}
	}
	if (droce_shim_events_start() != 0)
		fprintf(stderr, "droce: no event thread: completion channels will not wake up\n");
	return 0;
}

struct droce_rt *
droce_shim_rt(const struct droce_shim_dev *d)
{
	char err[DROCE_RT_ERR_MAX];
	struct droce_rt *rt;

	if (shim_forked) {
		errno = -shim_forked_err();
		return NULL;
	}
	pthread_mutex_lock(&shim_rt_lock);
	if (shim_rt == NULL && !shim_rt_failed) {
		struct droce_rt_config cfg;
		cpu_set_t cpus;
		bool have_cpus;

		/* rte_eal_init pins the calling thread to lcore 0: an application thread is not
		 * ours to pin, so it gets its CPU set back (the poll loop keeps its lcore). */
		have_cpus = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;
		/* A held ACK leads the answer in its burst (ack_order): the peer, polling for the
		 * completion it brings, gets both at once inside its verbs (ib_write_lat took
		 * ~30x longer with them in two bursts). */
		cfg = d->cfg;
		if (cfg.ack_order[0] == '\0')
			snprintf(cfg.ack_order, sizeof(cfg.ack_order), "fifo");
		shim_rt = droce_rt_open_config(&cfg, "droce-verbs", err, sizeof(err));
		shim_rt_pid = getpid();
		/* before our threads start: they inherit the set (the progress thread floats) */
		if (have_cpus)
			pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
		if (shim_rt == NULL) {
			fprintf(stderr, "droce: cannot start the runtime: %s\n", err);
			shim_rt_failed = true;
		} else if (shim_rt_go(d) != 0) {
			droce_rt_close(shim_rt);
			shim_rt = NULL;
			shim_rt_failed = true;
		}
	}
	rt = shim_rt;
	pthread_mutex_unlock(&shim_rt_lock);
	if (rt == NULL)
		errno = ENODEV;
	return rt;
}

struct droce_rt *
droce_shim_rt_peek(void)
{
	return shim_forked ? NULL : __atomic_load_n(&shim_rt, __ATOMIC_ACQUIRE);
}

static void shim_debug_counters(void);

/* The application is leaving: what it queued last (an ACK the peer waits for) must still
 * leave. Bounded. */
static void
eng_drain(void)
{
	uint64_t start = droce_rt_now(shim_rt);
	unsigned int quiet = 0;

	if (!droce_shim_eng_can_poll())
		return;

	while (quiet < SHIM_DRAIN_QUIET && droce_rt_now(shim_rt) - start < SHIM_DRAIN_NS) {
		droce_shim_eng_enter();
		quiet = droce_rt_poll(shim_rt) != 0 ? 0 : quiet + 1;
		droce_shim_eng_leave();
	}
}

/* Stop the loop and release the port when the application exits. */
static void __attribute__((destructor)) shim_rt_fini(void)
{
	/* A child of fork() shares the parent's port (memif socket, rings): leave it alone. */
	if (shim_rt == NULL || getpid() != shim_rt_pid)
		return;
	droce_shim_events_stop();
	droce_shim_prog_stop();
	if (shim_rt_lcore)
		droce_rt_stop(shim_rt);
	else
		eng_drain();
	droce_shim_nap(SHIM_LINGER_NS);
	shim_debug_counters();
	if (shim_rt != NULL)
		droce_rt_close(shim_rt);
	shim_rt = NULL;
}

/* fn where the engine lives; send: then one loop iteration from this thread, so the work a
 * post queued leaves at once. */
static int
shim_call(int (*fn)(struct droce_rt *rt, void *arg), void *arg, bool send)
{
	int rc;

	if (__builtin_expect(shim_forked, 0))
		return shim_forked_err();
	if (shim_rt == NULL)
		return -ENODEV;
	if (shim_rt_lcore)
		return droce_rt_call(shim_rt, fn, arg);
	droce_shim_eng_enter();
	droce_rt_tick(shim_rt);
	rc = fn(shim_rt, arg);
	if (send)
		droce_shim_eng_poll(true);
	droce_shim_eng_leave();
	return rc;
}

int
droce_shim_call(int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	return shim_call(fn, arg, false);
}

int
droce_shim_call_send(int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	return shim_call(fn, arg, true);
}

/* Background threads (the event watcher): a deferred call in the shared model (shim_progress.c),
 * a closure to the poll lcore in the other. */
int
droce_shim_call_deferred(int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	if (shim_rt == NULL || shim_rt_lcore || shim_forked)
		return shim_call(fn, arg, false);
	return droce_shim_eng_call_deferred(fn, arg);
}

static void
shim_poll_once(bool hold)
{
	/* a forked child: the engine lock and the port are the parent's */
	if (shim_rt == NULL || shim_rt_lcore || __builtin_expect(shim_forked, 0))
		return;
	droce_shim_eng_enter();
	droce_shim_eng_poll(hold);
	droce_shim_eng_leave();
}

void
droce_shim_progress(void)
{
	shim_poll_once(true);
}

void
droce_shim_flush(void)
{
	shim_poll_once(false);
}

/* DROCE_SHIM_DEBUG: the runtime's non-zero counters, to tell a dead link from a lost reply. */
static void
shim_debug_counters(void)
{
	struct droce_rt_counter c[256];
	const char *dbg = getenv("DROCE_SHIM_DEBUG");
	int n, i;

	if (dbg == NULL || *dbg == '\0' || *dbg == '0')
		return;
	fprintf(stderr, "droce: counters (pid %d):\n", (int)getpid());
	if (!shim_rt_lcore)
		droce_shim_eng_enter();
	n = droce_rt_counters(shim_rt, c, sizeof(c) / sizeof(c[0]));
	if (!shim_rt_lcore)
		droce_shim_eng_leave();
	for (i = 0; i < n && i < (int)(sizeof(c) / sizeof(c[0])); i++)
		if (c[i].value != 0)
			fprintf(stderr, "droce:   %s = %" PRIu64 "\n", c[i].name, c[i].value);
}

int
droce_shim_resolve(struct droce_av *av)
{
	int rc;

	if (shim_forked)
		return shim_forked_err();
	if (shim_rt == NULL)
		return -ENODEV;
	/* a few ARP/ND rounds (arp_retry_ms x arp_tries) fit in 5 s; in the shared model the
	 * resolution drives the loop itself, so it holds the engine (a slow path) */
	if (!shim_rt_lcore)
		droce_shim_eng_enter();
	rc = droce_rt_resolve_av(shim_rt, av, 5000);
	if (!shim_rt_lcore)
		droce_shim_eng_leave();
	if (rc != 0) {
		fprintf(stderr, "droce: %s\n", droce_rt_strerror(shim_rt));
		shim_debug_counters();
	}
	return rc;
}
