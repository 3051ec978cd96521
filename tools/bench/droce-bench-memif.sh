#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# droce-bench-memif: droce-perf's message rate and bandwidth next to raw DPDK memif
# (droce-rawpp) on the same cores (server lcore 0, client lcore 1, both inline, --no-huge):
#   message rate  droce-perf -o write -s 64 -D S (the client's one core: messages/s per core)
#                 vs rawpp tput 64 B frames (Mpps)
#   bandwidth     droce-perf -o write -s 65536 -D S (goodput)
#                 vs rawpp tput at droce's frame size: path MTU + 62 B (Ethernet 14, IPv4 20,
#                 UDP 8, BTH 12, ICRC 4, FCS 4), and the payload those frames would carry
# $DROCE_BENCH_REPS times interleaved (default 3), medians. A measurement, not a test: it fails
# only when a run does. Key=value figures go to $DROCE_BENCH_KV when set.
set -u
ME=droce-bench-memif
. '@SRC_DIR@/bench_lib.sh'
DR=${DROCE_RUN:-'@DROCE_RUN@'}
PERF=${DROCE_PERF:-'@PERF@'}
RAWPP=${DROCE_RAWPP:-'@RAWPP@'}
C2C='@C2C@'
SECS=${DROCE_BENCH_SECONDS:-2}
HDR=62	# bytes of a RoCEv2/IPv4 frame around a middle packet's payload, FCS included

command -v ss >/dev/null || die "ss not found (Debian package iproute2)"
for x in "$DR" "$PERF" "$RAWPP"; do
	[ -x "$x" ] || die "$x missing: build first (ninja -C BUILD)"
done
CPU_C=1
[ "$(nproc)" -ge 2 ] || CPU_C=0

SOCK=/droce-bench-memif-$$
perf_pair() {	# perf_pair NAME CLIENT_ARGS...: droce-perf server lcore 0, client lcore CPU_C
	local name=$1
	shift
	SRV=("$DR" -q --no-huge --eal --no-telemetry --lcores 0 --memif server --socket "$SOCK"
		--ip 198.18.0.1/24 -- "$PERF" -p 0 --port-file "$TMP/port" -Q)
	CLI=("$DR" -q --no-huge --eal --no-telemetry --lcores $CPU_C --memif client
		--socket "$SOCK" --ip 198.18.0.2/24 -- "$PERF" -p PORT -J -Q "$@" 127.0.0.1)
	pair "$name" "file:$TMP/port"
}
raw_pair() {	# raw_pair NAME FRAME_SIZE: rawpp tput, the server's figures
	local eal=(--no-huge -m 128 --no-pci --no-shconf --no-telemetry)
	SRV=("$RAWPP" "${eal[@]}" -l 0 "--vdev=net_memif0,role=server,socket=$SOCK-raw" --
		--role server --mode tput --size "$2" -D $((SECS + 20)))
	CLI=("$RAWPP" "${eal[@]}" -l $CPU_C "--vdev=net_memif0,role=client,socket=$SOCK-raw" --
		--role client --mode tput --size "$2" -D "$SECS")
	pair "$1" sleep:1
}
raw_fig() {	# raw_fig NAME KEY: KEY=value from the server's rx line
	sed -n "s|^rawpp tput rx:.* $2=\([0-9.]*\).*|\1|p" "$TMP/$1.srv" | head -n 1
}

declare -a PF_MR RAW_MPPS PF_BW RAW_BW RAW_PAY P0 P1 P2
for r in $(seq "$REPS"); do
	P0+=("$(c2c)")
	perf_pair mr -o write -s 64 -D "$SECS"
	v=$(perf_json "$TMP/mr.cli" mmsg_per_s)
	need mmsg_per_s "$v" mr
	PF_MR+=("$v")
	MTU=$(perf_json "$TMP/mr.cli" path_mtu)
	need path_mtu "$MTU" mr

	raw_pair raw64 64
	v=$(raw_fig raw64 Mpps)
	need Mpps "$v" raw64
	RAW_MPPS+=("$v")

	P1+=("$(c2c)")
	perf_pair bw -o write -s 65536 -D "$SECS"
	v=$(perf_json "$TMP/bw.cli" gbps)
	need gbps "$v" bw
	PF_BW+=("$v")

	FRAME=$((MTU + HDR))
	[ "$FRAME" -le 1518 ] || FRAME=1518	# rawpp's largest frame
	raw_pair rawmtu $FRAME
	v=$(raw_fig rawmtu 'Gbit/s')
	need Gbit/s "$v" rawmtu
	RAW_BW+=("$v")
	RAW_PAY+=("$(awk -v g="$v" -v f=$FRAME -v h=$HDR 'BEGIN { print g * (f - h) / f }')")
	P2+=("$(c2c)")
done

mr=$(median "${PF_MR[@]}")
rmpps=$(median "${RAW_MPPS[@]}")
bw=$(median "${PF_BW[@]}")
rbw=$(median "${RAW_BW[@]}")
rpay=$(median "${RAW_PAY[@]}")
printf '%s (memif, --no-huge, server lcore 0, client lcore %s, both inline; %s CPUs;' "$ME" \
	$CPU_C "$(nproc)"
printf ' path MTU %s; median of %s interleaved runs)\n' "$MTU" "$REPS"
printf '%-46s %10s\n' "message rate" "M/s"
printf '%-46s %10.3f\n' "rawpp 64 B frames" "$rmpps"
printf '%-46s %10.3f  %s %% of raw\n' "droce-perf write 64 B msgs, client on 1 core" "$mr" \
	"$(pct "$mr" "$rmpps")"
printf '%-46s %10s\n' "bandwidth" "Gbit/s"
printf '%-46s %10.3f\n' "rawpp $FRAME B frames (droce's frame size)" "$rbw"
printf '%-46s %10.3f\n' "  the payload they carry ($((FRAME - HDR)) B each)" "$rpay"
printf '%-46s %10.3f  %s %% of raw payload\n' "droce-perf write bw 64 KiB (goodput)" "$bw" \
	"$(pct "$bw" "$rpay")"
# Each run's droce figure over the raw one measured next to it: the machine's speed drifts
# between runs (other tenants), so the spread of these says more than a ratio of medians.
printf '%-46s' "CPUs 0-1 cache-line round trip per run, ns:"
for i in "${!P0[@]}"; do
	printf ' %s/%s/%s' "${P0[$i]%.*}" "${P1[$i]%.*}" "${P2[$i]%.*}"
done
printf '  (near < %s: a shared cache)\n' "$C2C_NEAR_NS"
# per_run LABEL FIRST_PROBES SECOND_PROBES DROCE_VALUES... -- RAW_VALUES...: each run's
# ratio, with where CPUs 0 and 1 were around it
per_run() {
	local label=$1 d=() r=() i out=""
	local -n pa=$2 pb=$3
	shift 3
	while [ "$1" != "--" ]; do d+=("$1"); shift; done
	shift
	r=("$@")
	for i in "${!d[@]}"; do
		out="$out $(pct "${d[$i]}" "${r[$i]:-}") % ($(placement "${pa[$i]}" "${pb[$i]}"))"
	done
	printf '  %-44s%s\n' "$label" "$out"
}
per_run "per run, 64 B msgs vs raw 64 B:" P0 P1 "${PF_MR[@]}" -- "${RAW_MPPS[@]}"
per_run "per run, bw vs raw payload:" P1 P2 "${PF_BW[@]}" -- "${RAW_PAY[@]}"
kv memif_msgrate "$mr"
kv memif_raw_mpps "$rmpps"
kv memif_bw "$bw"
kv memif_raw_frame "$FRAME"
kv memif_raw_gbps "$rbw"
kv memif_raw_payload_gbps "$rpay"
