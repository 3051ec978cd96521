#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-all: every droce benchmark against its baseline in one run, then
# one table with the ratios and the goals beside them:
#   droce-bench-perf    droce-perf write lat 8 B / write bw 64 KiB vs droce-rawpp over memif
#   droce-bench-memif   64 B message rate per core; 64 KiB bandwidth vs raw memif at droce's
#                       frame size
#   droce-bench-kernel  kernel TCP over veth: 8 B and sockperf ping-pong, iperf3 64 KiB writes
#   droce-bench-shim    ib_write_lat / ib_write_bw through the verbs shim vs droce-perf
#   droce-bench-engine  the engine alone (no PMD): what its own work costs, steadier than the
#                       rest on a shared host
# Each one's own output is shown as it finishes. The goals are printed, never asserted: the
# exit status is 1 only when a benchmark failed to run (its figures then show as "-").
# Options go to the scripts through the environment: DROCE_BENCH_REPS (3), DROCE_BENCH_SECONDS.
set -u
ME=droce-bench-all
. '@SRC_DIR@/bench_lib.sh'
DIR=${DROCE_BENCH_DIR:-'@BENCH_DIR@'}
C2C='@C2C@'
KV=$TMP/kv
: >"$KV"
FAILED=''

CPU_MODEL=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u +%H:%M:%S)
C2C0=$(c2c)

# run NAME [AGAIN]: one benchmark, its output indented; a failure is remembered, the rest
# still runs. AGAIN=1: a failed benchmark is run once more (the scripts repeat a failed run
# themselves; droce-bench-perf does not), counted as a retry.
run() {
	local rc
	echo "== $1"
	if [ ! -x "$DIR/$1" ]; then
		echo "   (not built in $DIR)"
		FAILED="$FAILED $1"
		return
	fi
	DROCE_BENCH_KV=$KV "$DIR/$1" >"$TMP/$1.out" 2>&1
	rc=$?
	sed 's/^/   /' "$TMP/$1.out"
	if [ $rc != 0 ] && [ "${2:-0}" = 1 ] && [ "$RETRIES" -gt 0 ]; then
		echo "   => exit status $rc: run again"
		echo retries=1 >>"$KV"
		run "$1" 0
		return
	fi
	[ $rc = 0 ] || { echo "   => exit status $rc"; FAILED="$FAILED $1"; }
}

run droce-bench-perf 1
run droce-bench-memif
run droce-bench-kernel
run droce-bench-shim
run droce-bench-engine

# droce-bench-perf prints a table of its own: the figures after each row's label
perf_row() {	# perf_row LABEL FIELD(1|2)
	/usr/bin/python3 - "$TMP/droce-bench-perf.out" "$1" "$2" <<'EOF'
import sys
try:
    lines = open(sys.argv[1], errors="replace").read().splitlines()
except OSError:
    lines = []
for l in lines:
    if l.startswith(sys.argv[2]):
        f = l[len(sys.argv[2]):].split()
        if len(f) >= int(sys.argv[3]):
            print(f[int(sys.argv[3]) - 1])
        break
EOF
}
get() {	# get KEY: a key=value figure of the scripts, or ""
	sed -n "s/^$1=//p" "$KV" | tail -n 1
}
# goal VALUE OP LIMIT: "met" / "missed" / "" (no value)
goal() {
	awk -v v="${1:-}" -v op="$2" -v l="$3" 'BEGIN {
		if (v == "" || v == "-") { print "n/a"; exit }
		ok = op == "<=" ? v + 0 <= l + 0 : v + 0 >= l + 0
		print ok ? "met" : "missed" }'
}
num() {	# num VALUE [FORMAT]
	awk -v v="${1:-}" -v f="${2:-%.2f}" 'BEGIN { if (v == "") print "-"; else printf f "\n", v }'
}
W='%-48s %9s %9s  %-26s %s\n'
row() {	# row LABEL FIG1 FIG2 COMPARISON GOAL
	printf "$W" "$1" "$2" "$3" "$4" "$5" | sed 's/ *$//'
}

raw50=$(perf_row "rawpp ping-pong 64 B" 1)
raw99=$(perf_row "rawpp ping-pong 64 B" 2)
lat50=$(perf_row "droce-perf write lat 8 B, client inline" 1)
lat99=$(perf_row "droce-perf write lat 8 B, client inline" 2)
lc50=$(perf_row "droce-perf write lat 8 B, client lcore 0,1" 1)
lc99=$(perf_row "droce-perf write lat 8 B, client lcore 0,1" 2)
raw1518=$(perf_row "rawpp 1518 B frames (with FCS)" 1)
pbw=$(perf_row "droce-perf write bw 64 KiB (goodput)" 1)
sh1=$(perf_row "1 shard a side, inline" 1)	# rows droce-bench-perf has had since 702ca37
sh2=$(perf_row "2 shards a side, inline" 1)
sh2l=$(perf_row "2 shards a side, client on 2 poll lcores" 1)
tcp50=$(get tcp_rtt_p50)
tcp99=$(get tcp_rtt_p99)
sock50=$(get tcp_sockperf_p50)
sock99=$(get tcp_sockperf_p99)
tcpbw=$(get tcp_gbps)
mr=$(get memif_msgrate)
rmpps=$(get memif_raw_mpps)
mbw=$(get memif_bw)
frame=$(get memif_raw_frame)
rgbps=$(get memif_raw_gbps)
rpay=$(get memif_raw_payload_gbps)
s50=$(get shim_lat_p50)
s99=$(get shim_lat_p99)
sp50=$(get shim_perf_lat_p50)
sp99=$(get shim_perf_lat_p99)
sbw=$(get shim_bw)
spbw=$(get shim_perf_bw)
si50=$(get shim_perf_inline_lat_p50)
si99=$(get shim_perf_inline_lat_p99)
sibw=$(get shim_perf_inline_bw)
ert=$(get engine_rtt_ns)
ebw=$(get engine_gbps)
ecp=$(get engine_memcpy_gbps)
emr=$(get engine_mmsg)

r_lat=$(ratio "$lat50" "$raw50")
r_tcp=$(ratio "$tcp50" "$lat50" "%.1f")
r_bw=$(pct "$mbw" "$rpay")
# the shim's goals against droce-perf at its best (inline), measured beside it in bench-shim
r_shim_lat=$(ratio "$s50" "$si50")
r_shim_bw=$(pct "$sbw" "$sibw")

echo
echo "$ME: $(nproc) CPUs ($CPU_MODEL), load average $LOAD0 at $START UTC," \
	"$(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S); medians of ${REPS} interleaved runs"
echo "$ME: CPUs 0-1 cache-line round trip ${C2C0%.*} ns at the start, $(c2c | sed 's/\..*//') ns" \
	"at the end (near < $C2C_NEAR_NS: a shared cache; each run's below the table)"
row "round trip, 8 B (client inline, lcore 1)" "p50 us" "p99 us" "comparison" "goal"
row "  raw memif ping-pong 64 B (droce-rawpp)" "$(num "$raw50")" "$(num "$raw99")" "" ""
row "  droce-perf write lat 8 B" "$(num "$lat50")" "$(num "$lat99")" "x$r_lat raw memif" \
	"<= 1.5x: $(goal "$r_lat" "<=" 1.5)"
row "  droce-perf write lat 8 B, client lcore 0,1" "$(num "$lc50")" "$(num "$lc99")" \
	"x$(ratio "$lc50" "$raw50") raw memif" ""
row "  kernel TCP ping-pong 8 B (veth)" "$(num "$tcp50")" "$(num "$tcp99")" \
	"droce-perf ${r_tcp}x faster" ">= 5x: $(goal "$r_tcp" ">=" 5)"
row "  kernel TCP ping-pong 14 B (sockperf, veth)" "$(num "$sock50")" "$(num "$sock99")" \
	"droce-perf $(ratio "$sock50" "$lat50" "%.1f")x faster" ""
row "bandwidth, 64 KiB messages" "Gbit/s" "" "" ""
row "  raw memif ${frame:-?} B frames (droce's size)" "$(num "$rgbps" %.3f)" "" "" ""
row "    their payload ($((${frame:-62} - 62)) B a frame)" "$(num "$rpay" %.3f)" "" "" ""
row "  droce-perf write bw 64 KiB" "$(num "$mbw" %.3f)" "" "$r_bw % of raw payload" \
	">= 70 %: $(goal "$r_bw" ">=" 70)"
row "  raw memif 1518 B frames (droce-bench-perf)" "$(num "$raw1518" %.3f)" "" "" ""
row "  droce-perf write bw 64 KiB (droce-bench-perf)" "$(num "$pbw" %.3f)" "" \
	"$(pct "$pbw" "$raw1518") % of raw 1518 B" ""
row "  kernel TCP iperf3 64 KiB writes (veth)" "$(num "$tcpbw" %.3f)" "" \
	"droce-perf x$(ratio "$mbw" "$tcpbw") TCP" ""
row "message rate, 64 B" "M/s" "" "" ""
row "  raw memif 64 B frames" "$(num "$rmpps" %.3f)" "" "" ""
row "  droce-perf write 64 B, client on one core" "$(num "$mr" %.3f)" "" \
	"$(pct "$mr" "$rmpps") % of raw" ">= 5 M/s: $(goal "$mr" ">=" 5)"
row "  4 QPs, 1 shard a side, inline (bench-perf)" "$(num "$sh1" %.3f)" "" "" \
	">= 5 M/s: $(goal "$sh1" ">=" 5)"
row "    2 shards a side, inline" "$(num "$sh2" %.3f)" "" "x$(ratio "$sh2" "$sh1") 1 shard" ""
row "    2 shards a side, client on 2 poll lcores" "$(num "$sh2l" %.3f)" "" \
	"x$(ratio "$sh2l" "$sh1") 1 shard" ""
row "verbs shim (droce-run, lcores 0,1 both sides)" "p50 us" "p99 us" "" ""
row "  ib_write_lat 8 B (2 x t_typical, 2 x 99%)" "$(num "$s50")" "$(num "$s99")" \
	"x$r_shim_lat droce-perf inline" "<= 1.1x: $(goal "$r_shim_lat" "<=" 1.1)"
row "  droce-perf write lat 8 B, inline (bench-shim)" "$(num "$si50")" "$(num "$si99")" "" ""
row "  droce-perf write lat 8 B, same link as the shim" "$(num "$sp50")" "$(num "$sp99")" \
	"shim x$(ratio "$s50" "$sp50")" ""
row "" "Gbit/s" "" "" ""
row "  ib_write_bw 64 KiB (BW average)" "$(num "$sbw" %.3f)" "" \
	"$r_shim_bw % of droce-perf inline" ">= 90 %: $(goal "$r_shim_bw" ">=" 90)"
row "  droce-perf write bw 64 KiB, inline (bench-shim)" "$(num "$sibw" %.3f)" "" "" ""
row "  droce-perf write bw 64 KiB, same link as the shim" "$(num "$spbw" %.3f)" "" \
	"shim $(pct "$sbw" "$spbw") %" ""
row "engine alone, no PMD (droce-bench-engine)" "" "" "" ""
lat_ns=$(awk -v v="${lat50:-}" 'BEGIN { if (v != "" && v != "-") print v * 1000 }')
row "  8 B WRITE round trip, both sides, ns" "$(num "$ert" %.1f)" "" \
	"$(pct "$ert" "$lat_ns") % of droce-perf's" ""
row "  64 KiB WRITEs through both, Gbit/s" "$(num "$ebw" %.2f)" "" \
	"x$(ratio "$ebw" "$ecp") memcpy" ""
row "  64 B WRITEs through both, M/s" "$(num "$emr" %.2f)" "" "" ""
# Each interleaved run's ratio, tagged with where CPUs 0 and 1 were around it: raw memif moves
# with that far more than droce does, so the medians above mix two machines.
echo "per interleaved run (near: CPUs 0 and 1 sharing a cache before and after, far: neither," \
	"moved: changed)"
grep -h "per run\|cache-line round trip per run" "$TMP/droce-bench-perf.out" \
	"$TMP/droce-bench-memif.out" 2>/dev/null | sed 's/^ */  /'
RETRIED=$(sed -n 's/^retries=//p' "$KV" | awk '{ n += $1 } END { print n + 0 }')
[ "$RETRIED" = 0 ] || echo "$ME: $RETRIED run(s) failed once and were run again (see above)"
if [ -n "$FAILED" ]; then
	echo "$ME: failed:$FAILED"
	exit 1
fi
