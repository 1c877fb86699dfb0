// SPDX-License-Identifier: MIT
// Inputs that are not regular files: a FIFO given as kernel, initrd,
// symbols file, trace or expectations file is refused at once (opened
// with O_NONBLOCK, then fstat), where open() used to block forever; a
// file whose size stat() does not know (/proc) is read to its end, and an
// empty initrd is refused. docs/reliability.md, "Inputs".
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

// Refused within the harness's short deadline, with one line that says
// what the file is.
void expect_fifo_refused(std::vector<std::string> args, const std::string &fifo)
{
	VmmRun run;
	run.args = std::move(args);
	run.harness_timeout_s = 20; // the old VMM blocked here until killed
	VmmResult r = run_vmm(run);
	expect_no_sanitizer_report(r);
	EXPECT_FALSE(r.timed_out) << "blocked on the FIFO";
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_NE(r.err.find(fifo + " is a FIFO, not a regular file"), std::string::npos) << r.err;
	EXPECT_EQ(occurrences(r.err, "\n"), 1) << r.err;
}

} // namespace

TEST(Inputs, FifosAreRefusedWithoutBlocking)
{
	TempDir d;
	std::string fifo = d.file("fifo"), t = d.file("t.trace"), e = d.file("e.expect");
	ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
	write_small_trace(t);
	std::ofstream(e) << "no-drops\n";
	// Files read before KVM is touched.
	expect_fifo_refused({ "report", fifo }, fifo);
	expect_fifo_refused({ "check", fifo, "--expect", e }, fifo);
	expect_fifo_refused({ "check", t, "--expect", fifo }, fifo);
	expect_fifo_refused({ "sites", "--kernel", fifo }, fifo);
	expect_fifo_refused({ "sites", "--kernel", image("x86_64"), "--symbols", fifo }, fifo);
	expect_fifo_refused({ "trace", "--kernel", image("x86_64"), "--expect", fifo }, fifo);
}

TEST(Inputs, FifosAreRefusedWithoutBlockingByARun)
{
	REQUIRE_KVM();
	TempDir d;
	std::string fifo = d.file("fifo");
	ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
	expect_fifo_refused({ "run", "--kernel", fifo, "--mem", "16M" }, fifo);
	expect_fifo_refused({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--initrd", fifo },
			    fifo);
	expect_fifo_refused({ "trace", "--kernel", image("x86_64"), "--mem", "16M", "--symbols",
			      fifo, "-o", d.file("t.trace") },
			    fifo);
}

// /proc/version says it is 0 bytes long and is not: it arrives whole (the
// test kernel prints a module's first bytes).
TEST(Inputs, ProcFileAsInitrdIsReadToItsEnd)
{
	REQUIRE_KVM();
	std::string version = read_file_text("/proc/version");
	ASSERT_GE(version.size(), 16u);
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--initrd",
				"/proc/version", "--append", "exit=0", "--timeout", "30" });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("modules: 1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("first=" + version.substr(0, 16)), std::string::npos) << r.out;
}

// An empty initrd is a mistake, not an empty module.
TEST(Inputs, EmptyInitrdIsRefused)
{
	REQUIRE_KVM();
	TempDir d;
	std::string empty = d.file("empty.cpio");
	std::ofstream(empty).close();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--initrd", empty });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_NE(r.err.find("initrd " + empty + " is empty"), std::string::npos) << r.err;
}
