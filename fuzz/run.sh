#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds every libFuzzer target with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer) into build/fuzz/, runs each for a fixed
# number of executions on a copy of its seed corpus, and prints a table.
#
#   bash fuzz/run.sh                      every target, 200000 runs each
#   bash fuzz/run.sh elf kallsyms         just those
#   FUZZ_RUNS=1000000 bash fuzz/run.sh    another count for every target
#   FUZZ_RUNS_elf=50000 bash fuzz/run.sh  another count for one target
#   FUZZ_MAX_LEN[_<target>]=N             longest input (0: libFuzzer's choice)
#   FUZZ_MAX_TIME[_<target>]=S            stop after S seconds even if the runs
#                                         are not done (fuzz/long.sh: an hour)
#   FUZZ_BUILD_ONLY=1 bash fuzz/run.sh    build, do not run
#   FUZZ_NO_BUILD=1                       run what is built (fuzz/long.sh's
#                                         parallel runs: one ninja, not one each)
#   FUZZ_TABLE=FILE                       the table's file (default
#                                         build/fuzz/results.txt)
#
# The normal build (gcc, build.ninja) is not touched: the project's sources
# are compiled again with clang from the list in host.ninja. clang and the
# libFuzzer runtime come from Debian and are installed here when missing
# (the test command does not need them). A crash, leak, timeout or
# out-of-memory leaves its input in build/fuzz/artifacts/<target>/ and the
# script exits 1; turn each into a fix and a file under
# tests/fuzz-regressions/<target>/ (docs/reliability.md, "Fuzzing").
set -uo pipefail
cd "$(dirname "$0")/.."

ALL_TARGETS=(elf bzimage system_map kallsyms trace_reader hypercall tramp_drain page_walk expect
	ftrace_page ftrace_ring ftrace_fill panic_message printk_format domain_xml tracedat_readback)
RUNS=${FUZZ_RUNS:-200000}
# Longest input the fuzzer makes (larger seeds are cut to it): what the
# committed seeds need, so executions stay fast. FUZZ_MAX_LEN=0 lets
# libFuzzer pick from the corpus (then the test kernels are not cut).
declare -A DEFAULT_MAX_LEN=(
	[elf]=16384 [bzimage]=16384 [system_map]=16384 [kallsyms]=16384
	[trace_reader]=16384 [hypercall]=2048 [tramp_drain]=2048 [page_walk]=24576
	[expect]=4096 [ftrace_page]=8192 [ftrace_ring]=32768 [ftrace_fill]=32768 [panic_message]=4096 [printk_format]=4096
	[domain_xml]=8192
	[tracedat_readback]=16384
)
OUT=build/fuzz

if [ $# -gt 0 ]; then targets=("$@"); else targets=("${ALL_TARGETS[@]}"); fi
for t in "${targets[@]}"; do
	[ -f "fuzz/fuzz_$t.c" ] || { echo "fuzz: no target '$t' (fuzz/fuzz_$t.c)" >&2; exit 2; }
done

# ---- tools -------------------------------------------------------------
CLANG_PACKAGES=(clang libclang-rt-14-dev)
missing=()
for p in "${CLANG_PACKAGES[@]}" ninja-build; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "fuzz: installing ${missing[*]}"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null || { echo "fuzz: cannot install ${missing[*]}" >&2; exit 2; }
fi
# The project's own libraries (capstone, libelf, ...), as for the normal build.
bash scripts/install-deps.sh || exit 2
CLANG=${CLANG:-clang}
if ! "$CLANG" -print-file-name=libclang_rt.fuzzer-x86_64.a | grep -q /; then
	echo "fuzz: $CLANG has no libFuzzer runtime (libclang-rt-14-dev)" >&2
	exit 2
fi

# ---- build -------------------------------------------------------------
mkdir -p "$OUT"
ninja_file=$OUT/build.ninja
bins=()
for t in "${targets[@]}"; do bins+=("$OUT/fuzz_$t"); done
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
	bash fuzz/gen-ninja.sh "$OUT" "$CLANG" "${ALL_TARGETS[@]}" >"$ninja_file.tmp" &&
		mv "$ninja_file.tmp" "$ninja_file" || exit 2
	ninja -f "$ninja_file" "${bins[@]}" || { echo "fuzz: build failed" >&2; exit 2; }
fi
[ -z "${FUZZ_BUILD_ONLY:-}" ] || exit 0
for b in "${bins[@]}"; do
	[ -x "$b" ] || { echo "fuzz: $b is not built (run without FUZZ_NO_BUILD)" >&2; exit 2; }
done

# ---- seeds made here from built artifacts (too large to commit) --------
# A folder of this run's own: runs side by side (fuzz/long.sh) must not
# empty each other's.
gen=$(mktemp -d "$OUT/generated.XXXXXX") || exit 2
trap 'rm -rf "$gen"' EXIT
mkdir -p "$gen"/{elf,system_map,trace_reader,tracedat_readback}
for img in build/images/*.elf; do
	[ -f "$img" ] || continue
	cp "$img" "$gen/elf/build-$(basename "$img")"
	nm -n "$img" >"$gen/system_map/build-$(basename "$img" .elf).map" 2>/dev/null || true
done
if [ -x build/earlytrace ] && [ -f build/images/x86_64.elf ] && [ -w /dev/kvm ]; then
	timeout 60 build/earlytrace trace --kernel build/images/x86_64.elf --filter 'ct_*' \
		-o "$gen/trace_reader/build-x86_64-ct.trace" >/dev/null 2>&1 ||
		rm -f "$gen/trace_reader/build-x86_64-ct.trace"
fi
# The trace.dat writer reads the same trace files.
cp "$gen"/trace_reader/* "$gen/tracedat_readback/" 2>/dev/null

# ---- run ---------------------------------------------------------------
table=${FUZZ_TABLE:-$OUT/results.txt}
status=0
printf '%-14s %10s %9s %7s %8s %8s %s\n' target execs seconds cov crashes corpus+ artifacts >"$table"
for t in "${targets[@]}"; do
	runs_var="FUZZ_RUNS_$t"
	runs=${!runs_var:-$RUNS}
	max_len_var="FUZZ_MAX_LEN_$t"
	max_len=${!max_len_var:-${FUZZ_MAX_LEN:-${DEFAULT_MAX_LEN[$t]}}}
	max_time_var="FUZZ_MAX_TIME_$t"
	max_time=${!max_time_var:-${FUZZ_MAX_TIME:-0}}
	corpus=$OUT/corpus/$t
	artifacts=$OUT/artifacts/$t
	log=$OUT/logs/$t.log
	rm -rf "$corpus" "$artifacts"
	mkdir -p "$corpus" "$artifacts" "$OUT/logs"
	# $OUT/long-corpus/<target>: what earlier long runs found (fuzz/long.sh).
	for dir in "tests/fuzz-corpus/$t" "tests/fuzz-regressions/$t" "$gen/$t" "$OUT/long-corpus/$t"; do
		[ -d "$dir" ] && find "$dir" -maxdepth 1 -type f ! -name '.*' -exec cp {} "$corpus/" \;
	done
	before=$(find "$corpus" -type f | wc -l)
	echo "=== $t: $runs runs on $before seeds (log: $log)"
	start=$(date +%s%N)
	ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$OUT/fuzz_$t" -runs="$runs" -max_total_time="$max_time" -max_len="$max_len" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=30 \
		-print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
	rc=$?
	secs=$(awk -v ns="$(($(date +%s%N) - start))" 'BEGIN { printf "%.1f", ns / 1e9 }')
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	[ -n "$execs" ] || execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
	crashes=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
		-o -name 'oom-*' \) | wc -l)
	after=$(find "$corpus" -type f | wc -l)
	# libFuzzer's last status line: "#N DONE cov: C ft: F corp: ..."
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes="rc=$rc"; fi
	[ "$crashes" = 0 ] || status=1
	printf '%-14s %10s %9s %7s %8s %8s %s\n' "$t" "${execs:-?}" "$secs" "${cov:-?}" "$crashes" \
		"$((after - before))" "$artifacts" >>"$table"
	if [ "$crashes" != 0 ]; then
		grep -m1 -A12 'ERROR: \|runtime error\|==ERROR' "$log" | head -20
	fi
done
echo
echo "fuzzing done $(date -u +%Y-%m-%dT%H:%MZ) ($(nproc) CPUs)"
cat "$table"
exit $status
