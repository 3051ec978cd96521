/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL and port bring-up over net_memif (no peer needed to configure and start), and the errors
 * that can be triggered on this machine. EAL starts once per process: each case forks a child.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_rt_port.h"
#include "droce_test.h"
#include "glue_child.h"

struct outcome {
	int rc;
	char err[256];
	char name[64];
	uint16_t queues;
	uint32_t mtu;
	uint8_t mac[6];
	unsigned int pool_size;
};

static void
base(struct droce_rt_config *cfg, const char *eal)
{
	char err[256];

	droce_rt_config_defaults(cfg);
	CU_ASSERT_EQUAL(droce_rt_config_set(cfg, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(cfg, "eal", eal, err, sizeof(err)), 0);
	cfg->mbufs = 4095;
}

static void
memif(struct droce_rt_config *cfg)
{
	snprintf(cfg->vdev, sizeof(cfg->vdev),
		 "net_memif0,role=server,socket=/droce_rt_port_%ld,mac=02:00:00:00:aa:01",
		 (long)getpid());
}

/* EAL init + port open, in a child (glue_child.h). */
static void
port_child(void *out, const void *arg)
{
	const struct droce_rt_config *cfg = arg;
	struct outcome *o = out;
	struct droce_rt_port p;

	o->rc = droce_rt_eal_init(cfg, "test_rt_port", o->err, sizeof(o->err));
	if (o->rc != 0)
		return;
	o->rc = droce_rt_port_open(&p, cfg, o->err, sizeof(o->err));
	if (o->rc == 0) {
		snprintf(o->name, sizeof(o->name), "%s", p.name);
		o->queues = p.nb_queues;
		o->mtu = p.mtu;
		memcpy(o->mac, p.mac, 6);
		o->pool_size = p.mp->size;
		droce_rt_port_close(&p);
	}
	droce_rt_eal_cleanup(cfg);
}

static struct outcome
run(const struct droce_rt_config *cfg)
{
	struct outcome o;
	int rc = glue_in_child(port_child, cfg, &o, sizeof(o), 20);

	CU_ASSERT_EQUAL(rc, 0);
	if (rc == -EPIPE)
		o.rc = -EPIPE;
	return o;
}

static void
test_memif_no_huge(void)
{
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0xaa, 0x01 };
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge -m 64 --no-pci");
	memif(&cfg);
	cfg.queues = 2;
	cfg.mtu = 1400;
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, 0);
	if (o.rc != 0)
		fprintf(stderr, "%s\n", o.err);
	CU_ASSERT_STRING_EQUAL(o.name, "net_memif0");
	CU_ASSERT_EQUAL(o.queues, 2);
	CU_ASSERT_EQUAL(o.mtu, 1400);
	CU_ASSERT_EQUAL(memcmp(o.mac, mac, 6), 0);
	CU_ASSERT_EQUAL(o.pool_size, 4095);
}

static void
test_port_by_name_and_number(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge -m 64 --no-pci");
	memif(&cfg);
	strcpy(cfg.port, "net_memif0");
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, 0);
	strcpy(cfg.port, "0");
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, 0);
	CU_ASSERT_STRING_EQUAL(o.name, "net_memif0");
}

static void
test_port_not_found(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge -m 64 --no-pci");
	memif(&cfg);
	strcpy(cfg.port, "net_memif7");
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "port 'net_memif7' not found"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "0=net_memif0"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "DROCE_PORT"));
}

static void
test_no_port(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	/* No vdev, and PCI kept out so a NIC on the host cannot make a port appear. */
	base(&cfg, "--no-huge -m 64 --no-pci");
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "no Ethernet port"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "DROCE_VDEV"));
}

static void
test_sixteen_queues(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge -m 64 --no-pci");
	memif(&cfg);
	cfg.queues = 16;
	cfg.rx_desc = cfg.tx_desc = 32;
	o = run(&cfg);
	/* memif takes up to 255 queue pairs: the largest count the config allows works. */
	CU_ASSERT_EQUAL(o.rc, 0);
	CU_ASSERT_EQUAL(o.queues, 16);
}

static void
test_mempool_too_big(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge -m 32 --no-pci");
	memif(&cfg);
	cfg.mbufs = 1 << 20; /* 2+ GB of mbufs in 32 MB */
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, -ENOMEM);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "DROCE_MBUFS"));
	CU_ASSERT_PTR_NULL(strchr(o.err, '\n'));
}

static unsigned int
free_2m_pages(void)
{
	unsigned int n = 0;
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");

	if (f != NULL) {
		if (fscanf(f, "%u", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

/* Hugepages: with hugetlbfs mounted the port comes up; without, one line says how to fix it. */
static void
test_hugepages_or_clear_error(void)
{
	struct droce_rt_config cfg;
	struct outcome o;
	char line[512];
	bool mounted = false;
	FILE *f = fopen("/proc/mounts", "r");

	CU_ASSERT_FATAL(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		mounted |= strstr(line, " hugetlbfs ") != NULL;
	fclose(f);
	base(&cfg, "-m 64 --no-pci");
	memif(&cfg);
	o = run(&cfg);
	if (mounted && free_2m_pages() >= 32) {
		/* 64 MB of 2 MB pages: the port comes up, pool and rings on hugepages */
		CU_ASSERT_EQUAL(o.rc, 0);
		CU_ASSERT_STRING_EQUAL(o.name, "net_memif0");
	} else if (mounted) {
		CU_ASSERT_TRUE(o.rc == -ENOMEM || o.rc < 0);
		CU_ASSERT_PTR_NULL(strchr(o.err, '\n'));
	} else {
		CU_ASSERT_EQUAL(o.rc, -ENOENT);
		CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "hugetlbfs is not mounted"));
		CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "--no-huge"));
	}
}

static void
test_mtu_beyond_port(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge -m 64 --no-pci");
	memif(&cfg);
	cfg.mtu = 9702;
	o = run(&cfg);
	/* memif frames stop at 1518 bytes: the error names the port's range and the key. */
	CU_ASSERT_EQUAL(o.rc, -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "MTU 9702 outside port net_memif0's range "));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "DROCE_MTU"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "..1500:"));
}

/* EAL's own complaints come back as one line, without the usage text. */
static void
test_eal_errors_one_line(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge --no-pci --bogus-option");
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "EAL initialisation failed: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "unrecognized option '--bogus-option'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "DROCE_EAL"));
	CU_ASSERT_PTR_NULL(strchr(o.err, '\n'));
	CU_ASSERT_PTR_NULL(strstr(o.err, "Usage"));
	base(&cfg, "--no-huge --in-memory --no-pci");
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc, -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "not compatible with --in-memory"));
	CU_ASSERT_PTR_NULL(strchr(o.err, '\n'));
}

/* A memif client with no server: retried for start_wait_ms, then one line saying so. */
static void
test_memif_client_no_server(void)
{
	struct droce_rt_config cfg;
	struct outcome o;

	base(&cfg, "--no-huge -m 64 --no-pci");
	snprintf(cfg.vdev, sizeof(cfg.vdev),
		 "net_memif0,role=client,socket=/droce_rt_port_none_%ld", (long)getpid());
	cfg.start_wait_ms = 300;
	o = run(&cfg);
	CU_ASSERT_EQUAL(o.rc != 0, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "memif client net_memif0 found no server on its "
					     "socket in 300 ms"));
	CU_ASSERT_PTR_NOT_NULL(strstr(o.err, "DROCE_START_WAIT_MS"));
	CU_ASSERT_PTR_NULL(strchr(o.err, '\n'));
}

/*
 * The pool an af_xdp port gets: DPDK 22.11's net_af_xdp registers populated_size x the object
 * size from the first chunk as the umem, and the kernel drops, without a word, a frame sent
 * from an mbuf past its end. Packed objects fit; rte_pktmbuf_pool_create's, one per 4 KiB page
 * under --no-huge, do not (what lost rdma_cm's DREQs and REQs over af_xdp).
 */
struct umem_outcome {
	int rc;
	int packed_fits, packed_n, default_fits;
};

static void
umem_child(void *out, const void *arg)
{
	const struct droce_rt_config *cfg = arg;
	struct umem_outcome *o = out;
	struct rte_mempool *mp;
	char err[256];

	o->rc = droce_rt_eal_init(cfg, "test_rt_port", err, sizeof(err));
	if (o->rc != 0)
		return;
	mp = droce_rt_port_pool_create("umem_packed", 8191, 128, 2048 + RTE_PKTMBUF_HEADROOM, true);
	o->packed_fits = mp != NULL && droce_rt_port_pool_fits_umem(mp);
	o->packed_n = mp != NULL ? (int)mp->populated_size : -1;
	rte_mempool_free(mp);
	mp = droce_rt_port_pool_create("umem_default", 8191, 128, 2048 + RTE_PKTMBUF_HEADROOM,
				       false);
	o->default_fits = mp != NULL && droce_rt_port_pool_fits_umem(mp);
	rte_mempool_free(mp);
	droce_rt_eal_cleanup(cfg);
}

static void
test_afxdp_pool_fits_umem(void)
{
	struct droce_rt_config cfg;
	struct umem_outcome o;

	base(&cfg, "--no-huge -m 128 --no-pci");
	memif(&cfg);
	CU_ASSERT_EQUAL(glue_in_child(umem_child, &cfg, &o, sizeof(o), 20), 0);
	CU_ASSERT_EQUAL(o.rc, 0);
	CU_ASSERT_EQUAL(o.packed_n, 8191);
	CU_ASSERT_EQUAL(o.packed_fits, 1);
	CU_ASSERT_EQUAL(o.default_fits, 0);
}

DROCE_TEST_MAIN("rt_port", DROCE_TEST(test_memif_no_huge), DROCE_TEST(test_port_by_name_and_number),
		DROCE_TEST(test_port_not_found), DROCE_TEST(test_no_port),
		DROCE_TEST(test_sixteen_queues), DROCE_TEST(test_mempool_too_big),
		DROCE_TEST(test_hugepages_or_clear_error), DROCE_TEST(test_mtu_beyond_port),
		DROCE_TEST(test_eal_errors_one_line), DROCE_TEST(test_memif_client_no_server),
		DROCE_TEST(test_afxdp_pool_fits_umem))
