# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the netns tests. ns_kernel_side NS IFACE ADDR: the kernel's own side of the
# interface droce uses in NS: IPv4 only (IPv6 off, so it stays quiet), ADDR/24 on it, and UDP
# 4791 never reaching its sockets (no ICMP port unreachable answering droce's traffic on
# af_packet). Uses the caller's inns and fail.
ns_kernel_side() {
	inns "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	inns "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up || fail "address on $2"
	inns "$1" nft "add table inet droce; add chain inet droce in { type filter hook input priority 0; }; add rule inet droce in udp dport 4791 counter drop" ||
		fail "nft input rule"
}
