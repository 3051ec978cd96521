#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-scale: how the engine's costs grow with QPs, MRs and send queue depth, as curves.
#   1. droce-bench-scale (engine only, one thread): qps.csv, mrs.csv, sq.csv (see its header);
#   2. callgrind (deterministic): instructions per 64 B WRITE message through both engines with
#      1, 1024 and 16384 QP pairs in round robin (cg_qps.csv: a flat curve is no per-QP cost),
#      the ICRC of a 64 B WRITE frame in full, from the QP's base and through the receive cache
#      (droce-bench-icrc, cg_icrc.csv),
#      and the engine's instructions per frame, copy and CRC excluded (tests/sim/callgrind.sh);
#   3. live, two droce processes over memif through droce-run (skipped with
#      DROCE_BENCH_SCALE_LIVE=0): droce-perf -q N (N = 1 .. $DROCE_BENCH_SCALE_QPS, 64 B and
#      64 KiB WRITEs round robin over all N QPs with 64 in flight over all of them: aggregate
#      rate, p99 post-to-completion, resident bytes per QP, create+connect time) into
#      perf_qps.csv, and 64 B WRITEs again with 64 in flight a QP (droce-perf's default);
#      the goal, 1000 QPs against 1 (droce-perf -q 1 and -q 1000, 64 WRs in flight a QP,
#      $DROCE_BENCH_SCALE_GOAL_REPS interleaved rounds, default 5) into goal_1000.csv;
#      unmodified ib_write_bw -q N (64 B and 64 KiB WRITEs over N QPs, N = 1 ..
#      $DROCE_BENCH_SCALE_LIVE_QPS, default 1024: perftest gives each QP its own buffer) into
#      live_qps.csv, and unmodified cmtime -c N (rdma_cm: create, resolve, connect,
#      disconnect, destroy; N = 100 .. $DROCE_BENCH_SCALE_CONNS, default 1000) into live_cm.csv;
#   4. one PNG per curve with gnuplot, titled with the commit and date.
# Output in $DROCE_BENCH_SCALE_OUT (default BUILD/tools/bench/scale). A measurement, not a test:
# it fails only when a run does.
set -u
ME=droce-bench-scale
. '@SRC_DIR@/bench_lib.sh'
SRC='@SRC_DIR@'
BENCH='@BENCH_DIR@/droce-bench-scale'
ICRC='@BENCH_DIR@/droce-bench-icrc'
SIM='@SIM@'
C2C='@C2C@'
OUT=${DROCE_BENCH_SCALE_OUT:-'@BENCH_DIR@/scale'}
MAXQ=${DROCE_BENCH_SCALE_QPS:-16384}
MAXR=${DROCE_BENCH_SCALE_MRS:-100000}
MSGS=${DROCE_BENCH_SCALE_MSGS:-200000}
LIVE=${DROCE_BENCH_SCALE_LIVE:-1}
LIVE_QPS=${DROCE_BENCH_SCALE_LIVE_QPS:-1024}
CONNS=${DROCE_BENCH_SCALE_CONNS:-1000}
GOAL_REPS=${DROCE_BENCH_SCALE_GOAL_REPS:-5}
PERF_QPS=${DROCE_BENCH_SCALE_PERF_QPS:-1 4 16 64 256 1000 4096 16384}
PERF=${DROCE_PERF:-'@PERF@'}
SECS=${DROCE_BENCH_SECONDS:-2}
DR=${DROCE_RUN:-'@DROCE_RUN@'}
BOUND_ENGINE=${DROCE_BENCH_SCALE_BOUND:-900}	# the engine curves and callgrind (bench_lib: BOUND)
[ -x "$BENCH" ] || die "$BENCH missing: build first (ninja -C BUILD)"
mkdir -p "$OUT" || die "cannot create $OUT"
REV=$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$SRC" diff --quiet HEAD 2>/dev/null || REV="$REV+changes"
STAMP="commit $REV, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "$ME: $STAMP, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

timeout "$BOUND_ENGINE" "$BENCH" -o "$OUT" -q "$MAXQ" -r "$MAXR" -m "$MSGS" || die "droce-bench-scale failed"
"$ICRC" -n 2000000 || die "droce-bench-icrc failed"

if command -v valgrind >/dev/null; then
	# cache simulation too: D1 as the host's, the last level a 1 MiB L2 (callgrind takes the
	# VM's reported LL, 512 MiB here, which would hide every miss)
	echo "qps,instr_per_msg,d1_miss_per_msg,l2_miss_per_msg" > "$OUT/cg_qps.csv"
	for n in 1 1024 16384; do
		[ "$n" -le "$MAXQ" ] || continue
		timeout "$BOUND_ENGINE" valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" \
			--cache-sim=yes --LL=1048576,16,64 \
			--collect-atstart=no --toggle-collect=rr_run "$BENCH" -p "$n" -m 20000 \
			>/dev/null 2>&1 || die "callgrind at $n QPs failed"
		# summary: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
		read -r ir d1 ll < <(awk '/^summary:/ { print $2, $6 + $7, $9 + $10 }' "$OUT/cg.out")
		echo "$n,$((ir / 20000)),$(ratio "$d1" 20000 %.1f),$(ratio "$ll" 20000 %.1f)" >> "$OUT/cg_qps.csv"
		printf '  callgrind: %5d QP pairs, per 64 B WRITE (post, 2 engines, completion): %d instructions, %s D1 misses, %s L2 misses (1 MiB)\n' \
			"$n" $((ir / 20000)) "$(ratio "$d1" 20000 %.1f)" "$(ratio "$ll" 20000 %.1f)"
	done
	rm -f "$OUT/cg.out"
	# the ICRC of a 64 B WRITE frame: full, from the QP's base (transmit), the receive cache
	echo "icrc,instr_per_frame" > "$OUT/cg_icrc.csv"
	for f in full base cached; do
		timeout "$BOUND_ENGINE" valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" \
			--collect-atstart=no --toggle-collect="icrc_$f*" "$ICRC" -n 100000 \
			>/dev/null 2>&1 || die "callgrind of droce-bench-icrc failed"
		ir=$(callgrind_annotate "$OUT/cg.out" 2>/dev/null |
			awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
		echo "$f,$((ir / 100000))" >> "$OUT/cg_icrc.csv"
	done
	rm -f "$OUT/cg.out"
	awk -F, 'NR > 1 { v[$1] = $2 } END { printf "  callgrind: ICRC of a 64 B WRITE frame (120 B from IPv4), instructions: full %d, per-QP base (transmit) %d, receive cache %d\n", v["full"], v["base"], v["cached"] }' "$OUT/cg_icrc.csv"
	if [ -x "$SIM" ]; then
		bash "$SRC/../../tests/sim/callgrind.sh" "$(dirname "$(dirname "$(dirname "$SIM")")")" 2000 |
			tee "$OUT/cg_frame.txt" || die "tests/sim/callgrind.sh failed"
	fi
else
	echo "$ME: valgrind not installed: no instruction counts" >&2
fi

# droce-run's two processes over memif, room for n QPs (and cmtime's two CQs per connection)
SOCK=/droce-bench-scale-$$
live_run() {	# live_run srv|cli N CMD...: sets SRV or CLI
	local side=$1 n=$2
	shift 2
	local args=(-q --no-huge --eal --no-telemetry --socket "$SOCK"
		--set max_qp=$((n + 16)) --set max_cq=$((2 * n + 16)) --set max_mr=$((n + 16))
		--set max_ah=$((n + 16)) --set max_pd=$((n + 16)) --set start_wait_ms=20000
		${LIVE_LCORES:+--lcores "$LIVE_LCORES"})
	if [ "$side" = srv ]; then
		SRV=("$DR" "${args[@]}" --memif server --ip 198.18.0.1/24 -- stdbuf -oL "$@")
	else
		CLI=("$DR" "${args[@]}" --memif client --ip 198.18.0.2/24 -- stdbuf -oL "$@")
	fi
}
# droce-perf, N QPs, 64 WRs in flight over all of them (each QP's window 64 / N, at least 1):
# the same offered load spread over more QPs, so a per-QP cost shows as a falling curve
perf_point() {	# perf_point NAME N SIZE: droce-perf server lcore 0, client lcore 1
	local name=$1 n=$2 d=$(($2 >= 64 ? 1 : 64 / $2))
	local BOUND=$((BOUND + $2 / 128))	# set-up takes about 0.5 ms a QP here, both sides
	LIVE_LCORES=0 live_run srv "$n" "$PERF" -p 0 --port-file "$TMP/port" -Q
	LIVE_LCORES=1 live_run cli "$n" "$PERF" -p PORT -J -Q -o write -q "$n" -t "$d" --max-outstanding 64 \
		-s "$3" -D "$SECS" 127.0.0.1
	pair "$name" "file:$TMP/port"
}
# the same with each QP's own window of 64 (droce-perf's default, as perftest's tx depth): the
# load grows with the QPs, as when each of N connections is busy; both sides' buffers 4 MiB
perf_point_win() {	# perf_point_win NAME N SIZE [MORE_SECONDS]
	local name=$1 n=$2
	local BOUND=$((BOUND + $2 / 128 + ${4:-0}))
	LIVE_LCORES=0 live_run srv "$n" "$PERF" -p 0 --port-file "$TMP/port" -Q
	LIVE_LCORES=1 live_run cli "$n" "$PERF" -p PORT -J -Q -o write -q "$n" -s "$3" -D "$SECS" \
		--buf-mb 4 127.0.0.1
	pair "$name" "file:$TMP/port"
}
if [ "$LIVE" != 0 ] && [ -x "$DR" ] && [ -x "$PERF" ]; then
	# rss_per_qp: the client's resident bytes beyond the 1-QP run's, per added QP
	echo "qps,write64_mmsg,write64_p99_us,write64k_gbps,write64k_p99_us,rss_per_qp,connect_ms,write64_win64_mmsg" \
		> "$OUT/perf_qps.csv"
	rss1=
	for n in $PERF_QPS; do
		[ "$n" -le "$MAXQ" ] || continue
		perf_point "pf64_$n" "$n" 64
		m=$(perf_json "$TMP/pf64_$n.cli" mmsg_per_s)
		need mmsg_per_s "$m" "pf64_$n"
		m99=$(perf_json "$TMP/pf64_$n.cli" p99)
		rss=$(perf_json "$TMP/pf64_$n.cli" rss)
		[ -n "$rss1" ] || { rss1=$rss; n1=$n; }
		rss=$([ "$n" -gt "$n1" ] && echo $(((rss - rss1) / (n - n1))) || echo '')
		con=$(perf_json "$TMP/pf64_$n.cli" connect_ms)
		perf_point "pf64k_$n" "$n" 65536
		g=$(perf_json "$TMP/pf64k_$n.cli" gbps)
		need gbps "$g" "pf64k_$n"
		g99=$(perf_json "$TMP/pf64k_$n.cli" p99)
		perf_point_win "pfw64_$n" "$n" 64
		w=$(perf_json "$TMP/pfw64_$n.cli" mmsg_per_s)
		need mmsg_per_s "$w" "pfw64_$n"
		echo "$n,$m,$m99,$g,$g99,$rss,$con,$w" >> "$OUT/perf_qps.csv"
		printf '  droce-perf -q %5d: 64 B %s M/s (p99 %s us), 64 KiB %s Gbit/s (p99 %s us), %s B RSS a QP, connected in %s ms; 64 B with 64 a QP %s M/s\n' \
			"$n" "$m" "$m99" "$g" "$g99" "${rss:--}" "$con" "$w"
	done
	awk -F, 'NR == 2 { m1 = $2; g1 = $4 } $1 == 1000 && m1 > 0 {
		printf "  droce-perf 1000 QPs against 1, 64 in flight over all QPs: 64 B %.0f %%, 64 KiB %.0f %%\n",
			100 * $2 / m1, 100 * $4 / g1 }' "$OUT/perf_qps.csv"
else
	echo "$ME: droce-perf curve skipped (DROCE_BENCH_SCALE_LIVE=0, or no droce-run or droce-perf)" >&2
fi
# The goal, 1000 active QPs against 1: droce-perf -q 1 and -q 1000 with its default window
# (64 WRs a QP, as perftest gives each QP its tx depth), 64 B and 64 KiB, in GOAL_REPS
# interleaved rounds (the host's noise moves runs minutes apart by several times), medians.
# Both copy from and into the same 4 MiB a side (--buf-mb 4, one QP's 64 x 64 KiB): what is
# compared is the number of QPs, not a 4 MiB working set against 256 MiB of DRAM.
if [ "$LIVE" != 0 ] && [ -x "$DR" ] && [ -x "$PERF" ] && [ "$GOAL_REPS" -gt 0 ]; then
	echo "round,qps,size,mmsg,gbps,retrans,placement" > "$OUT/goal_1000.csv"
	for ((r = 1; r <= GOAL_REPS; r++)); do
		for size in 64 65536; do
			before=$(c2c)
			order="1 1000"
			[ $((r % 2)) = 1 ] || order="1000 1"	# which goes first alternates
			for n in $order; do
				# 30 s more: a 1000-QP 64 KiB run drains 4 GB at the end
				perf_point_win "goal_${n}_$size" "$n" "$size" 30
			done
			tag=$(placement "$before" "$(c2c)")	# the CPUs' placement moves every rate
			for n in 1 1000; do
				m=$(perf_json "$TMP/goal_${n}_$size.cli" mmsg_per_s)
				need mmsg_per_s "$m" "goal_${n}_$size"
				g=$(perf_json "$TMP/goal_${n}_$size.cli" gbps)
				x=$(perf_json "$TMP/goal_${n}_$size.cli" retrans)
				echo "$r,$n,$size,$m,$g,$x,$tag" >> "$OUT/goal_1000.csv"
			done
		done
	done
	/usr/bin/python3 - "$OUT/goal_1000.csv" <<'EOF' || die "goal_1000.csv: no medians"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for size, col, unit in (("64", "mmsg", "M/s"), ("65536", "gbps", "Gbit/s")):
    v = {n: [float(r[col]) for r in rows if r["size"] == size and r["qps"] == n]
         for n in ("1", "1000")}
    m1, m1000 = statistics.median(v["1"]), statistics.median(v["1000"])
    print("  goal: %s B WRITEs, 64 a QP in flight, medians of %d rounds: 1 QP %.3f %s "
          "(%.3f-%.3f), 1000 QPs %.3f (%.3f-%.3f): %.0f %% (goal >= 80 %%)" %
          (size, len(v["1"]), m1, unit, min(v["1"]), max(v["1"]), m1000, min(v["1000"]),
           max(v["1000"]), 100 * m1000 / m1))
    tags = [r["placement"] for r in rows if r["size"] == size and r["qps"] == "1"]
    print("    per round, 1000 QPs / 1 QP: " + " ".join(
        "%.0f %% (%s)" % (100 * b / a, t) for a, b, t in zip(v["1"], v["1000"], tags)))
EOF
fi
if [ "$LIVE" != 0 ] && [ -x "$DR" ] && command -v ib_write_bw >/dev/null; then
	echo "qps,write64_mmsg,write64k_gbps" > "$OUT/live_qps.csv"
	for ((n = 1; n <= LIVE_QPS; n *= 4)); do
		p=$(free_port)
		live_run srv "$n" ib_write_bw -x 0 -p "$p" -q "$n" -s 64 -D "$SECS"
		live_run cli "$n" ib_write_bw -x 0 -p "$p" -q "$n" -s 64 -D "$SECS" 127.0.0.1
		pair "bw64_$n" "listen:$p"
		m=$(perftest_col "$TMP/bw64_$n.cli" 'MsgRate[Mpps]')
		need MsgRate "$m" "bw64_$n"
		p=$(free_port)
		# perftest keeps 128 WRs a QP in flight (8 GiB at 1024 QPs) and signals one in 100:
		# the QPs' first completions come together seconds in, after a -D 2 window closed
		d=$((SECS + n / 128))
		live_run srv "$n" ib_write_bw -x 0 -p "$p" -q "$n" -s 65536 -D "$d" --report_gbits
		live_run cli "$n" ib_write_bw -x 0 -p "$p" -q "$n" -s 65536 -D "$d" \
			--report_gbits 127.0.0.1
		pair "bw64k_$n" "listen:$p"
		g=$(perftest_col "$TMP/bw64k_$n.cli" 'BW average[Gb/sec]')
		need 'BW average' "$g" "bw64k_$n"
		echo "$n,$m,$g" >> "$OUT/live_qps.csv"
		printf '  ib_write_bw -q %5d: 64 B %s M/s, 64 KiB %s Gbit/s\n' "$n" "$m" "$g"
	done
else
	echo "$ME: live curves skipped (DROCE_BENCH_SCALE_LIVE=0, or no droce-run or perftest)" >&2
fi
if [ "$LIVE" != 0 ] && [ -x "$DR" ] && command -v cmtime >/dev/null; then
	# cmtime's steps; the last column is microseconds per connection
	echo "conns,create_per_s,connect_per_s,disconnect_per_s,destroy_per_s" > "$OUT/live_cm.csv"
	for ((n = 100; n <= CONNS; n *= 10)); do
		p=$(free_port)
		SRV_KILL=1	# cmtime's server waits for more; SIGINT once the client is done
		live_run srv "$n" cmtime -b 198.18.0.1 -p "$p" -c "$n"
		live_run cli "$n" cmtime -s 198.18.0.1 -p "$p" -c "$n"
		pair "cm_$n" "sleep:2"
		SRV_KILL=0
		rate() {
			awk -v k="$1" -F: '$1 ~ "^"k" *$" { split($2, f, " "); u = f[4];
				if (u > 0) printf "%.0f", 1e6 / u }' "$TMP/cm_$n.cli"
		}
		c=$(rate 'create id'); k=$(rate connect); d=$(rate disconnect); x=$(rate destroy)
		need connect "$k" "cm_$n"
		! grep -q -i "failure\|error" "$TMP/cm_$n.cli" "$TMP/cm_$n.srv" ||
			die "cm_$n: cmtime reported failures: $(grep -i -m3 "failure\|error" "$TMP/cm_$n.cli")"
		echo "$n,$c,$k,$d,$x" >> "$OUT/live_cm.csv"
		printf '  cmtime -c %5d: per second: create %s, connect %s, disconnect %s, destroy %s\n' \
			"$n" "$c" "$k" "$d" "$x"
	done
fi

command -v gnuplot >/dev/null || die "gnuplot not installed (Debian package gnuplot-nox)"
gnuplot <<GP || die "gnuplot failed"
set datafile separator ","
set terminal pngcairo size 900,600 noenhanced
set key top left
set grid
set logscale x 2
set output "$OUT/qps.png"
set title "droce engine alone: QPs (round robin, one outstanding each); $STAMP"
set xlabel "QPs (pairs)"
set ylabel "M 64 B WRITEs/s, Gbit/s 64 KiB"
set y2label "connects, teardowns (M/s)"
set y2tics
set ytics nomirror
plot "$OUT/qps.csv" using 1:6 with linespoints title "64 B WRITEs, M/s", \
     "" using 1:8 with linespoints title "64 KiB WRITEs, Gbit/s", \
     "" using 1:(\$2/1e6) axes x1y2 with linespoints title "QP pairs created+connected, M/s", \
     "" using 1:(\$3/1e6) axes x1y2 with linespoints title "QP pairs destroyed, M/s"
unset y2label
unset y2tics
set ytics mirror
set output "$OUT/qps_mem_lat.png"
set title "droce engine alone: memory and p99 per QP; $STAMP"
set logscale y 10
set ylabel "bytes per QP / p99 ns"
plot "$OUT/qps.csv" using 1:4 with linespoints title "heap bytes per QP", \
     "" using 1:5 with linespoints title "RSS bytes per QP", \
     "" using 1:7 with linespoints title "64 B p99 post-to-completion, ns", \
     "" using 1:9 with linespoints title "64 KiB p99 post-to-completion, ns"
unset logscale y
set output "$OUT/mrs.png"
set logscale x 10
set title "droce engine alone: 64 B WRITEs to random MRs; $STAMP"
set xlabel "registered MRs at the target"
set ylabel "M WRITEs/s"
plot "$OUT/mrs.csv" using 1:3 with linespoints title "64 B WRITEs, M/s"
set output "$OUT/sq.png"
set logscale x 2
set title "droce engine alone: one QP, send queue depth; $STAMP"
set xlabel "WRITEs outstanding (send queue depth)"
plot "$OUT/sq.csv" using 1:2 with linespoints title "64 B WRITEs, M/s"
GP
[ -s "$OUT/cg_qps.csv" ] && gnuplot <<GP
set datafile separator ","
set terminal pngcairo size 900,600 noenhanced
set output "$OUT/cg_qps.png"
set logscale x 2
set yrange [0:*]
set grid
set title "per 64 B WRITE (callgrind) by QP pairs; $STAMP"
set xlabel "QP pairs"
set ylabel "instructions"
set y2label "cache misses (simulated)"
set y2tics
set y2range [0:*]
set ytics nomirror
plot "$OUT/cg_qps.csv" using 1:2 with linespoints title "instructions per message", \
     "" using 1:3 axes x1y2 with linespoints title "D1 misses per message", \
     "" using 1:4 axes x1y2 with linespoints title "L2 (1 MiB) misses per message"
GP
if [ -s "$OUT/live_qps.csv" ] && [ "$(wc -l < "$OUT/live_qps.csv")" -gt 1 ]; then
	gnuplot <<GP || die "gnuplot failed"
set datafile separator ","
set terminal pngcairo size 900,600 noenhanced
set output "$OUT/live_qps.png"
set logscale x 2
set yrange [0:*]
set grid
set title "ib_write_bw -q N over droce (memif, droce-run); $STAMP"
set xlabel "QPs"
set ylabel "M 64 B WRITEs/s, Gbit/s 64 KiB"
plot "$OUT/live_qps.csv" using 1:2 with linespoints title "64 B, M msgs/s", \
     "" using 1:3 with linespoints title "64 KiB, Gbit/s"
GP
fi
if [ -s "$OUT/perf_qps.csv" ] && [ "$(wc -l < "$OUT/perf_qps.csv")" -gt 1 ]; then
	gnuplot <<GP || die "gnuplot failed"
set datafile separator ","
set terminal pngcairo size 900,600 noenhanced
set logscale x 2
set grid
set key top right
set output "$OUT/perf_qps.png"
set title "droce-perf -q N over memif; $STAMP"
set xlabel "QPs"
set ylabel "M 64 B WRITEs/s, Gbit/s 64 KiB"
set yrange [0:*]
plot "$OUT/perf_qps.csv" using 1:2 with linespoints title "64 B, 64 in flight over all QPs, M msgs/s", \
     "" using 1:4 with linespoints title "64 KiB, 64 in flight over all QPs, Gbit/s", \
     "" using 1:8 with linespoints title "64 B, 64 in flight a QP, M msgs/s"
set output "$OUT/perf_qps_cost.png"
set title "droce-perf -q N: p99, memory, connection; $STAMP"
set logscale y 10
set yrange [*:*]
set ylabel "us / bytes / ms"
plot "$OUT/perf_qps.csv" using 1:3 with linespoints title "64 B p99 post to completion, us", \
     "" using 1:5 with linespoints title "64 KiB p99 post to completion, us", \
     "" using 1:6 with linespoints title "resident bytes per QP (client)", \
     "" using 1:7 with linespoints title "N QPs created, traded, connected, ms"
GP
fi
if [ -s "$OUT/live_cm.csv" ] && [ "$(wc -l < "$OUT/live_cm.csv")" -gt 1 ]; then
	gnuplot <<GP || die "gnuplot failed"
set datafile separator ","
set terminal pngcairo size 900,600 noenhanced
set output "$OUT/live_cm.png"
set logscale x 10
set yrange [0:*]
set grid
set key top left
set title "cmtime -c N over droce's librdmacm (memif, droce-run); $STAMP"
set xlabel "connections"
set ylabel "per second"
plot "$OUT/live_cm.csv" using 1:2 with linespoints title "create id", \
     "" using 1:3 with linespoints title "connect", \
     "" using 1:4 with linespoints title "disconnect", \
     "" using 1:5 with linespoints title "destroy"
GP
fi
echo "$ME: CSV and PNG in $OUT"
