#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Byte-for-byte comparison of two builds' codecs: the frames droce-sim's engines send (a digest
# of every frame, in order, per scenario and seed) and what droce-pcap decodes from the
# repository's captures. For a change meant to leave the wire alone (a refactor of the parser or
# the builder): build the old tree in one directory, the new in another, and run
#   tests/sim/compare_frames.sh OLD_BUILD NEW_BUILD [SEEDS]
# Exit 0 when every scenario sends the same frames and every capture decodes the same.
set -uo pipefail

A=${1:?usage: compare_frames.sh OLD_BUILD NEW_BUILD [SEEDS]}
B=${2:?usage: compare_frames.sh OLD_BUILD NEW_BUILD [SEEDS]}
SEEDS=${3:-20}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for d in "$A" "$B"; do
	[ -x "$d/tests/sim/droce-sim" ] || { echo "no $d/tests/sim/droce-sim" >&2; exit 2; }
	[ -x "$d/tools/droce-pcap/droce-pcap" ] || { echo "no $d/tools/droce-pcap/droce-pcap" >&2; exit 2; }
done

# Every opcode the engine sends, every QP type, loss and reordering (retransmissions, NAKs,
# duplicate replays), RNR, CE marks (CNPs), both PSN wraps.
SCEN=(
	"--qp-type rc --ops all --loss 5 --reorder 2 --dup 1"
	"--qp-type rc --ops all --mtu 4096 --size 0-65536 --msgs 60"
	"--qp-type rc --ops read,atomic,awrite --loss 3 --rd-atomic 16"
	"--qp-type rc --ops send,send_imm --recv-every 20us --rq-depth 2"
	"--qp-type rc --ops write --ecn 2000,20000,50 --cc dcqcn --rate 10 --msgs 100 --size 4096-65536"
	"--qp-type rc --ops all --srq --shared-cq --corrupt 2"
	"--qp-type uc --ops write,write_imm,send,send_imm --loss 3"
	"--qp-type ud --ops send,send_imm --mtu 4096 --size 0-4096"
)
fail=0 n=0
for s in "${SCEN[@]}"; do
	# shellcheck disable=SC2086
	a=$("$A/tests/sim/droce-sim" --seeds "$SEEDS" --digest $s | grep -o 'seed=[0-9]* .*digest=[0-9a-f]*' | sed 's/ .* frames=/ frames=/')
	# shellcheck disable=SC2086
	b=$("$B/tests/sim/droce-sim" --seeds "$SEEDS" --digest $s | grep -o 'seed=[0-9]* .*digest=[0-9a-f]*' | sed 's/ .* frames=/ frames=/')
	n=$((n + 1))
	if [ -z "$a" ]; then
		echo "NO RUN: droce-sim $s"
		fail=1
	elif [ "$a" != "$b" ]; then
		echo "DIFFER: droce-sim $s"
		diff <(echo "$a") <(echo "$b") | head -5
		fail=1
	else
		echo "same: droce-sim $s ($(wc -l <<<"$a") seeds, $(awk -F'frames=' '{split($2, x, " "); t += x[1]} END {print t}' <<<"$a") frames)"
	fi
done
for f in "$ROOT"/pcaps/*.pcap "$ROOT"/pcaps/rxe/*.pcap; do
	[ -e "$f" ] || continue
	a=$("$A/tools/droce-pcap/droce-pcap" decode --json "$f" 2>&1)
	b=$("$B/tools/droce-pcap/droce-pcap" decode --json "$f" 2>&1)
	n=$((n + 1))
	if [ "$a" != "$b" ]; then
		echo "DIFFER: droce-pcap decode ${f#"$ROOT"/}"
		fail=1
	else
		echo "same: droce-pcap decode ${f#"$ROOT"/} ($(wc -l <<<"$a") lines)"
	fi
done
[ $fail = 0 ] && echo "all $n comparisons identical"
exit $fail
