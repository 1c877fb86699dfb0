// SPDX-License-Identifier: MIT
// How a guest ends a run on purpose: every reset path a PC kernel takes
// (Linux's reboot=k, b, a, p and t, done by the test kernels as Linux does
// them) ends the run cleanly with status 0 and names the path; a panic
// ends it with status 3 once the kernel's panic output is out, or, with
// --on-panic continue, however the guest ends after it. `trace` finishes
// its file with an END that says which.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

struct ResetPath {
	const char *method;   // the test kernel's reset=<method>
	const char *line;     // what the kernel prints before it resets
	const char *detail;   // how earlytrace names the path
};

const ResetPath kPaths[] = {
	{ "kbd", "reset: kbd", "i8042 reset line" },
	{ "bios", "reset: bios", "BIOS reset vector" },
	{ "acpi", "reset: acpi register=0xcf9 value=0x6", "reset control register 0xcf9" },
	{ "cf9", "reset: cf9", "reset control register 0xcf9" },
	{ "triple", "reset: triple", "triple fault on an empty IDT" },
};

// The detail as earlytrace says it on this KVM: a triple fault is only a
// triple fault where the KVM reset the vCPU before anyone could look.
std::string reset_detail(const ResetPath &p)
{
	if (!strcmp(p.method, "triple") && !kvm_shutdown_keeps_state())
		return kTripleFaultStateLost;
	return p.detail;
}

std::string end_reason_of(const std::string &path)
{
	trace_reader *r = nullptr;
	std::string reason = "(no END)";

	if (trace_reader_open(&r, path.c_str()))
		return "(unreadable: " + std::string(et_last_error()) + ")";
	if (trace_reader_info(r)->has_end)
		reason = trace_reader_info(r)->exit_reason;
	trace_reader_close(r);
	return reason;
}

int sh(const std::string &cmd)
{
	int st = system(cmd.c_str());
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

class ResetIn : public ::testing::TestWithParam<std::tuple<const char *, ResetPath>> {};

std::string path_name(const ::testing::TestParamInfo<ResetIn::ParamType> &p)
{
	return std::string(std::get<0>(p.param)) + "_" + std::get<1>(p.param).method;
}

INSTANTIATE_TEST_SUITE_P(Paths, ResetIn,
			 ::testing::Combine(::testing::Values("x86_64", "i386"),
					    ::testing::ValuesIn(kPaths)),
			 path_name);

} // namespace

TEST_P(ResetIn, RunEndsCleanlyAndNamesThePath)
{
	REQUIRE_KVM();
	const char *arch = std::get<0>(GetParam());
	const ResetPath &p = std::get<1>(GetParam());
	VmmResult r = run_vmm({ "run", "--kernel", image(arch), "--mem", "16M", "--append",
				std::string("reset=") + p.method + " exit=9", "--timeout", "60" });
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_NE(r.out.find(std::string("\n") + p.line + "\n"), std::string::npos) << r.out;
	EXPECT_EQ(r.err, std::string("earlytrace: guest reset (") + reset_detail(p) + ")\n");
}

// Traced in both modes (the int3 of reboot=t goes through the tracer's own
// int3 handling in breakpoint mode), the file ends with the path's name.
TEST(ResetTraced, TheTraceIsFinishedAndNamesThePath)
{
	REQUIRE_KVM();
	for (const char *mode : { "int3", "trampoline" }) {
		if (!strcmp(mode, "int3") && !int3_skip_reason().empty())
			continue; // breakpoint mode cannot run here (fixtures.h)
		for (const ResetPath &p : kPaths) {
			TempDir d;
			VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M",
						"--append", std::string("reset=") + p.method,
						"--mode", mode, "--output", d.file("r.trace"),
						"--timeout", "60" });
			EXPECT_EQ(r.status, 0) << mode << " " << p.method << r.err;
			EXPECT_EQ(end_reason_of(d.file("r.trace")),
				  std::string("guest reset (") + reset_detail(p) + ")")
				<< mode << " " << p.method;
			EXPECT_EQ(r.err.find("flight recorder"), std::string::npos) << r.err;
		}
	}
}

// crash=panic-hang behaves as Linux with panic=0: after its message it
// prints the end line and waits forever. The run ends there, status 3.
TEST(Panic, TheRunEndsOnceThePanicOutputIsOut)
{
	REQUIRE_KVM();
	for (const char *arch : { "x86_64", "i386" }) {
		VmmResult r = run_vmm({ "run", "--kernel", image(arch), "--mem", "16M", "--append",
					"crash=panic-hang", "--timeout", "60" });
		EXPECT_EQ(r.status, 3) << arch << r.err;
		const char *msg = "requested on the command line: crash=panic-hang, code -7";
		EXPECT_NE(r.out.find(std::string("Kernel panic - not syncing: ") + msg + "\n"),
			  std::string::npos) << r.out;
		EXPECT_NE(r.out.find(std::string("---[ end Kernel panic - not syncing: ") + msg +
				     " ]---\n"),
			  std::string::npos) << r.out;
		// The message, rendered from panic()'s format and arguments in
		// guest memory.
		EXPECT_EQ(r.err, std::string("earlytrace: the guest kernel panicked: \"") + msg +
					 "\"; the run ends after its panic output (--on-panic exit)\n");
	}
}

// Where debug-register breakpoints do not exit (KVM nested under QEMU's
// TCG), the VMM's own breakpoints are code hooks (vmm/kvm/code_hook.h):
// taken on any KVM here, the panic watch along panic() and --until end
// the runs exactly as with debug registers.
TEST(Panic, CodeHooksStandInForDebugRegisters)
{
	REQUIRE_KVM();
	VmmRun run;
	run.env = { "EARLYTRACE_KVM_TRAITS=no-hw-bp" };
	run.args = { "run", "--kernel", image("x86_64"), "--mem", "16M", "--append",
		     "crash=panic-hang", "--timeout", "60" };
	VmmResult r = run_vmm(run);
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_EQ(r.err, "earlytrace: the guest kernel panicked: \"requested on the command line: "
			 "crash=panic-hang, code -7\"; the run ends after its panic output "
			 "(--on-panic exit)\n");
	EXPECT_NE(r.out.find("---[ end Kernel panic - not syncing: "), std::string::npos) << r.out;

	TempDir d;
	run.args = { "trace", "--kernel", image("x86_64"), "--mem", "32M", "--mode", "trampoline",
		     "-f", "ct_*", "--until", "ct_fib", "--output", d.file("u.trace"),
		     "--timeout", "60" };
	r = run_vmm(run);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out.find("done"), std::string::npos) << "the guest did not finish";
	EXPECT_EQ(end_reason_of(d.file("u.trace")), "trace complete");
	EXPECT_EQ(r.err.find("overwrote the VMM's breakpoint"), std::string::npos) << r.err;
}

// crash=panic behaves as Linux with panic=-1: it resets right after its
// message. The run still ends before the reset, at emergency_restart().
TEST(Panic, TheRunEndsBeforeTheRebootToo)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--append",
				"crash=panic", "--timeout", "60" });
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_NE(r.err.find("; the run ends after its panic output (--on-panic exit)"),
		  std::string::npos) << r.err;
}

TEST(Panic, ContinueLetsTheGuestRebootOrWait)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--append",
				"crash=panic", "--on-panic", "continue", "--timeout", "60" });
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_NE(r.err.find("earlytrace: the guest kernel panicked: \"requested on the command "
			     "line: crash=panic, code 42\"; then guest reset (i8042 reset line)\n"),
		  std::string::npos) << r.err;

	r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--append",
		      "crash=panic-hang", "--on-panic", "continue", "--timeout", "1" });
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_NE(r.out.find("---[ end Kernel panic"), std::string::npos) << r.out;
	EXPECT_NE(r.err.find("\"; then timeout\n"), std::string::npos) << r.err;
}

// A kernel whose symbols name panic() but not console_flush_on_panic():
// the panic is reported, and the run ends however the guest ends after it.
TEST(Panic, WithoutTheFlushSymbolTheRunEndsWhenTheGuestDoes)
{
	REQUIRE_KVM();
	TempDir d;
	std::string elf = d.file("stripped.elf"), map = d.file("System.map");
	ASSERT_EQ(sh("objcopy --strip-all " + image("x86_64") + " " + elf + " && nm -n " +
		     image("x86_64") + " | grep -v ' console_flush_on_panic$' > " + map),
		  0);
	VmmResult r = run_vmm({ "run", "--kernel", elf, "--symbols", map, "--mem", "16M",
				"--append", "crash=panic", "--timeout", "60" });
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_NE(r.err.find("\"; then guest reset (i8042 reset line)\n"), std::string::npos)
		<< r.err;
	r = run_vmm({ "run", "--kernel", elf, "--symbols", map, "--mem", "16M", "--append",
		      "crash=panic-hang", "--timeout", "1" });
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_NE(r.err.find("\"; then timeout\n"), std::string::npos) << r.err;
}

TEST(Panic, TracedTheEndNamesThePanicAndItsMessage)
{
	REQUIRE_KVM();
	for (const char *mode : { "int3", "trampoline" }) {
		if (!strcmp(mode, "int3") && !int3_skip_reason().empty())
			continue; // breakpoint mode cannot run here (fixtures.h)
		TempDir d;
		VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M",
					"--append", "crash=panic-hang", "--mode", mode, "--output",
					d.file("p.trace"), "--timeout", "60" });
		EXPECT_EQ(r.status, 3) << mode << r.err;
		std::string end = end_reason_of(d.file("p.trace"));
		EXPECT_EQ(end.rfind("guest panic: \"requested on the command line: crash=panic-hang, "
				    "code -7\"; panic() called from boot_begin+0x",
				    0),
			  0u)
			<< end;
		EXPECT_NE(end.find("; then the end of its panic output"), std::string::npos) << end;
	}
}
