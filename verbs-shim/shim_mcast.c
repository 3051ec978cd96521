/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast: ibv_attach_mcast / ibv_detach_mcast join a UD QP to a group's GID on the
 * engine (droce_mcast_attach). RoCE has no subnet manager: the group is the IP multicast
 * address itself, the LID is ignored, and the port (allmulticast) receives every group's
 * frames; senders address the group with an AH to its GID and DestQP 0xFFFFFF. Beside them,
 * the rdma_cm replacement's other ties to the port: IGMP/MLD reports, and under droce-portd the
 * comm ID prefix and listens by which the service routes QP1's MADs (droce_shim_gsi.h).
 */
#include <errno.h>
#include <string.h>

#include "droce_rt.h"
#include "droce_rt_portd.h"
#include "droce_shim.h"
#include "droce_shim_gsi.h"

struct shim_mcast_req {
	struct droce_qp *qp;
	uint8_t gid[16];
	bool attach;
};

static int
shim_mcast_fn(struct droce_rt *rt, void *arg)
{
	struct shim_mcast_req *r = arg;

	(void)rt;
	return r->attach ? droce_mcast_attach(r->qp, r->gid) : droce_mcast_detach(r->qp, r->gid);
}

static int
shim_mcast(struct ibv_qp *qp, const union ibv_gid *gid, bool attach)
{
	struct shim_mcast_req r = { .attach = attach };
	int rc;

	if (qp == NULL || gid == NULL)
		return droce_shim_fail(EINVAL);
	r.qp = ((struct droce_shim_qp *)qp)->eqp;
	memcpy(r.gid, gid->raw, 16);
	rc = droce_shim_call(shim_mcast_fn, &r);
	return rc != 0 ? droce_shim_fail(-rc) : 0;
}

int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid; /* RoCE: no multicast LIDs */
	return shim_mcast(qp, gid, true);
}

int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	return shim_mcast(qp, gid, false);
}

/* The host interface's membership, for the librdmacm replacement (droce_shim_gsi.h). */
int
droce_shim_mcast_report(struct ibv_context *context, const union ibv_gid *gid, int join)
{
	struct droce_rt *rt;

	if (context == NULL || gid == NULL)
		return -EINVAL;
	rt = droce_shim_rt(droce_shim_ctx(context)->dev);
	if (rt == NULL)
		return -ENODEV;
	return droce_rt_mcast_report(rt, gid->raw, join != 0);
}

int
droce_shim_cm_id_prefix(struct ibv_context *context, uint32_t *prefix, uint32_t *bits)
{
	struct droce_rt *rt;

	if (context == NULL || prefix == NULL || bits == NULL)
		return -EINVAL;
	rt = droce_shim_rt(droce_shim_ctx(context)->dev);
	if (rt == NULL)
		return -ENODEV;
	return droce_rt_portd_slot(rt, prefix, bits);
}

int
droce_shim_cm_listen(struct ibv_context *context, uint64_t service_id, int on)
{
	struct droce_rt *rt;

	if (context == NULL)
		return -EINVAL;
	rt = droce_shim_rt(droce_shim_ctx(context)->dev);
	if (rt == NULL)
		return -ENODEV;
	return droce_rt_portd_listen(rt, service_id, on != 0);
}
