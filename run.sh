#!/usr/bin/env bash
# droce: install what is needed (Debian 12), build, then run the demo or every test.
#   bash run.sh demo   a RoCEv2 session between two endpoints, with results
#   bash run.sh test   every test: units, golden vectors, captures, simulator, fuzzing
# Needs root for apt-get (or everything already installed). Safe to re-run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${DROCE_BUILD:-$here/build}

# Debian packages: the build (DPDK 22.11, meson, CUnit, libpcap), the tests (Scapy, tshark, clang-format, clang for
# libFuzzer, valgrind), the runtime tools, and the real libibverbs, its headers and the unmodified
# verbs programs the shim is tested with (ibverbs-utils, perftest), librdmacm's headers and rping
# for the rdma_cm replacement (librdmacm-dev, rdmacm-utils), qperf against a peer that restarts;
# nftables and ping for the
# two-namespace tests, libbpf and kernel headers for the XDP program; sockperf and iperf3 for
# the kernel TCP baselines of the benchmarks (tools/bench), gnuplot for their curves' PNGs; QEMU,
# kmod and cpio to build and boot the Linux rxe guest of tests/interop/rxe.
packages=(
	build-essential pkg-config meson ninja-build
	libdpdk-dev dpdk libcunit1-dev libpcap-dev zlib1g-dev
	python3 python3-scapy tshark clang clang-format llvm valgrind iproute2 binutils
	libibverbs-dev libibverbs1 ibverbs-utils perftest librdmacm-dev rdmacm-utils qperf
	nftables iputils-ping linux-libc-dev libbpf-dev
	sockperf iperf3 gnuplot-nox
	qemu-system-x86 kmod cpio
)

install_deps() {
	local missing=()
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "== installing: ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "run.sh: packages missing (${missing[*]}); run as root or install them with apt-get" >&2
		exit 2
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
	if [ -f "$build/build.ninja" ]; then
		meson setup --reconfigure "$build" "$here" >/dev/null
	else
		meson setup "$build" "$here" >/dev/null
	fi
	ninja -C "$build"
}

# The closing line CI reads: 'N passed, N failed' from meson's machine-readable log.
summarise() {
	/usr/bin/python3 - "$build/meson-logs/testlog.json" "$@" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    res = r.get("result")
    if res in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif res == "SKIP":
        skipped += 1
    else:
        failed += 1
        print("FAILED:", r.get("name"), res)
extra_p, extra_f = int(sys.argv[2]), int(sys.argv[3])
print(f"{passed + extra_p} passed, {failed + extra_f} failed, {skipped} skipped")
sys.exit(1 if failed + extra_f or skipped else 0)
PY
}

# -O3 warns where -O2 does not (format truncation, maybe-uninitialized): a release build must
# compile too, since -Werror turns those into a user's failed build.
build_release() {
	local rb="$build-release"

	echo "== release build (-O3, -Werror) in $rb"
	if [ -f "$rb/build.ninja" ]; then
		meson setup --reconfigure --buildtype=release "$rb" "$here" >/dev/null
	else
		meson setup --buildtype=release "$rb" "$here" >/dev/null
	fi
	if ! ninja -C "$rb" >"$rb/ninja.log" 2>&1; then
		grep -B2 -A6 'error' "$rb/ninja.log" | head -60 >&2
		return 1
	fi
}

run_tests() {
	local rc=0 fp=0 ff=0
	if build_release; then
		fp=$((fp + 1))
	else
		echo "FAILED: release build" >&2
		ff=$((ff + 1))
	fi
	meson test -C "$build" --print-errorlogs --num-processes 2 || rc=$?
	if [ -x "$here/tests/fuzz/run_fuzz.sh" ]; then
		if "$here/tests/fuzz/run_fuzz.sh" "${DROCE_FUZZ_SECONDS:-60}"; then
			fp=$((fp + 1))
		else
			ff=$((ff + 1))
		fi
	fi
	summarise "$fp" "$ff" || rc=1
	return $rc
}

run_demo() {
	"$here/tools/demo.sh" "$build"
}

cmd=${1:-}
case "$cmd" in
test)
	install_deps
	build
	run_tests
	;;
demo)
	install_deps
	build
	run_demo
	;;
*)
	echo "usage: bash run.sh demo|test" >&2
	exit 2
	;;
esac
