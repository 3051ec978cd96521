#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The loss-recovery and incast bench (ninja -C BUILD research): droce-sim sweeps of one QP's
# 64 KiB WRITEs over independent and burst (Gilbert-Elliott) loss 0-10 % for each recovery mode
# (go-back-N, with the in-flight cap, with the cap and the RTO, and selective repeat with and
# without the cap when droce-sim has --recovery), the 99th-percentile completion time of 4 KiB
# WRITEs over loss, droce-sim-cc incasts N:1 up to 64 with and without DCQCN and the cap,
# each flow's rate and the queue over time at 16:1 and 64:1 with and without DCQCN, and the
# congestion-control cases against their targets (droce-cc-plots.sh, into OUT/cc).
# CSV and, with gnuplot, PNG into OUT (default BUILD/research); each title carries the commit
# and the date. Deterministic: the same commit and seeds give the same CSVs.
#   droce-research.sh BUILD [OUT]     DROCE_RESEARCH_SEEDS=N seeds per point (default 3)
build=$1
out=${2:-$build/research}
[ -n "$build" ] || { echo "usage: $0 BUILD [OUT]" >&2; exit 2; }
sim=$build/tests/sim/droce-sim
simcc=$build/tests/sim/droce-sim-cc
for b in "$sim" "$simcc"; do
	[ -x "$b" ] || { echo "$b not built: ninja -C $build" >&2; exit 2; }
done
mkdir -p "$out" || exit 2
seeds=${DROCE_RESEARCH_SEEDS:-3}
commit=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u '+%Y-%m-%d')
plot=1
command -v gnuplot >/dev/null || { echo "gnuplot not found: CSV only" >&2; plot=0; }

# Recovery modes, name=options; selective repeat once droce-sim offers it.
modes="gbn=--cap,off,--rto,off gbn_cap=--cap,on,--rto,off gbn_cap_rto=--cap,on,--rto,on"
if "$sim" --help | grep -q -- '--recovery'; then
	modes="$modes sr=--recovery,sr,--cap,off sr_cap=--recovery,sr,--cap,on"
fi
losses="0 0.1 0.5 1 2 5 10"

# One droce-sim run's figures: goodput (Gbit/s, to the last completion), packets sent,
# completion p50 and p99 (us). A run that mismatched stops the bench: its figures mean nothing.
figures() {
	line=$("$sim" "$@" --lat) || { echo "droce-sim $*: $line" >&2; exit 1; }
	echo "$line" | awk '{
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			v[kv[1]] = kv[2]
		}
		sub("ms", "", v["done"]); sub("us", "", v["lat_p50"]); sub("us", "", v["lat_p99"])
		printf "%.3f,%d,%.1f,%.1f\n", v["bytes"] * 8 / v["done"] / 1e6, v["pkts"],
			v["lat_p50"], v["lat_p99"]
	}'
}

# gp_png FILE WIDTH HEIGHT: the lines every plot here starts with; its own follow on stdin
gp_png() {
	printf "set datafile separator ','\nset terminal png size %s,%s noenhanced\nset output '%s'\n" \
		"$2" "$3" "$1"
}

# sweep NAME LOSS-OPTION SIZE MSGS: per-seed rows, then the mean per mode and loss
sweep() {
	name=$1 lopt=$2 size=$3 msgs=$4
	raw=$out/$name-runs.csv
	echo "mode,loss_pct,seed,goodput_gbps,pkts,lat_p50_us,lat_p99_us" >"$raw"
	for m in $modes; do
		mname=${m%%=*}
		mopts=$(echo "${m#*=}" | tr ',' ' ')
		for l in $losses; do
			s=1
			while [ "$s" -le "$seeds" ]; do
				case $lopt in
				burst) lo="--burst-loss $l:4" ;;
				*) lo="--loss $l" ;;
				esac
				# shellcheck disable=SC2086
				f=$(figures --seed "$s" --one-way --ops write --size "$size-$size" \
					--msgs "$msgs" --qps 1 --sq-depth 16 $lo $mopts) || exit 1
				echo "$mname,$l,$s,$f" >>"$raw"
				s=$((s + 1))
			done
		done
		echo "  $name: $mname done" >&2
	done
	# mean per (loss, mode): one column per mode, for gnuplot
	awk -F, -v modes="$(for m in $modes; do printf '%s ' "${m%%=*}"; done)" '
		NR > 1 { k = $2 SUBSEP $1; g[k] += $4; p[k] += $5; q[k] += $7; n[k]++; L[$2] = 1 }
		END {
			nm = split(modes, M, " ")
			printf "loss_pct"
			for (i = 1; i <= nm; i++)
				printf ",%s_gbps,%s_pkts,%s_p99_us", M[i], M[i], M[i]
			printf "\n"
			nl = split("'"$losses"'", LL, " ")
			for (j = 1; j <= nl; j++) {
				printf "%s", LL[j]
				for (i = 1; i <= nm; i++) {
					k = LL[j] SUBSEP M[i]
					printf ",%.3f,%.0f,%.1f", g[k] / n[k], p[k] / n[k], q[k] / n[k]
				}
				printf "\n"
			}
		}' "$raw" >"$out/$name.csv"
	echo "  -> $out/$name.csv ($raw)"
}

# plot_modes NAME COLUMN-OFFSET YLABEL TITLE: one line per mode from NAME.csv
plot_modes() {
	[ "$plot" = 1 ] || return 0
	name=$1 off=$2 ylabel=$3 title=$4
	nm=$(echo $modes | wc -w)
	names=$(for m in $modes; do printf '%s ' "${m%%=*}"; done)
	{
		gp_png "$out/$name-$off.png" 900 600
		cat <<GP
set title "$title ($commit, $date)" font ',10'
set xlabel 'loss %'
set ylabel '$ylabel'
set key top right
set grid
names = "$names"
plot for [i=1:$nm] '$out/$name.csv' using 1:(column(1 + 3 * (i - 1) + $off)) with linespoints title word(names, i)
GP
	} | gnuplot || exit 1
	echo "  -> $out/$name-$off.png"
}

echo "droce-research: $seeds seed(s) a point, modes: $modes"
sweep goodput_iid loss 65536 200
plot_modes goodput_iid 1 'goodput Gbit/s' 'one QP, 64 KiB WRITEs, 25 Gbit/s, 2 us: goodput vs independent loss'
plot_modes goodput_iid 2 'packets sent (12800 needed)' 'one QP, 64 KiB WRITEs: packets sent vs independent loss'
sweep goodput_burst burst 65536 200
plot_modes goodput_burst 1 'goodput Gbit/s' 'one QP, 64 KiB WRITEs: goodput vs Gilbert-Elliott loss (bursts of 4)'
sweep lat4k loss 4096 2000
plot_modes lat4k 3 'p99 completion us' 'one QP, 4 KiB WRITEs, 16 posted: 99th-percentile completion time vs loss'

# The live bench's path (1 Gbit/s, 20 us each way, local ACK timeout 14, the cap of a 1.5 ms
# round trip: 183 packets) at 1 % loss against netem's tail-drop queue, the four modes as
# droce-loss-live.py runs them: where the queue is shallower than selective repeat's window
# (16 x 64 KiB) the cap decides. Medians over the seeds; ninja research-live-queue is the same
# live.
qs=$out/queue_sim-runs.csv
queues="256 512 640 768 1024"
echo "queue_kib,mode,seed,goodput_gbps,pkts,lat_p50_us,lat_p99_us" >"$qs"
for q in $queues; do
	for m in gbn=--cap,off gbn_cap=--cap,on sr=--recovery,sr,--cap,off sr_cap=--recovery,sr,--cap,on; do
		s=1
		while [ "$s" -le "$seeds" ]; do
			# shellcheck disable=SC2046
			f=$(figures --seed "$s" --one-way --ops write --size 65536-65536 --msgs 200 \
				--qps 1 --sq-depth 16 --rate 1 --delay 20us --timeout 14 --cap-rtt 1500us \
				--qcap $((q * 1024)) --loss 1 $(echo "${m#*=}" | tr ',' ' ')) || exit 1
			echo "$q,${m%%=*},$s,$f" >>"$qs"
			s=$((s + 1))
		done
	done
	echo "  queue $q KiB done" >&2
done
awk -F, -v queues="$queues" 'NR > 1 { v[$1, $2, ++n[$1, $2]] = $4 }
	END {
		print "queue_kib,gbn_gbps,gbn_cap_gbps,sr_gbps,sr_cap_gbps"
		nq = split(queues, QL, " ")
		split("gbn gbn_cap sr sr_cap", M, " ")
		for (j = 1; j <= nq; j++) {
			printf "%s", QL[j]
			for (i = 1; i <= 4; i++) {
				k = QL[j] SUBSEP M[i]
				c = n[k]
				# median: sort the seeds of this point
				for (a = 1; a <= c; a++)
					w[a] = v[QL[j], M[i], a]
				for (a = 2; a <= c; a++)
					for (b = a; b > 1 && w[b - 1] > w[b]; b--) {
						t = w[b]; w[b] = w[b - 1]; w[b - 1] = t
					}
				printf ",%.3f", w[int((c + 1) / 2)]
			}
			printf "\n"
		}
	}' "$qs" >"$out/queue_sim.csv"
echo "  -> $out/queue_sim.csv ($qs)"
if [ "$plot" = 1 ]; then
	{
		gp_png "$out/queue_sim.png" 900 600
		cat <<GP
set title "droce-sim, 64 KiB WRITEs, 1 Gbit/s, 20 us, 1 % loss, cap 183 packets: median of $seeds seeds ($commit, $date)" font ',10'
set xlabel 'tail-drop queue KiB'
set ylabel 'goodput Gbit/s'
set yrange [0:1.1]
set key bottom right
set grid
plot for [i=2:5] '$out/queue_sim.csv' using 1:i with linespoints title columnhead(i)
GP
	} | gnuplot || exit 1
	echo "  -> $out/queue_sim.png"
fi

# Incast N:1 into one 25 Gbit/s port (RED marking 5-200 KB), 10 ms: per N, congestion control
# and loss recovery, link use, queue median and p99, drops, Jain's index, errors.
inc=$out/incast.csv
echo "flows,cc,cap,link_pct,queue_median_b,queue_p99_b,ce_pct,drops,errors" >"$inc"
for n in 2 4 8 16 32 64; do
	for cc in none dcqcn; do
		# off: no cap, no RTO (go-back-N as before); rto: the RTO alone; on: both
		for cap in off rto on; do
			case $cap in
			off) o="--cap off --rto off" ;;
			rto) o="--cap off --rto on" ;;
			*) o="--cap on --rto on" ;;
			esac
			# shellcheck disable=SC2086
			line=$("$simcc" --cc "$cc" --flows "$n" --gbps 25 --cnp-us 50 --ms 10 --seed "$n" \
				$o) || true
			echo "$line" | sed -n 's/.*link \([0-9.]*\) %, queue median \([0-9]*\) B p99 \([0-9]*\) B, CE \([0-9.]*\) %, drops \([0-9]*\),.*errors \([0-9]*\).*/\1,\2,\3,\4,\5,\6/p' |
				sed "s/^/$n,$cc,$cap,/" | tr -d '\n' >>"$inc"
			echo >>"$inc"
		done
	done
	echo "  incast $n:1 done" >&2
done
echo "  -> $inc"
if [ "$plot" = 1 ]; then
	{
		gp_png "$out/incast.png" 900 900
		cat <<GP
set multiplot layout 2,1 title "droce-sim-cc incast N:1, 25 Gbit/s, RED 5-200 KB, 10 ms ($commit, $date)" font ',10'
set logscale x 2
set xlabel 'senders'
set key outside right
set grid
set ylabel 'queue p99 bytes'
plot for [s in "none,off none,rto none,on dcqcn,off dcqcn,rto dcqcn,on"] '$inc' using 1:((strcol(2).",".strcol(3)) eq s ? column(6) : 1/0) with linespoints title s
set ylabel 'link %'
plot for [s in "none,off none,rto none,on dcqcn,off dcqcn,rto dcqcn,on"] '$inc' using 1:((strcol(2).",".strcol(3)) eq s ? column(4) : 1/0) with linespoints title s
unset multiplot
GP
	} | gnuplot || exit 1
	echo "  -> $out/incast.png"
fi

# Queue and per-flow rates over time: 16:1 and 64:1 with DCQCN and without (DCQCN's paper:
# flows converging to a fair share, the queue bounded), both with the cap; fairness.csv: the
# queue and Jain's index (over 200 us samples) from 2 ms on, median and lowest.
fair=$out/fairness.csv
echo "flows,cc,link_pct,queue_median_b,queue_p99_b,jain_median,jain_p10" >"$fair"
for n in 16 64; do
	for cc in none dcqcn; do
		csv=$out/incast$n-$cc.csv
		"$simcc" --cc "$cc" --flows "$n" --gbps 25 --cnp-us 50 --ms 20 --seed "$n" \
			--csv "$csv" --sample-us 200 >"$out/incast$n-$cc.txt" || true
		echo "  -> $csv"
		sed -n 's/.*link \([0-9.]*\) %, queue median \([0-9]*\) B p99 \([0-9]*\) B.*/\1,\2,\3/p' \
			"$out/incast$n-$cc.txt" | tr -d '\n' | sed "s/^/$n,$cc,/" >>"$fair"
		awk -F, '$1 ~ /^[0-9.]+$/ && $1 + 0 >= 2 { print $4 }' "$csv" | sort -g |
			awk '{ a[NR] = $1 } END { if (NR) printf ",%.3f,%.3f", a[int((NR + 1) / 2)],
				a[int(NR / 10) + 1] }' >>"$fair"
		echo >>"$fair"
		[ "$plot" = 1 ] || continue
		{
			gp_png "$out/incast$n-$cc.png" 1000 800
			cat <<GP
set multiplot layout 2,1 title "droce-sim-cc --cc $cc --flows $n --gbps 25 --cnp-us 50 ($commit, $date)" font ',10'
set xlabel 'ms'
set grid
set key off
set ylabel 'Mbit/s per flow'
plot for [i=0:$n-1] '$csv' using 1:5+2*i with lines
set ylabel 'queue bytes'
plot '$csv' using 1:2 with lines
unset multiplot
GP
		} | gnuplot || exit 1
		echo "  -> $out/incast$n-$cc.png"
	done
done
echo "  -> $fair"
# Congestion control against its targets: none, DCQCN (droce's and mlx5's values) and TIMELY,
# N = 1..16 at 25 and 2 Gbit/s: per case rate per flow, queue, CE fraction and Jain's index
# over time, and OUT/cc/table.txt with each case's figures and whether the targets hold.
sh "$(dirname "$0")/droce-cc-plots.sh" "$build" "$out/cc" >"$out/cc.log" || true
echo "  -> $out/cc/table.txt ($(grep -c '^[a-z0-9_]* *met ' "$out/cc/table.txt" 2>/dev/null) of 40 cases meet the targets)"
echo "droce-research: done ($out)"
