/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles for UD: the GRH fields of struct ibv_ah_attr become the engine's address
 * vector, whose destination MAC the runtime resolves (ARP/ND) once, at creation. A reply's
 * address comes from the 40-byte GRH area the engine writes ahead of a UD payload: the IPv6
 * header, or the IPv4 header in its last 20 bytes (RoCEv2, IBTA A17.4.5.1).
 */
#include <stdlib.h>
#include <string.h>

#include "droce_pkt.h"
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
	/* On RoCE the kernel replaces a unicast destination's hop limit with the route's, for
	 * QPs and AHs alike: ibv_rc_pingpong asks 1, which would be TTL 1 on the wire and die
	 * at the first router of a routed RoCEv2 network. A multicast one is the program's. */
	av->hop_limit = droce_gid_is_multicast(g->dgid.raw) ? g->hop_limit : DROCE_SHIM_HOP_LIMIT;
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

/* Our GID index holding gid, or -1. */
static int
shim_gid_index(const struct droce_shim_dev *d, const uint8_t *gid)
{
	unsigned int i;

	droce_shim_gids_refresh(d);
	for (i = 0; i < d->num_gids; i++)
		if (memcmp(d->gids[i], gid, 16) == 0)
			return (int)i;
	return -1;
}

/* Our first GID of gid's IP family, or -1: the source for answering a group's datagram. */
static int
shim_gid_family(const struct droce_shim_dev *d, const uint8_t *gid)
{
	unsigned int i;

	droce_shim_gids_refresh(d);
	for (i = 0; i < d->num_gids; i++)
		if (droce_gid_is_v4(d->gids[i]) == droce_gid_is_v4(gid))
			return (int)i;
	return -1;
}

int
ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
		    struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	const uint8_t *g = (const uint8_t *)grh, *ip4 = g + 20;
	uint8_t src[16] = { [10] = 0xff, [11] = 0xff }, dst[16] = { [10] = 0xff, [11] = 0xff };
	int idx;

	memset(ah_attr, 0, sizeof(*ah_attr));
	if (!(wc->wc_flags & IBV_WC_GRH) || port_num != DROCE_SHIM_PORT) {
		errno = EINVAL; /* RoCE: no address without the GRH */
		return -1;
	}
	if (g[0] >> 4 == 6) {
		memcpy(src, g + 8, 16);
		memcpy(dst, g + 24, 16);
		ah_attr->grh.traffic_class = (uint8_t)((g[0] << 4) | (g[1] >> 4));
		ah_attr->grh.flow_label = (uint32_t)(g[1] & 0xf) << 16 | (uint32_t)g[2] << 8 | g[3];
	} else if (ip4[0] >> 4 == 4) {
		memcpy(src + 12, ip4 + 12, 4);
		memcpy(dst + 12, ip4 + 16, 4);
		ah_attr->grh.traffic_class = ip4[1];
	} else {
		errno = EINVAL;
		return -1;
	}
	idx = shim_gid_index(droce_shim_ctx(context)->dev, dst);
	if (idx < 0 && droce_gid_is_multicast(dst))
		idx = shim_gid_family(droce_shim_ctx(context)->dev, dst); /* to a group */
	if (idx < 0) {
		errno = ENOENT; /* not sent to one of our GIDs */
		return -1;
	}
	memcpy(ah_attr->grh.dgid.raw, src, 16); /* the reply goes back to the sender */
	ah_attr->grh.sgid_index = (uint8_t)idx;
	ah_attr->grh.hop_limit = 64;
	ah_attr->is_global = 1;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	return 0;
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a) != 0)
		return NULL;
	return ibv_create_ah(pd, &a);
}

/* The MAC (by the runtime's ARP/ND) behind an address vector; no VLAN (0xffff). */
int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	struct droce_av av;
	int rc = droce_shim_av(&av, attr);

	if (rc == 0 && droce_shim_rt(droce_shim_ctx(context)->dev) == NULL)
		rc = -ENODEV;
	if (rc == 0)
		rc = droce_shim_resolve(&av);
	if (rc != 0)
		return droce_shim_fail(-rc);
	memcpy(eth_mac, av.dmac, ETHERNET_LL_SIZE);
	if (vid != NULL) /* 0xffff: untagged, as rdma-core reports no VLAN */
		*vid = av.has_vlan ? (uint16_t)(av.vlan_tci & 0x0fff) : 0xffff;
	return 0;
}
