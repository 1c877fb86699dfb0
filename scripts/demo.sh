#!/usr/bin/env bash
# The main job on the bundled default guest: installs what is missing,
# builds everything, and boots the x86-64 test kernel under earlytrace.
# Extra arguments are passed to `earlytrace run`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
ninja
exec ./build/earlytrace run --kernel build/images/x86_64.elf --mem 64M \
	--append "console=ttyS0 exit=0" --timeout 60 "$@"
