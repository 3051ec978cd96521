/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles for UD: the GRH fields of struct ibv_ah_attr become the engine's address
 * vector, whose destination MAC the runtime resolves (ARP/ND) once, at creation.
 */
#include <stdlib.h>
#include <string.h>

#include "droce_shim.h"

struct shim_ah_req {
	struct droce_pd *pd;
	struct droce_av av;
	struct droce_ah *ah;
};

static int
shim_ah_create_fn(struct droce_rt *rt, void *arg)
{
	struct shim_ah_req *r = arg;
	int err = 0;

	(void)rt;
	r->ah = droce_ah_create(r->pd, &r->av, &err);
	return r->ah != NULL ? 0 : -err;
}

static int
shim_ah_destroy_fn(struct droce_rt *rt, void *arg)
{
	(void)rt;
	return droce_ah_destroy(((struct shim_ah_req *)arg)->ah);
}

/* The GRH part of an ibv_ah_attr as the engine's address vector (MAC not resolved). */
int
droce_shim_av(struct droce_av *av, const struct ibv_ah_attr *a)
{
	const struct ibv_global_route *g = &a->grh;

	/* RoCE addresses by GID: every packet carries the GRH (IBTA A17.4.5.1) */
	if (!a->is_global)
		return -EINVAL;
	if (a->port_num != 0 && a->port_num != DROCE_SHIM_PORT)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, g->dgid.raw, 16);
	av->sgid_index = g->sgid_index;
	av->traffic_class = g->traffic_class;
	av->hop_limit = g->hop_limit;
	av->flow_label = g->flow_label;
	return 0;
}

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct shim_ah_req r = { .pd = ((struct droce_shim_pd *)pd)->epd };
	struct droce_shim_ah *ah;
	int rc = droce_shim_av(&r.av, attr);

	if (rc == 0)
		rc = droce_shim_resolve(&r.av);
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = droce_shim_call(shim_ah_create_fn, &r);
	if (rc != 0) {
		free(ah);
		errno = -rc;
		return NULL;
	}
	ah->eah = r.ah;
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	return &ah->ah;
}

int
ibv_destroy_ah(struct ibv_ah *ah)
{
	struct droce_shim_ah *a = (struct droce_shim_ah *)ah;
	struct shim_ah_req r = { .ah = a->eah };
	int rc = droce_shim_call(shim_ah_destroy_fn, &r);

	if (rc != 0)
		return droce_shim_fail(-rc);
	free(a);
	return 0;
}
