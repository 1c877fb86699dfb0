#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The long fuzz runs, unattended: every target (or those named) for 10
# million executions or an hour, whichever comes first (issue 18), through
# fuzz/run.sh; then
#   - each target's corpus is merged (libFuzzer -merge=1) into
#     build/fuzz/long-corpus/<target>/, which the next run starts from;
#   - each crash, leak, timeout or out-of-memory input is kept in
#     build/fuzz/findings/<target>/ (turn each into a fix and a file under
#     tests/fuzz-regressions/<target>/: docs/reliability.md, "Fuzzing");
#   - the table (executions, seconds, coverage, findings) is appended to
#     build/fuzz/long-results.txt with the date.
# Up to an hour per target (13 hours) on a shared machine: run it when the
# CPUs are free. Any FUZZ_RUNS_<target> / FUZZ_MAX_TIME_<target> already
# set wins.
set -uo pipefail
cd "$(dirname "$0")/.."

LONG_RUNS=${FUZZ_LONG_RUNS:-10000000}
LONG_TIME=${FUZZ_LONG_TIME:-3600}
OUT=build/fuzz
TARGETS=(elf bzimage system_map kallsyms trace_reader hypercall tramp_drain page_walk expect
	ftrace_page ftrace_ring panic_message domain_xml tracedat_readback)
if [ $# -gt 0 ]; then TARGETS=("$@"); fi
for t in "${TARGETS[@]}"; do
	runs_var="FUZZ_RUNS_$t" time_var="FUZZ_MAX_TIME_$t"
	export "$runs_var=${!runs_var:-$LONG_RUNS}" "$time_var=${!time_var:-$LONG_TIME}"
done

bash fuzz/run.sh "${TARGETS[@]}"
status=$?

for t in "${TARGETS[@]}"; do
	[ -x "$OUT/fuzz_$t" ] || continue
	mkdir -p "$OUT/long-corpus/$t" "$OUT/findings/$t"
	if [ -d "$OUT/corpus/$t" ]; then
		"$OUT/fuzz_$t" -merge=1 "$OUT/long-corpus/$t" "$OUT/corpus/$t" \
			>"$OUT/logs/$t.merge.log" 2>&1 || echo "fuzz: merging $t's corpus failed" >&2
	fi
	find "$OUT/artifacts/$t" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) -exec cp {} "$OUT/findings/$t/" \; 2>/dev/null
done
{
	echo "== $(date -u +%Y-%m-%dT%H:%MZ), $LONG_RUNS runs or ${LONG_TIME} s per target"
	cat "$OUT/results.txt"
} >>"$OUT/long-results.txt"
echo "fuzz: corpora in $OUT/long-corpus/, findings in $OUT/findings/, table in $OUT/long-results.txt"
exit $status
