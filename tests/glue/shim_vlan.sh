#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian's ibv_rc_pingpong and ibv_ud_pingpong, unmodified, on the verbs shim through droce-run
# over net_memif with DROCE_VLAN=100 DROCE_VLAN_PCP=3 on both sides: they pass (-c checks every
# buffer) and each side's capture holds only frames tagged VID 100 PCP 3, RoCEv2 both ways (the
# shim's QP and AH vectors come from droce_rt_resolve_av). Then the client on VLAN 200: RC fails
# at the server's modify_qp with the runtime's "peer unreachable".
#   shim_vlan.sh DROCE_RUN VLAN_CHECK_PY
set -u
DR=$1
check=$2
py=/usr/bin/python3
dir=$(mktemp -d /tmp/droce-shim-vlan.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail=0

# pair NAME SERVER_VLAN CLIENT_VLAN PROGRAM ARGS...: exit status of the client
pair() {
	local name=$1 sv=$2 cv=$3 port i spid rc
	shift 3
	for i in $(seq 50); do
		port=$((20000 + ($$ * 7 + RANDOM) % 12000))
		[ -n "$(ss -Htan "sport = :$port or dport = :$port")" ] || break
	done
	env DROCE_VLAN="$sv" DROCE_VLAN_PCP=3 DROCE_CAPTURE="$dir/$name.server.pcap" \
		DROCE_ARP_RETRY_MS=100 \
		timeout -s KILL 60 "$DR" -q --no-huge --eal --no-telemetry --memif server \
		--socket "$dir/$name.sock" --ip 198.18.0.1/24 -- "$@" -p "$port" \
		>"$dir/$name.server.out" 2>&1 &
	spid=$!
	for i in $(seq 300); do
		ss -Hltn "sport = :$port" | grep -q . && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	env DROCE_VLAN="$cv" DROCE_VLAN_PCP=3 DROCE_CAPTURE="$dir/$name.client.pcap" \
		DROCE_ARP_RETRY_MS=100 \
		timeout -s KILL 60 "$DR" -q --no-huge --eal --no-telemetry --memif client \
		--socket "$dir/$name.sock" --ip 198.18.0.2/24 -- "$@" -p "$port" 127.0.0.1 \
		>"$dir/$name.client.out" 2>&1
	rc=$?
	wait $spid
	echo $? >"$dir/$name.src"
	echo "--- $name: $* (client exit $rc, server exit $(cat "$dir/$name.src"))"
	cat "$dir/$name.client.out"
	return $rc
}

for t in "rc ibv_rc_pingpong -g 0 -n 100 -c -s 4096" "ud ibv_ud_pingpong -g 0 -n 100 -c"; do
	set -- $t
	name=$1
	shift
	if ! pair "$name" 100 100 "$@" || [ "$(cat "$dir/$name.src")" != 0 ]; then
		echo "FAIL: $name on VLAN 100"
		cat "$dir/$name.server.out"
		fail=1
		continue
	fi
	grep -q "^100 iters in " "$dir/$name.client.out" || { echo "FAIL: $name: no iters line"; fail=1; }
	for side in server client; do
		"$py" "$check" tagged "$dir/$name.$side.pcap" 100 3 || fail=1
	done
done

if pair mismatch 100 200 ibv_rc_pingpong -g 0 -n 10; then
	echo "FAIL: VLAN 100 against 200 succeeded"
	fail=1
fi
# the server resolves first (the client waits for its address), gives up, and hangs up
cat "$dir/mismatch.server.out"
grep -q "droce: peer unreachable (no ARP reply from 198.18.0.2 after 4 tries)" \
	"$dir/mismatch.server.out" || { echo "FAIL: no 'peer unreachable' from the server"; fail=1; }
[ $fail -eq 0 ] && echo "ok: the verbs shim on VLAN 100, every frame tagged; mismatch unreachable"
exit $fail
