# SPDX-License-Identifier: BSD-3-Clause
# Shared by the tests/shim scripts: run an unmodified Debian binary on the shim and assert on
# its output. Addresses are from the benchmarking ranges only (198.18.0.0/15, 2001:2::/48).
set -u

SHIM_DIR=$1
FAILS=0
OUT=$(mktemp)
ERR=$(mktemp)
trap 'rm -f "$OUT" "$ERR"' EXIT

# Drop any DROCE_* the caller has, so each case sets exactly what it means.
for v in $(env | sed -n 's/^\(DROCE_[A-Z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
# meson puts the shim's directory on LD_LIBRARY_PATH: each case chooses how the shim loads
# (an LD_PRELOAD case must not get the replacement library as well).
unset LD_LIBRARY_PATH

# How binaries load the shim: the replacement library (default) or, with SHIM_PRELOAD=1, the
# LD_PRELOAD variant in front of the real libibverbs.
shim_env() {
	if [ "${SHIM_PRELOAD:-0}" = 1 ]; then
		echo "LD_PRELOAD=$SHIM_DIR/libdroce_verbs_preload.so"
	else
		echo "LD_LIBRARY_PATH=$SHIM_DIR"
	fi
}

# run ENV... -- CMD...: run CMD on the shim with the given variables;
# stdout in $OUT, stderr in $ERR, exit status in $RC.
run() {
	local envs=()
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	env "${envs[@]}" "$(shim_env)" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

fail() {
	echo "FAIL: $*"
	echo "--- stdout"; cat "$OUT"
	echo "--- stderr"; cat "$ERR"
	FAILS=$((FAILS + 1))
}

expect_rc() {
	[ "$RC" -eq "$1" ] || fail "$2: exit status $RC, expected $1"
}

# expect_out REGEX WHAT / expect_err REGEX WHAT / expect_no_out REGEX WHAT (grep -E)
expect_out() {
	grep -Eq -- "$1" "$OUT" || fail "$2: stdout lacks /$1/"
}

expect_err() {
	grep -Eq -- "$1" "$ERR" || fail "$2: stderr lacks /$1/"
}

expect_no_out() {
	! grep -Eq -- "$1" "$OUT" || fail "$2: stdout has /$1/"
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}
