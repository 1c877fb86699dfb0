#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetches the Debian cloud kernel that linux-image-cloud-amd64 points at and
# unpacks vmlinuz, System.map and config into a cache outside the repository;
# also decompresses the bzImage payload (LZ4) into an ELF vmlinux for tests
# that need the stripped stock kernel. Idempotent: a filled cache costs nothing.
# Prints the path of vmlinuz on stdout; progress goes to stderr.
# The package's System.map is a placeholder line; the real one is in the
# -dbg package (283 MB), which this script does not fetch. Tests compare
# against $CACHE_DIR/System.map.dbg when someone has put it there.
#
#   images/fetch-debian-kernel.sh [CACHE_DIR]
#
# CACHE_DIR defaults to $EARLYTRACE_DEBIAN_KERNEL_DIR, then to
# ${XDG_CACHE_HOME:-$HOME/.cache}/earlytrace/debian-kernel.
set -euo pipefail

META=linux-image-cloud-amd64
cache=${1:-${EARLYTRACE_DEBIAN_KERNEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/earlytrace/debian-kernel}}

log() { echo "fetch-debian-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

sudo_cmd() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The versioned package behind the meta package, e.g. linux-image-6.1.0-56-cloud-amd64.
resolve_package() {
	apt-cache depends "$META" 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

fetch_package() {
	local pkg deb tmp
	pkg=$(resolve_package || true)
	if [ -z "$pkg" ]; then
		log "apt does not know $META yet; running apt-get update"
		sudo_cmd apt-get update -qq >&2 || die "apt-get update failed"
		pkg=$(resolve_package || true)
	fi
	[ -n "$pkg" ] || die "cannot resolve the package $META depends on"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	log "downloading $pkg"
	(cd "$tmp" && apt-get download -q "$pkg" >&2) || die "apt-get download $pkg failed"
	deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n1)
	[ -n "$deb" ] || die "apt-get download left no .deb"
	dpkg-deb -x "$deb" "$tmp/root" || die "dpkg-deb -x failed"
	local v
	v=$(ls "$tmp/root/boot" | sed -n 's/^vmlinuz-//p' | head -n1)
	[ -n "$v" ] || die "$pkg contains no /boot/vmlinuz-*"
	cp "$tmp/root/boot/vmlinuz-$v" "$cache/vmlinuz.tmp"
	cp "$tmp/root/boot/System.map-$v" "$cache/System.map"
	cp "$tmp/root/boot/config-$v" "$cache/config"
	echo "$v" >"$cache/version"
	echo "$pkg" >"$cache/package"
	mv "$cache/vmlinuz.tmp" "$cache/vmlinuz"
}

# The bzImage payload of Debian kernels is LZ4 in the legacy frame format
# (magic 02 21 4c 18); lz4 -dc stops with an error at the trailing bytes
# after the frame, which is expected.
extract_vmlinux() {
	local off
	command -v lz4 >/dev/null || {
		log "installing lz4"
		sudo_cmd apt-get install -y -qq --no-install-recommends lz4 >&2 || die "cannot install lz4"
	}
	off=$(LC_ALL=C grep -obUaP '\x02\x21\x4c\x18' "$cache/vmlinuz" | head -n1 | cut -d: -f1)
	[ -n "$off" ] || die "no LZ4 legacy frame in $cache/vmlinuz"
	tail -c +"$((off + 1))" "$cache/vmlinuz" | lz4 -dc >"$cache/vmlinux.tmp" 2>/dev/null || true
	[ "$(head -c4 "$cache/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" = "7f454c46" ] ||
		die "decompressed payload is not an ELF file"
	mv "$cache/vmlinux.tmp" "$cache/vmlinux"
}

mkdir -p "$cache"
[ -s "$cache/vmlinuz" ] && [ -s "$cache/System.map" ] || fetch_package
[ -s "$cache/vmlinux" ] || extract_vmlinux
echo "$cache/vmlinuz"
