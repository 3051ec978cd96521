#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# droce-perf with 2 shards a side over net_af_packet (qpairs=2: two packet sockets joined in a
# PACKET_FANOUT group, the kernel's flow hash picking the socket) on a veth pair in a private
# network namespace; perf_shards.sh's checks (both shards carried traffic; every frame one
# shard handed over arrived at the other: where each flow lands is the kernel's hash, so a shard
# may steer none).
# Needs root (netns, veth); otherwise reported as skipped (77), never as passed.
#   perf_afpacket_shards.sh PERF_SHARDS_SH DROCE_PERF [client options...]
set -u
check=$1
perf=$2
shift 2
ns=droce_perfsh_$$
. "$(dirname "$0")/../glue/veth_ns.sh"
veth_ns "$ns" dpa 300 02:00:00:00:01:01 dpb 400 02:00:00:00:01:02
dir=$(mktemp -d /tmp/droce-perfsh.XXXXXX)
# perf_pair.sh's roles with af_packet ports instead of memif
cat >"$dir/pair.sh" <<PAIR
#!/bin/sh
perf=\$1
shift
eal="--no-huge -m 256 --no-pci --no-telemetry"
DROCE_EAL="\$eal" DROCE_LCORES=0 DROCE_IPV4=198.18.0.1/24 \\
DROCE_VDEV=net_af_packet0,iface=dpa,qpairs=2 timeout 60 "\$perf" -p 0 --port-file "$dir/port" \\
	\${PERF_SERVER_ARGS:-} >"$dir/server.out" 2>&1 &
spid=\$!
i=0
while [ ! -s "$dir/port" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
DROCE_EAL="\$eal \${PERF_CLIENT_EAL:-}" DROCE_LCORES=\${PERF_CLIENT_LCORES:-1} \\
DROCE_IPV4=198.18.0.2/24 DROCE_VDEV=net_af_packet0,iface=dpb,qpairs=2 \\
	timeout 60 "\$perf" -p "\$(cat $dir/port)" "\$@" 127.0.0.1
crc=\$?
wait \$spid
src=\$?
echo "--- server (exit \$src)"
cat "$dir/server.out"
echo "--- client exit \$crc"
[ \$src -eq 0 ] || exit 1
exit \$crc
PAIR
chmod +x "$dir/pair.sh"
PERF_SHARDS_HASHED=1 ip netns exec "$ns" sh "$check" "$dir/pair.sh" "$perf" "$@"
rc=$?
rm -rf "$dir"
exit $rc
