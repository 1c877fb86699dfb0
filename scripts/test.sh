#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs the
# test binary of the optimized build and of the sanitizer build, and ends
# with one summary line "N passed, N failed, N skipped".
#
# Its first line names the KVM the boot tests run on. Where this machine
# has no usable /dev/kvm, each binary runs twice: here, for everything
# that needs no KVM (unit tests, fuzz regressions), and inside the nested
# test VM of scripts/with-kvm.sh for exactly the tests that skipped here
# for want of KVM ("needs KVM: ..."); both binaries' VM runs share the VM's
# one CPU while the native runs take the other. EARLYTRACE_REQUIRE_KVM=1
# holds in the VM as it does natively.
set -uo pipefail
cd "$(dirname "$0")/.."

kvm=$(bash scripts/with-kvm.sh --which 2>/dev/null) || kvm="KVM: none usable (scripts/with-kvm.sh --which failed)"
echo "test: boot tests on $kvm"

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

report_dir=$(mktemp -d)
trap 'rm -rf "$report_dir"' EXIT
status=0

# One binary's run: its own output (into $log), its JUnit-style XML
# report (the counts come from there, so a crash that kills the binary
# before its summary still counts as failed).
run_binary() { # where(native|vm) bin filter xml log
	local where=$1 bin=$2 filter=$3 xml=$4 log=$5 wrap=()
	# A VM that stops making progress (seen twice under heavy host load:
	# the VM's own clock stood still, so no timeout inside it fired) ends
	# after 45 minutes, and its binary counts as failed.
	[ "$where" = vm ] && wrap=(timeout -k 30 "${EARLYTRACE_VM_TEST_TIMEOUT:-2700}" bash scripts/with-kvm.sh)
	{
		echo "=== $bin --gtest_filter=$(echo "$filter" | cut -c1-200)$([ ${#filter} -gt 200 ] && echo ...) ($where)"
		# halt_on_error: any sanitizer report fails the run, never just a warning.
		ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			"${wrap[@]}" "$bin" --gtest_output="xml:$xml" --gtest_filter="$filter"
	} >"$log" 2>&1
}

# "T F E S" of an XML report: tests, failures, errors, skips.
counts() {
	local t f e s
	read -r t f e <<<"$(sed -n 's/.*<testsuites tests="\([0-9]*\)" failures="\([0-9]*\)" disabled="[0-9]*" errors="\([0-9]*\)".*/\1 \2 \3/p' "$1" | head -1)"
	s=$(grep -c '<skipped' "$1")
	echo "${t:-0} ${f:-0} ${e:-0} $s"
}

# The tests of an XML report that skipped for want of KVM, as a filter.
needs_kvm_filter() {
	awk '/<testcase / {
		match($0, / name="[^"]*"/); n = substr($0, RSTART + 7, RLENGTH - 8)
		match($0, /classname="[^"]*"/); c = substr($0, RSTART + 11, RLENGTH - 12)
	}
	/<skipped message=/ && /needs KVM: / { print c "." n }' "$1" | paste -sd: -
}

passed=0 failed=0 skipped=0
tally() { # xml log [needs-KVM skips to leave out]
	local t f e s
	if [ ! -s "$1" ]; then
		echo "$2 died before writing its report"
		failed=$((failed + 1))
		return
	fi
	read -r t f e s <<<"$(counts "$1")"
	s=$((s - ${3:-0}))
	passed=$((passed + t - f - e - s - ${3:-0}))
	failed=$((failed + f + e))
	skipped=$((skipped + s))
}

# The tests a run's log says ended: "[       OK ] Suite.Test (12 ms)" and
# the FAILED and SKIPPED lines alike, each test once.
finished_tests() {
	awk '/^\[ +(OK|FAILED|SKIPPED) +\] [^ ]+/ && !seen[$4]++ { print $2, $4 }' "$1"
}

# Counts the tests a killed run's log says ended (it wrote no report).
tally_log() {
	local ok fail skip
	read -r ok fail skip <<<"$(finished_tests "$1" | awk '{ n[$1]++ } END { print n["OK"] + 0, n["FAILED"] + 0, n["SKIPPED"] + 0 }')"
	passed=$((passed + ok))
	failed=$((failed + fail))
	skipped=$((skipped + skip))
}

# A filter's tests less those the log says ended.
unfinished_filter() { # filter log
	echo "$1" | tr ':' '\n' | awk 'NR == FNR { done[$2]; next } NF && !($0 in done)' <(finished_tests "$2") - | paste -sd: -
}

variants=(build build/asan)
# A stock Linux boot takes long under emulation: boot it with the
# optimized VMM only; the sanitizer build runs everything else.
filter_of() { [ "$1" = build ] && echo "*" || echo "-LinuxBoot.*:LinuxFollow.*:Timeouts/LinuxPanic.*:Methods/LinuxReboot.*"; }
name_of() { echo "$1" | tr / _; }

if [[ "$kvm" == "KVM: this machine's"* ]]; then
	# KVM here: every test runs natively.
	for v in "${variants[@]}"; do
		n=$(name_of "$v")
		run_binary native "$v/tests/earlytrace_tests" "$(filter_of "$v")" "$report_dir/$n.xml" "$report_dir/$n.log" || status=1
		cat "$report_dir/$n.log"
		tally "$report_dir/$n.xml" "$v/tests/earlytrace_tests"
	done
else
	# No KVM here: what needs none runs here, the rest in the VM.
	require=${EARLYTRACE_REQUIRE_KVM:-}
	for v in "${variants[@]}"; do
		n=$(name_of "$v")
		EARLYTRACE_REQUIRE_KVM= EARLYTRACE_KVM_DEVICE=/nonexistent/kvm \
			run_binary native "$v/tests/earlytrace_tests" "$(filter_of "$v")" "$report_dir/$n.xml" "$report_dir/$n.log" || status=1
		cat "$report_dir/$n.log"
		[ -s "$report_dir/$n.xml" ] || { echo "$v/tests/earlytrace_tests died before writing its report"; failed=$((failed + 1)); continue; }
		vm_filter=$(needs_kvm_filter "$report_dir/$n.xml")
		nr_vm=$(echo "$vm_filter" | tr ':' '\n' | grep -c .)
		tally "$report_dir/$n.xml" "$v/tests/earlytrace_tests" "$nr_vm"
		echo "$vm_filter" >"$report_dir/$n.vm-filter"
	done
	for v in "${variants[@]}"; do
		n=$(name_of "$v")
		[ -s "$report_dir/$n.vm-filter" ] && [ "$(cat "$report_dir/$n.vm-filter")" ] || continue
		# Test files in the VM's own tmpfs: faster than the host's /tmp
		# over 9p, which has no FIFOs (the reports stay on the host).
		# QEMU's TCG can freeze the VM (scripts/with-kvm.sh, "The
		# freeze"), not the tests' doing: the tests the frozen VM
		# finished count from its log, and those it had not (the one it
		# froze in among them) run on in a new VM. A test the VM froze
		# in five times fails the run, as do ten VMs in all (the Debian
		# boot to /init and power-off froze about every other VM).
		filter=$(cat "$report_dir/$n.vm-filter")
		froze_in=() attempt=0
		while :; do
			attempt=$((attempt + 1))
			vm_status=0
			EARLYTRACE_REQUIRE_KVM=$require TEST_TMPDIR=/dev/shm/ \
				run_binary vm "$v/tests/earlytrace_tests" "$filter" "$report_dir/$n-vm.xml" "$report_dir/$n-vm.log" || vm_status=1
			cat "$report_dir/$n-vm.log"
			grep -q '^with-kvm: the test VM froze' "$report_dir/$n-vm.log" || break
			froze_in+=("$(awk '/^\[ RUN +\] / { t = $4 } END { print t }' "$report_dir/$n-vm.log")")
			if [ "$(printf '%s\n' "${froze_in[@]}" | grep -cxF "${froze_in[-1]}")" -ge 5 ] || [ "$attempt" -ge 10 ]; then
				echo "test: giving up after $attempt frozen VMs (one in ${froze_in[-1]:-?} for the fifth time, or the tenth)"
				break
			fi
			tally_log "$report_dir/$n-vm.log"
			filter=$(unfinished_filter "$filter" "$report_dir/$n-vm.log")
			rm -f "$report_dir/$n-vm.xml"
			[ -n "$filter" ] || { vm_status=0; break; }
			echo "test: the test VM froze in ${froze_in[-1]:-?} (above); the $(echo "$filter" | tr ':' '\n' | grep -c .) tests it had not finished run on in a new VM"
		done
		[ "$vm_status" -eq 0 ] || status=1
		[ -n "$filter" ] || continue
		tally "$report_dir/$n-vm.xml" "$v/tests/earlytrace_tests (in the VM)"
	done
fi

[ "$failed" -eq 0 ] || status=1
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
