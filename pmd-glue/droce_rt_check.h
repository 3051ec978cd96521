/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_CHECK_H
#define DROCE_RT_CHECK_H

/*
 * Checks run before rte_eal_init so a mis-set machine fails with one line naming the cause and
 * the fix, not an EAL log. No EAL: the system files are parameters so tests can craft them.
 */
#include <stddef.h>

#include "droce_rt_config.h"

struct droce_rt_sys {
	const char *mounts;	   /* "/proc/mounts" */
	const char *hugepages_dir; /* "/sys/kernel/mm/hugepages" */
	const char *status;	   /* "/proc/self/status" (CapEff) */
};

/* The running system's paths. */
void droce_rt_sys_default(struct droce_rt_sys *sys);

/* Hugepages in use (no --no-huge): hugetlbfs mounted, writable by us, with free pages. */
int droce_rt_check_hugepages(const struct droce_rt_config *cfg, const struct droce_rt_sys *sys,
			     char *err, size_t errlen);

/* Each af_packet/af_xdp vdev (config vdev or --vdev in eal): iface= exists, we hold the
 * capability the PMD needs. Other PMDs pass. */
int droce_rt_check_vdevs(const struct droce_rt_config *cfg, const struct droce_rt_sys *sys,
			 char *err, size_t errlen);

/* droce_rt_config_validate + the two above: everything knowable before EAL. */
int droce_rt_preflight(const struct droce_rt_config *cfg, const struct droce_rt_sys *sys, char *err,
		       size_t errlen);

#endif /* DROCE_RT_CHECK_H */
