#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two unmodified programs on one port under droce-portd, one of them on rdma_cm, one killed.
#   portd_cm_test.sh DROCE_PORTD DROCE_RUN
# Namespaces A and B joined by veth, droce-portd on each end (net_af_packet; 198.18.0.1, .2):
# B has two clients on one interface too, and two one-process droce on one interface would
# each take every frame and answer for one address, so B shares its port the same way.
#  1. On A, through droce-run and the verbs shim: ib_write_bw's server (64 KiB WRITEs, run until
#     killed, the client reporting each second) and rping -s -V (rdma_cm: its REQ reaches it through the service by the CM
#     service ID it listens on, every later MAD by the slot in its comm IDs); on B their clients.
#  2. Once both move data (rping's verified pings counted, a second of WRITEs reported by
#     ib_write_bw's client), ib_write_bw's server is killed with SIGKILL: rping finishes its -C pings, each
#     verified, both ends exit 0; ib_write_bw's client ends with an error (not by its timeout);
#     A's service frees the killed program's slot.
# Root only: as another user the test fails (never skipped). Everything is removed on exit.
set -u
portd=$1
drun=$2
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/ns_kernel_side.sh"
[ "$(id -u)" = 0 ] || fail "netns tests need root (network namespaces, veth, nftables): run them as root"
for t in ip nft timeout ss rping ib_write_bw python3; do
	command -v $t >/dev/null || fail "'$t' not found (packages: iproute2 nftables coreutils rdmacm-utils perftest python3)"
done
tag=$$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
nsa=drc_a_$tag nsb=drc_b_$tag
dir=$(mktemp -d /tmp/droce_portd_cm.XXXXXX)
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
logs() { for f in "$dir"/*.log; do echo "== $f"; grep -v "^EAL" "$f" | tail -n 30 | cut -c1-200; done; }

ip netns add "$nsa" && ip netns add "$nsb" || fail "cannot create network namespaces"
ip -n "$nsa" link add dca address 02:00:00:00:00:01 type veth \
	peer name dcb address 02:00:00:00:00:02 netns "$nsb" || fail "no veth"
for x in "a dca 198.19.0.1 198.18.0.1" "b dcb 198.19.0.2 198.18.0.2"; do
	set -- $x
	n=$(eval echo \$ns$1)
	ns_kernel_side "$n" "$2" "$3"
	ip -n "$n" link set lo up
	ip netns exec "$n" timeout 120 "$portd" --iface "$2" --ip "$4/24" --socket "$dir/$1.sock" \
		--programs 3 --eal "--no-huge -m 128 --no-pci --no-telemetry" >"$dir/portd_$1.log" 2>&1 &
	eval "pd$1=$!"
	pids="$pids $!"
done
for t in $(seq 100); do [ -S "$dir/a.sock" ] && [ -S "$dir/b.sock" ] && break; sleep 0.1; done
[ -S "$dir/a.sock" ] && [ -S "$dir/b.sock" ] || { logs; fail "droce-portd did not open its control sockets"; }

# PROGRAM under NS's service through droce-run, log NAME.log, bounded: run NS NAME ARGS...
run() {
	n=$1 name=$2
	shift 2
	ip netns exec "$(eval echo \$ns$n)" env DROCE_PORTD="$dir/$n.sock" \
		timeout 90 "$drun" -q --lcores 0,1 -- "$@" >"$dir/$name.log" 2>&1 &
	eval "p_$name=$!"
	pids="$pids $!"
}
# the pid of the program that took a slot of NS's service for the kth time
joined() { sed -n 's/^droce-portd: slot \([0-9]*\) .* to pid \([0-9]*\)$/\1 \2/p' "$dir/portd_$1.log" | sed -n "$2p"; }
wait_joined() {
	for t in $(seq 300); do [ -n "$(joined "$1" "$2")" ] && return; sleep 0.1; done
	logs
	fail "program $2 never joined the service on $1"
}

pings=3000
run a bw_s ib_write_bw -x 0 -s 65536 --run_infinitely -D 1
# perftest opens the device once its client has connected over TCP: the rping server joins first
run a rp_s rping -s -a 198.18.0.1 -p 7471 -C $pings -V -v -S 64
wait_joined a 1
for t in $(seq 100); do grep -q "listens on service ID" "$dir/portd_a.log" && break; sleep 0.1; done
grep -q "listens on service ID 0x0000000001061d2f$" "$dir/portd_a.log" ||
	{ logs; fail "rping -s did not listen on port 7471 through the service"; }
for t in $(seq 100); do
	ip netns exec "$nsa" ss -ltn 2>/dev/null | grep -q ":18515 " && break
	sleep 0.1
done
run b bw_c ib_write_bw -x 0 -s 65536 --run_infinitely -D 1 198.19.0.1
wait_joined a 2
run b rp_c rping -c -a 198.18.0.1 -p 7471 -C $pings -V -v -S 64
set -- $(joined a 1) $(joined a 2)
srp=${1:-} prp=${2:-} sbw=${3:-} pbw=${4:-}
[ -n "$srp" ] && [ -n "$sbw" ] && [ "$srp" != "$sbw" ] ||
	{ logs; fail "A's programs got slots '$srp' and '$sbw', expected two distinct ones"; }
echo "on A: rping -s pid $prp in slot $srp, ib_write_bw pid $pbw in slot $sbw"

# both mid-transfer: rping's verified pings counted (fewer than all: it has not exited, which
# would flush them all)
npings() { grep -o 'rdma-ping-[0-9]*:' "$dir/rp_c.log" | sort -u | wc -l; }
for t in $(seq 300); do [ "$(npings)" -ge 20 ] && break; sleep 0.1; done
# ib_write_bw's client reports each second (--run_infinitely -D 1): a line with a non-zero
# average is a second of WRITEs done
nbw() { awk '$1 == 65536 && $4 > 0 { n++ } END { print n + 0 }' "$dir/bw_c.log"; }
for t in $(seq 300); do [ "$(nbw)" -ge 1 ] && break; sleep 0.1; done
n1=$(npings) b1=$(nbw)
echo "before the kill: rping $n1 of $pings pings verified, ib_write_bw $b1 seconds of WRITEs reported"
[ "$n1" -ge 20 ] && [ "$n1" -lt $pings ] || { logs; fail "rping not mid-run before the kill ($n1 of $pings pings)"; }
[ "$b1" -ge 1 ] || { logs; fail "ib_write_bw's client reported no WRITEs before the kill"; }
kill -KILL "$pbw" || fail "cannot kill ib_write_bw's server (pid $pbw)"
for t in $(seq 50); do
	grep -q "slot $sbw freed: pid $pbw gone" "$dir/portd_a.log" && break
	sleep 0.1
done
grep -q "slot $sbw freed: pid $pbw gone" "$dir/portd_a.log" ||
	{ logs; fail "slot $sbw not freed after SIGKILL of pid $pbw"; }
echo "ib_write_bw's server killed: slot $sbw freed"

wait "$p_rp_c"
rc=$?
wait "$p_rp_s"
rs=$?
n2=$(npings)
[ $rc = 0 ] && [ $rs = 0 ] || { logs; fail "rping after the kill: client exit $rc, server exit $rs"; }
[ "$n2" = $pings ] || { logs; fail "rping client: $n2 of $pings pings"; }
# the server's lines may be cut by its CM thread's output: count the distinct ping numbers
[ "$(grep -o 'rdma-ping-[0-9]*:' "$dir/rp_s.log" | sort -u | wc -l)" = $pings ] ||
	{ logs; fail "rping server: not $pings pings"; }
# rping's output reaches its file in blocks: n1 lags the pings done, so this is at most
echo "rping: $pings pings of 64 B verified on both sides (up to $((n2 - n1)) after the kill), both exit 0"
wait "$p_bw_c"
rb=$?
[ $rb != 0 ] && [ $rb != 124 ] && [ $rb != 137 ] ||
	{ logs; fail "ib_write_bw's client, its server killed: exit $rb (0: no error; 124/137: hung until its timeout)"; }
err=$(grep -o -m1 -iE '(completion with error|failed)[^.]*' "$dir/bw_c.log")
[ -n "$err" ] || { logs; fail "ib_write_bw's client exit $rb without an error said"; }
echo "ib_write_bw's client: exit $rb, \"$err\""

for p in $pda $pdb; do kill -TERM "$p"; done
wait "$pda"
wait "$pdb"
grep -E "slot|drop_|programs_" "$dir/portd_a.log"
grep -q "slot $srp freed: pid $prp gone" "$dir/portd_a.log" || fail "rping's slot $srp not freed at its exit"
echo "ok"
