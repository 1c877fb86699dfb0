#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds a small initramfs (newc cpio, uncompressed) from Debian's
# busybox-static: /init mounts the usual file systems, prints a marker line,
# then does what `et_init=` on the kernel command line asks:
#   reboot (default)  reboot -f: with reboot=k the VMM sees the i8042 reset
#   poweroff          poweroff -f
#   shell             an interactive shell on the console
#   panic             crash the kernel through sysrq (for panic tests)
#   ftrace            switch the kernel's function tracer on over every site
#                     (after an earlytrace handoff: every site must be as
#                     built), run it a moment, switch it off, print
#                     "EARLYTRACE-FTRACE: ok, N functions" or
#                     "EARLYTRACE-FTRACE: failed: ..." with the dmesg lines
#                     that say why, then reboot
#   tracefs           print the first 200 lines of the kernel's own
#                     /sys/kernel/tracing/trace between the lines
#                     EARLYTRACE-TRACEFS-BEGIN and EARLYTRACE-TRACEFS-END
#                     (trace --follow: earlytrace's early calls first), then
#                     power off
# Idempotent; prints the path of the cpio on stdout, progress on stderr.
#
#   images/make-initramfs.sh [OUTPUT]
#
# OUTPUT defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/earlytrace/initramfs.cpio.
# Root is needed once, for apt-get and for the /dev/console node.
set -euo pipefail

out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/earlytrace/initramfs.cpio}
here=$(cd "$(dirname "$0")" && pwd)
marker="EARLYTRACE-INIT-MARKER"

log() { echo "make-initramfs: $*" >&2; }
die() { log "$*"; exit 1; }
sudo_cmd() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Rebuild only when this script changed since the last build.
if [ -s "$out" ] && [ "$out" -nt "$here/make-initramfs.sh" ]; then
	echo "$out"
	exit 0
fi

command -v cpio >/dev/null || {
	log "installing cpio"
	sudo_cmd apt-get install -y -qq --no-install-recommends cpio >&2 ||
		{ sudo_cmd apt-get update -qq >&2 && sudo_cmd apt-get install -y -qq --no-install-recommends cpio >&2; } ||
		die "cannot install cpio"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log "downloading busybox-static"
(cd "$tmp" && apt-get download -q busybox-static >&2) ||
	{ sudo_cmd apt-get update -qq >&2 && (cd "$tmp" && apt-get download -q busybox-static >&2); } ||
	die "apt-get download busybox-static failed"
dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/pkg"

root="$tmp/root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,root}
cp "$tmp/pkg/bin/busybox" "$root/bin/busybox"
# The kernel opens /dev/console for init before any file system is mounted.
mknod -m 600 "$root/dev/console" c 5 1
mknod -m 666 "$root/dev/null" c 1 3

cat >"$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
echo "$marker: userspace reached, uptime \$(cut -d' ' -f1 /proc/uptime) s"
case "\${et_init:-reboot}" in
shell)
	setsid cttyhack sh
	reboot -f ;;
poweroff)
	poweroff -f ;;
panic)
	echo 1 > /proc/sys/kernel/sysrq
	echo c > /proc/sysrq-trigger ;;
ftrace)
	t=/sys/kernel/tracing
	mount -t tracefs tracefs \$t 2>/dev/null
	if [ ! -w \$t/current_tracer ]; then
		echo "EARLYTRACE-FTRACE: failed: no \$t/current_tracer"
	elif ! echo function > \$t/current_tracer; then
		echo "EARLYTRACE-FTRACE: failed: the function tracer did not start"
	else
		sleep 1
		echo nop > \$t/current_tracer
		bad=\$(dmesg | grep -iE 'ftrace (bug|failed|faulted)|ftrace record')
		if [ -n "\$bad" ]; then
			echo "EARLYTRACE-FTRACE: failed: \$bad"
		else
			echo "EARLYTRACE-FTRACE: ok, \$(wc -l < \$t/available_filter_functions) functions"
		fi
	fi
	reboot -f ;;
tracefs)
	t=/sys/kernel/tracing
	mount -t tracefs tracefs \$t 2>/dev/null
	echo "EARLYTRACE-TRACEFS-BEGIN"
	head -n 200 \$t/trace
	echo "EARLYTRACE-TRACEFS-END"
	poweroff -f ;;
*)
	reboot -f ;;
esac
INIT
chmod 755 "$root/init"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
log "wrote $out ($(stat -c %s "$out") bytes)"
echo "$out"
