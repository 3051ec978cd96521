#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Shard configuration errors: droce-perf exits 1 with one line on stderr naming the fix.
#   shard_errors.sh DROCE_PERF
perf=$1
fail=0
eal="--no-huge -m 256 --no-pci"
tag="sherr$$"
# droce-perf writes its port file by rename: never point it at /dev/null (it would replace it)
portf=$(mktemp /tmp/droce-sherr.XXXXXX)
trap 'rm -f "$portf"' EXIT
# check PATTERN ENV... : one stderr line, exit 1, the line matches PATTERN
check() {
	pat=$1
	shift
	err=$(env DROCE_IPV4=198.18.0.1/24 "$@" timeout 30 "$perf" -p 0 --port-file "$portf" 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ $rc -ne 1 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q -- "$pat"; then
		echo "FAIL: $*: exit $rc, $lines line(s): $err"
		fail=1
	else
		echo "ok: $*: $err"
	fi
}
# lcore mode needs the application's lcore and one per shard
check "shards 3 need 4 lcores.*DROCE_LCORES=0-3" DROCE_EAL="$eal" DROCE_SHARDS=3 \
	DROCE_LCORES=0,1 DROCE_VDEV="net_memif0,role=server,socket=/$tag.sock"
# no QPN room
check "lower DROCE_MAX_QP" DROCE_EAL="$eal" DROCE_SHARDS=8 DROCE_MAX_QP=1048576 \
	DROCE_MBUFS=65536 DROCE_VDEV="net_memif0,role=server,socket=/$tag.sock"
# more EAL lcores than CPUs: the floating --lcores form is suggested
n=$(nproc)
check "let them float.*--lcores=0@(0-$((n - 1))),1@(0-$((n - 1)))" DROCE_EAL="$eal" \
	DROCE_SHARDS=$n DROCE_LCORES=0-$n DROCE_VDEV="net_memif0,role=server,socket=/$tag.sock"
# a port with fewer queues than shards: af_packet has one queue pair unless qpairs=N (root,
# on the loopback of a private network namespace)
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	err=$(unshare -n sh -c "ip link set lo up; DROCE_IPV4=198.18.0.1/24 DROCE_EAL='$eal' \
		DROCE_SHARDS=2 DROCE_VDEV=net_af_packet0,iface=lo timeout 30 '$perf' -p 0 \
		--port-file $portf" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 1 ] || ! printf '%s' "$err" | grep -q "at most 1 Rx / 1 Tx queues, shards 2 need one each: lower DROCE_SHARDS or add qpairs=N"; then
		echo "FAIL: af_packet with 2 shards: exit $rc: $err"
		fail=1
	else
		echo "ok: af_packet with 2 shards: $err"
	fi
else
	echo "not run (needs root and unshare): af_packet with fewer queues than shards"
fi
exit $fail
