/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_rt_mcast_report: groups joined on the host interface behind the port. On a net_tap
 * port (a kernel interface of its own, in a network namespace the child makes: root only) the
 * kernel's membership is read from /proc/net/igmp and /proc/net/igmp6: a join adds the group,
 * a second join of it is counted, the last leave removes it. (What droce_rt_close leaves is
 * not seen here: closing the port removes the tap interface and its memberships with it.)
 * On a net_null port (no host interface) every join is -ENODEV. Argument errors
 * on both. EAL starts once per process: each case forks a child (glue_child.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "droce_rt.h"
#include "droce_test.h"
#include "glue_child.h"

#define TAP "dmc0"

struct seen {
	int open_rc;
	int join_v4, join_v6, join_again, unicast, leave_unknown, leave_once, leave_last;
	int after_join, after_leave_once, after_leave_last;
	int bad_join;
	char err[200];
};

static const uint8_t g4[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 };
static const uint8_t g6[16] = { 0xff, 0x0e, [14] = 0x12, [15] = 0x34 };
static const uint8_t uni[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };

/* Whether /proc/net/igmp lists 239.1.2.3 (030201EF: the kernel prints the address as a
 * little-endian word) and /proc/net/igmp6 ff0e::1234 on TAP; bit 0 and bit 1. */
static int
kernel_groups(void)
{
	char line[256];
	bool on_tap = false;
	int got = 0;
	FILE *f = fopen("/proc/net/igmp", "r");

	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (line[0] != '\t')
				on_tap = strstr(line, TAP) != NULL;
			else if (on_tap && strstr(line, "030201EF") != NULL)
				got |= 1;
		}
		fclose(f);
	}
	f = fopen("/proc/net/igmp6", "r");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, TAP) != NULL &&
			    strstr(line, "ff0e0000000000000000000000001234") != NULL)
				got |= 2;
		fclose(f);
	}
	return got;
}

static struct droce_rt *
open_rt(const char *vdev, char *err, size_t errlen)
{
	struct droce_rt_config cfg;

	droce_rt_config_defaults(&cfg);
	droce_rt_config_set(&cfg, "ipv4", "198.18.0.1/24", err, errlen);
	droce_rt_config_set(&cfg, "ipv6", "2001:2::1/64", err, errlen);
	droce_rt_config_set(&cfg, "eal", "--no-huge -m 128 --no-pci --no-telemetry", err, errlen);
	droce_rt_config_set(&cfg, "vdev", vdev, err, errlen);
	droce_rt_config_set(&cfg, "mbufs", "4095", err, errlen);
	return droce_rt_open_config(&cfg, "test_rt_mcast", err, errlen);
}

static void
tap_child(void *out, const void *arg)
{
	struct seen *s = out;
	struct droce_rt *rt;

	(void)arg;
	/* the tap interface lives in a namespace of this child's: nothing outside sees it */
	if (unshare(CLONE_NEWNET) != 0) {
		s->open_rc = -errno;
		snprintf(s->err, sizeof(s->err), "unshare(CLONE_NEWNET): %s (needs root)",
			 strerror(errno));
		return;
	}
	rt = open_rt("net_tap0,iface=" TAP, s->err, sizeof(s->err));
	if (rt == NULL) {
		s->open_rc = -1;
		return;
	}
	s->unicast = droce_rt_mcast_report(rt, uni, true);
	s->leave_unknown = droce_rt_mcast_report(rt, g4, false);
	s->join_v4 = droce_rt_mcast_report(rt, g4, true);
	s->join_v6 = droce_rt_mcast_report(rt, g6, true);
	s->after_join = kernel_groups();
	s->join_again = droce_rt_mcast_report(rt, g4, true);
	s->leave_once = droce_rt_mcast_report(rt, g4, false);
	s->after_leave_once = kernel_groups();
	s->leave_last = droce_rt_mcast_report(rt, g4, false);
	s->after_leave_last = kernel_groups();
	droce_rt_close(rt); /* ff0e::1234 is still joined: close leaves it */
}

static void
null_child(void *out, const void *arg)
{
	struct seen *s = out;
	struct droce_rt *rt;

	(void)arg;
	rt = open_rt("net_null0,no-rx=1", s->err, sizeof(s->err));
	if (rt == NULL) {
		s->open_rc = -1;
		return;
	}
	s->join_v4 = droce_rt_mcast_report(rt, g4, true);
	s->join_v6 = droce_rt_mcast_report(rt, g6, true);
	s->unicast = droce_rt_mcast_report(rt, uni, true);
	s->leave_unknown = droce_rt_mcast_report(rt, g4, false);
	s->bad_join = droce_rt_mcast_report(NULL, g4, true);
	droce_rt_close(rt);
}

static void
test_tap_membership(void)
{
	struct seen s;

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL_FATAL(glue_in_child(tap_child, NULL, &s, sizeof(s), 60), 0);
	if (s.open_rc != 0)
		fprintf(stderr, "tap child: %s\n", s.err);
	CU_ASSERT_EQUAL_FATAL(s.open_rc, 0);
	CU_ASSERT_EQUAL(s.unicast, -EINVAL);
	CU_ASSERT_EQUAL(s.leave_unknown, -ENOENT);
	CU_ASSERT_EQUAL(s.join_v4, 0);
	CU_ASSERT_EQUAL(s.join_v6, 0);
	CU_ASSERT_EQUAL(s.after_join, 3); /* both groups on the tap */
	CU_ASSERT_EQUAL(s.join_again, 0);
	CU_ASSERT_EQUAL(s.leave_once, 0);
	CU_ASSERT_EQUAL(s.after_leave_once, 3); /* one join of 239.1.2.3 is left */
	CU_ASSERT_EQUAL(s.leave_last, 0);
	CU_ASSERT_EQUAL(s.after_leave_last, 2); /* 239.1.2.3 gone, ff0e::1234 still there */
}

static void
test_no_host_interface(void)
{
	struct seen s;

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL_FATAL(glue_in_child(null_child, NULL, &s, sizeof(s), 60), 0);
	if (s.open_rc != 0)
		fprintf(stderr, "null child: %s\n", s.err);
	CU_ASSERT_EQUAL_FATAL(s.open_rc, 0);
	CU_ASSERT_EQUAL(s.join_v4, -ENODEV);
	CU_ASSERT_EQUAL(s.join_v6, -ENODEV);
	CU_ASSERT_EQUAL(s.unicast, -EINVAL);
	CU_ASSERT_EQUAL(s.leave_unknown, -ENOENT);
	CU_ASSERT_EQUAL(s.bad_join, -EINVAL);
}

DROCE_TEST_MAIN("rt_mcast", DROCE_TEST(test_tap_membership), DROCE_TEST(test_no_host_interface))
