#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per data packet in the engine, requester and responder apart, measured with callgrind
# on droce-sim: one QP, one-way traffic from node 0 to node 1 on a clean link, for
#   write4k: a 4 KiB RC WRITE stream (path MTU 4096: one packet per WRITE)
#   send64:  a 64 B RC SEND stream
# Each engine entry point is measured in its own callgrind run with --toggle-collect, so its
# figure is inclusive of everything it calls; payload copies (memcpy/memmove/memset) and the CRC
# (droce_crc32*) are subtracted by self cost. The simulator's I/O callbacks the engine calls are
# kept to a malloc and an append (sim_ep.c), a few dozen instructions per frame, and included.
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

# Engine entry points: requester side, responder side, and the shared receive demultiplexer.
REQ_FNS="droce_post_send droce_req_tx droce_comp_rx droce_comp_timer droce_cq_poll"
RESP_FNS="droce_resp_rx droce_resp_tx droce_post_recv"
ALL_FNS="droce_dev_rx_burst droce_dev_process $REQ_FNS $RESP_FNS"

# Collected instructions inside one entry point: prints "net copy_crc sim", where copy_crc is the
# self cost of memcpy/memmove/memset and droce_crc32*, sim that of the simulator's I/O callbacks
# (ep_* and the malloc they do; the engine itself never allocates), and net the rest.
measure() {
	local cg=$1
	callgrind_annotate --inclusive=no --auto=no --threshold=100 "$cg" 2>/dev/null | awk '
		/PROGRAM TOTALS/ { t = $1; gsub(",", "", t); total = t; next }
		/file:function/ { in_tab = 1; next }
		in_tab && /^ *[0-9,]+ / {
			ir = $1; gsub(",", "", ir);
			fn = $0; sub(/ \[.*$/, "", fn); sub(/^.*:/, "", fn);
			if (fn ~ /^__(memcpy|memmove|memset|mempcpy)/ || fn ~ /^(memcpy|memmove|memset)$/ ||
			    fn ~ /^droce_crc32/)
				excl += ir;
			else if (fn ~ /^ep_/ || fn ~ /^(_int_)?(malloc|free|realloc)$/ ||
				 fn ~ /^(malloc_consolidate|tcache|unlink_chunk)/)
				sim += ir;
		}
		END { printf "%d %d %d\n", total - excl - sim, excl, sim }'
}

run() {
	local name=$1; shift
	local args=(--seed 1 --one-way --qps 1 --msgs "$MSGS" --sq-depth 64 "$@")
	local line pkts fn

	line=$("$SIM" "${args[@]}")
	case "$line" in *" OK") ;; *) echo "$name: run failed: $line"; exit 1 ;; esac
	# Request packets on a clean link: every one carries data here.
	pkts=$(sed -n 's/.* pkts=\([0-9]*\).*/\1/p' <<<"$line")
	declare -A net excl simcb
	for fn in $ALL_FNS; do
		valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.$fn" --collect-atstart=no \
			--toggle-collect="$fn" "$SIM" "${args[@]}" >/dev/null 2>&1
		read -r net[$fn] excl[$fn] simcb[$fn] < <(measure "$OUT/$name.$fn")
	done
	local req=0 resp=0 rexcl=0 pexcl=0
	for fn in $REQ_FNS; do req=$((req + net[$fn])); rexcl=$((rexcl + excl[$fn])); done
	for fn in $RESP_FNS; do resp=$((resp + net[$fn])); pexcl=$((pexcl + excl[$fn])); done
	# The receive path outside comp_rx/resp_rx: parse + ICRC check + QP lookup.
	local demux=$((net[droce_dev_rx_burst] - net[droce_comp_rx] - net[droce_resp_rx]))
	local sched=$((net[droce_dev_process] - net[droce_req_tx] - net[droce_resp_tx] -
		net[droce_comp_timer]))

	printf '%s: %s, %d data packets\n' "$name" "$*" "$pkts"
	printf '  requester  %6d instr/packet  (' $((req / pkts))
	for fn in $REQ_FNS; do printf ' %s=%d' "$fn" $((net[$fn] / pkts)); done
	printf ' )\n  responder  %6d instr/packet  (' $((resp / pkts))
	for fn in $RESP_FNS; do printf ' %s=%d' "$fn" $((net[$fn] / pkts)); done
	printf ' )\n'
	printf '  rx demux (parse, ICRC framing, QP lookup; both nodes) %d, process() scheduling %d\n' \
		$((demux / pkts)) $((sched / pkts))
	printf '  excluded memcpy/memset/crc32: requester %d, responder %d, all rx %d instr/packet\n' \
		$((rexcl / pkts)) $((pexcl / pkts)) $((excl[droce_dev_rx_burst] / pkts))
	printf '  excluded simulator callbacks (tx_alloc malloc, tx_send): %d instr/packet\n' \
		$(((simcb[droce_dev_process] + simcb[droce_dev_rx_burst]) / pkts))
}

echo "# droce-sim under callgrind: $MSGS messages, one QP, one-way, clean 25 Gb/s link"
run write4k --qp-type rc --ops write --size 4096-4096 --mtu 4096
run send64 --qp-type rc --ops send --size 64-64 --mtu 1024
