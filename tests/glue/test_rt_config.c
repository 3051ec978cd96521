/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime configuration: defaults, file, environment precedence, errors, EAL argv. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_ext.h"
#include "droce_rt_config.h"
#include "droce_test.h"

static char tmp_path[64];

static const char *
write_tmp(const char *text)
{
	FILE *f;
	int fd;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/droce_cfg_XXXXXX");
	fd = mkstemp(tmp_path);
	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(text, f);
	fclose(f);
	return tmp_path;
}

/* Only the variables a test sets are visible: clear every DROCE_<KEY> first. */
static void
clear_env(void)
{
	char name[64];
	unsigned int i;
	size_t j;

	for (i = 0; i < droce_rt_config_nkeys(); i++) {
		snprintf(name, sizeof(name), "DROCE_%s", droce_rt_config_key(i));
		for (j = 6; name[j]; j++)
			if (name[j] >= 'a' && name[j] <= 'z')
				name[j] = (char)(name[j] - 'a' + 'A');
		unsetenv(name);
	}
	unsetenv("DROCE_CONFIG");
}

static void
test_defaults_need_address(void)
{
	struct droce_rt_config cfg;
	char err[256] = "";

	clear_env();
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no address configured"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "DROCE_IPV4"));
	CU_ASSERT_EQUAL(cfg.mtu, 1500);
	CU_ASSERT_EQUAL(cfg.queues, 1);
	CU_ASSERT_EQUAL(cfg.nb_lcores, 1);
}

/* DCQCN's switches, where 0 is a value and not "unset", are the runtime's own defaults: they
 * must be the engine's, or a runtime QP would run other DCQCN than the simulator measures */
static void
test_dcqcn_defaults_are_the_engines(void)
{
	struct droce_rt_config cfg;
	struct droce_dcqcn_params p;
	char err[256] = "";

	clear_env();
	droce_rt_config_load(&cfg, NULL, err, sizeof(err));
	droce_cc_dcqcn_defaults(&p, 25000000000ull);
	CU_ASSERT_EQUAL(cfg.dcqcn_cut_per_rtt, p.cut_per_rtt);
	CU_ASSERT_EQUAL(cfg.dcqcn_cut_from_sent, p.cut_from_sent);
	CU_ASSERT_EQUAL(cfg.dcqcn_clamp_tgt_rate, p.clamp_tgt_rate);
	CU_ASSERT_EQUAL(cfg.dcqcn_ai_rate_ppm, p.ai_rate_ppm);
	CU_ASSERT_EQUAL(cfg.dcqcn_target_cut_pct, p.target_cut_pct);
	CU_ASSERT_EQUAL(cfg.dcqcn_level_cut_pct, p.level_cut_pct);
	CU_ASSERT_EQUAL(cfg.dcqcn_level_min_share, p.level_min_share);
	CU_ASSERT_EQUAL(cfg.dcqcn_level_max_alpha, p.level_max_alpha);
	CU_ASSERT_EQUAL(cfg.dcqcn_first_cut_pct, p.first_cut_pct);
	CU_ASSERT_EQUAL(cfg.dcqcn_paced_cut_pct, p.paced_cut_pct);
	CU_ASSERT_EQUAL(cfg.dcqcn_paced_min_share, p.paced_min_share);
}

static void
test_file_keys(void)
{
	static const uint8_t ip4[4] = { 198, 18, 0, 1 }, gw[4] = { 198, 18, 0, 254 };
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x11 };
	struct droce_rt_config cfg;
	char err[256] = "";
	const char *p;

	clear_env();
	p = write_tmp("# droce runtime\n"
		      "eal = --no-huge -m 64   # trailing comment\n"
		      "\n"
		      "vdev=net_memif0,role=server,socket=/tmp/x.sock\n"
		      "ipv4 = 198.18.0.1/16\n"
		      "gw4 = 198.18.0.254\n"
		      "ipv6 = 2001:db8::1\n"
		      "mac = 02:00:00:00:00:11\n"
		      "lcores = 0-1\n"
		      "queues = 2\n"
		      "mtu = 9000\n"
		      "path_mtu = 4096\n"
		      "mbufs = 16383\n"
		      "exception = ring\n"
		      "seed = 0x1234\n");
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, p, err, sizeof(err)), 0);
	unlink(p);
	CU_ASSERT_STRING_EQUAL(cfg.eal, "--no-huge -m 64");
	CU_ASSERT_STRING_EQUAL(cfg.vdev, "net_memif0,role=server,socket=/tmp/x.sock");
	CU_ASSERT_TRUE(cfg.has_ipv4);
	CU_ASSERT_EQUAL(memcmp(cfg.ipv4, ip4, 4), 0);
	CU_ASSERT_EQUAL(cfg.ipv4_prefix, 16);
	CU_ASSERT_TRUE(cfg.has_gw4);
	CU_ASSERT_EQUAL(memcmp(cfg.gw4, gw, 4), 0);
	CU_ASSERT_TRUE(cfg.has_ipv6);
	CU_ASSERT_EQUAL(cfg.ipv6_prefix, 64);
	CU_ASSERT_EQUAL(cfg.ipv6[0], 0x20);
	CU_ASSERT_EQUAL(cfg.ipv6[15], 1);
	CU_ASSERT_TRUE(cfg.has_mac);
	CU_ASSERT_EQUAL(memcmp(cfg.mac, mac, 6), 0);
	CU_ASSERT_EQUAL(cfg.nb_lcores, 2);
	CU_ASSERT_EQUAL(cfg.lcores[1], 1);
	CU_ASSERT_EQUAL(cfg.queues, 2);
	CU_ASSERT_EQUAL(cfg.mtu, 9000);
	CU_ASSERT_EQUAL(cfg.path_mtu, 4096);
	CU_ASSERT_EQUAL(cfg.mbufs, 16383);
	CU_ASSERT_EQUAL(cfg.exception, DROCE_RT_EXC_RING);
	CU_ASSERT_EQUAL(cfg.seed, 0x1234);
}

static void
test_env_overrides_file(void)
{
	struct droce_rt_config cfg;
	char err[256] = "";
	const char *p;

	clear_env();
	p = write_tmp("ipv4 = 198.18.0.1/24\nmtu = 9000\nport = 0\n");
	setenv("DROCE_CONFIG", p, 1);
	setenv("DROCE_MTU", "1500", 1);
	setenv("DROCE_IPV4", "198.19.1.2/15", 1);
	setenv("DROCE_EAL", "--no-huge", 1);
	setenv("DROCE_LCORES", "1,0", 1);
	setenv("DROCE_MBUFS", "4095", 1);
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, NULL, err, sizeof(err)), 0);
	unlink(p);
	CU_ASSERT_EQUAL(cfg.mtu, 1500);
	CU_ASSERT_EQUAL(cfg.ipv4[1], 19);
	CU_ASSERT_EQUAL(cfg.ipv4[3], 2);
	CU_ASSERT_EQUAL(cfg.ipv4_prefix, 15);
	CU_ASSERT_STRING_EQUAL(cfg.port, "0");
	CU_ASSERT_STRING_EQUAL(cfg.eal, "--no-huge");
	CU_ASSERT_EQUAL(cfg.nb_lcores, 2);
	CU_ASSERT_EQUAL(cfg.lcores[0], 1);
	CU_ASSERT_EQUAL(cfg.lcores[1], 0);
	CU_ASSERT_EQUAL(cfg.mbufs, 4095);
	clear_env();
}

static void
test_bad_values(void)
{
	static const char *const bad[][2] = {
		{ "mtu", "70" },
		{ "mtu", "abc" },
		{ "mtu", "-1" },
		{ "mtu", "" },
		{ "mtu", "1500x" },
		{ "ipv4", "198.18.0.256" },
		{ "ipv4", "198.18.0.1/33" },
		{ "ipv4", "198.18.0.1/" },
		{ "ipv6", "2001:db8::g" },
		{ "ipv6", "::1/129" },
		{ "mac", "01:00:5e:00:00:01" },
		{ "mac", "02:00:00:00:00" },
		{ "mac", "02:00:00:00:00:01:02" },
		{ "lcores", "" },
		{ "lcores", "0,0" },
		{ "lcores", "2-1" },
		{ "lcores", "a" },
		{ "exception", "keep" },
		{ "queues", "0" },
		{ "gw4", "1.2.3.4/8" },
	};
	struct droce_rt_config cfg;
	char err[256];
	unsigned int i;

	droce_rt_config_defaults(&cfg);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, bad[i][0], bad[i][1], err, sizeof(err)),
				-EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i][0]));
	}
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "colour", "red", err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "colour"));
	/* An empty address clears it. */
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ipv4", "198.18.0.1", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.ipv4_prefix, 24);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ipv4", "", err, sizeof(err)), 0);
	CU_ASSERT_FALSE(cfg.has_ipv4);
}

static void
test_file_errors_name_line(void)
{
	struct droce_rt_config cfg;
	char err[256] = "";
	const char *p;

	clear_env();
	p = write_tmp("ipv4 = 198.18.0.1\n# ok\nmtu 1500\n");
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, p, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":3: expected key = value"));
	unlink(p);
	p = write_tmp("ipv4 = 198.18.0.1\nmtu = 99999\n");
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, p, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: mtu"));
	unlink(p);
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, "/nonexistent/droce.conf", err, sizeof(err)),
			-ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/droce.conf"));
	setenv("DROCE_PATH_MTU", "huge", 1);
	CU_ASSERT_EQUAL(droce_rt_config_load(&cfg, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "DROCE_PATH_MTU"));
	clear_env();
}

static void
test_validate(void)
{
	struct droce_rt_config cfg;
	char err[256] = "";

	droce_rt_config_defaults(&cfg);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), 0);
	/* 1024 + IPv6 40 + UDP 8 + BTH 12 + AtomicETH 28 + ICRC 4 = 1116 (the engine's bound) */
	CU_ASSERT_EQUAL(droce_rt_config_min_mtu(&cfg), 1116);
	cfg.mtu = 1115;
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "MTU 1115 too small for path MTU 1024"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "DROCE_MTU"));
	cfg.mtu = 1116;
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), 0);
	cfg.path_mtu = 2048;
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "path MTU 2048"));
	cfg.path_mtu = 1024;
	cfg.mtu = 1500;
	cfg.path_mtu = 1000;
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "path_mtu 1000"));
	cfg.path_mtu = 1024;
	cfg.mbufs = 512;
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "DROCE_MBUFS"));
}

/* qp_cc: INDEX:NAME pairs, the name a built-in algorithm (or any with a plugin to load) */
static void
test_qp_cc(void)
{
	struct droce_rt_config cfg;
	char err[256] = "", name[32];

	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("", 0, name, sizeof(name)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("0:dcqcn,3:timely", 0, name, sizeof(name)), 1);
	CU_ASSERT_STRING_EQUAL(name, "dcqcn");
	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("0:dcqcn,3:timely", 3, name, sizeof(name)), 1);
	CU_ASSERT_STRING_EQUAL(name, "timely");
	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("0:dcqcn,3:timely", 1, name, sizeof(name)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("dcqcn", 0, name, sizeof(name)), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("0:", 0, name, sizeof(name)), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("x:dcqcn", 0, name, sizeof(name)), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_qp_cc("0:dcqcn,,", 0, name, sizeof(name)), -EINVAL);
	droce_rt_config_defaults(&cfg);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "qp_cc", "0:timely,1:dcqcn", err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "qp_cc", "0:cubic", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "qp_cc names cubic"));
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "qp_cc", "1-timely", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "INDEX:NAME"));
}

static void
test_eal_argv(void)
{
	struct droce_rt_config cfg;
	char buf[1024], *argv[DROCE_RT_EAL_ARGV_MAX], want[64];
	char err[256];
	int argc;

	droce_rt_config_defaults(&cfg);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "eal", "  --no-huge   -m 64 ", err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(
		droce_rt_config_set(&cfg, "vdev", "net_memif0,role=client", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "lcores", "0,1", err, sizeof(err)), 0);
	argc = droce_rt_config_eal_argv(&cfg, "prog", buf, sizeof(buf), argv,
					DROCE_RT_EAL_ARGV_MAX);
	CU_ASSERT_EQUAL_FATAL(argc, 7);
	CU_ASSERT_STRING_EQUAL(argv[0], "prog");
	CU_ASSERT_STRING_EQUAL(argv[1], "--no-huge");
	CU_ASSERT_STRING_EQUAL(argv[2], "-m");
	CU_ASSERT_STRING_EQUAL(argv[3], "64");
	CU_ASSERT_STRING_EQUAL(argv[4], "--vdev=net_memif0,role=client");
	CU_ASSERT_STRING_EQUAL(argv[5], "-l0,1");
	snprintf(want, sizeof(want), "--file-prefix=droce%ld", (long)getpid());
	CU_ASSERT_STRING_EQUAL(argv[6], want);
	CU_ASSERT_PTR_NULL(argv[7]);

	/* Hugepages: --in-memory instead of a prefix; explicit -l and prefix are respected. */
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "eal", "-l 1", err, sizeof(err)), 0);
	cfg.vdev[0] = '\0';
	argc = droce_rt_config_eal_argv(&cfg, "p", buf, sizeof(buf), argv, DROCE_RT_EAL_ARGV_MAX);
	CU_ASSERT_EQUAL_FATAL(argc, 4);
	CU_ASSERT_STRING_EQUAL(argv[3], "--in-memory");
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "eal", "-l0 --file-prefix=a", err, sizeof(err)),
			0);
	argc = droce_rt_config_eal_argv(&cfg, "p", buf, sizeof(buf), argv, DROCE_RT_EAL_ARGV_MAX);
	CU_ASSERT_EQUAL(argc, 3);
	CU_ASSERT_TRUE(droce_rt_config_eal_has(&cfg, "-l"));
	CU_ASSERT_FALSE(droce_rt_config_eal_has(&cfg, "--no-huge"));
	/* Too small a buffer is an error, not a truncation. */
	CU_ASSERT_EQUAL(droce_rt_config_eal_argv(&cfg, "p", buf, 8, argv, DROCE_RT_EAL_ARGV_MAX),
			-E2BIG);
	CU_ASSERT_EQUAL(droce_rt_config_eal_argv(&cfg, "p", buf, sizeof(buf), argv, 2), -E2BIG);
}

/* inflight_cap (bdp, auto, off, N), inflight_rtt_us, rto, rto_min_us: the engine's settings, a
 * bad cap refused. */
static void
test_inflight(void)
{
	struct droce_inflight_cfg c;
	struct droce_rt_config cfg;
	char err[256] = "";

	droce_rt_config_defaults(&cfg);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_inflight(&cfg, &c), 0);
	CU_ASSERT_EQUAL(c.cap, DROCE_INFLIGHT_CAP_BDP);
	CU_ASSERT_EQUAL(c.rtt_ns, 100000);
	CU_ASSERT_TRUE(c.rto);
	CU_ASSERT_EQUAL(c.rto_min_ns, 200000);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "inflight_cap", "off", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "inflight_rtt_us", "40", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "rto", "0", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "rto_min_us", "100", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_inflight(&cfg, &c), 0);
	CU_ASSERT_EQUAL(c.cap, 0);
	CU_ASSERT_EQUAL(c.rtt_ns, 40000);
	CU_ASSERT_FALSE(c.rto);
	CU_ASSERT_EQUAL(c.rto_min_ns, 100000);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "inflight_cap", "24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_inflight(&cfg, &c), 0);
	CU_ASSERT_EQUAL(c.cap, 24);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "inflight_cap", "auto", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_inflight(&cfg, &c), 0);
	CU_ASSERT_EQUAL(c.cap, DROCE_INFLIGHT_CAP_AUTO);
	CU_ASSERT_EQUAL(c.rtt_ns, 40000); /* its floor */
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "inflight_cap", "lots", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "inflight_cap lots"));
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "inflight_cap", "1024", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "rto", "2", err, sizeof(err)), -EINVAL);
}

/* The engine's ACK policy from its keys: defaults, the caller's order when none is set, a
 * wrong order refused by the check. */
static void
test_ack_policy(void)
{
	struct droce_ack_policy pol;
	struct droce_rt_config cfg;
	char err[256] = "";

	droce_rt_config_defaults(&cfg);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ipv4", "198.18.0.1/24", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_ack(&cfg, DROCE_ACK_ORDER_FIFO, &pol), 0);
	CU_ASSERT(pol.delay_ns == 10000 && pol.coalesce == 16 && pol.order == DROCE_ACK_ORDER_FIFO);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ack_delay_us", "3", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ack_coalesce", "0", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ack_order", "requests_first", err, sizeof(err)),
			0);
	CU_ASSERT_EQUAL(droce_rt_config_ack(&cfg, DROCE_ACK_ORDER_FIFO, &pol), 0);
	CU_ASSERT(pol.delay_ns == 3000 && pol.coalesce == 0 &&
		  pol.order == DROCE_ACK_ORDER_REQUESTS_FIRST);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_set(&cfg, "ack_order", "last", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(droce_rt_config_ack(&cfg, DROCE_ACK_ORDER_FIFO, &pol), -EINVAL);
	CU_ASSERT_EQUAL(droce_rt_config_validate(&cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "ack_order last"));
}

DROCE_TEST_MAIN("rt_config", DROCE_TEST(test_inflight), DROCE_TEST(test_ack_policy),
		DROCE_TEST(test_defaults_need_address),
		DROCE_TEST(test_dcqcn_defaults_are_the_engines), DROCE_TEST(test_file_keys),
		DROCE_TEST(test_env_overrides_file), DROCE_TEST(test_bad_values),
		DROCE_TEST(test_file_errors_name_line), DROCE_TEST(test_validate),
		DROCE_TEST(test_qp_cc), DROCE_TEST(test_eal_argv))
