/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RT_CONFIG_H
#define DROCE_RT_CONFIG_H

/*
 * Runtime configuration: built-in defaults, then a key=value file (DROCE_CONFIG or an explicit
 * path), then DROCE_<KEY> environment variables. Plain C, no EAL: parsed and unit-tested alone.
 * The keys are listed in pmd-glue/README.md and in droce_rt_config.c's table.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	DROCE_RT_STR_MAX = 512,
	DROCE_RT_MAX_LCORES = 16,
	DROCE_RT_MAX_SHARDS = 15, /* one lcore each, plus the application's */
	DROCE_RT_EAL_ARGV_MAX = 64,
	DROCE_RT_ERR_MAX = 256,
};

enum droce_rt_exception {
	DROCE_RT_EXC_DROP, /* non-RoCE, non-neighbour frames are counted and freed */
	DROCE_RT_EXC_RING, /* ... or queued for the application (droce_rt_exception_recv) */
};

struct droce_rt_config {
	char eal[DROCE_RT_STR_MAX];  /* EAL arguments, split on blanks */
	char vdev[DROCE_RT_STR_MAX]; /* one virtual device, passed as --vdev */
	char port[64];		     /* port name or number; "" = the first port */
	uint8_t ipv4[4];	     /* network order */
	uint8_t ipv4_prefix;
	bool has_ipv4;
	uint8_t gw4[4];
	bool has_gw4;
	uint8_t ipv6[16];
	uint8_t ipv6_prefix;
	bool has_ipv6;
	uint8_t gw6[16];
	bool has_gw6;
	uint8_t mac[6];
	bool has_mac;			      /* else the port's own MAC */
	uint16_t lcores[DROCE_RT_MAX_LCORES]; /* poll lcore(s); the first drives the device */
	unsigned int nb_lcores;
	uint32_t queues;   /* Rx/Tx queue pairs (RSS spreads Rx over them) */
	uint32_t shards;   /* engine devices, one queue pair and poll lcore each */
	uint32_t mtu;	   /* Ethernet MTU (IP packet size) */
	uint32_t path_mtu; /* RoCE path MTU wanted: 256..4096 */
	uint32_t mbufs;	   /* mempool size */
	uint32_t mbuf_cache;
	uint32_t rx_desc;
	uint32_t tx_desc;
	uint32_t burst;
	uint32_t arp_timeout_ms; /* neighbour cache entry lifetime */
	uint32_t arp_retry_ms;	 /* interval between requests for an unresolved address */
	uint32_t arp_tries;	 /* requests before "peer unreachable" */
	uint32_t idle_spins;	 /* empty iterations of rte_pause() before sleeping */
	uint32_t idle_sleep_us;	 /* longest sleep of an idle poll loop */
	uint32_t start_wait_ms;	 /* how long a port that cannot start yet is retried */
	enum droce_rt_exception exception;
	uint64_t seed; /* rand64 seed; 0 = from the TSC */
	uint32_t max_qp, max_cq, max_mr, max_mw, max_srq, max_ah, max_pd;
	char capture[256];	 /* pcap of every frame received and sent; "" = none */
	uint32_t capture_max_kb; /* the capture file stops growing at this size */
	char counters_file[256]; /* every counter as JSON, written at close; "" = none */
	uint32_t vlan;		 /* 802.1Q VLAN id 1..4094 of every frame; 0 = untagged */
	uint32_t vlan_pcp;	 /* 802.1p priority of our tagged frames */
	char cc[32];		 /* congestion control of new QPs: none, dcqcn, timely, ... */
	char cc_plugin[256];	 /* shared object registering more of them; "" = none */
	char qp_cc[256];	 /* per QP: "INDEX:NAME,..." the INDEXth QP (from 0) made
					 * through the verbs runs NAME instead of cc; "" = none */
	char recovery[8]; /* loss recovery of new RC QPs: gbn, sr (used when both ends have it) */
	/* DCQCN reaction point (mlx5 names); 0 = the default of droce_cc_dcqcn_defaults() */
	uint32_t dcqcn_max_rate_mbps, dcqcn_min_rate_mbps, dcqcn_ai_rate_mbps, dcqcn_hai_rate_mbps;
	uint32_t dcqcn_time_reset_us, dcqcn_byte_reset, dcqcn_threshold;
	uint32_t dcqcn_g, dcqcn_alpha_period_us, dcqcn_reduce_period_us, dcqcn_min_dec_fac;
	uint32_t dcqcn_cut_per_rtt;	/* 1 (default): at most one cut per round trip */
	uint32_t dcqcn_cut_from_sent;	/* N: cut from at most N x the rate sent; 0 (default): RC */
	uint32_t dcqcn_clamp_tgt_rate;	/* 1 (default): every cut sets the target; 0: mlx5's */
	uint32_t dcqcn_ai_rate_ppm;	/* R_AI + RT x this / 10^6 (default 300); 0: R_AI */
	uint32_t dcqcn_target_cut_pct;	/* percent of a cut RT takes too (default 3); 0: none */
	uint32_t dcqcn_level_cut_pct;	/* a QP among few: RT lowered from its level (5); 0: off */
	uint32_t dcqcn_level_min_share; /* ... while RT >= link / this (6) */
	uint32_t dcqcn_level_max_alpha; /* ... and alpha < this / 1024 (716) */
	uint32_t dcqcn_first_cut_pct;	/* a cut from line rate: RT that far down (100) */
	uint32_t dcqcn_paced_cut_pct;	/* a paced QP: RT lowered from its level (15); 0: off */
	uint32_t dcqcn_paced_min_share; /* ... while RT >= link / this (10) */
	uint32_t cnp_interval_us;	/* notification point: one CNP per QP per interval;
					 * DROCE_RT_CNP_AUTO: DCQCN's for the link */
	uint32_t link_mbps;		/* the rate cc defaults scale to (0: the port's) */
	/* TIMELY; 0 = the default of droce_cc_timely_defaults() */
	uint32_t timely_max_rate_mbps, timely_min_rate_mbps, timely_delta_mbps;
	uint32_t timely_t_low_us, timely_t_high_us, timely_min_rtt_us;
	/* RC requesters' loss recovery (stack/droce_ext.h): "bdp", "off" or packets */
	char inflight_cap[16];
	uint32_t inflight_rtt_us; /* the BDP's round trip (0: the engine's, 10 us) */
	uint32_t rto;		  /* 1: resend after an RTO from measured RTT */
	uint32_t rto_min_us;	  /* its floor */
	/* ACKs an inline caller lets the engine hold (stack/droce_ackpol.h) */
	uint32_t ack_delay_us; /* the longest one waits; 0: none waits */
	uint32_t ack_coalesce; /* requests one answers at most while it waits; 0: no bound */
	char ack_order[16];    /* fifo, requests_first; "": the caller's choice (droce_rt.c) */
	uint32_t tx_quantum;   /* frames a QP sends a turn of the transmit round robin */
	/* "own": droce's addresses (ipv4/ipv6) and its own ARP/ND; "host": the kernel
	 * interface's addresses as GIDs, the kernel's neighbour table (droce_hostaddr.h) */
	char addr_mode[8];
	char host_iface[32]; /* host mode: the kernel interface; "" = the vdev's iface= */
	/* droce-portd (a shared port): "auto" its well-known socket when it answers, "off", or
	 * the socket's path (then it must answer) */
	char portd[108];
};

void droce_rt_config_defaults(struct droce_rt_config *cfg);

/* The engine's in-flight settings of inflight_cap, inflight_rtt_us, rto, rto_min_us; -EINVAL
 * for an inflight_cap that is none of "bdp", "off", 0..1023. */
struct droce_inflight_cfg;
int droce_rt_config_inflight(const struct droce_rt_config *cfg, struct droce_inflight_cfg *c);

/* Set one key ("mtu", "ipv4", ...) from its text form. 0, or -EINVAL/-ENOENT with err filled. */
int droce_rt_config_set(struct droce_rt_config *cfg, const char *key, const char *value, char *err,
			size_t errlen);

/* Apply a key=value file: '#' starts a comment, blank lines are skipped. Errors name the line. */
int droce_rt_config_load_file(struct droce_rt_config *cfg, const char *path, char *err,
			      size_t errlen);

/* Apply DROCE_<KEY> variables from the environment (DROCE_IPV4=198.18.0.1/24 ...). */
int droce_rt_config_load_env(struct droce_rt_config *cfg, char *err, size_t errlen);

/*
 * Defaults, then path (or $DROCE_CONFIG when path is NULL; none when both are absent), then the
 * environment, then droce_rt_config_validate().
 */
int droce_rt_config_load(struct droce_rt_config *cfg, const char *path, char *err, size_t errlen);

/* Queue pairs the port gets: queues, raised to shards. */
uint32_t droce_rt_config_nb_queues(const struct droce_rt_config *cfg);
/* QPN top bits that name a shard: ceil(log2(shards)). */
unsigned int droce_rt_config_shard_bits(const struct droce_rt_config *cfg);

/* The droce-portd control socket to try: cfg's path, the well-known one for "auto" when it
 * exists, or NULL (off, or auto without the socket: the one-process mode). */
const char *droce_rt_config_portd(const struct droce_rt_config *cfg);

/* Cross-key checks that need no system access (shards vs lcores, path MTU vs MTU, addresses). */
int droce_rt_config_validate(const struct droce_rt_config *cfg, char *err, size_t errlen);

/* Ethernet MTU the path MTU needs: path MTU + 92 (IPv6, UDP, BTH, longest extension chain,
 * ICRC), the engine's own bound. */
uint32_t droce_rt_config_min_mtu(const struct droce_rt_config *cfg);

/*
 * EAL argv from the config: argv0, the eal words, --vdev, -l with the poll lcores when the eal
 * words select no cores, and a per-process --file-prefix unless --in-memory or one is given (so
 * parallel runs never share runtime files). Words are copied into buf. Returns argc or -E2BIG.
 */
int droce_rt_config_eal_argv(const struct droce_rt_config *cfg, const char *argv0, char *buf,
			     size_t buflen, char **argv, int argv_max);

/* Whether the eal words contain an option (exactly, or as "opt=..."). */
bool droce_rt_config_eal_has(const struct droce_rt_config *cfg, const char *opt);

/* Whether addr_mode is host. */
bool droce_rt_config_host_mode(const struct droce_rt_config *cfg);
/* Host mode's kernel interface: host_iface, else the vdev's iface=. 0, or -ENOENT. */
int droce_rt_config_host_iface(const struct droce_rt_config *cfg, char *out, size_t outlen);

/* Number of keys and the name of key i (for help output and the README test). */
unsigned int droce_rt_config_nkeys(void);
const char *droce_rt_config_key(unsigned int i);
/* The algorithm qp_cc names for the QP of that index (creation order, from 0) into name (len
 * bytes): 1, or 0 when it names none; -EINVAL for a malformed qp_cc. */
int droce_rt_config_qp_cc(const char *spec, unsigned int index, char *name, size_t len);

/* The engine's ACK policy from ack_delay_us, ack_coalesce and ack_order (def_order when
 * ack_order is ""); -EINVAL for an ack_order that is neither fifo nor requests_first. */
struct droce_ack_policy;
int droce_rt_config_ack(const struct droce_rt_config *cfg, int def_order,
			struct droce_ack_policy *pol);

/* cnp_interval_us unset: the interval that goes with DCQCN's defaults for link_mbps (the
 * paper's 50 us, stretched below 25 Gbit/s; droce_cc_dcqcn_cnp_interval()) */
#define DROCE_RT_CNP_AUTO UINT32_MAX

#endif /* DROCE_RT_CONFIG_H */
