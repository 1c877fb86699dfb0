#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prepares the throw-away test VM that scripts/with-kvm.sh boots where this
# machine has no usable /dev/kvm: Debian's standard kernel (it has 9p, the
# cloud kernel does not) and an initramfs holding busybox, the kernel's own
# KVM (kvm-amd: QEMU's TCG emulates AMD SVM), virtio and 9p modules, and
# scripts/kvm-vm/init. Everything comes from Debian's archive with
# apt-get download; nothing is installed on this machine but cpio.
# Idempotent: rebuilt only when this script or the init changed. Prints
# the cache folder (vmlinuz, initramfs.cpio.gz, version) on stdout.
#
#   scripts/kvm-vm/make-vm.sh [CACHE_DIR]
#
# CACHE_DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/earlytrace/kvm-vm.
set -euo pipefail

META=linux-image-amd64
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/earlytrace/kvm-vm}

# The modules the VM needs, each after what it depends on (resolved below
# from each module's own depends= list, so a new kernel's extra
# dependencies come along by themselves).
WANTED=(kvm-amd virtio_pci 9pnet_virtio 9p)

log() { echo "make-vm: $*" >&2; }
die() { log "$*"; exit 1; }
sudo_cmd() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ -s "$cache/initramfs.cpio.gz" ] && [ -s "$cache/vmlinuz" ] &&
	[ "$cache/initramfs.cpio.gz" -nt "$here/make-vm.sh" ] &&
	[ "$cache/initramfs.cpio.gz" -nt "$here/init" ]; then
	echo "$cache"
	exit 0
fi

command -v cpio >/dev/null || {
	log "installing cpio"
	sudo_cmd apt-get install -y -qq --no-install-recommends cpio >&2 ||
		{ sudo_cmd apt-get update -qq >&2 && sudo_cmd apt-get install -y -qq --no-install-recommends cpio >&2; } ||
		die "cannot install cpio"
}

# apt-get download, with one apt-get update if apt does not know the package.
download() {
	(cd "$tmp" && apt-get download -q "$1" >&2) ||
		{ sudo_cmd apt-get update -qq >&2 && (cd "$tmp" && apt-get download -q "$1" >&2); } ||
		die "apt-get download $1 failed"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pkg=$(apt-cache depends "$META" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
if [ -z "$pkg" ]; then
	sudo_cmd apt-get update -qq >&2 || die "apt-get update failed"
	pkg=$(apt-cache depends "$META" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
fi
[ -n "$pkg" ] || die "cannot resolve the package $META depends on"
log "downloading $pkg and busybox-static"
download "$pkg"
download busybox-static
dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/kernel"
dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/busybox"
version=$(ls "$tmp/kernel/boot" | sed -n 's/^vmlinuz-//p' | head -n1)
[ -n "$version" ] || die "$pkg holds no /boot/vmlinuz-*"
moddir="$tmp/kernel/lib/modules/$version"

# name -> path of its .ko (names use '_' and '-' interchangeably).
declare -A ko_path=()
while IFS= read -r f; do
	n=$(basename "$f" .ko)
	ko_path[${n//-/_}]=$f
done < <(find "$moddir/kernel" -name '*.ko')

# A module's dependencies, from the depends= string in its .modinfo.
ko_depends() {
	tr '\0' '\n' <"$1" | sed -n 's/^depends=//p' | head -n1 | tr ',' ' '
}

order=()
declare -A placed=()
place() {
	local n=${1//-/_} d
	[ -n "${placed[$n]:-}" ] && return 0
	[ -n "${ko_path[$n]:-}" ] || die "$pkg has no module $1"
	placed[$n]=1
	for d in $(ko_depends "${ko_path[$n]}"); do
		place "$d"
	done
	order+=("$n")
}
for m in "${WANTED[@]}"; do
	place "$m"
done

root="$tmp/root"
mkdir -p "$root"/{bin,dev,proc,sys,newroot,modules}
cp "$tmp/busybox/bin/busybox" "$root/bin/busybox"
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
for n in "${order[@]}"; do
	cp "${ko_path[$n]}" "$root/modules/$n.ko"
	echo "$n" >>"$root/modules/order"
done
cp "$here/init" "$root/init"
chmod 755 "$root/init"

mkdir -p "$cache"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$cache/initramfs.cpio.gz.tmp"
cp "$tmp/kernel/boot/vmlinuz-$version" "$cache/vmlinuz.tmp"
echo "$version" >"$cache/version"
mv "$cache/vmlinuz.tmp" "$cache/vmlinuz"
mv "$cache/initramfs.cpio.gz.tmp" "$cache/initramfs.cpio.gz"
log "prepared Debian $version with ${#order[@]} modules in $cache"
echo "$cache"
