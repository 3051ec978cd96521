/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime configuration: a key table drives the file, the environment and the help text. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_cc.h"
#include "droce_ext.h"
#include "droce_rt_afpacket.h"
#include "droce_rt_err.h"
#include "droce_rt_config.h"
#include "droce_portd_proto.h"

enum droce_rt_key_type {
	KT_STR,
	KT_U32,
	KT_U64,
	KT_IPV4_PFX,
	KT_IPV4,
	KT_IPV6_PFX,
	KT_IPV6,
	KT_MAC,
	KT_LCORES,
	KT_EXC,
};

struct droce_rt_key {
	const char *name;
	enum droce_rt_key_type type;
	size_t off;
	size_t size;	   /* KT_STR: buffer size */
	uint64_t min, max; /* KT_U32/KT_U64 */
};

#define OFF(f) offsetof(struct droce_rt_config, f)
#define STR(n, f) \
	{ \
		n, KT_STR, OFF(f), sizeof(((struct droce_rt_config *)0)->f), 0, 0 \
	}
#define U32(n, f, lo, hi) \
	{ \
		n, KT_U32, OFF(f), 0, lo, hi \
	}

static const struct droce_rt_key droce_rt_keys[] = {
	STR("eal", eal),
	STR("vdev", vdev),
	STR("port", port),
	{ "ipv4", KT_IPV4_PFX, 0, 0, 0, 0 },
	{ "gw4", KT_IPV4, 0, 0, 0, 0 },
	{ "ipv6", KT_IPV6_PFX, 0, 0, 0, 0 },
	{ "gw6", KT_IPV6, 0, 0, 0, 0 },
	{ "mac", KT_MAC, 0, 0, 0, 0 },
	{ "lcores", KT_LCORES, 0, 0, 0, 0 },
	U32("queues", queues, 1, 16),
	U32("shards", shards, 1, DROCE_RT_MAX_SHARDS),
	/* 576: the IPv4 minimum datagram (RFC 791); 9702: the largest jumbo common NICs take. */
	U32("mtu", mtu, 576, 9702),
	U32("path_mtu", path_mtu, 256, 4096),
	U32("mbufs", mbufs, 64, 1u << 24),
	U32("mbuf_cache", mbuf_cache, 0, 512),
	U32("rx_desc", rx_desc, 32, 16384),
	U32("tx_desc", tx_desc, 32, 16384),
	U32("burst", burst, 1, 64),
	U32("arp_timeout_ms", arp_timeout_ms, 100, 86400000),
	U32("arp_retry_ms", arp_retry_ms, 1, 60000),
	U32("arp_tries", arp_tries, 1, 100),
	U32("idle_spins", idle_spins, 0, 1u << 24),
	U32("idle_sleep_us", idle_sleep_us, 0, 1000000),
	U32("start_wait_ms", start_wait_ms, 0, 600000),
	{ "exception", KT_EXC, 0, 0, 0, 0 },
	{ "seed", KT_U64, OFF(seed), 0, 0, UINT64_MAX },
	U32("max_qp", max_qp, 1, 1u << 20),
	U32("max_cq", max_cq, 1, 1u << 20),
	U32("max_mr", max_mr, 1, 1u << 20),
	U32("max_mw", max_mw, 0, 1u << 20),
	U32("max_srq", max_srq, 0, 1u << 20),
	U32("max_ah", max_ah, 0, 1u << 20),
	U32("max_pd", max_pd, 1, 1u << 20),
	STR("capture", capture),
	U32("capture_max_kb", capture_max_kb, 1, 1u << 30),
	STR("counters_file", counters_file),
	/* IEEE 802.1Q Table 9-2: VID 4095 is reserved (0 here: no tag); PCP is 3 bits. */
	U32("vlan", vlan, 0, 4094),
	U32("vlan_pcp", vlan_pcp, 0, 7),
	STR("cc", cc),
	STR("cc_plugin", cc_plugin),
	STR("qp_cc", qp_cc),
	STR("recovery", recovery),
	U32("dcqcn_max_rate_mbps", dcqcn_max_rate_mbps, 0, 1600000),
	U32("dcqcn_min_rate_mbps", dcqcn_min_rate_mbps, 0, 1600000),
	U32("dcqcn_ai_rate_mbps", dcqcn_ai_rate_mbps, 0, 1600000),
	U32("dcqcn_hai_rate_mbps", dcqcn_hai_rate_mbps, 0, 1600000),
	U32("dcqcn_time_reset_us", dcqcn_time_reset_us, 0, 10000000),
	U32("dcqcn_byte_reset", dcqcn_byte_reset, 0, 1u << 30),
	U32("dcqcn_threshold", dcqcn_threshold, 0, 1000),
	U32("dcqcn_g", dcqcn_g, 0, 1024),
	U32("dcqcn_alpha_period_us", dcqcn_alpha_period_us, 0, 10000000),
	U32("dcqcn_reduce_period_us", dcqcn_reduce_period_us, 0, 10000000),
	U32("dcqcn_min_dec_fac", dcqcn_min_dec_fac, 0, 100),
	U32("dcqcn_cut_per_rtt", dcqcn_cut_per_rtt, 0, 1),
	U32("dcqcn_cut_from_sent", dcqcn_cut_from_sent, 0, 64),
	U32("dcqcn_clamp_tgt_rate", dcqcn_clamp_tgt_rate, 0, 1),
	U32("dcqcn_ai_rate_ppm", dcqcn_ai_rate_ppm, 0, 1000000),
	U32("dcqcn_target_cut_pct", dcqcn_target_cut_pct, 0, 100),
	U32("dcqcn_level_cut_pct", dcqcn_level_cut_pct, 0, 100),
	U32("dcqcn_level_min_share", dcqcn_level_min_share, 0, 1000000),
	U32("dcqcn_level_max_alpha", dcqcn_level_max_alpha, 0, 1024),
	U32("dcqcn_first_cut_pct", dcqcn_first_cut_pct, 0, 100),
	U32("dcqcn_paced_cut_pct", dcqcn_paced_cut_pct, 0, 100),
	U32("dcqcn_paced_min_share", dcqcn_paced_min_share, 0, 1000000),
	U32("cnp_interval_us", cnp_interval_us, 0, 10000000),
	U32("link_mbps", link_mbps, 0, 1600000),
	U32("timely_max_rate_mbps", timely_max_rate_mbps, 0, 1600000),
	U32("timely_min_rate_mbps", timely_min_rate_mbps, 0, 1600000),
	U32("timely_delta_mbps", timely_delta_mbps, 0, 1600000),
	U32("timely_t_low_us", timely_t_low_us, 0, 10000000),
	U32("timely_t_high_us", timely_t_high_us, 0, 10000000),
	U32("timely_min_rtt_us", timely_min_rtt_us, 0, 10000000),
	STR("inflight_cap", inflight_cap),
	U32("inflight_rtt_us", inflight_rtt_us, 0, 4000000),
	U32("rto", rto, 0, 1),
	U32("rto_min_us", rto_min_us, 0, 4000000),
	U32("ack_delay_us", ack_delay_us, 0, 1000000),
	U32("ack_coalesce", ack_coalesce, 0, 1u << 20),
	STR("ack_order", ack_order),
	U32("tx_quantum", tx_quantum, 1, DROCE_TX_QUANTUM_MAX),
	STR("addr_mode", addr_mode),
	STR("host_iface", host_iface),
	STR("portd", portd),
};

#define NKEYS (sizeof(droce_rt_keys) / sizeof(droce_rt_keys[0]))

unsigned int
droce_rt_config_nkeys(void)
{
	return NKEYS;
}

const char *
droce_rt_config_key(unsigned int i)
{
	return i < NKEYS ? droce_rt_keys[i].name : NULL;
}

void
droce_rt_config_defaults(struct droce_rt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->lcores[0] = 0;
	cfg->nb_lcores = 1;
	cfg->queues = 1;
	cfg->shards = 1;
	cfg->mtu = 1500;
	cfg->path_mtu = 1024;
	cfg->mbufs = 8191;
	cfg->mbuf_cache = 128;
	cfg->rx_desc = 512;
	cfg->tx_desc = 512;
	cfg->burst = 32;
	cfg->arp_timeout_ms = 60000;
	cfg->arp_retry_ms = 250;
	cfg->arp_tries = 4;
	cfg->idle_spins = 512;
	cfg->idle_sleep_us = 100;
	cfg->start_wait_ms = 5000;
	cfg->exception = DROCE_RT_EXC_DROP;
	cfg->max_qp = 256;
	cfg->max_cq = 256;
	cfg->max_mr = 1024;
	cfg->max_mw = 256;
	cfg->max_srq = 64;
	cfg->max_ah = 256;
	cfg->max_pd = 64;
	cfg->capture_max_kb = 65536;
	cfg->vlan_pcp = 3; /* the priority RoCE commonly gets PFC on (lossless class) */
	snprintf(cfg->cc, sizeof(cfg->cc), "none");
	snprintf(cfg->recovery, sizeof(cfg->recovery), "gbn");
	cfg->cnp_interval_us = DROCE_RT_CNP_AUTO;
	snprintf(cfg->inflight_cap, sizeof(cfg->inflight_cap), "bdp");
	/* A software path (the poll loop, a kernel interface, a VM) takes tens to hundreds of us a
	 * round trip, and a pause of the process more: a cap below the real BDP costs throughput
	 * always, one above it only resends under loss; an RTO too short resends needlessly. */
	cfg->inflight_rtt_us = 100;
	cfg->rto = 1;
	cfg->dcqcn_cut_per_rtt = 1;
	cfg->dcqcn_clamp_tgt_rate = 1;
	cfg->dcqcn_ai_rate_ppm = 300; /* the engine's (stack/droce_cc_dcqcn.c) */
	cfg->dcqcn_target_cut_pct = 3;
	cfg->dcqcn_level_cut_pct = 5;
	cfg->dcqcn_level_min_share = 6;
	cfg->dcqcn_level_max_alpha = 716;
	cfg->dcqcn_first_cut_pct = 100;
	cfg->dcqcn_paced_cut_pct = 15;
	cfg->dcqcn_paced_min_share = 10;
	cfg->rto_min_us = 200;
	/* an ACK waits for the application's next step, which an inline caller owes soon; the
	 * bound keeps a bulk sender's window moving meanwhile */
	cfg->ack_delay_us = 10;
	cfg->ack_coalesce = 16;
	cfg->tx_quantum = DROCE_TX_QUANTUM;
	snprintf(cfg->addr_mode, sizeof(cfg->addr_mode), "own");
	snprintf(cfg->portd, sizeof(cfg->portd), "auto");
}

int
droce_rt_config_ack(const struct droce_rt_config *cfg, int def_order, struct droce_ack_policy *pol)
{
	pol->delay_ns = (uint64_t)cfg->ack_delay_us * 1000;
	pol->coalesce = cfg->ack_coalesce;
	if (cfg->ack_order[0] == '\0')
		pol->order = (enum droce_ack_order)def_order;
	else if (strcmp(cfg->ack_order, "fifo") == 0)
		pol->order = DROCE_ACK_ORDER_FIFO;
	else if (strcmp(cfg->ack_order, "requests_first") == 0)
		pol->order = DROCE_ACK_ORDER_REQUESTS_FIRST;
	else
		return -EINVAL;
	return 0;
}

/* inflight_cap: "bdp" (the link's rate x inflight_rtt_us), "auto" (the link's rate x the QP's
 * smoothed RTT, at least bdp's), "off" or "0", or 1..1023 packets. */
int
droce_rt_config_inflight(const struct droce_rt_config *cfg, struct droce_inflight_cfg *c)
{
	char *end;
	unsigned long n;

	droce_inflight_defaults(c);
	c->rtt_ns = cfg->inflight_rtt_us * 1000;
	c->rto = cfg->rto != 0;
	c->rto_min_ns = cfg->rto_min_us * 1000;
	if (strcmp(cfg->inflight_cap, "bdp") == 0)
		return 0;
	if (strcmp(cfg->inflight_cap, "auto") == 0) {
		c->cap = DROCE_INFLIGHT_CAP_AUTO;
		return 0;
	}
	if (strcmp(cfg->inflight_cap, "off") == 0) {
		c->cap = 0;
		return 0;
	}
	n = strtoul(cfg->inflight_cap, &end, 10);
	if (cfg->inflight_cap[0] < '0' || cfg->inflight_cap[0] > '9' || *end != '\0' || n > 1023)
		return -EINVAL;
	c->cap = (uint32_t)n;
	return 0;
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s == '\0' || *s == '-' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno != 0 || *end != '\0') ? -1 : 0;
}

/* "a.b.c.d" or "a.b.c.d/len" (len defaults to def) */
static int
parse_addr(int af, const char *s, uint8_t *addr, uint8_t *prefix, unsigned int maxlen,
	   unsigned int def)
{
	char tmp[64];
	const char *slash = strchr(s, '/');
	size_t n = slash != NULL ? (size_t)(slash - s) : strlen(s);
	uint64_t len = def;

	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (inet_pton(af, tmp, addr) != 1)
		return -1;
	if (slash != NULL) {
		if (prefix == NULL || parse_u64(slash + 1, &len) != 0 || len == 0 || len > maxlen)
			return -1;
	}
	if (prefix != NULL)
		*prefix = (uint8_t)len;
	return 0;
}

static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char extra;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &extra) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	/* A unicast station address: the I/G bit set would make every peer drop our frames. */
	return (mac[0] & 1) ? -1 : 0;
}

/* "0", "0,1", "0-2": EAL lcore ids, in order, no duplicates. */
static int
parse_lcores(const char *s, struct droce_rt_config *cfg)
{
	uint16_t ids[DROCE_RT_MAX_LCORES];
	unsigned int n = 0, i;
	unsigned long lo, hi, id;
	char *end;

	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			return -1;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= 1024)
			return -1;
		for (id = lo; id <= hi; id++) {
			if (n == DROCE_RT_MAX_LCORES)
				return -1;
			for (i = 0; i < n; i++)
				if (ids[i] == id)
					return -1;
			ids[n++] = (uint16_t)id;
		}
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return -1;
		s = end;
	}
	if (n == 0)
		return -1;
	memcpy(cfg->lcores, ids, n * sizeof(ids[0]));
	cfg->nb_lcores = n;
	return 0;
}

static const struct droce_rt_key *
find_key(const char *name)
{
	unsigned int i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(droce_rt_keys[i].name, name) == 0)
			return &droce_rt_keys[i];
	return NULL;
}

int
droce_rt_config_set(struct droce_rt_config *cfg, const char *key, const char *value, char *err,
		    size_t errlen)
{
	const struct droce_rt_key *k = find_key(key);
	char *base = (char *)cfg;
	uint64_t v;

	if (k == NULL) {
		droce_rt_errf(-EINVAL, err, errlen, "unknown key '%s'", key);
		return -ENOENT;
	}
	switch (k->type) {
	case KT_STR:
		if (strlen(value) >= k->size)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: value longer than %zu bytes", key, k->size - 1);
		memcpy(base + k->off, value, strlen(value) + 1);
		return 0;
	case KT_U32:
	case KT_U64:
		if (parse_u64(value, &v) != 0 || v < k->min || v > k->max)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is not a number in %" PRIu64 "..%" PRIu64,
					     key, value, k->min, k->max);
		if (k->type == KT_U32)
			*(uint32_t *)(void *)(base + k->off) = (uint32_t)v;
		else
			*(uint64_t *)(void *)(base + k->off) = v;
		return 0;
	case KT_IPV4_PFX:
		if (*value == '\0') {
			cfg->has_ipv4 = false;
			return 0;
		}
		if (parse_addr(AF_INET, value, cfg->ipv4, &cfg->ipv4_prefix, 32, 24) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is not an IPv4 address[/prefix] "
					     "(e.g. 198.18.0.1/24)",
					     key, value);
		cfg->has_ipv4 = true;
		return 0;
	case KT_IPV4:
		if (*value == '\0') {
			cfg->has_gw4 = false;
			return 0;
		}
		if (parse_addr(AF_INET, value, cfg->gw4, NULL, 0, 0) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is not an IPv4 address", key, value);
		cfg->has_gw4 = true;
		return 0;
	case KT_IPV6_PFX:
		if (*value == '\0') {
			cfg->has_ipv6 = false;
			return 0;
		}
		if (parse_addr(AF_INET6, value, cfg->ipv6, &cfg->ipv6_prefix, 128, 64) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is not an IPv6 address[/prefix] "
					     "(e.g. 2001:db8::1/64)",
					     key, value);
		cfg->has_ipv6 = true;
		return 0;
	case KT_IPV6:
		if (*value == '\0') {
			cfg->has_gw6 = false;
			return 0;
		}
		if (parse_addr(AF_INET6, value, cfg->gw6, NULL, 0, 0) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is not an IPv6 address", key, value);
		cfg->has_gw6 = true;
		return 0;
	case KT_MAC:
		if (*value == '\0') {
			cfg->has_mac = false;
			return 0;
		}
		if (parse_mac(value, cfg->mac) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is not a unicast MAC (02:00:00:00:00:01)",
					     key, value);
		cfg->has_mac = true;
		return 0;
	case KT_LCORES:
		if (parse_lcores(value, cfg) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is not an lcore list (0 or 0,1 or 0-1, "
					     "at most %d)",
					     key, value, DROCE_RT_MAX_LCORES);
		return 0;
	case KT_EXC:
		if (strcmp(value, "drop") == 0)
			cfg->exception = DROCE_RT_EXC_DROP;
		else if (strcmp(value, "ring") == 0)
			cfg->exception = DROCE_RT_EXC_RING;
		else
			return droce_rt_errf(-EINVAL, err, errlen,
					     "%s: '%s' is neither drop nor ring", key, value);
		return 0;
	}
	return droce_rt_errf(-EINVAL, err, errlen, "%s: internal key type error", key);
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int
droce_rt_config_load_file(struct droce_rt_config *cfg, const char *path, char *err, size_t errlen)
{
	char line[DROCE_RT_STR_MAX + 128], sub[DROCE_RT_ERR_MAX];
	unsigned int lineno = 0;
	char *s, *eq, *hash;
	FILE *f;
	int rc = 0;

	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		droce_rt_errf(-EINVAL, err, errlen,
			      "config file %s: %s (set DROCE_CONFIG to a readable file)", path,
			      strerror(errno));
		return rc;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			rc = droce_rt_errf(-EINVAL, err, errlen, "%s:%u: line too long", path,
					   lineno);
			break;
		}
		hash = strchr(line, '#');
		if (hash != NULL)
			*hash = '\0';
		s = trim(line);
		if (*s == '\0')
			continue;
		eq = strchr(s, '=');
		if (eq == NULL) {
			rc = droce_rt_errf(-EINVAL, err, errlen, "%s:%u: expected key = value",
					   path, lineno);
			break;
		}
		*eq = '\0';
		rc = droce_rt_config_set(cfg, trim(s), trim(eq + 1), sub, sizeof(sub));
		if (rc != 0) {
			droce_rt_errf(-EINVAL, err, errlen, "%s:%u: %s", path, lineno, sub);
			break;
		}
	}
	fclose(f);
	return rc;
}

int
droce_rt_config_load_env(struct droce_rt_config *cfg, char *err, size_t errlen)
{
	char name[64], sub[DROCE_RT_ERR_MAX];
	const char *val;
	unsigned int i;
	size_t j;
	int rc;

	for (i = 0; i < NKEYS; i++) {
		snprintf(name, sizeof(name), "DROCE_%s", droce_rt_keys[i].name);
		for (j = 6; name[j] != '\0'; j++)
			name[j] = (char)toupper((unsigned char)name[j]);
		val = getenv(name);
		if (val == NULL)
			continue;
		rc = droce_rt_config_set(cfg, droce_rt_keys[i].name, val, sub, sizeof(sub));
		if (rc != 0) {
			droce_rt_errf(-EINVAL, err, errlen, "environment %s: %s", name, sub);
			return rc;
		}
	}
	return 0;
}

uint32_t
droce_rt_config_min_mtu(const struct droce_rt_config *cfg)
{
	/* The engine's bound (droce_dev_active_mtu): IPv6 40 + UDP 8 + BTH 12 + the longest
	 * extension chain 28 (AtomicETH, IBTA 9.3.4) + ICRC 4, whatever the IP version, so a path
	 * MTU accepted here is one the engine accepts. */
	return cfg->path_mtu + 40 + 8 + 12 + 28 + 4;
}

uint32_t
droce_rt_config_nb_queues(const struct droce_rt_config *cfg)
{
	return cfg->queues > cfg->shards ? cfg->queues : cfg->shards;
}

unsigned int
droce_rt_config_shard_bits(const struct droce_rt_config *cfg)
{
	unsigned int b = 0;

	while ((1u << b) < cfg->shards)
		b++;
	return b;
}

/* Slot bits of the engine's QPN (droce_dev_create: max_qp + 2 slots, a power of two). */
static unsigned int
qpn_slot_bits(uint32_t max_qp)
{
	unsigned int b = 0;

	while ((1ull << b) < (uint64_t)max_qp + 2)
		b++;
	return b;
}

static int
validate_shards(const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	uint32_t nq = droce_rt_config_nb_queues(cfg);

	/* Lcore mode: the application's lcore, then one poll lcore per shard. With one lcore the
	 * application drives every shard inline. */
	if (cfg->nb_lcores > 1 && cfg->nb_lcores < cfg->shards + 1)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"shards %u need %u lcores (the application's, then one "
			"poll lcore per shard), lcores has %u: set DROCE_LCORES=0-%u or lower "
			"DROCE_SHARDS",
			cfg->shards, cfg->shards + 1, cfg->nb_lcores, cfg->shards);
	if (qpn_slot_bits(cfg->max_qp) + droce_rt_config_shard_bits(cfg) >= 24)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "max_qp %u leaves no 24-bit QPN room for %u shards: lower "
				     "DROCE_MAX_QP",
				     cfg->max_qp, cfg->shards);
	if (cfg->shards > 1 &&
	    cfg->mbufs < 2 * (cfg->rx_desc * nq + cfg->tx_desc * cfg->shards) + cfg->burst)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "mbufs %u cannot fill %u Rx queue(s) of %u and %u Tx "
				     "ring(s) of %u descriptors: raise DROCE_MBUFS to >= %u",
				     cfg->mbufs, nq, cfg->rx_desc, cfg->shards, cfg->tx_desc,
				     2 * (cfg->rx_desc * nq + cfg->tx_desc * cfg->shards) +
					     cfg->burst);
	return 0;
}

int
droce_rt_config_qp_cc(const char *spec, unsigned int index, char *name, size_t len)
{
	const char *p = spec;
	int found = 0;

	while (*p != '\0') {
		const char *colon = strchr(p, ':'), *end = strchr(p, ',');
		unsigned long i;
		char *e;
		size_t n;

		if (end == NULL)
			end = p + strlen(p);
		if (colon == NULL || colon > end || colon == p)
			return -EINVAL;
		i = strtoul(p, &e, 10);
		n = (size_t)(end - colon - 1);
		if (e != colon || i > UINT32_MAX || n == 0 || n > DROCE_CC_NAME_MAX)
			return -EINVAL;
		if (i == index && !found) {
			if (n >= len)
				return -EINVAL;
			memcpy(name, colon + 1, n);
			name[n] = '\0';
			found = 1;
		}
		p = *end == ',' ? end + 1 : end;
	}
	return found;
}

/* qp_cc well formed, and each name a built-in algorithm (a plugin's is checked once loaded) */
static int
qp_cc_check(const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	const char *p = cfg->qp_cc;
	char name[DROCE_CC_NAME_MAX + 1];

	if (droce_rt_config_qp_cc(cfg->qp_cc, UINT32_MAX, name, sizeof(name)) < 0)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"qp_cc '%s': expected INDEX:NAME[,INDEX:NAME...], e.g. 0:dcqcn,1:timely",
			cfg->qp_cc);
	for (; *p != '\0'; p = strchr(p, ',') != NULL ? strchr(p, ',') + 1 : p + strlen(p)) {
		size_t n = strcspn(strchr(p, ':') + 1, ",");

		memcpy(name, strchr(p, ':') + 1, n);
		name[n] = '\0';
		if (droce_cc_find(NULL, name) == NULL && cfg->cc_plugin[0] == '\0')
			return droce_rt_errf(-EINVAL, err, errlen,
					     "qp_cc names %s, not a congestion control here", name);
	}
	return 0;
}

bool
droce_rt_config_host_mode(const struct droce_rt_config *cfg)
{
	return strcmp(cfg->addr_mode, "host") == 0;
}

int
droce_rt_config_host_iface(const struct droce_rt_config *cfg, char *out, size_t outlen)
{
	if (cfg->host_iface[0] != '\0') {
		snprintf(out, outlen, "%s", cfg->host_iface);
		return 0;
	}
	if (strncmp(cfg->vdev, "net_af_xdp", 10) == 0 &&
	    droce_rt_devarg(cfg->vdev, "iface", out, outlen) == 0)
		return 0;
	return -ENOENT;
}

const char *
droce_rt_config_portd(const struct droce_rt_config *cfg)
{
	if (cfg->portd[0] == '\0' || strcmp(cfg->portd, "off") == 0)
		return NULL;
	if (strcmp(cfg->portd, "auto") != 0)
		return cfg->portd;
	return access(DROCE_PORTD_SOCK, F_OK) == 0 ? DROCE_PORTD_SOCK : NULL;
}

/* addr_mode: host needs a port that keeps UDP 4791 from the kernel and leaves it the rest. */
static int
validate_addr_mode(const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	char iface[32];

	if (strcmp(cfg->addr_mode, "own") != 0 && !droce_rt_config_host_mode(cfg))
		return droce_rt_errf(-EINVAL, err, errlen,
				     "addr_mode %s: use own (droce's own address, its own ARP/ND) "
				     "or host (the interface's addresses, the kernel's ARP/ND)",
				     cfg->addr_mode);
	if (!droce_rt_config_host_mode(cfg)) {
		/* under droce-portd the port's address is the service's */
		if (!cfg->has_ipv4 && !cfg->has_ipv6 && droce_rt_config_portd(cfg) == NULL)
			return droce_rt_errf(
				-EINVAL, err, errlen,
				"no address configured: set DROCE_IPV4=198.18.0.1/24 "
				"(or ipv4 = ... in the config file), or DROCE_IPV6, or "
				"DROCE_ADDR_MODE=host on af_xdp");
		return 0;
	}
	if (strncmp(cfg->vdev, "net_af_packet", 13) == 0)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"addr_mode host cannot run on net_af_packet: a packet socket gets a copy "
			"of "
			"each frame and the kernel still gets the frame, so the kernel's UDP stack "
			"(or "
			"its rxe) would answer droce's RoCEv2 on its own address: use net_af_xdp "
			"with "
			"droce's XDP program (xdp_prog=droce_xdp.o, which takes only UDP 4791), or "
			"addr_mode own with an address of droce's own (DROCE_IPV4)");
	if (cfg->has_ipv4 || cfg->has_ipv6)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "addr_mode host takes the interface's own addresses: drop "
				     "DROCE_IPV4/DROCE_IPV6 (or set addr_mode own)");
	if (droce_rt_config_host_iface(cfg, iface, sizeof(iface)) != 0)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "addr_mode host needs the kernel interface: net_af_xdp's "
				     "iface= in DROCE_VDEV, or DROCE_HOST_IFACE (a bifurcated "
				     "NIC's netdev, with its rte_flow rule for UDP 4791)");
	if (strncmp(cfg->vdev, "net_af_xdp", 10) == 0 && strstr(cfg->vdev, "xdp_prog=") == NULL)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"addr_mode host on net_af_xdp needs droce's XDP program: add "
			"xdp_prog=.../droce_xdp.o to DROCE_VDEV (without it every frame "
			"goes to droce and the kernel loses ARP, ping and TCP)");
	return 0;
}

int
droce_rt_config_validate(const struct droce_rt_config *cfg, char *err, size_t errlen)
{
	uint32_t p = cfg->path_mtu;

	if (p != 256 && p != 512 && p != 1024 && p != 2048 && p != 4096)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "path_mtu %u is not one of 256 512 1024 2048 4096 "
				     "(the IB MTU values, enum droce_mtu)",
				     p);
	if (validate_addr_mode(cfg, err, errlen) != 0)
		return -EINVAL;
	if (cfg->mtu < droce_rt_config_min_mtu(cfg))
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"MTU %u too small for path MTU %u (needs >= %u: path MTU + "
			"92 bytes of RoCEv2 headers): raise DROCE_MTU or lower DROCE_PATH_MTU",
			cfg->mtu, p, droce_rt_config_min_mtu(cfg));
	{
		struct droce_inflight_cfg inf;

		if (droce_rt_config_inflight(cfg, &inf) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "inflight_cap %s is not bdp, auto, off or a number of "
					     "packets 0..1023",
					     cfg->inflight_cap);
	}
	if (validate_shards(cfg, err, errlen) != 0)
		return -EINVAL;
	if (cfg->mbufs < 2 * (cfg->rx_desc * cfg->queues + cfg->tx_desc) + cfg->burst)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "mbufs %u cannot fill %u Rx queue(s) of %u and a Tx ring "
				     "of %u descriptors: raise DROCE_MBUFS to >= %u",
				     cfg->mbufs, cfg->queues, cfg->rx_desc, cfg->tx_desc,
				     2 * (cfg->rx_desc * cfg->queues + cfg->tx_desc) + cfg->burst);
	if (cfg->mbuf_cache > cfg->mbufs / 4)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "mbuf_cache %u is more than a quarter of mbufs %u",
				     cfg->mbuf_cache, cfg->mbufs);
	{
		struct droce_ack_policy pol;

		if (droce_rt_config_ack(cfg, DROCE_ACK_ORDER_FIFO, &pol) != 0)
			return droce_rt_errf(-EINVAL, err, errlen,
					     "ack_order %s is not fifo or requests_first",
					     cfg->ack_order);
	}
	if (strcmp(cfg->recovery, "gbn") != 0 && strcmp(cfg->recovery, "sr") != 0)
		return droce_rt_errf(
			-EINVAL, err, errlen,
			"recovery %s is not a loss recovery: use gbn (go-back-N, standard RoCEv2) "
			"or sr (selective repeat, droce peers only: DROCE_RECOVERY=sr on both)",
			cfg->recovery);
	/* with a plugin, cc is checked once it is loaded (droce_rt_open) */
	if (droce_cc_find(NULL, cfg->cc) == NULL && cfg->cc_plugin[0] == '\0') {
		char names[256];

		return droce_rt_errf(
			-EINVAL, err, errlen,
			"cc %s is not a congestion control here: use one of %s (DROCE_CC=dcqcn), "
			"or load it with cc_plugin (DROCE_CC_PLUGIN)",
			cfg->cc, droce_cc_names(NULL, names, sizeof(names)));
	}
	if (qp_cc_check(cfg, err, errlen) != 0)
		return -EINVAL;
	if (cfg->dcqcn_min_rate_mbps != 0 && cfg->dcqcn_max_rate_mbps != 0 &&
	    cfg->dcqcn_min_rate_mbps > cfg->dcqcn_max_rate_mbps)
		return droce_rt_errf(-EINVAL, err, errlen,
				     "dcqcn_min_rate_mbps %u is above dcqcn_max_rate_mbps %u",
				     cfg->dcqcn_min_rate_mbps, cfg->dcqcn_max_rate_mbps);
	return 0;
}

int
droce_rt_config_load(struct droce_rt_config *cfg, const char *path, char *err, size_t errlen)
{
	int rc;

	droce_rt_config_defaults(cfg);
	if (path == NULL)
		path = getenv("DROCE_CONFIG");
	if (path != NULL && *path != '\0') {
		rc = droce_rt_config_load_file(cfg, path, err, errlen);
		if (rc != 0)
			return rc;
	}
	rc = droce_rt_config_load_env(cfg, err, errlen);
	if (rc != 0)
		return rc;
	return droce_rt_config_validate(cfg, err, errlen);
}
