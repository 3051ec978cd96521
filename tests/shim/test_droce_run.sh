#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/droce-run: the environment it builds (--dry-run), each setup error with its fix, the
# program's exit status passed through, and a real run (ibv_devinfo; the two-process runs are
# in test_pingpong.sh, which starts every pair through droce-run).
# Usage: test_droce_run.sh <build>/verbs-shim <build>/tools/droce-run/droce-run
. "$(dirname "$0")/shim_lib.sh"
DR=$2
TMP=$(mktemp -d)
LPID=
trap '[ -z "$LPID" ] || kill "$LPID" 2>/dev/null; rm -rf "$OUT" "$ERR" "$TMP"' EXIT
TAB=$'\t'

# drun ARGS...: droce-run ARGS with no DROCE_* from the caller (shim_lib.sh unset them).
drun() {
	"$DR" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

drun --help
expect_rc 0 "--help"
expect_out "^Usage: droce-run \[options\] -- PROGRAM" "--help"
expect_out "droce-run --memif server .*--ip 198\.18\.0\.1/24 -- ibv_rc_pingpong -g 0\$" "--help"
expect_out "droce-run --memif client .*--ip 198\.18\.0\.2/24 -- ibv_rc_pingpong -g 0 127\.0\.0\.1\$" \
	"--help"

# Setup errors: exit 2, one line naming the fix, the program not run.
drun --ip 198.18.0.1/24 --memif server
expect_rc 2 "no program"
expect_err "^droce-run: no program to run: " "no program"
drun --bogus -- true
expect_rc 2 "unknown option"
expect_err "^droce-run: unknown option '--bogus'" "unknown option"
drun --shim "$TMP/none" --ip 198.18.0.1/24 --memif server -- touch "$TMP/ran"
expect_rc 2 "shim not built"
expect_err "^droce-run: the verbs shim is not built \($TMP/none/libibverbs.so.1 missing\): run 'ninja -C " \
	"shim not built"
[ ! -e "$TMP/ran" ] || fail "shim not built: the program ran"
drun --shim "$TMP/none" --preload --ip 198.18.0.1/24 --memif server -- true
expect_err "libdroce_verbs_preload.so missing" "preload variant not built"
drun --memif server -- true
expect_rc 2 "no address"
expect_err "^droce-run: no address configured: give --ip 198\.18\.0\.1/24" "no address"
drun --ip 198.18.0.1/24 -- true
expect_rc 2 "no port"
expect_err "^droce-run: no port configured: give --memif server\|client" "no port"
drun --memif master --ip 198.18.0.1/24 -- true
expect_err "^droce-run: --memif 'master': expected server or client" "bad memif role"
drun --ip 198.18.0.1/24 --vdev "net_memif0,role=server,socket=$TMP/no/a.sock,socket-abstract=no" \
	-- true
expect_rc 2 "socket dir missing"
expect_err "^droce-run: memif socket directory $TMP/no does not exist" "socket dir missing"
drun --ip 198.18.0.1/24 --memif client --socket "/tmp/$(printf 'x%.0s' $(seq 110))" -- true
expect_err "^droce-run: memif socket name .* longer than a socket address takes" "long socket"
drun --ip 198.18.0.1/24 --memif server --set bogus=1 -- true
expect_err "^droce-run: --set 'bogus=1': unknown key 'bogus'" "--set unknown key"
drun --ip 198.18.0.1/24 --memif server --config "$TMP/none.conf" -- true
expect_err "^droce-run: configuration file '$TMP/none.conf' is not a readable file" "missing config"
drun --ip 198.18.0.1/24 --memif server -- ibv_no_such_tool
expect_rc 127 "program not found"
expect_err "^droce-run: ibv_no_such_tool: command not found \(Debian package ibverbs-utils\)" \
	"program not found"

# A memif server name another process already listens on (abstract socket) is refused.
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind("\0" + sys.argv[1]); s.listen(1); print("up", flush=True); time.sleep(60)' \
	"$TMP/busy.sock" >"$TMP/listener" &
LPID=$!
for i in $(seq 50); do grep -q up "$TMP/listener" && break; sleep 0.1; done
drun --ip 198.18.0.1/24 --memif server --socket "$TMP/busy.sock" -- true
expect_rc 2 "socket in use"
expect_err "^droce-run: memif socket @$TMP/busy.sock is already served by another process" \
	"socket in use"
drun -n --ip 198.18.0.1/24 --memif client --socket "$TMP/busy.sock" -- true
expect_rc 0 "client of a served socket"
kill "$LPID"
wait "$LPID" 2>/dev/null
LPID=

# --dry-run: the environment, then the command.
drun -n --memif server --socket "$TMP/pp.sock" --ip 198.18.0.1/24 --ip6 2001:2::1/64 \
	--set mtu=9000 --set path_mtu=4096 -- ibv_rc_pingpong -g 0
expect_rc 0 "dry run"
expect_out "^LD_LIBRARY_PATH=$SHIM_DIR\$" "dry run"
expect_out "^DROCE_IPV4=198\.18\.0\.1/24\$" "dry run"
expect_out "^DROCE_IPV6=2001:2::1/64\$" "dry run"
expect_out "^DROCE_VDEV=net_memif0,role=server,socket=$TMP/pp\.sock\$" "dry run"
expect_out "^DROCE_MTU=9000\$" "dry run"
expect_out "^DROCE_PATH_MTU=4096\$" "dry run"
expect_out "^DROCE_EAL=.*--no-pci" "dry run: a vdev port needs no PCI scan"
expect_out "^ibv_rc_pingpong -g 0 \$" "dry run"
expect_no_out "^LD_PRELOAD=" "dry run"
expect_no_out "^DROCE_SHIM_EAGER=" "dry run"
# lcores: the first two CPUs this process may use
CPUS=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
if [ "$(nproc)" -ge 2 ]; then
	expect_out "^DROCE_LCORES=[0-9]+,[0-9]+\$" "dry run lcores ($CPUS)"
fi
# hugepages or --no-huge, and a line saying which
if awk '$3 == "hugetlbfs" { f = 1 } END { exit !f }' /proc/mounts &&
	cat /sys/kernel/mm/hugepages/hugepages-*/free_hugepages 2>/dev/null |
	awk '{ n += $1 } END { exit !(n > 0) }'; then
	expect_err "^droce-run: hugepages: [0-9]+ free" "hugepage mode"
	expect_no_out "^DROCE_EAL=.*--no-huge" "hugepage mode"
else
	expect_err "^droce-run: .*: running with --no-huge -m 256\$" "no hugepages"
	expect_out "^DROCE_EAL=--no-huge -m 256 --no-pci\$" "no hugepages"
fi
drun -n -q --no-huge --mem 128 --memif client --ip 198.18.0.2 --preload --eager --debug \
	--eal "--no-telemetry" --lcores 0 -- ib_write_bw -x 0 127.0.0.1
expect_out "^LD_PRELOAD=$SHIM_DIR/libdroce_verbs_preload\.so\$" "dry run, preload"
expect_out "^DROCE_EAL=--no-telemetry --no-huge -m 128 --no-pci\$" "dry run, --eal/--mem"
expect_out "^DROCE_LCORES=0\$" "dry run, --lcores"
expect_out "^DROCE_SHIM_EAGER=1\$" "dry run, --eager"
expect_out "^DROCE_SHIM_DEBUG=1\$" "dry run, --debug"
[ ! -s "$ERR" ] || fail "-q: stderr not empty"
# hugetlbfs mounted (a private mount namespace) but no page reserved: --no-huge, saying why
if [ "$(cat /sys/kernel/mm/hugepages/hugepages-*/free_hugepages 2>/dev/null | sort -n | tail -1)" = 0 ] &&
	unshare -m true 2>/dev/null; then
	mkdir "$TMP/huge"
	unshare -m sh -c 'mount -t hugetlbfs nodev "$1" && shift && exec "$@"' sh "$TMP/huge" \
		"$DR" -n --memif client --ip 198.18.0.2 -- true >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 0 "hugetlbfs without free pages"
	expect_err "^droce-run: no free hugepage \(hugetlbfs at $TMP/huge\): running with --no-huge" \
		"hugetlbfs without free pages"
fi
# --huge is taken as asked (the runtime's own check names a missing hugetlbfs)
drun -n --huge --memif client --ip 198.18.0.2 -- true
expect_no_out "^DROCE_EAL=.*--no-huge" "--huge"

# The configuration file gives address and port; its eal words are kept, ours appended.
printf 'ipv4 = 198.19.0.7/16\nvdev = net_null0\neal = --no-telemetry  # comment\n' >"$TMP/c.conf"
drun -n -q --config "$TMP/c.conf" -- true
expect_rc 0 "config file"
expect_out "^DROCE_CONFIG=$TMP/c\.conf\$" "config file"
expect_out "^DROCE_EAL=--no-telemetry --no-huge -m 256 --no-pci\$" "config file eal"
expect_no_out "^DROCE_VDEV=" "config file: its vdev stays the file's"
# an address from the environment counts too
DROCE_IPV6=2001:2::9/64 drun -n -q --vdev net_null0 -- true
expect_rc 0 "address from DROCE_IPV6"

# A kernel interface (--iface, --pmd): the checks that name the fix, then the port built.
drun --iface lo --pmd xdp --ip 198.18.0.1/24 -- true
expect_rc 2 "bad --pmd"
expect_err "^droce-run: --pmd 'xdp': expected af_packet or af_xdp\$" "bad --pmd"
drun --pmd af_xdp --ip 198.18.0.1/24 -- true
expect_err "^droce-run: --pmd and --xdp-prog go with --iface IFACE" "--pmd without --iface"
drun --iface lo --memif server --ip 198.18.0.1/24 -- true
expect_err "^droce-run: --iface and --memif/--vdev both name a port: keep one\$" "--iface + --memif"
drun --iface droce_none0 --ip 198.18.0.1/24 -- touch "$TMP/ran"
expect_rc 2 "interface absent"
expect_err "^droce-run: interface 'droce_none0' not found in this network namespace \(here: .*lo.*\): fix --iface, or run droce-run in the interface's namespace \(ip netns exec NS" \
	"interface absent"
[ ! -e "$TMP/ran" ] || fail "interface absent: the program ran"
if ip -o link show dev lo | grep -q '[<,]UP[,>]'; then
	# without CAP_NET_RAW (nobody, when we may become it) / as root
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
			"$DR" -n --iface lo --ip 198.18.0.1/24 -- true >"$OUT" 2>"$ERR"
		RC=$?
	else
		drun -n --iface lo --ip 198.18.0.1/24 -- true
	fi
	if [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null; then
		expect_rc 2 "af_packet, not root"
		expect_err "^droce-run: not allowed: net_af_packet needs CAP_NET_RAW \(a packet socket on lo\): run droce-run as root" \
			"af_packet, not root"
	fi
	if [ "$(id -u)" = 0 ]; then
		drun -n -q --iface lo --ip 198.18.0.1/24 -- true
		expect_rc 0 "af_packet dry run"
		expect_out "^DROCE_VDEV=net_af_packet0,iface=lo\$" "af_packet dry run"
		expect_out "^DROCE_EAL=.*--no-pci" "af_packet dry run"
		drun -n --iface lo --ip 127.0.0.1/8 -- true
		expect_rc 2 "the kernel's address"
		expect_err "^droce-run: 127\.0\.0\.1 is the kernel's address too \(on lo\): give droce an address of its own" \
			"the kernel's address"
		drun -n --iface lo --pmd af_xdp --xdp-prog "$TMP/none.o" --ip 198.18.0.1/24 -- true
		expect_err "^droce-run: --xdp-prog '$TMP/none\.o': no such file\$" "--xdp-prog missing"
		: >"$TMP/x.o"
		drun -n -q --iface lo --pmd af_xdp --xdp-prog "$TMP/x.o" --ip 198.18.0.1/24 \
			--ip6 2001:2::1/64 -- true
		if grep -q "droce-xdp-addrs is not built" "$ERR"; then
			expect_rc 2 "af_xdp, no droce-xdp-addrs"
		else
			expect_rc 0 "af_xdp dry run"
			expect_out "^DROCE_VDEV=net_af_xdp0,iface=lo,xdp_prog=$TMP/x\.o\$" "af_xdp dry run"
			expect_out "^# once the port is open: .*droce-xdp-addrs lo 198\.18\.0\.1 2001:2::1\$" \
				"af_xdp dry run"
		fi
	fi
fi

# Every key of the runtime's configuration table is one --set accepts (droce-run keeps its own
# list: this catches it going stale when pmd-glue gains a key).
src=$(dirname "$0")/../../pmd-glue/droce_rt_config.c
keys=$(grep -oE '^[[:space:]]*(\{ |[A-Z0-9]+\()"[a-z0-9_]+"' "$src" | grep -oE '[a-z0-9_]+"$' | tr -d '"')
[ "$(echo "$keys" | wc -w)" -ge 30 ] || fail "config keys not found in $src"
for k in $keys; do
	drun -n --ip 198.18.0.1/24 --vdev net_null0 --set "$k=1" -- true
	! grep -q "unknown key" "$ERR" || fail "--set $k: droce-run does not know the runtime's key"
done

# The program's exit status and environment, through exec.
drun -q --ip 198.18.0.1/24 --vdev net_null0 -- sh -c 'echo "$LD_LIBRARY_PATH|$DROCE_VDEV"; exit 7'
expect_rc 7 "exit status passed through"
expect_out "^$SHIM_DIR\|net_null0\$" "program environment"

# A real run: ibv_devinfo on the shim.
drun -q --ip 198.18.0.1/24 --ip6 2001:2::1/64 --vdev net_null0 -- ibv_devinfo -v
expect_rc 0 "ibv_devinfo"
expect_out "^hca_id:${TAB}droce0\$" "ibv_devinfo"
expect_out "GID\[  1\]:${TAB}+2001:2::1, RoCE v2\$" "ibv_devinfo"
drun -q --preload --ip 198.18.0.1/24 --vdev net_null0 -- ibv_devices
expect_rc 0 "ibv_devices, preload"
expect_out "^ +droce0" "ibv_devices, preload"
finish
