#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ibv_devinfo -v on the shim under valgrind memcheck: no invalid access, no uninitialised
# value reaching output, no leak (the device list is freed, contexts are closed).
# Usage: test_valgrind.sh <build>/verbs-shim
. "$(dirname "$0")/shim_lib.sh"

if ! command -v valgrind >/dev/null; then
	echo "valgrind is not installed (Debian package valgrind)"
	exit 1
fi
run DROCE_IPV4=198.18.0.1/24 DROCE_IPV6=2001:2::1/64 -- \
	valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible \
	--track-origins=yes ibv_devinfo -v
expect_rc 0 "valgrind ibv_devinfo -v"
expect_out "^hca_id:.droce0\$" "valgrind ibv_devinfo -v"
expect_out "GID\[  1\]:.+2001:2::1, RoCE v2\$" "valgrind ibv_devinfo -v"
expect_err "ERROR SUMMARY: 0 errors from 0 contexts" "valgrind ibv_devinfo -v"
finish
