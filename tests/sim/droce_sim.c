/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-sim: run the engine through the deterministic network simulator for one or many seeds.
 * One summary line per run ending in OK, or the first mismatch; exit 1 if any run mismatched.
 * A failing seed replays exactly with the same options.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_work.h"

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: droce-sim [options]\n"
		"  --seed S          first seed (default 1)\n"
		"  --seeds N         run N seeds: S..S+N-1 (default 1)\n"
		"  --qp-type T       rc | uc | ud (default rc)\n"
		"  --ops LIST        "
		"write,write_imm,send,send_imm,imm,read,cas,fadd,awrite,atomic,all\n"
		"  --msgs N          work requests per run over all QPs (default 200)\n"
		"  --size A-B        payload sizes in bytes (default 0-4096)\n"
		"  --qps N           QPs per endpoint (default 2)\n"
		"  --mtu M           path MTU 256..4096 (default 1024)\n"
		"  --one-way         only node 0 posts work\n"
		"  --srq             receives through a shared receive queue per node\n"
		"  --shared-cq       one CQ per node for all sends and receives\n"
		"  --rq-depth N      receives kept posted per QP (default 32)\n"
		"  --recv-every NS   replenish receives only this often (provokes RNR)\n"
		"  --rnr-timer C     min_rnr_timer code (default 1: 10 us)\n"
		"  --rd-atomic N     READs/atomics outstanding per QP (default 8)\n"
		"probabilities are in percent ('5' or '5%%'):\n"
		"  --loss P          independent loss\n"
		"  --burst-loss P[:L] Gilbert-Elliott loss averaging P with bursts of L (default "
		"4)\n"
		"  --reorder P[:NS]  hold a frame back NS ns (default 10000) with probability P\n"
		"  --dup P           duplicate a frame\n"
		"  --corrupt P       flip 1-3 bits under the ICRC\n"
		"  --delay NS        one-way latency (default 2000 ns; suffixes us, ms)\n"
		"  --jitter NS       uniform extra latency in [0, NS]\n"
		"  --rate GBPS       port rate in Gbit/s (default 25; 0 = infinite)\n"
		"  --ecn KMIN,KMAX,PMAX  RED CE marking on the egress backlog (bytes, bytes, %%)\n"
		"  --qcap BYTES      egress queue limit (tail drop)\n"
		"  --cc none|dcqcn|timely  congestion control of every QP (with its defaults)\n"
		"  --recovery gbn|sr|sr0|sr1 loss recovery of RC QPs: go-back-N (default), "
		"selective\n"
		"                   repeat on both nodes, on node 0 or node 1 alone\n"
		"  --pcap FILE       write every frame sent to FILE (the last seed's run)\n"
		"  --tx-busy P       tx_alloc reports no free buffer\n"
		"  --timeout C       RC local ACK timeout code (default 8)\n"
		"  --cap on|auto|off|N RC in-flight cap: the link's BDP (default), the link's rate "
		"x\n"
		"                   the smoothed RTT (at least --cap-rtt's BDP), none, N packets\n"
		"  --cap-rtt NS      the round trip of the BDP cap (default 10us)\n"
		"  --rto on|off      resend after an RTO from measured RTT (default on)\n"
		"  --rto-min NS      the RTO's floor (default 20us)\n"
		"  --lat             print the send WRs' completion-time median and 99th "
		"percentile,\n"
		"                    and when the last completed (done=, for goodput)\n"
		"  --psn P           first PSN (default 0xfffff0: wraps early)\n"
		"  --sq-depth N      send queue depth (default 32)\n"
		"  --time-limit MS   virtual-time limit per run (default 60000)\n"
		"  --digest          print a digest of every frame sent (byte-for-byte "
		"comparisons)\n"
		"  -v                trace every frame\n");
}

static double
pct(const char *s)
{
	return strtod(s, NULL) / 100.0;
}

static uint64_t
ns(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (strcmp(end, "us") == 0)
		v *= 1e3;
	else if (strcmp(end, "ms") == 0)
		v *= 1e6;
	else if (strcmp(end, "s") == 0)
		v *= 1e9;
	return (uint64_t)v;
}

enum {
	OPT_SEED = 256,
	OPT_SEEDS,
	OPT_QPT,
	OPT_OPS,
	OPT_MSGS,
	OPT_SIZE,
	OPT_QPS,
	OPT_MTU,
	OPT_ONEWAY,
	OPT_LOSS,
	OPT_BURST,
	OPT_REORDER,
	OPT_DUP,
	OPT_CORRUPT,
	OPT_DELAY,
	OPT_JITTER,
	OPT_RATE,
	OPT_ECN,
	OPT_QCAP,
	OPT_TXBUSY,
	OPT_TIMEOUT,
	OPT_SQD,
	OPT_TLIM,
	OPT_PSN,
	OPT_SRQ,
	OPT_SCQ,
	OPT_RQD,
	OPT_RECV_EVERY,
	OPT_RNR_TIMER,
	OPT_RD_ATOMIC,
	OPT_CC,
	OPT_CAP,
	OPT_CAP_RTT,
	OPT_RTO,
	OPT_RTO_MIN,
	OPT_LAT,
	OPT_RECOVERY,
	OPT_PCAP,
	OPT_DIGEST,
};

static const struct option longopts[] = {
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "seeds", required_argument, NULL, OPT_SEEDS },
	{ "qp-type", required_argument, NULL, OPT_QPT },
	{ "ops", required_argument, NULL, OPT_OPS },
	{ "msgs", required_argument, NULL, OPT_MSGS },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "qps", required_argument, NULL, OPT_QPS },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "one-way", no_argument, NULL, OPT_ONEWAY },
	{ "loss", required_argument, NULL, OPT_LOSS },
	{ "burst-loss", required_argument, NULL, OPT_BURST },
	{ "reorder", required_argument, NULL, OPT_REORDER },
	{ "dup", required_argument, NULL, OPT_DUP },
	{ "corrupt", required_argument, NULL, OPT_CORRUPT },
	{ "delay", required_argument, NULL, OPT_DELAY },
	{ "jitter", required_argument, NULL, OPT_JITTER },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "ecn", required_argument, NULL, OPT_ECN },
	{ "qcap", required_argument, NULL, OPT_QCAP },
	{ "tx-busy", required_argument, NULL, OPT_TXBUSY },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "sq-depth", required_argument, NULL, OPT_SQD },
	{ "time-limit", required_argument, NULL, OPT_TLIM },
	{ "psn", required_argument, NULL, OPT_PSN },
	{ "srq", no_argument, NULL, OPT_SRQ },
	{ "shared-cq", no_argument, NULL, OPT_SCQ },
	{ "rq-depth", required_argument, NULL, OPT_RQD },
	{ "recv-every", required_argument, NULL, OPT_RECV_EVERY },
	{ "rnr-timer", required_argument, NULL, OPT_RNR_TIMER },
	{ "rd-atomic", required_argument, NULL, OPT_RD_ATOMIC },
	{ "cc", required_argument, NULL, OPT_CC },
	{ "cap", required_argument, NULL, OPT_CAP },
	{ "cap-rtt", required_argument, NULL, OPT_CAP_RTT },
	{ "rto", required_argument, NULL, OPT_RTO },
	{ "rto-min", required_argument, NULL, OPT_RTO_MIN },
	{ "lat", no_argument, NULL, OPT_LAT },
	{ "recovery", required_argument, NULL, OPT_RECOVERY },
	{ "pcap", required_argument, NULL, OPT_PCAP },
	{ "digest", no_argument, NULL, OPT_DIGEST },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
main(int argc, char **argv)
{
	struct sim_cfg cfg;
	struct sim_summary sum;
	uint64_t first = 1, count = 1, i, failed = 0, first_bad = 0;
	unsigned int mtu;
	char *colon;
	int c;

	sim_cfg_default(&cfg);
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SEED:
			first = strtoull(optarg, NULL, 0);
			break;
		case OPT_SEEDS:
			count = strtoull(optarg, NULL, 0);
			break;
		case OPT_QPT:
			if (strcmp(optarg, "rc") == 0)
				cfg.qpt = DROCE_QPT_RC;
			else if (strcmp(optarg, "uc") == 0)
				cfg.qpt = DROCE_QPT_UC;
			else if (strcmp(optarg, "ud") == 0)
				cfg.qpt = DROCE_QPT_UD;
			else
				goto bad;
			break;
		case OPT_OPS:
			cfg.ops = sim_ops_parse(optarg);
			if (cfg.ops == 0)
				goto bad;
			break;
		case OPT_MSGS:
			cfg.msgs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case OPT_SIZE:
			if (sscanf(optarg, "%u-%u", &cfg.size_min, &cfg.size_max) != 2) {
				if (sscanf(optarg, "%u", &cfg.size_min) != 1)
					goto bad;
				cfg.size_max = cfg.size_min;
			}
			if (cfg.size_min > cfg.size_max || cfg.size_max > 65536)
				goto bad;
			break;
		case OPT_QPS:
			cfg.qps = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case OPT_MTU:
			mtu = (unsigned int)strtoul(optarg, NULL, 0);
			for (cfg.mtu = DROCE_MTU_256;
			     cfg.mtu < DROCE_MTU_4096 && (128u << cfg.mtu) != mtu; cfg.mtu++)
				;
			if ((128u << cfg.mtu) != mtu)
				goto bad;
			break;
		case OPT_ONEWAY:
			cfg.one_way = true;
			break;
		case OPT_LOSS:
			cfg.link.loss = pct(optarg);
			break;
		case OPT_BURST:
			colon = strchr(optarg, ':');
			sim_link_burst_loss(&cfg.link, pct(optarg),
					    colon != NULL ? strtod(colon + 1, NULL) : 4.0);
			break;
		case OPT_REORDER:
			cfg.link.reorder = pct(optarg);
			colon = strchr(optarg, ':');
			if (colon != NULL)
				cfg.link.reorder_ns = ns(colon + 1);
			break;
		case OPT_DUP:
			cfg.link.dup = pct(optarg);
			break;
		case OPT_CORRUPT:
			cfg.link.corrupt = pct(optarg);
			break;
		case OPT_DELAY:
			cfg.link.delay_ns = ns(optarg);
			break;
		case OPT_JITTER:
			cfg.link.jitter_ns = ns(optarg);
			break;
		case OPT_RATE:
			cfg.link.rate_bps = (uint64_t)(strtod(optarg, NULL) * 1e9);
			break;
		case OPT_ECN:
			if (sscanf(optarg, "%u,%u,%lf", &cfg.link.red_kmin, &cfg.link.red_kmax,
				   &cfg.link.red_pmax) != 3)
				goto bad;
			cfg.link.red_pmax /= 100.0;
			break;
		case OPT_QCAP:
			cfg.link.qcap_bytes = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case OPT_TXBUSY:
			cfg.tx_busy = pct(optarg);
			break;
		case OPT_TIMEOUT:
			cfg.timeout = (uint8_t)strtoul(optarg, NULL, 0);
			break;
		case OPT_SQD:
			cfg.sq_depth = (unsigned int)strtoul(optarg, NULL, 0);
			if (cfg.sq_depth < 2)
				goto bad;
			break;
		case OPT_TLIM:
			cfg.time_limit_ns = ns(optarg) * 1000000ull;
			break;
		case OPT_PSN:
			cfg.psn = (uint32_t)strtoul(optarg, NULL, 0) & 0xFFFFFF;
			break;
		case OPT_SRQ:
			cfg.srq = true;
			break;
		case OPT_SCQ:
			cfg.shared_cq = true;
			break;
		case OPT_RQD:
			cfg.rq_depth = (unsigned int)strtoul(optarg, NULL, 0);
			if (cfg.rq_depth < 1)
				goto bad;
			break;
		case OPT_RECV_EVERY:
			cfg.recv_every_ns = ns(optarg);
			break;
		case OPT_RNR_TIMER:
			cfg.min_rnr_timer = (uint8_t)(strtoul(optarg, NULL, 0) & 31);
			break;
		case OPT_RD_ATOMIC:
			cfg.rd_atomic = (uint8_t)strtoul(optarg, NULL, 0);
			break;
		case OPT_CC:
			cfg.cc = droce_cc_find(NULL, optarg);
			if (cfg.cc == NULL)
				goto bad;
			break;
		case OPT_CAP:
			if (strcmp(optarg, "on") == 0)
				cfg.inflight.cap = DROCE_INFLIGHT_CAP_BDP;
			else if (strcmp(optarg, "auto") == 0)
				cfg.inflight.cap = DROCE_INFLIGHT_CAP_AUTO;
			else if (strcmp(optarg, "off") == 0)
				cfg.inflight.cap = 0;
			else if ((cfg.inflight.cap = (uint32_t)strtoul(optarg, NULL, 0)) == 0)
				goto bad;
			break;
		case OPT_CAP_RTT:
			cfg.inflight.rtt_ns = (uint32_t)ns(optarg);
			break;
		case OPT_RTO:
			if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
				goto bad;
			cfg.inflight.rto = strcmp(optarg, "on") == 0;
			break;
		case OPT_RTO_MIN:
			cfg.inflight.rto_min_ns = (uint32_t)ns(optarg);
			break;
		case OPT_LAT:
			cfg.lat = true;
			break;
		case OPT_RECOVERY:
			cfg.sr = false;
			cfg.sr_nodes = 0;
			if (strcmp(optarg, "sr") == 0)
				cfg.sr = true;
			else if (strcmp(optarg, "sr0") == 0 || strcmp(optarg, "sr1") == 0)
				cfg.sr_nodes = (uint8_t)(1u << (optarg[2] - '0'));
			else if (strcmp(optarg, "gbn") != 0)
				goto bad;
			break;
		case OPT_PCAP:
			cfg.pcap = optarg;
			break;
		case OPT_DIGEST:
			cfg.digest = true;
			break;
		case 'v':
			cfg.verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	for (i = 0; i < count; i++) {
		cfg.seed = first + i;
		sim_run(&cfg, &sum);
		sim_summary_print(&cfg, &sum, stdout);
		fflush(stdout);
		if (!sum.ok && failed++ == 0)
			first_bad = cfg.seed;
	}
	if (count > 1) {
		if (failed != 0)
			printf("%" PRIu64 " runs, %" PRIu64 " mismatched (first: seed %" PRIu64
			       ")\n",
			       count, failed, first_bad);
		else
			printf("%" PRIu64 " runs, all OK\n", count);
	}
	return failed != 0 ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
