/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CM_INT_H
#define DROCE_CM_INT_H

/* What droce_cm.c (table, consumer calls, timers) and droce_cm_rx.c (received MADs) share. */
#include "droce_cm.h"

struct droce_cm_conn *droce_cm_conn_new(struct droce_cm *cm, const uint8_t gid[16]);
void droce_cm_conn_free(struct droce_cm *cm, struct droce_cm_conn *c);
struct droce_cm_conn *droce_cm_by_comm_id(struct droce_cm *cm, uint32_t local_comm_id);
struct droce_cm_conn *droce_cm_by_peer(struct droce_cm *cm, uint32_t remote_comm_id,
				       const uint8_t gid[16]);
void droce_cm_hash_add(struct droce_cm *cm, struct droce_cm_conn *c);

/* Build m into c->mad and send it; owed: resend until answered (c's timeout and retries). */
int droce_cm_send(struct droce_cm *cm, struct droce_cm_conn *c, const struct droce_cm_msg *m,
		  bool owed, uint64_t now_ns);
void droce_cm_resend(struct droce_cm *cm, struct droce_cm_conn *c);
/* A message of c's connection: attribute, transaction, both comm IDs. */
void droce_cm_msg_init(struct droce_cm_msg *m, uint16_t attr, uint64_t tid,
		       const struct droce_cm_conn *c);
int droce_cm_send_rej(struct droce_cm *cm, struct droce_cm_conn *c, uint8_t msg_rejected,
		      uint16_t reason, const void *ari, uint8_t ari_len, const void *priv,
		      uint8_t priv_len, uint64_t now_ns);
int droce_cm_send_dreq(struct droce_cm *cm, struct droce_cm_conn *c, const void *priv,
		       uint8_t priv_len, uint64_t now_ns);
void droce_cm_timewait(struct droce_cm *cm, struct droce_cm_conn *c, uint64_t now_ns);
int droce_cm_emit(struct droce_cm *cm, struct droce_cm_conn *c, enum droce_cm_event ev,
		  const struct droce_cm_msg *m);
uint16_t droce_cm_last_attr(const struct droce_cm_conn *c); /* of c->mad */

#endif /* DROCE_CM_INT_H */
