/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_SHIM_GSI_H
#define DROCE_SHIM_GSI_H

/*
 * Private entry points of the verbs shim, for the in-tree librdmacm replacement
 * (verbs-shim/rdmacm/): it exchanges IB CM MADs over the GSI, QP1, as RoCE devices do, and
 * verbs have no call that creates QP1 (the kernel's MAD layer owns it); and it joins
 * multicast groups on the host interface, as the kernel's rdma_cm does. Exported by
 * libibverbs.so.1 and the LD_PRELOAD library in a version node of their own, DROCE_SHIM_1.0,
 * outside libibverbs' IBVERBS_* ABI.
 */
#include <infiniband/verbs.h>

/*
 * The device's GSI (IBTA 11.2.5 Get Special QP; Annex A17.5.8: a RoCEv2 port's only special
 * QP): an ordinary shim QP of type UD whose qp_num is 1, on the engine device of shard 0 (the
 * one every shim object lives on; the runtime steers DestQP 1 there). attr as for
 * ibv_create_qp(), qp_type IBV_QPT_UD; attr->cap is updated. Use it like any UD QP:
 * ibv_modify_qp to INIT (qkey 0x80010000, the well-known GSI Q_Key), RTR and RTS, post sends
 * with an AH, remote_qpn 1 and remote_qkey 0x80010000, post receives (40-byte GRH area
 * first), poll its CQs, ibv_destroy_qp (after which it can be created again).
 * NULL and errno on failure: EBUSY while one exists, EINVAL for a NULL pd/attr or a type
 * other than UD, otherwise as ibv_create_qp() (ENOMEM, ENODEV without a runtime).
 */
struct ibv_qp *droce_shim_create_gsi_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);

/*
 * Join (join non-zero) or leave the IP multicast group gid (::ffff:a.b.c.d or ff00::/8) on the
 * host interface behind context's port, so that the kernel sends IGMP / MLD reports for it
 * (droce_rt_mcast_report): what rdma_join_multicast does for a full member on a kernel RoCE
 * device. 0, -ENODEV when the port has no host interface (memif: nothing to report to), or
 * another -errno.
 */
int droce_shim_mcast_report(struct ibv_context *context, const union ibv_gid *gid, int join);

/*
 * Under droce-portd (the port shared by several programs, each its own CM on QP1): the top bits
 * every local comm ID of this process must carry (*prefix in the top *bits), by which the
 * service routes the CM's MADs to it; and its listens (service_id on or off), by which it routes
 * REQs and SIDR_REQs. 0; -ENOENT when the port is the process's own (nothing to do); -ENODEV
 * without a runtime; another -errno.
 */
int droce_shim_cm_id_prefix(struct ibv_context *context, uint32_t *prefix, uint32_t *bits);
int droce_shim_cm_listen(struct ibv_context *context, uint64_t service_id, int on);

#endif /* DROCE_SHIM_GSI_H */
