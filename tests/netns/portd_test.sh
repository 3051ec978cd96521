#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# droce-portd (tools/droce-portd): one port, several programs, each its own engine.
#   portd_test.sh DROCE_PORTD DROCE_PERF HOSTILE_PY WIRE_DIR DROCE_RUN PORTD_COHOST
# Namespace A runs droce-portd on its veth end (net_af_packet, droce address 198.18.0.1) and
# two droce-perf servers that find it through DROCE_PORTD (a control socket in the test's
# directory); namespace B runs a plain droce-perf client (its own port, 198.18.0.2) for each.
#  1. the servers get slots 1 and 2 (distinct QPN ranges);
#  2. server 1 is killed with SIGKILL while both sessions run: server 2's session goes on and
#     finishes with every byte checked (--verify), the service frees slot 1;
#  3. a third server started afterwards gets slot 1 again, while a hostile sender in B
#     (portd_hostile.py) posing as its client sends RDMA WRITEs of 0xEE bytes into its buffer
#     with guessed QPNs and R_Keys (and the real QPN with stale PSNs), and to the free slot:
#     the session passes with every byte of its buffer checked (--verify), the service drops
#     the free slot's frames (portd.drop_no_program), the victim's engine drops the rest;
#     meanwhile a second verbs program on the same service (portd_cohost, on the shim) aims
#     WRITEs at the port's own GID with QPNs guessed in the victim's range and guessed R_Keys:
#     none completes successfully (the service does not loop frames between its programs);
#  4. an unmodified ib_write_bw server through droce-run and the verbs shim, given neither port
#     nor address, runs under the service (its QPN in its slot's range) against ib_write_bw
#     through droce-run on B's own port.
# Root only: as another user the test fails (never skipped). Everything is removed on exit.
set -u
portd=$1
perf=$2
hostile=$3
wire_dir=$4
drun=$5
cohost=$6
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/ns_kernel_side.sh"
[ "$(id -u)" = 0 ] || fail "netns tests need root (network namespaces, veth, nftables): run them as root"
for t in ip nft timeout ss; do
	command -v $t >/dev/null || fail "'$t' not found (packages: iproute2 nftables coreutils)"
done
tag=$$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
nsa=drp_a_$tag nsb=drp_b_$tag
dir=$(mktemp -d /tmp/droce_portd.XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in $nsa $nsb; do ip netns del "$n" 2>/dev/null; done
	[ -n "${DROCE_NETNS_KEEP:-}" ] && echo "logs kept in $dir" || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
inns() { n=$1; shift; timeout 30 ip netns exec "$n" "$@"; }
logs() { for f in "$dir"/*.log; do echo "== $f"; tail -n 40 "$f"; done; }

ip netns add "$nsa" && ip netns add "$nsb" || fail "cannot create network namespaces"
ip -n "$nsa" link add dra address 02:00:00:00:00:01 type veth \
	peer name drb address 02:00:00:00:00:02 netns "$nsb" || fail "no veth"
for x in "a dra 198.19.0.1" "b drb 198.19.0.2"; do
	set -- $x
	n=$(eval echo \$ns$1)
	ns_kernel_side "$n" "$2" "$3"
	ip -n "$n" link set lo up
done

eal="--no-huge -m 128 --no-pci --no-telemetry"
sock=$dir/portd.sock
ip netns exec "$nsa" timeout 150 "$portd" --iface dra --ip 198.18.0.1/24 --socket "$sock" \
	--programs 3 --eal "$eal" >"$dir/portd.log" 2>&1 &
ppd=$!
pids="$pids $ppd"
for t in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { logs; fail "droce-portd did not open its control socket"; }

# a droce-perf server under the service: no port, no address of its own
server() {
	k=$1
	rm -f "$dir/port$k"
	ip netns exec "$nsa" env "DROCE_EAL=$eal" DROCE_PORTD="$sock" DROCE_LCORES=0 \
		DROCE_ARP_RETRY_MS=100 DROCE_ARP_TRIES=40 \
		timeout 100 "$perf" -p 0 --port-file "$dir/port$k" --timeout-ms 20000 --counters \
		>"$dir/s$k.log" 2>&1 &
	eval "ps$k=$!"
	pids="$pids $!"
	for t in $(seq 150); do [ -s "$dir/port$k" ] && break; sleep 0.1; done
	[ -s "$dir/port$k" ] || { logs; fail "droce-perf server $k wrote no port"; }
}
# its client in B, on B's own port (through the qdisc: the hostile sender's packet socket
# sees what it sends)
client() {
	k=$1
	shift
	ip netns exec "$nsb" env "DROCE_EAL=$eal" DROCE_LCORES=0 DROCE_IPV4=198.18.0.2/24 \
		DROCE_VDEV=net_af_packet0,iface=drb,qdisc_bypass=0 DROCE_ARP_RETRY_MS=100 DROCE_ARP_TRIES=40 \
		timeout 100 "$perf" -p "$(cat "$dir/port$k")" -o write --verify -Q --counters \
		"$@" 198.19.0.1 >"$dir/c$k.log" 2>&1 &
	eval "pc$k=$!"
	pids="$pids $!"
}
# the kth program the service took in: "SLOT PID" (the PID is droce-perf's own, under timeout)
joined() { sed -n 's/^droce-portd: slot \([0-9]*\) .* to pid \([0-9]*\)$/\1 \2/p' "$dir/portd.log" | sed -n "$1p"; }
# droce-perf opens its runtime (and joins the service) once its client connects
wait_joined() {
	for t in $(seq 300); do [ -n "$(joined "$1")" ] && return; sleep 0.1; done
	logs
	fail "program $1 never joined the service"
}

server 1
server 2
# long sessions: server 1's is cut short by SIGKILL, server 2's must finish
client 1 -s 65536 -D 30 -n 100000000 --timeout-ms 3000
wait_joined 1
client 2 --sizes 1024,65536 -D 4 -n 100000000 --timeout-ms 20000
wait_joined 2
set -- $(joined 1) $(joined 2)
s1=${1:-} p1=${2:-} s2=${3:-} p2=${4:-}
[ -n "$s1" ] && [ -n "$s2" ] && [ "$s1" != "$s2" ] ||
	{ logs; fail "servers got slots '$s1' and '$s2', expected two distinct ones"; }
echo "servers 1 and 2 (pids $p1 $p2) hold slots $s1 and $s2"
# both sessions under way: the service saw frames for each slot
for t in $(seq 300); do
	grep -q "slot $s1: first frame" "$dir/portd.log" && grep -q "slot $s2: first frame" "$dir/portd.log" && break
	sleep 0.1
done
grep -q "slot $s1: first frame" "$dir/portd.log" && grep -q "slot $s2: first frame" "$dir/portd.log" ||
	{ logs; fail "no traffic for slots $s1 and $s2"; }
sleep 1
kill -0 "$p1" 2>/dev/null && kill -0 "$pc2" 2>/dev/null || { logs; fail "a session ended before the kill"; }
kill -KILL "$p1"
for t in $(seq 50); do
	grep -q "slot $s1 freed: pid $p1 gone" "$dir/portd.log" && break
	sleep 0.1
done
grep -q "slot $s1 freed: pid $p1 gone" "$dir/portd.log" || { logs; fail "slot $s1 not freed after SIGKILL of pid $p1"; }
echo "server 1 killed: slot $s1 freed"
wait "$pc2"
rc2=$?
wait "$ps2"
rs2=$?
[ $rc2 = 0 ] && [ $rs2 = 0 ] || { logs; fail "session 2 after the kill: client exit $rc2, server exit $rs2"; }
echo "session 2 finished verified while server 1 died"
wait "$pc1"
echo "client 1 (its server killed) exit $?"

# a program started afterwards gets the dead one's range
server 3
client 3 --sizes 65536 -D 6 -n 100000000 --timeout-ms 20000
wait_joined 3
set -- $(joined 3)
s3=${1:-} p3=${2:-}
[ "$s3" = "$s1" ] || { logs; fail "server 3 got slot '$s3', expected the freed slot $s1"; }
free=3
[ "$s2" != 3 ] || free=2	# slot 2 is free too now: server 2 is done
ip netns exec "$nsa" env DROCE_PORTD="$sock" timeout 60 "$drun" -q -- "$cohost" "$s1" 2 12 \
	>"$dir/cohost.log" 2>&1 &
pco=$!
pids="$pids $pco"
ip netns exec "$nsb" timeout 60 /usr/bin/python3 "$hostile" "$wire_dir" drb "$s1" "$free" 2 4 \
	>"$dir/hostile.log" 2>&1
rh=$?
cat "$dir/hostile.log"
[ $rh = 0 ] || { logs; fail "the hostile sender did not run"; }
wait "$pco"
rco=$?
cat "$dir/cohost.log"
[ $rco = 0 ] || { logs; fail "the program beside the victim on the same port: exit $rco"; }
wait "$pc3"
rc3=$?
wait "$ps3"
rs3=$?
[ $rc3 = 0 ] && [ $rs3 = 0 ] || { logs; fail "session 3 on the reused slot: client exit $rc3, server exit $rs3"; }
for t in $(seq 50); do grep -q "slot $s1 freed: pid $p3 gone" "$dir/portd.log" && break; sleep 0.1; done
grep "slot $s1 freed: pid $p3 gone" "$dir/portd.log" | grep -qv "frames to it 0," ||
	{ logs; fail "server 3's frames did not pass through slot $s1"; }
echo "server 3 (pid $p3) reused slot $s1, its session verified under the hostile WRITEs"

# an unmodified verbs program under the service: droce-run finds it through DROCE_PORTD
command -v ib_write_bw >/dev/null || fail "ib_write_bw not found (package perftest)"
ip netns exec "$nsa" env DROCE_PORTD="$sock" timeout 60 "$drun" -q -- \
	ib_write_bw -x 0 -s 65536 -n 300 >"$dir/shim_s.log" 2>&1 &
pss=$!
pids="$pids $pss"
# perftest opens the device once its client has connected over TCP: wait for its port
for t in $(seq 100); do
	ip netns exec "$nsa" ss -ltn 2>/dev/null | grep -q ":18515 " && break
	sleep 0.1
done
ip netns exec "$nsb" timeout 60 "$drun" -q --iface drb --ip 198.18.0.2/24 -- \
	ib_write_bw -x 0 -s 65536 -n 300 198.19.0.1 >"$dir/shim_c.log" 2>&1
rc=$?
set -- $(joined 5)	# the 4th was the program beside server 3
s4=${1:-}
wait "$pss"
rs=$?
[ $rc = 0 ] && [ $rs = 0 ] || { cat "$dir/shim_s.log" "$dir/shim_c.log"; logs; fail "ib_write_bw under the service: client exit $rc, server exit $rs"; }
qpn=$(sed -n 's/^ *local address: .* QPN \(0x[0-9a-f]*\) .*/\1/p' "$dir/shim_s.log" | head -n 1)
[ -n "$qpn" ] && [ $((qpn >> 22)) = "$s4" ] ||
	{ cat "$dir/shim_s.log"; fail "ib_write_bw's QPN '$qpn' is not in slot $s4's range"; }
echo "ib_write_bw through droce-run under the service: slot $s4, QPN $qpn, both ends exit 0"

kill -TERM "$ppd"
wait "$ppd"
cat "$dir/portd.log"
nf=$(sed -n 's/^ *portd.drop_no_program = //p' "$dir/portd.log")
[ "${nf:-0}" -gt 0 ] || fail "the service dropped no frame for the free slot"
grep -E "server dev.drop_|server dev.*(dup|nak)" "$dir/s3.log"
nq=$(sed -n 's/^server dev.drop_bad_qpn = //p' "$dir/s3.log")
[ "${nq:-0}" -gt 0 ] || fail "server 3's engine dropped no WRITE to a guessed QPN"
grep -q "verify ok" "$dir/s2.log" && grep -q "verify ok" "$dir/s3.log" ||
	fail "servers 2 and 3 did not both report verify ok"
echo "ok"
