/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime's one-line error reports. */
#include <stdarg.h>
#include <stdio.h>

#include "droce_rt_err.h"

int
droce_rt_errf(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}
