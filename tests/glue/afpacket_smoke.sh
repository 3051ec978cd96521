#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The runtime over net_af_packet: a veth pair in a private network namespace (no address on it,
# IPv6 off, so the kernel stays silent), the glue_smoke modes with one process on each end.
# Needs root (netns, veth); otherwise it is reported as skipped (77), never as passed.
# The veth ends get ifindex 100 and 200: DPDK 22.11's af_packet derives its PACKET_FANOUT group
# from pid ^ ifindex, and sibling pids on adjacent ifindexes can collide (EINVAL at probe).
set -u
smoke=$1
ns=droce_glue_$$
. "$(dirname "$0")/veth_ns.sh"
veth_ns "$ns" dra 100 02:00:00:00:00:01 drb 200 02:00:00:00:00:02
rc=0
for mode in arp rc rc6; do
	timeout 60 ip netns exec "$ns" "$smoke" "$mode" "--no-huge -m 128 --no-pci --no-telemetry" \
		net_af_packet0,iface=dra net_af_packet0,iface=drb >"/tmp/$ns.log" 2>&1
	r=$?
	grep -E "glue_smoke|intact|:[0-9]+:" "/tmp/$ns.log"
	[ $r = 0 ] || { cat "/tmp/$ns.log"; rc=1; }
done
rm -f "/tmp/$ns.log"
exit $rc
