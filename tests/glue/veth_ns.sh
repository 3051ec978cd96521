# SPDX-License-Identifier: BSD-3-Clause
# Sourced (POSIX sh) by the tests that run two af_packet ports in one private network namespace.
# veth_ns NS IF_A INDEX_A MAC_A IF_B INDEX_B MAC_B: create NS (deleted at exit) holding a veth
# pair, both ends up without IPv6 (the kernel stays quiet), loopback up for the TCP exchange.
# Not root or no namespaces/veth: exit 77, which meson reports as skipped, never as passed.
# The ifindexes are given because DPDK 22.11's af_packet derives its PACKET_FANOUT group from
# pid ^ ifindex: sibling pids on adjacent ifindexes can collide (EINVAL at probe).
veth_ns() {
	[ "$(id -u)" = 0 ] || { echo "not root: skipped"; exit 77; }
	ip netns add "$1" 2>/dev/null || { echo "cannot create a network namespace: skipped"; exit 77; }
	VETH_NS=$1
	trap 'ip netns del "$VETH_NS" 2>/dev/null' EXIT
	trap 'exit 1' INT TERM
	ip -n "$1" link add "$2" index "$3" address "$4" type veth \
		peer name "$5" index "$6" address "$7" || { echo "no veth: skipped"; exit 77; }
	for d in "$2" "$5"; do
		ip netns exec "$1" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
		ip -n "$1" link set "$d" up
	done
	ip -n "$1" link set lo up
}
