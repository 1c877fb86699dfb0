#!/usr/bin/env bash
# Starts what `virsh -c qemu:///system` needs, on a machine where nothing
# started it: a container or CI runner without systemd and udev. Where
# systemd runs, the packages' own units do this and the script only checks.
# Idempotent. Install first: bash scripts/install-deps.sh --libvirt
set -euo pipefail

for p in libvirtd virtlogd virsh qemu-system-x86_64; do
	command -v "$p" >/dev/null || {
		echo "start-libvirtd: $p is not installed (bash scripts/install-deps.sh --libvirt)" >&2
		exit 1
	}
done

# QEMU runs as libvirt-qemu, in group kvm. udev gives /dev/kvm to that
# group (mode 0660); without udev the device stays root's alone and QEMU
# fails with "Could not access KVM kernel module: Permission denied".
if [ -c /dev/kvm ] && getent group kvm >/dev/null && [ "$(stat -c %G /dev/kvm)" != kvm ]; then
	echo "start-libvirtd: giving /dev/kvm to group kvm, as udev would"
	chgrp kvm /dev/kvm
	chmod g+rw /dev/kvm
fi

if [ -d /run/systemd/system ]; then
	systemctl start virtlogd.socket libvirtd.socket
else
	# libvirtd hands QEMU's log to virtlogd.
	pidof virtlogd >/dev/null || virtlogd -d
	pidof libvirtd >/dev/null || libvirtd -d
fi

for _ in $(seq 50); do
	virsh -q -c qemu:///system uri >/dev/null 2>&1 && exit 0
	sleep 0.2
done
echo "start-libvirtd: libvirtd does not answer on qemu:///system" >&2
exit 1
