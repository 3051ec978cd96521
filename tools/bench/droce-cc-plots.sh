#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Congestion control in the simulator, as plots: for each scenario droce-sim-cc writes a CSV
# (per-flow rate and limiter rate, queue, CE fraction, Jain's index per sample) and gnuplot
# draws it (rate per flow, queue, CE fraction over time) into OUT/NAME.png; each figure's title
# carries the commit and the date. OUT/table.txt has one line per case: its figures and whether
# the targets (droce-sim-cc --check) hold. Deterministic: the same commit gives the same CSVs.
#   droce-cc-plots.sh BUILD OUT [droce-sim-cc options...]   (no options: the standard set:
#   none, DCQCN with droce's and with mlx5's values, TIMELY; N = 1, 2, 4, 8, 16; 25 Gbit/s
#   2 us for 20 ms and 2 Gbit/s 20 us for 250 ms, the same run 12.5 times as slow, behind the
#   paper's marking, RED 5k/200k/1 %, and again behind a ConnectX deployment's, RED
#   100k/400k/20 %: names with _cx)
build=$1
out=$2
shift 2 2>/dev/null || { echo "usage: $0 BUILD OUT [droce-sim-cc options]" >&2; exit 2; }
sim=$build/tests/sim/droce-sim-cc
[ -x "$sim" ] || { echo "$sim not built: ninja -C $build tests/sim/droce-sim-cc" >&2; exit 2; }
mkdir -p "$out" || exit 2
commit=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u '+%Y-%m-%d %H:%M UTC')

# NAME droce-sim-cc options...
run() {
	name=$1
	shift
	# the in-flight policy stated: each flow's window, no other cap, the IBTA timeout
	"$sim" --csv "$out/$name.csv" --check --cap off --rto off "$@" > "$out/$name.txt"
	rc=$?
	[ $rc -le 1 ] || { cat "$out/$name.txt"; return 1; }
	verdict=met
	[ $rc -eq 0 ] || verdict='not met'
	printf '%-24s %-8s %s\n' "$name" "$verdict" \
		"$(head -n 1 "$out/$name.txt" | sed 's/.*seed [0-9]*: //')" | tee -a "$out/table.txt"
	command -v gnuplot >/dev/null || return 0
	flows=$(head -n 2 "$out/$name.csv" | tail -n 1 | tr ',' '\n' | grep -c '_limit_mbps')
	gnuplot <<GP || return 1
set datafile separator ','
set terminal pngcairo size 1000,900 noenhanced
set output '$out/$name.png'
set multiplot layout 3,1 title "droce-sim-cc $* ($commit, $date)" font ',10'
set key outside right
set xlabel 'ms'
set ylabel 'Mbit/s'
plot for [i=0:$flows-1] '$out/$name.csv' using 1:5+2*i with lines title sprintf('flow %d', i)
set ylabel 'queue bytes'
plot '$out/$name.csv' using 1:2 with lines title 'queue'
set ylabel 'CE fraction'
set yrange [0:1]
plot '$out/$name.csv' using 1:3 with lines title 'CE', '' using 1:4 with lines title 'Jain'
unset multiplot
GP
	echo "  -> $out/$name.csv $out/$name.png"
	return 0
}

if [ $# -gt 0 ]; then
	run custom "$@"
	exit
fi
fail=0
: > "$out/table.txt"
# the paper's marking, then the one the HPCC simulator gives ConnectX deployments at 25 Gbit/s
# (the same thresholds in bytes at 2 Gbit/s)
for mark in paper:5000,200000,1 cx:100000,400000,20; do
	red=${mark#*:}
	tag=
	[ "${mark%%:*}" = paper ] || tag=_${mark%%:*}
	for cc in none dcqcn dcqcn_mlx5 timely; do
		opt="--cc $cc"
		[ "$cc" = dcqcn_mlx5 ] && opt="--cc dcqcn --mlx5"
		# GBPS:DELAY_US:MS
		for path in 25:2:20 2:20:250; do
			g=${path%%:*}
			rest=${path#*:}
			for n in 1 2 4 8 16; do
				# shellcheck disable=SC2086
				run "${cc}${tag}_${g}g_n$n" $opt --flows "$n" --gbps "$g" \
					--delay-us "${rest%%:*}" --red "$red" --ms "${rest#*:}" || fail=1
			done
		done
	done
done
echo "table: $out/table.txt"
command -v gnuplot >/dev/null || echo "gnuplot not installed (apt-get install gnuplot-nox): CSVs only"
exit $fail
