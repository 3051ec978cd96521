#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-portd: a program under droce-portd (the shared port: droce-perf server -> memif
# -> droce-portd -> net_af_packet) next to the same program owning the port itself (the
# one-process path: droce-perf server -> net_af_packet), side by side, interleaved:
#   8 B round trip      droce-perf -o write -m lat -s 8 -n N   (p50 and avg, us)
#   64 KiB bandwidth    droce-perf -o write -s 65536 -D S      (Gbit/s of payload)
#   64 B message rate   droce-perf -o write -s 64 -D S         (M messages/s)
# Two network namespaces joined by a veth pair (198.18.0.0/15 addresses), the client in B on
# its own af_packet port in both cases. Root. $DROCE_BENCH_REPS rounds (default 3), medians,
# and the shared/one-process ratio of each. A measurement, not a test: it fails only when a
# run does.
#   droce-bench-portd.sh [BUILD_DIR]
set -u
B=${1:-build}
PERF=$B/tools/droce-perf/droce-perf
PORTD=$B/tools/droce-portd/droce-portd
REPS=${DROCE_BENCH_REPS:-3}
SECS=${DROCE_BENCH_SECONDS:-3}
LATN=${DROCE_BENCH_LAT_ITERS:-20000}
die() {
	echo "droce-bench-portd: $*" >&2
	[ -f "${dir:-}/portd.log" ] && grep -v "^EAL" "$dir/portd.log" | tail -n 20 >&2
	exit 1
}
[ "$(id -u)" = 0 ] || die "root needed (network namespaces, veth)"
for x in "$PERF" "$PORTD"; do [ -x "$x" ] || die "$x missing: build first (ninja -C $B)"; done
tag=$$
nsa=dbp_a_$tag nsb=dbp_b_$tag
dir=$(mktemp -d /tmp/droce_bench_portd.XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
ip netns add "$nsa" && ip netns add "$nsb" || die "cannot create namespaces"
ip -n "$nsa" link add dra type veth peer name drb netns "$nsb" || die "no veth"
for x in "$nsa dra 198.19.0.1" "$nsb drb 198.19.0.2"; do
	set -- $x
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up && ip -n "$1" link set lo up
	ip netns exec "$1" nft "add table inet droce; add chain inet droce in { type filter hook input priority 0; }; add rule inet droce in udp dport 4791 drop"
done
eal="--no-huge -m 256 --no-pci --no-telemetry"
sock=$dir/portd.sock

# one run: MODE (one|shared) NAME CLIENT_ARGS...; the client's JSON in $dir/NAME.json
run() {
	mode=$1 name=$2
	shift 2
	rm -f "$dir/port"
	if [ "$mode" = shared ]; then
		srv_env=(DROCE_PORTD="$sock")
	else
		srv_env=(DROCE_PORTD=off DROCE_VDEV=net_af_packet0,iface=dra DROCE_IPV4=198.18.0.1/24)
	fi
	ip netns exec "$nsa" env "DROCE_EAL=$eal --lcores=0@(0-1)" DROCE_LCORES=0 "${srv_env[@]}" \
		timeout 120 "$PERF" -p 0 --port-file "$dir/port" -Q >"$dir/$name.srv" 2>&1 &
	ps=$!
	for t in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
	[ -s "$dir/port" ] || { cat "$dir/$name.srv"; die "$name: server wrote no port"; }
	ip netns exec "$nsb" env "DROCE_EAL=$eal --lcores=0@(0-1)" DROCE_LCORES=0 \
		DROCE_PORTD=off DROCE_VDEV=net_af_packet0,iface=drb DROCE_IPV4=198.18.0.2/24 \
		timeout 120 "$PERF" -p "$(cat "$dir/port")" -o write -J -Q "$@" 198.19.0.1 \
		>"$dir/$name.json" 2>"$dir/$name.cli"
	rc=$?
	wait $ps
	return $rc
}
# a run that fails (a loaded host can stall a side past its retries) is repeated once, said
# on stderr and counted
retried=0
run_retry() {
	run "$@" && return
	echo "droce-bench-portd: $2 failed, once more: $(tail -n 1 "$dir/$2.cli")" >&2
	retried=$((retried + 1))
	run "$@" || { cat "$dir/$2.cli" "$dir/$2.srv"; die "$2: client failed twice"; }
}
fig() {	# fig NAME KEY: from the client's JSON (results[0] or its lat_us)
	/usr/bin/python3 - "$dir/$1.json" "$2" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)["results"][0]
        k = sys.argv[2]
        print(r.get(k, r.get("lat_us", {}).get(k)))
PY
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

ip netns exec "$nsa" "$PORTD" --iface dra --ip 198.18.0.1/24 --socket "$sock" --programs 3 ${DROCE_BENCH_PORTD_ARGS:-} \
	--eal "$eal" >"$dir/portd.log" 2>&1 &
pids="$pids $!"
for t in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { cat "$dir/portd.log"; die "droce-portd did not start"; }

declare -a L1 L2 A1 A2 W1 W2 M1 M2
for r in $(seq "$REPS"); do
	# interleaved, the order swapped every round
	order="one shared"
	[ $((r % 2)) = 0 ] && order="shared one"
	for m in $order; do
		run_retry "$m" "lat_$m" -m lat -s 8 -n "$LATN"
		run_retry "$m" "bw_$m" -s 65536 -D "$SECS"
		run_retry "$m" "mr_$m" -s 64 -D "$SECS"
		if [ $m = one ]; then
			L1+=("$(fig lat_one p50)"); A1+=("$(fig lat_one avg)"); W1+=("$(fig bw_one gbps)")
			M1+=("$(fig mr_one mmsg_per_s)")
		else
			L2+=("$(fig lat_shared p50)"); A2+=("$(fig lat_shared avg)"); W2+=("$(fig bw_shared gbps)")
			M2+=("$(fig mr_shared mmsg_per_s)")
		fi
	done
	echo "round $r: one-process p50 ${L1[-1]} us avg ${A1[-1]} us ${W1[-1]} Gbit/s ${M1[-1]} M/s;" \
		"shared p50 ${L2[-1]} us avg ${A2[-1]} us ${W2[-1]} Gbit/s ${M2[-1]} M/s"
done
l1=$(median "${L1[@]}") l2=$(median "${L2[@]}") a1=$(median "${A1[@]}") a2=$(median "${A2[@]}")
w1=$(median "${W1[@]}") w2=$(median "${W2[@]}") m1=$(median "${M1[@]}") m2=$(median "${M2[@]}")
printf '%-28s %14s %14s %8s\n' "medians of $REPS" one-process shared ratio
row() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%-28s %14s %14s %8.2f\n", n, a, b, (a > 0 ? b / a : 0) }'; }
row "8 B WRITE round trip p50 us" "$l1" "$l2"
row "8 B WRITE round trip avg us" "$a1" "$a2"
row "64 KiB WRITE Gbit/s" "$w1" "$w2"
row "64 B WRITE M messages/s" "$m1" "$m2"
echo "runs repeated after a failure: $retried; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
kill -0 "${pids##* }" 2>/dev/null || die "droce-portd ended during the runs"
