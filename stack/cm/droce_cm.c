/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IB CM's connection table, the consumer's calls and the timers (IBTA 12.9). Received MADs
 * are droce_cm_rx.c's.
 */
#include <errno.h>
#include <string.h>

#include "droce_cm_int.h"
#include "../wire/droce_cm.h"

#define NS_PER_MS 1000000ull

void
droce_cm_params_default(struct droce_cm_params *p)
{
	memset(p, 0, sizeof(*p));
	p->mra_service_timeout = 24; /* ~69 s, kernel rdma_cm's CMA_CM_MRA_SETTING */
	p->no_listener_retries = 8;
	p->no_listener_delay_ns = 250 * NS_PER_MS;
	/* longer than a peer's REQ resends (16 x 268 ms): a REQ we refused meets its REJ */
	p->timewait_ns = 5000 * NS_PER_MS;
	p->sidr_retries = 15;
	p->sidr_timeout = 16; /* 268 ms */
}

uint64_t
droce_cm_time_ns(uint8_t t)
{
	/* IBTA 12.6.5: 4.096 us * 2^t; t is a 5-bit field */
	return 4096ull << (t & 31);
}

int
droce_cm_init(struct droce_cm *cm, struct droce_cm_conn *conns, uint32_t n,
	      const struct droce_cm_ops *ops, void *ctx, const struct droce_cm_params *p,
	      uint64_t seed)
{
	uint32_t i;

	if (cm == NULL || conns == NULL || ops == NULL || ops->send == NULL || ops->event == NULL ||
	    n == 0 || n > (1u << 16) || (n & (n - 1)) != 0)
		return -EINVAL;
	memset(cm, 0, sizeof(*cm));
	memset(conns, 0, sizeof(*conns) * n);
	cm->conns = conns;
	cm->n = n;
	while ((1u << cm->idx_bits) < n)
		cm->idx_bits++;
	cm->ops = *ops;
	cm->ctx = ctx;
	if (p != NULL)
		cm->p = *p;
	else
		droce_cm_params_default(&cm->p);
	cm->tid_next = seed;
	for (i = 0; i < n; i++) {
		conns[i].hash_head = -1;
		conns[i].hash_next = -1;
		conns[i].free_next = i + 1 < n ? (int32_t)(i + 1) : -1;
		conns[i].gen = (uint16_t)(seed >> 16) + (uint16_t)i;
	}
	cm->free_head = 0;
	return 0;
}

int
droce_cm_set_id_prefix(struct droce_cm *cm, uint32_t prefix, unsigned int bits)
{
	/* the index and a generation bit must fit below the prefix */
	if (bits > 31 - cm->idx_bits || prefix >> bits != 0)
		return -EINVAL;
	cm->id_prefix = prefix;
	cm->id_prefix_bits = (uint8_t)bits;
	return 0;
}

static uint32_t
hash_of(const struct droce_cm *cm, uint32_t remote_comm_id, const uint8_t gid[16])
{
	uint32_t h = remote_comm_id * 2654435761u;
	unsigned int i;

	for (i = 0; i < 16; i++)
		h = (h ^ gid[i]) * 16777619u;
	return h & (cm->n - 1);
}

struct droce_cm_conn *
droce_cm_conn_new(struct droce_cm *cm, const uint8_t gid[16])
{
	struct droce_cm_conn *c;
	uint32_t idx, low;
	int32_t hh;
	uint16_t gen;

	if (cm->free_head < 0)
		return NULL;
	idx = (uint32_t)cm->free_head;
	c = &cm->conns[idx];
	cm->free_head = c->free_next;
	hh = c->hash_head; /* the bucket's, not the slot's: kept */
	gen = (uint16_t)(c->gen + 1);
	memset(c, 0, sizeof(*c));
	c->hash_head = hh;
	c->hash_next = -1;
	c->free_next = -1;
	c->gen = gen;
	/* Never 0 (a REJ with no connection behind it carries 0) and stale IDs miss; the top
	 * bits, when set, are the prefix (droce_cm_set_id_prefix). */
	low = ((uint32_t)gen << cm->idx_bits | idx) & (UINT32_MAX >> cm->id_prefix_bits);
	if (low >> cm->idx_bits == 0)
		low |= 1u << cm->idx_bits;
	c->local_comm_id = low;
	if (cm->id_prefix_bits != 0)
		c->local_comm_id |= cm->id_prefix << (32 - cm->id_prefix_bits);
	memcpy(c->peer_gid, gid, 16);
	return c;
}

static void
hash_del(struct droce_cm *cm, struct droce_cm_conn *c)
{
	int32_t self = (int32_t)(c - cm->conns);
	int32_t *pp;

	if (c->active || c->remote_comm_id == 0)
		return;
	pp = &cm->conns[hash_of(cm, c->remote_comm_id, c->peer_gid)].hash_head;
	while (*pp >= 0) {
		if (*pp == self) {
			*pp = c->hash_next;
			return;
		}
		pp = &cm->conns[*pp].hash_next;
	}
}

void
droce_cm_hash_add(struct droce_cm *cm, struct droce_cm_conn *c)
{
	struct droce_cm_conn *b = &cm->conns[hash_of(cm, c->remote_comm_id, c->peer_gid)];

	c->hash_next = b->hash_head;
	b->hash_head = (int32_t)(c - cm->conns);
}

void
droce_cm_conn_free(struct droce_cm *cm, struct droce_cm_conn *c)
{
	if (c->state == DROCE_CM_IDLE)
		return; /* freed already: the consumer released it from an event */
	hash_del(cm, c);
	c->state = DROCE_CM_IDLE;
	c->deadline_ns = 0;
	c->user = NULL;
	c->owned = false;
	c->free_next = cm->free_head;
	cm->free_head = (int32_t)(c - cm->conns);
}

struct droce_cm_conn *
droce_cm_by_comm_id(struct droce_cm *cm, uint32_t local_comm_id)
{
	struct droce_cm_conn *c = &cm->conns[local_comm_id & (cm->n - 1)];

	return c->state != DROCE_CM_IDLE && c->local_comm_id == local_comm_id ? c : NULL;
}

struct droce_cm_conn *
droce_cm_by_peer(struct droce_cm *cm, uint32_t remote_comm_id, const uint8_t gid[16])
{
	int32_t i = cm->conns[hash_of(cm, remote_comm_id, gid)].hash_head;

	for (; i >= 0; i = cm->conns[i].hash_next) {
		struct droce_cm_conn *c = &cm->conns[i];

		if (c->remote_comm_id == remote_comm_id && memcmp(c->peer_gid, gid, 16) == 0)
			return c;
	}
	return NULL;
}

uint16_t
droce_cm_last_attr(const struct droce_cm_conn *c)
{
	return droce_get_be16(c->mad + offsetof(struct droce_mad_hdr, attr_id));
}

int
droce_cm_send(struct droce_cm *cm, struct droce_cm_conn *c, const struct droce_cm_msg *m, bool owed,
	      uint64_t now_ns)
{
	int rc = droce_cm_msg_build(m, c->mad);

	if (rc != 0)
		return rc;
	c->retries_left = owed ? c->max_retries : 0;
	c->deadline_ns = owed ? now_ns + c->timeout_ns : 0;
	cm->sent++;
	cm->ops.send(cm->ctx, c, c->peer_gid, c->mad);
	return 0;
}

void
droce_cm_resend(struct droce_cm *cm, struct droce_cm_conn *c)
{
	cm->resent++;
	cm->ops.send(cm->ctx, c, c->peer_gid, c->mad);
}

void
droce_cm_msg_init(struct droce_cm_msg *m, uint16_t attr, uint64_t tid,
		  const struct droce_cm_conn *c)
{
	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = tid;
	m->local_comm_id = c->local_comm_id;
	m->remote_comm_id = c->remote_comm_id;
}

static void
set_priv(struct droce_cm_msg *m, const void *priv, uint8_t len)
{
	size_t max = droce_cm_msg_priv_max(m->attr);

	if (len > max)
		len = (uint8_t)max;
	if (len != 0)
		memcpy(m->private_data, priv, len);
	m->private_data_len = len;
}

int
droce_cm_send_rej(struct droce_cm *cm, struct droce_cm_conn *c, uint8_t msg_rejected,
		  uint16_t reason, const void *ari, uint8_t ari_len, const void *priv,
		  uint8_t priv_len, uint64_t now_ns)
{
	struct droce_cm_msg m;

	droce_cm_msg_init(&m, DROCE_CM_ATTR_REJ, c->tid, c);
	m.msg_rejected = msg_rejected;
	m.reason = reason;
	if (ari_len > DROCE_CM_ARI_SIZE)
		ari_len = DROCE_CM_ARI_SIZE;
	if (ari_len != 0)
		memcpy(m.ari, ari, ari_len);
	m.ari_len = ari_len;
	set_priv(&m, priv, priv_len);
	return droce_cm_send(cm, c, &m, false, now_ns);
}

int
droce_cm_send_dreq(struct droce_cm *cm, struct droce_cm_conn *c, const void *priv, uint8_t priv_len,
		   uint64_t now_ns)
{
	struct droce_cm_msg m;

	c->tid = cm->tid_next++;
	droce_cm_msg_init(&m, DROCE_CM_ATTR_DREQ, c->tid, c);
	m.local_qpn = c->remote_qpn; /* IBTA 12.6.9: a DREQ names the receiver's QP */
	set_priv(&m, priv, priv_len);
	c->state = DROCE_CM_DREQ_SENT;
	return droce_cm_send(cm, c, &m, true, now_ns);
}

void
droce_cm_timewait(struct droce_cm *cm, struct droce_cm_conn *c, uint64_t now_ns)
{
	c->state = DROCE_CM_TIMEWAIT;
	c->retries_left = 0;
	c->deadline_ns = now_ns + cm->p.timewait_ns;
	if (c->deadline_ns == 0)
		c->deadline_ns = 1;
}

int
droce_cm_emit(struct droce_cm *cm, struct droce_cm_conn *c, enum droce_cm_event ev,
	      const struct droce_cm_msg *m)
{
	if (c != NULL && !c->owned)
		return 0; /* released: nobody to tell */
	return cm->ops.event(cm->ctx, c, ev, m);
}

/*
 * Start an active exchange on c (a REQ or a SIDR_REQ in req, its timer and retries set): a new
 * transaction, sent once now and again on each timeout. On failure c is freed.
 */
static int
cm_start(struct droce_cm *cm, struct droce_cm_conn *c, struct droce_cm_msg *req, void *user,
	 enum droce_cm_state state, uint64_t now_ns, struct droce_cm_conn **out)
{
	int rc;

	c->active = true;
	c->owned = true;
	c->user = user;
	c->tid = cm->tid_next++;
	req->tid = c->tid;
	req->local_comm_id = c->local_comm_id; /* for SIDR, the RequestID */
	rc = droce_cm_send(cm, c, req, true, now_ns);
	if (rc != 0) {
		droce_cm_conn_free(cm, c);
		return rc;
	}
	c->state = state;
	*out = c;
	return 0;
}

int
droce_cm_connect(struct droce_cm *cm, const uint8_t gid[16], struct droce_cm_msg *req, void *user,
		 uint64_t now_ns, struct droce_cm_conn **out)
{
	struct droce_cm_conn *c;

	if (req->max_cm_retries > DROCE_CM_MAX_RETRIES_MASK)
		return -EINVAL;
	c = droce_cm_conn_new(cm, gid);
	if (c == NULL)
		return -ENOMEM;
	req->attr = DROCE_CM_ATTR_REQ;
	/* IBTA 12.6.5: the passive side answers within RemoteCMResponseTimeout (RoCE has no
	 * PacketLifeTime from an SA to add); the REQ goes out MaxCMRetries more times. */
	c->timeout_ns = droce_cm_time_ns(req->remote_cm_response_timeout);
	c->max_retries = req->max_cm_retries;
	c->no_listener_left = cm->p.no_listener_retries;
	return cm_start(cm, c, req, user, DROCE_CM_REQ_SENT, now_ns, out);
}

int
droce_cm_accept(struct droce_cm *cm, struct droce_cm_conn *c, struct droce_cm_msg *rep,
		uint64_t now_ns)
{
	struct droce_cm_msg m = *rep;

	if (c->state != DROCE_CM_REQ_RCVD)
		return -EINVAL;
	m.attr = DROCE_CM_ATTR_REP;
	m.tid = c->tid;
	m.local_comm_id = c->local_comm_id;
	m.remote_comm_id = c->remote_comm_id;
	c->state = DROCE_CM_REP_SENT;
	return droce_cm_send(cm, c, &m, true, now_ns);
}

int
droce_cm_reject(struct droce_cm *cm, struct droce_cm_conn *c, uint16_t reason, const void *ari,
		uint8_t ari_len, const void *priv, uint8_t priv_len, uint64_t now_ns)
{
	uint8_t what;
	int rc;

	if (c->state == DROCE_CM_REQ_RCVD)
		what = DROCE_CM_MSG_REQ;
	else if (c->state == DROCE_CM_REP_RCVD)
		what = DROCE_CM_MSG_REP;
	else
		return -EINVAL;
	rc = droce_cm_send_rej(cm, c, what, reason, ari, ari_len, priv, priv_len, now_ns);
	droce_cm_timewait(cm, c, now_ns);
	return rc;
}

int
droce_cm_rtu(struct droce_cm *cm, struct droce_cm_conn *c, const void *priv, uint8_t priv_len,
	     uint64_t now_ns)
{
	struct droce_cm_msg m;

	if (c->state != DROCE_CM_REP_RCVD)
		return -EINVAL;
	droce_cm_msg_init(&m, DROCE_CM_ATTR_RTU, c->tid, c);
	set_priv(&m, priv, priv_len);
	c->state = DROCE_CM_ESTABLISHED;
	return droce_cm_send(cm, c, &m, false, now_ns);
}

int
droce_cm_disconnect(struct droce_cm *cm, struct droce_cm_conn *c, const void *priv,
		    uint8_t priv_len, uint64_t now_ns)
{
	switch (c->state) {
	case DROCE_CM_ESTABLISHED:
	case DROCE_CM_REP_SENT:
		return droce_cm_send_dreq(cm, c, priv, priv_len, now_ns);
	case DROCE_CM_DREQ_SENT:
	case DROCE_CM_TIMEWAIT:
	case DROCE_CM_CLOSED:
		return 0; /* the peer's DREQ came first, or ours is out */
	default:
		return -EINVAL;
	}
}

void
droce_cm_release(struct droce_cm *cm, struct droce_cm_conn *c, uint64_t now_ns)
{
	c->owned = false;
	c->user = NULL;
	switch (c->state) {
	case DROCE_CM_ESTABLISHED:
	case DROCE_CM_REP_SENT:
		droce_cm_send_dreq(cm, c, NULL, 0, now_ns);
		break;
	case DROCE_CM_REQ_SENT:
		/* as the kernel's ib_destroy_cm_id: the passive side hears a REJ (Timeout) */
		droce_cm_send_rej(cm, c, DROCE_CM_MSG_REQ, DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0,
				  now_ns);
		droce_cm_timewait(cm, c, now_ns);
		break;
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_REP_RCVD:
		droce_cm_reject(cm, c, DROCE_CM_REJ_CONSUMER_DEFINED, NULL, 0, NULL, 0, now_ns);
		break;
	case DROCE_CM_SIDR_REQ_SENT:
	case DROCE_CM_CLOSED:
		droce_cm_conn_free(cm, c);
		break;
	default: /* DREQ_SENT, TIMEWAIT: they end on their own */
		break;
	}
}

int
droce_cm_sidr_req(struct droce_cm *cm, const uint8_t gid[16], struct droce_cm_msg *req, void *user,
		  uint64_t now_ns, struct droce_cm_conn **out)
{
	struct droce_cm_conn *c = droce_cm_conn_new(cm, gid);

	if (c == NULL)
		return -ENOMEM;
	req->attr = DROCE_CM_ATTR_SIDR_REQ;
	c->timeout_ns = droce_cm_time_ns(cm->p.sidr_timeout);
	c->max_retries = cm->p.sidr_retries;
	return cm_start(cm, c, req, user, DROCE_CM_SIDR_REQ_SENT, now_ns, out);
}

int
droce_cm_sidr_reply(struct droce_cm *cm, const uint8_t gid[16], struct droce_cm_msg *rep)
{
	uint8_t mad[DROCE_MAD_SIZE];
	int rc;

	rep->attr = DROCE_CM_ATTR_SIDR_REP;
	rc = droce_cm_msg_build(rep, mad);
	if (rc != 0)
		return rc;
	cm->sent++;
	cm->ops.send(cm->ctx, NULL, gid, mad);
	return 0;
}

/* c's timer is due. */
static void
expire(struct droce_cm *cm, struct droce_cm_conn *c, uint64_t now_ns)
{
	if (c->state == DROCE_CM_TIMEWAIT) {
		c->deadline_ns = 0;
		c->state = DROCE_CM_CLOSED;
		if (!c->owned)
			droce_cm_conn_free(cm, c);
		return;
	}
	if (c->retries_left > 0) {
		c->retries_left--;
		c->no_listener_wait = false;
		c->deadline_ns = now_ns + c->timeout_ns;
		droce_cm_resend(cm, c);
		return;
	}
	c->deadline_ns = 0;
	switch (c->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_REP_SENT:
		/* IBTA 12.6.7 (REJ reason 4, Timeout): out of retries, the CM rejects, so that a
		 * peer still waiting hears of it, and enters TimeWait */
		droce_cm_send_rej(
			cm, c, c->state == DROCE_CM_REQ_SENT ? DROCE_CM_MSG_REQ : DROCE_CM_MSG_REP,
			DROCE_CM_REJ_TIMEOUT, NULL, 0, NULL, 0, now_ns);
		droce_cm_timewait(cm, c, now_ns);
		droce_cm_emit(cm, c, DROCE_CM_EV_TIMEOUT, NULL);
		break;
	case DROCE_CM_DREQ_SENT:
		/* IBTA 12.9.7: no DREP after every retry: TimeWait all the same */
		droce_cm_timewait(cm, c, now_ns);
		droce_cm_emit(cm, c, DROCE_CM_EV_DISCONNECTED, NULL);
		break;
	case DROCE_CM_SIDR_REQ_SENT:
		c->state = DROCE_CM_CLOSED;
		droce_cm_emit(cm, c, DROCE_CM_EV_SIDR_TIMEOUT, NULL);
		if (!c->owned)
			droce_cm_conn_free(cm, c);
		break;
	default:
		break;
	}
}

uint64_t
droce_cm_tick(struct droce_cm *cm, uint64_t now_ns)
{
	uint64_t next = 0;
	uint32_t i;

	for (i = 0; i < cm->n; i++) {
		struct droce_cm_conn *c = &cm->conns[i];

		if (c->state == DROCE_CM_IDLE || c->deadline_ns == 0)
			continue;
		if (now_ns >= c->deadline_ns)
			expire(cm, c, now_ns);
		if (c->state != DROCE_CM_IDLE && c->deadline_ns != 0 &&
		    (next == 0 || c->deadline_ns < next))
			next = c->deadline_ns;
	}
	return next;
}

static const char *const state_names[DROCE_CM_STATE_MAX] = {
	[DROCE_CM_IDLE] = "IDLE",	    [DROCE_CM_REQ_SENT] = "REQ_SENT",
	[DROCE_CM_REP_RCVD] = "REP_RCVD",   [DROCE_CM_REQ_RCVD] = "REQ_RCVD",
	[DROCE_CM_REP_SENT] = "REP_SENT",   [DROCE_CM_ESTABLISHED] = "ESTABLISHED",
	[DROCE_CM_DREQ_SENT] = "DREQ_SENT", [DROCE_CM_TIMEWAIT] = "TIMEWAIT",
	[DROCE_CM_CLOSED] = "CLOSED",	    [DROCE_CM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
};

static const char *const event_names[DROCE_CM_EV_MAX] = {
	[DROCE_CM_EV_REQ] = "REQ",
	[DROCE_CM_EV_REP] = "REP",
	[DROCE_CM_EV_ESTABLISHED] = "ESTABLISHED",
	[DROCE_CM_EV_REJECTED] = "REJECTED",
	[DROCE_CM_EV_TIMEOUT] = "TIMEOUT",
	[DROCE_CM_EV_DISCONNECTED] = "DISCONNECTED",
	[DROCE_CM_EV_SIDR_REQ] = "SIDR_REQ",
	[DROCE_CM_EV_SIDR_REP] = "SIDR_REP",
	[DROCE_CM_EV_SIDR_TIMEOUT] = "SIDR_TIMEOUT",
};

static const char *const drop_names[DROCE_CM_DROP_MAX] = {
	[DROCE_CM_DROP_NONE] = "none",
	[DROCE_CM_DROP_MALFORMED] = "malformed",
	[DROCE_CM_DROP_UNSUPPORTED] = "unsupported_attr",
	[DROCE_CM_DROP_UNKNOWN_COMM_ID] = "unknown_comm_id",
	[DROCE_CM_DROP_WRONG_PEER] = "wrong_peer",
	[DROCE_CM_DROP_STATE] = "unexpected_in_state",
	[DROCE_CM_DROP_NO_SLOT] = "no_slot",
	[DROCE_CM_DROP_CONSUMER] = "consumer_declined",
};

const char *
droce_cm_state_name(enum droce_cm_state s)
{
	return (unsigned int)s < DROCE_CM_STATE_MAX ? state_names[s] : "?";
}

const char *
droce_cm_event_name(enum droce_cm_event e)
{
	return (unsigned int)e < DROCE_CM_EV_MAX ? event_names[e] : "?";
}

const char *
droce_cm_drop_name(enum droce_cm_drop d)
{
	return (unsigned int)d < DROCE_CM_DROP_MAX ? drop_names[d] : "?";
}
