#!/usr/bin/env bash
# The main job on the bundled default guest: installs what is missing,
# builds everything, boots the x86-64 test kernel under earlytrace while
# tracing every call from its first instruction, and shows the trace.
# Extra arguments are passed to `earlytrace trace`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
ninja
trace=build/demo.trace
./build/earlytrace trace --kernel build/images/x86_64.elf --mem 64M \
	--append "console=ttyS0 exit=0" --timeout 60 --output "$trace" "$@"
echo
./build/earlytrace report "$trace" --format summary
echo
echo "The first calls, in ftrace's format (all of them: build/earlytrace report $trace):"
./build/earlytrace report "$trace" --format ftrace | awk '!/^#/ && n++ < 20'
