/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_ERR_H
#define DROCE_RT_ERR_H

#include <stddef.h>

/* Write the one-line reason into err (when there is room) and return rc: every runtime step
 * that can fail reports this way, so callers print one line instead of an EAL dump. */
int droce_rt_errf(int rc, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* DROCE_RT_ERR_H */
