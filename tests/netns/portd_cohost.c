/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile program on the same port: a second verbs client under droce-portd (run on the
 * shim) that aims RDMA WRITEs of 0xEE at another program of the same service, at the port's
 * own GID (its neighbour's address too), with QPNs guessed in the victim's slot range and
 * guessed R_Keys, PSNs and addresses.
 *
 *   portd_cohost VICTIM_SLOT SLOT_BITS GUESSES
 *
 * For each guess: an RC QP to RTS towards the guessed QPN (local ACK timeout 4.096 us x 2^6,
 * one retry), one WRITE posted, its completion awaited (at most 1 s). A WRITE that completes
 * with IBV_WC_SUCCESS would mean a responder took it: that is the failure this looks for.
 * A QP the shim refuses to connect, a WRITE it refuses to post, or an error completion are all
 * the guess not landing. Prints one summary line; exit 0 when no WRITE succeeded and at least
 * one was posted, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#define WAIT_NS 1000000000ull

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* RESET -> INIT -> RTR -> RTS towards dqpn at gid: 0, or the transition that failed. */
static int
connect_qp(struct ibv_qp *qp, const union ibv_gid *gid, uint32_t dqpn, uint32_t psn)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return 1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = psn;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return 2;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 6;
	a.retry_cnt = 1;
	a.rnr_retry = 0;
	a.sq_psn = psn;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return 3;
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int slot, bits, guesses, i, posted = 0, refused = 0, errors = 0, ok = 0,
					     silent = 0;
	static uint8_t buf[4096];
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	enum ibv_wc_status last = IBV_WC_SUCCESS;
	union ibv_gid gid;
	int n;

	if (argc != 4) {
		fprintf(stderr, "usage: portd_cohost VICTIM_SLOT SLOT_BITS GUESSES\n");
		return 2;
	}
	slot = (unsigned int)atoi(argv[1]);
	bits = (unsigned int)atoi(argv[2]);
	guesses = (unsigned int)atoi(argv[3]);
	srand((unsigned int)now_ns());
	memset(buf, 0xEE, sizeof(buf));
	list = ibv_get_device_list(&n);
	if (list == NULL || n < 1 || (ctx = ibv_open_device(list[0])) == NULL) {
		printf("cohost: no device\n");
		return 1;
	}
	if (ibv_query_gid(ctx, 1, 0, &gid)) {
		printf("cohost: no GID 0\n");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (cq == NULL || mr == NULL) {
		printf("cohost: no PD, CQ or MR\n");
		return 1;
	}
	for (i = 0; i < guesses; i++) {
		uint32_t low = (uint32_t)rand() & ((1u << (24 - bits)) - 1);
		uint32_t dqpn = (slot << (24 - bits)) | (i < 16 ? i + 2 : low);
		struct ibv_qp_init_attr qa;
		struct ibv_send_wr wr, *bad;
		struct ibv_sge sge;
		struct ibv_wc wc;
		struct ibv_qp *qp;
		uint64_t end;

		memset(&qa, 0, sizeof(qa));
		qa.send_cq = qa.recv_cq = cq;
		qa.qp_type = IBV_QPT_RC;
		qa.cap.max_send_wr = qa.cap.max_recv_wr = 1;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		qp = ibv_create_qp(pd, &qa);
		if (qp == NULL) {
			printf("cohost: cannot create a QP\n");
			return 1;
		}
		if (connect_qp(qp, &gid, dqpn, (uint32_t)rand() & 0xFFFFFF) != 0) {
			refused++;
			ibv_destroy_qp(qp);
			continue;
		}
		sge.addr = (uintptr_t)buf;
		sge.length = 64;
		sge.lkey = mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.rkey = (uint32_t)rand();
		wr.wr.rdma.remote_addr = ((uint64_t)rand() << 32 | (uint64_t)rand()) & ~63ull;
		if (ibv_post_send(qp, &wr, &bad) != 0) {
			refused++;
			ibv_destroy_qp(qp);
			continue;
		}
		posted++;
		end = now_ns() + WAIT_NS;
		/* skip a late completion of an earlier guess's QP */
		while (((n = ibv_poll_cq(cq, 1, &wc)) == 0 || (n > 0 && wc.qp_num != qp->qp_num)) &&
		       now_ns() < end)
			;
		if (n > 0 && wc.qp_num != qp->qp_num)
			n = 0;
		if (n <= 0)
			silent++;
		else if (wc.status == IBV_WC_SUCCESS)
			ok++;
		else {
			errors++;
			last = wc.status;
		}
		ibv_destroy_qp(qp);
		while (ibv_poll_cq(cq, 1, &wc) > 0) /* a late completion of this QP's flush */
			;
	}
	printf("cohost: %u guesses at slot %u: %u posted, %u refused, %u error completions, "
	       "%u without a completion in 1 s, %u succeeded (the last error: %s)\n",
	       guesses, slot, posted, refused, errors, silent, ok,
	       errors ? ibv_wc_status_str(last) : "none");
	return ok == 0 && posted > 0 ? 0 : 1;
}
