#!/usr/bin/env bash
# Prints the include graph of the host program's folders (vmm/, arch/,
# trampolines/): one line per edge, "from -> to  N" with N the number of
# #include lines behind it, then every set of folders that include each
# other in a circle, every ioctl() call outside vmm/kvm/ (the one folder
# that talks to KVM), and the x86 in vmm/: an include of an arch/x86/
# header, an include of vmm/kvm/arch_ioctl.h outside vmm/kvm/ and
# arch/*/kvm/, and an x86 name in code (comments and strings aside; the
# list below). Exits 1 when there is any, so a test holds the layering
# (docs/architecture.md, "Layers").
#
#   scripts/folder-graph.sh [--root DIR]        the edges, then the checks
#   scripts/folder-graph.sh [--root DIR] --dot  the edges as a Graphviz digraph
#
# --root: the tree to read (the checkout this script is in by default).
set -euo pipefail
cd "$(dirname "$0")/.."

format=text
while [ $# -gt 0 ]; do
	case "$1" in
	--dot) format=dot ;;
	--root) cd "${2:?--root needs a folder}"; shift ;;
	*) echo "folder-graph: unknown option $1 (--root DIR, --dot)" >&2; exit 2 ;;
	esac
	shift
done

# "from-folder to-folder" for each quoted include of a header in the tree.
edges() {
	find vmm arch trampolines -name '*.[ch]' -print0 2>/dev/null | sort -z |
		xargs -0 grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
		sed -n 's|^\(.*\)/[^/]*:[[:space:]]*#[[:space:]]*include[[:space:]]*"\(.*\)/[^/]*".*|\1 \2|p'
}

status=0
edges | awk -v format="$format" '
	# Only folders of the tree count: an include of "earlytrace/..." names
	# the guest library'"'"'s shared headers, not a host folder.
	$2 ~ /^(vmm|arch|trampolines)(\/|$)/ && $1 != $2 {
		n[$1 " " $2]++
		node[$1]; node[$2]
	}
	END {
		if (format == "dot") print "digraph folders {"
		for (e in n) {
			split(e, p, " ")
			line[++lines] = format == "dot" ? \
				sprintf("\t\"%s\" -> \"%s\" [label=%d];", p[1], p[2], n[e]) : \
				sprintf("%s -> %s  %d", p[1], p[2], n[e])
			reach[p[1], p[2]] = 1
		}
		# Sorted output, so two runs compare line for line.
		for (i = 2; i <= lines; i++)
			for (j = i; j > 1 && line[j - 1] > line[j]; j--) {
				t = line[j]; line[j] = line[j - 1]; line[j - 1] = t
			}
		for (i = 1; i <= lines; i++) print line[i]
		if (format == "dot") { print "}"; exit 0 }

		# Transitive closure (a few dozen folders): a circle is a pair of
		# folders each reaching the other.
		for (k in node) for (i in node) if ((i, k) in reach)
			for (j in node) if ((k, j) in reach) reach[i, j] = 1
		circles = 0
		for (i in node) {
			if (i in done || !((i, i) in reach)) continue
			members = i
			for (j in node)
				if (j != i && (i, j) in reach && (j, i) in reach) {
					members = members " " j; done[j]
				}
			done[i]
			print "circle: " members
			circles++
		}
		if (circles == 0) print "no circles"
		exit circles > 0
	}' || status=1
[ "$format" = dot ] && exit 0

# KVM is reached from vmm/kvm/ only: everyone else uses its functions.
outside=$(find vmm arch trampolines -name '*.[ch]' ! -path 'vmm/kvm/*' -print0 2>/dev/null | sort -z |
	xargs -0 grep -n '\bioctl *(' || true)
if [ -n "$outside" ]; then
	echo "$outside" | sed 's/^/ioctl outside vmm\/kvm: /'
	status=1
else
	echo "no ioctl outside vmm/kvm"
fi

# x86 lives in arch/ (and in the trampolines, guest code written for it):
# vmm/ reaches it through arch/arch.h's generic names and the hooks that
# vmm/kvm/arch.h, vmm/hw/arch_devices.h, vmm/mem/guest_mem.h and
# vmm/loader/kernel_image.h declare, never through an arch/x86/ header.
outside=$(find vmm -name '*.[ch]' -print0 2>/dev/null | sort -z |
	xargs -0 grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"arch/x86/' || true)
if [ -n "$outside" ]; then
	echo "$outside" | sed 's/^/x86 header outside arch\/: /'
	status=1
else
	echo "no x86 header outside arch/"
fi

# An architecture's own KVM ioctls go through vmm/kvm/arch_ioctl.h, which
# only the core and the architectures' KVM halves include.
outside=$(find vmm arch trampolines -name '*.[ch]' ! -path 'vmm/kvm/*' ! -path 'arch/*/kvm/*' \
	-print0 2>/dev/null | sort -z |
	xargs -0 grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"vmm/kvm/arch_ioctl.h"' || true)
if [ -n "$outside" ]; then
	echo "$outside" | sed 's/^/arch_ioctl.h outside vmm\/kvm and arch\/*\/kvm: /'
	status=1
else
	echo "arch_ioctl.h only in vmm/kvm and arch/*/kvm"
fi

# x86 names in vmm/'s code, comments and string literals blanked first (a
# message may say "x86"; the code may not name it): the project's x86
# names (X86_*, x86_*), the guest-physical layout (LAYOUT_*) and the PC's
# ports (PC_*) of arch/x86/, MSR indices, the ELF machines, KVM's x86-only
# API (KVM_*X86*), x86 register fields of struct kvm_regs, kvm_sregs and
# the debug state, and int3 spelt as its opcode.
x86_names='\b([Xx]86_[A-Za-z0-9_]+|LAYOUT_[A-Z0-9_]+|PC_[A-Z0-9_]+|MSR_(IA32|KVM)_[A-Z0-9_]+'
x86_names+='|EM_386|EM_X86_64|KVM_[A-Z0-9_]*X86[A-Z0-9_]*|0xcc)\b'
x86_names+='|(\.|->)(rip|rflags|rsp|cr[0-4]|efer|dr6|dr7|debugreg)\b'
outside=$(find vmm -name '*.[ch]' 2>/dev/null | sort | while read -r f; do
	perl -0777 -pe 's{(/\*.*?\*/)|(//[^\n]*)|("(?:[^"\\\n]|\\.)*")|('"'"'(?:[^'"'"'\\\n]|\\.)*'"'"')}{
		defined $1 ? ($1 =~ tr/\n//cdr) : defined $2 ? "" : defined $3 ? "\"\"" : "0"}gse' "$f" |
		grep -nE "$x86_names" | sed "s|^|$f:|" || true
done)
if [ -n "$outside" ]; then
	echo "$outside" | sed 's/^/x86 name outside arch\/: /'
	status=1
else
	echo "no x86 name outside arch/"
fi
exit $status
