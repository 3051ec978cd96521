/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_SHIM_STUB_H
#define DROCE_SHIM_STUB_H

/*
 * Bodies of the generated stubs (droce_shim_stubs.c, see gen_abi.py). A stub takes no
 * parameters: on x86-64 the caller's arguments are simply ignored, and only the return
 * register matters (int-returning verbs report an errno value, pointer-returning ones NULL,
 * the few whose failure is negative -1).
 */
#include <stddef.h>

/* Sets errno to EOPNOTSUPP, names the symbol on stderr when DROCE_SHIM_DEBUG is set, and
 * returns EOPNOTSUPP. */
int droce_shim_unsupported(const char *what);

#define DROCE_STUB_INT(fn, what) \
	int fn(void); \
	int fn(void) \
	{ \
		return droce_shim_unsupported(what); \
	}

#define DROCE_STUB_NEG(fn, what) \
	int fn(void); \
	int fn(void) \
	{ \
		droce_shim_unsupported(what); \
		return -1; \
	}

#define DROCE_STUB_PTR(fn, what) \
	void *fn(void); \
	void *fn(void) \
	{ \
		droce_shim_unsupported(what); \
		return NULL; \
	}

#endif /* DROCE_SHIM_STUB_H */
