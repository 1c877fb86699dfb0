#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs the
# test binary of the optimized build and of the sanitizer build, and ends
# with one summary line "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
# Inputs from Debian's archive for the stock-kernel tests: the cloud kernel
# and a busybox initramfs, cached outside the tree. Without them those
# tests say so and skip; the rest still runs.
if vmlinuz=$(bash images/fetch-debian-kernel.sh); then
	export EARLYTRACE_DEBIAN_KERNEL_DIR=$(dirname "$vmlinuz")
else
	echo "test: could not fetch the Debian kernel; its tests will be skipped"
fi
if initramfs=$(bash images/make-initramfs.sh); then
	export EARLYTRACE_INITRAMFS=$initramfs
else
	echo "test: could not build the initramfs; the Linux boot tests will be skipped"
fi
if ! ninja; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

passed=0 failed=0 skipped=0 status=0
report_dir=$(mktemp -d)
trap 'rm -rf "$report_dir"' EXIT

# Each binary writes a JUnit-style XML report; the counts come from there,
# so a crash that kills the binary before its summary still counts as failed.
for variant in build build/asan; do
	bin="$variant/tests/earlytrace_tests"
	xml="$report_dir/$(echo "$variant" | tr / _).xml"
	# A stock Linux boot takes minutes on an emulating (nested) KVM: boot it
	# once, with the optimized VMM; the sanitizer build runs everything else.
	filter="*"
	[ "$variant" = build ] || filter="-LinuxBoot.*:LinuxFollow.*"
	echo "=== $bin --gtest_filter=$filter"
	# halt_on_error: any sanitizer report fails the run, never just a warning.
	ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$bin" --gtest_output="xml:$xml" --gtest_filter="$filter" || status=1
	if [ ! -s "$xml" ]; then
		echo "$bin died before writing its report"
		failed=$((failed + 1))
		continue
	fi
	# <testsuites tests="T" failures="F" disabled="D" errors="E" ...>
	read -r t f e <<<"$(sed -n 's/.*<testsuites tests="\([0-9]*\)" failures="\([0-9]*\)" disabled="[0-9]*" errors="\([0-9]*\)".*/\1 \2 \3/p' "$xml" | head -1)"
	s=$(grep -c '<skipped' "$xml")
	passed=$((passed + t - f - e - s))
	failed=$((failed + f + e))
	skipped=$((skipped + s))
done

[ "$failed" -eq 0 ] || status=1
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
