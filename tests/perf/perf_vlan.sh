#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# droce-perf over net_memif with an 802.1Q VLAN on both sides (pmd-glue README, VLAN):
#  1. both on VLAN 100, PCP 5: write --verify passes, and each side's capture (every frame
#     received and sent) holds only frames tagged VID 100 PCP 5, RoCEv2 and ARP both ways;
#  2. server on VLAN 100, client on VLAN 200: the client fails with "peer unreachable", and the
#     server's capture shows the client's VLAN 200 ARP requests heard and left unanswered.
#   perf_vlan.sh DROCE_PERF VLAN_CHECK_PY
# Env: VLAN_SERVER_VDEV / VLAN_CLIENT_VDEV replace the memif ports (perf_vlan_afpacket.sh).
# The pair itself is perf_pair.sh's, beside this file.
set -u
perf=$1
check=$2
py=/usr/bin/python3
pair=$(dirname "$0")/perf_pair.sh
dir=$(mktemp -d /tmp/droce-perf-vlan.XXXXXX)
trap 'rm -rf "$dir"' EXIT
smac=02:00:00:00:00:01
cmac=02:00:00:00:00:02

# run NAME SERVER_VLAN CLIENT_VLAN PCP [client options...]: perf_pair.sh's status (0: both
# sides succeeded); both sides' output in $dir/NAME.out, their captures in $dir/NAME.SIDE.pcap
run() {
	name=$1 svlan=$2 cvlan=$3 pcp=$4
	shift 4
	PERF_SERVER_ARGS=--counters PERF_SERVER_VDEV=${VLAN_SERVER_VDEV:-} \
	PERF_CLIENT_VDEV=${VLAN_CLIENT_VDEV:-} \
	PERF_SERVER_ENV="DROCE_MAC=$smac DROCE_VLAN=$svlan DROCE_VLAN_PCP=$pcp \
		DROCE_CAPTURE=$dir/$name.server.pcap" \
	PERF_CLIENT_ENV="DROCE_MAC=$cmac DROCE_VLAN=$cvlan DROCE_VLAN_PCP=$pcp \
		DROCE_CAPTURE=$dir/$name.client.pcap" \
		sh "$pair" "$perf" --counters "$@" >"$dir/$name.out" 2>&1
	rc=$?
	echo "--- $name (exit $rc)"
	cat "$dir/$name.out"
	return $rc
}

fail=0
run same 100 100 5 -o write --sizes 1,4096,65536 -n 50 --verify -Q
if [ $? -ne 0 ]; then
	echo "FAIL: VLAN 100 on both sides: the pair failed"
	fail=1
fi
for side in server client; do
	"$py" "$check" tagged "$dir/same.$side.pcap" 100 5 || fail=1
done
# nothing dropped for its VLAN on either side (both sides' counters are in the output)
if grep -q "drop_vlan" "$dir/same.out"; then
	echo "FAIL: a side dropped frames for their VLAN"
	fail=1
fi

if run mismatch 100 200 5 -o write --sizes 4096 -n 10 --verify -Q; then
	echo "FAIL: VLAN 100 vs 200: the pair succeeded"
	fail=1
fi
if ! grep -q "peer unreachable (no ARP reply from 198.18.0.1 after 4 tries)" \
	"$dir/mismatch.out"; then
	echo "FAIL: VLAN 100 vs 200: no 'peer unreachable' from the client"
	fail=1
fi
"$py" "$check" mismatch "$dir/mismatch.server.pcap" $smac 100 200 || fail=1
"$py" "$check" mismatch "$dir/mismatch.client.pcap" $cmac 200 100 || fail=1
[ $fail -eq 0 ] && echo "ok: VLAN pair tagged end to end; mismatched VLANs unreachable"
exit $fail
