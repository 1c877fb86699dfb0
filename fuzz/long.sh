#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The long fuzz runs: every target (or those named) for the execution
# counts below, through fuzz/run.sh. A few hours on two cores; the short
# run, `bash fuzz/run.sh`, does 200000 each. docs/reliability.md
# ("Fuzzing") lists these counts and what each run found; change both
# together. Any FUZZ_RUNS_<target> already set wins.
set -uo pipefail
cd "$(dirname "$0")/.."

declare -A LONG_RUNS=(
	[elf]=5000000 [bzimage]=2000000 [system_map]=5000000 [kallsyms]=5000000
	[trace_reader]=1000000 [hypercall]=5000000 [tramp_drain]=2000000
	[page_walk]=2000000 [expect]=2000000 [ftrace_page]=2000000 [ftrace_ring]=2000000
)
for t in "${!LONG_RUNS[@]}"; do
	var="FUZZ_RUNS_$t"
	export "$var=${!var:-${LONG_RUNS[$t]}}"
done
exec bash fuzz/run.sh "$@"
