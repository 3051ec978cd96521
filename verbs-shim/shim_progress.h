/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared progress model (shim_progress.c), as shim_engine.c uses it. */
#ifndef SHIM_PROGRESS_H
#define SHIM_PROGRESS_H

#include <stdbool.h>

struct droce_rt;

/* The engine lock: whoever holds it drives the runtime (verbs, the progress thread). */
void droce_shim_eng_enter(void);
void droce_shim_eng_leave(void);
/* Whether this thread may run the loop (it has, or got, a DPDK lcore id). */
bool droce_shim_eng_can_poll(void);
/* Lock held: one loop iteration for the application; hold: its ACKs wait for the next one. */
void droce_shim_eng_poll(bool hold);
/* fn under the lock, run by the next thread that drives the loop (or, after 2 ms, here). */
int droce_shim_eng_call_deferred(int (*fn)(struct droce_rt *rt, void *arg), void *arg);
/* The progress thread for rt; stop joins it. 0 or -errno. */
int droce_shim_prog_start(struct droce_rt *rt);
void droce_shim_prog_stop(void);
/* Sleep ns nanoseconds. */
void droce_shim_nap(long ns);

#endif
