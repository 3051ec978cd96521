/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The burst guard (droce_rt_guard.h) without EAL: a fault inside a guarded call while the
 * port is down is taken and counted, again and again; with the port up the process still
 * dies by SIGSEGV; an application's own SIGSEGV handler still gets the faults that are not
 * the guard's. Each case that may die runs in a child.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "droce_rt_guard.h"
#include "glue_child.h"
#include "droce_test.h"

static volatile int reached;

/* Reads a page that is no longer mapped, as a burst does after memif_free_regions(). */
static void
read_unmapped(void *arg)
{
	volatile const uint8_t *p = arg;

	reached = 1;
	reached = p[64];
	reached = 2; /* never: the read faults */
}

static void
no_fault(void *arg)
{
	(void)arg;
	reached = 3;
}

static bool
down(uint16_t port)
{
	return port == 7;
}

static void *
unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CU_ASSERT_FATAL(p != MAP_FAILED);
	CU_ASSERT_FATAL(munmap(p, 4096) == 0);
	return p;
}

static void
test_fault_taken_when_down(void)
{
	void *page = unmapped_page();
	int i;

	CU_ASSERT_EQUAL(droce_rt_guard_init(), 0);
	/* Repeatedly: the handler must not leave SIGSEGV blocked after a siglongjmp. */
	for (i = 0; i < 3; i++) {
		reached = 0;
		CU_ASSERT_TRUE(droce_rt_guard_run(7, read_unmapped, page, down));
		CU_ASSERT_EQUAL(reached, 1);
	}
	reached = 0;
	CU_ASSERT_FALSE(droce_rt_guard_run(7, no_fault, NULL, down));
	CU_ASSERT_EQUAL(reached, 3);
}

static int
fault_port_up(void)
{
	droce_rt_guard_init();
	droce_rt_guard_run(3, read_unmapped, unmapped_page(), down);
	return 0;
}

static int
fault_outside_guard(void)
{
	volatile const uint8_t *p = unmapped_page();

	droce_rt_guard_init();
	reached = p[0];
	return 0;
}

static void
app_handler(int sig)
{
	_exit(sig == SIGSEGV ? 42 : 43);
}

static int
fault_with_app_handler(void)
{
	signal(SIGSEGV, app_handler);
	droce_rt_guard_init();
	droce_rt_guard_run(3, read_unmapped, unmapped_page(), down);
	return 0;
}

/* A fault nobody took: death by SIGSEGV, or under AddressSanitizer (whose handler the guard
 * passes it to, as to any earlier one) ASan's report and exit status. */
static bool
died_of_fault(int st)
{
#if defined(__SANITIZE_ADDRESS__)
	if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		return true;
#endif
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

static void
test_other_faults_still_kill(void)
{
	int st;

	st = glue_child_status(fault_port_up, 10);
	CU_ASSERT_TRUE(died_of_fault(st));
	st = glue_child_status(fault_outside_guard, 10);
	CU_ASSERT_TRUE(died_of_fault(st));
	st = glue_child_status(fault_with_app_handler, 10);
	CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 42);
}

DROCE_TEST_MAIN("rt_guard", DROCE_TEST(test_fault_taken_when_down),
		DROCE_TEST(test_other_faults_still_kill))
