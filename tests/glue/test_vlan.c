/* SPDX-License-Identifier: BSD-3-Clause */
/* 802.1Q: the vlan / vlan_pcp keys, and the neighbour module on a VLAN (crafted frames). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_byteorder.h"
#include "droce_neigh.h"
#include "droce_rt_config.h"
#include "droce_test.h"

#define MS	      1000000ull
#define TCI(pcp, vid) ((uint16_t)((pcp) << 13 | (vid)))

struct cap {
	uint8_t f[8][DROCE_NEIGH_FRAME_MAX];
	uint32_t len[8];
	unsigned int n;
};

static int
cap_tx(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct cap *c = ctx;

	CU_ASSERT_FATAL(c->n < 8 && len <= DROCE_NEIGH_FRAME_MAX);
	memcpy(c->f[c->n], frame, len);
	c->len[c->n++] = len;
	return 0;
}

static const uint8_t my_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t zmac[6];
static const uint8_t my4[4] = { 198, 18, 0, 1 }, peer4[4] = { 198, 18, 0, 2 };
static const uint8_t my6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t peer6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

static void
setup(struct droce_neigh *n, struct cap *c, uint16_t vlan, uint8_t pcp)
{
	struct droce_neigh_conf conf = {
		.has_ipv4 = true,
		.ipv4_prefix = 24,
		.has_ipv6 = true,
		.ipv6_prefix = 64,
		.timeout_ns = 1000 * MS,
		.retry_ns = 100 * MS,
		.tries = 3,
		.vlan = vlan,
		.vlan_pcp = pcp,
	};
	struct droce_neigh_ops ops = { .tx = cap_tx, .ctx = c };

	memset(c, 0, sizeof(*c));
	memcpy(conf.mac, my_mac, 6);
	memcpy(conf.ipv4, my4, 4);
	memcpy(conf.ipv6, my6, 16);
	CU_ASSERT_FATAL(droce_neigh_init(n, &conf, &ops) == 0);
}

/* A peer's ARP request for our address, tagged with tci unless tci < 0. */
static uint32_t
arp_request(uint8_t *f, int tci)
{
	uint32_t len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, peer4, zmac, my4);

	return tci < 0 ? len : droce_neigh_vlan_insert(f, len, (uint16_t)tci);
}

/* Frame i of c parses, carries tag tci (or none when tci < 0). */
static void
check_tag(const struct cap *c, unsigned int i, int tci, struct droce_neigh_msg *m)
{
	CU_ASSERT_EQUAL_FATAL(droce_neigh_parse(c->f[i], c->len[i], m), 0);
	CU_ASSERT_TRUE(droce_neigh_match(c->f[i], c->len[i]));
	if (tci < 0) {
		CU_ASSERT_FALSE(m->has_vlan);
		CU_ASSERT_EQUAL(droce_get_be16(c->f[i] + 12) == 0x8100, 0);
		return;
	}
	CU_ASSERT_TRUE(m->has_vlan);
	CU_ASSERT_EQUAL(m->vlan_tci, tci);
	CU_ASSERT_EQUAL(droce_get_be16(c->f[i] + 12), 0x8100);
	CU_ASSERT_EQUAL(droce_get_be16(c->f[i] + 14), tci);
}

static void
test_tagged_request_tagged_reply(void)
{
	struct droce_neigh n;
	struct droce_neigh_msg m;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	uint32_t len;

	setup(&n, &c, 100, 3);
	/* the requester's PCP is its own business: ours goes on the reply */
	len = arp_request(f, TCI(0, 100));
	CU_ASSERT_EQUAL(len, 64);
	CU_ASSERT_TRUE(droce_neigh_match(f, len));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), 0);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT_EQUAL(c.len[0], 64);
	check_tag(&c, 0, TCI(3, 100), &m);
	CU_ASSERT_TRUE(m.is_arp);
	CU_ASSERT_EQUAL(m.op, DROCE_ARP_REPLY);
	CU_ASSERT_EQUAL(memcmp(m.eth_dst, peer_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(m.sender_ip + 12, my4, 4), 0);
	CU_ASSERT_EQUAL(memcmp(m.target_ip + 12, peer4, 4), 0);
	CU_ASSERT_EQUAL(n.stats.arp_rep_tx, 1);
	CU_ASSERT_EQUAL(n.stats.vlan_other, 0);
}

static void
test_other_vlan_ignored(void)
{
	struct droce_neigh n;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX], a[16] = { [10] = 0xff, [11] = 0xff }, mac[6];
	uint32_t len;

	setup(&n, &c, 100, 3);
	len = arp_request(f, TCI(3, 200));
	CU_ASSERT_TRUE(droce_neigh_match(f, len)); /* ARP: the VLAN is checked on input */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EXDEV);
	len = arp_request(f, -1);
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EXDEV);
	len = arp_request(f, TCI(3, 0)); /* priority tag: the untagged VLAN */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EXDEV);
	CU_ASSERT_EQUAL(n.stats.vlan_other, 3);
	CU_ASSERT_EQUAL(n.stats.arp_req_rx, 0);
	CU_ASSERT_EQUAL(n.stats.learned, 0);
	CU_ASSERT_EQUAL(c.n, 0);
	/* nothing learned: resolving the peer asks (on VLAN 100) */
	memcpy(a + 12, peer4, 4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 0, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL(c.n, 1);
}

static void
test_resolve_on_vlan(void)
{
	struct droce_neigh n;
	struct droce_neigh_msg m;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX], a[16] = { [10] = 0xff, [11] = 0xff }, mac[6];
	uint32_t len;

	setup(&n, &c, 4094, 7);
	memcpy(a + 12, peer4, 4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 0, mac, NULL, NULL), -EAGAIN);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	check_tag(&c, 0, TCI(7, 4094), &m);
	CU_ASSERT_EQUAL(m.op, DROCE_ARP_REQUEST);
	CU_ASSERT_EQUAL(memcmp(m.eth_dst, bcast, 6), 0);
	/* the answer on another VLAN teaches nothing; on ours it resolves */
	len = droce_arp_build(f, DROCE_ARP_REPLY, my_mac, peer_mac, peer4, my_mac, my4);
	len = droce_neigh_vlan_insert(f, len, TCI(7, 4093));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 1), -EXDEV);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 2, mac, NULL, NULL), -EAGAIN);
	droce_put_be16(f + 14, TCI(1, 4094));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 3), 0);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 4, mac, NULL, NULL), 0);
	CU_ASSERT_EQUAL(memcmp(mac, peer_mac, 6), 0);
	/* retries are tagged too */
	memcpy(a + 12, (const uint8_t[4]){ 198, 18, 0, 3 }, 4);
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n, a, 5, mac, NULL, NULL), -EAGAIN);
	droce_neigh_timer(&n, 5 + 100 * MS);
	CU_ASSERT_EQUAL_FATAL(c.n, 3);
	check_tag(&c, 2, TCI(7, 4094), &m);
	CU_ASSERT_EQUAL(memcmp(m.target_ip + 12, a + 12, 4), 0);
}

static void
test_nd_on_vlan(void)
{
	struct droce_neigh n;
	struct droce_neigh_msg m;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX], mac[6];
	const uint8_t sn_mac[6] = { 0x33, 0x33, 0xff, 0, 0, 1 };
	const uint8_t sn[16] = { 0xff, 0x02, [11] = 1, [12] = 0xff, [15] = 1 };
	uint32_t len;

	setup(&n, &c, 42, 5);
	len = droce_nd_build(f, DROCE_ND_NS, 0, sn_mac, peer_mac, peer6, sn, my6);
	len = droce_neigh_vlan_insert(f, len, TCI(5, 42));
	CU_ASSERT_EQUAL(len, 90);
	CU_ASSERT_TRUE(droce_neigh_match(f, len));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), 0);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	check_tag(&c, 0, TCI(5, 42), &m); /* parses: the ICMPv6 checksum holds */
	CU_ASSERT_FALSE(m.is_arp);
	CU_ASSERT_EQUAL(m.op, DROCE_ND_NA);
	CU_ASSERT_EQUAL(memcmp(m.target_ip, my6, 16), 0);
	CU_ASSERT_EQUAL(memcmp(m.eth_dst, peer_mac, 6), 0);
	/* the same solicitation on VLAN 43: counted, unanswered */
	droce_put_be16(f + 14, TCI(5, 43));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EXDEV);
	CU_ASSERT_EQUAL(n.stats.vlan_other, 1);
	CU_ASSERT_EQUAL(c.n, 1);
	/* our solicitation, tagged */
	CU_ASSERT_EQUAL(droce_neigh_resolve(&n,
					    (const uint8_t[16]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 9 },
					    0, mac, NULL, NULL),
			-EAGAIN);
	CU_ASSERT_EQUAL_FATAL(c.n, 2);
	check_tag(&c, 1, TCI(5, 42), &m);
	CU_ASSERT_EQUAL(m.op, DROCE_ND_NS);
}

static void
test_announce_tagged(void)
{
	struct droce_neigh n;
	struct droce_neigh_msg m;
	struct cap c;

	setup(&n, &c, 100, 3);
	droce_neigh_announce(&n);
	CU_ASSERT_EQUAL_FATAL(c.n, 2);
	check_tag(&c, 0, TCI(3, 100), &m);
	CU_ASSERT_TRUE(m.is_arp);
	CU_ASSERT_EQUAL(memcmp(m.target_ip + 12, my4, 4), 0);
	check_tag(&c, 1, TCI(3, 100), &m);
	CU_ASSERT_EQUAL(m.op, DROCE_ND_NA);
	CU_ASSERT_EQUAL(n.stats.garp_tx, 1);
}

/* Without a VLAN: tagged frames are another VLAN's, priority-tagged ones ours. */
static void
test_no_vlan(void)
{
	struct droce_neigh n;
	struct droce_neigh_msg m;
	struct droce_neigh_conf bad;
	struct droce_neigh_ops ops = { .tx = cap_tx };
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	uint32_t len;

	setup(&n, &c, 0, 3);
	len = arp_request(f, TCI(3, 100));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), -EXDEV);
	CU_ASSERT_EQUAL(n.stats.vlan_other, 1);
	CU_ASSERT_EQUAL(c.n, 0);
	len = arp_request(f, TCI(3, 0));
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, len, 0), 0);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	check_tag(&c, 0, -1, &m); /* the answer is untagged */
	CU_ASSERT_EQUAL(c.len[0], 60);
	droce_neigh_announce(&n);
	CU_ASSERT_EQUAL_FATAL(c.n, 3);
	check_tag(&c, 1, -1, &m);
	check_tag(&c, 2, -1, &m);
	/* IEEE 802.1Q Table 9-2: VID 4095 reserved; PCP is 3 bits */
	bad = n.conf;
	bad.vlan = 4095;
	CU_ASSERT_EQUAL(droce_neigh_init(&n, &bad, &ops), -EINVAL);
	bad.vlan = 1;
	bad.vlan_pcp = 8;
	CU_ASSERT_EQUAL(droce_neigh_init(&n, &bad, &ops), -EINVAL);
}

/* A tag cut short is malformed, never read past the frame. */
static void
test_short_tag(void)
{
	struct droce_neigh n;
	struct droce_neigh_msg m;
	struct cap c;
	uint8_t f[DROCE_NEIGH_FRAME_MAX];

	setup(&n, &c, 100, 3);
	arp_request(f, TCI(3, 100));
	CU_ASSERT_FALSE(droce_neigh_match(f, 17));
	CU_ASSERT_EQUAL(droce_neigh_parse(f, 17, &m), -EINVAL);
	CU_ASSERT_EQUAL(droce_neigh_parse(f, 18 + 27, &m), -EINVAL); /* ARP body short */
	CU_ASSERT_EQUAL(droce_neigh_input(&n, f, 17, 0), -EINVAL);
	CU_ASSERT_EQUAL(n.stats.malformed, 1);
}

/* ---- configuration ---- */

static void
test_config_keys(void)
{
	struct droce_rt_config cfg;
	char err[DROCE_RT_ERR_MAX];

	droce_rt_config_defaults(&cfg);
	CU_ASSERT_EQUAL(cfg.vlan, 0);
	CU_ASSERT_EQUAL(cfg.vlan_pcp, 3);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan", "100", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.vlan, 100);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan", "4094", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan_pcp", "0", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.vlan_pcp, 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan", "4095", err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "vlan: '4095' is not a number in 0..4094");
	CU_ASSERT_EQUAL(cfg.vlan, 4094);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan", "ten", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan", "-1", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan_pcp", "8", err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "vlan_pcp: '8' is not a number in 0..7");
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "vlan", "0", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.vlan, 0);
}

static void
test_config_env_file(void)
{
	char path[] = "/tmp/droce-vlan-cfg.XXXXXX", err[DROCE_RT_ERR_MAX];
	struct droce_rt_config cfg;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("ipv4 = 198.18.0.1/24\nvlan = 7\nvlan_pcp = 6\n", f);
	fclose(f);
	unsetenv("DROCE_VLAN");
	unsetenv("DROCE_VLAN_PCP");
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, path, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.vlan, 7);
	CU_ASSERT_EQUAL(cfg.vlan_pcp, 6);
	setenv("DROCE_VLAN", "300", 1); /* the environment wins */
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, path, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.vlan, 300);
	CU_ASSERT_EQUAL(cfg.vlan_pcp, 6);
	setenv("DROCE_VLAN_PCP", "9", 1);
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, path, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "environment DROCE_VLAN_PCP: vlan_pcp: '9' is not a number "
				    "in 0..7");
	unsetenv("DROCE_VLAN");
	unsetenv("DROCE_VLAN_PCP");
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("ipv4 = 198.18.0.1/24\nvlan = 4096\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, path, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: vlan: '4096' is not a number in 0..4094"));
	unlink(path);
}

DROCE_TEST_MAIN("vlan", DROCE_TEST(test_tagged_request_tagged_reply),
		DROCE_TEST(test_other_vlan_ignored), DROCE_TEST(test_resolve_on_vlan),
		DROCE_TEST(test_nd_on_vlan), DROCE_TEST(test_announce_tagged),
		DROCE_TEST(test_no_vlan), DROCE_TEST(test_short_tag), DROCE_TEST(test_config_keys),
		DROCE_TEST(test_config_env_file))
