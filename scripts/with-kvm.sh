#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a command where KVM works. Where this machine's /dev/kvm is usable
# the command runs here, as it is. Where it is not, the command runs as
# root inside a throw-away VM that has one: Debian's standard kernel with
# its own kvm-amd module under QEMU's TCG (which emulates AMD SVM with
# nested paging), the host's root shared read-write over 9p so every path
# is the host's, the command run in a chroot of it. Its stdout, stderr and
# exit status come back unchanged; what it writes anywhere (the checkout,
# /tmp, the working directory) is on the host afterwards. The VM's kernel
# and initramfs are prepared once and cached (scripts/kvm-vm/make-vm.sh).
# The VM ends with the command, on Ctrl-C, and when this script is killed.
#
#   scripts/with-kvm.sh COMMAND [ARGS...]
#   scripts/with-kvm.sh --which      one line: the KVM a command would get
#
# Environment:
#   EARLYTRACE_WITH_KVM=auto|native|vm   auto (default): the VM only where
#                                       /dev/kvm is missing or unusable; vm:
#                                       always the VM (to test it where KVM
#                                       exists); native: never
#   EARLYTRACE_VM_MEM=SIZE              the VM's memory (QEMU's -m; 4G)
#   EARLYTRACE_VM_BOOT_TIMEOUT=SECONDS  how long the VM may take to start
#                                       the command (300)
#
# Exit status: the command's; 128+N when a signal N ended the VM; 125 when
# the VM could not start, froze, or ended before the command did (one line
# says why; a frozen VM's line starts "with-kvm: the test VM froze").
# While it runs, QEMU's monitor listens on /tmp/with-kvm.*/monitor (for
# `info registers` and the like when something inside hangs).
#
# The freeze: QEMU 7.2's TCG now and then stops delivering interrupts to
# the VM's CPU (the local APIC's IRR holds the timer's vector and
# RFLAGS.IF is set, yet it is never taken; seen with and without host
# load, at resets and panics of the command's own guests). The CPU then
# stays halted, or with idle=poll (below) stays at one rip. Nothing
# inside can notice, since its clock stops too. A
# watchdog asks QEMU's monitor every 20 s and ends a VM found so three
# times in a row.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)

die() {
	echo "with-kvm: $*" >&2
	exit 125
}

# The KVM this machine offers, or nothing. The VMM checks the rest (API
# version, capabilities) and says so itself.
native_kvm_usable() {
	local dev=${EARLYTRACE_KVM_DEVICE:-/dev/kvm}
	[ -c "$dev" ] && { : <>"$dev"; } 2>/dev/null
}

native_kvm_kind() {
	local m
	for m in kvm_intel kvm_amd kvm_pvm; do
		[ -d "/sys/module/$m" ] && { echo "$m"; return; }
	done
	echo "unknown module"
}

use_vm() {
	case "${EARLYTRACE_WITH_KVM:-auto}" in
	vm) return 0 ;;
	native) return 1 ;;
	auto) ! native_kvm_usable ;;
	*) die "EARLYTRACE_WITH_KVM=${EARLYTRACE_WITH_KVM} (auto, native or vm)" ;;
	esac
}

vm_cache() {
	bash "$here/kvm-vm/make-vm.sh" || die "cannot prepare the test VM (scripts/kvm-vm/make-vm.sh)"
}

ensure_qemu() {
	command -v qemu-system-x86_64 >/dev/null && return 0
	echo "with-kvm: installing qemu-system-x86" >&2
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	{ $sudo apt-get install -y -qq --no-install-recommends qemu-system-x86 ||
		{ $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends qemu-system-x86; }; } >&2 ||
		die "cannot install qemu-system-x86"
}

describe() {
	if ! use_vm; then
		echo "KVM: this machine's ${EARLYTRACE_KVM_DEVICE:-/dev/kvm} ($(native_kvm_kind))"
		return
	fi
	local cache
	cache=$(vm_cache)
	ensure_qemu
	echo "KVM: nested, kvm-amd of Debian's $(cat "$cache/version") kernel in a QEMU" \
		"$(qemu-system-x86_64 --version | sed -n 's/.*version \([^ ]*\).*/\1/p') TCG VM" \
		"($([ "${EARLYTRACE_WITH_KVM:-auto}" = vm ] && echo "EARLYTRACE_WITH_KVM=vm" ||
			echo "no usable ${EARLYTRACE_KVM_DEVICE:-/dev/kvm} here"))"
}

[ $# -ge 1 ] || { sed -n 's/^#   //p' "$0" >&2; exit 2; }
if [ "$1" = --which ]; then
	describe
	exit
fi
use_vm || exec "$@"

cache=$(vm_cache) || exit 125
ensure_qemu

# The VM's memory: 4G, or half of this machine's where that is less.
mem=${EARLYTRACE_VM_MEM:-}
if [ -z "$mem" ]; then
	half=$(awk '/^MemTotal:/ { print int($2 / 2048) }' /proc/meminfo)
	mem=$((half < 4096 ? half : 4096))M
fi

run=$(mktemp -d /tmp/with-kvm.XXXXXX) || die "cannot make a folder in /tmp"
qemu_pid= out_pid= err_pid= watch_pid= signal=0
cleanup() {
	[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$run"
}
trap cleanup EXIT
for s in INT TERM HUP; do
	# shellcheck disable=SC2064
	trap "signal=$(kill -l "$s"); [ -n \"\$qemu_pid\" ] && kill \$qemu_pid 2>/dev/null" "$s"
done

# The command as a script: this environment (less bash's read-only
# variables), this working directory, the arguments quoted as given.
{
	export -p | grep -vE '^declare -[a-zA-Z-]* (BASHOPTS|SHELLOPTS|BASH_VERSINFO|EUID|PPID|UID)(=|$)'
	printf 'cd %q || exit 125\n' "$PWD"
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$run/cmd.sh"

# stdout and stderr leave the VM on serial ports written to these FIFOs;
# the watchdog talks to a second monitor through the watch.* pair.
mkfifo "$run/stdout" "$run/stderr" "$run/watch.in" "$run/watch.out" || die "cannot make FIFOs in $run"
cat "$run/stdout" &
out_pid=$!
cat "$run/stderr" >&2 &
err_pid=$!

stdin_serial=null stdin_mode=null
if [ -t 0 ]; then
	# The terminal becomes the VM's ttyS0; Ctrl-C still reaches QEMU.
	stdin_serial=stdio stdin_mode=tty
fi
# The command's stdout and stderr are terminals inside only where they are
# here (scripts/kvm-vm/init): isatty() answers as it would natively.
stdout_mode=pipe stderr_mode=pipe
[ -t 1 ] && stdout_mode=tty
[ -t 2 ] && stderr_mode=tty

# --pdeathsig: a killed script takes the VM with it. idle=poll: the VM's
# CPU never halts; the freeze comes anyway (docs/building.md), and the
# watchdog below looks for it halted or not.
setpriv --pdeathsig KILL qemu-system-x86_64 \
	-accel tcg -cpu max -smp 1 -m "$mem" \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$cache/vmlinuz" -initrd "$cache/initramfs.cpio.gz" \
	-append "console=ttyS3 quiet panic=-1 idle=poll et_cmd=$run/cmd.sh et_stdin=$stdin_mode et_stdout=$stdout_mode et_stderr=$stderr_mode" \
	-serial "$stdin_serial" -serial "file:$run/stdout" -serial "file:$run/stderr" \
	-serial "file:$run/console.log" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,multidevs=remap \
	-monitor "unix:$run/monitor,server=on,wait=off" \
	-chardev "pipe,id=watch,path=$run/watch" -mon chardev=watch,mode=readline \
	>"$run/qemu.log" 2>&1 &
qemu_pid=$!

# True when the last answers in watch.log show the frozen state: RFLAGS.IF
# set and a vector waiting in the local APIC's IRR, the CPU halted or at
# the same rip as at the last look (an interrupt that can be taken is
# taken at the next instruction: never pending at three looks 20 s apart).
last_rip=
frozen_now() {
	local regs irr rflags rip
	rip=$(grep -a -o 'RIP=[0-9a-f]*' "$run/watch.log" | tail -n1)
	regs=$(grep -a -o 'RFL=[0-9a-f]*.*HLT=[01]' "$run/watch.log" | tail -n1)
	irr=$(grep -a '^IRR' "$run/watch.log" | tail -n1)
	local same=$([ -n "$rip" ] && [ "$rip" = "$last_rip" ] && echo y)
	last_rip=$rip
	[[ "$regs" == *HLT=1 ]] || [ -n "$same" ] || return 1
	rflags=$((16#$(echo "$regs" | sed 's/^RFL=\([0-9a-f]*\).*/\1/')))
	[ $((rflags & 0x200)) -ne 0 ] && [[ "$irr" =~ ^IRR[[:space:]]+[0-9] ]]
}
watch_for_freeze() {
	local strikes=0
	exec 7>"$run/watch.in" || return
	# Appending: truncating the log between questions keeps it short.
	cat "$run/watch.out" >>"$run/watch.log" 2>/dev/null &
	while kill -0 "$qemu_pid" 2>/dev/null; do
		sleep 20 </dev/null >/dev/null 2>&1
		: >"$run/watch.log"
		printf 'info registers\ninfo lapic\n' >&7 || return
		sleep 2 </dev/null >/dev/null 2>&1
		if frozen_now; then strikes=$((strikes + 1)); else strikes=0; fi
		if [ "$strikes" -ge 3 ]; then
			echo "with-kvm: the test VM froze: its CPU has taken no interrupt for 60 s, interrupt $(grep -a '^IRR' "$run/watch.log" | tail -n1 | awk '{print $2}') pending, which QEMU's TCG never delivered (a QEMU bug; see docs/building.md); ending it" >&2
			: >"$run/frozen"
			kill "$qemu_pid" 2>/dev/null
			return
		fi
	done
}
watch_for_freeze </dev/null >/dev/null &
watch_pid=$!

# A VM that never gets to the command is cut, and says why.
boot_limit=${EARLYTRACE_VM_BOOT_TIMEOUT:-300}
started=$SECONDS
while kill -0 "$qemu_pid" 2>/dev/null && ! grep -q '^with-kvm-vm: ready' "$run/console.log" 2>/dev/null; do
	if [ $((SECONDS - started)) -ge "$boot_limit" ]; then
		kill "$qemu_pid" 2>/dev/null
		wait "$qemu_pid" 2>/dev/null
		die "the test VM did not start the command within ${boot_limit}s: $(tail -n1 "$run/console.log" 2>/dev/null)"
	fi
	[ "$signal" -eq 0 ] || break
	sleep 0.2
done
wait "$qemu_pid" 2>/dev/null
while kill -0 "$qemu_pid" 2>/dev/null; do
	wait "$qemu_pid" 2>/dev/null # woken by a trapped signal: wait on
done
qemu_pid=
kill "$watch_pid" 2>/dev/null
watch_pid=
wait "$out_pid" "$err_pid" 2>/dev/null

if [ "$signal" -ne 0 ]; then
	exit $((128 + signal))
fi
if [ -s "$run/status" ]; then
	exit "$(cat "$run/status")"
fi
[ -e "$run/frozen" ] && exit 125
why=$(grep -h 'FAILED' "$run/console.log" 2>/dev/null | tail -n1)
[ -n "$why" ] || why=$(tail -n1 "$run/qemu.log" 2>/dev/null)
[ -n "$why" ] || why=$(tail -n1 "$run/console.log" 2>/dev/null)
die "the test VM ended before the command did: ${why:-no output}"
