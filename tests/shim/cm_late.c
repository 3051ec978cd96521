/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An rdma_cm pair that makes the client's REQ arrive before the server's rdma_listen, on
 * purpose: the race perftest -R runs between its exchange and its test QPs. Built against
 * the real librdmacm headers, run on droce's librdmacm.so.1 (test_rdmacm.sh). Once
 * connected each side prints its QP's attributes ("qp ..."), which the test checks against
 * the REQ and REP on the wire: what a kernel peer would make of them.
 *
 *   cm_late server ADDR PORT MARKER EXTRA_MS [ACCEPT_MS]
 *                                             bind, print "bound", wait for MARKER to exist,
 *                                             EXTRA_MS more, then listen and take one
 *                                             connection (rdma_accept ACCEPT_MS after its
 *                                             CONNECT_REQUEST) until the client disconnects
 *   cm_late server ADDR PORT MARKER never     bind, never listen (until killed)
 *   cm_late client ADDR PORT MARKER [null]    connect (retry 5, RNR retry 6, responder
 *                                             resources 3, initiator depth 2; "null": no
 *                                             conn_param); MARKER is made once the REQ is
 *                                             out; exit 0 established (and disconnected),
 *                                             3 rejected (status printed), 4 otherwise
 * The server accepts with RNR retry 3, responder resources and initiator depth 1.
 * CM_ACK_TIMEOUT=N: both set the QP's local ACK timeout with rdma_set_option.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *ch;

static void
die(const char *what)
{
	fprintf(stderr, "cm_late: %s: %s\n", what, strerror(errno));
	exit(4);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The next event, acked; its id and status returned. */
static enum rdma_cm_event_type
next_event(struct rdma_cm_id **id, int *status)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type t;

	if (rdma_get_cm_event(ch, &ev) != 0)
		die("rdma_get_cm_event");
	t = ev->event;
	*id = ev->id;
	*status = ev->status;
	printf("event %s status %d\n", rdma_event_str(t), ev->status);
	fflush(stdout);
	rdma_ack_cm_event(ev);
	return t;
}

static void
expect(enum rdma_cm_event_type want)
{
	struct rdma_cm_id *id;
	int status;

	if (next_event(&id, &status) != want) {
		fprintf(stderr, "cm_late: expected %s\n", rdma_event_str(want));
		exit(4);
	}
}

/* What the handshake made of the QP (nothing sent yet: the PSNs are the starting ones). */
static void
print_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(id->qp, &a,
			 IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_TIMEOUT,
			 &init) != 0)
		die("ibv_query_qp");
	printf("qp sq_psn %u rq_psn %u retry %u rnr_retry %u max_rd_atomic %u "
	       "max_dest_rd_atomic %u timeout %u\n",
	       a.sq_psn, a.rq_psn, a.retry_cnt, a.rnr_retry, a.max_rd_atomic, a.max_dest_rd_atomic,
	       a.timeout);
	fflush(stdout);
}

/* CM_ACK_TIMEOUT=N: rdma_set_option's QP local ACK timeout on the id that connects. */
static void
ack_timeout(struct rdma_cm_id *id)
{
	const char *v = getenv("CM_ACK_TIMEOUT");
	uint8_t t;

	if (v == NULL)
		return;
	t = (uint8_t)atoi(v);
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)) != 0)
		die("rdma_set_option");
}

static void
make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (rdma_create_qp(id, NULL, &a) != 0)
		die("rdma_create_qp");
}

static int
server(struct rdma_cm_id *id, struct sockaddr_in *sin, const char *marker, const char *extra,
       long accept_ms)
{
	struct rdma_conn_param p = { .responder_resources = 1,
				     .initiator_depth = 1,
				     .rnr_retry_count = 3 };
	struct rdma_cm_id *child;
	int status, i;

	if (rdma_bind_addr(id, (struct sockaddr *)sin) != 0)
		die("rdma_bind_addr");
	printf("bound\n");
	fflush(stdout);
	for (i = 0; i < 3000 && access(marker, F_OK) != 0; i++) /* 30 s at most */
		sleep_ms(10);
	if (strcmp(extra, "never") == 0) {
		for (;;)
			pause(); /* the harness kills us */
	}
	sleep_ms(atol(extra));
	if (rdma_listen(id, 1) != 0)
		die("rdma_listen");
	if (next_event(&child, &status) != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 4;
	make_qp(child);
	ack_timeout(child);
	sleep_ms(accept_ms);
	if (rdma_accept(child, &p) != 0)
		die("rdma_accept");
	expect(RDMA_CM_EVENT_ESTABLISHED);
	print_qp(child);
	expect(RDMA_CM_EVENT_DISCONNECTED);
	rdma_destroy_qp(child);
	rdma_destroy_id(child);
	return 0;
}

static int
client(struct rdma_cm_id *id, struct sockaddr_in *sin, const char *marker, bool null_param)
{
	struct rdma_cm_id *ev_id;
	struct rdma_conn_param p = { .responder_resources = 3,
				     .initiator_depth = 2,
				     .retry_count = 5,
				     .rnr_retry_count = 6 };
	int status, fd;

	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)sin, 2000) != 0)
		die("rdma_resolve_addr");
	expect(RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, 2000) != 0)
		die("rdma_resolve_route");
	expect(RDMA_CM_EVENT_ROUTE_RESOLVED);
	make_qp(id);
	ack_timeout(id);
	if (rdma_connect(id, null_param ? NULL : &p) != 0)
		die("rdma_connect");
	fd = open(marker, O_CREAT | O_WRONLY, 0600); /* the REQ is out */
	if (fd < 0)
		die(marker);
	close(fd);
	switch (next_event(&ev_id, &status)) {
	case RDMA_CM_EVENT_ESTABLISHED:
		print_qp(id);
		break;
	case RDMA_CM_EVENT_REJECTED:
		printf("rejected status %d\n", status);
		return 3;
	default:
		return 4;
	}
	if (rdma_disconnect(id) != 0)
		die("rdma_disconnect");
	expect(RDMA_CM_EVENT_DISCONNECTED);
	rdma_destroy_qp(id);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_cm_id *id;
	int rc;

	if (argc < 5 || (strcmp(argv[1], "server") == 0 && argc < 6) ||
	    inet_pton(AF_INET, argv[2], &sin.sin_addr) != 1) {
		fprintf(stderr,
			"usage: cm_late server ADDR PORT MARKER EXTRA_MS|never [ACCEPT_MS]\n"
			"       cm_late client ADDR PORT MARKER [null]\n");
		return 2;
	}
	sin.sin_port = htons((uint16_t)atoi(argv[3]));
	ch = rdma_create_event_channel();
	if (ch == NULL)
		die("rdma_create_event_channel");
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
		die("rdma_create_id");
	if (strcmp(argv[1], "server") == 0)
		rc = server(id, &sin, argv[4], argv[5], argc > 6 ? atol(argv[6]) : 0);
	else
		rc = client(id, &sin, argv[4], argc > 5 && strcmp(argv[5], "null") == 0);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return rc;
}
