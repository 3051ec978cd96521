#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run each benchmark named on the command line in turn (`ninja bench`); stop at the first failure.
set -e
for b in "$@"; do
	echo "== $(basename "$b")"
	"$b"
done
