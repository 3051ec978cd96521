/* SPDX-License-Identifier: BSD-3-Clause */
/* Bursts guarded against the memif teardown race (why: droce_rt_guard.h). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

#include <rte_ethdev.h>

#include "droce_rt_guard.h"

struct guard {
	sigjmp_buf jb;
	uint16_t port;
	bool (*down)(uint16_t port);
};

/* The burst this thread is in, if guarded; read by the handler on the same thread. */
static __thread struct guard *volatile cur;
static struct sigaction old_segv, old_bus;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc;

static void
on_fault(int sig, siginfo_t *si, void *uctx)
{
	struct guard *g = cur;
	const struct sigaction *old = sig == SIGBUS ? &old_bus : &old_segv;

	if (g != NULL && g->down(g->port)) {
		cur = NULL;
		siglongjmp(g->jb, 1);
	}
	if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction != NULL) {
		old->sa_sigaction(sig, si, uctx);
		return;
	}
	if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL &&
	    old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	/* Not ours: the default action, taken when the faulting instruction runs again. */
	signal(sig, SIG_DFL);
}

static void
install(void)
{
	struct sigaction sa = { 0 };

	sa.sa_sigaction = on_fault;
	/* NODEFER: a guard leaves the handler by siglongjmp without restoring the mask. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &old_segv) != 0 || sigaction(SIGBUS, &sa, &old_bus) != 0)
		init_rc = -errno;
}

int
droce_rt_guard_init(void)
{
	pthread_once(&once, install);
	return init_rc;
}

static bool
link_down(uint16_t port)
{
	struct rte_eth_link l;

	/* memif's link_update does nothing in a primary process: this reads dev_link only. */
	return rte_eth_link_get_nowait(port, &l) != 0 || l.link_status == RTE_ETH_LINK_DOWN;
}

/* One burst under a guard; on_fault is what it reports when abandoned. */
static uint16_t
guarded(uint16_t (*burst)(uint16_t, uint16_t, struct rte_mbuf **, uint16_t), uint16_t on_fault,
	uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, uint64_t *faults)
{
	struct guard g;	/* not zeroed: sigsetjmp fills the 200-byte buffer, every burst */
	uint16_t done;

	g.port = port;
	g.down = link_down;
	if (sigsetjmp(g.jb, 0) != 0) {
		(*faults)++;
		return on_fault;
	}
	cur = &g;
	done = burst(port, queue, pkts, n);
	cur = NULL;
	return done;
}

uint16_t
droce_rt_guard_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
		  uint64_t *faults)
{
	return guarded(rte_eth_rx_burst, 0, port, queue, pkts, n, faults);
}

uint16_t
droce_rt_guard_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
		  uint64_t *faults)
{
	/* Every frame taken: see droce_rt_guard.h. */
	return guarded(rte_eth_tx_burst, n, port, queue, pkts, n, faults);
}

bool
droce_rt_guard_run(uint16_t port, void (*fn)(void *), void *arg, bool (*port_down)(uint16_t))
{
	struct guard g = { .port = port, .down = port_down };

	if (sigsetjmp(g.jb, 0) != 0)
		return true;
	cur = &g;
	fn(arg);
	cur = NULL;
	return false;
}
