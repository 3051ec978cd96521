#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-shim: unmodified perftest through the verbs shim next to droce-perf on
# the same link. Every process is started by droce-run with the same options (memif,
# --no-huge, droce-run's default lcores: the first two CPUs, the second one the poll loop; the
# shim needs that loop), so the only difference is the verbs layer:
#   latency    ib_write_lat -s 8 (t_typical, one way, doubled: a round trip)
#              vs droce-perf -o write -m lat -s 8 (round trip, p50), started the same way and
#              at its best (inline, one lcore a side: --lcores 0 | --lcores 1)
#   bandwidth  ib_write_bw -s 65536 -D S --report_gbits (BW average)
#              vs droce-perf -o write -s 65536 -D S (goodput), the same way and inline
# $DROCE_BENCH_REPS times interleaved (default 3), medians. A measurement, not a test: it fails
# only when a run does. Key=value figures go to $DROCE_BENCH_KV when set.
set -u
ME=droce-bench-shim
. '@SRC_DIR@/bench_lib.sh'
DR=${DROCE_RUN:-'@DROCE_RUN@'}
PERF=${DROCE_PERF:-'@PERF@'}
SECS=${DROCE_BENCH_SECONDS:-2}
LAT_N=${DROCE_BENCH_LAT_N:-5000}

for p in ib_write_lat ib_write_bw ss; do
	command -v $p >/dev/null || die "$p not found (Debian packages perftest, iproute2)"
done
[ -x "$DR" ] && [ -x "$PERF" ] || die "$DR or $PERF missing: build first (ninja -C BUILD)"

SOCK=/droce-bench-shim-$$
DR_ARGS=(-q --no-huge --eal --no-telemetry --socket "$SOCK")
# $LC (e.g. "--lcores 0" / "--lcores 1"): one lcore each, droce-perf then runs inline
srv_run() {
	SRV=("$DR" "${DR_ARGS[@]}" ${LC_S:-} --memif server --ip 198.18.0.1/24 -- stdbuf -oL "$@")
}
cli_run() {
	CLI=("$DR" "${DR_ARGS[@]}" ${LC_C:-} --memif client --ip 198.18.0.2/24 -- stdbuf -oL "$@")
}

declare -a IB_P50 IB_P99 PF_P50 PF_P99 PI_P50 PI_P99 IB_BW PF_BW PI_BW
for r in $(seq "$REPS"); do
	p=$(free_port)
	srv_run ib_write_lat -x 0 -p "$p" -s 8 -n "$LAT_N"
	cli_run ib_write_lat -x 0 -p "$p" -s 8 -n "$LAT_N" 127.0.0.1
	pair ib_lat "listen:$p"
	v=$(perftest_col "$TMP/ib_lat.cli" 't_typical[usec]')
	need t_typical "$v" ib_lat
	IB_P50+=("$(awk -v v="$v" 'BEGIN { print 2 * v }')")
	v=$(perftest_col "$TMP/ib_lat.cli" '99% percentile[usec]')
	need '99% percentile' "$v" ib_lat
	IB_P99+=("$(awk -v v="$v" 'BEGIN { print 2 * v }')")

	srv_run "$PERF" -p 0 --port-file "$TMP/port" -Q
	cli_run "$PERF" -p PORT -o write -m lat -s 8 -n "$LAT_N" -J -Q 127.0.0.1
	pair perf_lat "file:$TMP/port"
	v=$(perf_json "$TMP/perf_lat.cli" p50)
	need p50 "$v" perf_lat
	PF_P50+=("$v")
	PF_P99+=("$(perf_json "$TMP/perf_lat.cli" p99)")

	# droce-perf at its best: inline on one lcore a side (server CPU 0, client CPU 1)
	LC_S="--lcores 0" srv_run "$PERF" -p 0 --port-file "$TMP/port" -Q
	LC_C="--lcores 1" cli_run "$PERF" -p PORT -o write -m lat -s 8 -n "$LAT_N" -J -Q 127.0.0.1
	pair perf_lat_in "file:$TMP/port"
	v=$(perf_json "$TMP/perf_lat_in.cli" p50)
	need p50 "$v" perf_lat_in
	PI_P50+=("$v")
	PI_P99+=("$(perf_json "$TMP/perf_lat_in.cli" p99)")

	p=$(free_port)
	srv_run ib_write_bw -x 0 -p "$p" -s 65536 -D "$SECS" --report_gbits
	cli_run ib_write_bw -x 0 -p "$p" -s 65536 -D "$SECS" --report_gbits 127.0.0.1
	pair ib_bw "listen:$p"
	v=$(perftest_col "$TMP/ib_bw.cli" 'BW average[Gb/sec]')
	need 'BW average' "$v" ib_bw
	IB_BW+=("$v")

	srv_run "$PERF" -p 0 --port-file "$TMP/port" -Q
	cli_run "$PERF" -p PORT -o write -s 65536 -D "$SECS" -J -Q 127.0.0.1
	pair perf_bw "file:$TMP/port"
	v=$(perf_json "$TMP/perf_bw.cli" gbps)
	need gbps "$v" perf_bw
	PF_BW+=("$v")

	LC_S="--lcores 0" srv_run "$PERF" -p 0 --port-file "$TMP/port" -Q
	LC_C="--lcores 1" cli_run "$PERF" -p PORT -o write -s 65536 -D "$SECS" -J -Q 127.0.0.1
	pair perf_bw_in "file:$TMP/port"
	v=$(perf_json "$TMP/perf_bw_in.cli" gbps)
	need gbps "$v" perf_bw_in
	PI_BW+=("$v")
done

ib50=$(median "${IB_P50[@]}")
ib99=$(median "${IB_P99[@]}")
pf50=$(median "${PF_P50[@]}")
pf99=$(median "${PF_P99[@]}")
pi50=$(median "${PI_P50[@]}")
pi99=$(median "${PI_P99[@]}")
ibbw=$(median "${IB_BW[@]}")
pfbw=$(median "${PF_BW[@]}")
pibw=$(median "${PI_BW[@]}")
printf '%s (perftest %s through droce-run vs droce-perf, memif, --no-huge, lcores %s each side,' \
	"$ME" "$(dpkg-query -W -f '${Version}' perftest 2>/dev/null || echo '?')" \
	"$("$DR" -q -n --memif server --ip 198.18.0.1 -- true | sed -n 's/^DROCE_LCORES=//p')"
printf ' %s CPUs; median of %s interleaved runs)\n' "$(nproc)" "$REPS"
printf '%-46s %10s %10s\n' "latency (round trip)" "p50 us" "p99 us"
printf '%-46s %10.2f %10.2f\n' "ib_write_lat 8 B (2 x t_typical, 2 x 99%)" "$ib50" "$ib99"
printf '%-46s %10.2f %10.2f  shim x%s droce-perf\n' "droce-perf write lat 8 B, same link" "$pf50" \
	"$pf99" "$(ratio "$ib50" "$pf50")"
printf '%-46s %10.2f %10.2f  shim x%s droce-perf\n' "droce-perf write lat 8 B, inline (lcores 0 | 1)" \
	"$pi50" "$pi99" "$(ratio "$ib50" "$pi50")"
printf '%-46s %10s\n' "bandwidth" "Gbit/s"
printf '%-46s %10.3f  %s %% of droce-perf\n' "ib_write_bw 64 KiB (BW average)" "$ibbw" \
	"$(pct "$ibbw" "$pfbw")"
printf '%-46s %10.3f\n' "droce-perf write bw 64 KiB, same link" "$pfbw"
printf '%-46s %10.3f  shim %s %% of it\n' "droce-perf write bw 64 KiB, inline (lcores 0 | 1)" \
	"$pibw" "$(pct "$ibbw" "$pibw")"
kv shim_lat_p50 "$ib50"
kv shim_lat_p99 "$ib99"
kv shim_perf_lat_p50 "$pf50"
kv shim_perf_lat_p99 "$pf99"
kv shim_perf_inline_lat_p50 "$pi50"
kv shim_perf_inline_lat_p99 "$pi99"
kv shim_bw "$ibbw"
kv shim_perf_bw "$pfbw"
kv shim_perf_inline_bw "$pibw"
