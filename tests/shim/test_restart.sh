#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A long-running droce process whose peer process goes away and another comes up in its place,
# over net_memif: the long-lived side is the memif client, so its link goes down with the
# peer and it must connect again (the PMD never does by itself), and what it learnt of the
# last peer is forgotten (a new one may have another MAC: tests/glue test_neigh's test_flush;
# memif gives every child here the same one).
#
# Unmodified qperf with rdma_cm (-cm1): its server forks a child per test, and each child,
# droce's runtime never having been opened in the parent, starts a runtime of its own: a new
# process behind the memif socket. The client runs rc_lat, rc_rdma_read_lat
# and rc_bw against three such children in one process. Asserted: exit 0 and the
# three results; the client's counters (its counters file): the link went down and came up
# again at each change of child, it reconnected, neighbour entries were flushed; its capture:
# the client's RoCE frames went to the MAC the current child answered ARP with.
# Run in a network namespace of its own (qperf's TCP goes to 198.18.0.1, which the namespace's
# loopback holds, and droce has the same address on memif). Root only: as another user it
# fails, never skips.
# Usage: test_restart.sh <build>/verbs-shim <build>/tools/droce-run/droce-run
. "$(dirname "$0")/shim_lib.sh"
DR=$2
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (a network namespace)"; exit 1; }
for t in qperf ip tshark; do
	command -v $t >/dev/null || { echo "FAIL: '$t' not found (packages: qperf iproute2" \
		"tshark)"; exit 1; }
done
NS=drs_cm_$$
TMP=$(mktemp -d)
SPID=
cleanup() {
	[ -z "$SPID" ] || kill "$SPID" 2>/dev/null	# timeout passes it to qperf
	wait 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$OUT" "$ERR" "$TMP"
}
trap cleanup EXIT
ip netns add "$NS" || { echo "FAIL: cannot create namespace $NS"; exit 1; }
ip -n "$NS" link set lo up && ip -n "$NS" addr add 198.18.0.1/32 dev lo ||
	{ echo "FAIL: 198.18.0.1 on $NS's loopback"; exit 1; }

# drun ROLE IP EXTRA... -- PROGRAM...: droce-run over memif in the namespace, bounded
drun() {
	local role=$1 ip=$2 ex=
	shift 2
	# in the background (a subshell) exec: $! is then timeout, which passes a TERM on
	[ "$BASHPID" = "$$" ] || ex=exec
	$ex timeout -s KILL 120 ip netns exec "$NS" "$DR" -q --no-huge --eal --no-telemetry \
		--memif "$role" --socket "/drs_cm_$$" --ip "$ip" --set start_wait_ms=20000 "$@"
}

# qperf's server runs until killed; each test's child is a droce process of its own.
drun server 198.18.0.1/24 -- qperf >"$TMP/srv.out" 2>&1 &
SPID=$!
sleep 1
# -to 20: each child starts EAL and its port before it answers (seconds on a busy host; qperf's
# default exchange timeout is 5 s). rc_bw last: the capture's first 8 MiB hold every child's
# ARP and the start of each test.
drun client 198.18.0.2/24 --set counters_file="$TMP/cli.json" --set capture="$TMP/cli.pcap" \
	--set capture_max_kb=8192 \
	-- qperf -cm1 -to 20 198.18.0.1 rc_lat rc_rdma_read_lat rc_bw >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "qperf -cm1 rc_lat rc_rdma_read_lat rc_bw"
expect_out "^rc_bw:" "qperf rc_bw"
expect_out "^ +bw += +[0-9.]+ [KMG]B/sec" "qperf rc_bw"
[ "$(grep -Ec '^ +latency += +[0-9.]+ (ns|us|ms)' "$OUT")" = 2 ] ||
	fail "qperf rc_lat and rc_rdma_read_lat: not two latencies"
! grep -q "unexpected event" "$OUT" "$ERR" || fail "qperf: an unexpected rdma_cm event"

# the client's own account: three children, so at least two departures and reconnections
if [ -s "$TMP/cli.json" ]; then
	read -r down up rec fl < <(/usr/bin/python3 -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print(c["rt"]["link_down"], c["rt"]["link_up"], c["rt"]["reconnects"], c["neigh"]["flushed"])' \
		<"$TMP/cli.json")
	[ "${down:-0}" -ge 2 ] || fail "qperf client: rt.link_down ${down:-?}, expected >= 2"
	[ "${up:-0}" -ge 3 ] || fail "qperf client: rt.link_up ${up:-?}, expected >= 3"
	[ "${rec:-0}" -ge 2 ] || fail "qperf client: rt.reconnects ${rec:-?}, expected >= 2"
	[ "${fl:-0}" -ge 2 ] || fail "qperf client: neigh.flushed ${fl:-?}, expected >= 2"
	echo "qperf client: link down $down, up $up, reconnects $rec, neighbour entries flushed $fl"
else
	fail "qperf client: no counters file"
fi

# Each child's MAC (its ARP frames from 198.18.0.1) and the destination of the client's RoCE
# frames that follow, in capture order: every RoCE frame goes to the latest child's MAC.
tshark -r "$TMP/cli.pcap" -T fields -E separator='|' -e arp.src.proto_ipv4 -e arp.src.hw_mac \
	-e udp.dstport -e eth.dst -e ip.src 2>/dev/null >"$TMP/frames"
got=$(awk -F'|' '
	$1 == "198.18.0.1" && $2 != "" { if ($2 != mac) macs++; mac = $2; next }
	$3 == "4791" && $5 == "198.18.0.2" { n++; if ($4 != mac) bad++ }
	END { printf "%d %d %d\n", macs, n, bad }' "$TMP/frames")
read -r macs n bad <<<"$got"
[ "${macs:-0}" -ge 1 ] || fail "qperf: no ARP from the server in the client's capture"
[ "${n:-0}" -gt 0 ] || fail "qperf: no RoCE frame from the client in its capture"
[ "${bad:-1}" = 0 ] || fail "qperf: $bad RoCE frames to a MAC that is not the current child's"
echo "qperf: $macs server MACs, $n RoCE frames from the client, $bad to a stale MAC"
finish
