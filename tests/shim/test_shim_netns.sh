#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian's unmodified verbs binaries on the shim between two network namespaces joined by a
# veth pair, each side started through droce-run --iface over net_af_packet and over
# net_af_xdp (pmd-glue/xdp's program, droce's addresses put in its map by droce-run). The
# programs' TCP exchange goes over the kernel's own addresses on the same interfaces
# (198.19.0.1, .2; kernel IPv6 off); droce has its own (198.18.0.1, .2 and 2001:2::1, ::2) and
# resolves its peer by its own ARP / neighbour discovery.
#
# Asserted, for each PMD: ibv_rc_pingpong (defaults, -s 16384, and over the IPv6 GIDs) and
# perftest ib_write_bw (an 8 s run with the kernel's ping across meanwhile, and droce-stat
# reading both runtimes' neighbour counters: each learnt its peer, an ARP request and a reply
# were received, no peer unreachable), ib_read_lat and ib_send_lat exit 0 and report their byte counts / result rows; each side's runtime capture
# holds an ARP (ND) frame from the peer's droce address with the peer's MAC, an ARP reply (NA)
# between droce's addresses, and RoCE frames both ways, sent to that MAC; the kernels answer
# ping both ways after the runs;
# no ICMP destination unreachable leaves either kernel (nft counter) and none reaches droce.
# mckey (rdma_cm multicast): 20 datagrams to 239.1.2.3, and the receiver's kernel joined to
# the group on its veth while it runs (IGMPv3 join and leave reports in the peer's capture).
# af_packet: the kernels saw RoCE frames too (nft ingress counter > 0: packet sockets share
# the interface) and, droce's addresses not being theirs and forwarding being off, dropped
# them silently. af_xdp: the XDP program took every RoCE frame (ingress counter 0) and
# droce-run said it filled the address map.
# droce-run's own refusals in a namespace are checked too (absent or down interface, the
# kernel's address, someone else's XDP program attached, a live droce's); droce's own program
# left by a droce-run killed with -9 is detached by its watcher, or taken over by the next.
# Root only (namespaces, veth, nftables, XDP): as another user it fails, never skips.
# SHIM_NETNS_KEEP=1 keeps each side's output and capture ($TMP/PMD.NAME.a|b.*).
# Usage: test_shim_netns.sh <build>/verbs-shim <build>/tools/droce-run/droce-run \
#        tools/droce-stat/droce-stat PMD...     (PMD: af_packet | af_xdp)
. "$(dirname "$0")/shim_lib.sh"
DR=$2
STAT=$3
shift 3
PMDS=("$@")
[ ${#PMDS[@]} -gt 0 ] || { echo "FAIL: no PMD given (af_packet, af_xdp)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (network namespaces, veth, nftables, XDP)"; exit 1; }
for t in ip nft ping ss timeout tshark dumpcap ibv_rc_pingpong ib_write_bw ib_read_lat ib_send_lat \
	mckey; do
	command -v $t >/dev/null || { echo "FAIL: '$t' not found (packages: iproute2 nftables" \
		"iputils-ping tshark ibverbs-utils perftest rdmacm-utils)"; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "FAIL: needs 2 CPUs (the runtime's progress)"; exit 1; }

# unique per run: parallel runs never share a namespace
TAG=$$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
NSA=dsn_a_$TAG NSB=dsn_b_$TAG
MACA=02:00:00:00:05:01 MACB=02:00:00:00:05:02
TMP=$(mktemp -d /tmp/droce_shim_netns.XXXXXX)
PIDS=
cleanup() {
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -f "$OUT" "$ERR"
	[ -n "${SHIM_NETNS_KEEP:-}" ] && echo "logs and captures kept in $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
inns() {
	local n=$1
	shift
	timeout -s KILL 30 ip netns exec "$n" "$@"
}

# A <-veth-> B; the kernel's addresses for TCP and ping, IPv6 off so it stays quiet; nft
# counts the kernel's view: UDP 4791 at ingress, ICMP destination unreachable sent.
netns_up() {
	local x n d a
	ip netns add "$NSA" && ip netns add "$NSB" || { echo "FAIL: cannot create namespaces"; exit 1; }
	ip -n "$NSA" link add va address $MACA type veth peer name vb address $MACB netns "$NSB" ||
		{ echo "FAIL: no veth pair"; exit 1; }
	for x in "$NSA va 198.19.0.1" "$NSB vb 198.19.0.2"; do
		read -r n d a <<<"$x"
		inns "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		inns "$n" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
		ip -n "$n" addr add "$a/24" dev "$d" && ip -n "$n" link set "$d" up ||
			{ echo "FAIL: address on $d"; exit 1; }
		inns "$n" nft "add table netdev dsn; add chain netdev dsn in { type filter hook ingress device $d priority 0; }; add rule netdev dsn in udp dport 4791 counter; add table inet dsn; add chain inet dsn out { type filter hook output priority 0; }; add rule inet dsn out icmp type destination-unreachable counter" ||
			{ echo "FAIL: nft counters in $n"; exit 1; }
	done
}

netns_down() {
	ip netns del "$NSA"
	ip netns del "$NSB"
}

# nft_count NS WORDS: packets counted by the rule whose text holds WORDS
nft_count() {
	inns "$1" nft list ruleset |
		awk -v w="$2" 'index($0, w) { for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) }
			END { print s + 0 }'
}

# side NS IFACE ADDR ADDR6 LOG -- PROGRAM ARGS: one side through droce-run, bounded; its runtime
# captures what it receives and sends (the first 2 MiB: ARP and the first RoCE frames).
side() {
	local ns=$1 dev=$2 ip=$3 ip6=$4 log=$5
	shift 6
	exec timeout -s KILL 90 ip netns exec "$ns" "$DR" --no-huge \
		--iface "$dev" --pmd "$PMD" --ip "$ip/24" --ip6 "$ip6/64" \
		--set capture="$log.pcap" --set capture_max_kb=2048 -- "$@" >"$log.out" 2>"$log.err"
}

# port_open NS IFACE: droce's port is open there (af_xdp: its program is attached; af_packet:
# a packet socket exists in the namespace, /proc/net/packet having a line after its header)
port_open() {
	if [ "$PMD" = af_xdp ]; then
		ip -n "$1" link show dev "$2" | grep -q "prog/xdp"
	else
		[ "$(inns "$1" cat /proc/net/packet | wc -l)" -gt 1 ]
	fi
}

# kping NS DST WHAT: five pings answered, all of them
kping() {
	inns "$1" ping -q -c 5 -i 0.05 -W 2 "$2" >"$OUT" 2>"$ERR"
	grep -q " 5 received" "$OUT" || fail "$PMD: kernel ping $3"
}

# arp_check LOG OWN PEER PEER_MAC WHAT: the runtime's capture on one side shows it heard the
# peer's droce by ARP (IPv6 addresses: neighbour solicitations / advertisements), sent its
# RoCE frames to the MAC learnt, and received the peer's.
arp_check() {
	local log=$1 own=$2 peer=$3 pmac=$4 what=$5 how=ARP
	[[ $own != *:* ]] || how="ND"
	# one row per frame: ARP opcode, sender IP, sender MAC, target IP | IPv4 src, dst, UDP
	# port, Ethernet destination | ICMP type | ICMPv6 type, IPv6 src, dst | Ethernet source
	tshark -r "$log.pcap" -T fields -E separator='|' -e arp.opcode -e arp.src.proto_ipv4 \
		-e arp.src.hw_mac -e arp.dst.proto_ipv4 -e ip.src -e ip.dst -e udp.dstport -e eth.dst \
		-e icmp.type -e icmpv6.type -e ipv6.src -e ipv6.dst -e eth.src \
		>"$log.fields" 2>"$log.tshark" || {
		cat "$log.tshark"
		fail "$what: tshark cannot read $log.pcap"
		return
	}
	read -r ARP_FROM_PEER ARP_REPLY ROCE_OUT ROCE_IN ICMP_UNREACH < <(awk -F'|' \
		-v o="$own" -v p="$peer" -v m="$pmac" '
		$2 == p && $3 == m { arp++ }
		$1 == 2 && $2 == p && $4 == o { rep++ }
		($10 == 135 || $10 == 136) && $11 == p && $13 == m { arp++ }
		$10 == 136 && $11 == p && $12 == o { rep++ }
		($5 == o && $6 == p || $11 == o && $12 == p) && $7 == 4791 && $8 == m { out++ }
		($5 == p && $6 == o || $11 == p && $12 == o) && $7 == 4791 { in_++ }
		$9 == 3 || $10 == 1 { icmp++ }
		END { print arp + 0, rep + 0, out + 0, in_ + 0, icmp + 0 }' "$log.fields")
	[ "$ARP_FROM_PEER" -gt 0 ] ||
		fail "$what: no $how from droce's $peer at $pmac in the capture"
	[ "$ROCE_OUT" -gt 0 ] || fail "$what: no RoCE frame sent to $peer at $pmac"
	[ "$ROCE_IN" -gt 0 ] || fail "$what: no RoCE frame received from $peer"
	[ "$ICMP_UNREACH" = 0 ] || fail "$what: $ICMP_UNREACH ICMP unreachable reached droce"
	REPLIES=$((REPLIES + ARP_REPLY))
}

# neigh_counters PID_A PID_B WHAT: the runtimes' neighbour counters over telemetry while
# they run (the program is the child of each side's timeout): each side learnt its peer, an
# ARP request and a reply were received between them, no peer was found unreachable.
neigh_counters() {
	local p c i req=0 rep=0 learned unreach rq rp
	for p in "$1" "$2"; do
		c=$(pgrep -P "$p" | head -n 1)
		# by its file prefix (the runtime's droce<pid>): -p asks every droce process under
		# /var/run/dpdk first, and a busy one there can make it miss ours
		for i in $(seq 10); do
			timeout 10 "$STAT" -f "droce${c:-0}" -g neigh --json >"$OUT" 2>"$ERR" && break
			sleep 0.1
		done
		[ -s "$OUT" ] || { fail "$3: droce-stat -f droce${c:-?} -g neigh"; return; }
		read -r learned unreach rq rp < <(/usr/bin/python3 -c '
import json, sys
n = json.load(sys.stdin)["counters"]["neigh"]
print(n["learned"], n["unreachable"], n["arp_req_rx"], n["arp_rep_rx"])' <"$OUT")
		[ "${learned:-0}" -ge 1 ] || fail "$3: pid $c: neigh.learned ${learned:-?}"
		[ "${unreach:-1}" = 0 ] || fail "$3: pid $c: neigh.unreachable ${unreach:-?}"
		req=$((req + ${rq:-0}))
		rep=$((rep + ${rp:-0}))
	done
	[ "$req" -ge 1 ] && [ "$rep" -ge 1 ] ||
		fail "$3: ARP requests received $req, replies received $rep (droce-stat)"
	echo "$3: droce-stat: both runtimes learnt their peer; ARP requests received $req, replies $rep"
}

# pair NAME SERVER_REGEX CLIENT_REGEX TOOL ARGS...: TOOL ARGS -p PORT in A, the same with
# 198.19.0.1 in B; both exit 0 with their line; DURING=1: the kernels ping each other while
# both runtimes hold their ports, and both programs still run once the pings are answered.
pair() {
	local name=$1 sre=$2 cre=$3 tool=$4 i pa pb ra rb fails=$FAILS
	shift 4
	local a=$TMP/$PMD.$name.a b=$TMP/$PMD.$name.b
	PORT=$((PORT + 1))
	side "$NSA" va 198.18.0.1 2001:2::1 "$a" -- "$tool" -p $PORT "$@" &
	pa=$!
	PIDS="$PIDS $pa"
	for i in $(seq 100); do
		inns "$NSA" ss -Hltn "sport = :$PORT" | grep -q . && break
		kill -0 $pa 2>/dev/null || break
		sleep 0.1
	done
	side "$NSB" vb 198.18.0.2 2001:2::2 "$b" -- "$tool" -p $PORT "$@" 198.19.0.1 &
	pb=$!
	PIDS="$PIDS $pb"
	if [ "${DURING:-0}" = 1 ]; then
		for i in $(seq 100); do
			port_open "$NSA" va && port_open "$NSB" vb && break
			sleep 0.1
		done
		port_open "$NSA" va && port_open "$NSB" vb ||
			fail "$PMD $name: droce's ports not open in both namespaces within 10 s"
		kping "$NSA" 198.19.0.2 "A -> B during $name"
		kping "$NSB" 198.19.0.1 "B -> A during $name"
		kill -0 $pa 2>/dev/null && kill -0 $pb 2>/dev/null ||
			fail "$PMD $name: a side ended before the pings did (not during the run)"
		neigh_counters $pa $pb "$PMD $name"
	fi
	wait $pb
	rb=$?
	wait $pa
	ra=$?
	cp "$b.out" "$OUT"
	cp "$b.err" "$ERR"
	RC=$rb
	expect_rc 0 "$PMD $name client"
	expect_out "$cre" "$PMD $name client"
	[ "$PMD" != af_xdp ] || expect_err "^droce-run: 198\.18\.0\.2 2001:2::2 listed in vb's XDP map" \
		"$PMD $name client"
	cp "$a.out" "$OUT"
	cp "$a.err" "$ERR"
	RC=$ra
	expect_rc 0 "$PMD $name server"
	expect_out "$sre" "$PMD $name server"
	[ "$PMD" != af_xdp ] || expect_err "^droce-run: 198\.18\.0\.1 2001:2::1 listed in va's XDP map" \
		"$PMD $name server"
	# the family of the GID used: -g 1 / -x 1 is the IPv6 one
	local a1=198.18.0.1 a2=198.18.0.2
	[[ " $* " != *" -g 1 "* && " $* " != *" -x 1 "* ]] || { a1=2001:2::1 a2=2001:2::2; }
	REPLIES=0
	arp_check "$a" $a1 $a2 $MACB "$PMD $name server capture"
	arp_check "$b" $a2 $a1 $MACA "$PMD $name client capture"
	[ "$REPLIES" -gt 0 ] || fail "$PMD $name: no ARP reply / NA between droce's addresses"
	[ "$FAILS" != "$fails" ] ||
		echo "$PMD $name: ok (exit 0 both sides; ARP/ND from the peer's droce in both captures)"
}

# setup_errors: droce-run's one-line refusals inside a namespace (dry runs, exit 2, the program
# not run): an absent interface (those present listed), one down, droce's address the
# kernel's, and for af_xdp an XDP program already on the interface.
setup_errors() {
	local x
	# dr WHAT REGEX ARGS...: droce-run ARGS in A refuses with REGEX
	dr() {
		local what=$1 re=$2
		shift 2
		inns "$NSA" "$DR" -n "$@" -- touch "$TMP/ran" >"$OUT" 2>"$ERR"
		RC=$?
		expect_rc 2 "$PMD $what"
		expect_err "$re" "$PMD $what"
		[ ! -e "$TMP/ran" ] || fail "$PMD $what: the program ran"
	}
	dr "interface absent" "^droce-run: interface 'vz' not found in this network namespace \(here: lo va\)" \
		--iface vz --pmd "$PMD" --ip 198.18.0.1/24
	ip -n "$NSA" link add dz type veth peer name dz2 || fail "no second veth pair"
	dr "interface down" "^droce-run: interface dz is down: run 'ip link set dev dz up' first\$" \
		--iface dz --pmd "$PMD" --ip 198.18.0.1/24
	dr "the kernel's address" "^droce-run: 198\.19\.0\.1 is the kernel's address too \(on va\)" \
		--iface va --pmd "$PMD" --ip 198.19.0.1/24
	if [ "$PMD" = af_xdp ]; then
		x=${TEST_XDP_OTHER:-}
		[ -f "$x" ] || fail "no XDP program of someone else's to attach (TEST_XDP_OTHER)"
		ip -n "$NSA" link set dev dz up &&
			ip -n "$NSA" link set dev dz xdpgeneric obj "$x" sec xdp ||
			fail "cannot attach $x to dz"
		dr "someone else's XDP program" "^droce-run: interface dz already has an XDP program that is not droce's \(program [0-9]+ 'other_xdp'\): .*'ip link set dev dz xdp off'" \
			--iface dz --pmd af_xdp --ip 198.18.0.1/24
	fi
	ip -n "$NSA" link del dz
}

# xdp_leftover (af_xdp): a droce-run killed with -9 leaves droce's XDP program on its interface
# (the PMD detaches only on a clean close); its watcher detaches it once the process is gone.
# A second droce on the interface is refused while the first lives. A leftover nobody watches
# (attached by hand: a process killed before it recorded itself as the owner, its watcher
# with it; or one whose recorded owner is gone) is taken over by the next droce-run, which then
# runs ibv_rc_pingpong on that interface.
xdp_leftover() {
	local log=$TMP/xdp.left pa i x dead
	ip netns exec "$NSA" "$DR" --no-huge --iface va --pmd af_xdp --ip 198.18.0.1/24 -- \
		ibv_rc_pingpong -g 0 -p 20099 >"$log.out" 2>&1 &
	pa=$!	# ip netns exec and droce-run exec: the verbs program itself
	PIDS="$PIDS $pa"
	for i in $(seq 200); do
		grep -q "listed in va's XDP map" "$log.out" && break
		kill -0 $pa 2>/dev/null || break
		sleep 0.1
	done
	grep -q "listed in va's XDP map" "$log.out" ||
		{ cp "$log.out" "$ERR"; fail "af_xdp leftover: the first droce-run did not open va"; }
	inns "$NSA" "$DR" -n --iface va --pmd af_xdp --ip 198.18.0.3/24 -- true >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 2 "af_xdp: a second droce on va"
	expect_err "^droce-run: interface va already has droce's XDP program, of a running droce \(program [0-9]+ of droce process $pa\)" \
		"af_xdp: a second droce on va"
	kill -KILL $pa
	wait $pa 2>/dev/null
	for i in $(seq 30); do
		port_open "$NSA" va || break
		sleep 0.1
	done
	! port_open "$NSA" va || fail "af_xdp: droce's XDP program still on va 3 s after kill -9"
	# a leftover whose owner is gone: a dry run says it would take it over
	inns "$NSA" "$DR" -n -q --iface va --pmd af_xdp --ip 198.18.0.1/24 -- true >"$OUT"
	x=$(sed -n 's/^DROCE_VDEV=.*xdp_prog=//p' "$OUT")
	ip -n "$NSA" link set dev va xdpgeneric obj "$x" sec xdp || fail "cannot attach $x to va"
	sh -c 'exit 0' &
	dead=$!
	wait $dead
	inns "$NSA" "${x%/droce_xdp.o}/droce-xdp-addrs" --owner $dead va 198.18.0.1 ||
		fail "af_xdp: droce-xdp-addrs --owner"
	inns "$NSA" "$DR" -n --iface va --pmd af_xdp --ip 198.18.0.1/24 -- true >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 0 "af_xdp: a leftover of a process that is gone, dry run"
	expect_err "^droce-run: interface va: would detach droce's program [0-9]+, left by a process that is gone" \
		"af_xdp: a leftover of a process that is gone, dry run"
	# the same without an owner, and a real run: taken over, then used
	ip -n "$NSA" link set dev va xdpgeneric off
	ip -n "$NSA" link set dev va xdpgeneric obj "$x" sec xdp || fail "cannot attach $x to va"
	pair leftover "^8192000 bytes in " "^1000 iters in " ibv_rc_pingpong -g 0 -c
	cp "$TMP/$PMD.leftover.a.err" "$ERR"
	expect_err "^droce-run: interface va: detached droce's program [0-9]+, left by a process that never recorded itself" \
		"af_xdp: a leftover taken over"
}

# maddr_has NS GROUP: the kernel in NS has joined GROUP on its veth (IGMP membership)
maddr_has() {
	local d=va
	[ "$1" = "$NSA" ] || d=vb
	ip -n "$1" maddr show dev "$d" | grep -Eq "^[[:space:]]+inet +${2//./\\.}\$"
}

# mcast_join: rdma_cm multicast, mckey (A joins 239.1.2.3 as a full member, B sends it 20
# datagrams). A's rdma_join_multicast joins A's kernel to the group on va, as the kernel's
# rdma_cm does for its RoCE devices (droce_rt_mcast_report), so that a snooping switch would
# forward the group: the membership exists while A runs and is gone after, and a capture of
# B's kernel side (dumpcap on vb) holds A's IGMPv3 reports, the join (record type 4,
# CHANGE_TO_EXCLUDE) and the leave (3, CHANGE_TO_INCLUDE).
mcast_join() {
	local a=$TMP/$PMD.mc.a b=$TMP/$PMD.mc.b cap=$TMP/$PMD.igmp.pcapng dp pa pb i got fails0=$FAILS
	timeout -s INT 60 ip netns exec "$NSB" dumpcap -q -i vb -f igmp -w "$cap" \
		2>"$TMP/dumpcap.err" &
	dp=$!
	PIDS="$PIDS $dp"
	for i in $(seq 100); do
		grep -q "^Capturing on" "$TMP/dumpcap.err" && break
		sleep 0.1
	done
	side "$NSA" va 198.18.0.1 2001:2::1 "$a" -- mckey -m 239.1.2.3 -b 198.18.0.1 -C 20 &
	pa=$!
	PIDS="$PIDS $pa"
	for i in $(seq 200); do
		maddr_has "$NSA" 239.1.2.3 && break
		kill -0 $pa 2>/dev/null || break
		sleep 0.1
	done
	maddr_has "$NSA" 239.1.2.3 || fail "$PMD mckey: A's kernel did not join 239.1.2.3 on va"
	side "$NSB" vb 198.18.0.2 2001:2::2 "$b" -- mckey -m 239.1.2.3 -b 198.18.0.2 -s -C 20 &
	pb=$!
	PIDS="$PIDS $pb"
	wait $pb
	RC=$?
	cp "$b.out" "$OUT"
	cp "$b.err" "$ERR"
	expect_rc 0 "$PMD mckey sender"
	expect_out "^data transfers complete" "$PMD mckey sender"
	wait $pa
	RC=$?
	cp "$a.out" "$OUT"
	cp "$a.err" "$ERR"
	expect_rc 0 "$PMD mckey receiver (all 20 datagrams)"
	expect_out "^data transfers complete" "$PMD mckey receiver"
	! maddr_has "$NSA" 239.1.2.3 || fail "$PMD mckey: A's kernel still in 239.1.2.3 after A left"
	sleep 0.5	# the leave's report on the wire
	kill -INT $dp 2>/dev/null
	wait $dp
	got=$(tshark -r "$cap" -Y "igmp.version == 3 && ip.src == 198.19.0.1" -T fields \
		-e igmp.maddr -e igmp.record_type 2>/dev/null | sort -u | tr '\t\n' ', ')
	for i in "239.1.2.3,4 " "239.1.2.3,3 "; do
		case "$got" in
		*"$i"*) ;;
		*) fail "$PMD mckey: no IGMPv3 record '$i' from A's kernel in B's capture ('$got')" ;;
		esac
	done
	[ "$FAILS" != "$fails0" ] || echo "$PMD mckey: ok (20 datagrams; A's kernel joined 239.1.2.3 and left)"
}

PORT=20100
for PMD in "${PMDS[@]}"; do
	netns_up
	setup_errors
	[ "$PMD" != af_xdp ] || xdp_leftover
	pair rc "^8192000 bytes in " "^1000 iters in " ibv_rc_pingpong -g 0 -c
	expect_out "^1000 iters in " "$PMD rc server"
	expect_out "remote address: .*GID ::ffff:198\.18\.0\.2\$" "$PMD rc server"
	pair rc_s16384 "^6553600 bytes in " "^6553600 bytes in " \
		ibv_rc_pingpong -g 0 -c -n 200 -s 16384
	# IPv6 GIDs: droce's neighbour discovery, the XDP map's IPv6 key (kernel IPv6 off)
	pair rc6 "^200 iters in " "^200 iters in " ibv_rc_pingpong -g 1 -c -n 200
	expect_out "remote address: .*GID 2001:2::2\$" "$PMD rc6 server"
	# an 8 s run (duration mode): the pings and the counter reads fall inside it, even on a
	# loaded machine
	DURING=1 pair write_bw "^ +65536 +[1-9][0-9]* +[0-9.]+ +[0-9.]+" \
		"^ +65536 +[1-9][0-9]* +[0-9.]+ +[0-9.]+" ib_write_bw -x 0 -D 8
	expect_out "Device +: droce0" "$PMD write_bw"
	mcast_join
	# ib_read_lat's server is passive: its remote address line only
	pair read_lat "^ remote address: LID" "^ +2 +500 +[0-9.]+" ib_read_lat -x 0 -n 500
	pair send_lat "^ +2 +500 +[0-9.]+" "^ +2 +500 +[0-9.]+" ib_send_lat -x 0 -n 500
	kping "$NSA" 198.19.0.2 "A -> B after the runs"
	kping "$NSB" 198.19.0.1 "B -> A after the runs"
	for n in "$NSA" "$NSB"; do
		u=$(nft_count "$n" "destination-unreachable")
		[ "$u" = 0 ] || fail "$PMD: the kernel in $n sent $u ICMP destination unreachable"
		k=$(nft_count "$n" "dport 4791")
		if [ "$PMD" = af_packet ]; then
			# packet sockets and the kernel both get every frame
			[ "$k" -gt 0 ] || fail "$PMD: the kernel in $n saw no RoCE frame (nft ingress)"
		else
			[ "$k" = 0 ] || fail "$PMD: $k RoCE frames reached the kernel in $n, not droce"
		fi
		echo "$PMD: kernel in $n saw $k RoCE frames, sent $u ICMP unreachable"
	done
	netns_down
done
finish
