/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows between two processes, written against the real verbs and rdma_cm headers
 * and run on droce's libraries (test_rdmacm.sh). The server exposes two windows over one MR:
 * a type 1 window bound with ibv_bind_mw, a type 2 window bound with an IBV_WR_BIND_MW
 * request. The client WRITEs through both, READs back through the type 1 window, replaces
 * 8 of its bytes with an ATOMIC WRITE (ibv_wr_atomic_write, IBTA 1.5) and READs them back, then
 * SENDs with Invalidate naming the type 2 key. The server checks each byte in and out of the
 * windows, the WITH_INV completion and its key, that the MR cannot go while a window is
 * bound (EBUSY). Last the client WRITEs with the invalidated key and must get
 * IBV_WC_REM_ACCESS_ERR while the server's bytes stay as they were.
 *
 *   mw_pair server ADDR PORT    prints the two windows' keys ("server: keys 0x.. 0x..", the
 *                               type 1 key first), "server: ok" and exits 0 when every
 *                               check passed
 *   mw_pair client ADDR PORT    prints "client: ok" and exits 0 when every check passed
 * Any failure prints what differed and exits 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define BUF    65536
#define W1_OFF 4096  /* type 1 window: [4096, 8192) */
#define W2_OFF 16384 /* type 2 window: [16384, 20480) */
#define WLEN   4096

struct keys { /* server -> client, in a SEND */
	uint64_t va1, va2;
	uint32_t rkey1, rkey2;
};

static const char *me;
static uint8_t buf[BUF], msg[256];
/* the ATOMIC WRITE's 8 bytes, at offset AW_OFF of the type 1 window */
#define AW_OFF 8
static const uint8_t aw_val[8] = { 0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6, 0x07, 0x18 };

static void
die(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", me, what, strerror(err));
	exit(1);
}

static void
check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s: check failed: %s\n", me, what);
		exit(1);
	}
}

/* One completion from cq; its status must be want. */
static struct ibv_wc
wait_wc(struct ibv_cq *cq, enum ibv_wc_status want, const char *what)
{
	struct ibv_wc wc;
	long spins = 0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		if (++spins > 2000000000L)
			die(what, ETIMEDOUT);
	if (n < 0)
		die(what, EIO);
	if (wc.status != want) {
		fprintf(stderr, "%s: %s: status %s, expected %s\n", me, what,
			ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
		exit(1);
	}
	return wc;
}

static uint8_t
pattern(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 7 + seed);
}

static int
server(struct rdma_cm_id *listen)
{
	struct ibv_device_attr da;
	struct rdma_cm_id *id;
	struct ibv_mr *mr, *mmr;
	struct ibv_mw *mw1, *mw2;
	struct ibv_mw_bind bind;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	struct keys k;
	size_t i;

	if (rdma_listen(listen, 1) || rdma_get_request(listen, &id))
		die("listen", errno);
	check(ibv_query_device(id->verbs, &da) == 0, "ibv_query_device");
	check(da.max_mw > 0 && (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
		      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B),
	      "device reports windows");
	memset(buf, 0x5C, sizeof(buf));
	mr = ibv_reg_mr(id->pd, buf, BUF,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_MW_BIND);
	mmr = rdma_reg_msgs(id, msg, sizeof(msg));
	mw1 = ibv_alloc_mw(id->pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(id->pd, IBV_MW_TYPE_2);
	if (!mr || !mmr || !mw1 || !mw2)
		die("reg_mr / alloc_mw", errno);
	if (rdma_post_recv(id, NULL, msg, sizeof(msg), mmr) || rdma_accept(id, NULL))
		die("accept", errno);

	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)buf + W1_OFF;
	bind.bind_info.length = WLEN;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_bind_mw(id->qp, mw1, &bind))
		die("ibv_bind_mw", errno);
	wc = wait_wc(id->send_cq, IBV_WC_SUCCESS, "type 1 bind");
	check(wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 1, "type 1 bind completion");

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)buf + W2_OFF;
	wr.bind_mw.bind_info.length = WLEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(id->qp, &wr, &bad))
		die("post BIND_MW", errno);
	wc = wait_wc(id->send_cq, IBV_WC_SUCCESS, "type 2 bind");
	check(wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 2, "type 2 bind completion");
	check(ibv_dereg_mr(mr) == EBUSY, "ibv_dereg_mr with windows bound is EBUSY");

	k.va1 = (uintptr_t)buf + W1_OFF;
	k.va2 = (uintptr_t)buf + W2_OFF;
	k.rkey1 = mw1->rkey; /* ibv_bind_mw moved it to the new key */
	k.rkey2 = wr.bind_mw.rkey;
	printf("server: keys 0x%08x 0x%08x\n", k.rkey1, k.rkey2);
	fflush(stdout);
	memcpy(msg, &k, sizeof(k));
	if (rdma_post_send(id, NULL, msg, sizeof(k), mmr, IBV_SEND_SIGNALED))
		die("send keys", errno);
	wait_wc(id->send_cq, IBV_WC_SUCCESS, "send keys");
	if (rdma_post_recv(id, NULL, msg, sizeof(msg), mmr))
		die("post_recv", errno);

	/* the client's SEND with Invalidate, after its WRITEs */
	wc = wait_wc(id->recv_cq, IBV_WC_SUCCESS, "SEND with Invalidate");
	check(wc.opcode == IBV_WC_RECV && (wc.wc_flags & IBV_WC_WITH_INV), "WITH_INV flag");
	check(wc.invalidated_rkey == k.rkey2, "invalidated_rkey is the type 2 key");
	check(wc.byte_len == 5 && memcmp(msg, "done", 5) == 0, "the message");
	for (i = 0; i < BUF; i++) {
		uint8_t want = 0x5C;

		if (i >= W1_OFF + AW_OFF && i < W1_OFF + AW_OFF + 8)
			want = aw_val[i - W1_OFF - AW_OFF];
		else if (i >= W1_OFF && i < W1_OFF + WLEN)
			want = pattern(i - W1_OFF, 1);
		else if (i >= W2_OFF && i < W2_OFF + WLEN)
			want = pattern(i - W2_OFF, 2);
		if (buf[i] != want) {
			fprintf(stderr, "%s: byte %zu is 0x%02x, expected 0x%02x\n", me, i, buf[i],
				want);
			return 1;
		}
	}
	/* let the client try the invalidated key; its WRITE must not land */
	if (rdma_post_recv(id, NULL, msg, sizeof(msg), mmr))
		die("post_recv", errno);
	memcpy(msg, "ok", 3);
	if (rdma_post_send(id, NULL, msg, 3, mmr, IBV_SEND_SIGNALED))
		die("send ok", errno);
	wait_wc(id->send_cq, IBV_WC_SUCCESS, "send ok");
	/* its refused WRITE moves this QP to ERR: the receive flushes */
	wait_wc(id->recv_cq, IBV_WC_WR_FLUSH_ERR, "receive flushed after the refused WRITE");
	for (i = W2_OFF; i < W2_OFF + WLEN; i++)
		check(buf[i] == pattern(i - W2_OFF, 2), "the type 2 window's bytes unchanged");
	check(ibv_dealloc_mw(mw2) == 0, "dealloc type 2");
	check(ibv_dereg_mr(mr) == EBUSY, "type 1 still bound: EBUSY");
	check(ibv_dealloc_mw(mw1) == 0, "dealloc type 1");
	check(ibv_dereg_mr(mr) == 0, "dereg once no window is bound");
	rdma_disconnect(id);
	rdma_dereg_mr(mmr);
	rdma_destroy_ep(id);
	printf("server: ok\n");
	return 0;
}

static void
write_to(struct rdma_cm_id *id, struct ibv_mr *mr, size_t off, uint64_t va, uint32_t rkey,
	 enum ibv_wc_status want, const char *what)
{
	if (rdma_post_write(id, NULL, buf + off, WLEN, mr, IBV_SEND_SIGNALED, va, rkey))
		die(what, errno);
	wait_wc(id->send_cq, want, what);
}

/* ibv_wr_atomic_write through the type 1 window: an ATOMIC_WRITE completion of 8 bytes, and
 * a READ of the 16 bytes around it shows them and the WRITE's bytes beside them. */
static void
atomic_write(struct rdma_cm_id *id, struct ibv_mr *mr, uint64_t va, uint32_t rkey)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(id->qp);
	uint8_t *back = buf + 3 * WLEN;
	struct ibv_wc wc;

	check(qx != NULL, "ibv_qp_to_qp_ex");
	ibv_wr_start(qx);
	qx->wr_id = 77;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, rkey, va + AW_OFF, aw_val);
	check(ibv_wr_complete(qx) == 0, "ibv_wr_complete (ATOMIC WRITE)");
	wc = wait_wc(id->send_cq, IBV_WC_SUCCESS, "ATOMIC WRITE through type 1");
	check(wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 77 && wc.byte_len == 8,
	      "an ATOMIC_WRITE completion of 8 bytes");
	memset(back, 0, 2 * AW_OFF + 8);
	if (rdma_post_read(id, NULL, back, 2 * AW_OFF + 8, mr, IBV_SEND_SIGNALED, va, rkey))
		die("READ", errno);
	wait_wc(id->send_cq, IBV_WC_SUCCESS, "READ after the ATOMIC WRITE");
	check(memcmp(back, buf, AW_OFF) == 0 && memcmp(back + AW_OFF, aw_val, 8) == 0 &&
		      memcmp(back + AW_OFF + 8, buf + AW_OFF + 8, AW_OFF) == 0,
	      "READ shows the ATOMIC WRITE's 8 bytes, and only those changed");
}

static int
client(struct rdma_cm_id *id)
{
	struct ibv_mr *mr, *mmr;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct keys k;
	size_t i;

	mr = ibv_reg_mr(id->pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	mmr = rdma_reg_msgs(id, msg, sizeof(msg));
	if (!mr || !mmr)
		die("reg_mr", errno);
	if (rdma_post_recv(id, NULL, msg, sizeof(msg), mmr) || rdma_connect(id, NULL))
		die("connect", errno);
	wait_wc(id->recv_cq, IBV_WC_SUCCESS, "keys");
	memcpy(&k, msg, sizeof(k));
	check(k.rkey1 != k.rkey2, "two keys");
	for (i = 0; i < WLEN; i++) {
		buf[i] = pattern(i, 1);
		buf[WLEN + i] = pattern(i, 2);
	}
	write_to(id, mr, 0, k.va1, k.rkey1, IBV_WC_SUCCESS, "WRITE through type 1");
	write_to(id, mr, WLEN, k.va2, k.rkey2, IBV_WC_SUCCESS, "WRITE through type 2");
	/* READ back through the type 1 window */
	memset(buf + 2 * WLEN, 0, WLEN);
	if (rdma_post_read(id, NULL, buf + 2 * WLEN, WLEN, mr, IBV_SEND_SIGNALED, k.va1, k.rkey1))
		die("READ", errno);
	wait_wc(id->send_cq, IBV_WC_SUCCESS, "READ through type 1");
	check(memcmp(buf, buf + 2 * WLEN, WLEN) == 0, "READ returns what was written");
	atomic_write(id, mr, k.va1, k.rkey1);

	if (rdma_post_recv(id, NULL, msg, sizeof(msg), mmr))
		die("post_recv", errno);
	memcpy(buf, "done", 5);
	sge.addr = (uintptr_t)buf;
	sge.length = 5;
	sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = k.rkey2;
	if (ibv_post_send(id->qp, &wr, &bad))
		die("SEND with Invalidate", errno);
	wait_wc(id->send_cq, IBV_WC_SUCCESS, "SEND with Invalidate");
	wait_wc(id->recv_cq, IBV_WC_SUCCESS, "ok");
	check(memcmp(msg, "ok", 3) == 0, "the server's ok");
	memset(buf + WLEN, 0xEE, WLEN);
	write_to(id, mr, WLEN, k.va2, k.rkey2, IBV_WC_REM_ACCESS_ERR,
		 "WRITE with the invalidated key");
	rdma_disconnect(id);
	rdma_dereg_mr(mmr);
	ibv_dereg_mr(mr);
	rdma_destroy_ep(id);
	printf("client: ok\n");
	return 0;
}

int
main(int argc, char **argv)
{
	struct rdma_addrinfo hints, *res;
	struct ibv_qp_init_attr attr;
	struct rdma_cm_id *id;
	int srv;

	if (argc != 4 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: mw_pair server|client ADDR PORT\n");
		return 2;
	}
	me = argv[1];
	srv = strcmp(argv[1], "server") == 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	if (srv)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(argv[2], argv[3], &hints, &res))
		die("rdma_getaddrinfo", errno);
	memset(&attr, 0, sizeof(attr));
	attr.cap.max_send_wr = attr.cap.max_recv_wr = 8;
	attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 0;
	/* the server's attr is for the ids rdma_get_request hands out; the client's QP is made
	 * with send_ops_flags, for ibv_wr_atomic_write */
	if (rdma_create_ep(&id, res, NULL, srv ? &attr : NULL))
		die("rdma_create_ep", errno);
	rdma_freeaddrinfo(res);
	if (!srv) {
		struct ibv_qp_init_attr_ex ax;

		memset(&ax, 0, sizeof(ax));
		memcpy(&ax, &attr, sizeof(attr));
		ax.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ax.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |
				    IBV_QP_EX_WITH_ATOMIC_WRITE;
		if (rdma_create_qp_ex(id, &ax))
			die("rdma_create_qp_ex", errno);
	}
	return srv ? server(id) : client(id);
}
