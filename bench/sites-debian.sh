#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbols and sites of the stripped Debian cloud kernel: kallsyms recovery
# and site discovery times (median of RUNS runs of `earlytrace sites`, as
# the command itself measures them) and the counts.
#
#   bench/sites-debian.sh [RUNS]      (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}

bash scripts/install-deps.sh
ninja build/earlytrace >/dev/null
vmlinux=$(dirname "$(bash images/fetch-debian-kernel.sh)")/vmlinux

sym=() site=()
for _ in $(seq 1 "$runs"); do
	line=$(build/earlytrace sites --kernel "$vmlinux" 2>/dev/null | grep '^# time:')
	sym+=("$(echo "$line" | sed 's/.*symbols \([0-9.]*\) ms.*/\1/')")
	site+=("$(echo "$line" | sed 's/.*sites \([0-9.]*\) ms.*/\1/')")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

build/earlytrace sites --kernel "$vmlinux" 2>/dev/null | grep -E '^# (symbols|sites):'
echo "kallsyms recovery: $(median "${sym[@]}") ms, site discovery: $(median "${site[@]}") ms (median of $runs)"
