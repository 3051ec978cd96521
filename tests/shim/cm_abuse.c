/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An rdma_cm client that misuses the API the ways programs do, most of all after a REJ (as
 * perftest 4.5's retry does): every call must return its error, never crash (test_rdmacm.sh
 * runs it plain and under valgrind). The peer binds PORT and never listens (cm_late server
 * ... never) and rejects at once (DROCE_RDMACM_LISTEN_WAIT_MS=0).
 *
 *   cm_abuse ADDR PORT     prints a line per step; exit 0 "abuse: ok", 1 a check failed
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

static int fails;

/* A call that must fail with errno want. */
#define EXPECT_ERR(call, want) expect_err(#call, (call), want)
#define EXPECT_OK(call)	       expect_ok(#call, (call))

static void
expect_err(const char *what, int rc, int want)
{
	int e = errno;

	if (rc == 0 || e != want) {
		printf("FAIL %s: rc %d errno %d (%s), expected -1 errno %d\n", what, rc, e,
		       strerror(e), want);
		fails++;
		return;
	}
	printf("ok %s: %s\n", what, strerror(e));
}

static void
expect_ok(const char *what, int rc)
{
	if (rc != 0) {
		printf("FAIL %s: rc %d errno %d (%s)\n", what, rc, errno, strerror(errno));
		fails++;
		return;
	}
	printf("ok %s\n", what);
}

/* The next event must be want (status too unless -1); it is left unacked in *keep if given. */
static void
expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want, int status,
	     struct rdma_cm_event **keep)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev) != 0) {
		printf("FAIL rdma_get_cm_event: %s\n", strerror(errno));
		exit(1);
	}
	if (ev->event != want || (status != -1 && ev->status != status)) {
		printf("FAIL event %s status %d, expected %s status %d\n",
		       rdma_event_str(ev->event), ev->status, rdma_event_str(want), status);
		exit(1);
	}
	printf("ok event %s status %d\n", rdma_event_str(ev->event), ev->status);
	if (keep != NULL)
		*keep = ev;
	else
		rdma_ack_cm_event(ev);
}

/* An id through ROUTE_RESOLVED to dst, with a QP of its own. */
static struct rdma_cm_id *
routed_id(struct rdma_event_channel *ch, struct sockaddr *dst)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0) {
		printf("FAIL rdma_create_id: %s\n", strerror(errno));
		exit(1);
	}
	EXPECT_OK(rdma_resolve_addr(id, NULL, dst, 2000));
	expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	EXPECT_OK(rdma_resolve_route(id, 2000));
	expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	EXPECT_ERR(rdma_resolve_route(id, 2000), EINVAL); /* resolved already */
	EXPECT_OK(rdma_create_qp(id, NULL, &qa));
	EXPECT_ERR(rdma_create_qp(id, NULL, &qa), EINVAL); /* one QP an id */
	return id;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_event_channel *ch, *ch2;
	struct rdma_cm_event *rej, fake_ev;
	struct rdma_cm_id *id, *id2, fake;
	int fl;

	if (argc != 3 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1) {
		fprintf(stderr, "usage: cm_abuse ADDR PORT\n");
		return 2;
	}
	dst.sin_port = htons((uint16_t)atoi(argv[2]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	ch = rdma_create_event_channel();
	if (ch == NULL)
		return 1;

	/* Connect twice, use after the REJ, ack twice. */
	id = routed_id(ch, (struct sockaddr *)&dst);
	EXPECT_ERR(rdma_disconnect(id), EINVAL);  /* not connected */
	EXPECT_ERR(rdma_accept(id, &cp), EINVAL); /* no request on an active id */
	EXPECT_OK(rdma_connect(id, &cp));
	EXPECT_ERR(rdma_connect(id, &cp), EINVAL);	   /* its REQ is out */
	expect_event(ch, RDMA_CM_EVENT_REJECTED, 8, &rej); /* nobody listens */
	EXPECT_ERR(rdma_connect(id, &cp), EINVAL);
	EXPECT_ERR(rdma_resolve_route(id, 2000), EINVAL);
	EXPECT_ERR(rdma_accept(id, &cp), EINVAL);
	EXPECT_ERR(rdma_reject(id, NULL, 0), EINVAL);
	EXPECT_OK(rdma_ack_cm_event(rej));
	EXPECT_ERR(rdma_ack_cm_event(rej), EINVAL); /* acked already */

	/* Use after destroy: the pointer is stale. */
	rdma_destroy_qp(id);
	EXPECT_OK(rdma_destroy_id(id));
	EXPECT_ERR(rdma_destroy_id(id), EINVAL);
	EXPECT_ERR(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), EINVAL);
	EXPECT_ERR(rdma_resolve_route(id, 2000), EINVAL);
	EXPECT_ERR(rdma_bind_addr(id, (struct sockaddr *)&dst), EINVAL);
	EXPECT_ERR(rdma_listen(id, 1), EINVAL);
	EXPECT_ERR(rdma_connect(id, &cp), EINVAL);
	EXPECT_ERR(rdma_disconnect(id), EINVAL);
	EXPECT_ERR(rdma_create_qp(id, NULL, &(struct ibv_qp_init_attr){ .qp_type = IBV_QPT_RC }),
		   EINVAL);
	EXPECT_ERR(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &(uint8_t){ 0 }, 1),
		   EINVAL);
	rdma_destroy_qp(id);
	if (rdma_get_src_port(id) != 0) {
		printf("FAIL rdma_get_src_port of a destroyed id is not 0\n");
		fails++;
	}

	/* Not an id at all (perftest 4.5 passes what its freed array of ids holds). */
	memset(&fake, 0xa5, sizeof(fake));
	EXPECT_ERR(rdma_resolve_addr(&fake, NULL, (struct sockaddr *)&dst, 2000), EINVAL);
	EXPECT_ERR(rdma_destroy_id(&fake), EINVAL);
	memset(&fake_ev, 0xa5, sizeof(fake_ev));
	EXPECT_ERR(rdma_ack_cm_event(&fake_ev), EINVAL);

	/* Destroy while an event is pending: it goes with its id. */
	if (rdma_create_id(ch, &id2, NULL, RDMA_PS_TCP) != 0)
		return 1;
	EXPECT_OK(rdma_resolve_addr(id2, NULL, (struct sockaddr *)&dst, 2000));
	EXPECT_OK(rdma_destroy_id(id2));
	fl = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	EXPECT_ERR(rdma_get_cm_event(ch, &rej), EAGAIN);
	fcntl(ch->fd, F_SETFL, fl);

	/* The channel destroyed twice; no id on it afterwards. */
	rdma_destroy_event_channel(ch);
	rdma_destroy_event_channel(ch);
	EXPECT_ERR(rdma_create_id(ch, &id2, NULL, RDMA_PS_TCP), EINVAL);

	/* What a careful retry does: all new, and the library still works. */
	ch2 = rdma_create_event_channel();
	if (ch2 == NULL)
		return 1;
	id = routed_id(ch2, (struct sockaddr *)&dst);
	EXPECT_OK(rdma_connect(id, &cp));
	expect_event(ch2, RDMA_CM_EVENT_REJECTED, 8, NULL);
	rdma_destroy_qp(id);
	EXPECT_OK(rdma_destroy_id(id));
	rdma_destroy_event_channel(ch2);
	if (fails != 0) {
		printf("abuse: %d check(s) failed\n", fails);
		return 1;
	}
	printf("abuse: ok\n");
	return 0;
}
