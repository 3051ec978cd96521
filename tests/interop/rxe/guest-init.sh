#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# PID 1 of the rxe guest (dash). From the kernel command line: rxevm.ip=ADDR/LEN (eth0's
# address, also rxe0's RoCE address: GID 1), rxevm.mtu=N (eth0's MTU: 1500 gives rxe an active
# MTU of 1024, 4200 gives 4096), rxevm.agent=PORT (the command agent's TCP port).
# Loads the modules, configures eth0, adds rxe0 on it, starts the agent and prints
# "rxevm: ready" on the console.
export PATH=/usr/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
ip=
mtu=1500
port=7000
for a in $(cat /proc/cmdline); do
	case $a in
	rxevm.ip=*) ip=${a#*=} ;;
	rxevm.mtu=*) mtu=${a#*=} ;;
	rxevm.agent=*) port=${a#*=} ;;
	esac
done
kver=$(cat /etc/rxevm/kver)
while read -r m; do
	insmod "/lib/modules/$kver/$m" || echo "rxevm: insmod $m failed"
done </etc/rxevm/modules
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
ip link set lo up
ip link set eth0 mtu "$mtu"
ip addr add "$ip" dev eth0
ip link set eth0 up
rdma link add rxe0 type rxe netdev eth0 || echo "rxevm: rdma link add failed"
# GID 1 is the IPv4-mapped address, once the address is on eth0 (GID 0 is the link-local)
i=0
while ! grep -q ffff /sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
nc -ll -p "$port" -e /etc/rxevm/agent &
echo "rxevm: ready $ip mtu $mtu gid1 $(cat /sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null)"
# PID 1 never returns
while :; do
	sleep 3600
done
