/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device list and everything answered from the configuration alone (no DPDK): device
 * and port attributes, the GID and P_Key tables, GUIDs and the sysfs files tools read.
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "droce_hostaddr.h"
#include "droce_rt.h"
#include "droce_rt_portd.h"
#include "droce_shim.h"

static struct droce_shim_dev shim_devs[DROCE_SHIM_MAX_DEVS];
static unsigned int shim_ndevs;
static pthread_once_t shim_scan_once = PTHREAD_ONCE_INIT;

/* Largest IB MTU whose packets (headers included) fit the Ethernet MTU, capped at the
 * configured path MTU (IBTA 9.7.7 / A17.4: the PMTU is one of 256..4096). */
static enum ibv_mtu
shim_active_mtu(const struct droce_rt_config *cfg)
{
	struct droce_rt_config c = *cfg;
	enum ibv_mtu best = IBV_MTU_256;
	uint32_t p;
	int m;

	for (m = IBV_MTU_256, p = 256; m <= IBV_MTU_4096; m++, p *= 2) {
		c.path_mtu = p;
		if (p <= cfg->path_mtu && droce_rt_config_min_mtu(&c) <= cfg->mtu)
			best = (enum ibv_mtu)m;
	}
	return best;
}

/* Host mode's interface, its MAC: 0, or -1 when it cannot be read. */
static int
shim_iface_mac(const struct droce_rt_config *cfg, uint8_t mac[6])
{
	struct ifreq ifr;
	char ifn[32];
	int s, rc = -1;

	if (droce_rt_config_host_iface(cfg, ifn, sizeof(ifn)) != 0 || strlen(ifn) >= IFNAMSIZ)
		return -1;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifn, strlen(ifn));
	if (ioctl(s, SIOCGIFHWADDR, &ifr) == 0) {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		rc = 0;
	}
	close(s);
	return rc;
}

/* Host mode: the table is the interface's addresses (pmd-glue/droce_hostaddr.h). */
static void
shim_host_gids(struct droce_shim_dev *d)
{
	struct droce_host_gids t;
	char ifn[32], err[DROCE_RT_ERR_MAX];

	if (droce_rt_config_host_iface(&d->cfg, ifn, sizeof(ifn)) != 0)
		return;
	d->host_ifindex = (int)if_nametoindex(ifn);
	if (d->host_ifindex == 0) {
		fprintf(stderr, "droce: addr_mode host: no interface %s here\n", ifn);
		return;
	}
	if (droce_host_dump(d->host_ifindex, &t, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce: %s\n", err);
		return;
	}
	memcpy(d->gids, t.gid, sizeof(d->gids));
	d->num_gids = t.n;
}

static pthread_mutex_t shim_gids_lock = PTHREAD_MUTEX_INITIALIZER;

void
droce_shim_gids_refresh(const struct droce_shim_dev *cd)
{
	struct droce_rt *rt = droce_shim_rt_peek();
	struct droce_host_gids t;
	struct droce_shim_dev *d = NULL;
	unsigned int i, n;
	char err[8];

	if (cd->host_ifindex == 0)
		return;
	for (i = 0; i < shim_ndevs; i++)
		if (cd == &shim_devs[i])
			d = &shim_devs[i];
	if (d == NULL)
		return;
	memset(&t, 0, sizeof(t));
	if (rt != NULL) {
		n = droce_rt_gid(rt, 0, t.gid[0]);
		for (i = 1; i < n && i < DROCE_SHIM_GID_TBL_LEN; i++)
			droce_rt_gid(rt, i, t.gid[i]);
		t.n = n < DROCE_SHIM_GID_TBL_LEN ? n : DROCE_SHIM_GID_TBL_LEN;
	} else if (droce_host_dump(d->host_ifindex, &t, err, sizeof(err)) != 0) {
		return;
	}
	pthread_mutex_lock(&shim_gids_lock);
	if (t.n != d->num_gids || memcmp(t.gid, d->gids, sizeof(d->gids)) != 0) {
		memcpy(d->gids, t.gid, sizeof(d->gids));
		d->num_gids = t.n;
	}
	pthread_mutex_unlock(&shim_gids_lock);
}

static void
shim_fill_dev(struct droce_shim_dev *d, unsigned int idx)
{
	const struct droce_rt_config *cfg = &d->cfg;
	struct ibv_device *ib = &d->ibdev;
	unsigned int i;

	d->num_gids = 0;
	d->host_ifindex = 0;
	if (droce_rt_config_host_mode(cfg))
		shim_host_gids(d);
	if (cfg->has_ipv4) {
		/* RoCEv2 IPv4 GID: IPv4-mapped IPv6 address (IBTA A17.4.5.1) */
		memset(d->gids[d->num_gids], 0, 10);
		d->gids[d->num_gids][10] = 0xff;
		d->gids[d->num_gids][11] = 0xff;
		memcpy(&d->gids[d->num_gids][12], cfg->ipv4, 4);
		d->num_gids++;
	}
	if (cfg->has_ipv6)
		memcpy(d->gids[d->num_gids++], cfg->ipv6, 16);

	/* Without the port (no EAL yet) the station MAC is the configured one, else a locally
	 * administered one made from the address, so that the GUID is stable. */
	if (cfg->has_mac) {
		memcpy(d->mac, cfg->mac, 6);
	} else if (d->host_ifindex != 0 && shim_iface_mac(cfg, d->mac) == 0) {
		/* host mode: the interface's own, the one the port sends with */
	} else {
		d->mac[0] = 0x02;
		d->mac[1] = 0x00;
		memcpy(&d->mac[2], cfg->has_ipv4 ? cfg->ipv4 : &cfg->ipv6[12], 4);
	}
	/* EUI-64 from the MAC: flip the universal/local bit, insert ff:fe */
	d->guid = (uint64_t)(d->mac[0] ^ 2) << 56 | (uint64_t)d->mac[1] << 48 |
		  (uint64_t)d->mac[2] << 40 | 0xffULL << 32 | 0xfeULL << 24 |
		  (uint64_t)d->mac[3] << 16 | (uint64_t)d->mac[4] << 8 | d->mac[5];
	d->active_mtu = shim_active_mtu(cfg);

	memset(ib, 0, sizeof(*ib));
	ib->node_type = IBV_NODE_CA;
	ib->transport_type = IBV_TRANSPORT_IB; /* RoCE devices report the IB transport */
	snprintf(ib->name, sizeof(ib->name), "droce%u", idx);
	snprintf(ib->dev_name, sizeof(ib->dev_name), "uverbs_droce%u", idx);
	snprintf(ib->dev_path, sizeof(ib->dev_path), "/sys/class/infiniband_verbs/%s",
		 ib->dev_name);
	snprintf(ib->ibdev_path, sizeof(ib->ibdev_path), "/sys/class/infiniband/%s", ib->name);
	for (i = d->num_gids; i < DROCE_SHIM_GID_TBL_LEN; i++)
		memset(d->gids[i], 0, 16);
}

static void
shim_scan(void)
{
	char err[DROCE_RT_ERR_MAX];
	int rc;

	/* Same configuration as the runtime: $DROCE_CONFIG, then DROCE_* variables. */
	if (droce_rt_config_load(&shim_devs[0].cfg, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "droce: no device: %s\n", err);
		return;
	}
	/* under droce-portd the port's addresses are the service's (the runtime takes a slot
	 * when it opens) */
	rc = droce_rt_portd_query(&shim_devs[0].cfg, err, sizeof(err));
	if (rc != 0 && rc != -ENOENT) {
		fprintf(stderr, "droce: no device: %s\n", err);
		return;
	}
	shim_fill_dev(&shim_devs[0], 0);
	shim_ndevs = 1;
}

struct droce_shim_dev *
droce_shim_devices(unsigned int *n)
{
	pthread_once(&shim_scan_once, shim_scan);
	*n = shim_ndevs;
	return shim_devs;
}

bool
droce_shim_is_dev(const struct ibv_device *d)
{
	unsigned int n, i;
	struct droce_shim_dev *devs = droce_shim_devices(&n);

	for (i = 0; i < n; i++)
		if (d == &devs[i].ibdev)
			return true;
	return false;
}

struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	unsigned int n, i;
	struct droce_shim_dev *devs = droce_shim_devices(&n);
	struct ibv_device **list = calloc(n + 1, sizeof(*list));

	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++)
		list[i] = &devs[i].ibdev;
	if (num_devices != NULL)
		*num_devices = (int)n;
	return list;
}

/* Devices are static: the list can go while contexts stay open. */
void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	const struct droce_shim_dev *d = (const struct droce_shim_dev *)device;

	if (!droce_shim_is_dev(device)) {
		errno = ENODEV;
		return 0;
	}
	return htobe64(d->guid);
}

int
ibv_get_device_index(struct ibv_device *device)
{
	unsigned int n;
	struct droce_shim_dev *devs = droce_shim_devices(&n);

	if (!droce_shim_is_dev(device))
		return -1;
	return (int)((struct droce_shim_dev *)device - devs);
}

void
droce_shim_device_attr(const struct droce_shim_dev *d, struct ibv_device_attr *a)
{
	const struct droce_rt_config *cfg = &d->cfg;

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce %s", DROCE_VERSION);
	a->node_guid = htobe64(d->guid);
	a->sys_image_guid = htobe64(d->guid);
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = ~0xfffULL; /* any multiple of 4 KiB */
	a->vendor_id = 0;	      /* neutral: tools must not take us for a vendor's HCA */
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = (int)cfg->max_qp;
	a->max_qp_wr = DROCE_SHIM_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID;
	/* a type 2 window serves the QP it was bound through, in its PD: 2B, as rxe */
	if (cfg->max_mw != 0)
		a->device_cap_flags |= IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_mw = (int)cfg->max_mw;
	a->max_sge = DROCE_SHIM_MAX_SGE;
	a->max_sge_rd = DROCE_SHIM_MAX_SGE;
	a->max_cq = (int)cfg->max_cq;
	a->max_cqe = DROCE_SHIM_MAX_CQE;
	a->max_mr = (int)cfg->max_mr;
	a->max_pd = (int)cfg->max_pd;
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = (int)cfg->max_qp * DROCE_MAX_RD_ATOMIC;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = (int)cfg->max_ah;
	a->max_mcast_grp = DROCE_MCAST_GROUPS;
	a->max_mcast_qp_attach = DROCE_MCAST_QPS;
	a->max_total_mcast_qp_attach = DROCE_MCAST_GROUPS * DROCE_MCAST_QPS;
	a->max_srq = (int)cfg->max_srq;
	a->max_srq_wr = DROCE_SHIM_MAX_SRQ_WR;
	a->max_srq_sge = DROCE_SHIM_MAX_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

/* A struct of ours into a caller's of len bytes: callers built against an older verbs.h pass
 * a shorter one, a newer one a longer one (zeroed past ours). */
static void
copy_sized(void *dst, size_t len, const void *src, size_t size)
{
	memcpy(dst, src, len < size ? len : size);
	if (len > size)
		memset((char *)dst + size, 0, len - size);
}

int
droce_shim_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			   struct ibv_device_attr_ex *a, size_t len)
{
	struct ibv_device_attr_ex full;

	if (in != NULL && in->comp_mask != 0)
		return EINVAL;
	if (len < sizeof(struct ibv_device_attr))
		return EINVAL;
	memset(&full, 0, sizeof(full));
	droce_shim_device_attr(droce_shim_ctx(c)->dev, &full.orig_attr);
	/* Completion timestamps are the engine's clock, in ns: a 1 GHz "HCA clock" (kHz here)
	 * that does not wrap in 584 years. */
	full.completion_timestamp_mask = UINT64_MAX;
	full.hca_core_clock = DROCE_SHIM_CLOCK_KHZ;
	copy_sized(a, len, &full, sizeof(full));
	return 0;
}

int
ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	droce_shim_device_attr(droce_shim_ctx(context)->dev, device_attr);
	return 0;
}

int
droce_shim_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *out, size_t len)
{
	const struct droce_shim_dev *d = droce_shim_ctx(c)->dev;
	struct ibv_port_attr a;

	if (port != DROCE_SHIM_PORT)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	/* The link itself comes up with the runtime, on first use: report it usable. */
	a.state = IBV_PORT_ACTIVE;
	a.phys_state = DROCE_SHIM_PHYS_LINKUP;
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = d->active_mtu;
	a.gid_tbl_len = DROCE_SHIM_GID_TBL_LEN;
	a.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a.max_msg_sz = 1U << 31; /* IBTA 9.7.2: at most 2^31 bytes */
	a.pkey_tbl_len = 1;
	a.max_vl_num = 1;
	a.active_width = DROCE_SHIM_WIDTH_1X;
	a.active_speed = DROCE_SHIM_SPEED_EDR;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	copy_sized(out, len, &a, sizeof(a)); /* older callers: the 48-byte struct */
	return 0;
}

/* The exported one takes the 48-byte compat struct (the inline passes the 52-byte one). */
int(ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		    struct _compat_ibv_port_attr *port_attr)
{
	return droce_shim_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
				     offsetof(struct ibv_port_attr, port_cap_flags2));
}
