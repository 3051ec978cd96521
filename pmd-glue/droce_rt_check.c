/* SPDX-License-Identifier: BSD-3-Clause */
/* Pre-EAL checks: one line per failure, naming the cause and the fix. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_rt_afpacket.h"
#include "droce_rt_err.h"
#include "droce_rt_check.h"

/* Linux capability numbers (linux/capability.h). */
enum { CAP_NET_ADMIN_BIT = 12, CAP_NET_RAW_BIT = 13, CAP_SYS_ADMIN_BIT = 21, CAP_BPF_BIT = 39 };

void
droce_rt_sys_default(struct droce_rt_sys *sys)
{
	sys->mounts = "/proc/mounts";
	sys->hugepages_dir = "/sys/kernel/mm/hugepages";
	sys->status = "/proc/self/status";
}

/* The next blank-separated word of *s (its length in *len, 0 at the end); *s moves past it. */
static const char *
next_word(const char **s, size_t *len)
{
	const char *w;

	while (isspace((unsigned char)**s))
		(*s)++;
	w = *s;
	while (**s != '\0' && !isspace((unsigned char)**s))
		(*s)++;
	*len = (size_t)(*s - w);
	return w;
}

/* Value of an option (e.g. --huge-dir) in the eal words, as "OPT=V" or "OPT V". */
static int
eal_value(const struct droce_rt_config *cfg, const char *opt, char *out, size_t outlen)
{
	const char *s = cfg->eal, *w;
	size_t n = strlen(opt), len;

	while (*s != '\0') {
		w = next_word(&s, &len);
		if (len > n && strncmp(w, opt, n) == 0 && w[n] == '=') {
			w += n + 1;
			len -= n + 1;
		} else if (len == n && strncmp(w, opt, n) == 0) {
			w = next_word(&s, &len);
		} else {
			continue;
		}
		if (len == 0 || len >= outlen)
			return -1;
		memcpy(out, w, len);
		out[len] = '\0';
		return 0;
	}
	return -1;
}

static uint64_t
free_hugepages(const char *dir)
{
	char path[512];
	struct dirent *de;
	uint64_t total = 0;
	unsigned long long v;
	DIR *d = opendir(dir);
	FILE *f;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "hugepages-", 10) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/free_hugepages", dir, de->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			total += v;
		fclose(f);
	}
	closedir(d);
	return total;
}

int
droce_rt_check_hugepages(const struct droce_rt_config *cfg, const struct droce_rt_sys *sys,
			 char *err, size_t errlen)
{
	char want[256], dev[256], mnt[256], type[64], line[1024];
	bool found = false;
	FILE *f;

	if (droce_rt_config_eal_has(cfg, "--no-huge"))
		return 0;
	if (eal_value(cfg, "--huge-dir", want, sizeof(want)) != 0)
		want[0] = '\0';
	f = fopen(sys->mounts, "r");
	if (f == NULL)
		return droce_rt_errf(-errno, err, errlen, "cannot read %s: %s", sys->mounts,
				     strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%255s %255s %63s", dev, mnt, type) != 3)
			continue;
		if (strcmp(type, "hugetlbfs") != 0)
			continue;
		if (want[0] != '\0' && strcmp(want, mnt) != 0)
			continue;
		found = true;
		break;
	}
	fclose(f);
	if (!found)
		return droce_rt_errf(-ENOENT, err, errlen,
				     "hugetlbfs is not mounted%s%s: run 'mount -t "
				     "hugetlbfs nodev %s' or set DROCE_EAL=\"--no-huge\"",
				     want[0] ? " at " : "", want,
				     want[0] ? want : "/dev/hugepages");
	if (access(mnt, W_OK | X_OK) != 0)
		return droce_rt_errf(
			-EACCES, err, errlen,
			"no permission to use hugetlbfs at %s (%s): run "
			"as root, chown the mount to uid %ld, or set DROCE_EAL=\"--no-huge\"",
			mnt, strerror(errno), (long)geteuid());
	if (free_hugepages(sys->hugepages_dir) == 0)
		return droce_rt_errf(-ENOMEM, err, errlen,
				     "hugetlbfs is mounted at %s but no hugepage is "
				     "free: run 'echo 512 > /proc/sys/vm/nr_hugepages' or set "
				     "DROCE_EAL=\"--no-huge\"",
				     mnt);
	return 0;
}

/* Effective capability set from /proc/self/status; all ones when unreadable (let EAL say). */
static uint64_t
cap_eff(const char *status)
{
	char line[256];
	unsigned long long v;
	uint64_t caps = UINT64_MAX;
	FILE *f = fopen(status, "r");

	if (f == NULL)
		return caps;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "CapEff: %llx", &v) == 1) {
			caps = v;
			break;
		}
	fclose(f);
	return caps;
}

static int
check_one_vdev(const char *vdev, const struct droce_rt_sys *sys, char *err, size_t errlen)
{
	char iface[IF_NAMESIZE + 8];
	bool is_pkt = strncmp(vdev, "net_af_packet", 13) == 0;
	bool is_xdp = strncmp(vdev, "net_af_xdp", 10) == 0;
	size_t name_len = strcspn(vdev, ",");
	uint64_t caps;

	if (!is_pkt && !is_xdp)
		return 0;
	if (droce_rt_devarg(vdev, "iface", iface, sizeof(iface)) != 0)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "%.*s needs iface=<interface>: e.g. "
				     "DROCE_VDEV=%.*s,iface=veth0",
				     (int)name_len, vdev, (int)name_len, vdev);
	if (if_nametoindex(iface) == 0)
		return droce_rt_errf(
			-ENODEV, err, errlen,
			"interface '%s' not found (%.*s iface=): create "
			"it ('ip link add %s type veth peer name %s-p') or fix DROCE_VDEV",
			iface, (int)name_len, vdev, iface, iface);
	caps = cap_eff(sys->status);
	if (is_pkt && !(caps & (1ull << CAP_NET_RAW_BIT)))
		return droce_rt_errf(-EPERM, err, errlen,
				     "no permission: %.*s needs CAP_NET_RAW: run as "
				     "root or 'setcap cap_net_raw,cap_net_admin+ep' on the program",
				     (int)name_len, vdev);
	if (is_xdp && (!(caps & (1ull << CAP_NET_ADMIN_BIT)) ||
		       !(caps & ((1ull << CAP_SYS_ADMIN_BIT) | (1ull << CAP_BPF_BIT)))))
		return droce_rt_errf(-EPERM, err, errlen,
				     "no permission: %.*s needs CAP_NET_ADMIN and "
				     "CAP_BPF (or CAP_SYS_ADMIN): run as root",
				     (int)name_len, vdev);
	return 0;
}

/* The kernel interface's MTU, or 0 when it cannot be read. */
static uint32_t
iface_mtu(const char *iface)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 0;

	if (s < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	if (strlen(iface) >= sizeof(ifr.ifr_name)) {
		close(s);
		return 0;
	}
	memcpy(ifr.ifr_name, iface, strlen(iface));
	if (ioctl(s, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0)
		mtu = (uint32_t)ifr.ifr_mtu;
	close(s);
	return mtu;
}

/*
 * The MTU fits the kernel interface of an af_packet / af_xdp vdev: the kernel refuses to send
 * a packet socket's frame above its own MTU, and a peer at that MTU sends us none larger.
 * With af_packet, a slot the vdev sizes itself must hold it (droce_rt_afpacket.h).
 */
static int
check_vdev_mtu(const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	char iface[IF_NAMESIZE + 8];
	size_t name_len = strcspn(cfg->vdev, ",");
	struct droce_rt_afp g;
	uint32_t have;

	if (strstr(cfg->vdev, "_af_packet") == NULL && strstr(cfg->vdev, "_af_xdp") == NULL)
		return 0;
	if (droce_rt_devarg(cfg->vdev, "iface", iface, sizeof(iface)) != 0)
		return 0;
	have = iface_mtu(iface);
	if (have != 0 && have < cfg->mtu)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"interface %s has MTU %u, below DROCE_MTU %u: raise it on both ends "
			"('ip link set dev %s mtu %u') or lower DROCE_MTU to %u",
			iface, have, cfg->mtu, iface, cfg->mtu, have);
	droce_rt_afp_geometry(cfg, &g);
	if (g.is_afpacket && g.given && droce_rt_afp_max_mtu(&g) < cfg->mtu)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"%.*s framesz=%u holds an MTU of %u at most, below DROCE_MTU %u: "
			"drop framesz and blocksz from DROCE_VDEV (droce sizes them) or "
			"raise them",
			(int)name_len, cfg->vdev, g.framesz, droce_rt_afp_max_mtu(&g), cfg->mtu);
	return 0;
}

int
droce_rt_check_vdevs(const struct droce_rt_config *cfg, const struct droce_rt_sys *sys, char *err,
		     size_t errlen)
{
	char word[DROCE_RT_STR_MAX];
	const char *s = cfg->eal, *w;
	bool next_is_vdev = false;
	size_t len;
	int rc;

	if (cfg->vdev[0] != '\0') {
		rc = check_one_vdev(cfg->vdev, sys, err, errlen);
		if (rc == 0)
			rc = check_vdev_mtu(cfg, err, errlen);
		if (rc != 0)
			return rc;
	}
	while (*s != '\0') {
		w = next_word(&s, &len);
		if (len == 0 || len >= sizeof(word))
			continue;
		memcpy(word, w, len);
		word[len] = '\0';
		if (next_is_vdev) {
			next_is_vdev = false;
			rc = check_one_vdev(word, sys, err, errlen);
		} else if (strcmp(word, "--vdev") == 0) {
			next_is_vdev = true;
			rc = 0;
		} else if (strncmp(word, "--vdev=", 7) == 0) {
			rc = check_one_vdev(word + 7, sys, err, errlen);
		} else {
			rc = 0;
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
droce_rt_preflight(const struct droce_rt_config *cfg, const struct droce_rt_sys *sys, char *err,
		   size_t errlen)
{
	int rc;

	rc = droce_rt_config_validate(cfg, err, errlen);
	if (rc == 0)
		rc = droce_rt_check_hugepages(cfg, sys, err, errlen);
	if (rc == 0)
		rc = droce_rt_check_vdevs(cfg, sys, err, errlen);
	return rc;
}
