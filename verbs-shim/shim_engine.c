/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine behind the verbs: one pmd-glue runtime per process, opened on the first verb that
 * needs it (so ibv_devices / ibv_devinfo never start EAL), from the same configuration as the
 * device list. With two lcores configured the runtime's poll loop runs on the second one and
 * every engine call goes through droce_rt_call(); with one, the application's thread drives
 * the loop from ibv_poll_cq (inline mode: single-threaded applications only).
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "droce_rt.h"
#include "droce_shim.h"

static pthread_mutex_t shim_rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_rt *shim_rt;
static bool shim_rt_failed;	/* said once; later verbs fail with ENODEV at once */
static bool shim_rt_lcore;	/* the loop runs on its own lcore */
static pid_t shim_rt_pid;	/* the process that opened it (a forked child must not close it) */

struct droce_rt *
droce_shim_rt(const struct droce_shim_dev *d)
{
	char err[DROCE_RT_ERR_MAX];
	struct droce_rt *rt;
	int rc;

	pthread_mutex_lock(&shim_rt_lock);
	if (shim_rt == NULL && !shim_rt_failed) {
		cpu_set_t cpus;
		bool have_cpus;

		/* rte_eal_init pins the calling thread to lcore 0: an application thread is not
		 * ours to pin, so it gets its CPU set back (the poll loop keeps its lcore). */
		have_cpus = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;
		shim_rt = droce_rt_open_config(&d->cfg, "droce-verbs", err, sizeof(err));
		if (have_cpus)
			pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
		shim_rt_pid = getpid();
		if (shim_rt == NULL) {
			fprintf(stderr, "droce: cannot start the runtime: %s\n", err);
			shim_rt_failed = true;
		} else if (d->cfg.nb_lcores > 1) {
			rc = droce_rt_start(shim_rt);
			if (rc != 0) {
				fprintf(stderr, "droce: cannot start the poll lcore: %s\n",
					droce_rt_strerror(shim_rt));
				droce_rt_close(shim_rt);
				shim_rt = NULL;
				shim_rt_failed = true;
			} else {
				shim_rt_lcore = true;
				if (droce_shim_events_start() != 0)
					fprintf(stderr, "droce: no event thread: completion "
						"channels will not wake up\n");
			}
		}
	}
	rt = shim_rt;
	pthread_mutex_unlock(&shim_rt_lock);
	if (rt == NULL)
		errno = ENODEV;
	return rt;
}

/* Stop the loop and release the port when the application exits. */
static void __attribute__((destructor))
shim_rt_fini(void)
{
	/* A child of fork() shares the parent's port (memif socket, rings): leave it alone. */
	if (shim_rt == NULL || getpid() != shim_rt_pid)
		return;
	droce_shim_events_stop();
	if (shim_rt != NULL)
		droce_rt_close(shim_rt);
	shim_rt = NULL;
}

int
droce_shim_call(int (*fn)(struct droce_rt *rt, void *arg), void *arg)
{
	if (shim_rt == NULL)
		return -ENODEV;
	return droce_rt_call(shim_rt, fn, arg);
}

void
droce_shim_progress(void)
{
	if (shim_rt != NULL && !shim_rt_lcore)
		droce_rt_poll(shim_rt);
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
	n = droce_rt_counters(shim_rt, c, sizeof(c) / sizeof(c[0]));
	for (i = 0; i < n && i < (int)(sizeof(c) / sizeof(c[0])); i++)
		if (c[i].value != 0)
			fprintf(stderr, "droce:   %s = %" PRIu64 "\n", c[i].name, c[i].value);
}

int
droce_shim_resolve(struct droce_av *av)
{
	int rc;

	if (shim_rt == NULL)
		return -ENODEV;
	/* a few ARP/ND rounds (arp_retry_ms x arp_tries) fit in 5 s */
	rc = droce_rt_resolve_av(shim_rt, av, 5000);
	if (rc != 0) {
		fprintf(stderr, "droce: %s\n", droce_rt_strerror(shim_rt));
		shim_debug_counters();
	}
	return rc;
}
