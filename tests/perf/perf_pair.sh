#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run droce-perf as server and client over net_memif (two processes, --no-huge, one core each,
# 198.18.0.0/15, a socket name and TCP port of their own) and exit with the client's status;
# the server must succeed too unless EXPECT_SERVER_FAIL=1.
#   perf_pair.sh DROCE_PERF [client options...]
# Env: PERF_SERVER_ARGS (extra server options), PERF_TIMEOUT (seconds, default 60),
# PERF_SERVER_LCORES / PERF_CLIENT_LCORES (DROCE_LCORES), PERF_SERVER_EAL / PERF_CLIENT_EAL
# (EAL words added, e.g. --lcores=0@(0,1),1@(0,1),2@(0,1) for more lcores than CPUs),
# PERF_SERVER_ENV / PERF_CLIENT_ENV (more NAME=value words for that side, e.g. DROCE_VLAN=100),
# PERF_SERVER_VDEV / PERF_CLIENT_VDEV (another port instead of the memif pair).
set -u
perf=$1
shift
tag="perf$$_$(date +%s%N | tail -c 7)"
dir=$(mktemp -d /tmp/droce-perf-test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
bound=${PERF_TIMEOUT:-60}
eal="--no-huge -m 256 --no-pci"

DROCE_EAL="$eal ${PERF_SERVER_EAL:-}" DROCE_LCORES=${PERF_SERVER_LCORES:-0} DROCE_IPV4=198.18.0.1/24 \
DROCE_VDEV="${PERF_SERVER_VDEV:-net_memif0,role=server,socket=/$tag.sock}" \
	env ${PERF_SERVER_ENV:-} timeout "$bound" "$perf" -p 0 --port-file "$dir/port" ${PERF_SERVER_ARGS:-} \
	>"$dir/server.out" 2>&1 &
spid=$!
i=0
while [ ! -s "$dir/port" ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ ! -s "$dir/port" ]; then
	echo "server never wrote its port"
	cat "$dir/server.out"
	kill "$spid" 2>/dev/null
	exit 1
fi
port=$(cat "$dir/port")
DROCE_EAL="$eal ${PERF_CLIENT_EAL:-}" DROCE_LCORES=${PERF_CLIENT_LCORES:-1} DROCE_IPV4=198.18.0.2/24 \
DROCE_VDEV="${PERF_CLIENT_VDEV:-net_memif0,role=client,socket=/$tag.sock}" \
	env ${PERF_CLIENT_ENV:-} timeout "$bound" "$perf" -p "$port" "$@" 127.0.0.1
crc=$?
wait "$spid"
src=$?
echo "--- server (exit $src)"
cat "$dir/server.out"
echo "--- client exit $crc"
# A crash's backtrace (droce-perf prints one) last, where a shortened log still shows it.
[ $src -eq 0 ] || grep -A 12 "^droce-perf: signal" "$dir/server.out" | sed 's/^/server crash: /'
if [ "${EXPECT_SERVER_FAIL:-0}" = 1 ]; then
	[ $src -ne 0 ] || { echo "server should have failed"; exit 1; }
	exit $crc
fi
[ $src -eq 0 ] || exit 1
exit $crc
