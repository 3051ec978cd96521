#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer targets in their own clang build dir, seed them with every pcap frame, and
# fuzz for a bounded time. Exit non-zero on any crash, trap or sanitizer report.
#   tests/fuzz/run_fuzz.sh [SECONDS] [BUILD_DIR]     (default 60 s, BUILD_DIR=$DROCE_FUZZ_BUILD
#                                                     or <repo>/build-fuzz)
# Then the other targets (receive path, CM decoder, pcap reader) briefly through fuzz_bench.sh,
# $DROCE_FUZZ_EXTRA_SECONDS each (default 10; 0 skips them).
# Extra libFuzzer flags: DROCE_FUZZ_ARGS="-max_len=4200 ...". A crash leaves its input in
# BUILD_DIR/fuzz-artifacts/; replay it with: BUILD_DIR/tests/fuzz/fuzz_parse FILE
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
secs=${1:-60}
dir=${2:-${DROCE_FUZZ_BUILD:-$repo/build-fuzz}}

case "$secs" in
'' | *[!0-9]*) echo "run_fuzz.sh: SECONDS must be a whole number, got '$secs'" >&2; exit 2 ;;
esac
if ! command -v clang >/dev/null; then
	echo "run_fuzz.sh: clang not found (apt-get install clang)" >&2
	exit 2
fi

# Its own build dir: clang, sanitizers, no DPDK and no CUnit needed.
if [ -f "$dir/build.ninja" ]; then
	CC=clang meson setup --reconfigure "$dir" "$repo" \
		-Dfuzz=true -Ddpdk=disabled -Dtests=disabled >/dev/null
else
	CC=clang meson setup "$dir" "$repo" -Dfuzz=true -Ddpdk=disabled -Dtests=disabled >/dev/null
fi
# ninja prints a failed build on stdout: show it, or the run ends without a word
if ! ninja -C "$dir" tests/fuzz/fuzz_parse >"$dir/ninja.log" 2>&1; then
	echo "run_fuzz.sh: building the fuzz targets failed:" >&2
	grep -v '^\[' "$dir/ninja.log" | tail -30 >&2
	exit 1
fi

seeds=$dir/fuzz-seeds
corpus=$dir/fuzz-corpus
artifacts=$dir/fuzz-artifacts
mkdir -p "$seeds" "$corpus" "$artifacts"
/usr/bin/python3 "$here/seed_corpus.py" "$seeds"

log=$dir/fuzz_parse.log
echo "== fuzz_parse for ${secs} s (log: $log)"
rc=0
# New inputs go to fuzz-corpus; the seeds are only read.
# shellcheck disable=SC2086
"$dir/tests/fuzz/fuzz_parse" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" ${DROCE_FUZZ_ARGS:-} "$corpus" "$seeds" >"$log" 2>&1 || rc=$?

# The run's figures: executions, speed, coverage at the end.
grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" || true

if [ "$rc" -ne 0 ] ||
	grep -qE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)|runtime error:' "$log"; then
	echo "run_fuzz.sh: FAILED (exit $rc); report:" >&2
	grep -A30 -E 'ERROR:|runtime error:' "$log" | head -60 >&2 || true
	ls "$artifacts" >&2 || true
	exit 1
fi
echo "run_fuzz.sh: fuzz_parse ran ${secs} s without a finding"

extra=${DROCE_FUZZ_EXTRA_SECONDS:-10}
if [ "$extra" != 0 ]; then
	"$here/fuzz_bench.sh" "$extra" "$dir" rx cm pcap
fi
