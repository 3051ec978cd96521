#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ibv_devices and ibv_devinfo (Debian's binaries, unmodified) on the shim: the device list,
# the port and the GID table come from the DROCE_* configuration.
# Usage: test_tools.sh <build>/verbs-shim
. "$(dirname "$0")/shim_lib.sh"
TAB=$'\t'
CONF=$(mktemp)
trap 'rm -f "$OUT" "$ERR" "$CONF"' EXIT

# No configuration: no device, and one line saying what to set.
run -- ibv_devices
expect_rc 0 "ibv_devices, no config"
expect_no_out droce0 "ibv_devices, no config"
expect_err '^droce: no device: no address configured: set DROCE_IPV4=' "ibv_devices, no config"

# One IPv4 address: droce0 with a GUID.
run DROCE_IPV4=198.18.0.1/24 -- ibv_devices
expect_rc 0 "ibv_devices"
expect_out "^ +droce0 *${TAB}[0-9a-f]{16}\$" "ibv_devices"
[ "$(grep -c droce "$OUT")" -eq 1 ] || fail "ibv_devices: one device expected"

# ibv_devinfo: neutral vendor, Ethernet port, active MTU from the defaults (path_mtu 1024).
run DROCE_IPV4=198.18.0.1/24 -- ibv_devinfo
expect_rc 0 "ibv_devinfo"
expect_out "^hca_id:${TAB}droce0\$" "ibv_devinfo"
expect_out "vendor_id:${TAB}+0x0000\$" "ibv_devinfo"
expect_out "phys_port_cnt:${TAB}+1\$" "ibv_devinfo"
expect_out "^${TAB}${TAB}port:${TAB}1\$" "ibv_devinfo"
expect_out "state:${TAB}+PORT_ACTIVE \(4\)\$" "ibv_devinfo"
expect_out "active_mtu:${TAB}+1024 \(3\)\$" "ibv_devinfo"
expect_out "link_layer:${TAB}+Ethernet\$" "ibv_devinfo"

# -v: the GID table holds exactly the configured addresses, RoCEv2, IPv4 first;
# a 9000-byte MTU lets path_mtu 4096 through.
run DROCE_IPV4=198.18.0.1/24 DROCE_IPV6=2001:2::1/64 DROCE_MTU=9000 DROCE_PATH_MTU=4096 \
	-- ibv_devinfo -v
expect_rc 0 "ibv_devinfo -v"
expect_out "active_mtu:${TAB}+4096 \(5\)\$" "ibv_devinfo -v"
expect_out "GID\[  0\]:${TAB}+::ffff:198\.18\.0\.1, RoCE v2\$" "ibv_devinfo -v"
expect_out "GID\[  1\]:${TAB}+2001:2::1, RoCE v2\$" "ibv_devinfo -v"
[ "$(grep -c 'GID\[' "$OUT")" -eq 2 ] || fail "ibv_devinfo -v: exactly 2 GIDs expected"
expect_out "gid_tbl_len:${TAB}+16\$" "ibv_devinfo -v"
expect_out "pkey_tbl_len:${TAB}+1\$" "ibv_devinfo -v"

# The configuration file named by DROCE_CONFIG; an environment variable overrides it.
printf 'ipv4 = 198.19.0.7/16\nmtu = 4200\npath_mtu = 4096\n' >"$CONF"
run DROCE_CONFIG="$CONF" -- ibv_devinfo -v
expect_rc 0 "ibv_devinfo -v, config file"
expect_out "GID\[  0\]:${TAB}+::ffff:198\.19\.0\.7, RoCE v2\$" "config file"
expect_out "active_mtu:${TAB}+4096 \(5\)\$" "config file"
run DROCE_CONFIG="$CONF" DROCE_IPV4=198.18.1.2/24 -- ibv_devinfo -v
expect_rc 0 "ibv_devinfo -v, config file + env"
expect_out "GID\[  0\]:${TAB}+::ffff:198\.18\.1\.2, RoCE v2\$" "config file + env"
expect_no_out "198\.19\.0\.7" "config file + env"
# path_mtu 4096 does not fit 1500: the runtime's check names the fix, no device
run DROCE_CONFIG="$CONF" DROCE_MTU=1500 -- ibv_devinfo
expect_err "^droce: no device: MTU 1500 too small for path MTU 4096" "MTU too small"
expect_err "^No IB devices found" "MTU too small"
expect_rc 255 "ibv_devinfo, MTU too small"

# A bad file names its line.
printf 'ipv4 = 198.18.0.1/24\nbogus = 1\n' >"$CONF"
run DROCE_CONFIG="$CONF" -- ibv_devices
expect_err "^droce: no device: .*:2: " "bad config file"
expect_no_out droce0 "bad config file"

# Active MTU: the largest that fits the Ethernet MTU, capped by path_mtu.
run DROCE_IPV4=198.18.0.1/24 DROCE_MTU=1500 DROCE_PATH_MTU=512 -- ibv_devinfo
expect_out "active_mtu:${TAB}+512 \(2\)\$" "path_mtu 512"

# The LD_PRELOAD variant answers the same.
env DROCE_IPV4=198.18.0.1/24 LD_PRELOAD="$SHIM_DIR/libdroce_verbs_preload.so" ibv_devinfo \
	>"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "ibv_devinfo, LD_PRELOAD"
expect_out "^hca_id:${TAB}droce0\$" "ibv_devinfo, LD_PRELOAD"

finish
