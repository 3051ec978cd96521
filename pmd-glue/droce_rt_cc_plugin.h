/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_CC_PLUGIN_H
#define DROCE_RT_CC_PLUGIN_H

#include <stddef.h>

#include "droce_cc.h"

/*
 * The `cc_plugin` key: dlopen() a shared object, call its droce_cc_plugin_init() with the
 * engine's table (stack/droce_cc.h) and the registry reg it fills, then check that `cc` names
 * an algorithm of reg or a built-in one. The object
 * stays loaded for the life of the process (its ops outlive every QP); loading the same path
 * again is harmless. 0, or -errno with one line in err naming the cause and the fix.
 */
int droce_rt_cc_plugin_load(const char *path, struct droce_cc_registry *reg, const char *cc,
			    char *err, size_t errlen);

#endif
