/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm ids and event channels: create/destroy, addresses (bind, resolve, listen), the event
 * queue behind a channel's fd, and the small getters. The connection itself is cma_conn.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cma_priv.h"
#include "droce_shim_gsi.h"

pthread_mutex_t cma_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cma_acked = PTHREAD_COND_INITIALIZER;
struct ibv_context *cma_verbs;
struct cma_id *cma_ids;
static uint16_t next_port = 40000;

uint64_t
cma_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The verbs contract: -1 with errno. */
int
cma_errno(int rc)
{
	if (rc == 0)
		return 0;
	errno = rc < 0 ? -rc : rc;
	return -1;
}

struct cma_id *
cma_id_of(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

/* Lock held: id if it is a live id of ours. The application's pointer is compared, never
 * followed: a destroyed id, or whatever a freed array of ids holds by then (perftest 4.5's
 * retry after a REJ passes one), is refused with EINVAL instead of read. */
struct cma_id *
cma_id_live_locked(const struct rdma_cm_id *id)
{
	struct cma_id *c;

	if (id == NULL)
		return NULL;
	for (c = cma_ids; c != NULL; c = c->next)
		if (&c->id == id)
			return c->destroyed ? NULL : c;
	return NULL;
}

struct cma_id *
cma_id_live(const struct rdma_cm_id *id)
{
	struct cma_id *c;

	pthread_mutex_lock(&cma_lock);
	c = cma_id_live_locked(id);
	pthread_mutex_unlock(&cma_lock);
	return c;
}

/* The one device: droce0 of the verbs shim, opened on first use. */
static int
open_device(void)
{
	struct ibv_device **list;
	int n;

	if (cma_verbs != NULL)
		return 0;
	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0) {
		if (list != NULL)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	cma_verbs = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	return cma_verbs != NULL ? 0 : -ENODEV;
}

/* RoCEv2 GID of an address: ::ffff:a.b.c.d for IPv4, the address itself for IPv6. */
int
cma_gid_of(const struct sockaddr *sa, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* Index of gid in the device's table, or -EADDRNOTAVAIL. */
int
cma_sgid_index(const uint8_t gid[16])
{
	struct ibv_port_attr pa;
	union ibv_gid g;
	int i;

	if (ibv_query_port(cma_verbs, 1, &pa) != 0)
		return -ENODEV;
	for (i = 0; i < pa.gid_tbl_len; i++)
		if (ibv_query_gid(cma_verbs, 1, i, &g) == 0 && memcmp(g.raw, gid, 16) == 0)
			return i;
	return -EADDRNOTAVAIL;
}

/* The device's first GID of a family, as an address (port 0). */
static int
local_addr(int family, struct sockaddr_storage *ss)
{
	struct ibv_port_attr pa;
	union ibv_gid g;
	static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	bool is4;
	int i;

	if (ibv_query_port(cma_verbs, 1, &pa) != 0)
		return -ENODEV;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(cma_verbs, 1, i, &g) != 0)
			continue;
		is4 = memcmp(g.raw, v4, 12) == 0;
		memset(ss, 0, sizeof(*ss));
		if (family == AF_INET && is4) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

			s4->sin_family = AF_INET;
			memcpy(&s4->sin_addr, g.raw + 12, 4);
			return 0;
		}
		if (family == AF_INET6 && !is4) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

			s6->sin6_family = AF_INET6;
			memcpy(&s6->sin6_addr, g.raw, 16);
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

static uint16_t
sa_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port :
						((const struct sockaddr_in6 *)sa)->sin6_port);
}

static void
sa_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static bool
sa_any(const struct sockaddr *sa)
{
	static const struct in6_addr any6 = IN6ADDR_ANY_INIT;

	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &any6, 16) == 0;
}

/* The peer's port, host order (lock held: the public getter takes the lock). */
uint16_t
cma_dst_port(const struct cma_id *c)
{
	return sa_port(&c->id.route.addr.dst_addr);
}

socklen_t
cma_sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

/* From here on a REQ (SIDR_REQ) for the port finds the id: a peer, or a test harness, may
 * wait for this line before it connects, as rdma_cm has no other sign of a listener. */
static void
log_listen(const struct rdma_cm_id *id)
{
	const struct sockaddr *a = &id->route.addr.src_addr;
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(a->sa_family,
		  a->sa_family == AF_INET ?
			  (const void *)&((const struct sockaddr_in *)a)->sin_addr :
			  (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr,
		  ip, sizeof(ip));
	cma_log("listening on %s port %u (%s port space)", ip, sa_port(a),
		id->ps == RDMA_PS_UDP ? "UDP" : "TCP");
}

/* ---- ids ---- */

/* Lock held. */
void
cma_free_id(struct cma_id *c)
{
	struct cma_id **pp;

	for (pp = &cma_ids; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->id.channel != NULL)
		((struct cma_channel *)c->id.channel)->ids--;
	free(c->sidr_rep);
	free(c);
}

static struct cma_id *
new_id(struct rdma_event_channel *channel, void *context, enum rdma_port_space ps,
       enum ibv_qp_type qpt)
{
	struct cma_id *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->id.verbs = cma_verbs;
	c->id.channel = channel;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = qpt;
	c->id.port_num = 1;
	c->retry_count = CMA_DEFAULT_RETRY;
	c->rnr_retry_count = CMA_DEFAULT_RNR_RETRY;
	c->next = cma_ids;
	cma_ids = c;
	if (channel != NULL)
		((struct cma_channel *)channel)->ids++;
	return c;
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	struct rdma_event_channel *own;
	struct cma_id *c;
	int rc;

	if (id == NULL)
		return cma_errno(-EINVAL);
	/* Connected RC (TCP port space) and UD (UDP port space, SIDR); not IB's or IPoIB's. */
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP)
		return cma_errno(-EPROTONOSUPPORT);
	/* No channel: a synchronous id, with a channel of its own that its calls wait on. */
	if (channel != NULL &&
	    __atomic_load_n(&((struct cma_channel *)channel)->closed, __ATOMIC_RELAXED))
		return cma_errno(-EINVAL); /* rdma_destroy_event_channel'd */
	own = channel == NULL ? rdma_create_event_channel() : NULL;
	if (channel == NULL && own == NULL)
		return -1;
	pthread_mutex_lock(&cma_lock);
	rc = open_device();
	if (rc == 0)
		rc = cma_agent_start();
	c = rc == 0 ? new_id(own != NULL ? own : channel, context, ps,
			     ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC) :
		      NULL;
	if (rc == 0 && c == NULL)
		rc = -ENOMEM;
	if (c != NULL)
		c->own_ch = own;
	pthread_mutex_unlock(&cma_lock);
	if (rc != 0) {
		if (own != NULL)
			cma_channel_free(own);
		return cma_errno(rc);
	}
	*id = &c->id;
	return 0;
}

/* Lock held: a passive side's new id for a REQ, on the listener's channel. */
struct cma_id *
cma_child(struct cma_id *listener)
{
	struct cma_id *c = new_id(listener->id.channel, listener->id.context, listener->id.ps,
				  listener->id.qp_type);

	if (c != NULL)
		c->listener = listener;
	return c;
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rdma_event_channel *own;
	struct cma_event *req;
	struct cma_id *c;

	pthread_mutex_lock(&cma_lock);
	c = cma_id_live_locked(id);
	if (c == NULL) {
		pthread_mutex_unlock(&cma_lock);
		return cma_errno(-EINVAL); /* destroyed already, or never an id */
	}
	/* rdma_get_request's event, not handed out */
	req = (struct cma_event *)c->id.event;
	c->id.event = NULL;
	if (req != NULL)
		cma_ack_locked(req);
	own = c->own_ch;
	if (c->state == CMA_LISTEN)
		droce_shim_cm_listen(cma_verbs,
				     cma_service_id(c->id.ps, sa_port(&c->id.route.addr.src_addr)),
				     0);
	cma_cm_release(c);
	c->destroyed = true; /* no more events; the agent no longer finds it */
	cma_drop_events(c);
	/* As librdmacm: an event the application got is acked before its id goes (rping's CM
	 * thread writes through the id's context when DISCONNECTED comes). */
	while (c->events_out > 0)
		pthread_cond_wait(&cma_acked, &cma_lock);
	if (c->ah != NULL)
		ibv_destroy_ah(c->ah);
	/* The PD rdma_create_qp made for an id given none (librdmacm's is the device's, kept):
	 * goes with its id once the QP has (EBUSY, kept, while the application still has it). */
	if (c->own_pd && c->id.pd != NULL && c->id.qp == NULL && ibv_dealloc_pd(c->id.pd) == 0)
		c->id.pd = NULL;
	cma_mc_free_all(c);
	free(c->ep_attr);
	cma_free_id(c);
	pthread_mutex_unlock(&cma_lock);
	if (own != NULL)
		cma_channel_free(own);
	return 0;
}

/* Lock held: a passive id's addresses seen from here (ours is the request's destination, on
 * the service ID's port: rdma_cm's header carries the active side's; the peer's is the
 * source) and its AH back to the peer (c->dgid, c->sgid_index set). */
int
cma_child_route(struct cma_id *c, const struct sockaddr_storage *src,
		const struct sockaddr_storage *dst, uint16_t port)
{
	int err;

	memcpy(&c->id.route.addr.src_storage, dst, sizeof(*dst));
	memcpy(&c->id.route.addr.dst_storage, src, sizeof(*src));
	sa_set_port(&c->id.route.addr.src_addr, port);
	c->id.route.num_paths = 1;
	c->ah = cma_agent_ah(c->dgid, c->sgid_index, &err);
	return c->ah != NULL ? 0 : -err;
}

/* Lock held: the passive UD id of a peer's SIDR request (its request ID and GID), for resent
 * SIDR_REQs. */
struct cma_id *
cma_find_peer(uint32_t remote_comm_id, const uint8_t dgid[16])
{
	struct cma_id *c;

	for (c = cma_ids; c != NULL; c = c->next)
		if (!c->destroyed && c->listener != NULL && c->id.qp_type == IBV_QPT_UD &&
		    c->remote_comm_id == remote_comm_id && memcmp(c->dgid, dgid, 16) == 0)
			return c;
	return NULL;
}

/* Lock held: the listener for a port and destination (an exact address, else a wildcard). */
struct cma_id *
cma_find_listener(uint16_t ps, uint16_t port, const struct sockaddr *dst)
{
	struct cma_id *c, *any = NULL;
	const struct sockaddr *a;

	for (c = cma_ids; c != NULL; c = c->next) {
		a = &c->id.route.addr.src_addr;
		if (c->destroyed || c->state != CMA_LISTEN || c->id.ps != ps || sa_port(a) != port)
			continue;
		if (sa_any(a)) {
			any = c;
			continue;
		}
		if (a->sa_family == dst->sa_family &&
		    ((a->sa_family == AF_INET &&
		      ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
			      ((const struct sockaddr_in *)dst)->sin_addr.s_addr) ||
		     (a->sa_family == AF_INET6 &&
		      memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			     &((const struct sockaddr_in6 *)dst)->sin6_addr, 16) == 0)))
			return c;
	}
	return any;
}

/* A listener of the port space on the port (TCP and UDP ports are separate spaces). */
static bool
port_in_use(enum rdma_port_space ps, uint16_t port)
{
	struct cma_id *c;

	for (c = cma_ids; c != NULL; c = c->next)
		if (!c->destroyed && c->state == CMA_LISTEN && c->id.ps == ps &&
		    sa_port(&c->id.route.addr.src_addr) == port)
			return true;
	return false;
}

/* Lock held. A wildcard address stays one (a listener on every GID); a given one must be
 * ours. Port 0 takes a free one. */
static int
bind_locked(struct cma_id *c, const struct sockaddr *addr)
{
	uint8_t gid[16];
	uint16_t port;
	int idx;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (c->state != CMA_IDLE)
		return -EINVAL;
	if (!sa_any(addr)) {
		cma_gid_of(addr, gid);
		idx = cma_sgid_index(gid);
		if (idx < 0)
			return idx; /* not an address of this device */
		c->sgid_index = idx;
		memcpy(c->sgid, gid, 16);
	}
	memcpy(&c->id.route.addr.src_storage, addr, cma_sa_len(addr));
	port = sa_port(addr);
	if (port == 0) {
		do {
			port = next_port++;
			if (next_port == 0)
				next_port = 40000; /* ephemeral ports: 40000-65535 */
		} while (port_in_use(c->id.ps, port));
		sa_set_port(&c->id.route.addr.src_addr, port);
	}
	c->state = CMA_ADDR_BOUND;
	return 0;
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *c;
	int rc;

	if (id == NULL || addr == NULL)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	c = cma_id_live_locked(id);
	rc = c != NULL ? bind_locked(c, addr) : -EINVAL;
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *c = cma_id_live(id);
	int rc = 0;

	(void)backlog;
	if (c == NULL)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_ADDR_BOUND)
		rc = -EINVAL; /* rdma_bind_addr first */
	else if (port_in_use(c->id.ps, sa_port(&c->id.route.addr.src_addr)))
		rc = -EADDRINUSE;
	else
		c->state = CMA_LISTEN;
	if (rc == 0) {
		log_listen(&c->id);
		/* under droce-portd: the service hands us this port's requests (else -ENOENT) */
		droce_shim_cm_listen(cma_verbs,
				     cma_service_id(c->id.ps, sa_port(&c->id.route.addr.src_addr)),
				     1);
		cma_park_listen(c->id.ps, sa_port(&c->id.route.addr.src_addr));
	}
	pthread_mutex_unlock(&cma_lock);
	return cma_errno(rc);
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	struct cma_id *c = cma_id_live(id);
	struct sockaddr_storage ss;
	int rc = 0;

	(void)timeout_ms;
	if (c == NULL || dst_addr == NULL)
		return cma_errno(-EINVAL);
	if (dst_addr->sa_family != AF_INET && dst_addr->sa_family != AF_INET6)
		return cma_errno(-EAFNOSUPPORT);
	pthread_mutex_lock(&cma_lock);
	if (c->state == CMA_IDLE) {
		if (src_addr != NULL && src_addr->sa_family != AF_UNSPEC && !sa_any(src_addr)) {
			rc = bind_locked(c, src_addr);
		} else {
			/* The device's own address of the destination's family. */
			rc = local_addr(dst_addr->sa_family, &ss);
			if (rc == 0 && src_addr != NULL && src_addr->sa_family != AF_UNSPEC)
				sa_set_port((struct sockaddr *)&ss, sa_port(src_addr));
			if (rc == 0)
				rc = bind_locked(c, (struct sockaddr *)&ss);
		}
	} else if (c->state != CMA_ADDR_BOUND) {
		rc = -EINVAL;
	}
	if (rc == 0 && sa_any(&c->id.route.addr.src_addr)) {
		/* Bound to a wildcard: take the device's address for this destination. */
		rc = local_addr(dst_addr->sa_family, &ss);
		if (rc == 0) {
			sa_set_port((struct sockaddr *)&ss, sa_port(&c->id.route.addr.src_addr));
			memcpy(&c->id.route.addr.src_storage, &ss, sizeof(ss));
			cma_gid_of((struct sockaddr *)&ss, c->sgid);
			c->sgid_index = cma_sgid_index(c->sgid);
		}
	}
	if (rc == 0 && c->id.route.addr.src_addr.sa_family != dst_addr->sa_family)
		rc = -EAFNOSUPPORT; /* IPv4 source, IPv6 destination, or the reverse */
	if (rc == 0) {
		memcpy(&c->id.route.addr.dst_storage, dst_addr, cma_sa_len(dst_addr));
		cma_gid_of(dst_addr, c->dgid);
		rc = cma_queue_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0);
	}
	pthread_mutex_unlock(&cma_lock);
	if (rc == 0 && c->own_ch != NULL)
		rc = cma_sync_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	return cma_errno(rc);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id *c = cma_id_live(id);
	struct ibv_ah *ah;
	int rc = 0, err = 0;

	(void)timeout_ms;
	if (c == NULL)
		return cma_errno(-EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (c->state != CMA_ADDR_BOUND || c->id.route.addr.dst_addr.sa_family == AF_UNSPEC) {
		pthread_mutex_unlock(&cma_lock);
		return cma_errno(-EINVAL); /* rdma_resolve_addr first */
	}
	pthread_mutex_unlock(&cma_lock);
	/* The AH resolves the peer's MAC (ARP / ND): unreachable shows here, as ROUTE_ERROR. */
	ah = cma_agent_ah(c->dgid, c->sgid_index, &err);
	pthread_mutex_lock(&cma_lock);
	if (ah == NULL) {
		rc = cma_queue_event(c, RDMA_CM_EVENT_ROUTE_ERROR, err != 0 ? -err : -EHOSTUNREACH,
				     NULL, 0);
	} else {
		c->ah = ah;
		c->state = CMA_ROUTE_OK;
		c->id.route.num_paths = 1;
		rc = cma_queue_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0);
	}
	pthread_mutex_unlock(&cma_lock);
	if (rc == 0 && c->own_ch != NULL)
		rc = cma_sync_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	return cma_errno(rc);
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct cma_id *c = cma_id_live(id);

	if (c == NULL || optval == NULL)
		return cma_errno(-EINVAL);
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_TOS && optlen == 1) {
		c->tos = *(uint8_t *)optval;
		c->tos_set = true;
		return 0;
	}
	/* The QP's local ACK timeout, 4.096 us * 2^N (perftest -R's -u): as librdmacm, for the
	 * QP this id connects. */
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_ACK_TIMEOUT && optlen == 1) {
		if (*(uint8_t *)optval > 31)
			return cma_errno(-EINVAL);
		c->ack_timeout = *(uint8_t *)optval;
		c->ack_timeout_set = true;
		return 0;
	}
	/* Reuse/AFONLY: accepted, our defaults stand. */
	if (level == RDMA_OPTION_ID || level == RDMA_OPTION_IB)
		return 0;
	return cma_errno(-ENOSYS);
}

/* 0 for what is not a live id (librdmacm's for an unknown address family). */
uint16_t
rdma_get_src_port(struct rdma_cm_id *id)
{
	return cma_id_live(id) != NULL ? htons(sa_port(&id->route.addr.src_addr)) : 0;
}

uint16_t
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return cma_id_live(id) != NULL ? htons(sa_port(&id->route.addr.dst_addr)) : 0;
}

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(2, sizeof(*list));
	int rc;

	if (list == NULL)
		return NULL;
	pthread_mutex_lock(&cma_lock);
	rc = open_device();
	pthread_mutex_unlock(&cma_lock);
	list[0] = rc == 0 ? cma_verbs : NULL;
	if (num_devices != NULL)
		*num_devices = rc == 0 ? 1 : 0;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
