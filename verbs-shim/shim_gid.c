/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GID and P_Key tables, and the sysfs files tools read through ibv_read_sysfs_file() (the
 * device has no kernel side, so its sysfs directory exists only here).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_shim.h"

static const uint8_t shim_zero_gid[16];

/* Valid entry idx of port, or -errno (ENODATA: an empty slot, as the kernel reports it). */
static int
shim_gid(struct ibv_context *c, uint32_t port, uint32_t idx, const uint8_t **gid)
{
	const struct droce_shim_dev *d = droce_shim_ctx(c)->dev;

	if (port != DROCE_SHIM_PORT || idx >= DROCE_SHIM_GID_TBL_LEN)
		return -EINVAL;
	droce_shim_gids_refresh(d);
	if (idx >= d->num_gids || memcmp(d->gids[idx], shim_zero_gid, 16) == 0)
		return -ENODATA;
	*gid = d->gids[idx];
	return 0;
}

int
ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	const uint8_t *g;
	int rc = index < 0 ? -EINVAL : shim_gid(context, port_num, (uint32_t)index, &g);

	if (rc == -ENODATA) { /* verbs API: an empty entry reads as the zero GID */
		memset(gid, 0, sizeof(*gid));
		return 0;
	}
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	memcpy(gid->raw, g, 16);
	return 0;
}

static void
shim_gid_entry(struct ibv_gid_entry *e, const uint8_t *g, uint32_t port, uint32_t idx)
{
	memset(e, 0, sizeof(*e));
	memcpy(e->gid.raw, g, 16);
	e->gid_index = idx;
	e->port_num = port;
	e->gid_type = IBV_GID_TYPE_ROCE_V2; /* RoCEv2 only: no RoCEv1 entries */
	e->ndev_ifindex = 0;		    /* no kernel netdev behind a DPDK port */
}

int
_ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	const uint8_t *g;
	int rc;

	if (flags != 0 || entry_size < sizeof(*entry))
		return EINVAL;
	rc = shim_gid(context, port_num, gid_index, &g);
	if (rc != 0)
		return -rc;
	shim_gid_entry(entry, g, port_num, gid_index);
	return 0;
}

ssize_t
_ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries,
		     uint32_t flags, size_t entry_size)
{
	const struct droce_shim_dev *d = droce_shim_ctx(context)->dev;
	unsigned int i;

	unsigned int n = 0;

	if (flags != 0 || entry_size < sizeof(*entries))
		return -EINVAL;
	droce_shim_gids_refresh(d);
	if (max_entries < d->num_gids)
		return -EINVAL;
	/* the valid entries, as the kernel lists them (a removed address leaves a hole) */
	for (i = 0; i < d->num_gids; i++)
		if (memcmp(d->gids[i], shim_zero_gid, 16) != 0)
			shim_gid_entry((struct ibv_gid_entry *)((char *)entries + n++ * entry_size),
				       d->gids[i], DROCE_SHIM_PORT, i);
	return n;
}

/* IBVERBS_PRIVATE_NN: ibv_devinfo -v asks it for each GID. */
int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		   enum droce_shim_gid_sysfs *type)
{
	const uint8_t *g;
	int rc = shim_gid(context, port_num, index, &g);

	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	*type = DROCE_SHIM_GID_SYSFS_ROCE_V2;
	return 0;
}

/* One P_Key: the default 0xFFFF (IBTA 10.9.1.2; RoCE carries it in BTH, A17.4.6). */
int
ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	(void)context;
	if (port_num != DROCE_SHIM_PORT || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff);
	return 0;
}

int
ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;

	if (ibv_query_pkey(context, port_num, 0, &p) == 0 && p == pkey)
		return 0;
	errno = ENOENT;
	return -1;
}

const char *
ibv_get_sysfs_path(void)
{
	return "/sys";
}

static void
shim_gid_text(char *s, size_t n, const uint8_t *g)
{
	snprintf(s, n, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12],
		 g[13], g[14], g[15]);
}

static void
shim_guid_text(char *s, size_t n, uint64_t guid)
{
	snprintf(s, n, "%04x:%04x:%04x:%04x", (unsigned int)(guid >> 48) & 0xffff,
		 (unsigned int)(guid >> 32) & 0xffff, (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
}

/* The text of a file of our device's sysfs directories; false when there is no such file. */
static bool
shim_sysfs_text(const struct droce_shim_dev *d, bool verbs_dir, const char *file, char *s, size_t n)
{
	unsigned int i;

	if (verbs_dir) {
		if (strcmp(file, "ibdev") == 0)
			snprintf(s, n, "%s", d->ibdev.name);
		else if (strcmp(file, "abi_version") == 0)
			snprintf(s, n, "1");
		else
			return false;
		return true;
	}
	if (strcmp(file, "board_id") == 0 || strcmp(file, "hca_type") == 0)
		snprintf(s, n, "droce");
	else if (strcmp(file, "fw_ver") == 0)
		snprintf(s, n, "droce %s", DROCE_VERSION);
	else if (strcmp(file, "hw_rev") == 0)
		snprintf(s, n, "0");
	else if (strcmp(file, "node_type") == 0)
		snprintf(s, n, "1: CA");
	else if (strcmp(file, "node_guid") == 0 || strcmp(file, "sys_image_guid") == 0)
		shim_guid_text(s, n, d->guid);
	else if (strcmp(file, "ports/1/state") == 0)
		snprintf(s, n, "4: ACTIVE");
	else if (strcmp(file, "ports/1/phys_state") == 0)
		snprintf(s, n, "5: LinkUp");
	else if (strcmp(file, "ports/1/link_layer") == 0)
		snprintf(s, n, "Ethernet");
	else if (strcmp(file, "ports/1/lid") == 0 || strcmp(file, "ports/1/sm_lid") == 0)
		snprintf(s, n, "0x0");
	else if (strcmp(file, "ports/1/pkeys/0") == 0)
		snprintf(s, n, "0xffff");
	else if (sscanf(file, "ports/1/gids/%u", &i) == 1 && i < DROCE_SHIM_GID_TBL_LEN &&
		 (droce_shim_gids_refresh(d), true))
		shim_gid_text(s, n, d->gids[i]);
	else if (sscanf(file, "ports/1/gid_attrs/types/%u", &i) == 1 && i < d->num_gids)
		snprintf(s, n, "RoCE v2");
	else
		return false;
	return true;
}

int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	unsigned int n, i;
	struct droce_shim_dev *devs = droce_shim_devices(&n);
	char text[128], *path;
	ssize_t len;
	int fd;

	for (i = 0; i < n; i++) {
		bool verbs_dir = strcmp(dir, devs[i].ibdev.dev_path) == 0;

		if (!verbs_dir && strcmp(dir, devs[i].ibdev.ibdev_path) != 0)
			continue;
		if (!shim_sysfs_text(&devs[i], verbs_dir, file, text, sizeof(text))) {
			errno = ENOENT;
			return -1;
		}
		len = (ssize_t)strlen(text);
		if ((size_t)len >= size) { /* as the real one: never a truncated value */
			errno = EOVERFLOW;
			return -1;
		}
		memcpy(buf, text, (size_t)len + 1);
		return (int)len;
	}

	/* Any other directory is real sysfs: read it like rdma-core does. */
	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len <= 0)
		return -1;
	if (buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else {
		errno = EOVERFLOW;
		return -1;
	}
	return (int)len;
}
