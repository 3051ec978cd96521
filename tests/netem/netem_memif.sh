#!/usr/bin/env bash
# droce-rawpp through droce-netem over memif, three processes, a few seconds:
#   loss: ping-pong with 5% loss and 200 us delay each way; checks the loss and RTT seen by the
#         client against the netem counters and what the model should give.
#   red:  a stream into a 200 Mbit/s queue with RED; checks CE marks arrive and tail drops count.
#   args: bad command lines are refused with a message.
# Usage: netem_memif.sh NETEM RAWPP loss|red|args
set -u
netem=$1
rawpp=$2
scenario=$3
tag=droce-nt-$$-$RANDOM	# abstract memif socket names, unique per run
tmp=$(mktemp -d)
# No hugepages, no shared files (nothing left behind, parallel runs cannot collide), and the
# lcore may float over both cores: three pollers share two CPUs with everyone else.
eal=(--no-huge -m 128 --no-pci --no-shconf "--lcores=0@(0,1)" --log-level=3)
pids=()
fails=0

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# value FILE LINE-PREFIX KEY: the number after KEY= on the first line starting with LINE-PREFIX.
value() {
	grep -m1 "^$2" "$1" | tr ' ' '\n' | sed -n "s|^$3=||p" | head -n1
}

check() {	# check DESCRIPTION EXPR (awk boolean over numbers)
	if awk "BEGIN { exit !($2) }"; then
		echo "ok:   $1 ($2)"
	else
		echo "FAIL: $1 ($2)"
		fails=$((fails + 1))
	fi
}

start_netem() {
	"$netem" "${eal[@]}" --vdev="net_memif0,role=server,socket=/$tag-a" \
		--vdev="net_memif1,role=server,socket=/$tag-b" -- "$@" >"$tmp/netem.out" 2>&1 &
	netem_pid=$!
	pids+=("$netem_pid")
	# up to 30 s while it lives: under a full test run on two cores EAL's start has taken
	# more than 5 s
	for _ in $(seq 600); do
		grep -q "ready" "$tmp/netem.out" && return 0
		kill -0 "$netem_pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "droce-netem did not start:"
	cat "$tmp/netem.out"
	exit 1
}

stop_netem() {
	kill -TERM "$netem_pid" 2>/dev/null
	wait "$netem_pid"
	echo "--- droce-netem"
	grep '^droce-netem' "$tmp/netem.out"
}

run_pair() {	# run_pair SERVER-ARGS -- CLIENT-ARGS
	local sargs=() cargs=()
	while [ "$1" != "--" ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	"$rawpp" "${eal[@]}" --vdev="net_memif0,role=client,socket=/$tag-b" -- --role server \
		"${sargs[@]}" >"$tmp/server.out" 2>&1 &
	server_pid=$!
	pids+=("$server_pid")
	# The client starts at once when its link is up: the server's must be up before that.
	for _ in $(seq 200); do
		grep -q "link up" "$tmp/server.out" && break
		sleep 0.05
	done
	timeout 30 "$rawpp" "${eal[@]}" --vdev="net_memif0,role=client,socket=/$tag-a" -- \
		--role client "${cargs[@]}" >"$tmp/client.out" 2>&1
	echo "client exit $?"
	wait "$server_pid"
	echo "server exit $?"
	echo "--- client"; grep '^rawpp' "$tmp/client.out"
	echo "--- server"; grep '^rawpp' "$tmp/server.out"
}

case "$scenario" in
loss)
	start_netem --delay 200us --loss 5% --seed 11 --duration 20s --idle-us 20
	run_pair -D 20 --idle-us 20 -- -n 1000 --warmup 0 --timeout-us 5000 --idle-us 20
	stop_netem
	sent=$(value "$tmp/client.out" "rawpp pingpong:" sent)
	recv=$(value "$tmp/client.out" "rawpp pingpong:" received)
	late=$(value "$tmp/client.out" "rawpp pingpong:" late)
	rmin=$(value "$tmp/client.out" "rawpp rtt_us:" min)
	p50=$(value "$tmp/client.out" "rawpp rtt_us:" p50)
	echoed=$(value "$tmp/server.out" "rawpp pingpong server:" echoed)
	ab_rx=$(value "$tmp/netem.out" "droce-netem ab:" rx)
	ab_tx=$(value "$tmp/netem.out" "droce-netem ab:" tx)
	ab_loss=$(value "$tmp/netem.out" "droce-netem ab:" drop_loss)
	ab_refused=$(value "$tmp/netem.out" "droce-netem ab:" drop_tx_refused)
	ba_rx=$(value "$tmp/netem.out" "droce-netem ba:" rx)
	ba_tx=$(value "$tmp/netem.out" "droce-netem ba:" tx)
	ba_loss=$(value "$tmp/netem.out" "droce-netem ba:" drop_loss)
	check "every ping sent" "${sent:-0} == 1000"
	# Both ways 5%: 0.95^2 = 90.25% come back; sigma is 9.4 pings. An echo that came back
	# after the client gave up on its ping (late: a loaded host stalls the processes for
	# milliseconds) came back all the same.
	check "came back within 90.25% +- 5 sigma" \
		"${recv:-0} + ${late:-0} >= 855 && ${recv:-0} + ${late:-0} <= 950"
	check "RTT includes 2 x 200 us delay" "${rmin:-0} >= 400 && ${p50:-0} >= 400"
	check "netem ab lost ~5%" "${ab_loss:-0} >= 0.02 * ${ab_rx:-1} && ${ab_loss:-0} <= 0.09 * ${ab_rx:-1}"
	check "netem ba lost ~5%" "${ba_loss:-0} >= 0.02 * ${ba_rx:-1} && ${ba_loss:-0} <= 0.09 * ${ba_rx:-1}"
	# ab also carries the client's 8 end frames; those after the server left are refused.
	check "netem ab accounts for every frame" \
		"${ab_rx:-0} == ${ab_tx:-1} + ${ab_loss:-1} + ${ab_refused:-1} && ${ab_refused:-9} <= 8"
	check "netem ba got every echo" "${ba_rx:-0} == ${echoed:-1}"
	# One ping is outstanding at a time: only the last one's echo can arrive after the client
	# stopped reading (a slow echo to an earlier ping counts as late).
	check "client got what netem delivered" \
		"${recv:-0} + ${late:-0} <= ${ba_tx:-1} && ${recv:-0} + ${late:-0} >= ${ba_tx:-1} - 1"
	;;
red)
	start_netem --dir ab --rate 200mbit --limit 60k --red 5k,40k,20% --seed 5 --duration 20s \
		--idle-us 20
	run_pair --mode tput -D 20 --idle-us 20 -- --mode tput --size 1000 -n 20000
	stop_netem
	frames=$(value "$tmp/server.out" "rawpp tput rx:" frames)
	ce=$(value "$tmp/server.out" "rawpp tput rx:" ce)
	ab_mbit=$(value "$tmp/netem.out" "droce-netem ab:" tx_mbit_s)
	ab_tx=$(value "$tmp/netem.out" "droce-netem ab:" tx)
	ab_ce=$(value "$tmp/netem.out" "droce-netem ab:" ce_marked)
	ab_qd=$(value "$tmp/netem.out" "droce-netem ab:" drop_queue_full)
	ab_refused=$(value "$tmp/netem.out" "droce-netem ab:" drop_tx_refused)
	ab_maxq=$(value "$tmp/netem.out" "droce-netem ab:" max_backlog)
	ab_q50=$(value "$tmp/netem.out" "droce-netem ab:" queue_p50)
	ab_q99=$(value "$tmp/netem.out" "droce-netem ab:" queue_p99)
	check "frames got through" "${frames:-0} >= 100"
	check "CE marks arrived" "${ce:-0} >= 10"
	# A frame marked on the way into the queue may still be refused by the PMD on the way
	# out (drop_tx_refused, the server's ring full), and the client's END frames are ECT(0)
	# too, so netem may mark them, but the server counts CE on data frames only: every mark
	# netem handed over on a data frame, and no more.
	ends=$(( ${ab_tx:-0} - ${frames:-0} ))
	check "server saw exactly netem's marks" \
		"${ce:-0} <= ${ab_ce:--1} && ${ce:-0} >= ${ab_ce:--1} - ${ab_refused:-0} - $ends"
	check "queue overflowed" "${ab_qd:-0} > 0"
	check "queue bounded by the limit" "${ab_maxq:-1e9} <= 60000"
	echo "queue the frames found: median ${ab_q50:-?} B, p99 ${ab_q99:-?} B"
	# tput sends faster than 200 Mbit/s: most frames find the queue past RED's Kmax
	check "queue percentiles: median <= p99, p99 past Kmax and within the limit" \
		"${ab_q50:-1e9} <= ${ab_q99:-0} && ${ab_q99:-0} >= 40000 && ${ab_q99:-1e9} <= 60000"
	# The END frames also cross netem: data frames = ab_tx - (1..8).
	check "server got what netem sent" "${frames:-0} <= ${ab_tx:-0} && ${frames:-0} >= ${ab_tx:-0} - 8"
	# netem's own first-to-last transmit rate: the server's figure is only its receive window,
	# which shrinks to nothing when it is not scheduled while frames queue in its ring.
	check "rate limited to at most ~200 Mbit/s" "${ab_mbit:-1e9} <= 250 && ${ab_mbit:-0} > 0"
	;;
args)
	# Bad command lines: exit 2 with a message naming the option, before any port is touched.
	for bad in "--delay 100" "--loss 5" "--rate 10g" "--red 10k,40k,20%" "--dir up" "--frob 1"; do
		# shellcheck disable=SC2086
		"$netem" "${eal[@]}" -- $bad >"$tmp/out" 2>&1
		rc=$?
		msg=$(grep '^droce-netem:' "$tmp/out" | head -n1)
		echo "$bad -> $rc: $msg"
		check "'$bad' refused" "$rc == 2"
		check "'$bad' explained" "${#msg} > 20"
	done
	"$netem" "${eal[@]}" -- --delay 1ms >"$tmp/out" 2>&1
	check "no ports is an error" "$? == 2"
	check "and says so" "$(grep -c 'needs exactly 2 ports' "$tmp/out") == 1"
	"$rawpp" "${eal[@]}" -- --mode pingpong >"$tmp/out" 2>&1
	check "rawpp without --role refused" "$? == 2"
	;;
*)
	echo "unknown scenario $scenario"
	exit 2
	;;
esac
[ "$fails" -eq 0 ]
