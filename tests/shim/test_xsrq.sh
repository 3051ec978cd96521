#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ibv_xsrq_pingpong needs XRC, which droce does not offer: it must stop with its own message
# (exit 1), never crash and never hang. Without a runtime it stops at its first PD; with one
# (net_null port, --no-huge) the PD and MR work and ibv_open_xrcd fails with EOPNOTSUPP (95).
# Usage: test_xsrq.sh <build>/verbs-shim
. "$(dirname "$0")/shim_lib.sh"

run DROCE_IPV4=198.18.0.1/24 DROCE_EAL="--no-pci --bogus-option" \
	-- timeout -s KILL 20 ibv_xsrq_pingpong -p 18599
expect_rc 1 "ibv_xsrq_pingpong, no runtime"
expect_err "^droce: cannot start the runtime: " "ibv_xsrq_pingpong, no runtime"
expect_err "^Couldn't allocate PD\$" "ibv_xsrq_pingpong, no runtime"

run DROCE_IPV4=198.18.0.1/24 DROCE_EAL="--no-huge -m 128 --no-pci --no-telemetry" \
	DROCE_VDEV=net_null0 -- timeout -s KILL 20 ibv_xsrq_pingpong -p 18599
expect_rc 1 "ibv_xsrq_pingpong"
expect_err "^Couldn't Open the XRC Domain 95\$" "ibv_xsrq_pingpong"
finish
