#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian cloud kernel's early phase (first instruction to ftrace_init)
# as trace-cmd's trace.dat, opened by its real consumers: `trace-cmd
# report` must list the same calls with the same parents as earlytrace's
# ftrace report, and KernelShark (under a virtual X server) loads it; its
# window is saved as a PNG. Not part of the test command (the trace alone
# takes minutes of emulated boot); installs KernelShark and Xvfb itself.
#
#   bench/kernelshark-screenshot.sh [TRACE.etr [OUT.png]]
#
# Without TRACE.etr it traces the kernel first (--timeout 120). OUT.png
# defaults to docs/images/kernelshark-debian-early.png.
set -euo pipefail
cd "$(dirname "$0")/.."

etr=${1:-}
png=${2:-docs/images/kernelshark-debian-early.png}
log() { echo "kernelshark-screenshot: $*" >&2; }

bash scripts/install-deps.sh --viewers
ninja build/earlytrace >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "$etr" ]; then
	etr=$work/debian.etr
	log "tracing the Debian kernel's early phase (a few minutes)"
	build/earlytrace trace -k "$(bash images/fetch-debian-kernel.sh)" -p console=ttyS0 \
		-o "$etr" --timeout 120 >/dev/null
fi
dat=$work/trace.dat
start=$(date +%s.%N)
build/earlytrace report "$etr" --format trace-dat -o "$dat"
log "converted in $(echo "$(date +%s.%N) - $start" | bc) s: $(stat -c %s "$dat") bytes"

# trace-cmd: the same calls, parents and order as the ftrace report.
trace-cmd report -O parent=1 "$dat" 2>/dev/null |
	awk '$4 == "function:" { print $5, $7 }' >"$work/trace-cmd.calls"
build/earlytrace report "$etr" --format ftrace |
	awk '!/^#/ && $5 !~ /^(vm_exit|tracing_mark_write):$/ { p = $6; sub(/^<-/, "", p); print $5, p }' \
		>"$work/ftrace.calls"
if ! cmp -s "$work/trace-cmd.calls" "$work/ftrace.calls"; then
	log "trace-cmd report and the ftrace report differ:"
	diff "$work/trace-cmd.calls" "$work/ftrace.calls" | head >&2
	exit 1
fi
log "trace-cmd report: the same $(wc -l <"$work/trace-cmd.calls") calls as the ftrace report"

# KernelShark asks root to confirm with a dialog unless its settings say
# not to; it keeps them in KS_USER_CACHE_DIR.
mkdir -p "$work/ks"
printf '[General]\nnoRootWarn=true\n' >"$work/ks/setting.ini"
mkdir -p "$(dirname "$png")"
KS_USER_CACHE_DIR=$work/ks xvfb-run -a -s "-screen 0 1600x1000x24" bash -c '
	set -e
	kernelshark "$1" >"$2/kernelshark.log" 2>&1 &
	ks=$!
	for _ in $(seq 120); do
		win=$(xdotool search --name "Kernel Shark" 2>/dev/null | head -1) || true
		[ -n "$win" ] && grep -q Loading "$2/kernelshark.log" && break
		sleep 1
	done
	[ -n "$win" ] || { echo "KernelShark opened no window" >&2; exit 1; }
	xdotool windowmove "$win" 0 0 windowsize "$win" 1600 1000
	sleep 20 # loading and drawing 440,000 events
	kill -0 $ks || { echo "KernelShark exited:" >&2; cat "$2/kernelshark.log" >&2; exit 1; }
	xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng >"$3"
	kill $ks
' _ "$dat" "$work" "$png"
grep -v -e XDG_RUNTIME_DIR "$work/kernelshark.log" >&2 || true
log "KernelShark's window: $png"
