// SPDX-License-Identifier: MIT
// Small limits, each checked before anything runs: `sites` to a full
// device fails; --tail has an upper bound; a command line longer than
// the kernel takes (a bzImage's cmdline_size) is refused naming the
// limit instead of being cut by the guest. (--buf-size below one event:
// TraceInMode in test_trace.cc.) docs/reliability.md, "Limits".
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

using Bytes = std::vector<uint8_t>;

// The test kernel inside a bzImage whose setup header says it takes
// command lines of at most cmdline_size bytes.
std::string bzimage_of_test_kernel(const TempDir &d, uint32_t cmdline_size)
{
	Bytes kernel = read_file_bytes(image("x86_64"));
	Bytes img = make_bzimage(gzip(kernel), kernel.size(), cmdline_size);
	std::string path = d.file("bzImage");
	std::ofstream(path, std::ios::binary).write((const char *)img.data(), (long)img.size());
	return path;
}

// "exit=0" padded with a harmless word to exactly n bytes.
std::string cmdline_of(size_t n)
{
	std::string s = "exit=0 pad=";
	s.resize(n, 'x');
	return s;
}

} // namespace

TEST(Limits, SitesToAFullDeviceFails)
{
	VmmRun run;
	run.args = { "sites", "--kernel", image("x86_64") };
	run.stdout_path = "/dev/full";
	VmmResult r = run_vmm(run);
	expect_no_crash(r);
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
}

TEST(Limits, TailHasAnUpperBound)
{
	for (const char *n : { "100001", "18446744073709551615" }) {
		VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--tail", n });
		expect_no_crash(r);
		EXPECT_EQ(r.status, 1) << r.err;
		EXPECT_NE(r.err.find("--tail: " + std::string(n) + " is more than 100000 events"),
			  std::string::npos)
			<< r.err;
	}
}

TEST(Limits, TailAtItsBoundRuns)
{
	REQUIRE_KVM();
	TempDir d;
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--tail",
				"100000", "--append", "exit=0", "--timeout", "30", "-o",
				d.file("t.trace") });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 0) << r.err;
}

// The guest would keep 2047 bytes and drop the rest without a word: one
// byte over is refused, naming the limit and where it comes from; the
// limit itself boots.
TEST(Limits, CommandLineLongerThanTheKernelTakesIsRefused)
{
	REQUIRE_KVM();
	TempDir d;
	std::string bz = bzimage_of_test_kernel(d, 2047);
	VmmResult r = run_vmm({ "run", "--kernel", bz, "--mem", "32M", "--append", cmdline_of(2048),
				"--timeout", "30" });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_NE(r.err.find("--append: the kernel command line is 2048 bytes; this kernel takes at "
			     "most 2047 (its boot protocol's cmdline_size)"),
		  std::string::npos)
		<< r.err;
	r = run_vmm({ "run", "--kernel", bz, "--mem", "32M", "--append", cmdline_of(2047),
		      "--timeout", "30" });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 0) << r.err;
	// A kernel that says nothing: the VMM's own room, 65535 bytes.
	r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "32M", "--append",
		      cmdline_of(65536), "--timeout", "30" });
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_NE(r.err.find("at most 65535 (the VMM's room for it)"), std::string::npos) << r.err;
}

// Where each kind of kernel's limit comes from (no KVM needed).
TEST(Limits, CommandLineLimitPerKernel)
{
	struct kernel_image img {};
	const char *source = nullptr;
	EXPECT_EQ(boot_cmdline_max(&img, &source), 65535u);
	EXPECT_STREQ(source, "the VMM's room for it");
	img.is_linux = true; // a vmlinux: Linux cuts at COMMAND_LINE_SIZE
	EXPECT_EQ(boot_cmdline_max(&img, &source), 2047u);
	EXPECT_STREQ(source, "x86 Linux's COMMAND_LINE_SIZE");
	img.from_bzimage = true;
	img.bzimage.cmdline_size = 255; // a boot protocol before 2.06
	EXPECT_EQ(boot_cmdline_max(&img, &source), 255u);
	EXPECT_STREQ(source, "its boot protocol's cmdline_size");
}
