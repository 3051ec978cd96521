# SPDX-License-Identifier: BSD-3-Clause
# Sourced by test_rxe.sh and rxe-matrix.sh: a network namespace holding a bridge, droce's veth
# into it and the taps of one or two rxe guests (QEMU, TCG), and the guests' lifecycle.
#
#   namespace rxevm_<pid>:  va (198.18.0.1, this kernel: droce's TCP side, droce-interop runs
#   here; droce itself is 198.18.0.2 on va through af_packet) -- vb -- br0 -- rxt1 -- guest 1
#   (198.18.0.11, rxe0) and rxt2 -- guest 2 (198.18.0.12, rxe0). Bridge ports and taps carry
#   4200-byte frames; the MTU of va and of each guest's eth0 chooses the path MTU.
# Set RXE_DIR (this folder) and RXE_CACHE (rxe-image.sh's output) before sourcing.

RXE_NS=rxevm_$$
RXE_DROCE_KERNEL=198.18.0.1
RXE_DROCE_IP=198.18.0.2
RXE_PIDS=()
RXE_LOGDIR=${RXE_LOGDIR:-$(mktemp -d /tmp/rxevm.XXXXXX)}

# The guest's TCP segments at its MTU: a TSO super-frame reaching droce's af_packet port is
# captured truncated (the programs' TCP exchange, not RoCE) and droce-pcap verify rejects it.
RXE_NO_TSO=host_tso4=off,host_tso6=off,host_ufo=off

rxe_guest_ip() { echo "198.18.0.1$1"; }

rxe_in() { ip netns exec "$RXE_NS" "$@"; }

# rxe_peer N [-t SECS] CMD...: run CMD in guest N
rxe_peer() {
	local n=$1 t=()
	shift
	[ "$1" = -t ] && t=(-t "$2") && shift 2
	rxe_in /usr/bin/python3 "$RXE_DIR/rxe-peer.py" "${t[@]}" "$(rxe_guest_ip "$n")" "$@"
}

rxe_net_up() {
	ip netns add "$RXE_NS" || return 1
	rxe_in sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	rxe_in sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$RXE_NS" link set lo up
	ip -n "$RXE_NS" link add br0 mtu 4200 type bridge &&
		ip -n "$RXE_NS" link add va address 02:00:00:00:07:01 mtu 1500 type veth peer name vb &&
		ip -n "$RXE_NS" link set vb mtu 4200 master br0 &&
		ip -n "$RXE_NS" addr add "$RXE_DROCE_KERNEL/24" dev va || return 1
	for d in br0 vb va; do ip -n "$RXE_NS" link set "$d" up || return 1; done
}

# rxe_vm_start N MTU: guest N on tap rxtN, eth0 at MTU (1500: rxe's path MTU 1024; 4200: 4096)
rxe_vm_start() {
	local n=$1 mtu=$2
	ip -n "$RXE_NS" tuntap add dev "rxt$n" mode tap &&
		ip -n "$RXE_NS" link set "rxt$n" mtu 4200 master br0 up || return 1
	# not through rxe_in: a function in the background is a subshell, and $! would be its PID,
	# not QEMU's
	ip netns exec "$RXE_NS" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 512M -nodefaults -no-user-config \
		-display none -monitor none -no-reboot -serial "file:$RXE_LOGDIR/guest$n.console" \
		-kernel "$RXE_CACHE/vmlinuz" -initrd "$RXE_CACHE/initrd.img" \
		-append "console=ttyS0 panic=-1 quiet rxevm.ip=$(rxe_guest_ip "$n")/24 rxevm.mtu=$mtu" \
		-netdev "tap,id=n0,ifname=rxt$n,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:1$n,$RXE_NO_TSO" \
		</dev/null >>"$RXE_LOGDIR/guest$n.qemu" 2>&1 &
	if [ -n "${RXE_RESTART_SLOT:-}" ]; then
		RXE_PIDS[$RXE_RESTART_SLOT]=$!
	else
		RXE_PIDS+=($!)
	fi
}

# rxe_vm_wait N SECS: until guest N's agent answers and rxe0 has its IPv4 GID
rxe_vm_wait() {
	local n=$1 secs=$2 t0=$SECONDS
	while [ $((SECONDS - t0)) -lt "$secs" ]; do
		# the console says when the agent is up: no connection attempts before
		if ! grep -q "^rxevm: ready" "$RXE_LOGDIR/guest$n.console" 2>/dev/null; then
			sleep 1
			continue
		fi
		if rxe_peer "$n" -t 20 grep -q ffff /sys/class/infiniband/rxe0/ports/1/gids/1 \
			2>/dev/null; then
			echo "guest $n: rxe0 ready after $((SECONDS - t0)) s"
			return 0
		fi
		sleep 1
	done
	echo "guest $n: not ready after $secs s; console:"
	tail -n 20 "$RXE_LOGDIR/guest$n.console" "$RXE_LOGDIR/guest$n.qemu"
	return 1
}

# rxe_set N MTU LOSS: guest N's eth0 MTU (rxe follows it) and netem loss in % (0: none)
rxe_set() {
	local n=$1 mtu=$2 loss=$3
	rxe_peer "$n" -t 20 ip link set eth0 mtu "$mtu" || return 1
	rxe_peer "$n" -t 20 tc qdisc del dev eth0 root 2>/dev/null
	[ "$loss" = 0 ] || rxe_peer "$n" -t 20 tc qdisc add dev eth0 root netem loss "$loss%"
}

# rxe_vm_alive N: guest N's agent answers
rxe_vm_alive() { rxe_peer "$1" -t 20 true 2>/dev/null; }

# rxe_vm_restart N MTU SECS: guest N stopped answering (a stall past every bound, a crash): its
# console's last lines and QEMU's state printed, the guest killed and booted again
rxe_vm_restart() {
	local n=$1 mtu=$2 secs=$3 pid=${RXE_PIDS[$(($1 - 1))]}
	echo "guest $n: not answering; QEMU $pid $(kill -0 "$pid" 2>/dev/null && echo running ||
		echo exited); its console's last lines:"
	tail -n 30 "$RXE_LOGDIR/guest$n.console" "$RXE_LOGDIR/guest$n.qemu"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	mv "$RXE_LOGDIR/guest$n.console" "$RXE_LOGDIR/guest$n.console.$SECONDS"
	ip -n "$RXE_NS" link del "rxt$n" 2>/dev/null
	RXE_RESTART_SLOT=$((n - 1)) rxe_vm_start "$n" "$mtu" && rxe_vm_wait "$n" "$secs"
}

rxe_cleanup() {
	local p
	for p in "${RXE_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${RXE_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	ip netns del "$RXE_NS" 2>/dev/null
	RXE_PIDS=()
}
