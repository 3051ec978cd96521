#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# perf_vlan.sh over net_af_packet on a veth pair in a private network namespace: the kernel
# hands the tag to packet sockets apart from the frame (TP_STATUS_VLAN_VALID), which the PMD must
# put back for droce to see it. Needs root (netns, veth); otherwise skipped (77), never passed.
#   perf_vlan_afpacket.sh PERF_VLAN_SH DROCE_PERF VLAN_CHECK_PY
set -u
script=$1
shift
ns=droce_vlan_$$
[ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
ip netns add "$ns" 2>/dev/null || { echo "cannot create a network namespace: skipped"; exit 77; }
trap 'ip netns del "$ns" 2>/dev/null' EXIT
trap 'exit 1' INT TERM
# distant ifindexes: DPDK 22.11 derives the fan-out group from pid ^ ifindex
ip -n "$ns" link add dva index 310 address 02:00:00:00:02:01 type veth \
	peer name dvb index 410 address 02:00:00:00:02:02 || { echo "no veth: skipped"; exit 77; }
for d in dva dvb; do
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
	ip -n "$ns" link set "$d" up
done
ip -n "$ns" link set lo up
VLAN_SERVER_VDEV=net_af_packet0,iface=dva VLAN_CLIENT_VDEV=net_af_packet0,iface=dvb \
	ip netns exec "$ns" sh "$script" "$@"
