#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Host-address mode (addr_mode = host) between two namespaces joined by a veth pair, over
# net_af_xdp with droce's XDP program: droce on the interfaces' own addresses (198.18.0.1 in A,
# .2 in B), the kernel keeping ARP, ping and TCP on them.
#   hostaddr_test.sh HOSTADDR_SIDE DROCE_XDP_O DROCE_XDP_ADDRS DROCE_RUN
# 1. af_packet is refused, by droce-run and by the runtime, naming the cause and the fix.
# 2. Both runtimes up (hostaddr_side): A's GID table is the interface's address; `ip addr add`
#    of a second one appears in it and `ip addr del` removes it (the runtime's table, and the
#    verbs shim's through ibv_devinfo -v); B resolves A through the kernel's neighbour table,
#    emptied first: the MAC is A's, the kernel's entry made by that request; an address no one
#    holds is "peer unreachable" from the kernel's FAILED entry. Meanwhile ping and a TCP
#    transfer (1 MiB, digest compared) between the same addresses.
# 3. Unmodified qperf -cm1 (one host name for its TCP exchange and for rdma_cm) rc_bw rc_lat
#    rc_rdma_read_lat through droce-run's default on af_xdp (host mode), ping across while it
#    runs: each test after rc_bw is a new server child whose REQ follows rc_bw's DREQ.
# Root only: as another user it fails (never skipped). Everything is removed on exit.
set -u
side=$1
xdp_obj=$2
xdp_addrs=$3
dr=$4
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (network namespaces, veth, XDP): run it as root"
for t in ip ping timeout mkfifo qperf python3 ibv_devinfo; do
	command -v $t >/dev/null || fail "'$t' not found (packages: iproute2 iputils-ping" \
		"coreutils qperf python3 ibverbs-utils)"
done

tag=$$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
nsa=drh_a_$tag nsb=drh_b_$tag
dir=$(mktemp -d /tmp/droce_hostaddr.XXXXXX)
pids=
cleanup() {
	exec 3>&- 4>&- 2>/dev/null
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in $nsa $nsb; do ip netns del "$n" 2>/dev/null; done
	[ -n "${DROCE_NETNS_KEEP:-}" ] && echo "logs kept in $dir" || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
trap '' PIPE	# a side that ended early shows in its exit status, not as our death
# ip netns exec gives a private /sys without bpffs: mount one (libbpf, libxdp may want it)
inns() {
	n=$1
	shift
	timeout ${T:-60} ip netns exec "$n" sh -c 'mount -t bpf bpf /sys/fs/bpf 2>/dev/null; exec "$@"' \
		sh "$@"
}

ip netns add "$nsa" && ip netns add "$nsb" || fail "cannot create network namespaces"
ip -n "$nsa" link add dra address 02:00:00:00:00:01 type veth \
	peer name drb address 02:00:00:00:00:02 netns "$nsb" || fail "no veth"
for x in "$nsa dra 198.18.0.1" "$nsb drb 198.18.0.2"; do
	set -- $x
	inns "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	inns "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	# the kernel's unanswered ARP gives up after 3 x 100 ms (the unreachable case below)
	inns "$1" sysctl -qw net.ipv4.neigh.$2.retrans_time_ms=100
	ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up &&
		ip -n "$1" link set lo up || fail "address on $2"
done
eal="--no-huge -m 128 --no-pci --no-telemetry"

# --- 1. af_packet cannot hide UDP 4791 from the kernel: refused ---
out=$(inns "$nsa" "$dr" -q --no-huge --iface dra --pmd af_packet --addr-mode host -- true 2>&1)
rc=$?
[ $rc = 2 ] && grep -q "cannot run on af_packet" <<<"$out" && grep -q -- "--pmd af_xdp" <<<"$out" ||
	fail "droce-run --pmd af_packet --addr-mode host: exit $rc, '$out'"
out=$(inns "$nsa" env DROCE_EAL="$eal" DROCE_ADDR_MODE=host DROCE_VDEV=net_af_packet0,iface=dra \
	"$side" </dev/null 2>&1)
grep -q "cannot run on net_af_packet.*use net_af_xdp" <<<"$out" ||
	fail "the runtime on af_packet in host mode: '$out'"
echo "af_packet refused: $(sed -n 's/.*\(cannot run on net_af_packet[^:]*\).*/\1/p' <<<"$out")"

# --- 2. both runtimes: GIDs, neighbours, the kernel's own traffic ---
# cmd FD OUT LINE: send a command, print its answer (up to "end" for gids), 10 s at most
cmd() {
	local n t
	n=$(wc -l <"$2")
	echo "$3" >&"$1"
	for t in $(seq 200); do
		if [ "$(wc -l <"$2")" -gt "$n" ]; then
			case $3 in gids) tail -n +$((n + 1)) "$2" | grep -q '^end' && break ;; *) break ;; esac
		fi
		sleep 0.05
	done
	tail -n +$((n + 1)) "$2"
}
start_side() {	# start_side NS IFACE FD
	mkfifo "$dir/$2.in" || fail "mkfifo"
	# the whole of part 2, on a loaded host: longer than a command's 60 s
	T=200 inns "$1" env DROCE_EAL="$eal" DROCE_ADDR_MODE=host \
		DROCE_VDEV="net_af_xdp0,iface=$2,xdp_prog=$xdp_obj" "$side" \
		<"$dir/$2.in" >"$dir/$2.out" 2>&1 &
	pids="$pids $!"
	eval "side_$2=$!"
	eval "exec $3>\"$dir/$2.in\""
	for t in $(seq 200); do grep -q -e '^ready' -e 'failed' "$dir/$2.out" && break; sleep 0.05; done
	grep -q '^ready' "$dir/$2.out" || { cat "$dir/$2.out"; fail "$2: the runtime did not open"; }
	# the owner recorded, the address list left open (host mode)
	inns "$1" "$xdp_addrs" --host --owner "$!" "$2" || fail "droce-xdp-addrs --host on $2"
}
start_side "$nsa" dra 3
start_side "$nsb" drb 4
g=$(cmd 3 "$dir/dra.out" gids)
[ "$(echo "$g" | grep -c '^gid')" = 1 ] && grep -q '^gid 0 198.18.0.1$' <<<"$g" ||
	fail "A's GID table is not the interface's address: $g"
ip -n "$nsa" addr add 198.18.0.7/24 dev dra || fail "ip addr add"
r=$(cmd 3 "$dir/dra.out" "wait present 198.18.0.7")
[ "$r" = "ok 1" ] || fail "198.18.0.7 added: GID table says '$r'"
dv=$(inns "$nsa" env LD_LIBRARY_PATH="$(dirname "$dr")/../../verbs-shim" DROCE_ADDR_MODE=host \
	DROCE_VDEV="net_af_xdp0,iface=dra,xdp_prog=$xdp_obj" ibv_devinfo -v 2>&1)
grep -q "GID\[ *0\]:.*::ffff:198.18.0.1" <<<"$dv" && grep -q "GID\[ *1\]:.*::ffff:198.18.0.7" <<<"$dv" ||
	{ echo "$dv"; fail "ibv_devinfo -v does not show both addresses as GIDs"; }
ip -n "$nsa" addr del 198.18.0.7/24 dev dra || fail "ip addr del"
r=$(cmd 3 "$dir/dra.out" "wait absent 198.18.0.7")
[ "$r" = ok ] || fail "198.18.0.7 removed: GID table says '$r'"
g=$(cmd 3 "$dir/dra.out" gids)
[ "$(echo "$g" | grep -c '^gid')" = 1 ] && grep -q '^gid 0 198.18.0.1$' <<<"$g" ||
	fail "A's GID table after ip addr del: $g"
echo "GID table followed ip addr add/del: 198.18.0.7 at index 1, then gone"

ip -n "$nsb" neigh flush dev drb
[ -z "$(ip -n "$nsb" neigh show 198.18.0.1 dev drb)" ] || fail "B's neighbour table not empty"
r=$(cmd 4 "$dir/drb.out" "resolve 198.18.0.1")
[ "$r" = "mac 02:00:00:00:00:01" ] || fail "B resolving 198.18.0.1: '$r'"
k=$(ip -n "$nsb" neigh show 198.18.0.1 dev drb)
grep -q "lladdr 02:00:00:00:00:01" <<<"$k" || fail "the kernel's entry after droce's request: '$k'"
echo "B resolved A through the kernel: $k"
r=$(cmd 4 "$dir/drb.out" "resolve 198.18.0.99")
grep -q "^err -113 peer unreachable.*FAILED" <<<"$r" || fail "B resolving 198.18.0.99: '$r'"
echo "unanswered: $r"

inns "$nsa" ping -q -c 5 -i 0.02 -W 2 198.18.0.2 >"$dir/ping.log" 2>&1 &&
	inns "$nsb" ping -q -c 5 -i 0.02 -W 2 198.18.0.1 >>"$dir/ping.log" 2>&1 ||
	{ cat "$dir/ping.log"; fail "ping between the droce addresses failed while droce runs"; }
# TCP to the same address: 1 MiB one way, its digest back
inns "$nsa" python3 -c '
import hashlib, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.0.1", 5791)); s.listen(1); s.settimeout(20); c, _ = s.accept(); c.settimeout(20)
h = hashlib.sha256(); n = 0
while n < 1 << 20:
    b = c.recv(65536)
    if not b: break
    h.update(b); n += len(b)
c.sendall(h.hexdigest().encode()); c.close()' &
pt=$!
sleep 0.3
sum=$(inns "$nsb" python3 -c '
import hashlib, os, socket, time
d = os.urandom(1 << 20)
for i in range(50):
    try:
        c = socket.create_connection(("198.18.0.1", 5791), timeout=20); break
    except OSError: time.sleep(0.1)
c.sendall(d); print(c.recv(64).decode() == hashlib.sha256(d).hexdigest())')
wait $pt
[ "$sum" = True ] || fail "TCP transfer to 198.18.0.1 while droce runs: digest ${sum:-missing}"
echo "ping and a 1 MiB TCP transfer on the same addresses while both runtimes run"
echo quit >&3
echo quit >&4
exec 3>&- 4>&-
wait $side_dra
ra=$?
wait $side_drb
rb=$?
[ $ra = 0 ] && [ $rb = 0 ] ||
	{ cat "$dir/dra.out" "$dir/drb.out"; fail "the sides' exit: A $ra, B $rb"; }

# --- 3. qperf -cm1: one host name for TCP and rdma_cm ---
# each rc test is a child of qperf's server that opens the port anew; -to 30: a child starts EAL
# and its port before it answers (seconds on a loaded host). Two tries: on a host loaded to
# several times its cores a RoCE session may run its retries out.
qperf_try() {
	inns "$nsa" "$dr" -q --no-huge --eal --no-telemetry --iface dra --pmd af_xdp -- qperf \
		>"$dir/qs.log" 2>&1 &
	ps=$!
	pids="$pids $ps"
	sleep 1
	inns "$nsb" ping -q -c 20 -i 0.2 -W 2 198.18.0.1 >"$dir/ping_q.log" 2>&1 &
	pp=$!
	inns "$nsb" "$dr" -q --no-huge --eal --no-telemetry --iface drb --pmd af_xdp -- \
		qperf -cm1 -to 30 198.18.0.1 rc_bw rc_lat rc_rdma_read_lat >"$dir/qc.log" 2>&1
	rq=$?
	wait $pp
	rp=$?
	# the server and the child it forked, both ours (the namespace holds nothing else)
	kill $(ip netns pids "$nsa") 2>/dev/null
	wait $ps 2>/dev/null
	cat "$dir/qc.log"
	# each test's name, then its figure: rc_bw's bandwidth, the two latencies
	bw=$(grep -A1 "^rc_bw:" "$dir/qc.log" | grep -c "^ *bw *= *[0-9.]* [KMG]B/sec")
	lat=$(grep -A1 -e "^rc_lat:" -e "^rc_rdma_read_lat:" "$dir/qc.log" |
		grep -c "^ *latency *= *[0-9.]* [mun]*s")
	[ $rq = 0 ] && [ "$bw" = 1 ] && [ "$lat" = 2 ] || return 1
	[ $rp = 0 ] || { cat "$dir/ping_q.log"; fail "ping during qperf failed"; }
}
qperf_try || { echo "qperf: first try failed, once more"; qperf_try; } ||
	{ cat "$dir/qs.log"; fail "qperf -cm1 198.18.0.1 rc_bw rc_lat rc_rdma_read_lat"; }
echo "qperf -cm1 rc_bw rc_lat rc_rdma_read_lat on the interfaces' own addresses, ping answered" \
	"during it"
echo "PASS"
