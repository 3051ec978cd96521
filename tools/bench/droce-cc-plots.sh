#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Congestion control in the simulator, as plots: for each scenario droce-sim-cc writes a CSV
# (per-flow rate and limiter rate, queue, CE fraction, Jain's index per sample) and gnuplot
# draws it (rate per flow, queue, CE fraction over time) into OUT/NAME.png; each figure's title
# carries the commit and the date. Deterministic: the same commit gives the same CSVs.
#   droce-cc-plots.sh BUILD OUT [droce-sim-cc options...]   (no options: the standard set)
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
	"$sim" --csv "$out/$name.csv" --sample-us 200 "$@" | tee "$out/$name.txt" || return 1
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
}

if [ $# -gt 0 ]; then
	run custom "$@"
	exit
fi
fail=0
for cc in none dcqcn timely; do
	for n in 1 4 16; do
		run "${cc}_25g_paper_n$n" --cc "$cc" --flows "$n" --gbps 25 --delay-us 2 \
			--red 5000,200000,1 --ms 20 || fail=1
		run "${cc}_2g_netem_n$n" --cc "$cc" --flows "$n" --gbps 2 --line-gbps 10 \
			--delay-us 20 --red 20000,200000,20 --ms 50 || fail=1
	done
done
command -v gnuplot >/dev/null || echo "gnuplot not installed (apt-get install gnuplot-nox): CSVs only"
exit $fail
