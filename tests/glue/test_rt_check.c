/* SPDX-License-Identifier: BSD-3-Clause */
/* Pre-EAL checks over crafted /proc and /sys files, and a real unprivileged child. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "droce_rt_check.h"
#include "droce_test.h"

static char dir[64];

/* A scratch tree: mounts, hp/hugepages-2048kB/free_hugepages, status, huge/ (the mount). */
static void
make_tree(const char *mounts_fmt, unsigned int free_pages, const char *capeff)
{
	char path[256];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/droce_chk_XXXXXX");
	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/huge", dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/mounts", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "proc /proc proc rw 0 0\n");
	fprintf(f, mounts_fmt, dir);
	fclose(f);
	snprintf(path, sizeof(path), "%s/hp", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/hp/hugepages-2048kB", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/hp/hugepages-2048kB/free_hugepages", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "%u\n", free_pages);
	fclose(f);
	snprintf(path, sizeof(path), "%s/status", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t%s\n", capeff);
	fclose(f);
}

static void
remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void
sys_of_tree(struct droce_rt_sys *sys, char paths[3][128])
{
	snprintf(paths[0], 128, "%s/mounts", dir);
	snprintf(paths[1], 128, "%s/hp", dir);
	snprintf(paths[2], 128, "%s/status", dir);
	sys->mounts = paths[0];
	sys->hugepages_dir = paths[1];
	sys->status = paths[2];
}

static void
base_cfg(struct droce_rt_config *cfg, const char *eal)
{
	char err[256];

	droce_rt_config_defaults(cfg);
	CU_ASSERT_EQUAL(droce_rt_config_set(cfg, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(cfg, "eal", eal, err, sizeof(err)), 0);
}

static void
test_hugetlbfs_not_mounted(void)
{
	struct droce_rt_config cfg;
	struct droce_rt_sys sys;
	char paths[3][128], err[256] = "";

	make_tree("tmpfs %s/huge tmpfs rw 0 0\n", 16, "000001fffeffffff");
	sys_of_tree(&sys, paths);
	base_cfg(&cfg, "");
	CU_ASSERT_EQUAL(droce_rt_preflight(&cfg, &sys, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "hugetlbfs is not mounted"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "mount -t hugetlbfs nodev /dev/hugepages"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "--no-huge"));
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));
	/* --no-huge needs none of it. */
	base_cfg(&cfg, "--no-huge");
	CU_ASSERT_EQUAL(droce_rt_preflight(&cfg, &sys, err, sizeof(err)), 0);
	remove_tree();
}

static void
test_hugetlbfs_mounted(void)
{
	struct droce_rt_config cfg;
	struct droce_rt_sys sys;
	char paths[3][128], err[256] = "";

	make_tree("nodev %s/huge hugetlbfs rw,relatime,pagesize=2M 0 0\n", 16, "1fffeffffff");
	sys_of_tree(&sys, paths);
	base_cfg(&cfg, "-l 0");
	CU_ASSERT_EQUAL(droce_rt_check_hugepages(&cfg, &sys, err, sizeof(err)), 0);
	/* --huge-dir naming another directory: that one is not mounted. */
	base_cfg(&cfg, "--huge-dir /mnt/nothere");
	CU_ASSERT_EQUAL(droce_rt_check_hugepages(&cfg, &sys, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not mounted at /mnt/nothere"));
	remove_tree();

	make_tree("nodev %s/huge hugetlbfs rw 0 0\n", 0, "1fffeffffff");
	sys_of_tree(&sys, paths);
	base_cfg(&cfg, "");
	CU_ASSERT_EQUAL(droce_rt_check_hugepages(&cfg, &sys, err, sizeof(err)), -ENOMEM);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nr_hugepages"));
	remove_tree();
}

/* A real unprivileged process: the mount directory (0700, root) is not writable for it. */
static void
test_hugetlbfs_no_permission(void)
{
	struct droce_rt_config cfg;
	struct droce_rt_sys sys;
	char paths[3][128], err[256] = "";
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	if (geteuid() != 0) {
		/* Unprivileged already: the check itself must refuse a root-only mount. */
		make_tree("nodev /root hugetlbfs rw 0 0\n%.0s", 16, "0");
		sys_of_tree(&sys, paths);
		base_cfg(&cfg, "");
		CU_ASSERT_EQUAL(droce_rt_check_hugepages(&cfg, &sys, err, sizeof(err)), -EACCES);
		remove_tree();
		return;
	}
	make_tree("nodev %s/huge hugetlbfs rw 0 0\n", 16, "0");
	sys_of_tree(&sys, paths);
	base_cfg(&cfg, "");
	CU_ASSERT_FATAL(pipe(pfd) == 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		int rc;

		close(pfd[0]);
		if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
			_exit(3);
		rc = droce_rt_check_hugepages(&cfg, &sys, err, sizeof(err));
		if (write(pfd[1], err, strlen(err) + 1) < 0)
			_exit(4);
		_exit(rc == -EACCES ? 0 : 1);
	}
	close(pfd[1]);
	n = read(pfd[0], err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no permission to use hugetlbfs"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "uid 65534"));
	remove_tree();
}

static void
test_vdev_iface(void)
{
	struct droce_rt_config cfg;
	struct droce_rt_sys sys;
	char paths[3][128], err[256] = "";

	make_tree("%.0s", 0, "000001fffeffffff");
	sys_of_tree(&sys, paths);
	base_cfg(&cfg, "--no-huge");
	strcpy(cfg.vdev, "net_af_packet0,iface=droce_nosuch9");
	CU_ASSERT_EQUAL(droce_rt_preflight(&cfg, &sys, err, sizeof(err)), -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "interface 'droce_nosuch9' not found"));
	/* The loopback interface exists everywhere. */
	strcpy(cfg.vdev, "net_af_packet0,qpairs=1,iface=lo");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), 0);
	strcpy(cfg.vdev, "net_af_xdp0,start_queue=0");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs iface="));
	/* memif has no interface to check */
	strcpy(cfg.vdev, "net_memif0,role=server");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), 0);
	/* --vdev given among the EAL words is checked too, in both spellings. */
	cfg.vdev[0] = '\0';
	base_cfg(&cfg, "--no-huge --vdev net_af_xdp1,iface=droce_nosuch8");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), -ENODEV);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "droce_nosuch8"));
	base_cfg(&cfg, "--no-huge --vdev=net_af_packet1,iface=droce_nosuch7");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), -ENODEV);
	remove_tree();
}

static void
test_vdev_capabilities(void)
{
	struct droce_rt_config cfg;
	struct droce_rt_sys sys;
	char paths[3][128], err[256] = "";

	make_tree("%.0s", 0, "0000000000000000");
	sys_of_tree(&sys, paths);
	base_cfg(&cfg, "--no-huge");
	strcpy(cfg.vdev, "net_af_packet0,iface=lo");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "CAP_NET_RAW"));
	strcpy(cfg.vdev, "net_af_xdp0,iface=lo");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "CAP_NET_ADMIN"));
	remove_tree();
	/* CAP_NET_RAW alone (bit 13) is enough for af_packet. */
	make_tree("%.0s", 0, "0000000000002000");
	sys_of_tree(&sys, paths);
	strcpy(cfg.vdev, "net_af_packet0,iface=lo");
	CU_ASSERT_EQUAL(droce_rt_check_vdevs(&cfg, &sys, err, sizeof(err)), 0);
	remove_tree();
}

static void
test_preflight_no_address_first(void)
{
	struct droce_rt_config cfg;
	struct droce_rt_sys sys;
	char err[256] = "";

	droce_rt_sys_default(&sys);
	droce_rt_config_defaults(&cfg);
	CU_ASSERT_EQUAL(droce_rt_preflight(&cfg, &sys, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no address configured"));
}

DROCE_TEST_MAIN("rt_check", DROCE_TEST(test_hugetlbfs_not_mounted),
		DROCE_TEST(test_hugetlbfs_mounted), DROCE_TEST(test_hugetlbfs_no_permission),
		DROCE_TEST(test_vdev_iface), DROCE_TEST(test_vdev_capabilities),
		DROCE_TEST(test_preflight_no_address_first))
