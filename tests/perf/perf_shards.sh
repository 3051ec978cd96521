#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# droce-perf between two runtimes of 2 shards each (perf_pair.sh), QP i on shard i % 2 at the
# client and (i + 1) % 2 at the server, so every RoCE frame arrives on a queue of the shard
# that does not own its QP. Passes when the run verifies and both sides' counters show both
# shards' engines carrying traffic and frames handed between the shards.
#   perf_shards.sh PERF_PAIR DROCE_PERF [client options...]
pair=$1
shift
out=$(DROCE_SHARDS=2 PERF_SERVER_ARGS="--shard-base 1 --counters" "$pair" "$@" --counters 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
fail=0
# value of "SIDE NAME = V"
val() {
	echo "$out" | awk -v s="$1" -v n="$2" '$1 == s && $2 == n { v = $4 } END { print v + 0 }'
}
# PERF_SHARDS_HASHED=1 (af_packet's fanout): the kernel's flow hash, not droce, picks each
# flow's queue, so a shard may receive only its own QPs' frames and steer none; then every
# frame a shard handed over must have arrived at the other (out == in), not both shards steer.
for side in client server; do
	for s in 0 1; do
		names="dev.shard${s}_sent_pkts dev.shard${s}_rcvd_pkts"
		[ "${PERF_SHARDS_HASHED:-0}" = 1 ] ||
			names="$names rt.shard${s}_steered rt.shard${s}_steered_in"
		for n in $names; do
			v=$(val $side $n)
			[ "$v" -gt 0 ] || { echo "FAIL: $side $n = $v"; fail=1; }
		done
	done
	if [ "${PERF_SHARDS_HASHED:-0}" = 1 ]; then
		out_=$(( $(val $side rt.shard0_steered) + $(val $side rt.shard1_steered) ))
		in_=$(( $(val $side rt.shard0_steered_in) + $(val $side rt.shard1_steered_in) ))
		[ "$out_" -eq "$in_" ] || { echo "FAIL: $side steered $out_ frames, $in_ arrived"; fail=1; }
	fi
	rx=$(val $side rt.rx_roce)
	st=$(val $side rt.steered)
	[ "$(val $side rt.shards)" -eq 2 ] || { echo "FAIL: $side rt.shards"; fail=1; }
	# a full steering ring holds the shard's Rx back (the peer waits): reported only
	echo "$side: rx_roce $rx, steered $st, Rx held $(val $side rt.steer_held) times"
done
echo "$out" | grep -q "^client: [0-9]* B: messages per shard: 0=[1-9][0-9]* 1=[1-9]" ||
	{ echo "FAIL: no per-shard message counts"; fail=1; }
[ $fail -eq 0 ] && echo "ok: both shards carried traffic, frames were steered"
exit $fail
