#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bad options: exit 2 with exactly one line on stderr, nothing on stdout, no EAL started.
perf=$1
fail=0
check() {
	out=$("$perf" "$@" 2>/tmp/perf_bad_$$.err)
	rc=$?
	lines=$(wc -l </tmp/perf_bad_$$.err)
	if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || [ -n "$out" ]; then
		echo "FAIL: droce-perf $*: exit $rc, $lines stderr lines, stdout '$out'"
		cat /tmp/perf_bad_$$.err
		fail=1
	else
		echo "ok: droce-perf $*: $(cat /tmp/perf_bad_$$.err)"
	fi
}
check --bogus
check -s 0
check -s 4194304
check -o nop
check -m fast
check -n 0
check -q 16385
check -t 0
check --mtu 1000
check --sizes 1,x
check -a --sizes 8,16
check -p 70000
check -D 0
check --max-outstanding 0
check --timeout-ms 5
check -n
check -p 0 127.0.0.1
check 127.0.0.1 127.0.0.2
rm -f /tmp/perf_bad_$$.err
"$perf" --help | grep -q "net_memif0,role=server" || { echo "FAIL: --help lacks the memif example"; fail=1; }
exit $fail
