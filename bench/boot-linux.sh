#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Boots the Debian cloud kernel to the initramfs marker under earlytrace and
# under QEMU+KVM, side by side in one run, and prints when each reached
# start_kernel, ftrace_init and /init (host wall clock from VMM start, each
# line of the serial log stamped as it arrives), plus VMM memory beyond
# guest RAM. Not part of the test command; installs QEMU itself.
#
#   bench/boot-linux.sh [RUNS [LAST]]   (default: 1 run of each, LAST=init)
#
# LAST is the milestone after which each VMM is stopped: init, or
# ftrace_init where a guest cannot get further (on nested kvm-pvm hosts
# QEMU stops at the first instruction the emulator lacks).
#
# QEMU runs with -cpu host minus arch-capabilities (some nested KVMs refuse
# that MSR, and QEMU then aborts). Both VMMs get the same kernel ELF (earlytrace unpacks the bzImage itself;
# QEMU is given the vmlinux so it boots it through PVH too and never runs
# the decompressor), the same initramfs, RAM, and kernel command line
# (including the Linux parameters earlytrace's CPU model adds on this host),
# so both guests see the same CPU features.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-1}
last=${2:-init}
mem=256M
log() { echo "bench: $*" >&2; }

bash scripts/install-deps.sh
command -v qemu-system-x86_64 >/dev/null || {
	log "installing qemu-system-x86"
	apt-get install -y -qq --no-install-recommends qemu-system-x86 >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends qemu-system-x86 >/dev/null; }
}
ninja build/earlytrace >/dev/null
vmlinuz=$(bash images/fetch-debian-kernel.sh)
vmlinux=$(dirname "$vmlinuz")/vmlinux
initramfs=$(bash images/make-initramfs.sh)

# The parameters earlytrace adds for this host's CPU model, so QEMU's guest
# gets the same ones.
extra=$(python3 bench/guest_facts.py cpu-params)
append="console=ttyS0 earlyprintk=ttyS0 panic=-1 reboot=k $extra"

# Resident memory of process $1 outside its guest-RAM mapping (the one
# mapping exactly the guest's RAM size), in KiB: what the VMM itself costs.
vmm_overhead_kb() {
	awk -v ram_kb=$(($(numfmt --from=iec "$mem") / 1024)) '
		/^[0-9a-f]+-[0-9a-f]+ / { in_ram = 0 }
		/^Size:/ { in_ram = ($2 == ram_kb) }
		/^Rss:/ { total += $2; if (in_ram) ram += $2 }
		END { print total - ram }' "/proc/$1/smaps" 2>/dev/null || echo -
}

# Reads a serial log on stdin; prints "name seconds" for each milestone as
# its line arrives, timed from the moment the VMM was started ($1); at the
# /init marker also the VMM's own memory (process $2).
stamp() {
	local start=$1 pid=$2 line now
	while IFS= read -r line; do
		now=$EPOCHREALTIME
		case "$line" in
		*"Linux version"*) echo "start_kernel $(echo "$now - $start" | bc)" ;;
		*"ftrace: allocating"*)
			echo "ftrace_init $(echo "$now - $start" | bc)"
			[ "$last" != ftrace_init ] || { echo "overhead_kb $(vmm_overhead_kb "$pid")"; kill "$pid"; } ;;
		*EARLYTRACE-INIT-MARKER*)
			echo "init $(echo "$now - $start" | bc)"
			echo "overhead_kb $(vmm_overhead_kb "$pid")"
			kill "$pid" 2>/dev/null || true ;;
		esac
	done
}

run_one() {
	local out=$1 fifo
	shift
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	local start=$EPOCHREALTIME
	"$@" >"$fifo" 2>"$out.err" &
	local pid=$!
	stamp "$start" "$pid" <"$fifo" >"$out"
	wait "$pid" || true
	rm -f "$fifo"
}

command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$runs"); do
	log "run $i/$runs: earlytrace"
	run_one "$tmp/et.$i" build/earlytrace run --kernel "$vmlinuz" \
		--initrd "$initramfs" --mem "$mem" --append "$append" --timeout 1800
	log "run $i/$runs: qemu"
	run_one "$tmp/qemu.$i" timeout 1800 qemu-system-x86_64 -machine q35,accel=kvm \
		-cpu host,-arch-capabilities -smp 1 -m "$mem" -kernel "$vmlinux" -initrd "$initramfs" \
		-append "$append" -nographic -no-reboot -nodefaults -serial stdio -display none
done

# Median of one milestone over the runs of one VMM.
median() {
	local files=("$tmp"/$1.*[0-9]) key=$2
	{ grep -h "^$key " "${files[@]}" 2>/dev/null || true; } | awk '{ print $2 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf '%-34s %12s %12s %8s\n' "milestone (median of $runs)" earlytrace "QEMU+KVM" ratio
for m in start_kernel ftrace_init init; do
	a=$(median et "$m")
	b=$(median qemu "$m")
	r=$( [ "$a" != - ] && [ "$b" != - ] && echo "scale=2; $a / $b" | bc || echo -)
	printf '%-34s %11ss %11ss %8s\n' "$m" "$a" "$b" "$r"
done
a=$(median et overhead_kb)
b=$(median qemu overhead_kb)
r=$( [ "$a" != - ] && [ "$b" != - ] && echo "scale=2; $a / $b" | bc || echo -)
printf '%-34s %10sKiB %10sKiB %8s\n' "VMM memory beyond guest RAM" "$a" "$b" "$r"
