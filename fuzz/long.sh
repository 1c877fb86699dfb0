#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The long fuzz runs, unattended: every target (or those named) for 10
# million executions or an hour, whichever comes first (issue 18), through
# fuzz/run.sh; as each target ends
#   - its corpus is merged (libFuzzer -merge=1) into
#     build/fuzz/long-corpus/<target>/, which the next run starts from;
#   - each crash, leak, timeout or out-of-memory input is kept in
#     build/fuzz/findings/<target>/ (turn each into a fix and a file under
#     tests/fuzz-regressions/<target>/: docs/reliability.md, "Fuzzing");
# and when all are done
#   - the table (executions, seconds, coverage, findings) is appended to
#     build/fuzz/long-results.txt with the date.
# Targets run side by side, FUZZ_LONG_JOBS at a time (default: one per
# CPU; each libFuzzer process uses one): 15 targets of up to an hour are
# 15 hours on one CPU, 8 on two. Each run is built once, then started with
# its own table; the tables are joined in the order the targets were named.
# Any FUZZ_RUNS_<target> / FUZZ_MAX_TIME_<target> already set wins.
set -uo pipefail
cd "$(dirname "$0")/.."

LONG_RUNS=${FUZZ_LONG_RUNS:-10000000}
LONG_TIME=${FUZZ_LONG_TIME:-3600}
OUT=build/fuzz
TARGETS=(elf bzimage system_map kallsyms trace_reader hypercall tramp_drain page_walk expect
	ftrace_page ftrace_ring ftrace_fill panic_message printk_format domain_xml tracedat_readback)
if [ $# -gt 0 ]; then TARGETS=("$@"); fi
for t in "${TARGETS[@]}"; do
	runs_var="FUZZ_RUNS_$t" time_var="FUZZ_MAX_TIME_$t"
	export "$runs_var=${!runs_var:-$LONG_RUNS}" "$time_var=${!time_var:-$LONG_TIME}"
done

JOBS=${FUZZ_LONG_JOBS:-$(nproc)}
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_LONG_JOBS must be a positive number, not '$JOBS'" >&2; exit 2; }

FUZZ_BUILD_ONLY=1 bash fuzz/run.sh "${TARGETS[@]}" || exit 2
# One target: its run, then its corpus merged and its findings kept, so a
# target that is done is kept even if a later one is stopped.
long_one() {
	local t=$1 rc
	FUZZ_NO_BUILD=1 FUZZ_TABLE="$OUT/tables/$t.txt" bash fuzz/run.sh "$t" >"$OUT/tables/$t.out" 2>&1
	rc=$?
	mkdir -p "$OUT/long-corpus/$t" "$OUT/findings/$t"
	if [ -d "$OUT/corpus/$t" ]; then
		"$OUT/fuzz_$t" -merge=1 "$OUT/long-corpus/$t" "$OUT/corpus/$t" \
			>"$OUT/logs/$t.merge.log" 2>&1 || echo "fuzz: merging $t's corpus failed" >&2
	fi
	find "$OUT/artifacts/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) -exec cp {} "$OUT/findings/$t/" \; 2>/dev/null
	echo "fuzz: $t done ($(date -u +%H:%MZ)): $(tail -n +2 "$OUT/tables/$t.txt" 2>/dev/null)"
	return $rc
}

mkdir -p "$OUT/tables"
status=0
running=0
for t in "${TARGETS[@]}"; do
	if [ "$running" -ge "$JOBS" ]; then
		wait -n || status=1
		running=$((running - 1))
	fi
	rm -f "$OUT/tables/$t.txt"
	long_one "$t" &
	running=$((running + 1))
	echo "fuzz: $t started ($(date -u +%H:%MZ); output: $OUT/tables/$t.out)"
done
while [ "$running" -gt 0 ]; do
	wait -n || status=1
	running=$((running - 1))
done
{
	printf '%-14s %10s %9s %7s %8s %8s %s\n' target execs seconds cov crashes corpus+ artifacts
	for t in "${TARGETS[@]}"; do
		if [ -s "$OUT/tables/$t.txt" ]; then
			tail -n +2 "$OUT/tables/$t.txt"
		else
			printf '%-14s %10s (did not run: %s)\n' "$t" '?' "$OUT/tables/$t.out"
			status=1
		fi
	done
} >"$OUT/results.txt"
{
	echo "== $(date -u +%Y-%m-%dT%H:%MZ), $LONG_RUNS runs or ${LONG_TIME} s per target, $JOBS at a time on $(nproc) CPUs"
	cat "$OUT/results.txt"
} >>"$OUT/long-results.txt"
cat "$OUT/results.txt"
echo "fuzz: corpora in $OUT/long-corpus/, findings in $OUT/findings/, table in $OUT/long-results.txt"
exit $status
