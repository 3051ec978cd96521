#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The full matrix (ninja -C build interop-rxe): droce-interop against an rxe guest, every case
# at 64, 4096 and 65536 B where it takes a size, droce serving and rxe serving, at path MTU 1024
# and 4096, without loss and with 5 % loss on the rxe side (netem on the guest's eth0); beside
# each, the same case between two rxe guests (rxe-yardstick.py: the first guest serving, the
# second one connecting, the loss on the first one's side as for droce; under loss a second run
# with the lossy first guest connecting to the second, the condition droce serving meets: each
# droce column is judged beside the run whose lossy rxe plays its role). Prints per setting the
# table of both, keeps everything under BUILD/interop-rxe/matrix-DATE and writes there
# matrix.csv and matrix.md (rxe-yardstick.py matrix: case x size x role x setting -> figure,
# the yardstick beside; under loss a UC/UD case that fails is "n/a under loss").
# Takes about an hour and a half on 2 cores (two TCG guests). Environment: RXE_CONFIGS (default
# "1024:0 1024:5 4096:0 4096:5", path MTU:loss %), RXE_ITERS (default 200), RXE_CASES (default
# all), RXE_SIZES (default 64,4096,65536), RXE_YARDSTICK=0 (droce only: no rxe-to-rxe runs, a
# third of the time; every droce failure then counts, as nothing stands beside it).
# Usage: rxe-matrix.sh BUILD/tools/droce-interop/droce-interop CACHE_DIR
set -u
IOP=$1
RXE_CACHE=$2
RXE_DIR=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "interop-rxe: needs root (network namespace, tap, bridge)"; exit 1; }
OUT=$RXE_CACHE/matrix-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
RXE_LOGDIR=$OUT
. "$RXE_DIR/rxe-lib.sh"
trap rxe_cleanup EXIT
trap 'exit 1' INT TERM HUP

configs=${RXE_CONFIGS:-1024:0 1024:5 4096:0 4096:5}
iters=${RXE_ITERS:-200}
sizes=${RXE_SIZES:-64,4096,65536}
cases=()
[ -n "${RXE_CASES:-}" ] && cases=(--cases "$RXE_CASES")

bash "$RXE_DIR/rxe-image.sh" "$RXE_CACHE" || exit 1
rxe_net_up || exit 1
rxe_vm_start 1 1500 && rxe_vm_start 2 1500 || exit 1
rxe_vm_wait 1 300 && rxe_vm_wait 2 300 || exit 1
G1=$(rxe_guest_ip 1)
G2=$(rxe_guest_ip 2)
rc=0
for c in $configs; do
	mtu=${c%%:*} loss=${c##*:}
	# Ethernet MTU for a path MTU: the RoCE headers and ICRC fit in 1500 over 1024, 4200 over 4096
	emtu=1500
	[ "$mtu" = 4096 ] && emtu=4200
	ip -n "$RXE_NS" link set va mtu "$emtu"
	rxe_set 1 "$emtu" "$loss" && rxe_set 2 "$emtu" 0 || { echo "setting $c failed"; rc=1; continue; }
	d=$OUT/mtu$mtu-loss$loss
	# the loss rule: under loss a UC/UD case that fails is "n/a under loss", not a failure
	lossy=()
	[ "$loss" != 0 ] && lossy=(--lossy)
	echo "== path MTU $mtu, loss $loss % on the rxe side: droce against rxe"
	t0=$SECONDS
	rxe_in timeout -s KILL 5400 "$IOP" --iface va --ip "$RXE_DROCE_IP/24" --no-huge \
		--droce-oob "$RXE_DROCE_KERNEL" --peer "/usr/bin/python3 $RXE_DIR/rxe-peer.py -t 120 $G1" \
		--peer-oob "$G1" --peer-ip "$G1" --peer-dev rxe0 --peer-gid 1 --mtu "$mtu" --qp-timeout 18 \
		--sizes "$sizes" --iters "$iters" --timeout 60 "${cases[@]}" "${lossy[@]}" --out "$d" \
		>"$d.txt" 2>&1
	grep -E "^[0-9]+ cases: " "$d.txt"
	ycli=()
	if [ "${RXE_YARDSTICK:-1}" != 0 ]; then
		echo "   ($((SECONDS - t0)) s); rxe against rxe"
		t0=$SECONDS
		rxe_in timeout -s KILL 5400 /usr/bin/python3 "$RXE_DIR/rxe-yardstick.py" run \
			--interop "$IOP" --server "$G1" --client "$G2" --mtu "$mtu" --qp-timeout 18 \
			--sizes "$sizes" --iters "$iters" --timeout 60 "${cases[@]}" "${lossy[@]}" \
			--out "$d.rxe.json" >"$d.rxe.txt" 2>&1
	fi
	if [ "${RXE_YARDSTICK:-1}" != 0 ] && [ "$loss" != 0 ]; then
		echo "   ($((SECONDS - t0)) s); rxe against rxe, the lossy guest connecting"
		t0=$SECONDS
		rxe_in timeout -s KILL 5400 /usr/bin/python3 "$RXE_DIR/rxe-yardstick.py" run \
			--interop "$IOP" --server "$G2" --client "$G1" --mtu "$mtu" --qp-timeout 18 \
			--sizes "$sizes" --iters "$iters" --timeout 60 --port 20600 "${cases[@]}" \
			"${lossy[@]}" --out "$d.rxe-c.json" >"$d.rxe-c.txt" 2>&1
		ycli=("$d.rxe-c.json")
	fi
	echo "   ($((SECONDS - t0)) s)"
	echo "== path MTU $mtu, loss $loss % on the rxe side ($(git -C "$RXE_DIR" rev-parse --short HEAD 2>/dev/null), $(date -u +%F))"
	/usr/bin/python3 "$RXE_DIR/rxe-yardstick.py" table "$d/report.json" "$d.rxe.json" \
		"${ycli[@]}" || rc=1
	grep -E "^(FAIL|N/A) " "$d.txt"
done
# every setting in one place: matrix.csv and matrix.md (exit 1: droce failed where rxe passed)
/usr/bin/python3 "$RXE_DIR/rxe-yardstick.py" matrix "$OUT" "$IOP" >/dev/null || rc=1
echo "interop-rxe: logs, captures and reports in $OUT; matrix.csv and matrix.md there"
exit $rc
