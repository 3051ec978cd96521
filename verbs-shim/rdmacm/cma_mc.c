/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast on rdma_cm ids (RDMA_PS_UDP): on RoCE a group is its IP multicast address, joined
 * without a subnet manager. The group's GID is the address itself (IPv4 as ::ffff:a.b.c.d,
 * RoCEv2), the id's QP is attached to it unless the join is send-only, and MULTICAST_JOIN
 * reports what a sender needs: an AH to the group, DestQP 0xFFFFFF and the rdma_cm Q_Key, as
 * the kernel's rdma_cm does for RoCE. A full member's join also joins the host interface
 * behind the port to the group (the kernel then sends IGMP / MLD reports for it, as it does
 * for a kernel RoCE device's joins), so that snooping switches forward the group here; a
 * port without one (memif) has nobody to report to.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"
#include "droce_shim_gsi.h"

#define CMA_MC_QPN 0xFFFFFFu

static bool
is_group(const uint8_t g[16])
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(g, v4, 12) == 0)
		return (g[12] & 0xF0) == 0xE0; /* 224.0.0.0/4 */
	return g[0] == 0xFF;		       /* ff00::/8 */
}

/* What a join did, undone: the QP detached (unless rdma_destroy_qp did it already), the host
 * interface's membership left. */
static void
mc_undo(struct cma_id *c, struct cma_mc *mc)
{
	if (mc->attached && c->id.qp != NULL)
		ibv_detach_mcast(c->id.qp, (const union ibv_gid *)mc->mgid, 0);
	if (mc->reported)
		droce_shim_mcast_report(c->id.verbs, (const union ibv_gid *)mc->mgid, 0);
	free(mc);
}

static struct cma_mc **
find(struct cma_id *c, const uint8_t mgid[16])
{
	struct cma_mc **pp;

	for (pp = &c->mcs; *pp != NULL; pp = &(*pp)->next)
		if (memcmp((*pp)->mgid, mgid, 16) == 0)
			return pp;
	return NULL;
}

static int
join(struct rdma_cm_id *id, const struct sockaddr *addr, bool send_only, void *context)
{
	struct cma_id *c = cma_id_live(id);
	struct rdma_ud_param u;
	struct cma_mc *mc;
	uint8_t mgid[16];
	int rc;

	if (c == NULL || addr == NULL || cma_gid_of(addr, mgid) != 0 || !is_group(mgid))
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	/* The id must have its local address (rdma_bind_addr / rdma_resolve_addr), of the
	 * group's family: that is the GID the datagrams leave from. */
	if (c->state == CMA_IDLE || c->id.qp_type != IBV_QPT_UD ||
	    c->id.route.addr.src_addr.sa_family != addr->sa_family) {
		rc = -EINVAL;
		goto out;
	}
	if (find(c, mgid) != NULL) {
		rc = -EADDRINUSE; /* as the kernel: one join per group and id */
		goto out;
	}
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(&mc->addr, addr, cma_sa_len(addr));
	memcpy(mc->mgid, mgid, 16);
	mc->context = context;
	if (c->id.qp != NULL && !send_only) {
		if (ibv_attach_mcast(c->id.qp, (const union ibv_gid *)mgid, 0) != 0) {
			rc = -errno;
			free(mc);
			goto out;
		}
		mc->attached = true;
	}
	if (!send_only) {
		rc = droce_shim_mcast_report(c->id.verbs, (const union ibv_gid *)mgid, 1);
		if (rc != 0 && rc != -ENODEV) {
			if (mc->attached)
				ibv_detach_mcast(c->id.qp, (const union ibv_gid *)mgid, 0);
			free(mc);
			goto out;
		}
		mc->reported = rc == 0;
	}
	memset(&u, 0, sizeof(u));
	u.private_data = context; /* librdmacm hands the join's context back here */
	u.qp_num = CMA_MC_QPN;
	u.qkey = RDMA_UDP_QKEY;
	u.ah_attr.is_global = 1;
	memcpy(u.ah_attr.grh.dgid.raw, mgid, 16);
	u.ah_attr.grh.sgid_index = (uint8_t)c->sgid_index;
	u.ah_attr.grh.hop_limit = 64;
	u.ah_attr.grh.traffic_class = c->tos;
	u.ah_attr.port_num = 1;
	mc->next = c->mcs;
	c->mcs = mc;
	rc = cma_queue_ud_event(c, RDMA_CM_EVENT_MULTICAST_JOIN, 0, &u);
out:
	pthread_mutex_unlock(&cma_lock);
	if (rc == 0 && c->own_ch != NULL)
		rc = cma_sync_wait(c, RDMA_CM_EVENT_MULTICAST_JOIN, NULL);
	return cma_errno(rc);
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	return join(id, addr, false, context);
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	const uint32_t known = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;

	if (attr == NULL || (attr->comp_mask & ~known) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS))
		return cma_errno(-EINVAL);
	if (attr->join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
	    attr->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
		return cma_errno(-EINVAL);
	return join(id, attr->addr, attr->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,
		    context);
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *c = cma_id_live(id);
	struct cma_mc **pp, *mc;
	uint8_t mgid[16];
	int rc = 0;

	if (c == NULL || addr == NULL || cma_gid_of(addr, mgid) != 0)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	pp = find(c, mgid);
	if (pp == NULL) {
		rc = -EADDRNOTAVAIL;
	} else {
		mc = *pp;
		*pp = mc->next;
		mc_undo(c, mc);
	}
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

void
cma_mc_free_all(struct cma_id *c)
{
	struct cma_mc *mc;

	while ((mc = c->mcs) != NULL) {
		c->mcs = mc->next;
		mc_undo(c, mc);
	}
}
