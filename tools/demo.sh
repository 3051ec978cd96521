#!/usr/bin/env bash
# The main job: RoCEv2 sessions between two droce endpoints, with results.
#  1. Unmodified verbs programs from Debian (ibv_devinfo, ibv_rc_pingpong, ib_write_bw, ib_read_lat,
#     rping over rdma_cm) through droce's libibverbs and librdmacm replacements, two processes joined by net_memif (no NIC, no
#     hugepages), addresses 198.18.0.1 and 198.18.0.2; perftest's TCP exchange on 127.0.0.1.
#  2. droce-perf over the native API, the same two endpoints: WRITE latency, WRITE bandwidth, a
#     READ size sweep and fetch-and-add, the last two with every byte and value checked.
#  3. The same engine in the deterministic simulator over a lossy, reordering, corrupting link.
#  4. droce-pcap checks captures of Linux rxe traffic byte for byte (ICRC included).
# Usage: tools/demo.sh BUILD_DIR. Every run is bounded by a timeout.
set -uo pipefail

build=$(cd "${1:?usage: demo.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
shim="$build/verbs-shim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eal="--no-huge -m 256 --no-pci --no-telemetry"
fails=0

for v in $(env | sed -n 's/^\(DROCE_[A-Z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done

say() { printf '\n== %s\n' "$*"; }

# side ROLE IP SOCKET CMD...: run CMD as one droce endpoint on the shim.
side() {
	local role=$1 ip=$2 sock=$3
	shift 3
	env DROCE_EAL="$eal" DROCE_LCORES=0,1 DROCE_IPV4="$ip/24" DROCE_SHIM_EAGER=1 \
		DROCE_VDEV="net_memif0,role=$role,socket=$sock" LD_LIBRARY_PATH="$shim" \
		timeout -s KILL 90 "$@"
}

# pair NAME CMD...: server then client (client adds 127.0.0.1); prints the client's output.
pair() {
	local name=$1 port spid rc
	shift
	port=$((18515 + RANDOM % 2000))
	side server 198.18.0.1 "$tmp/$name.sock" "$@" -p "$port" >"$tmp/$name.srv" 2>&1 &
	spid=$!
	for _ in $(seq 300); do
		ss -Hltn "sport = :$port" | grep -q . && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	side client 198.18.0.2 "$tmp/$name.sock" "$@" -p "$port" 127.0.0.1 2>&1 | tee "$tmp/$name.cli"
	rc=${PIPESTATUS[0]}
	wait "$spid" || rc=1
	if [ "$rc" -ne 0 ]; then
		echo "demo: $name failed (exit $rc); server said:"
		cat "$tmp/$name.srv"
		fails=$((fails + 1))
	fi
}

# cm NAME SERVER_CMD... -- CLIENT_CMD...: an rdma_cm pair (no TCP side channel: the client
# connects to 198.18.0.1 once the server is up and listening).
cm() {
	local name=$1 sargs=() spid rc
	shift
	while [ "$1" != "--" ]; do
		sargs+=("$1")
		shift
	done
	shift
	side server 198.18.0.1 "$tmp/$name.sock" "${sargs[@]}" >"$tmp/$name.srv" 2>&1 &
	spid=$!
	sleep 2
	side client 198.18.0.2 "$tmp/$name.sock" "$@" 2>&1 | tee "$tmp/$name.cli"
	rc=${PIPESTATUS[0]}
	wait "$spid" || rc=1
	if [ "$rc" -ne 0 ]; then
		echo "demo: $name failed (exit $rc); server said:"
		cat "$tmp/$name.srv"
		fails=$((fails + 1))
	fi
}

# perf NAME CLIENT_OPTS...: droce-perf server (lcore 0) and client (lcore 1), each running its
# engine inline on its own CPU; prints the client's table and the server's last line.
perf() {
	local name=$1 spid rc
	shift
	env DROCE_EAL="$eal" DROCE_LCORES=0 DROCE_IPV4=198.18.0.1/24 \
		DROCE_VDEV="net_memif0,role=server,socket=$tmp/$name.psock" \
		timeout -s KILL 90 "$build/tools/droce-perf/droce-perf" -p 0 \
		--port-file "$tmp/$name.port" >"$tmp/$name.srv" 2>&1 &
	spid=$!
	for _ in $(seq 300); do
		[ -s "$tmp/$name.port" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	env DROCE_EAL="$eal" DROCE_LCORES=1 DROCE_IPV4=198.18.0.2/24 \
		DROCE_VDEV="net_memif0,role=client,socket=$tmp/$name.psock" \
		timeout -s KILL 90 "$build/tools/droce-perf/droce-perf" \
		-p "$(cat "$tmp/$name.port" 2>/dev/null || echo 0)" -Q "$@" 127.0.0.1 2>&1
	rc=$?
	wait "$spid" || rc=1
	tail -n 1 "$tmp/$name.srv"
	if [ "$rc" -ne 0 ]; then
		echo "demo: droce-perf $name failed (exit $rc); server said:"
		cat "$tmp/$name.srv"
		fails=$((fails + 1))
	fi
}

say "droce0, as an unmodified ibv_devinfo sees it (RoCEv2 GID table from the configured address)"
env DROCE_IPV4=198.18.0.1/24 DROCE_IPV6=2001:2::1/64 LD_LIBRARY_PATH="$shim" \
	timeout 30 ibv_devinfo -v | grep -E 'hca_id|vendor_id|transport|state|active_mtu|link_layer|GID\[' ||
	fails=$((fails + 1))

say "ibv_rc_pingpong: 1000 x 4 KiB RC SEND ping-pong, every buffer checked (-c)"
pair rc_pingpong ibv_rc_pingpong -g 0 -n 1000 -s 4096 -c

# Enough iterations for the figures to show the steady state, not the first milliseconds.
say "ib_write_bw: RC RDMA WRITE bandwidth, 64 KiB messages"
pair write_bw ib_write_bw -x 0 -s 65536 -n 20000

say "ib_read_lat: RC RDMA READ latency, 8 B"
pair read_lat ib_read_lat -x 0 -s 8 -n 20000

say "ib_atomic_bw: RC FETCH_AND_ADD"
pair atomic_bw ib_atomic_bw -x 0 -n 100000

if command -v rping >/dev/null; then
	say "rping: an rdma_cm connection (IB CM REQ/REP/RTU over QP1), 10 pings of 64 B checked, DREQ/DREP"
	cm rping rping -s -a 198.18.0.1 -C 10 -S 64 -V -- rping -c -a 198.18.0.1 -C 10 -S 64 -V -v
fi

say "droce-perf write lat: 8 B RDMA WRITE ping-pong (round trips), native API"
perf write_lat -o write -m lat -s 8 -n 20000

say "droce-perf write bw: 64 KiB RDMA WRITEs for 2 s"
perf write_bw -o write -s 65536 -D 2

say "droce-perf read bw: RDMA READ, 1 B to 1 MiB, every byte checked"
perf read_sweep -o read -a -n 1000 --verify

say "droce-perf fadd: 8 B fetch-and-add, every returned value checked"
perf fadd -o fadd -n 200000 --verify

say "Simulator: 3 x 500 mixed RC operations over 5% loss, 2% reordering, 1% duplication, 1% bit flips"
timeout 120 "$build/tests/sim/droce-sim" --seeds 3 --loss 5 --reorder 2 --dup 1 --corrupt 1 \
	--ops all --msgs 500 || fails=$((fails + 1))

say "droce-pcap verify: Linux rxe captures (pcaps/rxe: every frame parsed, ICRC recomputed)"
"$build/tools/droce-pcap/droce-pcap" verify "$here"/pcaps/rxe/*.pcap || fails=$((fails + 1))

say "demo: $([ "$fails" -eq 0 ] && echo 'all sessions completed' || echo "$fails step(s) failed")"
[ "$fails" -eq 0 ]
