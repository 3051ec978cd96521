#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Congestion control live, as plots: droce-bench-cc.sh (droce-perf write bw through droce-netem
# at 2 Gbit/s with RED marking, over memif) with its series kept, then per configuration one
# PNG: each QP's sending rate and limiter rate (every 0.2 s), the queue the netem's frames
# found (mean and largest per millisecond) and the share of them marked CE (per millisecond),
# over the run. Each figure's title carries the commit and the date; OUT/table.txt is the
# bench's table. About a minute with the bench's default 10 s runs.
#   droce-cc-live-plots.sh BUILD OUT [NAME='DROCE_VARS' ...]
#   (DROCE_BENCH_QPS, 4 here, and the bench's other variables apply)
set -u
if [ $# -lt 2 ]; then
	echo "usage: droce-cc-live-plots.sh BUILD OUT [NAME='DROCE_VARS' ...]" >&2
	exit 2
fi
build=$1
out=$2
shift 2
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u '+%Y-%m-%d %H:%M UTC')
netem=${DROCE_BENCH_NETEM:---delay 20us --rate 2gbit --limit 2m --red 20k,200k,20%}

DROCE_BENCH_CSV=$out DROCE_BENCH_QPS=${DROCE_BENCH_QPS:-4} bash "$here/droce-bench-cc.sh" \
	"$build" "$@" | tee "$out/table.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
command -v gnuplot >/dev/null || {
	echo "gnuplot not installed (apt-get install gnuplot-nox): CSVs only"
	exit 0
}
fail=0
for rates in "$out"/*.csv; do
	name=$(basename "$rates" .csv)
	case $name in *.queue) continue ;; esac
	queue=$out/$name.queue.csv
	[ -s "$queue" ] || continue
	qps=$(head -n 1 "$rates" | tr ',' '\n' | grep -c '_limit_mbps')
	# the netem's clock starts before the processes connect: its series is shifted so that
	# the first millisecond with data towards the server (more than 10 frames) is at 0
	t0=$(awk -F, '$1 == "ab" && $3 > 10 { print $2; exit }' "$queue")
	awk -F, -v t0="${t0:-0}" '$1 == "ab" && $2 >= t0 {
		print ($2 - t0) / 1000 "," $3 "," $4 "," $5 "," $6 }' "$queue" >"$out/$name.ab.csv"
	tmax=$(tail -n 1 "$out/$name.ab.csv" | cut -d, -f1)
	# payload Mbit/s from packets per second: all but a message's last packet carry the
	# path MTU, the runtime's default 1024 bytes
	gnuplot <<GP || fail=1
set datafile separator ','
set terminal pngcairo size 1000,900 noenhanced
set output '$out/$name.png'
set multiplot layout 3,1 title "droce-bench-cc $name, $qps QP(s), droce-netem $netem ($commit, $date)" font ',10'
set key outside right
set xlabel 's'
set xrange [0:${tmax:-10}]
set ylabel 'Mbit/s'
plot for [i=0:$qps-1] '$rates' every ::1 using 1:(column(2+i)*1024*8/1e6) with lines title sprintf('QP %d sent', i), \
     for [i=0:$qps-1] '' every ::1 using 1:(column(2+$qps+i)) with lines dashtype 2 title sprintf('QP %d limiter', i)
set ylabel 'queue bytes'
plot '$out/$name.ab.csv' using 1:4 with lines title 'mean', '' using 1:5 with lines title 'largest'
set ylabel 'CE fraction'
set yrange [0:1]
plot '$out/$name.ab.csv' using 1:3 with lines title 'CE'
unset multiplot
GP
	echo "  -> $out/$name.png"
done
exit $fail
