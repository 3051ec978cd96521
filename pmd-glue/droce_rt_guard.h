/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_GUARD_H
#define DROCE_RT_GUARD_H

/*
 * Rx/Tx bursts that survive a memif peer leaving mid-burst.
 *
 * DPDK 22.11's memif PMD tears a connection down in memif_disconnect(), on EAL's interrupt
 * thread: it clears the CONNECTED flag, then unmaps the shared regions and frees their
 * descriptors, with no lock shared with the data path. A burst that passed its CONNECTED check
 * just before (a poll thread preempted inside it, common on two busy CPUs) then reads unmapped
 * memory or a NULL region and the process dies with SIGSEGV, about once in 30 runs of a
 * three-process memif test. A guarded burst arms a SIGSEGV/SIGBUS handler that, for a fault
 * taken inside the burst while that port's link is down (memif_disconnect's first store),
 * abandons the burst: Rx reports 0 frames, Tx reports every frame taken (the PMD frees those
 * it copied, one by one: giving the rest back would free them twice; they leak, at most a
 * burst per departure). Any other fault goes to the previous handler or kills the process as
 * before. Used on memif ports only; the guard costs a sigsetjmp (no system call) per burst.
 */
#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;

/* Install the handler (once per process; later calls return its result). 0 or -errno. */
int droce_rt_guard_init(void);

/* rte_eth_rx_burst / rte_eth_tx_burst; *faults counts the bursts abandoned. */
uint16_t droce_rt_guard_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
			   uint64_t *faults);
uint16_t droce_rt_guard_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
			   uint64_t *faults);

/*
 * rte_eth_dev_stop(), for a memif port on EAL's interrupt thread: memif_disconnect() runs there
 * when the peer leaves, and the two calls at once free the shared regions twice ("EAL: Error:
 * Invalid memory", then SIGSEGV). Any other port is stopped directly.
 */
void droce_rt_guard_stop(uint16_t port_id);

/*
 * rte_eal_cleanup(), with EAL's interrupt thread parked first. DPDK 22.11 never stops that
 * thread, yet cleanup unmaps DPDK memory (rte_eal_memory_detach), where interrupt sources keep
 * their handles; and a memif server's close leaves its listener source registered
 * (memif_socket_remove_device frees the handle only). The thread woken during cleanup walks
 * the sources and dies in rte_intr_fd_get (SIGSEGV: a droce-perf server, once in 25 runs of
 * the perf suite here). Parked means inside a callback of ours that never returns (waiting
 * at most 1 s for the thread to get there); the process's exit ends it, and EAL cannot start
 * again in a process anyway.
 * Returns rte_eal_cleanup's result.
 */
int droce_rt_guard_eal_cleanup(void);

/*
 * For tests: run fn(arg) guarded as a burst on port, with port_down() standing for the link
 * check. Returns true when fn faulted and the guard took the fault.
 */
bool droce_rt_guard_run(uint16_t port, void (*fn)(void *), void *arg,
			bool (*port_down)(uint16_t port));

#endif
