/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replacement libibverbs.so.1 through its exported ABI only, as an application sees it:
 * built against the system verbs.h, linked with the shim, run with DROCE_IPV4=198.18.0.1/24
 * and DROCE_IPV6=2001:2::1/64 (tests/shim/meson.build).
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_shim_abi.h"
#include "droce_test.h"

/* Exported, declared only by rdma-core's driver.h (not installed). */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);

static struct ibv_device **list;
static struct ibv_context *ctx;

static void
open_ctx(void)
{
	int n = -1;

	list = ibv_get_device_list(&n);
	CU_ASSERT_FATAL(list != NULL);
	CU_ASSERT_FATAL(n == 1);
	ctx = ibv_open_device(list[0]);
	CU_ASSERT_FATAL(ctx != NULL);
}

static void
close_ctx(void)
{
	CU_ASSERT(ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
}

static void
test_device_list(void)
{
	int n = -1;
	struct ibv_device **l = ibv_get_device_list(&n);
	uint64_t guid;

	CU_ASSERT_FATAL(l != NULL && n == 1);
	CU_ASSERT(l[1] == NULL);
	CU_ASSERT_STRING_EQUAL(ibv_get_device_name(l[0]), "droce0");
	CU_ASSERT(l[0]->node_type == IBV_NODE_CA);
	CU_ASSERT(l[0]->transport_type == IBV_TRANSPORT_IB);
	guid = be64toh(ibv_get_device_guid(l[0]));
	CU_ASSERT((guid >> 24 & 0xffff) == 0xfffe); /* EUI-64 from a MAC */
	CU_ASSERT(ibv_get_device_index(l[0]) == 0);
	ibv_free_device_list(l);
}

static void
test_context_layout(void)
{
	struct verbs_context *v;

	open_ctx();
	CU_ASSERT(ctx->abi_compat == __VERBS_ABI_IS_EXTENDED);
	v = verbs_get_ctx(ctx);
	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT(v->sz == sizeof(struct verbs_context));
	CU_ASSERT(&v->context == ctx);
	CU_ASSERT(ctx->ops.post_send != NULL && ctx->ops.post_recv != NULL);
	CU_ASSERT(ctx->ops.poll_cq != NULL && ctx->ops.req_notify_cq != NULL);
	CU_ASSERT(ctx->ops.post_srq_recv != NULL);
	CU_ASSERT(verbs_get_ctx_op(ctx, query_port) != NULL);
	CU_ASSERT(verbs_get_ctx_op(ctx, query_device_ex) != NULL);
	CU_ASSERT(verbs_get_ctx_op(ctx, create_qp_ex) != NULL);
	CU_ASSERT(verbs_get_ctx_op(ctx, create_cq_ex) != NULL);
	CU_ASSERT(verbs_get_ctx_op(ctx, create_srq_ex) != NULL);
	CU_ASSERT(verbs_get_ctx_op(ctx, open_xrcd) == NULL);
	CU_ASSERT(fcntl(ctx->async_fd, F_GETFD) >= 0);
	CU_ASSERT(ctx->num_comp_vectors == 1);
	close_ctx();
}

static void
test_query_port(void)
{
	struct ibv_port_attr a;
	unsigned char buf[64];

	open_ctx();
	memset(&a, 0x5a, sizeof(a));
	CU_ASSERT_FATAL(ibv_query_port(ctx, 1, &a) == 0); /* inline: verbs_context op */
	CU_ASSERT(a.state == IBV_PORT_ACTIVE);
	CU_ASSERT(a.active_mtu == IBV_MTU_1024);
	CU_ASSERT(a.max_mtu == IBV_MTU_4096);
	CU_ASSERT(a.link_layer == IBV_LINK_LAYER_ETHERNET);
	CU_ASSERT(a.gid_tbl_len == 16);
	CU_ASSERT(a.lid == 0);
	CU_ASSERT(a.port_cap_flags2 == 0);
	CU_ASSERT(ibv_query_port(ctx, 2, &a) != 0);
	/* The exported IBVERBS_1.1 symbol writes the 48-byte compat struct only. */
	memset(buf, 0xaa, sizeof(buf));
	CU_ASSERT((ibv_query_port)(ctx, 1, (struct _compat_ibv_port_attr *)buf) == 0);
	CU_ASSERT(buf[0] == IBV_PORT_ACTIVE);
	CU_ASSERT(buf[48] == 0xaa && buf[49] == 0xaa);
	close_ctx();
}

static void
test_query_device(void)
{
	struct ibv_device_attr a;
	struct ibv_device_attr_ex x;
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };

	open_ctx();
	CU_ASSERT_FATAL(ibv_query_device(ctx, &a) == 0);
	CU_ASSERT(a.vendor_id == 0 && a.vendor_part_id == 0); /* neutral, not mlx5 */
	CU_ASSERT(a.phys_port_cnt == 1);
	CU_ASSERT(strncmp(a.fw_ver, "droce ", 6) == 0);
	CU_ASSERT(a.max_qp == 256 && a.max_pd == 64); /* runtime defaults */
	CU_ASSERT(a.node_guid == ibv_get_device_guid(list[0]));
	memset(&x, 0x5a, sizeof(x));
	CU_ASSERT_FATAL(ibv_query_device_ex(ctx, NULL, &x) == 0);
	CU_ASSERT(memcmp(&x.orig_attr, &a, sizeof(a)) == 0);
	CU_ASSERT(x.max_dm_size == 0 && x.device_cap_flags_ex == 0);
	CU_ASSERT(ibv_query_device_ex(ctx, &in, &x) == EINVAL);
	close_ctx();
}

static void
test_gids(void)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0, 2, [15] = 1 };
	static const uint8_t zero[16];
	struct ibv_gid_entry e, tbl[4];
	union ibv_gid g;
	__be16 pkey;
	int type = -1;

	open_ctx();
	CU_ASSERT(ibv_query_gid(ctx, 1, 0, &g) == 0 && memcmp(g.raw, v4, 16) == 0);
	CU_ASSERT(ibv_query_gid(ctx, 1, 1, &g) == 0 && memcmp(g.raw, v6, 16) == 0);
	CU_ASSERT(ibv_query_gid(ctx, 1, 2, &g) == 0 && memcmp(g.raw, zero, 16) == 0);
	CU_ASSERT(ibv_query_gid(ctx, 1, 16, &g) == -1);
	CU_ASSERT(ibv_query_gid(ctx, 2, 0, &g) == -1);
	CU_ASSERT(ibv_query_gid_ex(ctx, 1, 1, &e, 0) == 0);
	CU_ASSERT(memcmp(e.gid.raw, v6, 16) == 0 && e.gid_index == 1 && e.port_num == 1);
	CU_ASSERT(e.gid_type == IBV_GID_TYPE_ROCE_V2);
	CU_ASSERT(ibv_query_gid_ex(ctx, 1, 2, &e, 0) == ENODATA);
	CU_ASSERT(ibv_query_gid_table(ctx, tbl, 4, 0) == 2);
	CU_ASSERT(memcmp(tbl[0].gid.raw, v4, 16) == 0 && tbl[1].gid_index == 1);
	CU_ASSERT(ibv_query_gid_type(ctx, 1, 0, &type) == 0 && type == 1); /* RoCE v2 */
	CU_ASSERT(ibv_query_gid_type(ctx, 1, 5, &type) == -1);
	CU_ASSERT(ibv_query_pkey(ctx, 1, 0, &pkey) == 0 && pkey == htobe16(0xffff));
	CU_ASSERT(ibv_query_pkey(ctx, 1, 1, &pkey) == -1);
	CU_ASSERT(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)) == 0);
	CU_ASSERT(ibv_get_pkey_index(ctx, 1, htobe16(0x8001)) == -1);
	close_ctx();
}

static void
test_sysfs(void)
{
	char buf[64], tiny[4];

	open_ctx();
	CU_ASSERT(ibv_read_sysfs_file(list[0]->ibdev_path, "board_id", buf, sizeof(buf)) == 5);
	CU_ASSERT_STRING_EQUAL(buf, "droce");
	CU_ASSERT(ibv_read_sysfs_file(list[0]->ibdev_path, "node_guid", buf, sizeof(buf)) == 19);
	CU_ASSERT(ibv_read_sysfs_file(list[0]->ibdev_path, "ports/1/gid_attrs/types/1", buf,
				      sizeof(buf)) > 0);
	CU_ASSERT_STRING_EQUAL(buf, "RoCE v2");
	CU_ASSERT(ibv_read_sysfs_file(list[0]->ibdev_path, "no_such", buf, sizeof(buf)) == -1);
	CU_ASSERT(ibv_read_sysfs_file(list[0]->ibdev_path, "board_id", tiny, sizeof(tiny)) == -1);
	CU_ASSERT(ibv_read_sysfs_file(list[0]->dev_path, "ibdev", buf, sizeof(buf)) == 6);
	/* other directories are read for real */
	CU_ASSERT(ibv_read_sysfs_file("/proc/self", "comm", buf, sizeof(buf)) > 0);
	close_ctx();
}

/* A stub must be the shim's (never the real library's) and fail with EOPNOTSUPP. */
static void
check_ours(void *fn)
{
	Dl_info info;

	CU_ASSERT_FATAL(fn != NULL);
	CU_ASSERT_FATAL(dladdr(fn, &info) != 0);
	CU_ASSERT(strstr(info.dli_fname, "verbs-shim") != NULL);
}

static void
test_unsupported(void)
{
	/* completions carry no flow tag */
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 16, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_FLOW_TAG
	};
	/* RSS QPs are not offered */
	struct ibv_qp_init_attr_ex qpa = {
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE
	};
	struct ibv_srq_init_attr_ex srqa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_xrcd_init_attr xa = { 0 };
	struct ibv_alloc_dm_attr dma = { .length = 64 };
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	struct ibv_device **(*list10)(int *);
	void (*reg_driver)(const void *);
	int (*cmd)(void);
	char name[64];

	open_ctx();
	errno = 0;
	CU_ASSERT(ibv_import_pd(ctx, 1) == NULL && errno == EOPNOTSUPP);
	check_ours((void *)ibv_import_pd);
	errno = 0;
	CU_ASSERT(ibv_open_xrcd(ctx, &xa) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CU_ASSERT(ibv_create_cq_ex(ctx, &cqa) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CU_ASSERT(ibv_create_qp_ex(ctx, &qpa) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CU_ASSERT(ibv_create_srq_ex(ctx, &srqa) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CU_ASSERT(ibv_alloc_dm(ctx, &dma) == NULL && errno == EOPNOTSUPP);
	CU_ASSERT(ibv_query_ece(NULL, NULL) == EOPNOTSUPP); /* a generated stub */
	check_ours((void *)ibv_query_ece);

	/* versioned lookups: the default, a compat version, the private node */
	CU_ASSERT_FATAL(h != NULL);
	CU_ASSERT(dlvsym(h, "ibv_get_device_list", "IBVERBS_1.1") == (void *)ibv_get_device_list);
	list10 = (struct ibv_device * *(*)(int *)) dlvsym(h, "ibv_get_device_list", "IBVERBS_1.0");
	check_ours((void *)list10);
	CU_ASSERT(list10 != (void *)ibv_get_device_list);
	errno = 0;
	CU_ASSERT(list10(NULL) == NULL && errno == EOPNOTSUPP);
	check_ours(dlvsym(h, "ibv_query_gid_type", DROCE_SHIM_PRIVATE_NODE));
	/* providers' constructors register with verbs_register_driver_NN: a no-op */
	snprintf(name, sizeof(name), "verbs_register_driver_%d", DROCE_SHIM_PRIVATE_NUM);
	reg_driver = (void (*)(const void *))dlvsym(h, name, DROCE_SHIM_PRIVATE_NODE);
	check_ours((void *)reg_driver);
	reg_driver(NULL);
	/* the kernel command layer providers use is a stub */
	cmd = (int (*)(void))dlvsym(h, "ibv_cmd_alloc_pd", DROCE_SHIM_PRIVATE_NODE);
	check_ours((void *)cmd);
	errno = 0;
	CU_ASSERT(cmd() == EOPNOTSUPP && errno == EOPNOTSUPP);
	/* a stub whose failure is negative */
	cmd = (int (*)(void))dlvsym(h, "ibv_read_ibdev_sysfs_file", DROCE_SHIM_PRIVATE_NODE);
	check_ours((void *)cmd);
	errno = 0;
	CU_ASSERT(cmd() == -1 && errno == EOPNOTSUPP);
	dlclose(h);
	close_ctx();
}

static void
test_comp_channel(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	void *cq_ctx;

	open_ctx();
	ch = ibv_create_comp_channel(ctx);
	CU_ASSERT_FATAL(ch != NULL);
	CU_ASSERT(ch->context == ctx && ch->fd >= 0 && ch->refcnt == 0);
	CU_ASSERT(fcntl(ch->fd, F_SETFL, O_NONBLOCK) == 0);
	errno = 0;
	CU_ASSERT(ibv_get_cq_event(ch, &cq, &cq_ctx) == -1 && errno == EAGAIN);
	CU_ASSERT(ibv_destroy_comp_channel(ch) == 0);
	close_ctx();
}

static void
test_fork_and_strings(void)
{
	CU_ASSERT(ibv_fork_init() == 0);
	CU_ASSERT(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED);
	CU_ASSERT_STRING_EQUAL(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	CU_ASSERT_STRING_EQUAL(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
			       "transport retry counter exceeded");
	CU_ASSERT_STRING_EQUAL(ibv_wc_status_str((enum ibv_wc_status)999), "unknown");
	CU_ASSERT_STRING_EQUAL(ibv_event_type_str(IBV_EVENT_PORT_ACTIVE), "port active");
	CU_ASSERT_STRING_EQUAL(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
	CU_ASSERT_STRING_EQUAL(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	CU_ASSERT(ibv_rate_to_mbps(IBV_RATE_100_GBPS) == 103125);
	CU_ASSERT(mbps_to_ibv_rate(103125) == IBV_RATE_100_GBPS);
	CU_ASSERT(ibv_rate_to_mult(IBV_RATE_40_GBPS) == 16);
	CU_ASSERT(mult_to_ibv_rate(16) == IBV_RATE_40_GBPS);
	CU_ASSERT(ibv_rate_to_mult(IBV_RATE_25_GBPS) == -1);
	CU_ASSERT(mult_to_ibv_rate(-1) == IBV_RATE_MAX);
}

DROCE_TEST_MAIN("shim_api", DROCE_TEST(test_device_list), DROCE_TEST(test_context_layout),
		DROCE_TEST(test_query_port), DROCE_TEST(test_query_device), DROCE_TEST(test_gids),
		DROCE_TEST(test_sysfs), DROCE_TEST(test_unsupported), DROCE_TEST(test_comp_channel),
		DROCE_TEST(test_fork_and_strings))
