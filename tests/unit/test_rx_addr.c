/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive address checks: a frame not addressed to this port (destination MAC, destination
 * IP), or on a connected QP not from its peer to its own GID, is dropped with a named reason
 * and changes nothing (memory, PSN, counters of the QP). Each case is a well-formed frame
 * (checksum and ICRC right) that differs from an accepted one in one address only; the
 * accepted one is injected last and must land. Over IPv4 (the fast parser) and IPv6 (the full
 * parser).
 */
#include "droce_internal.h"
#include "droce_test.h"
#include "engine_harness.h"

#define PAY 64

static uint8_t mem[4096];

struct fx {
	struct eh_world w;
	struct droce_qp *qp[2];
	struct droce_mr *mr;
	uint8_t gid2[16];    /* node 1's second GID (index 1) */
	uint8_t foreign[16]; /* an address of no one here */
};

/* Node 1 again, with a second GID of the same family at index 1. */
static void
second_gid(struct fx *f)
{
	struct eh_node *n = &f->w.n[1];
	struct droce_io io = { eh_tx_alloc, eh_tx_send, eh_rand64, n };
	struct droce_dev_attr a;
	int err = 0;

	droce_dev_destroy(n->dev);
	memset(&a, 0, sizeof(a));
	memcpy(a.mac, n->mac, 6);
	memcpy(a.gids[0], n->gid, 16);
	memcpy(a.gids[1], f->gid2, 16);
	a.num_gids = 2;
	a.eth_mtu = 1500;
	a.max_qp = a.max_cq = 16;
	a.max_mr = 64;
	a.max_srq = a.max_ah = a.max_pd = 4;
	n->dev = droce_dev_create(&a, &io, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n->dev);
	n->pd = droce_pd_alloc(n->dev, &err);
	n->cq = droce_cq_create(n->dev, 4096, NULL, &err);
}

static void
fx_init(struct fx *f, enum droce_qp_type t, bool ipv6)
{
	struct eh_qp_opts o;
	int err = 0;

	eh_init_v(&f->w, 1500, ipv6);
	memcpy(f->gid2, f->w.n[1].gid, 16);
	memcpy(f->foreign, f->w.n[1].gid, 16);
	f->gid2[15] = 9;
	f->foreign[15] = 77;
	second_gid(f);
	eh_opts_default(&o);
	eh_pair(&f->w, t, &o, f->qp, 16);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->qp[1]);
	f->mr = droce_mr_reg(f->w.n[1].pd, mem, sizeof(mem), o.access, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->mr);
	memset(mem, 0, sizeof(mem));
}

/* A request from node 0's QP to node 1's, addressed as node 0 addresses it. */
static void
req_pkt(const struct fx *f, uint8_t opcode, struct droce_pkt *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->smac, f->w.n[0].mac, 6);
	memcpy(p->dmac, f->w.n[1].mac, 6);
	memcpy(p->sgid, f->w.n[0].gid, 16);
	memcpy(p->dgid, f->w.n[1].gid, 16);
	p->ip_ver = f->w.ipv6 ? 6 : 4;
	p->hop_limit = 64;
	p->udp_sport = 0xC000;
	p->pkey = DROCE_PKEY_DEFAULT;
	p->opcode = opcode;
	p->dqpn = droce_qp_num(f->qp[1]);
	p->psn = f->qp[1]->resp.epsn;
	p->ackreq = true;
	p->reth_va = (uintptr_t)mem;
	p->reth_rkey = droce_mr_rkey(f->mr);
	p->reth_len = PAY;
	p->deth_qkey = 0x11111111;
	p->deth_sqpn = droce_qp_num(f->qp[0]);
}

/* Build p (PAY bytes of 0xA5, none for a CNP) and hand it to node 1. */
static void
inject(struct fx *f, struct droce_pkt *p)
{
	static uint8_t frame[2048], pay[PAY];
	const uint8_t *fp = frame;
	uint32_t len;
	int r;

	memset(pay, 0xA5, sizeof(pay));
	r = droce_build(frame, sizeof(frame), p, pay,
			droce_opcode_info(p->opcode)->flags & DROCE_OPF_PAYLOAD ? PAY : 0);
	CU_ASSERT_FATAL(r > 0);
	len = (uint32_t)r;
	droce_dev_rx_burst(f->w.n[1].dev, &fp, &len, 1, f->w.now);
}

static uint64_t
drops(const struct fx *f, enum droce_drop d)
{
	return droce_dev_drops(f->w.n[1].dev, d);
}

/* p once: dropped for want, nothing written, the responder's PSN unmoved. */
static void
refused(struct fx *f, struct droce_pkt *p, enum droce_drop want)
{
	uint64_t before = drops(f, want), none = drops(f, DROCE_DROP_NONE);
	uint32_t epsn = f->qp[1]->resp.epsn;

	inject(f, p);
	CU_ASSERT_EQUAL(drops(f, want), before + 1);
	CU_ASSERT_EQUAL(drops(f, DROCE_DROP_NONE), none);
	CU_ASSERT_EQUAL(f->qp[1]->resp.epsn, epsn);
	CU_ASSERT_EQUAL(mem[0], 0);
	if (drops(f, want) != before + 1)
		fprintf(stderr, "expected a drop for %s\n", droce_drop_name(want));
}

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast_mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };

/* RC and UC WRITEs: every address must be the path's, exactly. */
static void
connected_case(enum droce_qp_type t, bool ipv6)
{
	uint8_t op = t == DROCE_QPT_RC ? DROCE_OP_RC_RDMA_WRITE_ONLY : DROCE_OP_UC_RDMA_WRITE_ONLY;
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, t, ipv6);
	/* broadcast, and a group this port has not joined */
	req_pkt(&f, op, &p);
	memcpy(p.dmac, bcast, 6);
	refused(&f, &p, DROCE_DROP_DST_MAC);
	req_pkt(&f, op, &p);
	memcpy(p.dmac, mcast_mac, 6);
	refused(&f, &p, DROCE_DROP_DST_MAC);
	/* another station's MAC */
	req_pkt(&f, op, &p);
	p.dmac[5] ^= 0x40;
	refused(&f, &p, DROCE_DROP_DST_MAC);
	/* an address that is not ours at all */
	req_pkt(&f, op, &p);
	memcpy(p.dgid, f.foreign, 16);
	refused(&f, &p, DROCE_DROP_DST_IP);
	/* ours, but not the QP's sgid_index */
	req_pkt(&f, op, &p);
	memcpy(p.dgid, f.gid2, 16);
	refused(&f, &p, DROCE_DROP_DST_GID);
	/* a spoofed source: a third host, and the receiver's own address */
	req_pkt(&f, op, &p);
	memcpy(p.sgid, f.foreign, 16);
	refused(&f, &p, DROCE_DROP_SRC_GID);
	req_pkt(&f, op, &p);
	memcpy(p.sgid, f.w.n[1].gid, 16);
	refused(&f, &p, DROCE_DROP_SRC_GID);
	/* the right addresses: placed */
	req_pkt(&f, op, &p);
	inject(&f, &p);
	CU_ASSERT_EQUAL(mem[0], 0xA5);
	CU_ASSERT_EQUAL(mem[PAY - 1], 0xA5);
	CU_ASSERT_EQUAL(mem[PAY], 0);
	eh_fini(&f.w);
}

static void
rc_v4(void)
{
	connected_case(DROCE_QPT_RC, false);
}

static void
rc_v6(void)
{
	connected_case(DROCE_QPT_RC, true);
}

static void
uc_v4(void)
{
	connected_case(DROCE_QPT_UC, false);
}

static void
uc_v6(void)
{
	connected_case(DROCE_QPT_UC, true);
}

/* An IPv6 frame to a port with IPv4 GIDs only, even to the IPv6 form of its address. */
static void
ipv6_to_v4_port(void)
{
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, DROCE_QPT_RC, false);
	req_pkt(&f, DROCE_OP_RC_RDMA_WRITE_ONLY, &p);
	p.ip_ver = 6;
	memset(p.sgid, 0, 16);
	memset(p.dgid, 0, 16);
	p.sgid[0] = p.dgid[0] = 0x20;
	p.sgid[15] = 1;
	p.dgid[15] = 2;
	refused(&f, &p, DROCE_DROP_DST_IP);
	eh_fini(&f.w);
}

/* A CNP slows a QP down only when it comes from that QP's peer to it (Annex A17.9.3). */
static void
cnp_from_peer_only(void)
{
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, DROCE_QPT_RC, false);
	req_pkt(&f, DROCE_OP_CNP, &p);
	memcpy(p.sgid, f.foreign, 16);
	inject(&f, &p);
	CU_ASSERT_EQUAL(drops(&f, DROCE_DROP_SRC_GID), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RP_CNP_HANDLED), 0);
	req_pkt(&f, DROCE_OP_CNP, &p);
	memcpy(p.dmac, bcast, 6);
	inject(&f, &p);
	CU_ASSERT_EQUAL(drops(&f, DROCE_DROP_DST_MAC), 1);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RP_CNP_HANDLED), 0);
	/* to no QP: nothing acts on it */
	req_pkt(&f, DROCE_OP_CNP, &p);
	p.dqpn = droce_qp_num(f.qp[1]) ^ 0x100;
	inject(&f, &p);
	CU_ASSERT_EQUAL(drops(&f, DROCE_DROP_BAD_QPN), 1);
	req_pkt(&f, DROCE_OP_CNP, &p);
	inject(&f, &p);
	CU_ASSERT_EQUAL(droce_qp_counter(f.qp[1], DROCE_CNT_RP_CNP_HANDLED), 1);
	eh_fini(&f.w);
}

/* n receives of 1 KiB each on the fixture's receiving QP (wr_id 0..n-1). */
static void
post_recvs(struct fx *f, unsigned int n)
{
	struct droce_recv_wr rw, *bad;
	struct droce_sge sge;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sge.addr = (uintptr_t)mem + 1024 * i;
		sge.length = 1024;
		sge.lkey = droce_mr_lkey(f->mr);
		memset(&rw, 0, sizeof(rw));
		rw.wr_id = i;
		rw.sg_list = &sge;
		rw.num_sge = 1;
		CU_ASSERT_EQUAL_FATAL(droce_post_recv(f->qp[1], &rw, &bad), 0);
	}
}

/* UD: any of the port's GIDs; the MAC and IP checks as for every transport. */
static void
ud_by_destination(void)
{
	struct droce_wc wc[4];
	struct droce_pkt p;
	struct fx f;

	fx_init(&f, DROCE_QPT_UD, false);
	post_recvs(&f, 2);
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	memcpy(p.dmac, bcast, 6);
	refused(&f, &p, DROCE_DROP_DST_MAC);
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	memcpy(p.dgid, f.foreign, 16);
	refused(&f, &p, DROCE_DROP_DST_IP);
	/* a datagram's source is anyone's; to the second GID it is ours */
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	memcpy(p.sgid, f.foreign, 16);
	memcpy(p.dgid, f.gid2, 16);
	inject(&f, &p);
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(wc[0].status, DROCE_WC_SUCCESS);
	CU_ASSERT_EQUAL(mem[DROCE_UD_GRH], 0xA5);
	eh_fini(&f.w);
}

/* DestQP 0xFFFFFF: the group's frames arrive on the group's MAC, never broadcast, never on
 * another group's (RFC 1112 6.4); multicast loopback is not affected (test_mcast). */
static void
group_mac(void)
{
	static const uint8_t other_group_mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x04 };
	struct droce_recv_wr rw, *bad;
	struct droce_sge sge;
	struct droce_wc wc[4];
	struct droce_pkt p;
	uint8_t group[16];
	struct fx f;

	fx_init(&f, DROCE_QPT_UD, false);
	droce_gid_from_v4(group, 0xEF010203); /* 239.1.2.3 */
	CU_ASSERT_EQUAL_FATAL(droce_mcast_attach(f.qp[1], group), 0);
	sge.addr = (uintptr_t)mem;
	sge.length = 1024;
	sge.lkey = droce_mr_lkey(f.mr);
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	CU_ASSERT_EQUAL_FATAL(droce_post_recv(f.qp[1], &rw, &bad), 0);
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	p.dqpn = DROCE_MCAST_QPN;
	memcpy(p.dgid, group, 16);
	memcpy(p.dmac, bcast, 6);
	refused(&f, &p, DROCE_DROP_DST_MAC);
	memcpy(p.dmac, other_group_mac, 6);
	refused(&f, &p, DROCE_DROP_DST_MAC);
	memcpy(p.dmac, mcast_mac, 6); /* 239.1.2.3's */
	inject(&f, &p);
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[1], wc, 4), 1);
	CU_ASSERT_EQUAL(mem[DROCE_UD_GRH], 0xA5);
	eh_fini(&f.w);
}

/* droce_dev_set_gids (host-address mode follows `ip addr add/del`): an address added is a
 * destination from then on, one removed (its slot left empty, the zero GID) no more, and the
 * other slots keep their indices. */
static void
gids_follow(void)
{
	struct droce_wc wc[4];
	struct droce_pkt p;
	uint8_t t[3][16];
	struct fx f;

	fx_init(&f, DROCE_QPT_UD, false);
	post_recvs(&f, 3);
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	memcpy(p.dgid, f.foreign, 16);
	refused(&f, &p, DROCE_DROP_DST_IP);
	/* the foreign address added in a third slot: now ours */
	memcpy(t[0], f.w.n[1].gid, 16);
	memcpy(t[1], f.gid2, 16);
	memcpy(t[2], f.foreign, 16);
	CU_ASSERT_EQUAL(droce_dev_set_gids(f.w.n[1].dev, (const uint8_t(*)[16])t, 3), 0);
	inject(&f, &p);
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[1], wc, 4), 1);
	/* the second removed (slot 1 empty): refused; the first and third still ours */
	memset(t[1], 0, 16);
	CU_ASSERT_EQUAL(droce_dev_set_gids(f.w.n[1].dev, (const uint8_t(*)[16])t, 3), 0);
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	memcpy(p.dgid, f.gid2, 16);
	refused(&f, &p, DROCE_DROP_DST_IP);
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	memcpy(p.dgid, f.foreign, 16);
	inject(&f, &p);
	CU_ASSERT_EQUAL(eh_poll(&f.w.n[1], wc, 4), 1);
	/* an empty slot is no destination, even for a datagram to 0.0.0.0 */
	req_pkt(&f, DROCE_OP_UD_SEND_ONLY, &p);
	memset(p.dgid, 0, 16);
	p.dgid[10] = p.dgid[11] = 0xff;
	refused(&f, &p, DROCE_DROP_DST_IP);
	CU_ASSERT_EQUAL(droce_dev_set_gids(f.w.n[1].dev, NULL, 1), -EINVAL);
	CU_ASSERT_EQUAL(
		droce_dev_set_gids(f.w.n[1].dev, (const uint8_t(*)[16])t, DROCE_MAX_GIDS + 1),
		-EINVAL);
	eh_fini(&f.w);
}

DROCE_TEST_MAIN("rx_addr", DROCE_TEST(gids_follow), DROCE_TEST(rc_v4), DROCE_TEST(rc_v6),
		DROCE_TEST(uc_v4), DROCE_TEST(uc_v6), DROCE_TEST(ipv6_to_v4_port),
		DROCE_TEST(cnp_from_peer_only), DROCE_TEST(ud_by_destination),
		DROCE_TEST(group_mac))
