/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_af_packet's ring geometry for an MTU (droce_rt_afpacket.h) without EAL: the PMD's default
 * slot up to MTU 1968, above it the smallest 512-byte multiple holding MTU + 80 in a block of
 * whole pages and whole slots; the vdev EAL gets carries them, a vdev naming its own keeps
 * them; the mbuf room the PMD asks; other PMDs untouched.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "droce_rt_afpacket.h"
#include "droce_rt_config.h"
#include "droce_test.h"

static void
cfg_for(struct droce_rt_config *c, const char *vdev, uint32_t mtu)
{
	droce_rt_config_defaults(c);
	snprintf(c->vdev, sizeof(c->vdev), "%s", vdev);
	c->mtu = mtu;
}

static void
test_default_slot(void)
{
	struct droce_rt_config c;
	struct droce_rt_afp g;
	char v[DROCE_RT_STR_MAX + 48];

	cfg_for(&c, "net_af_packet0,iface=va", 1500);
	droce_rt_afp_geometry(&c, &g);
	CU_ASSERT(g.is_afpacket);
	CU_ASSERT(!g.given);
	CU_ASSERT_EQUAL(g.framesz, 2048);
	CU_ASSERT_EQUAL(droce_rt_afp_max_mtu(&g), 1968);
	CU_ASSERT_EQUAL(droce_rt_afp_rx_room(&g), 2016);
	CU_ASSERT_EQUAL(droce_rt_afp_vdev(&c, v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "net_af_packet0,iface=va");
	c.mtu = 1968; /* still the default slot */
	CU_ASSERT_EQUAL(droce_rt_afp_vdev(&c, v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "net_af_packet0,iface=va");
}

static void
test_slot_for_mtu(void)
{
	struct droce_rt_config c;
	struct droce_rt_afp g;
	char v[DROCE_RT_STR_MAX + 48];
	uint32_t mtu, page = (uint32_t)sysconf(_SC_PAGESIZE);

	cfg_for(&c, "net_af_packet0,iface=va", 4200);
	droce_rt_afp_geometry(&c, &g);
	CU_ASSERT_EQUAL(g.framesz, 4608);
	CU_ASSERT_EQUAL(droce_rt_afp_max_mtu(&g), 4528);
	CU_ASSERT_EQUAL(droce_rt_afp_rx_room(&g), 4576);
	if (page == 4096)
		CU_ASSERT_EQUAL(g.blocksz, 36864); /* 9 pages, 8 slots */
	CU_ASSERT_EQUAL(droce_rt_afp_vdev(&c, v, sizeof(v)), 0);
	if (page == 4096)
		CU_ASSERT_STRING_EQUAL(v, "net_af_packet0,iface=va,framesz=4608,blocksz=36864");
	/* every MTU of the key's range: the slot holds it, tightly, in whole pages and slots */
	for (mtu = 576; mtu <= 9702; mtu++) {
		c.mtu = mtu;
		droce_rt_afp_geometry(&c, &g);
		CU_ASSERT_FATAL(droce_rt_afp_max_mtu(&g) >= mtu);
		if (g.framesz != 2048)
			CU_ASSERT_FATAL(droce_rt_afp_max_mtu(&g) < mtu + 512);
		CU_ASSERT_FATAL(g.framesz % 16 == 0); /* TPACKET_ALIGNMENT */
		CU_ASSERT_FATAL(g.blocksz % page == 0 && g.blocksz % g.framesz == 0);
		CU_ASSERT_FATAL(512 % (g.blocksz / g.framesz) == 0); /* the PMD's 512 slots */
	}
}

static void
test_given_and_others(void)
{
	struct droce_rt_config c;
	struct droce_rt_afp g;
	char v[DROCE_RT_STR_MAX + 48];

	cfg_for(&c, "net_af_packet0,iface=va,framesz=8192,blocksz=8192", 4200);
	droce_rt_afp_geometry(&c, &g);
	CU_ASSERT(g.given);
	CU_ASSERT_EQUAL(g.framesz, 8192);
	CU_ASSERT_EQUAL(g.blocksz, 8192);
	CU_ASSERT_EQUAL(droce_rt_afp_max_mtu(&g), 8112);
	CU_ASSERT_EQUAL(droce_rt_afp_vdev(&c, v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, c.vdev);
	cfg_for(&c, "net_af_packet0,iface=va,blocksz=65536", 4200);
	droce_rt_afp_geometry(&c, &g);
	CU_ASSERT(g.given);
	CU_ASSERT_EQUAL(g.framesz, 2048);
	CU_ASSERT_EQUAL(droce_rt_afp_max_mtu(&g), 1968);
	cfg_for(&c, "eth_af_packet1,iface=va", 9000); /* the PMD's alias */
	droce_rt_afp_geometry(&c, &g);
	CU_ASSERT(g.is_afpacket);
	CU_ASSERT(droce_rt_afp_max_mtu(&g) >= 9000);
	cfg_for(&c, "net_af_xdp0,iface=va", 3000);
	droce_rt_afp_geometry(&c, &g);
	CU_ASSERT(!g.is_afpacket);
	CU_ASSERT_EQUAL(droce_rt_afp_vdev(&c, v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "net_af_xdp0,iface=va");
	cfg_for(&c, "net_memif0,role=server", 9000);
	CU_ASSERT_EQUAL(droce_rt_afp_vdev(&c, v, sizeof(v)), 0);
	CU_ASSERT_STRING_EQUAL(v, "net_memif0,role=server");
}

/* EAL gets the sized vdev */
static void
test_eal_argv(void)
{
	struct droce_rt_config c;
	char buf[2048], *argv[DROCE_RT_EAL_ARGV_MAX];
	int argc, i, found = 0;

	cfg_for(&c, "net_af_packet0,iface=va", 4200);
	argc = droce_rt_config_eal_argv(&c, "x", buf, sizeof(buf), argv, DROCE_RT_EAL_ARGV_MAX);
	CU_ASSERT_FATAL(argc > 0);
	for (i = 0; i < argc; i++)
		if (strncmp(argv[i], "--vdev=net_af_packet0,iface=va,framesz=4608,blocksz=", 52) ==
		    0)
			found++;
	CU_ASSERT_EQUAL(found, 1);
}

DROCE_TEST_MAIN("rt_afpacket", DROCE_TEST(test_default_slot), DROCE_TEST(test_slot_for_mtu),
		DROCE_TEST(test_given_and_others), DROCE_TEST(test_eal_argv))
