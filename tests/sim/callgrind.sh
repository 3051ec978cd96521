#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per data packet spent in the engine, requester and responder side, measured with
# callgrind on droce-sim (one-way traffic from node 0 to node 1 on a clean link):
#   1. a 4 KiB RC WRITE stream, 2. a 64 B RC SEND stream.
# The engine's own functions are grouped by the source file they live in (stack/*.c): requester
# (req/comp/sq files), responder (resp/rq files), shared (everything else in stack/). Payload
# copies (memcpy/memmove) and the CRC (droce_crc32* / crc32 files) are excluded; so is the
# simulator itself. The figures are self costs summed per group, divided by data packets.
#
# usage: tests/sim/callgrind.sh [BUILD_DIR] [MSGS]
set -euo pipefail

BUILD=${1:-build}
MSGS=${2:-2000}
SIM="$BUILD/tests/sim/droce-sim"
OUT=$(mktemp -d /tmp/droce-callgrind.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }
[ -x "$SIM" ] || { echo "no $SIM: build first (ninja -C $BUILD)" >&2; exit 2; }

run() {
	local name=$1; shift
	local log="$OUT/$name.log" cg="$OUT/$name.cg"

	valgrind --tool=callgrind --callgrind-out-file="$cg" "$SIM" --seed 1 --one-way \
		--qps 1 --msgs "$MSGS" --sq-depth 64 "$@" >"$log" 2>"$OUT/$name.vg"
	grep -q ' OK$' "$log" || { echo "$name: run failed:"; cat "$log"; exit 1; }
	# Data packets: request packets carrying payload, from the run's summary line.
	local pkts
	pkts=$(sed -n 's/.* pkts=\([0-9]*\).*/\1/p' "$log")
	callgrind_annotate --inclusive=no --threshold=100 "$cg" 2>/dev/null |
		awk -v name="$name" -v pkts="$pkts" '
		# lines look like: "12,345 (1.23%)  /path/stack/droce_req.c:droce_req_next [/bin]"
		/^ *[0-9,]+ .*:/ {
			ir = $1; gsub(",", "", ir);
			fn = $0; sub(/^ *[0-9,]+ +(\([^)]*\) +)?/, "", fn); sub(/ \[.*$/, "", fn);
			file = fn; sub(/:.*/, "", file);
			func = fn; sub(/^[^:]*:/, "", func);
			if (func ~ /memcpy|memmove|memset/ || func ~ /^droce_crc32/ || file ~ /crc32/)
				{ excl += ir; next }
			if (file !~ /\/stack\//)
				next;
			base = file; sub(/.*\//, "", base);
			if (base ~ /req|comp|sq/) grp = "requester";
			else if (base ~ /resp|rq/) grp = "responder";
			else grp = "shared";
			sum[grp] += ir;
			top[grp "\t" base ":" func] += ir;
		}
		END {
			printf "%s: %d data packets\n", name, pkts;
			for (g in sum)
				printf "  %-10s %8.0f instructions/packet\n", g, sum[g] / pkts;
			printf "  excluded (memcpy/memset/crc32): %.0f instructions/packet\n", excl / pkts;
			n = 0;
			for (k in top) if (top[k] / pkts >= 20) {
				split(k, a, "\t");
				printf "    %-10s %-50s %6.0f\n", a[1], a[2], top[k] / pkts;
			}
		}' | sort -s -k1,1 | awk '1'
}

echo "# droce-sim under callgrind: $MSGS messages, one QP, clean 25 Gb/s link"
run write4k --qp-type rc --ops write --size 4096-4096 --mtu 4096
run send64 --qp-type rc --ops send --size 64-64 --mtu 1024
