#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-kernel: the kernel TCP baseline droce is compared with. Two network
# namespaces of its own joined by a veth pair (198.19.254.0/30), server on CPU 0, client on
# CPU 1 (where droce-bench-perf places droce-perf):
#   latency    droce-bench-tcppp, 8 B TCP ping-pong (blocking sockets, TCP_NODELAY), and
#              sockperf TCP ping-pong, 14 B (sockperf's smallest message: its header), full RTT
#   bandwidth  iperf3 TCP, 64 KiB writes, one stream
# $DROCE_BENCH_REPS times interleaved (default 3), medians. A measurement, not a test: it fails
# only when a run does. Needs root (namespaces). Key=value figures go to $DROCE_BENCH_KV.
set -u
ME=droce-bench-kernel
. '@SRC_DIR@/bench_lib.sh'
SECS=${DROCE_BENCH_SECONDS:-2}
TCPPP=${DROCE_BENCH_TCPPP:-'@TCPPP@'}
TCPPP_N=${DROCE_BENCH_TCP_N:-20000}
NS_A=droce-bk-$$-a
NS_B=droce-bk-$$-b
VA=dbk$$a
VB=dbk$$b
IP_A=198.19.254.1
IP_B=198.19.254.2

for p in sockperf iperf3 ip ss taskset; do
	command -v $p >/dev/null || die "$p not found (Debian packages sockperf, iperf3, iproute2," \
		"util-linux)"
done
[ "$(id -u)" = 0 ] || die "needs root for its network namespaces"
[ -x "$TCPPP" ] || die "$TCPPP missing: build first (ninja -C BUILD)"
CPU_C=1
[ "$(nproc)" -ge 2 ] || CPU_C=0

netns_cleanup() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
}
CLEANUP_MORE=netns_cleanup
ip netns add "$NS_A" && ip netns add "$NS_B" || die "cannot create network namespaces"
ip link add "$VA" type veth peer name "$VB" || die "cannot create a veth pair"
ip link set "$VA" netns "$NS_A" && ip link set "$VB" netns "$NS_B" &&
	ip -n "$NS_A" addr add $IP_A/30 dev "$VA" && ip -n "$NS_B" addr add $IP_B/30 dev "$VB" &&
	ip -n "$NS_A" link set "$VA" up && ip -n "$NS_B" link set "$VB" up &&
	ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up || die "veth setup failed"

A=(ip netns exec "$NS_A" taskset -c 0)
B=(ip netns exec "$NS_B" taskset -c $CPU_C)
declare -a P50 P99 S50 S99 GBPS
for r in $(seq "$REPS"); do
	SRV=("${A[@]}" "$TCPPP" server $IP_A 11112 8)	# ends at the client's EOF
	CLI=("${B[@]}" "$TCPPP" client $IP_A 11112 8 "$TCPPP_N")
	pair tcppp "listen:11112:$NS_A"
	v=$(sed -n 's/^tcppp:.* p50=\([0-9.]*\).*/\1/p' "$TMP/tcppp.cli")
	need p50 "$v" tcppp
	P50+=("$v")
	P99+=("$(sed -n 's/^tcppp:.* p99=\([0-9.]*\).*/\1/p' "$TMP/tcppp.cli")")

	SRV=("${A[@]}" sockperf sr --tcp -i $IP_A -p 11111)	# runs until stopped
	CLI=("${B[@]}" sockperf pp --tcp -i $IP_A -p 11111 -m 14 -t "$SECS" --full-rtt)
	SRV_KILL=1 pair pp "listen:11111:$NS_A"
	v=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$TMP/pp.cli" | head -n 1)
	need 'percentile 50' "$v" pp
	S50+=("$v")
	S99+=("$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$TMP/pp.cli" | head -n 1)")

	SRV=("${A[@]}" iperf3 -s -1 -B $IP_A -p 15201)	# -1: one test, then it exits
	CLI=("${B[@]}" iperf3 -c $IP_A -p 15201 -l 65536 -t "$SECS" -J)
	pair iperf "listen:15201:$NS_A"
	v=$(/usr/bin/python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["end"]
print("%.3f" % (e["sum_received"]["bits_per_second"] / 1e9))' "$TMP/iperf.cli" 2>/dev/null)
	need bits_per_second "$v" iperf
	GBPS+=("$v")
done

p50=$(median "${P50[@]}")
p99=$(median "${P99[@]}")
s50=$(median "${S50[@]}")
s99=$(median "${S99[@]}")
gbps=$(median "${GBPS[@]}")
printf '%s (veth between two network namespaces, server CPU 0, client CPU %s; %s CPUs;' "$ME" \
	$CPU_C "$(nproc)"
printf ' median of %s interleaved runs)\n' "$REPS"
printf '%-46s %10s %10s\n' "latency (round trip)" "p50 us" "p99 us"
printf '%-46s %10.2f %10.2f\n' "TCP ping-pong 8 B (droce-bench-tcppp)" "$p50" "$p99"
printf '%-46s %10.2f %10.2f\n' "sockperf TCP ping-pong 14 B" "$s50" "$s99"
printf '%-46s %10s\n' "bandwidth" "Gbit/s"
printf '%-46s %10.3f\n' "iperf3 TCP, 64 KiB writes (goodput)" "$gbps"
kv tcp_rtt_p50 "$p50"
kv tcp_rtt_p99 "$p99"
kv tcp_sockperf_p50 "$s50"
kv tcp_sockperf_p99 "$s99"
kv tcp_gbps "$gbps"
