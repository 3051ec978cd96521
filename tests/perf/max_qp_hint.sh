#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A client asking more QPs than the runtime's max_qp fails and says what to raise; without
# DROCE_MAX_QP droce-perf makes room itself and the same run passes.
#   max_qp_hint.sh PERF_PAIR DROCE_PERF
pair=$1
perf=$2
out=$(PERF_TIMEOUT=30 EXPECT_SERVER_FAIL=1 PERF_CLIENT_ENV=DROCE_MAX_QP=16 \
	sh "$pair" "$perf" -o write -q 32 -s 64 -n 64 -Q 2>&1)
rc=$?
if [ $rc -eq 0 ] || ! printf '%s\n' "$out" | grep -q "32 QPs over 1 shard(s) of max_qp 16 each: raise DROCE_MAX_QP"; then
	echo "FAIL: -q 32 with DROCE_MAX_QP=16: exit $rc, no hint:"
	printf '%s\n' "$out"
	exit 1
fi
echo "ok: the hint: $(printf '%s\n' "$out" | grep "raise DROCE_MAX_QP")"
if ! PERF_TIMEOUT=60 sh "$pair" "$perf" -o write -q 1000 -s 64 -n 4000 -t 1 --verify -Q >/dev/null 2>&1; then
	echo "FAIL: -q 1000 without DROCE_MAX_QP"
	exit 1
fi
echo "ok: -q 1000 without DROCE_MAX_QP, every byte checked"
