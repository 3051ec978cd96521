/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helper for neigh_scapy.py: "build" prints the neighbour module's frames as "name hex" lines
 * (for Scapy to dissect), "build-vlan" the same on VLAN 100 with PCP 3 (its inputs tagged
 * too); "parse" reads hex frames from stdin and prints what the module parsed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "droce_neigh.h"

static const uint8_t my_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t my4[4] = { 198, 18, 0, 1 };
static const uint8_t my6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

static void
hex(const char *name, const uint8_t *f, uint32_t len)
{
	uint32_t i;

	printf("%s ", name);
	for (i = 0; i < len; i++)
		printf("%02x", f[i]);
	printf("\n");
}

static int
cap_tx(void *ctx, const uint8_t *frame, uint32_t len)
{
	hex(ctx, frame, len);
	return 0;
}

/* Every frame the module emits, produced through its public paths; on VLAN vlan (0: none). */
static int
build(uint16_t vlan)
{
	struct droce_neigh_conf conf = {
		.has_ipv4 = true,
		.ipv4_prefix = 24,
		.has_ipv6 = true,
		.ipv6_prefix = 64,
		.timeout_ns = 1000000000,
		.retry_ns = 1000000,
		.tries = 2,
	};
	struct droce_neigh_ops ops = { .tx = cap_tx };
	static struct droce_neigh n;
	uint8_t a4[16] = { [10] = 0xff, 0xff, 198, 18, 0, 2 };
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 }, mac[6];
	uint8_t f[DROCE_NEIGH_FRAME_MAX];
	static const uint8_t zmac[6], bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t peer4[4] = { 198, 18, 0, 2 };
	uint32_t len;
	uint16_t tci = (uint16_t)(3 << 13 | vlan);

	conf.vlan = vlan;
	conf.vlan_pcp = 3;
	memcpy(conf.mac, my_mac, 6);
	memcpy(conf.ipv4, my4, 4);
	memcpy(conf.ipv6, my6, 16);
	if (droce_neigh_init(&n, &conf, &ops) != 0)
		return 1;
	n.ops.ctx = (void *)"arp_request";
	droce_neigh_resolve(&n, a4, 0, mac, NULL, NULL);
	n.ops.ctx = (void *)"ns";
	droce_neigh_resolve(&n, a6, 0, mac, NULL, NULL);
	n.ops.ctx = (void *)"announce";
	droce_neigh_announce(&n);
	n.ops.ctx = (void *)"arp_reply";
	len = droce_arp_build(f, DROCE_ARP_REQUEST, bcast, peer_mac, peer4, zmac, my4);
	if (vlan != 0)
		len = droce_neigh_vlan_insert(f, len, tci);
	droce_neigh_input(&n, f, len, 0);
	n.ops.ctx = (void *)"na_solicited";
	len = droce_nd_build(f, DROCE_ND_NS, 0, bcast, peer_mac, a6, my6, my6);
	if (vlan != 0)
		len = droce_neigh_vlan_insert(f, len, tci);
	droce_neigh_input(&n, f, len, 0);
	return 0;
}

static int
parse(void)
{
	char line[1024], ipbuf[2][48];
	uint8_t f[512];
	struct droce_neigh_msg m;
	unsigned int len, v;
	int rc;

	while (fgets(line, sizeof(line), stdin) != NULL) {
		for (len = 0; len < sizeof(f) && sscanf(line + 2 * len, "%2x", &v) == 1; len++)
			f[len] = (uint8_t)v;
		rc = droce_neigh_parse(f, len, &m);
		droce_neigh_addr_str(m.sender_ip, ipbuf[0], sizeof(ipbuf[0]));
		droce_neigh_addr_str(m.target_ip, ipbuf[1], sizeof(ipbuf[1]));
		printf("rc=%d match=%d op=%u sender=%s target=%s lladdr=%d mac=%02x:%02x:%02x:%02x:"
		       "%02x:%02x",
		       rc, droce_neigh_match(f, len), m.op, ipbuf[0], ipbuf[1], m.has_lladdr,
		       m.sender_mac[0], m.sender_mac[1], m.sender_mac[2], m.sender_mac[3],
		       m.sender_mac[4], m.sender_mac[5]);
		if (m.has_vlan)
			printf(" vlan=%#06x", m.vlan_tci);
		printf("\n");
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "build") == 0)
		return build(0);
	if (argc == 2 && strcmp(argv[1], "build-vlan") == 0)
		return build(100);
	if (argc == 2 && strcmp(argv[1], "parse") == 0)
		return parse();
	fprintf(stderr, "usage: %s build|build-vlan|parse\n", argv[0]);
	return 2;
}
