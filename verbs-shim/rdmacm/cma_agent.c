/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM agent: the device's GSI QP (QP1, UD, Q_Key 0x80010000) through the verbs shim, the
 * engine's CM (cma_cm), and a thread that hands it the MADs received and its tick. MADs go out
 * from whichever thread holds cma_lock.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cma_priv.h"
#include "droce_shim_gsi.h"
#include "droce_verbs.h"
#include "wire/droce_mad.h"

enum {
	/* A program may start a thousand connects at once (cmtime -c 1000): each REQ, REP or RTU
	 * takes a send slot until it completes, and a burst of them a receive on the peer; with 64
	 * the rest failed to post or were lost on UD, and their connects timed out. */
	AGENT_RECVS = 1024,
	AGENT_SENDS = 1024,
	GRH_SIZE = 40, /* a UD receive starts with the GRH's room */
	RECV_SLOT = GRH_SIZE + DROCE_MAD_SIZE,
	/* The agent sleeps until the CM's next deadline or a MAD; a verb that sends wakes it. The
	 * bound only limits how long a wake-up that never came could hold a timer back. */
	AGENT_IDLE_MS = 1000,
	/* At exit, how long an unanswered DREQ may hold the process: 7 resends 268 ms apart */
	AGENT_LINGER_MS = 2000,
};

struct droce_cm cma_cm;

static struct {
	bool up;
	bool stop;
	struct droce_cm_conn *conns;
	pthread_t thread;
	int kick; /* eventfd: a verb made a timer the sleeping agent does not know of */
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf; /* AGENT_RECVS receive slots, then AGENT_SENDS send slots */
	unsigned int next_send;
	uint64_t guid;
} ag;

static uint8_t *
recv_slot(unsigned int i)
{
	return ag.buf + (size_t)i * RECV_SLOT;
}

static uint8_t *
send_slot(unsigned int i)
{
	return ag.buf + (size_t)AGENT_RECVS * RECV_SLOT + (size_t)i * DROCE_MAD_SIZE;
}

static int
post_recv(unsigned int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)recv_slot(i),
			       .length = RECV_SLOT,
			       .lkey = ag.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(ag.qp, &wr, &bad);
}

uint64_t
cma_agent_guid(void)
{
	return ag.guid;
}

/* An AH to a peer's GID: resolving it (ARP / ND) may take a while; no lock needed. */
struct ibv_ah *
cma_agent_ah(const uint8_t dgid[16], int sgid_index, int *err)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;

	memcpy(a.grh.dgid.raw, dgid, 16);
	a.grh.sgid_index = (uint8_t)sgid_index;
	a.grh.hop_limit = 64;
	ah = ibv_create_ah(ag.pd, &a);
	*err = ah == NULL ? errno : 0;
	return ah;
}

/* DROCE_RDMACM_LOG set (and not 0): a line per CM MAD, listen and rejection on stderr. */
static bool
log_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("DROCE_RDMACM_LOG");

		on = e != NULL && strcmp(e, "0") != 0;
	}
	return on;
}

/* A line of DROCE_RDMACM_LOG's record; the agent may not have started yet. */
void
cma_log(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (!log_on())
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "droce-rdmacm: %s\n", line);
}

/* One line for an interop session's log: the message, its transaction and comm IDs, and a
 * REJ's reason (IBTA Table 112), which is what an application hears as the event's status. */
static void
log_mad(const char *what, const uint8_t *mad)
{
	const uint8_t *d = mad + 24; /* the CM message after the MAD header */
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);
	char reason[24] = "";

	if (!log_on())
		return;
	if (attr == DROCE_CM_ATTR_REJ)
		snprintf(reason, sizeof(reason), " reason %u", (unsigned int)(d[10] << 8 | d[11]));
	cma_log("%s %s tid %016llx ids %02x%02x%02x%02x/%02x%02x%02x%02x%s", what,
		droce_cm_attr_name(attr),
		(unsigned long long)be64toh(*(const uint64_t *)(const void *)(mad + 8)), d[0], d[1],
		d[2], d[3], d[4], d[5], d[6], d[7], reason);
}

/* A failed write or read is harmless: the counter is non-zero (the agent wakes) or zero. */
static void
kick(void)
{
	uint64_t one = 1;
	ssize_t r = write(ag.kick, &one, sizeof(one));

	(void)r;
}

static void
unkick(void)
{
	uint64_t n;
	ssize_t r = read(ag.kick, &n, sizeof(n));

	(void)r;
}

/* Lock held. Send slots are reused round robin: AGENT_SENDS MADs in flight at most. */
static int
post_mad(struct ibv_ah *ah, const uint8_t mad[DROCE_MAD_SIZE], const char *what)
{
	unsigned int i = ag.next_send++ % AGENT_SENDS;
	struct ibv_sge sge = { .addr = (uintptr_t)send_slot(i),
			       .length = DROCE_MAD_SIZE,
			       .lkey = ag.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = AGENT_RECVS + i,
				  .sg_list = &sge,
				  .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	log_mad(what, mad);
	/* A MAD sent from a verb (REQ, REP, DREQ, SIDR_REQ) starts a resend timer; the agent's
	 * own sends are followed by its look at the next deadline anyway. */
	if (ag.up && !pthread_equal(pthread_self(), ag.thread))
		kick();
	memcpy(send_slot(i), mad, DROCE_MAD_SIZE);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = DROCE_QKEY_GSI;
	return -ibv_post_send(ag.qp, &wr, &bad);
}

/* Our GID index of the family of dgid (IPv4-mapped or not), for a reply to no id. */
static int
sgid_for(const uint8_t dgid[16])
{
	static const uint8_t v4[12] = { [10] = 0xFF, [11] = 0xFF };
	bool want4 = memcmp(dgid, v4, 12) == 0;
	union ibv_gid g;
	int i;

	for (i = 0; i < 4; i++)
		if (ibv_query_gid(cma_verbs, 1, i, &g) == 0 &&
		    (memcmp(g.raw, v4, 12) == 0) == want4)
			return i;
	return 0;
}

/* stack/cm's send: over the id's AH, or one made for this MAD (a connection whose id is
 * gone, a REJ or SIDR_REP to nobody's id). Lock held. */
void
cma_agent_send(struct droce_cm_conn *conn, const uint8_t gid[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	struct cma_id *c = conn != NULL ? conn->user : NULL;
	struct ibv_ah *ah;
	int err;

	if (c != NULL && c->ah != NULL) {
		post_mad(c->ah, mad, "sent");
		return;
	}
	ah = cma_agent_ah(gid, sgid_for(gid), &err);
	if (ah == NULL)
		return; /* no route: the peer's resend asks again */
	post_mad(ah, mad, "sent");
	ibv_destroy_ah(ah);
}

/* The sender's GID from the 40 bytes before a UD receive's payload: a GRH (IPv6), or an IPv4
 * header in its last 20 bytes (RoCEv2 over IPv4, the source address at 12). */
static void
grh_sgid(const uint8_t *grh, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if ((grh[20] >> 4) == 4) {
		gid[10] = 0xFF;
		gid[11] = 0xFF;
		memcpy(gid + 12, grh + 20 + 12, 4);
	} else {
		memcpy(gid, grh + 8, 16);
	}
}

static void
drain(void)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(ag.cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id >= AGENT_RECVS)
				continue; /* a send's completion */
			if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= GRH_SIZE + 24) {
				const uint8_t *grh = recv_slot((unsigned int)wc[i].wr_id);
				uint8_t sgid[16];

				grh_sgid(grh, sgid);
				log_mad("received", grh + GRH_SIZE);
				cma_cm_recv(grh + GRH_SIZE, wc[i].byte_len - GRH_SIZE, sgid);
			}
			post_recv((unsigned int)wc[i].wr_id);
		}
	}
}

/* Milliseconds from now to the earlier of two deadlines (0: none), rounded up, bounded. */
static int
wait_ms(uint64_t now, uint64_t a, uint64_t b)
{
	uint64_t next = a == 0 ? b : b == 0 || a < b ? a : b;

	if (next == 0 || next > now + (uint64_t)AGENT_IDLE_MS * 1000000)
		return AGENT_IDLE_MS;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

static void *
agent_main(void *arg)
{
	struct pollfd pfd[2] = { { .fd = ag.ch->fd, .events = POLLIN },
				 { .fd = ag.kick, .events = POLLIN } };
	struct ibv_cq *cq;
	uint64_t now, cm_next, park_next;
	void *ctx;

	(void)arg;
	while (!__atomic_load_n(&ag.stop, __ATOMIC_RELAXED)) {
		ibv_req_notify_cq(ag.cq, 0);
		drain();
		pthread_mutex_lock(&cma_lock);
		now = cma_now_ns();
		cm_next = droce_cm_tick(&cma_cm, now);
		cma_park_timers(now);
		park_next = cma_park_next();
		pthread_mutex_unlock(&cma_lock);
		if (poll(pfd, 2, wait_ms(now, cm_next, park_next)) <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && ibv_get_cq_event(ag.ch, &cq, &ctx) == 0)
			ibv_ack_cq_events(cq, 1);
		if (pfd[1].revents & POLLIN)
			unkick();
	}
	return NULL;
}

static int
qp1_up(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = DROCE_QKEY_GSI
	};

	if (ibv_modify_qp(ag.qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) != 0)
		return -errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(ag.qp, &a, IBV_QP_STATE) != 0)
		return -errno;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(ag.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
		return -errno;
	return 0;
}

/* Lock held, device open: the GSI QP, its buffers and the thread, once per process. */
int
cma_agent_start(void)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = AGENT_SENDS,
						.max_recv_wr = AGENT_RECVS,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_device_attr da;
	size_t len = (size_t)AGENT_RECVS * RECV_SLOT + (size_t)AGENT_SENDS * DROCE_MAD_SIZE;
	uint32_t prefix, bits;
	unsigned int i;
	int rc;

	if (ag.up)
		return 0;
	if (ibv_query_device(cma_verbs, &da) != 0)
		return -ENODEV;
	ag.guid = be64toh(da.node_guid);
	ag.conns = calloc(CMA_CM_CONNS, sizeof(*ag.conns));
	if (ag.conns == NULL)
		return -ENOMEM;
	/* the first transaction ID from the clock: a restarted process does not repeat one */
	rc = droce_cm_init(&cma_cm, ag.conns, CMA_CM_CONNS, &cma_cm_ops, NULL, NULL,
			   cma_now_ns() << 16);
	if (rc != 0)
		return rc;
	ag.kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ag.kick < 0)
		return -errno;
	ag.pd = ibv_alloc_pd(cma_verbs);
	ag.ch = ag.pd != NULL ? ibv_create_comp_channel(cma_verbs) : NULL;
	ag.cq = ag.ch != NULL ?
			ibv_create_cq(cma_verbs, AGENT_RECVS + AGENT_SENDS, NULL, ag.ch, 0) :
			NULL;
	ag.buf = ag.cq != NULL ? aligned_alloc(4096, (len + 4095) & ~(size_t)4095) : NULL;
	ag.mr = ag.buf != NULL ? ibv_reg_mr(ag.pd, ag.buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (ag.mr == NULL)
		return -ENOMEM;
	/* under droce-portd our comm IDs carry our slot: the service routes the CM's MADs by it */
	if (droce_shim_cm_id_prefix(cma_verbs, &prefix, &bits) == 0 &&
	    droce_cm_set_id_prefix(&cma_cm, prefix, bits) != 0)
		return -EINVAL;
	qa.send_cq = qa.recv_cq = ag.cq;
	/* QP1: a process that already has one (another rdma_cm in it) cannot have two. */
	ag.qp = droce_shim_create_gsi_qp(ag.pd, &qa);
	if (ag.qp == NULL)
		return -errno;
	rc = qp1_up();
	for (i = 0; rc == 0 && i < AGENT_RECVS; i++)
		rc = -post_recv(i);
	if (rc == 0)
		rc = -pthread_create(&ag.thread, NULL, agent_main, NULL);
	if (rc != 0)
		return rc;
	ag.up = true;
	return 0;
}

/* A DREQ of ours that no DREP has answered yet (IBTA 12.9.7: it is resent until one comes or
 * the retries run out). */
static bool
dreq_unanswered(void)
{
	bool pending = false;
	unsigned int i;

	pthread_mutex_lock(&cma_lock);
	for (i = 0; i < CMA_CM_CONNS && !pending; i++)
		pending = ag.conns[i].state == DROCE_CM_DREQ_SENT;
	pthread_mutex_unlock(&cma_lock);
	return pending;
}

/* Before the verbs shim's runtime goes (its destructor runs after ours: we depend on it),
 * the thread must be out of its verbs. A kernel CM keeps resending a DREQ after the process
 * is gone; here the resends run in the agent's thread, so a process that disconnects and
 * exits lingers (at most AGENT_LINGER_MS) while one is unanswered. Without that, a lost DREQ
 * left the peer connected: an rping server through 20 % loss waited for its disconnect until
 * killed. */
static void __attribute__((destructor)) cma_agent_stop(void)
{
	unsigned int i;

	if (!ag.up)
		return;
	for (i = 0; i < AGENT_LINGER_MS / 10 && dreq_unanswered(); i++)
		usleep(10000);
	__atomic_store_n(&ag.stop, true, __ATOMIC_RELAXED);
	kick();
	pthread_join(ag.thread, NULL);
	ag.up = false;
	if (log_on())
		fprintf(stderr,
			"droce-rdmacm: CM MADs sent %llu (of them resent %llu), received %llu\n",
			(unsigned long long)(cma_cm.sent + cma_cm.resent),
			(unsigned long long)cma_cm.resent, (unsigned long long)cma_cm.received);
}
