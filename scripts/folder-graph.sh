#!/usr/bin/env bash
# Prints the include graph of the host program's folders (vmm/, arch/,
# trampolines/): one line per edge, "from -> to  N" with N the number of
# #include lines behind it, then every set of folders that include each
# other in a circle, and every ioctl() call outside vmm/kvm/ (the one
# folder that talks to KVM). Exits 1 when there is either, so a test
# holds the layering (docs/architecture.md, "Layers").
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
exit $status
