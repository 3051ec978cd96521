/* SPDX-License-Identifier: BSD-3-Clause */
/* Congestion-control plugins (why: droce_rt_cc_plugin.h). */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "droce_cc.h"
#include "droce_rt_cc_plugin.h"
#include "droce_rt_err.h"

typedef int (*plugin_init_fn)(const struct droce_cc_plugin_api *api, struct droce_cc_registry *reg);

int
droce_rt_cc_plugin_load(const char *path, struct droce_cc_registry *reg, const char *cc, char *err,
			size_t errlen)
{
	char names[256];
	plugin_init_fn init;
	void *h, *sym;
	int rc;

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		return droce_rt_errf(
			-ENOENT, err, errlen,
			"cc_plugin %s cannot be loaded (%s): give the path of a shared object "
			"built with -shared -fPIC (DROCE_CC_PLUGIN)",
			path, dlerror());
	sym = dlsym(h, DROCE_CC_PLUGIN_INIT);
	if (sym == NULL) {
		dlclose(h);
		return droce_rt_errf(-ENOENT, err, errlen,
				     "cc_plugin %s exports no %s(): see stack/droce_cc.h and "
				     "tools/cc-plugins for an example",
				     path, DROCE_CC_PLUGIN_INIT);
	}
	/* ISO C has no function-pointer cast from void *; POSIX guarantees this copy works */
	memcpy(&init, &sym, sizeof(init));
	rc = init(&droce_cc_plugin_api, reg);
	if (rc != 0) {
		/* its ops may be registered already: the object stays */
		return droce_rt_errf(
			rc < 0 ? rc : -EINVAL, err, errlen,
			"cc_plugin %s: %s() failed (%s): see the plugin's own message above, "
			"if any",
			path, DROCE_CC_PLUGIN_INIT, strerror(rc < 0 ? -rc : EINVAL));
	}
	if (cc != NULL && droce_cc_find(reg, cc) == NULL)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"cc %s is not among the congestion controls after loading %s (%s): "
			"set DROCE_CC to one of them",
			cc, path, droce_cc_names(reg, names, sizeof(names)));
	return 0; /* h stays open: QPs run its code until the process ends */
}
