#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The rxe guest, built from Debian 12 packages: a kernel with rdma_rxe and an initramfs holding
# rdma-core's user space (libibverbs and its rxe provider, librdmacm), ibverbs-utils, perftest,
# rdmacm-utils, iproute2 (ip, ss, tc, rdma), dash as /bin/sh, busybox-static for the rest, each
# binary's shared-library closure as this host has it, and the guest's init and command agent
# (guest-init.sh, guest-agent.sh beside this script).
#
# Usage: rxe-image.sh CACHE
#   CACHE/debs     the .debs (apt-get download), fetched once and reused while present
#   CACHE/vmlinuz, CACHE/initrd.img, CACHE/kver   the image, rebuilt when an input is newer
# Needs apt-get (download only, no root), dpkg-deb, kmod's depmod/modprobe, cpio, gzip.
set -euo pipefail
cache=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)

# The kernel: the ABI that linux-image-amd64 points at today (ABI numbers come and go), else
# the newest linux-image-6.1.0-N-amd64 the archive lists.
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -1)
if [ -z "$kpkg" ]; then
	kpkg=$(apt-cache pkgnames linux-image-6.1.0- | grep -E '^linux-image-6\.1\.0-[0-9]+-amd64$' |
		sort -V | tail -1)
fi
[ -n "$kpkg" ] || { echo "rxe-image: no linux-image-6.1.0-*-amd64 in apt's lists" >&2; exit 1; }
pkgs=("$kpkg" rdma-core libibverbs1 ibverbs-providers ibverbs-utils perftest librdmacm1
	rdmacm-utils iproute2 dash busybox-static)

need=()
for p in "${pkgs[@]}"; do
	ls "$cache/debs/${p}_"*.deb >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "rxe-image: downloading ${need[*]}"
	# apt's sandbox user may not write here: the download then runs as the caller (a warning)
	(cd "$cache/debs" && apt-get download -q "${need[@]}" 2>&1 | grep -v -e unsandboxed -e '^Get:' || true)
	for p in "${need[@]}"; do
		ls "$cache/debs/${p}_"*.deb >/dev/null 2>&1 ||
			{ echo "rxe-image: apt-get download $p failed" >&2; exit 1; }
	done
fi

# Up to date: nothing newer than the image among its inputs (the .debs, this script, the
# guest's init and agent).
img=$cache/initrd.img
if [ -f "$img" ] && [ -f "$cache/vmlinuz" ] &&
	[ -z "$(find "$cache/debs" "$here/rxe-image.sh" "$here/guest-init.sh" \
		"$here/guest-agent.sh" -newer "$img" -type f | head -1)" ]; then
	exit 0
fi

stage=$cache/stage
root=$cache/root
rm -rf "$stage" "$root"
mkdir -p "$stage" "$root"/usr/{bin,sbin,lib,lib64} "$root"/{dev,proc,sys,tmp,run,etc}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
for p in "${pkgs[@]}"; do
	[ "$p" = "$kpkg" ] && continue
	dpkg-deb -x "$(ls "$cache/debs/${p}_"*.deb | head -1)" "$stage/$p"
done
# of the kernel package only the image and the module folders the guest loads from (all of it
# is 300 MB unpacked: minutes on a loaded host); kept beside the .debs for the next build.
# A dependency outside these folders makes modprobe below fail, naming it.
kdir=$cache/$kpkg
if [ ! -f "$kdir/.complete" ]; then
	rm -rf "$kdir"
	mkdir -p "$kdir"
	dpkg-deb --fsys-tarfile "$(ls "$cache/debs/${kpkg}_"*.deb | head -1)" |
		tar -x -C "$kdir" --wildcards './boot/vmlinuz-*' './lib/modules/*/modules.*' \
			'./lib/modules/*/kernel/drivers/virtio/*' './lib/modules/*/kernel/drivers/net/*.ko' \
			'./lib/modules/*/kernel/drivers/infiniband/core/*' \
			'./lib/modules/*/kernel/drivers/infiniband/sw/rxe/*' \
			'./lib/modules/*/kernel/net/core/*' './lib/modules/*/kernel/net/ipv4/*' \
			'./lib/modules/*/kernel/net/ipv6/*' './lib/modules/*/kernel/net/sched/*' \
			'./lib/modules/*/kernel/crypto/*' './lib/modules/*/kernel/fs/configfs/*' \
			'./lib/modules/*/kernel/lib/*'
	touch "$kdir/.complete"
fi

# merged /usr: a package's /bin, /sbin, /lib go to /usr's
merge() {
	local src=$1 d
	for d in bin sbin lib lib64; do
		[ -d "$src/$d" ] && cp -a "$src/$d/." "$root/usr/$d/"
	done
	[ -d "$src/usr" ] && cp -a "$src/usr/." "$root/usr/"
	[ -d "$src/etc" ] && cp -a "$src/etc/." "$root/etc/"
	return 0
}
for p in libibverbs1 librdmacm1 ibverbs-utils perftest rdmacm-utils iproute2 dash; do
	merge "$stage/$p"
done
rm -rf "$root/usr/share" "$root/usr/include"
# the rxe provider only (the others would load nothing and cost space)
ml=usr/lib/x86_64-linux-gnu
mkdir -p "$root/$ml/libibverbs" "$root/etc/libibverbs.d"
cp "$stage/ibverbs-providers/$ml/libibverbs/librxe-rdmav34.so" "$root/$ml/libibverbs/"
cp "$stage/ibverbs-providers/etc/libibverbs.d/rxe.driver" "$root/etc/libibverbs.d/"
# busybox for everything neither dash nor iproute2 provides (its own sh and ip are not used)
cp "$stage/busybox-static/bin/busybox" "$root/usr/bin/busybox"
ln -sf dash "$root/usr/bin/sh"
for a in $("$root/usr/bin/busybox" --list); do
	case $a in sh | ash | ip | tc | busybox) continue ;; esac
	[ -e "$root/usr/bin/$a" ] || [ -e "$root/usr/sbin/$a" ] || ln -s busybox "$root/usr/bin/$a"
done

# shared-library closure of every ELF file, from the unpacked libraries first, then the host's
# (the same Debian 12); glibc dlopen()s libgcc_s on pthread_exit (rping aborts without it)
closure=$(mktemp)
find "$root/usr" -type f -perm -u+x -o -type f -name '*.so*' | while read -r f; do
	head -c4 "$f" | grep -q ELF || continue
	LD_LIBRARY_PATH=$root/$ml ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
done | sort -u >"$closure"
echo /lib/x86_64-linux-gnu/libgcc_s.so.1 >>"$closure"
while read -r l; do
	case $l in "$root"/*) continue ;; esac
	rel=${l#/usr}
	[ -e "$root/usr$rel" ] || cp -L "$l" "$root/usr$rel"
done <"$closure"
rm -f "$closure"

# kernel modules in load order (modprobe resolves the order against the unpacked tree; rxe
# also needs crc32_generic, which it asks the crypto API for by name)
kver=$(ls "$kdir/lib/modules" | head -1)
[ -f "$kdir/lib/modules/$kver/modules.dep" ] || depmod -b "$kdir" "$kver"
mkdir -p "$root/lib/modules/$kver" "$root/etc/rxevm"
for m in virtio_pci virtio_net crc32_generic rdma_rxe rdma_ucm sch_netem; do
	modprobe -d "$kdir" -S "$kver" --show-depends "$m" ||
		{ echo "rxe-image: $m: dependencies not found in $kdir" >&2; exit 1; }
done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' | while read -r k; do
	cp "$k" "$root/lib/modules/$kver/"
	basename "$k"
done >"$root/etc/rxevm/modules"
echo "$kver" >"$root/etc/rxevm/kver"

install -m 755 "$here/guest-init.sh" "$root/init"
install -m 755 "$here/guest-agent.sh" "$root/etc/rxevm/agent"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 >"$img.tmp")
cp "$kdir/boot/vmlinuz-$kver" "$cache/vmlinuz"
echo "$kver" >"$cache/kver"
mv "$img.tmp" "$img"
rm -rf "$stage" "$root"
echo "rxe-image: $kpkg, initramfs $(($(stat -c %s "$img") / 1024)) KiB"
