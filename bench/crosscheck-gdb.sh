#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-checks earlytrace's first N calls of the Debian cloud kernel against
# an independent recorder: QEMU in pure software emulation (TCG, no KVM)
# with a breakpoint on every selected site through its gdbstub, driven by
# gdb (bench/crosscheck_gdb.py). Compares the two sequences of (ip, parent
# ip) in order, prints how many of the first N match and the first
# mismatch, and exits 0 only when all N match. Not part of the test command;
# installs QEMU and gdb itself.
#
#   bench/crosscheck-gdb.sh [N [FILTER]]   (default: 2000 calls, FILTER '*')
#
# FILTER is an `earlytrace sites --filter` glob applied to both sides (the
# selection comes from the kernel's site list, never from either trace).
# QEMU 7.2 checks every gdbstub breakpoint, one by one, at every
# instruction on a page holding one, so the whole site list (37,121) makes
# the guest crawl; see docs/tracing.md. XC_TIMEOUT (seconds, default 1800)
# bounds the QEMU side; XC_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:-2000}
filter=${2:-*}
limit=${XC_TIMEOUT:-1800}
mem=256M
log() { echo "crosscheck: $*" >&2; }
die() { log "$*"; exit 1; }
[[ $n =~ ^[1-9][0-9]*$ ]] || die "N must be a positive number, not '$n'"

sudo_cmd() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
	log "installing $*"
	sudo_cmd apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
		{ sudo_cmd apt-get update -qq && sudo_cmd apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
}

bash scripts/install-deps.sh
command -v qemu-system-x86_64 >/dev/null || apt_install qemu-system-x86
command -v gdb >/dev/null || apt_install gdb
ninja build/earlytrace >/dev/null
k=$(bash images/fetch-debian-kernel.sh)
vmlinux=$(dirname "$k")/vmlinux
[ -f "$vmlinux" ] || die "no $vmlinux (images/fetch-debian-kernel.sh makes it)"

work=$(mktemp -d /tmp/earlytrace-crosscheck.XXXXXX)
qemu_pid=
cleanup() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null && wait "$qemu_pid" 2>/dev/null
	if [ "${XC_KEEP:-0}" = 1 ]; then log "work files kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The sites, from the kernel's own tables: "name vaddr paddr kind" lines.
# All of them name addresses in the report; the selected ones get breakpoints.
build/earlytrace sites --kernel "$vmlinux" 2>/dev/null |
	awk '/^#/ { done = 1 } !done && NF >= 4 { print $1, $2, $3 }' >"$work/sites.all"
build/earlytrace sites --kernel "$vmlinux" --filter "$filter" 2>/dev/null |
	awk '/^#/ { done = 1 } !done && NF >= 4 { print $1, $2, $3 }' >"$work/sites"
nsites=$(wc -l <"$work/sites")
[ "$nsites" -gt 0 ] || die "no site matches '$filter'"
awk '{ print $2, $3 }' "$work/sites" >"$work/sites.addr"
build/earlytrace sites --kernel "$vmlinux" 2>/dev/null |
	awk '/^#/ { done = 1 } !done && NF >= 4' >"$work/sites.kind"
log "$nsites sites selected ('$filter'), first $n calls"

# 1. earlytrace. Breakpoint capture ends at the handoff (ftrace_init), so
# the run ends there too when a narrow FILTER has fewer than N calls before
# it; the comparison then covers what earlytrace recorded.
# One command line for both. The parameters earlytrace's CPU model adds on
# this host, with XC_CLEARCPUID's features hidden too (default 605,
# X86_FEATURE_ARCH_CAPABILITIES: QEMU must hide that MSR on hosts that
# refuse it, and Linux's bug checks branch on it), so both guests take the
# same feature-dependent paths.
model=$(python3 bench/guest_facts.py cpu-params)
hide=${XC_CLEARCPUID-605}
if [ -n "$hide" ]; then
	case "$model" in
	*clearcpuid=*) model=$(echo "$model" | sed "s/clearcpuid=\([0-9,]*\)/clearcpuid=\1,$hide/") ;;
	*) model="$model clearcpuid=$hide" ;;
	esac
fi
append="console=ttyS0${model:+ $model}"
log "command line for both: $append"
t0=$(date +%s.%N)
timeout -k 5 "$limit" build/earlytrace trace --kernel "$k" --mem "$mem" --append "$append" \
	--filter "$filter" --max-events "$n" --until ftrace_init -o "$work/et.trace" >"$work/et.serial" 2>"$work/et.err" ||
	{ cat "$work/et.err" >&2; die "earlytrace trace failed"; }
t1=$(date +%s.%N)
build/earlytrace report "$work/et.trace" --format csv >"$work/et.csv"
# CSV columns by name (the header is checked, not assumed).
awk -F, -v n="$n" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
		   if (!col["ip"] || !col["parent_ip"] || !col["source"]) { print "bad header" > "/dev/stderr"; exit 1 }
		   next }
	 $col["ip"] != "" && k++ < n { p = $col["parent_ip"]; print $col["ip"], (p == "" ? "0x0" : p) }' \
	"$work/et.csv" >"$work/et.seq"
ne=$(wc -l <"$work/et.seq")
[ "$ne" -ge "$n" ] || { log "earlytrace recorded only $ne calls before ftrace_init: comparing $ne"; n=$ne; }
[ "$n" -gt 0 ] || die "earlytrace recorded no call"
log "earlytrace: $ne calls in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

# 2. QEMU + gdbstub, on a free port. XC_METHOD=sites (default): TCG, a
# breakpoint on every selected site. XC_METHOD=fentry: QEMU+KVM with the
# host CPU (the CPU model earlytrace gives the guest here, so both take the
# same feature-dependent paths) and one hardware breakpoint on __fentry__,
# which every site calls until ftrace_init: fast enough for all sites.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [ "${XC_METHOD:-sites}" = fentry ]; then
	# __fentry__ is the target of any call site's rel32.
	XC_FENTRY=$(python3 bench/guest_facts.py fentry "$vmlinux")
	export XC_METHOD XC_FENTRY
	log "QEMU: -accel kvm -cpu host,-arch-capabilities, append '$append', gdbstub on :$port, hbreak __fentry__ (0x$XC_FENTRY)"
	timeout -k 5 "$limit" qemu-system-x86_64 -accel kvm -machine q35 -cpu host,-arch-capabilities -m "$mem" \
		-kernel "$vmlinux" -append "$append" -nographic -no-reboot -nodefaults \
		-serial "file:$work/qemu.serial" -gdb "tcp:127.0.0.1:$port" -S 2>"$work/qemu.err" &
else
	log "QEMU: -accel tcg -cpu max, append '$append', gdbstub on :$port"
	timeout -k 5 "$limit" qemu-system-x86_64 -accel tcg -machine "${XC_MACHINE:-microvm,acpi=off,x-option-roms=off}" -cpu max -m "$mem" \
		-kernel "$vmlinux" -append "$append" -nographic -no-reboot -nodefaults \
		-serial "file:$work/qemu.serial" -gdb "tcp:127.0.0.1:$port" -S 2>"$work/qemu.err" &
fi
qemu_pid=$!
for _ in $(seq 50); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
	kill -0 "$qemu_pid" 2>/dev/null || { cat "$work/qemu.err" >&2; die "QEMU did not start"; }
	sleep 0.2
done
t0=$(date +%s.%N)
XC_SITES="$work/sites.addr" XC_N="$n" XC_OUT="$work/gdb.seq" XC_PORT="$port" \
	timeout -k 5 "$limit" gdb -batch -nx -x bench/crosscheck_gdb.py >"$work/gdb.out" 2>&1 ||
	log "gdb ended with status $? (see below)"
t1=$(date +%s.%N)
grep '^crosscheck_gdb:' "$work/gdb.out" >&2 || tail -5 "$work/gdb.out" >&2
log "QEMU+gdb: $(wc -l <"$work/gdb.seq" 2>/dev/null || echo 0) calls in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

# 3. Compare, symbolized with the site names.
python3 - "$n" "$work/sites.all" "$work/et.seq" "$work/gdb.seq" <<'EOF'
import sys

n, sites_path, et_path, gdb_path = int(sys.argv[1]), *sys.argv[2:]
names = {}
for line in open(sites_path):
    name, v, _ = line.split()
    names[int(v, 16)] = name


def read(path):
    try:
        return [tuple(int(x, 16) for x in l.split()) for l in open(path) if l.strip()]
    except FileNotFoundError:
        return []


def sym(a):
    if a in names:
        return "%s (0x%x)" % (names[a], a)
    best = max((v for v in names if v <= a and a - v < 0x10000), default=None)
    return "0x%x%s" % (a, " (%s+0x%x?)" % (names[best], a - best) if best is not None else "")


et, gd = read(et_path), read(gdb_path)
same = 0
while same < min(len(et), len(gd), n) and et[same] == gd[same]:
    same += 1
print("crosscheck: earlytrace %d calls, QEMU+gdb %d calls; the first %d of %d match exactly"
      % (len(et), len(gd), same, n))
if same == n:
    sys.exit(0)
if same < len(et) and same < len(gd):
    for side, (ip, parent) in (("earlytrace", et[same]), ("QEMU+gdb  ", gd[same])):
        print("crosscheck: call %d, %s: %s from %s" % (same + 1, side, sym(ip), sym(parent)))
    lo = max(0, same - 3)
    print("crosscheck: the calls before it: " +
          ", ".join(names.get(ip, hex(ip)) for ip, _ in et[lo:same]))
else:
    print("crosscheck: %s stopped after %d calls" % ("earlytrace" if len(et) < len(gd) else "QEMU+gdb", same))
sys.exit(1)
EOF
