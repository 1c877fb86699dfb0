#!/usr/bin/env bash
# Installs the Debian packages earlytrace needs to build and test.
# Idempotent: asks apt only for what is missing, so a prepared machine pays nothing.
set -euo pipefail

PACKAGES=(
	gcc g++ binutils ninja-build pkg-config
	linux-libc-dev           # linux/kvm.h
	libcapstone-dev          # decoding guest instructions
	libelf-dev               # reading kernel ELF images
	liblz4-dev libzstd-dev liblzma-dev zlib1g-dev  # bzImage payloads
	libgtest-dev             # unit and boot tests
	libvirt-dev              # --connect/--domain: reading libvirt domains
	libxml2-dev              # parsing and writing libvirt domain XML
	libbpf-dev               # the kernel's BTF: ftrace ring-buffer layouts
	# tests: trace.dat read by trace-cmd's own libraries and binary; kbuffer
	# as a second opinion on ring pages
	libtracecmd-dev libtraceevent-dev libtracefs-dev trace-cmd
)

# --viewers: also what bench/kernelshark-screenshot.sh runs (KernelShark
# under a virtual X server, and the tools that take its screenshot).
# --libvirt: also QEMU and the libvirt daemon, for the slow test that starts
# domain-xml's definition under virsh (tests/boot/test_virsh.cc; then
# scripts/start-libvirtd.sh). Not in the default set: about 100 MiB that
# only that test, behind EARLYTRACE_SLOW_TESTS=1, uses.
for arg in "$@"; do
	case "$arg" in
	--viewers) PACKAGES+=(kernelshark xvfb x11-apps netpbm xdotool) ;;
	--libvirt) PACKAGES+=(qemu-system-x86 libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients) ;;
	*) echo "install-deps: unknown option $arg (--viewers, --libvirt)" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
