// SPDX-License-Identifier: MIT
// The flight recorder: every way the test kernel can end badly (a triple
// fault, an instruction KVM cannot emulate, a busy loop, a halt with
// interrupts off, panic()) prints the last events, the registers and the
// instruction at rip, and the call stack from the trace; and the trace
// file is finished with an END that names the end.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

struct Ending {
	VmmResult r;
	std::string end_reason; // END's, "" when the file has none
	bool readable = false;
	uint64_t events = 0;
	int last_kind = 0;
};

Ending end_with(const std::string &crash, std::vector<std::string> extra)
{
	TempDir d;
	std::string out = d.file("end.trace");
	std::vector<std::string> args = { "trace", "--kernel", image("x86_64"), "--mem", "32M",
					  "--append", "crash=" + crash, "--output", out,
					  "--timeout", "60" };
	args.insert(args.end(), extra.begin(), extra.end());
	Ending e;
	e.r = run_vmm(args);
	trace_reader *r = nullptr;
	if (trace_reader_open(&r, out.c_str()) == 0) {
		const trace_info *in = trace_reader_info(r);
		e.readable = true;
		e.events = in->nr_events;
		if (in->has_end)
			e.end_reason = in->exit_reason;
		trace_record rec;
		while (trace_reader_next(r, &rec) == 1)
			if (rec.nr_events)
				e.last_kind = (int)et_rec_kind(&rec.events[rec.nr_events - 1]);
		trace_reader_close(r);
	}
	return e;
}

size_t count(const std::string &s, const std::regex &re)
{
	return (size_t)std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator());
}

// What every report has: the events and a stack ending in boot_begin's call.
void expect_report(const Ending &e, const std::string &why, const char *fn, size_t tail)
{
	const std::string &err = e.r.err;
	EXPECT_NE(err.find("earlytrace: flight recorder: " + why), std::string::npos) << err;
	EXPECT_EQ(count(err, std::regex("\n +-[0-9.]+ us \\[000\\] (call|exit|return) ")), tail) << err;
	EXPECT_NE(err.find("    #0  " + std::string(fn) + "+0x"), std::string::npos) << err;
	EXPECT_TRUE(std::regex_search(err, std::regex("#1  boot_begin\\+0x[0-9a-f]+ +(called " +
						      std::string(fn) + "|the return address at rsp)")))
		<< err;
	EXPECT_TRUE(std::regex_search(err, std::regex("#2  boot_main\\+0x[0-9a-f]+ +called boot_begin")))
		<< err;
	// The trace file is finished and says how.
	EXPECT_TRUE(e.readable);
	EXPECT_GT(e.events, 100u);
	EXPECT_EQ(e.end_reason.rfind(why, 0), 0u) << e.end_reason;
}

class FlightRecorder : public ::testing::TestWithParam<const char *> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Modes, FlightRecorder, ::testing::Values("int3", "trampoline"));

} // namespace

TEST_P(FlightRecorder, TripleFault)
{
	REQUIRE_KVM();
	Ending e = end_with("triple", { "--mode", GetParam(), "--tail", "7" });
	if (!kvm_shutdown_keeps_state()) {
		// A reset with nothing to report, the trace finished all the same.
		EXPECT_EQ(e.r.status, 0) << e.r.err;
		EXPECT_EQ(e.end_reason, std::string("guest reset (") + kTripleFaultStateLost + ")");
		EXPECT_EQ(e.last_kind, ET_REC_SHUTDOWN);
		return;
	}
	EXPECT_EQ(e.r.status, 2) << e.r.err;
	// The crash report has the registers and the instruction; the flight
	// recorder adds what led there.
	EXPECT_NE(e.r.err.find("code: ffffffff8"), std::string::npos) << e.r.err;
	expect_report(e, "guest crash: triple fault (KVM_EXIT_SHUTDOWN)", "machine_triple_fault", 7);
	EXPECT_NE(e.r.err.find("exit   shutdown (triple fault) in machine_triple_fault+0x"),
		  std::string::npos)
		<< e.r.err;
	EXPECT_NE(e.r.err.find("call   machine_triple_fault <-boot_begin+0x"), std::string::npos)
		<< e.r.err;
	EXPECT_EQ(e.last_kind, ET_REC_SHUTDOWN);
}

TEST_P(FlightRecorder, InternalError)
{
	REQUIRE_KVM();
	Ending e = end_with("internal", { "--mode", GetParam() });
	if (e.r.status == 0)
		GTEST_SKIP() << "this KVM emulated fild on MMIO";
	EXPECT_EQ(e.r.status, 2) << e.r.err;
	EXPECT_NE(e.r.err.find("<machine_unemulatable+0x"), std::string::npos) << e.r.err;
	expect_report(e, "guest crash: KVM internal error (KVM_EXIT_INTERNAL_ERROR)",
		      "machine_unemulatable", 50);
}

TEST_P(FlightRecorder, BusyLoopWithNoExitsIsAHang)
{
	REQUIRE_KVM();
	Ending e = end_with("hang-loop", { "--mode", GetParam(), "--hang-timeout", "1" });
	EXPECT_EQ(e.r.status, 124) << e.r.err;
	expect_report(e, "hang: no new event for 1 s", "machine_spin", 50);
	// Registers and the instruction at rip come with a hang's report.
	EXPECT_NE(e.r.err.find("\n  rip=ffffffff8"), std::string::npos) << e.r.err;
	EXPECT_NE(e.r.err.find("<machine_spin+0x"), std::string::npos) << e.r.err;
	EXPECT_EQ(e.r.err.find("guest stopped"), std::string::npos) << e.r.err;
}

TEST_P(FlightRecorder, HaltWithInterruptsOffIsAHang)
{
	REQUIRE_KVM();
	Ending e = end_with("hlt", { "--mode", GetParam(), "--hang-timeout", "1", "--tail", "3" });
	EXPECT_EQ(e.r.status, 124) << e.r.err;
	expect_report(e, "hang: no new event for 1 s", "machine_hang", 3);
	EXPECT_NE(e.r.err.find("the vCPU is halted (HLT)"), std::string::npos) << e.r.err;
}

TEST_P(FlightRecorder, GuestPanic)
{
	REQUIRE_KVM();
	Ending e = end_with("panic", { "--mode", GetParam() });
	EXPECT_EQ(e.r.status, 3) << e.r.err;
	// Reported when panic() is entered, with its message; the guest then
	// prints it, and the run ends when the output is done.
	EXPECT_TRUE(std::regex_search(e.r.err, std::regex("flight recorder: guest panic: \"requested "
							  "on the command line: crash=panic, code "
							  "42\"; panic\\(\\) called from "
							  "boot_begin\\+0x")))
		<< e.r.err;
	// At panic(), or just past its entry site where the KVM has no
	// debug registers (vmm/kvm/code_hook.h).
	EXPECT_TRUE(std::regex_search(e.r.err, std::regex("    #0  panic(\\+0x5)? ")))
		<< e.r.err;
	EXPECT_NE(e.r.err.find("\n  rip=ffffffff8"), std::string::npos) << e.r.err;
	EXPECT_NE(e.r.out.find("Kernel panic - not syncing"), std::string::npos) << e.r.out;
	EXPECT_TRUE(std::regex_search(e.end_reason, std::regex("^guest panic: \".+\"; panic\\(\\) "
							     "called from boot_begin\\+0x[0-9a-f]+; "
							     "then the end of its panic output$")))
		<< e.end_reason;
}

// No --hang-timeout: a run that is merely slow is not a hang.
TEST(FlightRecorderOptions, NoReportOnAGoodRunAndBadOptions)
{
	REQUIRE_KVM();
	TempDir d;
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--hang-timeout",
				"30", "--output", d.file("ok.trace"), "--timeout", "60" });
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.err.find("flight recorder"), std::string::npos) << r.err;
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--tail", "0" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--tail: invalid count '0'"), std::string::npos) << r.err;
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--hang-timeout", "soon" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--hang-timeout:"), std::string::npos) << r.err;
}
