#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-cc BUILD [NAME=DROCE_VARS...]: congestion control over a software bottleneck.
# droce-perf write bw 64 KiB for 10 s from a client through droce-netem (--rate, --red: a
# switch-like queue that marks CE) to a server, all over memif; once per configuration: "none"
# (DROCE_CC=none), "dcqcn" (droce's defaults for the port's speed, from 10 Gbit/s),
# "dcqcn_path" and "timely_path" (the settings for the netem's rate, below), then each
# NAME=... given, e.g.
#   paper='DROCE_CC=dcqcn DROCE_DCQCN_G=1020 DROCE_DCQCN_ALPHA_PERIOD_US=55 ...'
# Per run: goodput, the netem's rate out towards the server (frames, from its first to its last
# transmit: the link's use), the share of frames netem marked, netem's largest backlog and the
# queue its frames found (median, 99th percentile, kB), CNPs the client
# handled, packets its rate limiter held, and the algorithm's rate (droce-stat --qps every 0.2 s:
# lowest, median, highest), with several QPs Jain's index over their sending rates per
# sample (lowest, median), and with TIMELY the round trips it judges by (each QP's last
# sample every 0.2 s: median, highest, in us). Environment: DROCE_BENCH_NETEM ("--delay 20us
# --rate 2gbit --limit 2m --red 20k,200k,20%"), DROCE_BENCH_SECONDS (10: the start from line
# rate, a few tenths of a second, then weighs little), DROCE_BENCH_QPS (QPs between the two
# processes, 1), DROCE_BENCH_CSV (a directory: NAME.csv per run, each QP's packets per second and
# limiter rate and Jain's index every 0.2 s; NAME.queue.csv: the netem's queue and CE marks
# every millisecond, droce-netem --series; and
# NAME.netem, NAME.client: the netem's output, its counters per direction, and the client's;
# NAME.qps: droce-stat --qps --json every 0.2 s, each QP's counters and algorithm state),
# DROCE_BENCH_NETEM_LCORE (0: the netem shares the server's core; 1, the client's, puts the
# sender's stalls and the netem's into the queue it measures: tools/bench/README.md),
# DROCE_BENCH_SERVER_VARS (the server's own settings after NAME's: DROCE_IDLE_SPINS=0, so that
# it gives the netem their core as soon as it is idle; empty: the runtime's default).
set -u
if [ $# -lt 1 ] || [ ! -x "$1/tools/droce-perf/droce-perf" ] || [ ! -x "$1/tools/droce-netem/droce-netem" ]; then
	echo "usage: droce-bench-cc BUILD [NAME='DROCE_VAR=value ...' ...]" >&2
	exit 2
fi
B=$1
shift
STAT=$(cd "$(dirname "$0")/../droce-stat" && pwd)/droce-stat
NETEM_OPTS=${DROCE_BENCH_NETEM:---delay 20us --rate 2gbit --limit 2m --red 20k,200k,20%}
SECS=${DROCE_BENCH_SECONDS:-10}
# The server shares its core with the netem: a loop that spins before it sleeps takes that
# core from the netem, which then stamps late what arrived meanwhile (tools/bench/README.md)
SRV_VARS=${DROCE_BENCH_SERVER_VARS-DROCE_IDLE_SPINS=0}
QPS=${DROCE_BENCH_QPS:-1}
CSV=${DROCE_BENCH_CSV:-}
TMP=$(mktemp -d /tmp/droce-bench-cc.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# run NAME VARS: one netem, one droce-perf server and client; prints one row
run() {
	local name=$1 vars=$2 tag="droce-cc-$$-$RANDOM" np sp g series=()
	[ -z "$CSV" ] || series=(--series "$CSV/$name.queue.csv")
	# shellcheck disable=SC2086
	timeout $((SECS + 30)) "$B/tools/droce-netem/droce-netem" --no-huge -m 128 --no-pci \
		--no-shconf -l "${DROCE_BENCH_NETEM_LCORE:-0}" --vdev="net_memif0,role=server,socket=/$tag-a" \
		--vdev="net_memif1,role=server,socket=/$tag-b" -- $NETEM_OPTS \
		--duration $((SECS + 20))s "${series[@]}" >"$TMP/netem" 2>&1 &
	np=$!
	for _ in $(seq 50); do grep -q ready "$TMP/netem" 2>/dev/null && break; sleep 0.1; done
	rm -f "$TMP/port"
	# shellcheck disable=SC2086
	env DROCE_EAL="--no-huge -m 256 --no-pci" DROCE_DCQCN_MAX_RATE_MBPS=10000 $vars $SRV_VARS \
		DROCE_IPV4=198.18.0.1/24 DROCE_VDEV="net_memif0,role=client,socket=/$tag-b" \
		DROCE_LCORES=0 timeout $((SECS + 30)) "$B/tools/droce-perf/droce-perf" -p 0 \
		--port-file "$TMP/port" --counters >"$TMP/server" 2>&1 &
	sp=$!
	for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
	# shellcheck disable=SC2086
	env DROCE_EAL="--no-huge -m 256 --no-pci" DROCE_DCQCN_MAX_RATE_MBPS=10000 $vars \
		DROCE_IPV4=198.18.0.2/24 DROCE_VDEV="net_memif0,role=client,socket=/$tag-a" \
		DROCE_LCORES=1 timeout $((SECS + 30)) "$B/tools/droce-perf/droce-perf" \
		-p "$(cat "$TMP/port" 2>/dev/null)" -o write -s 65536 -q "$QPS" -D "$SECS" -J -Q --counters \
		127.0.0.1 >"$TMP/client" 2>"$TMP/client.err" &
	cp=$!
	# the client's QP as droce-stat --qps sees it, every 0.2 s until it exits (its rate)
	: >"$TMP/qps"
	pp=''
	for _ in $(seq 50); do
		pp=$(pgrep -P "$cp" | head -n 1)
		# its telemetry socket comes up with EAL
		[ -n "$pp" ] && /usr/bin/python3 "$STAT" -p "$pp" --qps >/dev/null 2>&1 && break
		sleep 0.1
	done
	[ -z "$pp" ] || timeout $((SECS + 30)) /usr/bin/python3 "$STAT" -p "$pp" --qps --json \
		-w 0.2 >"$TMP/qps" 2>/dev/null &
	wait "$cp"
	wait "$sp"
	kill -TERM "$np" 2>/dev/null
	wait "$np"
	g=$(sed -n 's/.*"gbps":\([0-9.]*\).*/\1/p' "$TMP/client")
	if [ -n "$CSV" ]; then
		cp "$TMP/netem" "$CSV/$name.netem"
		cat "$TMP/client" "$TMP/client.err" >"$CSV/$name.client"
		cp "$TMP/qps" "$CSV/$name.qps"
	fi
	wait
	/usr/bin/python3 - "$name" "${g:--}" "$TMP/netem" "$TMP/client.err" "$TMP/qps" "$CSV" <<'EOF'
import json, re, statistics, sys
name, gbps, netem, cerr, qps, csv = sys.argv[1:7]
n = {}
for l in open(netem, errors="replace"):
    if l.startswith("droce-netem ab:"):
        n = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", l)}
c = {}
for l in open(cerr, errors="replace"):
    m = re.match(r"client (\S+) = (\d+)$", l.strip())
    if m:
        c[m.group(1)] = int(m.group(2))
rx = n.get("rx", 0)
# the algorithm's rate over the run, from its samples (none has no figures)
rates = []
# each data QP's packets sent between samples (all of a 64 KiB WRITE's but its last are of
# the path MTU, so their ratio is the rates'; QP1 sends none once connected): Jain's index
rows, jains, prev = [], [], None
# TIMELY's last round-trip sample of each data QP at each sample: its signal, and its target
rtts = []
for l in open(qps, errors="replace"):
    try:
        q = json.loads(l).get("list", [])
    except ValueError:
        continue
    if q and "cc_rate_mbps" in q[0] and q[0].get("sent_pkts", 0) > 0:
        rates.append(q[0]["cc_rate_mbps"])
    cur = {e.get("qpn"): e for e in q if e.get("sent_pkts", 0) > 0 and e.get("qpn", 1) != 1}
    rtts += [e["cc_rtt_ns"] / 1000 for e in cur.values() if e.get("cc_rtt_ns", 0) > 0]
    if prev is not None:
        qpns = sorted(k for k in cur if k in prev)
        x = [(cur[k]["sent_pkts"] - prev[k]["sent_pkts"]) / 0.2 for k in qpns]
        if x and sum(x) > 0:
            j = sum(x) ** 2 / (len(x) * sum(v * v for v in x))
            jains.append(j)
            rows.append([len(rows) * 0.2] + x + [cur[k].get("cc_rate_mbps", -1) for k in qpns] + [j])
    prev = cur
rate = ("%d/%d/%d" % (min(rates), statistics.median(rates), max(rates))) if rates else "-"
jain = ("%.2f/%.2f" % (min(jains), statistics.median(jains))) if jains else "-"
rtt = ("%d/%d" % (statistics.median(rtts), max(rtts))) if rtts else "-"
if csv and rows:
    nq = (len(rows[0]) - 2) // 2
    with open("%s/%s.csv" % (csv, name), "w") as f:
        f.write("s," + ",".join("qp%d_pkts_per_s" % i for i in range(nq)) + "," +
                ",".join("qp%d_limit_mbps" % i for i in range(nq)) + ",jain\n")
        for r in rows:
            f.write(",".join("%.3f" % v for v in r) + "\n")
print("%-10s %9s %8s %10s %12s %13s %10s %12s  %-20s %-15s %s" % (name, gbps,
      "%.3f" % (n["tx_mbit_s"] / 1000) if "tx_mbit_s" in n else "-",
      "%.1f %%" % (100 * n.get("ce_marked", 0) / rx) if rx else "-",
      "%d" % n.get("max_backlog", 0),
      "%dk/%dk" % (n["queue_p50"] / 1000, n["queue_p99"] / 1000) if "queue_p50" in n else "-",
      c.get("dev.rp_cnp_handled", 0),
      c.get("dev.cc_deferred", 0), rate, jain, rtt))
EOF
}

[ -z "$CSV" ] || mkdir -p "$CSV" || exit 2
echo "droce-bench-cc: droce-perf write bw 64 KiB, $QPS QP(s), ${SECS} s, through droce-netem $NETEM_OPTS"
printf '%-10s %9s %8s %10s %12s %13s %10s %12s  %-20s %-15s %s\n' config Gbit/s "link" "CE-marked" "max backlog" \
	"queue p50/p99" "CNPs" \
	"held (cc)" "rate Mbit/s min/med/max" "Jain min/median" "RTT us med/max"
run none "DROCE_CC=none"
run dcqcn "DROCE_CC=dcqcn"
# Each algorithm with the settings for this path (pmd-glue/README.md, "Settings for a software
# bottleneck"): the netem's rate as link_mbps, a cap for a round trip of 400 us, DCQCN's
# additive step link / 1000, TIMELY's thresholds above the hosts' scheduling and delta link / 40
link=$(echo "$NETEM_OPTS" | sed -n 's/.*--rate \([0-9.]*\)\([gm]\)bit.*/\1 \2/p' |
	awk '{ printf "%d", $2 == "g" ? $1 * 1000 : $1 }')
if [ -n "$link" ] && [ "$link" -ge 10 ]; then
	run dcqcn_path "DROCE_CC=dcqcn DROCE_LINK_MBPS=$link DROCE_DCQCN_MAX_RATE_MBPS=$link \
DROCE_INFLIGHT_RTT_US=400 DROCE_DCQCN_AI_RATE_MBPS=$((link / 1000 > 0 ? link / 1000 : 1))"
	run timely_path "DROCE_CC=timely DROCE_LINK_MBPS=$link DROCE_INFLIGHT_RTT_US=400 \
DROCE_TIMELY_T_LOW_US=500 DROCE_TIMELY_T_HIGH_US=5000 DROCE_TIMELY_DELTA_MBPS=$((link / 40))"
else
	echo "(no --rate Ngbit or Nmbit in the netem's options: no _path rows)"
fi
for nv in "$@"; do
	run "${nv%%=*}" "${nv#*=}"
done
