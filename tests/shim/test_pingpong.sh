#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian's ibv_{rc,uc,ud,srq}_pingpong and perftest, unmodified, between two processes on the
# shim over net_memif (--no-huge, loopback only, 198.18.0.0/15 and 2001:2::/48), each started
# through tools/droce-run: each side's runtime starts on its first PD, in any order (the memif
# client retries, pmd-glue start_wait_ms). rdma-core's -c checks every received buffer. The
# shim's shared progress model by default (DROCE_SHIM_PROGRESS), the lcore one at the end.
# Asserts completion, exit status and sizes, never timing.
# Usage: test_pingpong.sh <build>/verbs-shim <build>/tools/droce-run/droce-run [valgrind.supp]
#        [all|memcheck]   (memcheck: the same programs under valgrind, a few iterations each)
. "$(dirname "$0")/shim_lib.sh"
DR=$2
SUPP=${3:-$(dirname "$0")/valgrind-dpdk.supp}
MODE=${4:-all}
TMP=$(mktemp -d)
trap 'rm -rf "$OUT" "$ERR" "$TMP"' EXIT
ITERS=50
[ "$(nproc)" -ge 2 ] || { echo "needs 2 CPUs for the lcore model's poll lcore"; exit 1; }

# droce-run, quiet, plain memory (hugepage detection is test_droce_run.sh's), no PCI scan;
# SHIM_PRELOAD=1: the LD_PRELOAD variant.
drun_args() {
	echo -q --no-huge --eal --no-telemetry ${LCORES_ARG:-} ${DRUN_EXTRA:-}
	[ "${SHIM_PRELOAD:-0}" = 0 ] || echo --preload
}

# pair NAME REGEX TOOL ARGS...: TOOL ARGS as server, TOOL ARGS 127.0.0.1 as client (TCP port
# added with -p); both must exit 0 (or $PAIR_RC) with a line matching REGEX ($SRV_REGEX on the
# server, if set). $WRAP (e.g. valgrind ...) goes
# in front of the tool on both sides; the server's output is left in $TMP/srv.out.
pair() {
	local name=$1 regex=$2 tool=$3 port i spid
	shift 3
	# a TCP port below the ephemeral range (32768-) that no socket uses now
	for i in $(seq 50); do
		port=$((20000 + ($$ * 7 + ${#name} * 131 + RANDOM) % 12000))
		[ -n "$(ss -Htan "sport = :$port or dport = :$port")" ] || break
	done
	timeout -s KILL 90 "$DR" $(drun_args) --memif server --socket "$TMP/$name${try:-}.sock" \
		--ip 198.18.0.1/24 --ip6 2001:2::1/64 -- ${WRAP:-} \
		"$tool" -p "$port" "$@" >"$TMP/srv.out" 2>&1 &
	spid=$!
	# the client's TCP connect needs the server listening (its runtime may start later)
	for i in $(seq 300); do
		ss -Hltn "sport = :$port" | grep -q . && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	timeout -s KILL 90 "$DR" $(drun_args) --memif client --socket "$TMP/$name${try:-}.sock" \
		--ip 198.18.0.2/24 --ip6 2001:2::2/64 -- ${WRAP:-} \
		"$tool" -p "$port" "$@" 127.0.0.1 >"$OUT" 2>"$ERR"
	RC=$?
	# perftest calibrates its cycle counter against the clock and refuses to report when the
	# fit is poor ("Correlation coefficient r^2: ... < 0.9"): a loaded host, not the transport.
	# Such a run is made again, twice at most; any other failure counts.
	local crc=$RC srv_rc
	wait $spid
	srv_rc=$?
	if [ "${try:-0}" -lt 2 ] && grep -qs 'Correlation coefficient r^2' "$ERR" "$TMP/srv.out"; then
		echo "note: $name: perftest refused its clock calibration (r^2 < 0.9): run again"
		try=$((${try:-0} + 1)) pair "$name" "$regex" "$tool" "$@"
		return
	fi
	RC=$crc
	expect_rc "${PAIR_RC:-0}" "$name client"
	expect_out "$regex" "$name client"
	cp "$OUT" "$TMP/cli.out"
	cp "$ERR" "$TMP/cli.err"
	RC=$srv_rc
	cp "$TMP/srv.out" "$OUT"
	: >"$ERR"
	expect_rc "${PAIR_RC:-0}" "$name server"
	expect_out "${SRV_REGEX:-$regex}" "$name server"
}

# perftest 4.5 (neutral vendor: "ibv_wr* API : OFF", ops.post_send): its result line, with the
# message size and the iteration count. It creates its resources right after its TCP
# handshake, so both runtimes start at the same moment (the memif client retries until up).
# perf NAME SIZE TOOL ARGS...
perf() {
	local name=$1 size=$2 tool=$3
	shift 3
	pair "$name" "^ +$size +$ITERS +[0-9.]+" "$tool" -x 0 -n $ITERS "$@"
	expect_out "Device +: droce0" "$name"
}

# Memcheck mode: every program above, few iterations, under valgrind on both sides: no invalid
# access, no uninitialised value used, no leak but DPDK's own unjoined threads (the suppression
# file says why).
memcheck() {
	local name=$1
	shift
	# --fair-sched: valgrind runs one thread at a time; a program spinning on memory
	# (ib_write_lat) would otherwise keep the shim's progress thread off for whole time slices.
	WRAP="valgrind -q --error-exitcode=99 --leak-check=full --track-origins=yes --fair-sched=yes
		--errors-for-leak-kinds=definite,possible --suppressions=$SUPP ${VG_EXTRA:-}" \
		"$@"
	! grep -q '^==[0-9]*==' "$TMP/srv.out" || fail "valgrind $name: report on the server side"
	! grep -q '^==[0-9]*==' "$TMP/cli.err" ||
		{ cp "$TMP/cli.err" "$ERR"; fail "valgrind $name: report on the client side"; }
}
if [ "${MODE:-all}" = memcheck ]; then
	command -v valgrind >/dev/null || { fail "valgrind is not installed (Debian package valgrind)"; finish; }
	memcheck rc pair vg_rc "^20 iters in " ibv_rc_pingpong -g 0 -n 20 -c -s 5000
	memcheck rce pair vg_rce "^20 iters in " ibv_rc_pingpong -g 1 -n 20 -c -e
	memcheck uc pair vg_uc "^20 iters in " ibv_uc_pingpong -g 0 -n 20 -c -s 2048
	memcheck ud pair vg_ud "^20 iters in " ibv_ud_pingpong -g 0 -n 20 -c
	memcheck srq pair vg_srq "^20 iters in " ibv_srq_pingpong -g 0 -n 20 -c -q 4
	ITERS=20
	# perftest's own leaks (not the shim's): see the file
	VG_EXTRA="--suppressions=$(dirname "$SUPP")/valgrind-perftest.supp"
	# Both sides under valgrind run tens of times slower: perftest's default transport timeout
	# (-u 14: 67 ms, 8 tries) ran out once (RETRY_EXC_ERR); -u 18 gives each try 1.07 s.
	memcheck write_bw perf vg_write_bw 65536 ib_write_bw -u 18
	memcheck write_lat perf vg_write_lat 2 ib_write_lat -u 18
	memcheck read_bw perf vg_read_bw 65536 ib_read_bw -u 18
	memcheck send_bw perf vg_send_bw 65536 ib_send_bw -u 18
	memcheck send_lat perf vg_send_lat 2 ib_send_lat -u 18
	memcheck atomic perf vg_atomic 8 ib_atomic_bw -A FETCH_AND_ADD -u 18
	finish
fi

# rdma-core's examples. RoCE needs a GID index (-g): without one the AV has no GRH and RTR
# fails with EINVAL, as on a kernel RoCE device; it must fail cleanly, not hang.
PAIR_RC=1 pair rc_nogid "" ibv_rc_pingpong -n $ITERS
expect_out "^Failed to modify QP to RTR\$" "rc without -g (server)"
# defaults otherwise (4096 bytes, 1000 iterations); -c checks every received buffer
pair rc "^1000 iters in " ibv_rc_pingpong -g 0 -c
expect_out "^8192000 bytes in " "rc defaults"
pair rc6 "^$ITERS iters in " ibv_rc_pingpong -g 1 -n $ITERS -c	# IPv6 GID
expect_out "remote address: .*GID 2001:2::2\$" "rc6 server"
pair rc4 "^$ITERS iters in " ibv_rc_pingpong -g 0 -n $ITERS -c
expect_out "remote address: .*GID ::ffff:198\.18\.0\.2\$" "rc4 server"
for s in 1 63 1024 1025 4095 16384 65536; do	# one byte to 64 MTUs; off-MTU sizes
	pair "rc_s$s" "^$((s * ITERS * 2)) bytes in " ibv_rc_pingpong -g 0 -n $ITERS -c -s $s
done
# The IPv4 TTL and the IPv6 hop limit are the route's (64), as a kernel RoCE device sends
# them, though ibv_rc_pingpong asks for hop limit 1 (TTL 1 dies at the first router).
for g in 0 1; do
	rm -f "$TMP"/ttl-*.pcap
	DRUN_EXTRA="--set capture=$TMP/ttl-%p.pcap" pair "ttl$g" "^$ITERS iters in " \
		ibv_rc_pingpong -g $g -n $ITERS -c
	f=ip.ttl
	[ $g = 0 ] || f=ipv6.hlim
	got=$(cat "$TMP"/ttl-*.pcap >/dev/null 2>&1 && for c in "$TMP"/ttl-*.pcap; do
		tshark -r "$c" -Y "udp.dstport == 4791" -T fields -e $f 2>/dev/null; done | sort -u |
		tr '\n' ' ')
	[ "$got" = "64 " ] || fail "ibv_rc_pingpong -g $g: RoCE frames' $f is '$got', not 64"
done
pair rce "^$ITERS iters in " ibv_rc_pingpong -g 0 -n $ITERS -c -e	# completion channel
pair rce6 "^$ITERS iters in " ibv_rc_pingpong -g 1 -n $ITERS -c -e -s 9000
pair rcN "^$ITERS iters in " ibv_rc_pingpong -g 0 -n $ITERS -c -N	# ibv_wr_* API
# Completion timestamps (-t): the spacing of receive completions in "HCA clock" cycles, the
# engine's ns (hca_core_clock 1 GHz). On each side 0 < min <= average <= max. The client times
# its run from before its first SEND, so its receives fall inside it: their spacing adds up to
# 50-100 % of its usec/iter (+ 5 % for the two clocks). The server's first receive may come
# before it starts its clock (the client starts first), so its spacing is only bounded by 2x.
pair rct "^Average receive completion clock cycles = " ibv_rc_pingpong -g 0 -n $ITERS -c -t
for f in cli srv; do
	awk -v hi=$([ $f = cli ] && echo 1050 || echo 2000) '
		/usec\/iter/ { us = $(NF - 1) } /^Max receive/ { mx = $NF }
		/^Min receive/ { mn = $NF } /^Average receive/ { av = $NF }
		END { ok = mn > 0 && mn <= av && av <= mx && av >= 500 * us && av <= hi * us
		      printf "min %s avg %s max %s cycles, %s usec/iter\n", mn, av, mx, us
		      exit !ok }' "$TMP/$f.out" ||
		fail "ibv_rc_pingpong -t: $f timestamps out of line"
done
pair uc "^$ITERS iters in " ibv_uc_pingpong -g 0 -n $ITERS -c -s 2048
pair uc6 "^$ITERS iters in " ibv_uc_pingpong -g 1 -n $ITERS -c -e
pair ud "^$ITERS iters in " ibv_ud_pingpong -g 0 -n $ITERS -c	# address handles
pair ud6 "^$ITERS iters in " ibv_ud_pingpong -g 1 -n $ITERS -c -e -s 1000
pair srq "^$ITERS iters in " ibv_srq_pingpong -g 0 -n $ITERS -c	# 16 QPs on one SRQ
pair srq6 "^$ITERS iters in " ibv_srq_pingpong -g 1 -n $ITERS -c -e -q 4
SHIM_PRELOAD=1 pair rcp "^$ITERS iters in " ibv_rc_pingpong -g 0 -n $ITERS -c	# LD_PRELOAD

perf write_bw 65536 ib_write_bw
perf write_lat 2 ib_write_lat
# The shim holds an iteration's ACKs for the application's next verb (shim_engine.c): in a
# WRITE ping-pong each answer leaves in one burst with the ACK of what it answers, so each
# side sends clearly fewer bursts than frames (one burst a frame without the hold), and every
# ACK still leaves (the last one after the program stopped using verbs: the peer's last
# completion came, both exited 0). Counted by the runtimes' counters files.
DRUN_EXTRA="--set counters_file=$TMP/cnt-%p.json" pair write_lat_hold "^ +2 +500 +[0-9.]+" \
	ib_write_lat -x 0 -n 500
held=$(/usr/bin/python3 - "$TMP"/cnt-*.json <<'EOF'
import json, sys
for f in sys.argv[1:]:
    c = json.load(open(f))["counters"]
    print(c["rt"]["tx_pkts"], c["rt"]["tx_bursts"], c["dev"]["ack_sent"], c["dev"]["rcvd_pkts"])
EOF
)
echo "write_lat_hold: tx frames, bursts, ACKs sent, frames received per side: $(echo $held)"
[ "$(echo "$held" | wc -l)" = 2 ] || fail "write_lat_hold: not two counters files"
echo "$held" | awk '{ if (!($1 >= 1000 && $2 * 100 <= $1 * 85 && $3 >= 500 && $4 >= 1000)) bad++ }
	END { exit bad }' || fail "write_lat_hold: ACKs not sent with the answers, or not all sent"
# A congestion-control plugin (tools/cc-plugins' aimd) loaded by the client's runtime inside
# the verbs program: its QP is paced at 300 Mbit/s (perftest's BW average at most 300/8 MB/s
# and a bit), and the counters file says the limiter held packets.
if [ -n "${TEST_CC_PLUGIN:-}" ]; then
	DROCE_CC_AIMD_MAX_MBPS=300 DRUN_EXTRA="--set counters_file=$TMP/cc-%p.json \
--set cc_plugin=$TEST_CC_PLUGIN --set cc=aimd" perf write_bw_aimd 65536 ib_write_bw
	bw=$(sed -n "s/^ *65536 *$ITERS *[0-9.]* *\([0-9.]*\).*/\1/p" "$TMP/cli.out")
	held=$(cat "$TMP"/cc-*.json 2>/dev/null | grep -o '"cc_deferred": *[0-9]*' | grep -o '[0-9]*$' |
		sort -n | tail -n 1)
	echo "write_bw_aimd: BW average ${bw:-?} MB/s, packets held ${held:-?}"
	awk -v b="${bw:-0}" -v h="${held:-0}" 'BEGIN { exit !(b > 0 && b <= 39.4 && h > 0) }' ||
		fail "write_bw_aimd: the plugin did not pace the shim's QP"
fi
perf read_bw 65536 ib_read_bw
SRV_REGEX="^ remote address: LID" perf read_lat 2 ib_read_lat	# the server is passive
perf send_bw 65536 ib_send_bw
perf send_lat 2 ib_send_lat
perf send_bw_e 4096 ib_send_bw -e -s 4096	# completion channel
perf atomic_faa 8 ib_atomic_bw -A FETCH_AND_ADD
perf atomic_cas 8 ib_atomic_bw -A CMP_AND_SWAP
SRV_REGEX="^ remote address: LID" perf atomic_lat 8 ib_atomic_lat	# passive server
# 128 READs/atomics outstanding, as many as rxe offers (perftest's default is the device's
# max_qp_rd_atom; -o asks it outright): both QPs' max_rd_atomic and max_dest_rd_atomic 128.
perf read_bw_o128 65536 ib_read_bw -o 128
expect_out "^ Outstand reads +: 128\$" "read_bw_o128"
grep -Eq "^ remote address: .* OUT 0x80 " "$TMP/cli.out" ||
	fail "read_bw_o128: the server did not offer 128 outstanding READs"
perf atomic_o128 8 ib_atomic_bw -A FETCH_AND_ADD -o 128
expect_out "^ Outstand reads +: 128\$" "atomic_o128"
pair write_bw_q4 "^ +65536 +$((4 * ITERS)) +[0-9.]+" ib_write_bw -x 0 -n $ITERS -q 4	# 4 QPs
# size sweeps (-a: every power of two from 2 B to 8 MiB), 20 iterations each
for t in write_bw send_lat; do
	SRV_REGEX="^ +8388608 +20 +[0-9.]+" pair "${t}_sweep" "^ +2 +20 +[0-9.]+" \
		"ib_$t" -x 0 -a -n 20
	grep -Eq "^ +8388608 +20 +[0-9.]+" "$TMP/cli.out" || fail "${t}_sweep: no 8 MiB row (client)"
done
perf write_bw6 1024 ib_write_bw -s 1024 -x 1	# IPv6 GID (the last -x wins)
expect_out "GID index +: 1\$" "write_bw6"
# UD multicast (ibv_attach_mcast): the server's QP joins a group, the client sends to the group
# (DestQP 0xFFFFFF): IPv4 239.1.2.3 (-M), then perftest's own IPv6 group ff01:0:2:c985:: on the
# IPv6 GID. Fewer messages (50) than the server's receive queue holds (512): UD drops a
# datagram that finds no receive WQE, and perftest's server would wait for it forever.
rm -f "$TMP"/mc-*.pcap
DRUN_EXTRA="--set capture=$TMP/mc-%p.pcap" \
	perf mcast_bw4 512 ib_send_bw -g -s 512 -M 0:0:0:0:0:0:0:0:0:0:255:255:239:1:2:3
expect_out "local address: LID 0000 QPN 0xffffff" "mcast_bw4"
expect_out "MGID: 00:00:00:00:00:00:00:00:00:00:255:255:239:01:02:03" "mcast_bw4"
# On the wire, as Wireshark reads both sides' captures: the group's MAC (01:00:5e + 23 bits)
# and address, DestQP 0xFFFFFF, perftest's Q_Key; the sender's 50 out, the receiver's 50 in.
# The first of each field: a payload that happens to look like a frame (perftest's buffer) is
# dissected too, and its Ethernet header would add a second eth.dst.
if command -v tshark >/dev/null; then
	got=$(for c in "$TMP"/mc-*.pcap; do
		tshark -r "$c" -Y "udp.dstport == 4791" -T fields -E occurrence=f -e eth.dst \
			-e ip.dst -e infiniband.bth.destqp -e infiniband.deth.q_key 2>/dev/null |
			sort | uniq -c
	done | tr -s ' \t' ' ' | sed 's/^ //' | tr '\n' ';')
	want="50 01:00:5e:01:02:03 239.1.2.3 0xffffff 0x0000000011111111;"
	[ "$got" = "$want$want" ] || fail "mcast_bw4: captured RoCE frames '$got', not 2 x '$want'"
fi
perf mcast_bw6 512 ib_send_bw -g -s 512 -x 1
expect_out "local address: LID 0000 QPN 0xffffff" "mcast_bw6"
expect_out "MGID: 255:01:00:00:00:02:201:133" "mcast_bw6"

# One lcore: the shared model needs none of its own (the progress thread floats), so a
# completion channel still wakes up.
LCORES_ARG="--lcores 0" pair rce1 "^$ITERS iters in " ibv_rc_pingpong -g 0 -n $ITERS -c -e
# The lcore model (every verb a closure to the poll lcore) stays usable.
DROCE_SHIM_PROGRESS=lcore pair rcl "^$ITERS iters in " ibv_rc_pingpong -g 0 -n $ITERS -c -e
DROCE_SHIM_PROGRESS=lcore perf write_lat_lcore 2 ib_write_lat
# An unknown model is refused by name, with the choices.
DROCE_SHIM_PROGRESS=spin "$DR" -q --no-huge --eal --no-telemetry --memif server \
	--socket "$TMP/e.sock" --ip 198.18.0.1/24 -- timeout -s KILL 30 \
	ibv_rc_pingpong -g 0 -p 19999 >"$OUT" 2>"$ERR"
RC=$?
expect_rc 1 "DROCE_SHIM_PROGRESS=spin"
expect_err "DROCE_SHIM_PROGRESS=spin is not a progress model: use shared" "DROCE_SHIM_PROGRESS=spin"
finish
