/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL's cleanup with its interrupt thread busy (droce_rt_guard_eal_cleanup,
 * droce_rt_guard.h). A source whose callback leaves its eventfd readable keeps the thread
 * walking the sources, whose handles (RTE_INTR_INSTANCE_F_SHARED, as memif's) live in DPDK
 * memory: cleanup unmaps that memory, so an unparked thread dies of SIGSEGV there. Parked, it
 * runs no callback again and the process exits cleanly. Each case runs in a child.
 */
/* rte_intr_instance_alloc and its accessors are experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_interrupts.h>

#include "droce_rt_guard.h"
#include "glue_child.h"
#include "droce_test.h"

static volatile unsigned long calls;

static void
spin_cb(void *arg)
{
	(void)arg; /* the eventfd is not read: level-triggered, it is ready again at once */
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static char runtime_dir[PATH_MAX];

/* EAL of a prefix of its own, no shared files: the runtime directory stays empty. */
static int
eal_up(void)
{
	char prefix[64];
	char *args[] = { "test_rt_eal_exit",
			 "--no-huge",
			 "-m",
			 "64",
			 "--no-pci",
			 "--no-telemetry",
			 "--no-shconf",
			 prefix,
			 "--log-level=lib.eal:error" };

	snprintf(prefix, sizeof(prefix), "--file-prefix=droce_eal_exit_%d", (int)getpid());
	if (rte_eal_init((int)(sizeof(args) / sizeof(args[0])), args) < 0)
		return -1;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	return 0;
}

/* The child's exit status: 0 when EAL was cleaned up and no callback ran after. */
static int
cleanup_child(bool busy)
{
	struct rte_intr_handle *ih;
	unsigned long seen;
	unsigned int i;
	int efd;

	if (eal_up() != 0)
		return 10;
	if (busy) {
		efd = eventfd(1, EFD_NONBLOCK);
		ih = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_SHARED);
		if (efd < 0 || ih == NULL || rte_intr_fd_set(ih, efd) != 0 ||
		    rte_intr_type_set(ih, RTE_INTR_HANDLE_EXT) != 0 ||
		    rte_intr_callback_register(ih, spin_cb, NULL) != 0)
			return 11;
		for (i = 0; i < 2000 && __atomic_load_n(&calls, __ATOMIC_RELAXED) < 1000; i++)
			sleep_ms(1);
		if (__atomic_load_n(&calls, __ATOMIC_RELAXED) < 1000)
			return 12; /* the thread never got busy: the case tests nothing */
	}
	if (droce_rt_guard_eal_cleanup() != 0)
		return 13;
	rmdir(runtime_dir);
	seen = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	sleep_ms(50); /* an unparked thread faults in this time, or runs callbacks */
	return __atomic_load_n(&calls, __ATOMIC_RELAXED) == seen ? 0 : 14;
}

static int
busy_child(void)
{
	return cleanup_child(true);
}

static int
idle_child(void)
{
	return cleanup_child(false);
}

/* Exited 0: what the child's exit status says otherwise is printed. */
static bool
clean_exit(int st)
{
	if (st >= 0 && WIFSIGNALED(st))
		fprintf(stderr, "child died of signal %d\n", WTERMSIG(st));
	else if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) != 0)
		fprintf(stderr, "child exited with %d\n", WEXITSTATUS(st));
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void
test_cleanup_busy_intr_thread(void)
{
	CU_ASSERT_TRUE(clean_exit(glue_child_status(busy_child, 20)));
}

static void
test_cleanup_idle_intr_thread(void)
{
	CU_ASSERT_TRUE(clean_exit(glue_child_status(idle_child, 20)));
}

DROCE_TEST_MAIN("rt_eal_exit", DROCE_TEST(test_cleanup_busy_intr_thread),
		DROCE_TEST(test_cleanup_idle_intr_thread))
