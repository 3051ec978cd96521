#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The rxe guest's command agent: one command per TCP connection (busybox nc -ll -e runs one
# agent per connection, so a server and a probe of it can run side by side).
# Request, one line: "SECS WORD..." (POSIX-shell-quoted words; rxe-peer.py writes it).
# The command runs in a session of its own, killed with its whole process group after SECS
# seconds or as soon as the connection closes (the host side was killed); rxe retries
# forever with retry_cnt 7, so nothing may outlive its caller.
# Answer: "O <n>" and n bytes of stdout, "E <n>" and n bytes of stderr, "R <exit status>".
IFS= read -r req || exit 0
secs=${req%% *}
d=$(mktemp -d)
printf 'exec %s\n' "${req#* }" >"$d/cmd"
# busybox timeout keeps the process group (coreutils' makes one of its own). dash by its path:
# busybox runs its own applet for a bare "sh" (ash, which runs its own tc and ip in turn)
setsid timeout -s KILL "$secs" /usr/bin/dash "$d/cmd" </dev/null >"$d/out" 2>"$d/err" &
pid=$!
exec 3<&0
(
	IFS= read -r x
	kill -KILL -"$pid" 2>/dev/null
) <&3 &
w=$!
wait "$pid"
rc=$?
kill -KILL -"$pid" 2>/dev/null
kill "$w" 2>/dev/null
printf 'O %d\n' "$(wc -c <"$d/out")"
cat "$d/out"
printf 'E %d\n' "$(wc -c <"$d/err")"
cat "$d/err"
printf 'R %d\n' "$rc"
rm -rf "$d"
