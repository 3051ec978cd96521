#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Path MTU 4096 over a kernel interface: Debian's unmodified verbs binaries on the shim between
# two network namespaces joined by a veth pair at MTU 4200, each side through droce-run --iface
# over net_af_packet, the runtime sizing af_packet's ring slot and mbufs for it (no --mtu: the
# MTU is the interface's, the path MTU follows). Then the same pair at MTU 1500 (path MTU 1024).
#
# Asserted at 4200: ibv_devinfo -v shows active_mtu 4096 (5) and droce-run said MTU 4200, path
# MTU 4096; ibv_rc_pingpong -m 4096 -c (16 KiB messages, every byte checked by -c), ib_write_bw
# and ib_read_bw -m 4096 (64 KiB messages) exit 0 with their result rows and perftest's
# "Mtu : 4096[B]"; each side's runtime capture passes droce-pcap verify (every RoCE frame
# parses and its ICRC is right: nothing cut short), holds full 4096-byte payloads both ways
# (WRITE, READ response and SEND MIDDLE frames of 4154 bytes, the 4096-byte payloads after
# the headers of their opcode) and no RoCE frame over 4170 bytes (WRITE FIRST: RETH 16).
# At 1500 the same programs at -m 1024: active_mtu 1024, full payloads of 1024 bytes (MIDDLE
# frames of 1082), none over 1098. The runtime's refusals: --mtu 4200 on a veth at 1500 names
# the interface's MTU and the fix; a framesz in the vdev too small for the MTU names it; with
# af_xdp (when built) on a veth at 4200, the port names af_xdp's range and af_packet.
# Root only (namespaces, veth): as another user it fails, never skips.
# SHIM_MTU_KEEP=1 keeps each side's output and capture.
# Usage: test_shim_mtu.sh <build>/verbs-shim <build>/tools/droce-run/droce-run \
#        <build>/tools/droce-pcap/droce-pcap [af_xdp]
. "$(dirname "$0")/shim_lib.sh"
DR=$2
PCAP=$3
XDP=${4:-}
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (network namespaces, veth)"; exit 1; }
for t in ip ss timeout ibv_devinfo ibv_rc_pingpong ib_write_bw ib_read_bw; do
	command -v $t >/dev/null || { echo "FAIL: '$t' not found (packages: iproute2" \
		"ibverbs-utils perftest)"; exit 1; }
done

# unique per run: parallel runs never share a namespace
TAG=$$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
NSA=mtu_a_$TAG NSB=mtu_b_$TAG
TMP=$(mktemp -d /tmp/droce_shim_mtu.XXXXXX)
PIDS=
cleanup() {
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -f "$OUT" "$ERR"
	[ -n "${SHIM_MTU_KEEP:-}" ] && echo "logs and captures kept in $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
inns() {
	local n=$1
	shift
	timeout -s KILL 30 ip netns exec "$n" "$@"
}

# netns_up MTU: A <-veth-> B at MTU, the kernel's addresses for perftest's TCP exchange
netns_up() {
	local x n d a
	ip netns add "$NSA" && ip netns add "$NSB" || { echo "FAIL: cannot create namespaces"; exit 1; }
	ip -n "$NSA" link add va mtu "$1" type veth peer name vb mtu "$1" netns "$NSB" ||
		{ echo "FAIL: no veth pair at MTU $1"; exit 1; }
	for x in "$NSA va 198.19.0.1" "$NSB vb 198.19.0.2"; do
		read -r n d a <<<"$x"
		inns "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		ip -n "$n" addr add "$a/24" dev "$d" && ip -n "$n" link set "$d" up ||
			{ echo "FAIL: address on $d"; exit 1; }
	done
}

netns_down() {
	ip netns del "$NSA"
	ip netns del "$NSB"
}

# side NS IFACE ADDR LOG -- PROGRAM ARGS: one side through droce-run, bounded, its runtime
# capturing what it receives and sends
side() {
	local ns=$1 dev=$2 ip=$3 log=$4
	shift 5
	exec timeout -s KILL 90 ip netns exec "$ns" "$DR" --no-huge --iface "$dev" --ip "$ip/24" \
		--set capture="$log.pcap" --set capture_max_kb=16384 -- "$@" >"$log.out" 2>"$log.err"
}

# frames LOG PMTU WHAT OWN_ADDR: the capture passes droce-pcap verify; RoCE frames whose payload
# is a full PMTU are there (both ways with BOTH_WAYS=1), MIDDLE frames of PMTU + 58 bytes among
# them, none longer than a full WRITE FIRST (PMTU + 74)
frames() {
	local log=$1 pmtu=$2 what=$3 full_out full_in mid longest
	"$PCAP" verify "$log.pcap" >"$OUT" 2>"$ERR" || { RC=$?; fail "$what: droce-pcap verify"; return; }
	"$PCAP" decode --json "$log.pcap" >"$log.json" 2>"$ERR" ||
		{ fail "$what: droce-pcap decode"; return; }
	read -r full_out full_in mid longest < <(/usr/bin/python3 - "$log.json" "$pmtu" "$4" <<'EOF'
import json, sys
full_out = full_in = mid = longest = 0
for line in open(sys.argv[1]):
    p = json.loads(line)
    if p.get("status") != "ok":
        continue
    longest = max(longest, p["frame_len"])
    if p["pay_len"] == int(sys.argv[2]):
        if p["src"] == sys.argv[3]:
            full_out += 1
        else:
            full_in += 1
        if "MIDDLE" in p["opcode_name"] and p["frame_len"] == int(sys.argv[2]) + 58:
            mid += 1
print(full_out, full_in, mid, longest)
EOF
)
	[ $((${full_out:-0} + ${full_in:-0})) -gt 0 ] || fail "$what: no $pmtu-byte payload"
	if [ "$BOTH_WAYS" = 1 ] && { [ "${full_out:-0}" = 0 ] || [ "${full_in:-0}" = 0 ]; }; then
		fail "$what: $pmtu-byte payloads $full_out sent, $full_in received (both ways wanted)"
	fi
	[ "${mid:-0}" -gt 0 ] || fail "$what: no MIDDLE frame of $((pmtu + 58)) bytes"
	[ "${longest:-0}" -le $((pmtu + 74)) ] ||
		fail "$what: a RoCE frame of $longest bytes (path MTU $pmtu allows $((pmtu + 74)))"
	echo "$what: $full_out full frames out, $full_in in, $mid MIDDLE of $((pmtu + 58)) B," \
		"longest $longest B"
}

# pair NAME PMTU SERVER_REGEX CLIENT_REGEX TOOL ARGS...: TOOL ARGS -p PORT in A, the same with
# 198.19.0.1 in B; both exit 0 with their line, both captures right for PMTU
pair() {
	local name=$1 pmtu=$2 sre=$3 cre=$4 tool=$5 i pa pb ra rb fails=$FAILS
	BOTH_WAYS=${BOTH_WAYS:-0}
	shift 5
	local a=$TMP/$name.a b=$TMP/$name.b
	PORT=$((PORT + 1))
	side "$NSA" va 198.18.0.1 "$a" -- "$tool" -p $PORT "$@" &
	pa=$!
	PIDS="$PIDS $pa"
	for i in $(seq 100); do
		inns "$NSA" ss -Hltn "sport = :$PORT" | grep -q . && break
		kill -0 $pa 2>/dev/null || break
		sleep 0.1
	done
	side "$NSB" vb 198.18.0.2 "$b" -- "$tool" -p $PORT "$@" 198.19.0.1 &
	pb=$!
	PIDS="$PIDS $pb"
	wait $pb
	rb=$?
	wait $pa
	ra=$?
	cp "$b.out" "$OUT"
	cp "$b.err" "$ERR"
	RC=$rb
	expect_rc 0 "$name client"
	expect_out "$cre" "$name client"
	cp "$a.out" "$OUT"
	cp "$a.err" "$ERR"
	RC=$ra
	expect_rc 0 "$name server"
	expect_out "$sre" "$name server"
	[ "$tool" = ibv_rc_pingpong ] || expect_out "Mtu +: $pmtu\[B\]" "$name server"
	[ "$pmtu" = 1024 ] || expect_err "^droce-run: MTU 4200, path MTU 4096\$" "$name server"
	frames "$a" "$pmtu" "$name server capture" 198.18.0.1
	frames "$b" "$pmtu" "$name client capture" 198.18.0.2
	[ "$FAILS" != "$fails" ] || echo "$name: ok"
}

# runs MTU PMTU IBV_MTU: the programs at path MTU PMTU over a veth pair at MTU
runs() {
	local mtu=$1 pmtu=$2 ibv=$3 bw="^ +65536 +200 +[0-9.]+ +[0-9.]+"
	netns_up "$mtu"
	run -- ip netns exec "$NSA" "$DR" -q --no-huge --iface va --ip 198.18.0.1/24 -- ibv_devinfo -v
	expect_rc 0 "ibv_devinfo at MTU $mtu"
	expect_out "active_mtu:[[:space:]]+$pmtu \($ibv\)" "ibv_devinfo at MTU $mtu"
	BOTH_WAYS=1 pair "rc_$mtu" "$pmtu" "^3276800 bytes in " "^3276800 bytes in " \
		ibv_rc_pingpong -g 0 -c -m "$pmtu" -n 100 -s 16384
	pair "write_bw_$mtu" "$pmtu" "$bw" "$bw" ib_write_bw -x 0 -m "$pmtu" -s 65536 -n 200
	pair "read_bw_$mtu" "$pmtu" "$bw" "$bw" ib_read_bw -x 0 -m "$pmtu" -s 65536 -n 200
	netns_down
}

# refusals: one line each from the runtime, the program's first verb failing
refusals() {
	netns_up 1500
	run -- ip netns exec "$NSA" "$DR" --no-huge --iface va --ip 198.18.0.1/24 --mtu 4200 -- \
		ibv_rc_pingpong -g 0 -n 1 198.19.0.9
	[ "$RC" != 0 ] || fail "--mtu 4200 on a veth at 1500: exit 0"
	expect_err "interface va has MTU 1500, below DROCE_MTU 4200: raise it on both ends \('ip link set dev va mtu 4200'\) or lower DROCE_MTU to 1500" \
		"--mtu 4200 on a veth at 1500"
	ip -n "$NSA" link set va mtu 4200
	run -- ip netns exec "$NSA" "$DR" --no-huge --vdev net_af_packet0,iface=va,framesz=4096,blocksz=4096 \
		--ip 198.18.0.1/24 --mtu 4200 -- ibv_rc_pingpong -g 0 -n 1 198.19.0.9
	[ "$RC" != 0 ] || fail "framesz 4096 for MTU 4200: exit 0"
	expect_err "net_af_packet0 framesz=4096 holds an MTU of 4016 at most, below DROCE_MTU 4200" \
		"framesz 4096 for MTU 4200"
	if [ "$XDP" = af_xdp ]; then
		ip -n "$NSB" link set vb mtu 4200
		run -- ip netns exec "$NSA" "$DR" --no-huge --iface va --pmd af_xdp --ip 198.18.0.1/24 \
			-- ibv_rc_pingpong -g 0 -n 1 198.19.0.9
		[ "$RC" != 0 ] || fail "af_xdp at MTU 4200: exit 0"
		expect_err "MTU 4200 outside port net_af_xdp0's range 68\.\.[0-9]+: af_xdp receives a frame into one umem chunk of a page \(DPDK 22\.11 has no multi-buffer AF_XDP\): use af_packet" \
			"af_xdp at MTU 4200"
	fi
	netns_down
}

PORT=20400
refusals
runs 4200 4096 5
runs 1500 1024 3
finish
