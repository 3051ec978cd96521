/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_PORTD_H
#define DROCE_RT_PORTD_H

/*
 * A program on a port droce-portd owns (tools/droce-portd): the runtime asks the service for a
 * slot and reaches the port through a memif to it. Plain C, no EAL.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_rt_config.h"

/*
 * Ask the service droce_rt_config_portd(cfg) names for a slot and point cfg at it: the memif
 * (vdev), the port's MAC, IPv4 address and MTU. Returns the connection (>= 0), which the
 * program keeps open for its life (closing it frees the slot); -ENOENT when no service is to be
 * used (portd off, or auto and none answers: the one-process mode); any other -errno with err
 * filled (a service named by path that does not answer, every slot held, shards > 1).
 */
int droce_rt_portd_attach(struct droce_rt_config *cfg, uint32_t *slot, uint32_t *slot_bits,
			  char *err, size_t errlen);

/*
 * The port's addresses from the service, without a slot: cfg's MAC, IPv4 address and MTU as
 * droce_rt_portd_attach() would set them (the verbs shim lists its device before the runtime
 * opens). 0, -ENOENT (no service to use), or another -errno with err filled.
 */
int droce_rt_portd_query(struct droce_rt_config *cfg, char *err, size_t errlen);

struct droce_rt;

/* Under droce-portd, rt's slot and the service's slot bits: 0, or -ENOENT (the port is its own). */
int droce_rt_portd_slot(const struct droce_rt *rt, uint32_t *slot, uint32_t *slot_bits);

/* Tell the service that rt's CM listens (on) or stops listening (!on) on a CM service ID: it
 * hands rt the REQs and SIDR_REQs for it. 0, -ENOENT (no service), or -errno of the send. */
int droce_rt_portd_listen(struct droce_rt *rt, uint64_t service_id, bool on);

#endif
