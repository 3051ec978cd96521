/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef GLUE_CHILD_H
#define GLUE_CHILD_H

/*
 * EAL starts once per process: a test case that opens a runtime runs it in a forked child,
 * bounded by alarm(), and gets what the child saw back through a pipe.
 */
#include <stddef.h>

/*
 * fn(out, arg) in a child that dies after `seconds`; out (size bytes, zeroed first) holds what
 * it wrote there. Returns 0 when the child sent out whole and exited 0, -EPIPE when nothing
 * (or part) came back, -ECHILD when it came back but the child then failed.
 */
int glue_in_child(void (*fn)(void *out, const void *arg), const void *arg, void *out, size_t size,
		  unsigned int seconds);

/*
 * fn() in a child that dumps no core and dies after `seconds`, exiting with fn's result.
 * Returns the child's wait status (for a case that may die of a signal), or -errno.
 */
int glue_child_status(int (*fn)(void), unsigned int seconds);

#endif /* GLUE_CHILD_H */
