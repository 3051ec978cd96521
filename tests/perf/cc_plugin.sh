#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Congestion-control plugins (cc_plugin, stack/droce_cc.h): droce-perf write bw over memif with
# tools/cc-plugins' "aimd" at a 200 Mbit/s ceiling on the client: --verify passes, the client's
# limiter held packets (dev.cc_deferred) and its goodput stayed under the ceiling; then each way
# loading goes wrong gives exit 1 and a line naming the cause; the qp_cc key gives one QP the
# plugin's algorithm while the device's stays none.
#   cc_plugin.sh PERF_PAIR DROCE_PERF PLUGIN_SO
pair=$1
perf=$2
so=$3
fail=0
dir=$(mktemp -d /tmp/droce-ccplug.XXXXXX)
trap 'rm -rf "$dir"' EXIT

PERF_CLIENT_ENV="DROCE_CC_PLUGIN=$so DROCE_CC=aimd DROCE_CC_AIMD_MAX_MBPS=200 \
DROCE_COUNTERS_FILE=$dir/client.json" "$pair" "$perf" -o write -s 65536 -D 1 --verify -J \
	>"$dir/pair.out" 2>&1
rc=$?
gbps=$(grep -o '"gbps":[0-9.]*' "$dir/pair.out" | head -n 1 | cut -d: -f2)
held=$(grep -o '"cc_deferred": *[0-9]*' "$dir/client.json" 2>/dev/null | grep -o '[0-9]*$')
echo "aimd at 200 Mbit/s: exit $rc, goodput ${gbps:-?} Gbit/s, cc_deferred ${held:-?}"
if [ $rc -ne 0 ] || [ -z "$gbps" ] || [ -z "$held" ] || [ "$held" -eq 0 ] ||
   ! awk -v g="$gbps" 'BEGIN { exit !(g > 0 && g <= 0.2) }'; then
	echo "FAIL: the plugin's limiter did not pace the client"
	cat "$dir/pair.out"
	fail=1
fi
# droce-perf's own report of it: the algorithm, its figures at the end, the packets held
cc=$(grep -o '"cc":{[^}]*}' "$dir/pair.out" | head -n 1)
echo "droce-perf --json: $cc"
case $cc in
*'"name":"aimd","held":'[1-9]*'"rate_mbps":200,"cuts":0}') ;;
*) echo "FAIL: droce-perf's cc report"; fail=1 ;;
esac

# the same algorithm for one QP only, by the qp_cc key, the device's cc staying none
PERF_CLIENT_ENV="DROCE_CC_PLUGIN=$so DROCE_QP_CC=0:aimd DROCE_CC_AIMD_MAX_MBPS=200 \
DROCE_COUNTERS_FILE=$dir/client2.json" "$pair" "$perf" -o write -s 65536 -D 1 --verify -J \
	>"$dir/pair2.out" 2>&1
rc=$?
gbps=$(grep -o '"gbps":[0-9.]*' "$dir/pair2.out" | head -n 1 | cut -d: -f2)
cc=$(grep -o '"cc":{[^}]*}' "$dir/pair2.out" | head -n 1)
echo "qp_cc 0:aimd, cc none: exit $rc, goodput ${gbps:-?} Gbit/s, $cc"
if [ $rc -ne 0 ] || [ -z "$gbps" ] || ! awk -v g="$gbps" 'BEGIN { exit !(g > 0 && g <= 0.2) }'
then
	echo "FAIL: qp_cc did not give the QP the plugin's limiter"
	cat "$dir/pair2.out"
	fail=1
fi
case $cc in
*'"name":"aimd"'*) ;;
*) echo "FAIL: droce-perf's cc report for qp_cc"; fail=1 ;;
esac

# check PATTERN ENV...: droce-perf exits 1 and its stderr matches PATTERN
check() {
	pat=$1
	shift
	err=$(env DROCE_IPV4=198.18.0.1/24 DROCE_EAL="--no-huge -m 256 --no-pci" \
		DROCE_VDEV="net_memif0,role=server,socket=/ccplug$$.sock" "$@" \
		timeout 30 "$perf" -p 0 --port-file "$dir/port" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 1 ] || ! printf '%s' "$err" | grep -q -- "$pat"; then
		echo "FAIL: $*: exit $rc: $err"
		fail=1
	else
		echo "ok: $*: $(printf '%s' "$err" | tail -n 1)"
	fi
}
check "cc_plugin $dir/none.so cannot be loaded.*-shared -fPIC" DROCE_CC_PLUGIN="$dir/none.so" \
	DROCE_CC=aimd
zlib=$(ldconfig -p 2>/dev/null | sed -n 's/.*libz.so.1 (.*x86-64.*) => //p' | head -n 1)
[ -n "$zlib" ] || zlib=/lib/x86_64-linux-gnu/libz.so.1
check "exports no droce_cc_plugin_init()" DROCE_CC_PLUGIN="$zlib" DROCE_CC=aimd
check "cc nosuch is not among the congestion controls after loading.*none, dcqcn, timely, aimd" \
	DROCE_CC_PLUGIN="$so" DROCE_CC=nosuch
check "cc nosuch is not a congestion control here: use one of none, dcqcn, timely" \
	DROCE_CC=nosuch
check "droce_cc_plugin_init() failed (Invalid argument)" DROCE_CC_PLUGIN="$so" DROCE_CC=aimd \
	DROCE_CC_AIMD_MAX_MBPS=fast
check "DROCE_CC_AIMD_MAX_MBPS=fast: give a whole number" DROCE_CC_PLUGIN="$so" DROCE_CC=aimd \
	DROCE_CC_AIMD_MAX_MBPS=fast
exit $fail
