#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ibv_xsrq_pingpong needs XRC, which droce does not offer: it must stop with its own message
# (exit 1), never crash and never hang. It fails at "Couldn't allocate PD" while the data path
# is not wired, at "Couldn't Open the XRC Domain 95" (EOPNOTSUPP) once PDs and MRs work.
# Usage: test_xsrq.sh <build>/verbs-shim
. "$(dirname "$0")/shim_lib.sh"

run DROCE_IPV4=198.18.0.1/24 -- timeout -s KILL 20 ibv_xsrq_pingpong -p 18599
expect_rc 1 "ibv_xsrq_pingpong"
expect_err "^Couldn't (allocate PD|Open the XRC Domain 95)\$" "ibv_xsrq_pingpong"
finish
