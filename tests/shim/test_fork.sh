#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# fork() and the shim (fork_child.c): children forked before the device is opened run
# runtimes of their own; a child forked after gets EIO on its parent's device, with one line
# naming the cause and the fix, and the parent's verbs still work. Over net_null (no peer).
# Usage: test_fork.sh <build>/verbs-shim FORK_CHILD
. "$(dirname "$0")/shim_lib.sh"
FC=$2
run DROCE_IPV4=198.18.0.1/24 DROCE_VDEV=net_null0 "DROCE_EAL=--no-huge -m 128 --no-pci --no-telemetry" \
	DROCE_LCORES=0 -- timeout 60 "$FC"
expect_rc 0 "fork_child"
expect_out "^fork before open: 2 children, each with its own runtime: ok" "fork before open"
expect_out "^fork after open: the child's verbs failed with EIO, the parent's work: ok" "fork after open"
expect_err "is a fork\(\) child of [0-9]+, which opened droce0: .*fail \(EIO\); open the device in the child" \
	"the child's one-line reason"
[ "$(grep -c "is a fork() child" "$ERR")" = 1 ] || fail "the reason said more than once"
finish
