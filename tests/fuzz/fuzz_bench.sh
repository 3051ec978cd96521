#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Longer fuzzing: the libFuzzer targets (ASan + UBSan) each for a bounded time, then one line per
# target with its executions per second and the coverage its corpus reached (edges: libFuzzer's
# "cov", features: "ft"). Exit non-zero on any crash, trap or sanitizer report.
#   tests/fuzz/fuzz_bench.sh [SECONDS] [BUILD_DIR] [TARGET...]
# SECONDS per target (default $DROCE_FUZZ_BENCH_SECONDS or 120); BUILD_DIR as run_fuzz.sh's
# (default <repo>/build-fuzz);
# TARGET: rx (the engine's receive path), cm (the IB CM decoder), pcap (droce-pcap's reader),
# parse (the wire codec); default rx cm pcap. The corpus of each target is kept in
# BUILD_DIR/fuzz-corpus-TARGET, so later runs start where earlier ones stopped; a finding's
# input is in BUILD_DIR/fuzz-artifacts/, replayed with BUILD_DIR/tests/fuzz/fuzz_TARGET FILE.
# `ninja -C build fuzz-bench` runs it with the defaults.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
secs=${1:-${DROCE_FUZZ_BENCH_SECONDS:-120}}
dir=${2:-${DROCE_FUZZ_BUILD:-$repo/build-fuzz}}
shift $(($# > 2 ? 2 : $#))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(rx cm pcap)

case "$secs" in
'' | *[!0-9]*) echo "fuzz_bench.sh: SECONDS must be a whole number, got '$secs'" >&2; exit 2 ;;
esac
for t in "${targets[@]}"; do
	case "$t" in
	rx | cm | pcap | parse) ;;
	*) echo "fuzz_bench.sh: unknown target '$t' (rx, cm, pcap, parse)" >&2; exit 2 ;;
	esac
done
if ! command -v clang >/dev/null; then
	echo "fuzz_bench.sh: clang not found (apt-get install clang)" >&2
	exit 2
fi

if [ -f "$dir/build.ninja" ]; then
	CC=clang meson setup --reconfigure "$dir" "$repo" \
		-Dfuzz=true -Ddpdk=disabled -Dtests=disabled >/dev/null
else
	CC=clang meson setup "$dir" "$repo" -Dfuzz=true -Ddpdk=disabled -Dtests=disabled >/dev/null
fi
if ! ninja -C "$dir" $(printf 'tests/fuzz/fuzz_%s ' "${targets[@]}") >"$dir/ninja.log" 2>&1; then
	echo "fuzz_bench.sh: building the fuzz targets failed:" >&2
	grep -v '^\[' "$dir/ninja.log" | tail -30 >&2
	exit 1
fi

artifacts=$dir/fuzz-artifacts
mkdir -p "$artifacts"
rows=()
bad=0
for t in "${targets[@]}"; do
	seeds=$dir/fuzz-seeds-$t
	corpus=$dir/fuzz-corpus-$t
	log=$dir/fuzz_$t.log
	mkdir -p "$seeds" "$corpus"
	# each target's input: parse and rx a frame (rx with its flags), cm a MAD, pcap a file
	case "$t" in
	parse) /usr/bin/python3 "$here/seed_corpus.py" "$seeds" >/dev/null; max=4200 ;;
	rx) /usr/bin/python3 "$here/seed_corpus.py" --rx "$seeds" >/dev/null; max=9300 ;;
	cm) /usr/bin/python3 "$here/seed_corpus.py" --cm "$seeds" >/dev/null; max=512 ;;
	pcap) /usr/bin/python3 "$here/seed_corpus.py" --pcap "$seeds" >/dev/null; max=65536 ;;
	esac
	echo "== fuzz_$t for ${secs} s (log: $log)"
	rc=0
	# -close_fd_mask=1: the targets' own output (droce-pcap's lines) is not the figure
	# shellcheck disable=SC2086
	"$dir/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -max_len=$max \
		-print_final_stats=1 -close_fd_mask=1 -artifact_prefix="$artifacts/" \
		${DROCE_FUZZ_ARGS:-} "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ] ||
		grep -qE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|runtime error:' "$log"; then
		echo "fuzz_bench.sh: fuzz_$t FAILED (exit $rc); report:" >&2
		grep -A30 -E 'ERROR:|runtime error:|deadly signal' "$log" | head -60 >&2 || true
		bad=1
	fi
	# the last status line: "#N DONE cov: E ft: F corp: C/S lim: L exec/s: X rss: R"
	done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
	corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$done_line")
	rows+=("$(printf '%-6s %6s %10s %8s %8s %9s %14s' "$t" "$secs" "${execs:-?}" "${eps:-?}" \
		"${cov:-?}" "${ft:-?}" "${corp:-?}")")
done

printf '%-6s %6s %10s %8s %8s %9s %14s\n' target secs execs exec/s edges features corpus
printf '%s\n' "${rows[@]}"
if [ "$bad" -ne 0 ]; then
	ls "$artifacts" >&2 || true
	exit 1
fi
echo "fuzz_bench.sh: ${targets[*]}: ${secs} s each without a finding"
