#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A seed replays exactly: its -v trace and summary alone equal its part of a multi-seed run.
# usage: replay.sh DROCE_SIM
set -eu
SIM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
OPTS="--loss 5 --dup 2 --reorder 2 --jitter 1us --corrupt 1 --msgs 100 -v"
"$SIM" --seed 42 $OPTS >"$T/alone"
"$SIM" --seed 40 --seeds 3 $OPTS >"$T/all" || true
# Seed 42's lines are those after seed 41's summary, up to its own.
awk '/^seed=41 /{on=1; next} on{print} /^seed=42 /{exit}' "$T/all" >"$T/part"
if ! cmp -s "$T/alone" "$T/part"; then
	echo "seed 42 does not replay:"; diff "$T/alone" "$T/part" | head -5; exit 1
fi
[ "$(wc -l <"$T/alone")" -gt 100 ] || { echo "trace too short"; exit 1; }
echo "seed 42 replays exactly ($(wc -l <"$T/alone") lines)"
