// SPDX-License-Identifier: MIT
// Signals: every signal that ends a process by default and can be caught
// ends a traced run instead, with END in the trace file (exact counts), one
// line on stderr saying which signal and the shell's status 128 + N; a
// temporary trace file is removed. SIGXFSZ is a file size limit, handled as
// a full disk (FaultInMode.FileSizeLimitWhileTracing). The harness starts
// the VMM with every signal at its default action (vmm_process.cc), so
// nothing here is masked. docs/reliability.md lists the guarantees.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

std::vector<std::string> trace_args(const std::string &out, const std::string &append)
{
	std::vector<std::string> a = { "trace",	   "--kernel", image("x86_64"), "--mem", "32M",
				       "--mode",   busiest_trace_mode(), "--filter", "ct_*",
				       "--timeout", "60",	   "--append", append };
	if (!out.empty())
		a.insert(a.end(), { "--output", out });
	return a;
}

// The file ends with END naming the signal, every event accounted for, and
// the summary's count equal to END's.
void expect_finished_by(const VmmResult &r, const std::string &out, int sig,
			const std::string &end_reason)
{
	expect_no_sanitizer_report(r);
	EXPECT_FALSE(r.timed_out);
	EXPECT_EQ(r.status, 128 + sig) << r.err;
	EXPECT_NE(r.err.find("earlytrace: stopped by signal " + std::to_string(sig) + " ("),
		  std::string::npos)
		<< r.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	ASSERT_TRUE(t.has_end) << t.state;
	EXPECT_EQ(t.exit_reason.rfind(end_reason, 0), 0u) << t.exit_reason;
	EXPECT_EQ(t.end_written, t.events);
	EXPECT_EQ(t.end_written + t.end_dropped + t.end_lost, t.end_recorded);
	expect_nothing_lost_but_a_full_buffer(t);
	std::smatch m;
	ASSERT_TRUE(std::regex_search(r.err, m, std::regex("earlytrace: trace: (\\d+) events")))
		<< r.err;
	EXPECT_EQ(std::stoull(m[1]), t.end_recorded);
}

VmmResult signal_midway(const std::string &out, int sig)
{
	VmmRun run;
	run.args = trace_args(out, "repeat=100000");
	run.wait_for = "modules: "; // the last line before the call tree
	run.send_signal = sig;
	run.signal_delay_s = 0.5;
	return run_vmm(run);
}

// The console's reader goes away while the call tree runs: the guest's
// next line raises SIGPIPE.
VmmRun console_reader_leaves(const std::string &out)
{
	VmmRun run;
	run.args = trace_args(out, "repeat=20 exit=0");
	run.wait_for = "modules: ";
	run.close_stdout = true;
	return run;
}

} // namespace

// `earlytrace trace ... -o t | head -c 10`: status 141 and a line that
// says so, not a silent death without END.
TEST(Signals, ClosedConsolePipeFinishesTheTrace)
{
	REQUIRE_KVM();
	std::string out = temp_path("sigpipe.trace");
	VmmResult r = run_vmm(console_reader_leaves(out));
	expect_finished_by(r, out, SIGPIPE, "signal (SIGPIPE");
	EXPECT_NE(r.err.find("the console's reader went away"), std::string::npos) << r.err;
	remove(out.c_str());
}

// The same without -o: the temporary trace file is removed (and nothing
// is printed to the pipe nobody reads).
TEST(Signals, ClosedConsolePipeLeavesNoTemporaryFile)
{
	REQUIRE_KVM();
	TempDir tmp;
	VmmRun run = console_reader_leaves("");
	run.env = { "TMPDIR=" + tmp.path };
	VmmResult r = run_vmm(run);
	expect_no_sanitizer_report(r);
	EXPECT_EQ(r.status, 128 + SIGPIPE) << r.err;
	EXPECT_NE(r.err.find("earlytrace: stopped by signal 13 (SIGPIPE"), std::string::npos)
		<< r.err;
	EXPECT_EQ(files_in(tmp.path), std::vector<std::string>{});
}

// A SIGALRM from kill(1) is not --timeout's timer: the run says which it
// was, with and without a --timeout.
TEST(Signals, ExternalSigalrmIsNotATimeout)
{
	REQUIRE_KVM();
	std::string out = temp_path("sigalrm.trace");
	VmmResult r = signal_midway(out, SIGALRM);
	expect_finished_by(r, out, SIGALRM, "signal (SIGALRM");
	EXPECT_EQ(r.err.find("--timeout)"), std::string::npos) << r.err;
	remove(out.c_str());
}

// Every other catchable signal whose default would end the process.
TEST(Signals, EveryEndingSignalFinishesTheTrace)
{
	REQUIRE_KVM();
	for (int sig : { SIGHUP, SIGQUIT, SIGUSR2, SIGXCPU, SIGPWR }) {
		SCOPED_TRACE("signal " + std::to_string(sig));
		std::string out = temp_path("signal.trace");
		VmmResult r = signal_midway(out, sig);
		expect_finished_by(r, out, sig, "signal (SIG");
		remove(out.c_str());
	}
}

// Without -o, SIGTERM leaves no temporary file either.
TEST(Signals, SigtermLeavesNoTemporaryFile)
{
	REQUIRE_KVM();
	TempDir tmp;
	VmmRun run;
	run.args = trace_args("", "repeat=100000");
	run.env = { "TMPDIR=" + tmp.path };
	run.wait_for = "modules: ";
	run.send_signal = SIGTERM;
	run.signal_delay_s = 0.5;
	VmmResult r = run_vmm(run);
	expect_no_sanitizer_report(r);
	EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
	EXPECT_EQ(files_in(tmp.path), std::vector<std::string>{});
}
