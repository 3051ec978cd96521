#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-ab OLD_BUILD NEW_BUILD: two builds of droce (meson build directories, e.g. one of
# a `git archive` of the commit before a change) measured in interleaved pairs, so both see the
# same host phase: on a shared VM the host's speed moves more between runs than a change does.
# Per pair: droce-perf write lat 8 B (p50, us), write bw 64 KiB (Gbit/s), write 64 B message
# rate (M/s), each a server and a client over memif (--no-huge, server on CPU 0, client on 1),
# and droce-bench-engine when both builds have it. Prints every pair and, per figure, the
# median of NEW/OLD over the pairs. Environment: DROCE_BENCH_REPS (5 pairs), DROCE_BENCH_BOUND
# (30 s a process).
set -u
if [ $# -ne 2 ] || [ ! -x "$1/tools/droce-perf/droce-perf" ] || [ ! -x "$2/tools/droce-perf/droce-perf" ]; then
	echo "usage: droce-bench-ab OLD_BUILD NEW_BUILD (meson build directories with droce-perf built)" >&2
	exit 2
fi
OLD=$1
NEW=$2
REPS=${DROCE_BENCH_REPS:-5}
BOUND=${DROCE_BENCH_BOUND:-30}
TMP=$(mktemp -d /tmp/droce-bench-ab.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export DROCE_EAL="--no-huge -m 512 --no-pci"

# pair BUILD ARGS...: one droce-perf server and client; prints the client's JSON line
pair() {
	local b=$1 sock="/droce-ab-$$-$RANDOM" pf="$TMP/port" sp
	shift
	rm -f "$pf"
	DROCE_IPV4=198.18.0.1/24 DROCE_VDEV="net_memif0,role=server,socket=$sock" DROCE_LCORES=0 \
		timeout "$BOUND" "$b/tools/droce-perf/droce-perf" -p 0 --port-file "$pf" -Q \
		>"$TMP/server.out" 2>&1 &
	sp=$!
	for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.1; done
	DROCE_IPV4=198.18.0.2/24 DROCE_VDEV="net_memif0,role=client,socket=$sock" DROCE_LCORES=1 \
		timeout "$BOUND" "$b/tools/droce-perf/droce-perf" -p "$(cat "$pf" 2>/dev/null)" \
		-J -Q "$@" 127.0.0.1 2>"$TMP/client.err"
	wait "$sp"
}
field() {	# field KEY: the number after "KEY": in stdin
	sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" | head -n 1
}
measure() {	# measure BUILD: one line of figures
	local b=$1 lat bw rate eng=""
	lat=$(pair "$b" -o write -m lat -s 8 -n 20000 | field p50)
	bw=$(pair "$b" -o write -s 65536 -D 2 | field gbps)
	rate=$(pair "$b" -o write -s 64 -D 2 | field mmsg_per_s)
	if [ -x "$OLD/tools/bench/droce-bench-engine" ] && [ -x "$NEW/tools/bench/droce-bench-engine" ]; then
		eng=$(timeout "$BOUND" "$b/tools/bench/droce-bench-engine" -n 100000 -m 5000 |
			awk '/round trip/ { r = $5 } /Gbit\/s payload/ { g = $6 } END { print r, g }')
	fi
	echo "${lat:--} ${bw:--} ${rate:--} ${eng:-- -}"
}

printf '%-5s %-4s %10s %10s %10s %12s %12s\n' pair build "lat_us" "bw_gbps" "rate_M/s" \
	"eng_rtt_ns" "eng_gbps"
for r in $(seq "$REPS"); do
	# alternate which build goes first, so neither always follows the other
	if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
	for w in $order; do
		if [ "$w" = old ]; then b=$OLD; else b=$NEW; fi
		read -r l w2 m e1 e2 <<<"$(measure "$b")"
		printf '%-5s %-4s %10s %10s %10s %12s %12s\n' "$r" "$w" "$l" "$w2" "$m" "$e1" "$e2"
		echo "$r $w $l $w2 $m $e1 $e2" >>"$TMP/all"
	done
done
/usr/bin/python3 - "$TMP/all" <<'EOF'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
names = ["lat_us (lower is better)", "bw_gbps", "rate_M/s", "eng_rtt_ns (lower is better)",
         "eng_gbps"]
pairs = {}
for r in rows:
    pairs.setdefault(r[0], {})[r[1]] = r[2:]
print("median of NEW/OLD over the pairs:")
for i, n in enumerate(names):
    q = []
    for p in pairs.values():
        try:
            o, w = float(p["old"][i]), float(p["new"][i])
        except (KeyError, ValueError, IndexError):
            continue
        if o > 0:
            q.append(w / o)
    print(f"  {n:30s} " + (f"{statistics.median(q):.3f} ({len(q)} pairs)" if q else "-"))
EOF
