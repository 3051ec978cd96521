#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# droce between network namespaces: one runtime per namespace running tests/glue's RC session
# (netns_side: RDMA WRITE, SENDs, RDMA READ, every byte checked), droce doing its own ARP/ND.
#   netns_test.sh TEST NETNS_SIDE [DROCE_XDP_O DROCE_XDP_ADDRS [DROCE_PERF]]
#   TEST: afpacket | afxdp               A <-veth-> B
#         loss_afpacket | loss_afxdp     A <-veth-> M (bridge) <-veth-> B, M drops 5 % of UDP 4791
#                                        and one non-ACK packet in every 1000
#         ecn_afpacket | ecn_afxdp       the same, M sets CE on every UDP 4791 packet
#         ecn_dcqcn_perf_afpacket        droce-perf --verify with CE on every packet and DCQCN on
#                                        both sides (DROCE_CC=dcqcn): the CNPs slow the sender down
#                                        (dev.cc_deferred), every byte arrives
#         a trailing 6: over the IPv6 GIDs (glue_smoke rc6)
#         perf_afxdp | loss_perf_afxdp   droce-perf --verify instead (RDMA WRITE, 1 B .. 1 MiB;
#         perf_afpacket                  under loss 1 B .. 64 KiB),
#                                        its TCP side channel over the kernel's addresses
# Impairment sits in a middle namespace: a af_xdp receiver's XDP program takes the frame before
# any nft hook of its own namespace could see it. The kernel keeps its own addresses
# (198.19.0.1, .2) on the same interfaces and must ping across while droce runs.
# Root only: as another user the test fails (never skipped). Everything is removed on exit.
set -u
test=$1
side=$2
xdp_obj=${3:-}
xdp_addrs=${4:-}
perf=${5:-}
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/ns_kernel_side.sh"
[ "$(id -u)" = 0 ] || fail "netns tests need root (network namespaces, veth, nftables, XDP): run them as root"
for t in ip nft ping timeout mkfifo; do
	command -v $t >/dev/null || fail "'$t' not found (packages: iproute2 nftables iputils-ping coreutils)"
done
# a trailing 6: the session runs over the IPv6 GIDs (glue_smoke rc6), neighbours by ND
mode=rc
cc=none	# the runtime's congestion control (DROCE_CC) on both sides of a droce-perf session
case $test in *6) mode=rc6; test=${test%6} ;; esac
case $test in *perf_*) mode=perf; test=$(echo "$test" | sed 's/perf_//') ;; esac
[ $mode != perf ] || [ -x "$perf" ] || fail "droce-perf not given"
case $test in
afpacket|afxdp) impair=none; pmd=$test ;;
loss_*) impair=loss; pmd=${test#loss_} ;;
ecn_dcqcn_*) impair=ecn; cc=dcqcn; pmd=${test#ecn_dcqcn_} ;;
ecn_*) impair=ecn; pmd=${test#ecn_} ;;
*) fail "unknown test '$test'" ;;
esac
if [ "$pmd" = afxdp ] && { [ ! -f "$xdp_obj" ] || [ ! -x "$xdp_addrs" ]; }; then
	fail "af_xdp needs droce_xdp.o and droce-xdp-addrs (pmd-glue/xdp)"
fi

# unique per run: parallel runs never share a namespace, FIFO or log
tag=$$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
nsa=drn_a_$tag nsb=drn_b_$tag nsm=drn_m_$tag
dir=$(mktemp -d /tmp/droce_netns.XXXXXX)
pids=
cleanup() {
	# TERM: timeout(1) passes it on to the side it runs (a KILL would orphan that side)
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in $nsa $nsb $nsm; do ip netns del "$n" 2>/dev/null; done
	[ -n "${DROCE_NETNS_KEEP:-}" ] && echo "logs kept in $dir" || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
inns() { n=$1; shift; timeout 30 ip netns exec "$n" "$@"; }

ip netns add "$nsa" && ip netns add "$nsb" || fail "cannot create network namespaces"
if [ $impair = none ]; then
	ip -n "$nsa" link add dra address 02:00:00:00:00:01 type veth \
		peer name drb address 02:00:00:00:00:02 netns "$nsb" || fail "no veth"
else
	ip netns add "$nsm" || fail "cannot create the middle namespace"
	ip -n "$nsa" link add dra address 02:00:00:00:00:01 type veth peer name vma netns "$nsm" &&
	ip -n "$nsb" link add drb address 02:00:00:00:00:02 type veth peer name vmb netns "$nsm" &&
	ip -n "$nsm" link add br0 type bridge &&
	ip -n "$nsm" link set dev vma master br0 && ip -n "$nsm" link set dev vmb master br0 ||
		fail "cannot build A - bridge - B"
	inns "$nsm" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	for d in vma vmb br0; do ip -n "$nsm" link set dev "$d" up; done
	if [ $impair = loss ]; then
		# 5 % at random, and the 6th of every 1000 packets that are not ACKs (BTH opcode,
		# the first byte after the UDP header, not 0x11): a lost request or READ response
		# is always resent, so each run drops and retransmits whatever the dice say
		rules="add rule bridge droce impair udp dport 4791 numgen random mod 100 < 5 counter drop;
		       add rule bridge droce impair udp dport 4791 @th,64,8 != 0x11 numgen inc mod 1000 == 5 counter drop"
	else
		# IPv4 ECN (nft fixes the header checksum) and the IPv6 traffic class alike
		rules="add rule bridge droce impair ether type ip udp dport 4791 ip ecn set ce counter;
		       add rule bridge droce impair ether type ip6 udp dport 4791 ip6 ecn set ce counter"
	fi
	inns "$nsm" nft "add table bridge droce; add chain bridge droce impair { type filter hook forward priority 0; }; $rules" ||
		fail "nft: $rules"
fi
# The kernel's own side of each interface (ns_kernel_side.sh).
for x in "a dra 198.19.0.1" "b drb 198.19.0.2"; do
	set -- $x
	n=$(eval echo \$ns$1)
	ns_kernel_side "$n" "$2" "$3"
done

eal="--no-huge -m 128 --no-pci --no-telemetry"
vdev() {
	if [ "$pmd" = afxdp ]; then
		echo "net_af_xdp0,iface=$1,xdp_prog=$xdp_obj"
	else
		echo "net_af_packet0,iface=$1"
	fi
}

# One session: both sides started (ARP/ND retried 20 times 100 ms apart, not glue_smoke's 3: a
# shared 2-core machine can stall a side for a few hundred ms), droce's addresses given to the XDP programs, the kernel's
# ping across while both runtimes poll their ports; 0 when both sides checked every byte.
# The sides talk over FIFOs that pass through relays: the server's first byte ("port open")
# goes straight on, everything else is held until the XDP maps are filled and the ping is
# over. Meanwhile each side waits for the other's "meet" byte in glue_smoke's meet() (up to
# 10 s, its loop running), so neither resolves the other before its address is in the map.
session() {
	k=$1
	rm -f "$dir/c2s" "$dir/s2c" "$dir/c2s_held" "$dir/s2c_held"
	mkfifo "$dir/c2s" "$dir/s2c" "$dir/c2s_held" "$dir/s2c_held" || fail "mkfifo"
	# ip netns exec gives a private /sys without bpffs: mount one (libbpf, libxdp may want it)
	ip netns exec "$nsa" sh -c 'mount -t bpf bpf /sys/fs/bpf 2>/dev/null; exec "$@"' sh \
		env DROCE_ARP_TRIES=20 timeout 60 "$side" $mode server "$dir/c2s" "$dir/s2c_held" "$eal" "$(vdev dra)" \
		>"$dir/a$k.log" 2>&1 &
	pa=$!
	dd if="$dir/s2c_held" of="$dir/s2c" bs=1 count=1 2>/dev/null &
	pd=$!
	ip netns exec "$nsb" sh -c 'mount -t bpf bpf /sys/fs/bpf 2>/dev/null; exec "$@"' sh \
		env DROCE_ARP_TRIES=20 timeout 60 "$side" $mode client "$dir/s2c" "$dir/c2s_held" "$eal" "$(vdev drb)" \
		>"$dir/b$k.log" 2>&1 &
	pb=$!
	pids="$pids $pa $pd $pb"
	if [ "$pmd" = afxdp ]; then
		inns "$nsa" "$xdp_addrs" dra 198.18.0.1 2001:2::1 &
		qa=$!
		inns "$nsb" "$xdp_addrs" drb 198.18.0.2 2001:2::2 || fail "droce-xdp-addrs B"
		wait $qa || fail "droce-xdp-addrs A"
		for x in "$nsa dra" "$nsb drb"; do
			set -- $x
			ip -n "$1" link show "$2" | grep -q "prog/xdp" || fail "no XDP program on $2"
		done
	else
		# the client opens its port once the server's is up: wait for a packet socket in
		# each namespace (/proc/net/packet: a header line, then one line per socket)
		for t in $(seq 200); do
			[ "$(inns "$nsa" cat /proc/net/packet | wc -l)" -gt 1 ] &&
				[ "$(inns "$nsb" cat /proc/net/packet | wc -l)" -gt 1 ] && break
			sleep 0.05
		done
		[ "$(inns "$nsb" cat /proc/net/packet | wc -l)" -gt 1 ] || fail "no af_packet socket in B"
	fi
	# the kernel's own traffic on the same interfaces, both ways
	inns "$nsa" ping -q -c 5 -i 0.02 -W 2 198.19.0.2 >"$dir/ping$k.log" 2>&1 &&
	inns "$nsb" ping -q -c 5 -i 0.02 -W 2 198.19.0.1 >>"$dir/ping$k.log" 2>&1 ||
		{ cat "$dir/ping$k.log"; fail "kernel ping between the namespaces failed while droce runs"; }
	kill -0 $pa 2>/dev/null && kill -0 $pb 2>/dev/null ||
		{ cat "$dir/a$k.log" "$dir/b$k.log"; fail "a droce side ended before the ping was over"; }
	wait $pd || fail "the server never opened its port"
	cat "$dir/c2s_held" >"$dir/c2s" &
	pids="$pids $!"
	cat "$dir/s2c_held" >"$dir/s2c" &
	pids="$pids $!"
	wait $pa
	ra=$?
	wait $pb
	rb=$?
	grep -E "netns_side|intact|:[0-9]+: " "$dir/a$k.log" "$dir/b$k.log"
	if [ $ra != 0 ] || [ $rb != 0 ]; then
		cat "$dir/a$k.log" "$dir/b$k.log"
		fail "session $k: server exit $ra, client exit $rb"
	fi
	grep -q "netns_side $mode server: ok" "$dir/a$k.log" &&
		grep -q "netns_side $mode client: ok" "$dir/b$k.log" ||
		fail "session $k did not report ok"
	echo "session $k: bytes checked on both sides, kernel ping answered during it"
}

# droce-perf between the namespaces: the server (A, inline) writes its TCP port to a file, the
# client (B, loop on a poll lcore) sweeps RDMA WRITE 1 B .. 1 MiB with --verify, reaching the
# server over the kernel's 198.19.0.1 on the same interface. Neighbour retries are raised: here
# nothing holds the client back until droce-xdp-addrs has filled its map.
perf_session() {
	k=$1
	rm -f "$dir/port"
	# the whole sweep; under loss (go-back-N resends whole windows) up to 64 KiB
	sizes=-a
	[ $impair = loss ] && sizes="--sizes 1,1024,4096,65536"
	# DCQCN between 100 Mbit/s and 1 Gbit/s, so that its cuts show within the session (from
	# 100 Gbit/s they would not slow this link) and a cut-down QP still finishes soon
	dcqcn="DROCE_CC=$cc DROCE_DCQCN_MAX_RATE_MBPS=1000 DROCE_DCQCN_MIN_RATE_MBPS=100"
	[ "$cc" = dcqcn ] && sizes="--sizes 1,1024,4096,65536"
	ip netns exec "$nsa" sh -c 'mount -t bpf bpf /sys/fs/bpf 2>/dev/null; exec "$@"' sh \
		env "DROCE_EAL=$eal" DROCE_ARP_RETRY_MS=100 DROCE_ARP_TRIES=40 DROCE_LCORES=0 DROCE_IPV4=198.18.0.1/24 DROCE_VDEV="$(vdev dra)" $dcqcn \
		timeout 100 "$perf" -p 0 --port-file "$dir/port" --counters >"$dir/a$k.log" 2>&1 &
	pa=$!
	pids="$pids $pa"
	[ "$pmd" = afxdp ] && { inns "$nsa" "$xdp_addrs" dra 198.18.0.1 || fail "droce-xdp-addrs A"; }
	for t in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
	[ -s "$dir/port" ] || { cat "$dir/a$k.log"; fail "droce-perf server wrote no port"; }
	ip netns exec "$nsb" sh -c 'mount -t bpf bpf /sys/fs/bpf 2>/dev/null; exec "$@"' sh \
		env "DROCE_EAL=$eal" DROCE_ARP_RETRY_MS=100 DROCE_ARP_TRIES=40 DROCE_LCORES=0,1 DROCE_IPV4=198.18.0.2/24 DROCE_VDEV="$(vdev drb)" $dcqcn \
		timeout 100 "$perf" -p "$(cat "$dir/port")" -o write $sizes -n 24 --verify -Q --counters \
		198.19.0.1 >"$dir/b$k.log" 2>&1 &
	pb=$!
	pids="$pids $pb"
	[ "$pmd" = afxdp ] && { inns "$nsb" "$xdp_addrs" drb 198.18.0.2 || fail "droce-xdp-addrs B"; }
	inns "$nsb" ping -q -c 5 -i 0.02 -W 2 198.19.0.1 >"$dir/ping$k.log" 2>&1 ||
		{ cat "$dir/ping$k.log"; fail "kernel ping B -> A failed while droce-perf runs"; }
	kill -0 $pa 2>/dev/null || { cat "$dir/a$k.log"; fail "droce-perf server ended before the ping"; }
	wait $pb
	rb=$?
	wait $pa
	ra=$?
	tail -n 30 "$dir/b$k.log"
	[ $ra = 0 ] && [ $rb = 0 ] ||
		{ cat "$dir/a$k.log"; fail "droce-perf: server exit $ra, client exit $rb"; }
	echo "droce-perf session $k: verified, kernel ping answered during it"
}

# retransmitted packets: the engine's counter (glue_smoke prints it), or droce-perf's retrans
# column summed over its rows
retrans() {
	if [ $mode = perf ]; then
		cat "$dir"/b*.log | awk 'NF == 7 && $7 == "ok" { s += $6 } END { print s + 0 }'
	else
		counter dev.roce_adp_retrans
	fi
}

# packets counted by the middle namespace's impairment rules
nft_packets() {
	inns "$nsm" nft list chain bridge droce impair |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) } END { print s + 0 }'
}

# sum of one counter over both sides' printed counters (or one side's: a or b as $2)
counter() {
	cat "$dir"/${2:-[ab]}*.log | awk -v n="$1" '$2 == n && $3 == "=" { s += $4 } END { print s + 0 }'
}

case $impair in
none)
	if [ $mode = perf ]; then perf_session 1; else session 1; fi
	;;
loss)
	# One session must show a drop and a retransmission. The fixed drop makes the first one
	# do; more sessions run only should that rule fail to match, each checked fully.
	for k in 1 2 3 4; do
		if [ $mode = perf ]; then perf_session $k; else session $k; fi
		[ "$(retrans)" -gt 0 ] && [ "$(nft_packets)" -gt 0 ] && break
	done
	drops=$(nft_packets)
	echo "nft dropped ${drops:-?} RoCE packets; retransmitted: $(retrans)"
	[ "${drops:-0}" -gt 0 ] || fail "nft dropped nothing"
	[ "$(retrans)" -gt 0 ] || fail "no retransmission counted after $k sessions"
	;;
ecn)
	if [ $mode = perf ]; then perf_session 1; else session 1; fi
	marked=$(nft_packets)
	ce=$(counter dev.np_ecn_marked_roce_packets)
	echo "nft set CE on ${marked:-?} packets; receivers counted $ce CE-marked"
	[ "${marked:-0}" -gt 0 ] || fail "nft marked nothing"
	[ "$ce" -gt 0 ] || fail "no CE-marked packet counted (dev.np_ecn_marked_roce_packets)"
	# DCQCN's notification point answers with CNPs, which the data sender takes in
	echo "CNPs sent $(counter dev.np_cnp_sent), handled $(counter dev.rp_cnp_handled)"
	[ "$(counter dev.np_cnp_sent)" -gt 0 ] || fail "CE-marked packets drew no CNP (dev.np_cnp_sent)"
	[ "$(counter dev.rp_cnp_handled)" -gt 0 ] || fail "no CNP handled (dev.rp_cnp_handled)"
	if [ "$cc" = dcqcn ]; then
		# DCQCN's reaction point: the CNPs cut the senders' rates, so their limiters held
		# packets back (and every byte still arrived: the session checks them)
		echo "DCQCN: $(counter dev.cc_deferred) packets held by the rate limiters"
		[ "$(counter dev.cc_deferred)" -gt 0 ] || fail "DCQCN held no packet (dev.cc_deferred)"
		# with link_mbps unset, each side says which rate its parameters are for
		for x in a b; do
			grep -h "droce: cc dcqcn: " "$dir"/$x*.log | head -n 1
			grep -q "droce: cc dcqcn: .*link_mbps" "$dir"/$x*.log ||
				fail "$x: no notice of the rate DCQCN's parameters are for"
		done
	else
		[ "$(counter dev.cc_deferred)" = 0 ] || fail "cc none held packets (dev.cc_deferred)"
	fi
	# every RoCE frame crossed the bridge, so each one that reached a QP (dev.rcvd_pkts, counted
	# where the CE bits are looked at) was CE-marked
	for x in a b; do
		[ "$(counter dev.np_ecn_marked_roce_packets $x)" = "$(counter dev.rcvd_pkts $x)" ] || {
			cat "$dir"/$x*.log
			fail "side $x: $(counter dev.np_ecn_marked_roce_packets $x) CE-marked of $(counter dev.rcvd_pkts $x) RoCE packets received"
		}
	done
	;;
esac
echo "netns $test ($mode): ok"
