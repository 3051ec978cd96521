#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# droce-perf over net_memif with an 802.1Q VLAN on both sides (pmd-glue README, VLAN):
#  1. both on VLAN 100, PCP 5: write --verify passes, and each side's capture (every frame
#     received and sent) holds only frames tagged VID 100 PCP 5, RoCEv2 and ARP both ways;
#  2. server on VLAN 100, client on VLAN 200: the client fails with "peer unreachable", and the
#     server's capture shows the client's VLAN 200 ARP requests heard and left unanswered.
#   perf_vlan.sh DROCE_PERF VLAN_CHECK_PY
# Env: VLAN_SERVER_VDEV / VLAN_CLIENT_VDEV replace the memif ports (perf_vlan_afpacket.sh).
set -u
perf=$1
check=$2
py=/usr/bin/python3
dir=$(mktemp -d /tmp/droce-perf-vlan.XXXXXX)
trap 'rm -rf "$dir"' EXIT
eal="--no-huge -m 256 --no-pci"
smac=02:00:00:00:00:01
cmac=02:00:00:00:00:02

# run NAME SERVER_VLAN CLIENT_VLAN PCP [client options...]: exit status of the client; the
# server's in $dir/NAME.src
run() {
	name=$1 svlan=$2 cvlan=$3 pcp=$4
	shift 4
	tag="vlan$$_$(date +%s%N | tail -c 7)"
	rm -f "$dir/port"
	DROCE_EAL="$eal" DROCE_LCORES=0 DROCE_IPV4=198.18.0.1/24 DROCE_MAC=$smac \
	DROCE_VLAN=$svlan DROCE_VLAN_PCP=$pcp DROCE_CAPTURE="$dir/$name.server.pcap" \
	DROCE_VDEV="${VLAN_SERVER_VDEV:-net_memif0,role=server,socket=/$tag.sock}" \
		timeout 60 "$perf" -p 0 --port-file "$dir/port" --counters \
		>"$dir/$name.server.out" 2>&1 &
	spid=$!
	i=0
	while [ ! -s "$dir/port" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -s "$dir/port" ]; then
		echo "server never wrote its port"
		cat "$dir/$name.server.out"
		kill "$spid" 2>/dev/null
		exit 1
	fi
	DROCE_EAL="$eal" DROCE_LCORES=1 DROCE_IPV4=198.18.0.2/24 DROCE_MAC=$cmac \
	DROCE_VLAN=$cvlan DROCE_VLAN_PCP=$pcp DROCE_CAPTURE="$dir/$name.client.pcap" \
	DROCE_VDEV="${VLAN_CLIENT_VDEV:-net_memif0,role=client,socket=/$tag.sock}" \
		timeout 60 "$perf" -p "$(cat "$dir/port")" --counters "$@" 127.0.0.1 \
		>"$dir/$name.client.out" 2>&1
	crc=$?
	wait "$spid"
	echo $? >"$dir/$name.src"
	echo "--- $name: server (exit $(cat "$dir/$name.src"))"
	cat "$dir/$name.server.out"
	echo "--- $name: client (exit $crc)"
	cat "$dir/$name.client.out"
	return $crc
}

fail=0
run same 100 100 5 -o write --sizes 1,4096,65536 -n 50 --verify -Q
rc=$?
if [ $rc -ne 0 ] || [ "$(cat "$dir/same.src")" -ne 0 ]; then
	echo "FAIL: VLAN 100 on both sides: client exit $rc, server exit $(cat "$dir/same.src")"
	fail=1
fi
for side in server client; do
	"$py" "$check" tagged "$dir/same.$side.pcap" 100 5 || fail=1
	# nothing dropped for its VLAN on either side
	if grep -q "drop_vlan" "$dir/same.$side.out"; then
		echo "FAIL: $side dropped frames for their VLAN"
		fail=1
	fi
done

run mismatch 100 200 5 -o write --sizes 4096 -n 10 --verify -Q
rc=$?
if [ $rc -eq 0 ]; then
	echo "FAIL: VLAN 100 vs 200: the client succeeded"
	fail=1
fi
if ! grep -q "peer unreachable (no ARP reply from 198.18.0.1 after 4 tries)" \
	"$dir/mismatch.client.out"; then
	echo "FAIL: VLAN 100 vs 200: no 'peer unreachable' from the client"
	fail=1
fi
"$py" "$check" mismatch "$dir/mismatch.server.pcap" $smac 100 200 || fail=1
"$py" "$check" mismatch "$dir/mismatch.client.pcap" $cmac 200 100 || fail=1
[ $fail -eq 0 ] && echo "ok: VLAN pair tagged end to end; mismatched VLANs unreachable"
exit $fail
