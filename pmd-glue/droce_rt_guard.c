/* SPDX-License-Identifier: BSD-3-Clause */
/* Bursts guarded against the memif teardown race, and a stop that avoids it (why:
 * droce_rt_guard.h). */
/* rte_intr_instance_alloc and its accessors are experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>

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
	struct guard g; /* not zeroed: sigsetjmp fills the 200-byte buffer, every burst */
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

/*
 * Have cb(arg) run on EAL's interrupt thread, serialised with the PMDs' handlers there: an
 * eventfd source registered for the purpose (PRIVATE: the handle, and the copy EAL keeps,
 * live in malloc memory, not DPDK's) and signalled once; then wait up to ms for *done. cb
 * must read the eventfd first (a wake-up that is not its own finds it empty). Returns the
 * registered handle, or NULL when nothing could be registered (cb will not run).
 */
static struct rte_intr_handle *
on_intr_thread(int efd, rte_intr_callback_fn cb, void *arg, const int *done, unsigned int ms)
{
	struct timespec ts = { 0, 1000 * 1000 };
	struct rte_intr_handle *ih;
	uint64_t one = 1;
	unsigned int i;

	ih = efd >= 0 ? rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE) : NULL;
	if (ih == NULL || rte_intr_fd_set(ih, efd) != 0 ||
	    rte_intr_type_set(ih, RTE_INTR_HANDLE_EXT) != 0 ||
	    rte_intr_callback_register(ih, cb, arg) != 0) {
		rte_intr_instance_free(ih);
		return NULL;
	}
	if (write(efd, &one, sizeof(one)) == sizeof(one))
		for (i = 0; i < ms && !__atomic_load_n(done, __ATOMIC_ACQUIRE); i++)
			nanosleep(&ts, NULL);
	return ih;
}

struct stop_req {
	uint16_t port_id;
	int efd;
	int done;
};

static void
stop_cb(void *arg)
{
	struct stop_req *r = arg;
	uint64_t v;

	if (read(r->efd, &v, sizeof(v)) != sizeof(v))
		return; /* not our wake-up */
	rte_eth_dev_stop(r->port_id);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

/*
 * Stop the port. memif (DPDK 22.11) tears a link down in memif_disconnect(), called by
 * dev_stop and also by EAL's interrupt thread when the peer disconnects; only the control
 * channel is under a lock, so when both peers exit together the two calls free the
 * shared-memory regions twice ("EAL: Error: Invalid memory", then a crash). So a memif port
 * is stopped on the interrupt thread, serialised with the PMD's handlers, by a source gone
 * again before dev_close. (Not an EAL alarm: its timer source stays registered until
 * rte_eal_cleanup, whose unregistering makes the interrupt thread walk its sources, among
 * them the listener handle a memif server's close freed without unregistering it.) Other
 * PMDs, or no eventfd: stopped here.
 */
void
droce_rt_guard_stop(uint16_t port_id)
{
	struct stop_req r = { port_id, -1, 0 };
	struct rte_eth_dev_info info;
	struct timespec ts = { 0, 1000 * 1000 };
	struct rte_intr_handle *ih = NULL;

	if (rte_eth_dev_info_get(port_id, &info) == 0 && info.driver_name != NULL &&
	    strcmp(info.driver_name, "net_memif") == 0) {
		r.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ih = on_intr_thread(r.efd, stop_cb, &r, &r.done, 2000);
	}
	/* -EAGAIN while the callback is still running */
	while (ih != NULL && rte_intr_callback_unregister(ih, stop_cb, &r) == -EAGAIN)
		nanosleep(&ts, NULL);
	if (!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE))
		rte_eth_dev_stop(port_id); /* not run there (2 s): here, as before */
	rte_intr_instance_free(ih);
	if (r.efd >= 0)
		close(r.efd);
}

/* Where EAL's interrupt thread waits while EAL is cleaned up (static: it outlives the call). */
static struct park_req {
	int efd;
	int parked;
	struct rte_intr_handle *ih; /* kept (a leak checker sees it reachable) */
} park = { -1, 0, NULL };

static void
park_cb(void *arg)
{
	struct park_req *p = arg;
	uint64_t v;

	if (read(p->efd, &v, sizeof(v)) != sizeof(v))
		return;
	__atomic_store_n(&p->parked, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

int
droce_rt_guard_eal_cleanup(void)
{
	/* Not parked within 1 s, or nothing registered: cleanup runs unparked, as before. */
	park.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	park.ih = on_intr_thread(park.efd, park_cb, &park, &park.parked, 1000);
	return rte_eal_cleanup();
}
