#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# earlytrace's benchmark command: measures earlytrace against what a user
# would otherwise use, side by side in one run (medians, ratios, VM exits
# and guest instruction counts beside the times), and writes the tables into
# docs/performance.md between its results markers. Not part of the test
# command; installs QEMU, gdb and python3 itself.
#
#   bench/performance.sh [--quick] [--runs N] [--only start,events,smp,graph,linux,follow,qemu,memory,gdb,host]
#
# --only reruns some sections and keeps the others' tables (each says when
# and where it was measured). gdb and the report rates need the Debian
# trace of the linux section: run them with it.
#
# Where this machine has no usable /dev/kvm it runs inside the nested test
# VM of scripts/with-kvm.sh (KVM under QEMU's TCG: its times are emulated
# time, only its ratios and counts mean anything); it says which KVM it
# measured, and so do the tables.
#
# A full run takes about 30 minutes on a nested kvm-pvm host (the Debian
# kernel's early phase, three modes, three runs each); --quick about 8.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "bench: $*" >&2; }

sudo_cmd() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
need() { # command package
	command -v "$1" >/dev/null && return
	log "installing $2"
	sudo_cmd apt-get install -y -qq --no-install-recommends "$2" >/dev/null ||
		{ sudo_cmd apt-get update -qq && sudo_cmd apt-get install -y -qq --no-install-recommends "$2" >/dev/null; }
}

bash scripts/install-deps.sh
need qemu-system-x86_64 qemu-system-x86
need gdb gdb
need python3 python3
ninja build/earlytrace build/libearlytrace.a images >/dev/null

# The one-instruction guest and the host-cost probe.
mkdir -p build/bench
gcc -m32 -c bench/tiny/tiny.S -o build/bench/tiny.o
ld -m elf_i386 -T bench/tiny/tiny.ld -o build/bench/tiny.elf build/bench/tiny.o
gcc -std=c17 -D_GNU_SOURCE -O2 -I. -Iguestlib/include -Wall -Wextra -Werror \
	bench/host_costs.c build/libearlytrace.a \
	-lcapstone -lelf -llz4 -lzstd -llzma -lz -lpthread -lm -o build/bench/host_costs
gcc -std=c17 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror bench/start_costs.c -o build/bench/start_costs

kernel=$(bash images/fetch-debian-kernel.sh 2>/dev/null) || kernel=
[ -n "$kernel" ] || log "no Debian kernel: the linux, follow and gdb sections are skipped"
EARLYTRACE_BENCH_KVM=$(bash scripts/with-kvm.sh --which) || exit 1
export EARLYTRACE_BENCH_KVM
log "measuring on ${EARLYTRACE_BENCH_KVM#KVM: }"
exec bash scripts/with-kvm.sh python3 bench/performance.py --tiny build/bench/tiny.elf --kernel "$kernel" "$@"
