# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the droce-bench-* scripts: a temporary directory, bounded server/client pairs,
# medians, perftest's and droce-perf's result parsers, key=value figures for droce-bench-all.
# The caller sets ME (its name) first; @VARS@ in the callers are filled in by meson.

REPS=${DROCE_BENCH_REPS:-3}	# interleaved repetitions; the medians are printed
BOUND=${DROCE_BENCH_BOUND:-30}	# seconds any one process may run
RETRIES=${DROCE_BENCH_RETRIES:-1}	# a failed run is repeated this often (said on stderr)
TMP=$(mktemp -d "/tmp/$ME.XXXXXX")
SPID=''
CLEANUP_MORE=''

bench_cleanup() {
	if [ -n "$SPID" ]; then
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
	fi
	[ -z "$CLEANUP_MORE" ] || $CLEANUP_MORE
	rm -rf "$TMP"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

die() {
	echo "$ME: $*" >&2
	exit 1
}

# median V...: the middle value (the lower one of an even count); "" for no value
median() {
	printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# ratio A B [FORMAT]: A / B, or "-" when either is missing or B is 0
ratio() {
	awk -v a="${1:-}" -v b="${2:-}" -v f="${3:-%.2f}" \
		'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-"; else printf f "\n", a / b }'
}

# kv NAME VALUE: one figure for droce-bench-all ($DROCE_BENCH_KV), if it asked
kv() {
	[ -z "${DROCE_BENCH_KV:-}" ] || echo "$1=$2" >>"$DROCE_BENCH_KV"
}

# free_port: a TCP port below the ephemeral range (32768-) that no socket uses now
free_port() {
	local i p
	for i in $(seq 50); do
		p=$((20000 + ($$ * 7 + RANDOM) % 12000))
		[ -n "$(ss -Htan "sport = :$p or dport = :$p")" ] || break
	done
	echo $p
}

# pair NAME WAIT: runs the array SRV in the background and, once WAIT is met, the array CLI;
# both bounded by $BOUND and both must exit 0. WAIT: listen:PORT (a TCP listener on PORT),
# listen:PORT:NETNS (in that network namespace), file:PATH (PATH holds the server's port: the
# word PORT in CLI is replaced by it) or sleep:S. SRV_KILL=1: the server runs until stopped
# (SIGINT once the client is done) and its exit status does not count.
# Output: $TMP/NAME.srv and $TMP/NAME.cli (stdout and stderr). A failed run: both outputs on
# stderr; it is run again up to $RETRIES times (a loaded 2-CPU machine stalls a side now and
# then), then the script exits 1. Retries are counted in the figure "retries".
pair() {
	local k
	for k in $(seq 0 "$RETRIES"); do
		if pair_try "$@"; then
			[ "$k" = 0 ] || kv retries "$k"
			return 0
		fi
		[ "$k" = "$RETRIES" ] || echo "$ME: $1: run again" >&2
	done
	exit 1
}

pair_try() {
	local name=$1 wait=$2 i port='' a rc
	local cli=()
	[ "${wait%%:*}" != file ] || rm -f "${wait#file:}"
	timeout -s KILL "$BOUND" "${SRV[@]}" >"$TMP/$name.srv" 2>&1 &
	SPID=$!
	case $wait in
	listen:*)
		a=${wait#listen:}
		for i in $(seq 300); do
			if [[ $a == *:* ]]; then
				ip netns exec "${a#*:}" ss -Hltn "sport = :${a%%:*}" | grep -q . && break
			else
				ss -Hltn "sport = :$a" | grep -q . && break
			fi
			kill -0 $SPID 2>/dev/null || break
			sleep 0.05
		done
		;;
	file:*)
		for i in $(seq 300); do
			[ -s "${wait#file:}" ] && break
			kill -0 $SPID 2>/dev/null || break
			sleep 0.05
		done
		port=$(cat "${wait#file:}" 2>/dev/null)
		;;
	sleep:*)
		sleep "${wait#sleep:}"
		;;
	esac
	for a in "${CLI[@]}"; do
		[ "$a" != PORT ] || a=$port
		cli+=("$a")
	done
	timeout -s KILL "$BOUND" "${cli[@]}" >"$TMP/$name.cli" 2>&1
	rc=$?
	[ "${SRV_KILL:-0}" = 0 ] || kill -INT $SPID 2>/dev/null
	wait $SPID
	i=$?
	[ "${SRV_KILL:-0}" = 0 ] || i=0
	SPID=''
	if [ $rc != 0 ] || [ $i != 0 ]; then
		echo "$ME: $name: client ${cli[0]} exited $rc, server ${SRV[0]} exited $i" >&2
		echo "  server: ${SRV[*]}" >&2
		sed 's/^/  | /' "$TMP/$name.srv" >&2
		echo "  client: ${cli[*]}" >&2
		sed 's/^/  | /' "$TMP/$name.cli" >&2
		return 1
	fi
}

# perftest_col FILE COLUMN: the value under COLUMN (e.g. 't_typical[usec]', 'BW average[Gb/sec]',
# '99% percentile[usec]') in perftest's result table. A header name is one word ending in its
# unit ('t_min[usec]'), a '#' word, or words up to the one with the unit ('BW average[Gb/sec]');
# the row's values are separated by blanks.
perftest_col() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import sys
lines = open(sys.argv[1], errors="replace").read().splitlines()
for i, l in enumerate(lines):
    if l.lstrip().startswith("#bytes") and i + 1 < len(lines):
        names, part = [], []
        for w in l.split():
            part.append(w)
            if "[" in w or w.startswith("#"):
                names.append(" ".join(part))
                part = []
        vals = lines[i + 1].split()
        if sys.argv[2] in names and len(vals) == len(names):
            print(vals[names.index(sys.argv[2])])
            break
EOF
}

# perf_json FILE KEY: a figure of droce-perf's first result (-J): gbps, mmsg_per_s, p50, p99, ...
# or path_mtu
perf_json() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
for l in open(sys.argv[1], errors="replace"):
    if l.startswith("{"):
        d = json.loads(l)
        r = d["results"][0]
        k = sys.argv[2]
        v = d.get(k, r.get(k, r.get("lat_us", {}).get(k)))
        if v is not None:
            print(v)
        break
EOF
}

# need FIELD VALUE NAME: a run that printed no figure failed
need() {
	[ -n "$2" ] || {
		echo "$ME: $1: no figure in the output of $3" >&2
		sed 's/^/  | /' "$TMP/$3.cli" >&2
		exit 1
	}
}

# pct A B: 100 A / B, no decimals, or "-"
# c2c: the cache-line round trip between CPUs 0 and 1 in ns (droce_bench_c2c.h), or "-";
# the caller sets C2C to droce-bench-c2c's path
c2c() {
	"${C2C:-droce-bench-c2c}" -q 2>/dev/null || echo -
}

# Below this the two CPUs share a cache (DROCE_BENCH_C2C_NEAR_NS in droce_bench_c2c.h).
C2C_NEAR_NS=150

# placement BEFORE AFTER: the probes around a pair of runs as a tag (near: CPUs 0 and 1 shared
# a cache at both, far: at neither, moved: they changed in between)
placement() {
	awk -v a="${1:--}" -v b="${2:--}" -v t="$C2C_NEAR_NS" 'BEGIN {
		if (a == "-" || b == "-") { print "?"; exit }
		x = a + 0 < t + 0; y = b + 0 < t + 0
		print x && y ? "near" : !x && !y ? "far" : "moved" }'
}

pct() {
	ratio "${1:-}" "${2:-}" "%.6f" | awk '$1 == "-" { print; next } { printf "%.0f\n", 100 * $1 }'
}
