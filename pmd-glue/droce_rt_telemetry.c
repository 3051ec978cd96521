/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_telemetry commands on EAL's telemetry socket (<runtime dir>/dpdk_telemetry.v2):
 *   /droce/counters[,GROUP]  every droce_rt_counters() value, grouped rt / port / neigh / dev
 *   /droce/info              pid, port, link, addresses, capture file
 *   /droce/qps               every QP (the first DROCE_RT_TEL_QPS): type, state, counters,
 *                            its congestion control and that algorithm's figures
 * Telemetry callbacks run on EAL's telemetry thread while the engine is single-threaded: the
 * callback asks the loop for a snapshot (tel_req), the loop copies the counters on its own thread
 * (droce_rt_telemetry_serve, between iterations) and the callback reads the copy under a
 * seqlock. A loop that does not iterate within TEL_WAIT_MS (an inline application busy
 * elsewhere) gets its last snapshot returned, marked "stale": 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_telemetry.h>

#include "droce_rt_priv.h"

enum {
	TEL_WAIT_MS = 500,
};

/* The runtime the commands read (one per process); the lock keeps close from freeing it under
 * a callback. */
static pthread_mutex_t tel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_rt *tel_rt;
static bool tel_registered;
static struct droce_rt_counter tel_copy[DROCE_RT_TEL_MAX];  /* under tel_lock */
static struct droce_rt_qp_info tel_qcopy[DROCE_RT_TEL_QPS]; /* under tel_lock */
static unsigned int tel_nq, tel_nq_all;			    /* under tel_lock */

void
droce_rt_telemetry_serve(struct droce_rt *rt)
{
	uint32_t req = __atomic_load_n(&rt->tel_req, __ATOMIC_ACQUIRE);
	uint32_t seq = rt->tel_seq;
	int n;

	rt->sh[0].st.telemetry_reads++;
	__atomic_store_n(&rt->tel_seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	n = droce_rt_counters_collect(rt, rt->tel_snap, DROCE_RT_TEL_MAX);
	rt->tel_n = n < DROCE_RT_TEL_MAX ? (unsigned int)n : DROCE_RT_TEL_MAX;
	/* the QP walk (and a call on every other shard) only for /droce/qps */
	if (__atomic_load_n(&rt->tel_want_qps, __ATOMIC_ACQUIRE)) {
		n = droce_rt_qps(rt, rt->tel_qps, DROCE_RT_TEL_QPS);
		rt->tel_nqps = n > 0 ? (unsigned int)n : 0;
	}
	__atomic_store_n(&rt->tel_seq, seq + 2, __ATOMIC_RELEASE);
	__atomic_store_n(&rt->tel_done, req, __ATOMIC_RELEASE);
}

/* Ask the loop for a snapshot and copy it into tel_copy; returns the count, -1 when the loop
 * never served one. *stale: the loop did not answer this time. Called under tel_lock. */
static int
snapshot(struct droce_rt *rt, bool qps, bool *stale)
{
	struct timespec ts = { 0, 200000 };
	uint32_t req, s1, s2;
	unsigned int waited_us = 0, n = 0, tries;

	__atomic_store_n(&rt->tel_want_qps, qps, __ATOMIC_RELAXED);
	req = __atomic_add_fetch(&rt->tel_req, 1, __ATOMIC_RELEASE);
	droce_rt_wake(rt);
	while (__atomic_load_n(&rt->tel_done, __ATOMIC_ACQUIRE) != req &&
	       waited_us < TEL_WAIT_MS * 1000) {
		nanosleep(&ts, NULL);
		waited_us += 200;
	}
	*stale = __atomic_load_n(&rt->tel_done, __ATOMIC_ACQUIRE) != req;
	for (tries = 0; tries < 1000; tries++) {
		s1 = __atomic_load_n(&rt->tel_seq, __ATOMIC_ACQUIRE);
		if (s1 == 0)
			return -1;
		if (s1 & 1) {
			nanosleep(&ts, NULL);
			continue;
		}
		n = rt->tel_n;
		memcpy(tel_copy, rt->tel_snap, n * sizeof(tel_copy[0]));
		if (qps) {
			tel_nq_all = rt->tel_nqps;
			tel_nq = tel_nq_all < DROCE_RT_TEL_QPS ? tel_nq_all : DROCE_RT_TEL_QPS;
			memcpy(tel_qcopy, rt->tel_qps, tel_nq * sizeof(tel_qcopy[0]));
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&rt->tel_seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return (int)n;
	}
	return -1;
}

static int
tel_counters(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_tel_data *sub;
	const char *leaf;
	unsigned int g;
	bool stale, one;
	int n, i;

	(void)cmd;
	one = params != NULL && *params != '\0';
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_lock);
	if (tel_rt == NULL) {
		pthread_mutex_unlock(&tel_lock);
		rte_tel_data_add_dict_string(d, "error", "no droce runtime open in this process");
		return 0;
	}
	n = snapshot(tel_rt, false, &stale);
	if (n < 0) {
		pthread_mutex_unlock(&tel_lock);
		rte_tel_data_add_dict_string(d, "error",
					     "the runtime's poll loop is not running "
					     "(no droce_rt_poll / droce_rt_start yet)");
		return 0;
	}
	if (!one)
		rte_tel_data_add_dict_u64(d, "stale", stale);
	for (g = 0; g < DROCE_RT_GROUPS; g++) {
		if (one && strcmp(params, droce_rt_groups[g]) != 0)
			continue;
		sub = one ? d : rte_tel_data_alloc();
		if (sub == NULL)
			break;
		if (!one)
			rte_tel_data_start_dict(sub);
		for (i = 0; i < n; i++) {
			leaf = droce_rt_counter_leaf(tel_copy[i].name, g);
			if (leaf != NULL)
				rte_tel_data_add_dict_u64(sub, leaf, tel_copy[i].value);
		}
		if (!one)
			rte_tel_data_add_dict_container(d, droce_rt_groups[g], sub, 0);
	}
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

static const char *
qp_type_name(unsigned int t)
{
	return t == DROCE_QPT_RC ? "RC" : t == DROCE_QPT_UC ? "UC" : t == DROCE_QPT_UD ? "UD" : "?";
}

static const char *
qp_state_name(unsigned int s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* One dict per QP under its number ("qp_<qpn>"): type, state, counters, cc and its figures. */
static int
tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct droce_rt_qp_info *q;
	struct rte_tel_data *sub;
	char key[32];
	unsigned int i, k;
	bool stale;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel_lock);
	if (tel_rt == NULL || snapshot(tel_rt, true, &stale) < 0) {
		pthread_mutex_unlock(&tel_lock);
		rte_tel_data_add_dict_string(d, "error",
					     tel_rt == NULL ?
						     "no droce runtime open in this process" :
						     "the runtime's poll loop is not running (no "
						     "droce_rt_poll / droce_rt_start yet)");
		return 0;
	}
	rte_tel_data_add_dict_u64(d, "stale", stale);
	rte_tel_data_add_dict_u64(d, "qps", tel_nq_all); /* more than listed: the first ones */
	for (i = 0; i < tel_nq; i++) {
		q = &tel_qcopy[i];
		sub = rte_tel_data_alloc();
		if (sub == NULL)
			break;
		rte_tel_data_start_dict(sub);
		rte_tel_data_add_dict_u64(sub, "qpn", q->qpn);
		rte_tel_data_add_dict_u64(sub, "shard", q->shard);
		rte_tel_data_add_dict_string(sub, "type", qp_type_name(q->type));
		rte_tel_data_add_dict_string(sub, "state", qp_state_name(q->state));
		rte_tel_data_add_dict_u64(sub, "sent_pkts", q->sent_pkts);
		rte_tel_data_add_dict_u64(sub, "rcvd_pkts", q->rcvd_pkts);
		rte_tel_data_add_dict_u64(sub, "retransmitted_pkts", q->retransmitted_pkts);
		rte_tel_data_add_dict_u64(sub, "cc_deferred", q->cc_deferred);
		rte_tel_data_add_dict_string(sub, "cc", q->cc);
		for (k = 0; k < q->n_cc; k++) {
			snprintf(key, sizeof(key), "cc_%s", q->cc_stats[k].name);
			/* DPDK 22.11 has no signed 64-bit telemetry value */
			rte_tel_data_add_dict_int(
				sub, key,
				q->cc_stats[k].value > INT_MAX ? INT_MAX :
				q->cc_stats[k].value < INT_MIN ? INT_MIN :
								 (int)q->cc_stats[k].value);
		}
		snprintf(key, sizeof(key), "qp_%u", q->qpn);
		rte_tel_data_add_dict_container(d, key, sub, 0);
	}
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

static int
tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct droce_rt_config *c;
	char a[INET6_ADDRSTRLEN];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "pid", (int)getpid());
	pthread_mutex_lock(&tel_lock);
	if (tel_rt == NULL) {
		pthread_mutex_unlock(&tel_lock);
		rte_tel_data_add_dict_string(d, "error", "no droce runtime open in this process");
		return 0;
	}
	c = &tel_rt->cfg;
	rte_tel_data_add_dict_string(d, "port", tel_rt->port.name);
	rte_tel_data_add_dict_u64(d, "port_id", tel_rt->port.port_id);
	rte_tel_data_add_dict_u64(d, "link_up", droce_rt_link_up(tel_rt));
	rte_tel_data_add_dict_u64(d, "lcore_mode", tel_rt->started);
	rte_tel_data_add_dict_u64(d, "shards", tel_rt->nb_shards);
	rte_tel_data_add_dict_u64(d, "flow_rules", tel_rt->port.flow_rules);
	if (c->has_ipv4 && inet_ntop(AF_INET, c->ipv4, a, sizeof(a)) != NULL)
		rte_tel_data_add_dict_string(d, "ipv4", a);
	if (c->has_ipv6 && inet_ntop(AF_INET6, c->ipv6, a, sizeof(a)) != NULL)
		rte_tel_data_add_dict_string(d, "ipv6", a);
	rte_tel_data_add_dict_string(d, "capture", c->capture);
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

int
droce_rt_telemetry_attach(struct droce_rt *rt)
{
	rt->tel_snap = calloc(DROCE_RT_TEL_MAX, sizeof(rt->tel_snap[0]));
	rt->tel_qps = calloc(DROCE_RT_TEL_QPS, sizeof(rt->tel_qps[0]));
	if (rt->tel_snap == NULL || rt->tel_qps == NULL) {
		free(rt->tel_snap);
		free(rt->tel_qps);
		rt->tel_snap = NULL;
		rt->tel_qps = NULL;
		return -ENOMEM;
	}
	pthread_mutex_lock(&tel_lock);
	if (tel_rt == NULL)
		tel_rt = rt;
	/* Commands cannot be unregistered: register once, they answer "no runtime" after close. */
	if (!tel_registered) {
		rte_telemetry_register_cmd(
			"/droce/counters", tel_counters,
			"droce runtime counters, grouped (rt, port, neigh, dev). Param: one group");
		rte_telemetry_register_cmd(
			"/droce/info", tel_info,
			"droce runtime: pid, port, link, addresses, capture file. No params");
		rte_telemetry_register_cmd(
			"/droce/qps", tel_qps,
			"droce QPs: type, state, counters, congestion control. No params");
		tel_registered = true;
	}
	pthread_mutex_unlock(&tel_lock);
	return 0;
}

void
droce_rt_telemetry_detach(struct droce_rt *rt)
{
	pthread_mutex_lock(&tel_lock);
	if (tel_rt == rt)
		tel_rt = NULL;
	pthread_mutex_unlock(&tel_lock);
	free(rt->tel_snap);
	rt->tel_snap = NULL;
	free(rt->tel_qps);
	rt->tel_qps = NULL;
}
