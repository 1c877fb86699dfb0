#!/usr/bin/env bash
# The main job on the bundled default guest: installs what is missing,
# builds what it needs, boots the x86-64 test kernel under earlytrace while
# tracing every call from its first instruction, and shows the trace.
# Where this machine has no usable /dev/kvm, the trace runs inside the
# nested test VM of scripts/with-kvm.sh (it says so first, before any
# build). Extra arguments are passed to `earlytrace trace`.
set -euo pipefail
cd "$(dirname "$0")/.."

# The KVM first: preparing the VM (or failing to) must not wait for a build.
kvm=$(bash scripts/with-kvm.sh --which)
echo "demo: tracing on ${kvm#KVM: }"

bash scripts/install-deps.sh
ninja build/earlytrace build/images/x86_64.elf
trace=build/demo.trace
bash scripts/with-kvm.sh ./build/earlytrace trace --kernel build/images/x86_64.elf --mem 64M \
	--append "console=ttyS0 exit=0" --timeout 60 --output "$trace" "$@"
echo
./build/earlytrace report "$trace" --format summary
echo
echo "The first calls, in ftrace's format (all of them: build/earlytrace report $trace):"
./build/earlytrace report "$trace" --format ftrace | awk '!/^#/ && n++ < 20'
