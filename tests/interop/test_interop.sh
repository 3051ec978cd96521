#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/droce-interop between network namespaces, another droce standing in for the RNIC (no
# RNIC here): A (droce, va) <-veth-> M (bridge) <-veth-> B (the "peer": droce-run in B as the
# --peer prefix). The kernels' addresses 198.19.0.1/.2 carry the programs' TCP exchange;
# droce's are 198.18.0.1/.2.
#
# Asserted:
#   clean   every case (ibv_{rc,uc,ud,srq}_pingpong, ib_{write,read,send}_bw, ib_atomic_bw
#           fetch-and-add and compare-and-swap, ib_{write,read,send}_lat; over rdma_cm rping,
#           ib_write_bw -R and ib_send_lat -R, the peer's librdmacm the shim's), droce serving and
#           the peer serving: exit 0, report.json lists each one passed with a figure, RoCE
#           frames both ways in droce's capture, the counters file read;
#   corrupt M rewrites the P_Key of one in 25 of the peer's RoCE frames (a field the ICRC
#           covers: a peer computing the ICRC differently looks the same): the harness fails
#           the case (exit 1) and names droce's drop counter and droce-pcap verify's finding,
#           although the program itself, recovering by retransmission, exits 0;
#   fails   the peer's program on a GID index with no address (it reads ::): droce refuses
#           to connect its QP to GID :: and both programs fail; the case fails naming both
#           exits with their own messages, within the grace period, not the case timeout;
#   killed  a client that fails while the server waits: the client's failure is the case's
#           reason and the server is "killed 5 s after the client's failure", not timed out;
#   opts    --mtu 1024 with ibv_ud_pingpong (which has no -m) and rping at 65536 (rping
#           refuses it: it gets 65535) both pass; -n shows -m for rc_pingpong, not
#           ud_pingpong, and --qp-timeout as perftest's -u only;
#   dry     -n prints each case's two command lines and creates nothing;
#   setup   a peer command that fails, a missing --droce-oob: exit 2, one line naming the fix.
# Root only (namespaces, veth, bridge, nftables): as another user it fails, never skips.
# Usage: test_interop.sh BUILD/tools/droce-interop/droce-interop
set -u
IOP=$1
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (network namespaces, veth, nftables)"; exit 1; }
for t in ip nft timeout ss ibv_rc_pingpong ib_write_bw; do
	command -v $t >/dev/null || { echo "FAIL: '$t' not found (packages: iproute2 nftables" \
		"ibverbs-utils perftest)"; exit 1; }
done
DR=$(sed -n 's/^DROCE_RUN = "\(.*\)"$/\1/p' "$IOP")
[ -x "$DR" ] || { echo "FAIL: droce-run not found from $IOP ($DR)"; exit 1; }

TAG=$$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
NSA=dio_a_$TAG NSB=dio_b_$TAG NSM=dio_m_$TAG
TMP=$(mktemp -d /tmp/droce_interop.XXXXXX)
FAILS=0
cleanup() {
	for n in "$NSA" "$NSB" "$NSM"; do ip netns del "$n" 2>/dev/null; done
	[ -n "${INTEROP_KEEP:-}" ] && echo "logs kept in $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}
inns() {
	local n=$1
	shift
	timeout -s KILL 30 ip netns exec "$n" "$@"
}

for n in "$NSA" "$NSB" "$NSM"; do ip netns add "$n" || { echo "FAIL: netns $n"; exit 1; }; done
ip -n "$NSA" link add va address 02:00:00:00:06:01 type veth peer name ma netns "$NSM" &&
	ip -n "$NSB" link add vb address 02:00:00:00:06:02 type veth peer name mb netns "$NSM" &&
	ip -n "$NSM" link add br0 type bridge &&
	ip -n "$NSM" link set dev ma master br0 && ip -n "$NSM" link set dev mb master br0 ||
	{ echo "FAIL: cannot build A - bridge - B"; exit 1; }
inns "$NSM" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
for d in ma mb br0; do ip -n "$NSM" link set dev "$d" up; done
inns "$NSM" nft "add table bridge dio; add chain bridge dio impair { type filter hook forward priority 0; }" ||
	{ echo "FAIL: nft bridge table"; exit 1; }
for x in "$NSA va 198.19.0.1" "$NSB vb 198.19.0.2"; do
	read -r n d a <<<"$x"
	inns "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	inns "$n" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$n" addr add "$a/24" dev "$d" && ip -n "$n" link set "$d" up ||
		{ echo "FAIL: address on $d"; exit 1; }
	# af_packet shares the interface with the kernel: no ICMP port unreachable for RoCE
	inns "$n" nft "add table inet dio; add chain inet dio in { type filter hook input priority 0; }; add rule inet dio in udp dport 4791 drop" ||
		{ echo "FAIL: nft input rule in $n"; exit 1; }
done

PEER="ip netns exec $NSB $DR -q --no-huge --iface vb --ip 198.18.0.2/24 --"
COMMON=(--iface va --ip 198.18.0.1/24 --droce-wrap "ip netns exec $NSA" --no-huge
	--droce-oob 198.19.0.1 --peer "$PEER" --peer-oob 198.19.0.2 --peer-dev droce0
	--peer-gid 0 --peer-ip 198.18.0.2)

# report_check DIR EXPECTED_CASES: every case passed, with a figure and frames both ways (the
# multicast case one way: droce receives them as the server, sends them as the client)
report_check() {
	/usr/bin/python3 - "$1/report.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
res = r["results"]


def flows(x):
    c, n = x["capture"], x["counters"]
    # one way: multicast datagrams, UC WRITEs (no ACK), from the client
    if x["case"] in ("mcast_bw", "uc_write_bw") and x["role"] == "droce-client":
        return c["roce_out"] > 0 and c["roce_in"] == 0 and n["sent_pkts"] > 0
    if x["case"] in ("mcast_bw", "uc_write_bw"):
        return c["roce_in"] > 0 and c["roce_out"] == 0 and n["rcvd_pkts"] > 0
    return c["roce_in"] > 0 and c["roce_out"] > 0 and n["rcvd_pkts"] > 0


bad = [x for x in res if not (x["ok"] and x["figure"] and flows(x) and
                              x["capture"]["verify_rc"] == 0)]
roles = {x["role"] for x in res}
print("report: %d cases, %d passed, roles %s" % (len(res), r["passed"], sorted(roles)))
for x in bad:
    print("  not clean: %s %s %s %s" % (x["case"], x["size"], x["role"], x["problems"]))
sys.exit(0 if len(res) == int(sys.argv[2]) and not bad and r["failed"] == 0 and
         roles == {"droce-server", "droce-client"} else 1)
EOF
}

# clean: the 17 cases (14 verbs, multicast among them; 3 rdma_cm: rping, ib_write_bw -R,
# ib_send_lat -R), those with sizes at one size, both roles: 34 runs
OUT=$TMP/clean
timeout -s KILL 600 "$IOP" "${COMMON[@]}" --sizes 4096 --iters 200 --timeout 40 --port 18600 \
	--out "$OUT" >"$TMP/clean.txt" 2>&1
rc=$?
cat "$TMP/clean.txt"
[ $rc = 0 ] || fail "clean: droce-interop exited $rc"
report_check "$OUT" 34 || fail "clean: report.json"
grep -q "^34 cases: 34 passed, 0 failed" "$TMP/clean.txt" || fail "clean: summary line"
grep -Eq "^mcast_bw +droce-client +ok" "$TMP/clean.txt" || fail "clean: mcast_bw, the peer serving"
grep -Eq "^rping +4096 +droce-client +ok" "$TMP/clean.txt" || fail "clean: rping with the peer serving"

# corrupt: the peer's frames towards droce get P_Key 0x7fff now and then
inns "$NSM" nft "add rule bridge dio impair ether saddr 02:00:00:00:06:02 udp dport 4791 numgen random mod 25 == 0 @th,80,8 set 0x7f counter" ||
	fail "nft payload rule"
OUT=$TMP/corrupt
timeout -s KILL 300 "$IOP" "${COMMON[@]}" --cases write_bw --sizes 65536 --iters 300 \
	--roles droce-server --timeout 40 --port 18700 --out "$OUT" >"$TMP/corrupt.txt" 2>&1
rc=$?
cat "$TMP/corrupt.txt"
[ $rc = 1 ] || fail "corrupt: droce-interop exited $rc, not 1"
grep -Eq "^FAIL write_bw 65536 droce-server: droce counted drop_(icrc|pkey) = [1-9]" \
	"$TMP/corrupt.txt" || fail "corrupt: no failure naming droce's drop counter"
grep -Eq "^FAIL write_bw 65536 droce-server: droce-pcap verify: frame [0-9]+: ICRC: " \
	"$TMP/corrupt.txt" || fail "corrupt: no failure naming droce-pcap verify's finding"
! grep -Eq "(peer|droce) exited" "$TMP/corrupt.txt" ||
	fail "corrupt: the programs should have recovered by retransmission (exit 0)"
inns "$NSM" nft flush chain bridge dio impair

# fails: the peer's GID 5 holds no address (one address: GID 0 only)
OUT=$TMP/fails
start=$(date +%s)
timeout -s KILL 120 "$IOP" "${COMMON[@]}" --peer-gid 5 --cases rc_pingpong --sizes 64 \
	--roles droce-server --timeout 60 --port 18800 --out "$OUT" >"$TMP/fails.txt" 2>&1
rc=$?
took=$(($(date +%s) - start))
cat "$TMP/fails.txt"
[ $rc = 1 ] || fail "fails: exit $rc, not 1"
grep -Eq "^FAIL rc_pingpong 64 droce-server: peer exited [1-9][0-9]*: " "$TMP/fails.txt" ||
	fail "fails: the peer's exit and message not named"
grep -Eq "^FAIL rc_pingpong 64 droce-server: droce exited 1: Couldn't connect to remote QP" \
	"$TMP/fails.txt" || fail "fails: droce's refusal not named"
[ "$took" -lt 45 ] || fail "fails: took $took s: the server was not let go after its client failed"

# killed: the peer's client fails at once (no such device) while droce's server waits for it:
# the case names the client's failure as its reason and droce's server as killed after it,
# not as timed out
OUT=$TMP/killed
timeout -s KILL 120 "$IOP" "${COMMON[@]}" --peer-dev nosuch0 --cases rc_pingpong --sizes 64 \
	--roles droce-server --timeout 60 --port 18850 --out "$OUT" >"$TMP/killed.txt" 2>&1
rc=$?
cat "$TMP/killed.txt"
[ $rc = 1 ] || fail "killed: exit $rc, not 1"
grep -Eq "^FAIL rc_pingpong 64 droce-server: droce killed 5 s after the client's failure" \
	"$TMP/killed.txt" || fail "killed: the server not reported as killed after the client's failure"
! grep -q "timed out" "$TMP/killed.txt" || fail "killed: a side reported as timed out"
/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]
sys.exit(0 if r["reason"].startswith("peer exited 1: ") and "nosuch0" in r["reason"] else 1)' \
	"$OUT/report.json" || fail "killed: report.json's reason is not the client's failure"

# options the programs refuse: --mtu is not given to ibv_ud_pingpong (it has no -m), and rping
# gets its largest size, 65535, for 65536 (it refuses 65536)
OUT=$TMP/opts
timeout -s KILL 200 "$IOP" "${COMMON[@]}" --cases ud_pingpong,rping --sizes 65536 --mtu 1024 \
	--iters 20 --roles droce-server --timeout 40 --port 18870 --out "$OUT" >"$TMP/opts.txt" 2>&1
rc=$?
cat "$TMP/opts.txt"
[ $rc = 0 ] && grep -q "^2 cases: 2 passed, 0 failed" "$TMP/opts.txt" ||
	fail "opts: ud_pingpong with --mtu and rping at 65536 (exit $rc)"
"$IOP" "${COMMON[@]}" -n --cases ud_pingpong,rc_pingpong,rping,write_bw --sizes 65536 \
	--mtu 1024 --qp-timeout 18 --roles droce-server >"$TMP/optsn.txt" 2>&1
grep "^  client: .*ibv_ud_pingpong" "$TMP/optsn.txt" | grep -q -- " -m " &&
	fail "opts: ibv_ud_pingpong given -m"
grep "^  client: .*ibv_rc_pingpong" "$TMP/optsn.txt" | grep -q -- " -m 1024 " ||
	fail "opts: ibv_rc_pingpong not given -m 1024"
grep "^  client: .*rping" "$TMP/optsn.txt" | grep -q -- " -S 65535 " ||
	fail "opts: rping not given -S 65535"
# --qp-timeout is perftest's -u; rdma-core's examples have no such option
grep "^  client: .*ib_write_bw" "$TMP/optsn.txt" | grep -q -- " -u 18 " ||
	fail "opts: ib_write_bw not given -u 18"
grep "^  client: .*ibv_rc_pingpong" "$TMP/optsn.txt" | grep -q -- " -u " &&
	fail "opts: ibv_rc_pingpong given -u"

# a dry run prints both sides' commands per case and makes no directory
( cd "$TMP" && "$IOP" "${COMMON[@]}" -n --cases read_lat --out "$TMP/dry" ) >"$TMP/dry.txt" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(grep -c "^  server: " "$TMP/dry.txt")" = 2 ] &&
	[ "$(grep -c "^  client: .* 198\.19\.0\.[12]\$" "$TMP/dry.txt")" = 2 ] && [ ! -e "$TMP/dry" ] ||
	{ cat "$TMP/dry.txt"; fail "dry run (exit $rc)"; }

# setup errors: exit 2 and one line, before any case
"$IOP" "${COMMON[@]}" --peer "false" --out "$TMP/e1" >"$TMP/e1.txt" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "^droce-interop: the peer command 'false true' failed (exit 1: ): fix --peer" \
	"$TMP/e1.txt" || { cat "$TMP/e1.txt"; fail "setup: a failing peer command (exit $rc)"; }
[ ! -e "$TMP/e1" ] || fail "setup: an output directory was made for a run that did not start"
"$IOP" --iface va --ip 198.18.0.1/24 --peer "$PEER" --peer-gid 0 --peer-oob 198.19.0.2 \
	>"$TMP/e2.txt" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "droce serving needs --droce-oob" "$TMP/e2.txt" ||
	{ cat "$TMP/e2.txt"; fail "setup: missing --droce-oob (exit $rc)"; }

[ $FAILS = 0 ] && echo "interop: ok" || echo "interop: $FAILS failures"
[ $FAILS = 0 ]
