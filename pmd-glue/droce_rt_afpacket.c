/* SPDX-License-Identifier: BSD-3-Clause */
/* net_af_packet's ring slot and block for an MTU (droce_rt_afpacket.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_rt_afpacket.h"

int
droce_rt_devarg(const char *vdev, const char *key, char *out, size_t outlen)
{
	const char *s = strchr(vdev, ','), *e;
	size_t n = strlen(key), len;

	while (s != NULL) {
		s++;
		e = strchr(s, ',');
		len = e != NULL ? (size_t)(e - s) : strlen(s);
		if (len > n && strncmp(s, key, n) == 0 && s[n] == '=') {
			len -= n + 1;
			if (len >= outlen)
				return -1;
			memcpy(out, s + n + 1, len);
			out[len] = '\0';
			return 0;
		}
		s = e;
	}
	return -1;
}

static uint32_t
devarg_u32(const char *vdev, const char *key, uint32_t dflt)
{
	char v[32], *end;
	unsigned long n;

	if (droce_rt_devarg(vdev, key, v, sizeof(v)) != 0)
		return dflt;
	n = strtoul(v, &end, 10);
	return *end == '\0' && n > 0 && n <= UINT32_MAX ? (uint32_t)n : dflt;
}

static uint32_t
gcd(uint32_t a, uint32_t b)
{
	while (b != 0) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

void
droce_rt_afp_geometry(const struct droce_rt_config *cfg, struct droce_rt_afp *g)
{
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE), need;
	char v[32];

	memset(g, 0, sizeof(*g));
	g->is_afpacket = strncmp(cfg->vdev, "net_af_packet", 13) == 0 ||
			 strncmp(cfg->vdev, "eth_af_packet", 13) == 0;
	g->framesz = DROCE_RT_AFP_DEFAULT_FRAMESZ;
	g->blocksz = page;
	if (!g->is_afpacket)
		return;
	g->given = droce_rt_devarg(cfg->vdev, "framesz", v, sizeof(v)) == 0 ||
		   droce_rt_devarg(cfg->vdev, "blocksz", v, sizeof(v)) == 0;
	if (g->given) {
		g->framesz = devarg_u32(cfg->vdev, "framesz", g->framesz);
		g->blocksz = devarg_u32(cfg->vdev, "blocksz", page);
		return;
	}
	need = cfg->mtu + DROCE_RT_AFP_NETOFF;
	if (need <= DROCE_RT_AFP_DEFAULT_FRAMESZ)
		return;
	g->framesz = (need + DROCE_RT_AFP_ALIGN - 1) / DROCE_RT_AFP_ALIGN * DROCE_RT_AFP_ALIGN;
	/* The kernel wants page-aligned blocks, the PMD slots back to back: their lcm. */
	g->blocksz = g->framesz / gcd(g->framesz, page) * page;
}

uint32_t
droce_rt_afp_max_mtu(const struct droce_rt_afp *g)
{
	return g->framesz > DROCE_RT_AFP_NETOFF ? g->framesz - DROCE_RT_AFP_NETOFF : 0;
}

uint32_t
droce_rt_afp_rx_room(const struct droce_rt_afp *g)
{
	return g->framesz - DROCE_RT_AFP_DATAOFF;
}

int
droce_rt_afp_vdev(const struct droce_rt_config *cfg, char *out, size_t outlen)
{
	struct droce_rt_afp g;
	int n;

	droce_rt_afp_geometry(cfg, &g);
	if (!g.is_afpacket || g.given || g.framesz == DROCE_RT_AFP_DEFAULT_FRAMESZ)
		n = snprintf(out, outlen, "%s", cfg->vdev);
	else
		n = snprintf(out, outlen, "%s,framesz=%u,blocksz=%u", cfg->vdev, g.framesz,
			     g.blocksz);
	return n < 0 || (size_t)n >= outlen ? -E2BIG : 0;
}
