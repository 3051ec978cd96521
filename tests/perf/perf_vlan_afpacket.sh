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
. "$(dirname "$0")/../glue/veth_ns.sh"
veth_ns "$ns" dva 310 02:00:00:00:02:01 dvb 410 02:00:00:00:02:02
VLAN_SERVER_VDEV=net_af_packet0,iface=dva VLAN_CLIENT_VDEV=net_af_packet0,iface=dvb \
	ip netns exec "$ns" sh "$script" "$@"
