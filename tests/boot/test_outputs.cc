// SPDX-License-Identifier: MIT
// Outputs never destroy inputs or existing files: an -o that is the same
// file as an input (also through a symlink or a hard link) is refused
// before anything is written; every option is checked before an output is
// touched; report/check/domain-xml write a temporary file next to the
// output and rename it into place; two `trace` runs cannot write one file
// (the first holds a lock on it). docs/reliability.md, "Output files".
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

void write_text(const std::string &path, const std::string &text)
{
	std::ofstream(path) << text;
}

// A refusal: status 1, one "earlytrace:" line naming the reason.
void expect_refused(const VmmResult &r, const std::string &why)
{
	expect_no_crash(r);
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
	EXPECT_EQ(r.err.rfind("earlytrace: ", 0), 0u) << r.err;
	EXPECT_EQ(occurrences(r.err, "\n"), 1) << r.err;
}

} // namespace

// `report T -o T` used to exit 0 and leave an empty trace.
TEST(Outputs, ReportRefusesItsInputAsOutput)
{
	TempDir d;
	std::string t = d.file("t.trace"), link = d.file("link"), hard = d.file("hard");
	write_small_trace(t);
	std::vector<uint8_t> before = read_file_bytes(t);
	ASSERT_EQ(symlink(t.c_str(), link.c_str()), 0);
	ASSERT_EQ(::link(t.c_str(), hard.c_str()), 0);
	for (const auto &out : { t, link, hard }) {
		SCOPED_TRACE(out);
		expect_refused(run_vmm({ "report", t, "-o", out }), "is the same file as the input");
		expect_refused(run_vmm({ "report", link, "--format", "summary", "-o", out }),
			       "is the same file as the input");
		EXPECT_EQ(read_file_bytes(t), before);
	}
	EXPECT_EQ(files_in(d.path), (std::vector<std::string>{ "hard", "link", "t.trace" }));
}

// `check T --expect E -o T` (or -o E) used to empty the file.
TEST(Outputs, CheckRefusesItsInputsAsOutput)
{
	TempDir d;
	std::string t = d.file("t.trace"), e = d.file("e.expect");
	write_small_trace(t);
	write_text(e, "called ct_root\n");
	std::vector<uint8_t> trace = read_file_bytes(t);
	std::string expect = read_file_text(e);
	expect_refused(run_vmm({ "check", t, "--expect", e, "-o", t }),
		       "is the same file as the input");
	expect_refused(run_vmm({ "check", t, "--expect", e, "-o", e }),
		       "is the same file as the input");
	EXPECT_EQ(read_file_bytes(t), trace);
	EXPECT_EQ(read_file_text(e), expect);
	// The same command with another output works.
	VmmResult ok = run_vmm({ "check", t, "--expect", e, "-o", d.file("ktap") });
	EXPECT_EQ(ok.status, 0) << ok.err;
	EXPECT_NE(read_file_text(d.file("ktap")).find("ok 1"), std::string::npos);
}

// report -o replaces the file only when the report is complete: through a
// symlink it writes the file the link leads to (the link stays), and no
// temporary file is left behind, whether it succeeds or fails.
TEST(Outputs, ReportWritesWholeFilesInPlace)
{
	TempDir d;
	std::string t = d.file("t.trace"), out = d.file("out.txt"), link = d.file("out.link");
	write_small_trace(t);
	write_text(out, "old\n");
	ASSERT_EQ(symlink(out.c_str(), link.c_str()), 0);
	VmmResult r = run_vmm({ "report", t, "--format", "csv", "-o", link });
	EXPECT_EQ(r.status, 0) << r.err;
	struct stat st;
	ASSERT_EQ(lstat(link.c_str(), &st), 0);
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	EXPECT_NE(read_file_text(out).find("ct_root"), std::string::npos) << read_file_text(out);
	// A report that fails while writing (past a file size limit: SIGXFSZ
	// at its default action, EFBIG) leaves the old output as it was.
	std::string good = read_file_text(out);
	VmmRun limited;
	limited.args = { "report", t, "--format", "json", "-o", out };
	limited.fsize_limit = 1000;
	expect_refused(run_vmm(limited), "File too large");
	EXPECT_EQ(read_file_text(out), good);
	EXPECT_EQ(files_in(d.path), (std::vector<std::string>{ "out.link", "out.txt", "t.trace" }));
}

// A full device as output is a write error, not a success.
TEST(Outputs, ReportToAFullDeviceFails)
{
	TempDir d;
	std::string t = d.file("t.trace");
	write_small_trace(t);
	VmmResult r = run_vmm({ "report", t, "-o", "/dev/full" });
	expect_refused(r, "No space left on device");
}

// `trace -o FILE` with a typo in --until must not have replaced FILE when
// it refuses the option; nor may the output be the kernel it boots.
TEST(Outputs, TraceChecksEverythingBeforeTouchingItsOutput)
{
	REQUIRE_KVM();
	TempDir d;
	std::string out = d.file("keep.trace"), kernel = d.file("kernel.elf");
	write_text(out, "precious\n");
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--until",
				"no_such_function", "-o", out });
	expect_refused(r, "--until: no symbol 'no_such_function'");
	EXPECT_EQ(read_file_text(out), "precious\n");

	std::vector<uint8_t> img = read_file_bytes(image("x86_64"));
	std::ofstream(kernel, std::ios::binary).write((const char *)img.data(), (long)img.size());
	expect_refused(run_vmm({ "trace", "--kernel", kernel, "-o", kernel }),
		       "is the same file as the input");
	EXPECT_EQ(read_file_bytes(kernel), img);
}

// Two runs writing the same -o: the second refuses to start while the
// first writes, and the first's file is whole (END, exact counts).
TEST(Outputs, SecondTraceRunOnTheSameFileIsRefused)
{
	REQUIRE_KVM();
	TempDir d;
	std::string out = d.file("shared.trace");
	VmmRun first;
	first.args = { "trace",	   "--kernel", image("x86_64"), "--mem",	 "32M",
		       "--mode",   busiest_trace_mode(), "--filter",	    "ct_*",	 "--timeout",
		       "60",	   "--append", "repeat=100000", "--output", out };
	first.wait_for = "modules: ";
	first.send_signal = SIGTERM;
	first.signal_delay_s = 3;
	VmmResult a;
	std::thread runner([&] { a = run_vmm(first); });
	// Once the first run writes events, start the second.
	struct stat st {};
	for (int i = 0; i < 200 && (stat(out.c_str(), &st) || st.st_size < 4096); i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	VmmResult b = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--filter",
				"ct_*", "--timeout", "60", "--append", "exit=0", "--output", out });
	runner.join();
	expect_refused(b, "is being written by another earlytrace run");
	EXPECT_EQ(a.status, 128 + SIGTERM) << a.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	ASSERT_TRUE(t.has_end);
	EXPECT_EQ(t.end_written, t.events);
	EXPECT_GT(t.events, 100u);
}
