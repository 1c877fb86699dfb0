// SPDX-License-Identifier: MIT
// What the tests share: where they find inputs that are not in the
// repository (the Debian cloud kernel and the busybox initramfs, which
// images/fetch-debian-kernel.sh and images/make-initramfs.sh put in a
// cache; scripts/test.sh runs both), whether KVM is usable, files and
// events to feed the code under test.
#ifndef TESTS_FIXTURES_H
#define TESTS_FIXTURES_H

#include "earlytrace/abi.h"
#include "vmm/report/report.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

// Whether the VMM could open its KVM device ($EARLYTRACE_KVM_DEVICE, else
// /dev/kvm: read-write, the right API version, the capabilities it
// needs); *why, when given, gets the VMM's own reason when not.
bool kvm_available(std::string *why = nullptr);
// $EARLYTRACE_REQUIRE_KVM=1 (.ci/run sets it): KVM must be usable here.
bool kvm_required();
// The most vCPUs KVM recommends for a VM here (KVM_CAP_NR_VCPUS; 4, as
// the API says, where it does not say).
unsigned kvm_recommended_vcpus();

// Whether this KVM keeps the guest's registers at a triple fault: not on
// AMD SVM, which re-initializes the vCPU before it reports the shutdown
// (vmm/kvm/kvm_traits.h). Where not, every triple fault ends the run as a
// reset whose detail is kTripleFaultStateLost.
bool kvm_shutdown_keeps_state();
extern const char kTripleFaultStateLost[];

// Breakpoint tracing (--mode int3, and --graph's return breakpoints)
// needs a KVM that reports the guest's int3: not KVM nested under QEMU's
// TCG (vmm/kvm/kvm_traits.h). "" where it does (or where KVM is not
// usable: REQUIRE_KVM() speaks then), else the reason to skip with.
std::string int3_skip_reason();

// Skips a test (or a fixture's SetUp) of breakpoint tracing where int3s do
// not reach the VMM; REQUIRE_MODE() only when `mode` is "int3".
#define REQUIRE_INT3()                                                                 \
	do {                                                                           \
		std::string int3_why_ = int3_skip_reason();                            \
		if (!int3_why_.empty())                                                \
			GTEST_SKIP() << int3_why_;                                     \
	} while (0)
#define REQUIRE_MODE(mode)                                                             \
	do {                                                                           \
		if (std::string(mode) == "int3")                                       \
			REQUIRE_INT3();                                                \
	} while (0)

// The mode with an exit per call where this KVM has it ("int3"), else
// "trampoline": for tests of what happens while a trace runs (signals,
// output files), not of breakpoint mode itself.
const char *busiest_trace_mode();

// Boots of a stock kernel (`what`, for the reason): "" where they run, else
// why not. They run where a stock kernel boots in seconds (real VMX/SVM,
// KVM nested under QEMU's TCG); on kvm-pvm, which takes minutes (about
// 470 s to /init), only with EARLYTRACE_SLOW_TESTS=1.
std::string stock_boot_skip_reason(const std::string &what);

// The one way a test stops for want of KVM. When KVM is not usable it
// ends the test (or the helper function it stands in) as skipped, with
// the reason; under EARLYTRACE_REQUIRE_KVM=1 as failed instead, so a CI
// run cannot pass over the KVM tests. When KVM is usable it does nothing.
#define REQUIRE_KVM()                                                                  \
	do {                                                                           \
		std::string kvm_why_;                                                  \
		if (!kvm_available(&kvm_why_)) {                                       \
			if (kvm_required())                                            \
				GTEST_FAIL() << "EARLYTRACE_REQUIRE_KVM=1 but " << kvm_why_; \
			GTEST_SKIP() << "needs KVM: " << kvm_why_;                     \
		}                                                                      \
	} while (0)

// $EARLYTRACE_DEBIAN_KERNEL_DIR, else ${XDG_CACHE_HOME:-~/.cache}/earlytrace/debian-kernel.
std::string debian_kernel_dir();
// $EARLYTRACE_INITRAMFS, else ${XDG_CACHE_HOME:-~/.cache}/earlytrace/initramfs.cpio.
std::string initramfs_path();
bool file_exists(const std::string &path);
// The whole file; empty when it cannot be read.
std::vector<uint8_t> read_file_bytes(const std::string &path);
std::string read_file_text(const std::string &path);
// The names in a directory (without . and ..), sorted; none when it
// cannot be read.
std::vector<std::string> files_in(const std::string &dir);
// The bytes gzip-compressed (a gzip member, as gzip -9 writes it).
std::vector<uint8_t> gzip(const std::vector<uint8_t> &in);
// v little-endian at b[off].
void put32(std::vector<uint8_t> &b, size_t off, uint32_t v);
// A bzImage shaped like the kernel's: setup sectors, then the
// protected-mode part with the payload (compressed data + its
// decompressed size) inside; its header takes command lines of at most
// cmdline_size bytes.
std::vector<uint8_t> make_bzimage(const std::vector<uint8_t> &compressed, size_t kernel_size,
				  uint32_t cmdline_size = 2047);

// A call event as the tracer records it.
et_ring_record make_call(uint64_t tsc, uint64_t ip, uint64_t parent, uint32_t cpu = 0,
			 uint16_t source = ET_REC_SRC_BREAKPOINT);

// The text's lines, without their newlines.
std::vector<std::string> text_lines(const std::string &text);

// `earlytrace report` of a trace file in one format, as text; expects
// report_write() to return want.
std::string report_text(const std::string &path, report_format f, int want = 0);

// A fresh directory under gtest's TempDir() (/tmp), removed with everything in it at the end
// of the scope.
struct TempDir {
	std::string path;
	TempDir();
	~TempDir();
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;
	std::string file(const char *name) const { return path + "/" + name; }
};

#endif // TESTS_FIXTURES_H
