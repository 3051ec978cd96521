#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Selective repeat's frames are RoCEv2 frames: every frame of a lossy run with mixed operations
# passes droce-pcap verify, and tshark decodes them all with no malformed packet and no expert
# warning. The run holds placement headers (WRITE MIDDLE with 1024 B = header + 1008 B of data)
# and selective NAKs (PSN sequence error NAKs whose MSN is a kept PSN).
# usage: sr_pcap.sh DROCE_SIM DROCE_PCAP [TSHARK]
set -eu
SIM=$1
PCAP=$2
TSHARK=${3:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$SIM" --seed 7 --recovery sr --loss 5 --ops all --size 0-8192 --msgs 80 --pcap "$T/sr.pcap" \
	>"$T/run"
grep -q ' OK$' "$T/run" || { cat "$T/run"; exit 1; }
"$PCAP" verify "$T/sr.pcap"
"$PCAP" decode "$T/sr.pcap" >"$T/dec"
mid=$(grep -c 'RC_RDMA_WRITE_MIDDLE .* pay 1024 ' "$T/dec" || true)
nak=$(grep -c 'AETH NAK PSN_SEQ_ERR' "$T/dec" || true)
echo "droce-pcap: $(wc -l <"$T/dec") frames, $mid WRITE MIDDLE with a placement header, $nak selective NAKs"
[ "$mid" -gt 0 ] && [ "$nak" -gt 0 ] || { echo "no placement header or no selective NAK"; exit 1; }
if [ -z "$TSHARK" ]; then
	echo "tshark not found: the droce-pcap half only"; exit 1
fi
# tshark: the payload heuristics off (random payloads read as RPC-over-RDMA and the like)
H=""
for h in rpcrdma_infiniband mellanox_eoib iser_infiniband sdp_infiniband \
	smb_direct_infiniband smcr_infiniband lnet_ib eth_over_ib fc_infiniband; do
	H="$H --disable-heuristic $h"
done
# shellcheck disable=SC2086
"$TSHARK" -n -r "$T/sr.pcap" $H -q -z expert >"$T/expert"
if awk '{sub(/^[ \t]+/, "")} /^(Errors|Warns) \(/{on=1; next}
	/^(Notes|Chats|Comments) \(/{on=0} on && /^[0-9]/' "$T/expert" | grep -q .; then
	echo "tshark reports errors or warnings:"; cat "$T/expert"; exit 1
fi
# shellcheck disable=SC2086
n=$("$TSHARK" -n -r "$T/sr.pcap" $H -Y 'infiniband.bth.opcode == 7' | wc -l)
echo "tshark: $n WRITE MIDDLE decoded, no error or warning"
[ "$n" -eq "$(grep -c 'RC_RDMA_WRITE_MIDDLE' "$T/dec")" ]
