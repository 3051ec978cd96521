#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A run with --corrupt-for-test must fail: the client exits 1 and its stderr names the mismatch.
#   expect_fail.sh PERF_PAIR DROCE_PERF [client options...]
pair=$1
shift
out=$(EXPECT_SERVER_FAIL=${EXPECT_SERVER_FAIL:-0} "$pair" "$@" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 1 ] || { echo "FAIL: client exit $rc, expected 1"; exit 1; }
echo "$out" | grep -q "verify: " || { echo "FAIL: no 'verify:' mismatch reported"; exit 1; }
echo "ok: the corruption was detected"
