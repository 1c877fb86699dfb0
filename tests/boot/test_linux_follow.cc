// SPDX-License-Identifier: MIT
// trace --follow on Debian's stock cloud kernel: earlytrace's own calls
// until the handoff, then the kernel's ftrace ring read from guest memory,
// in one file; checked against the kernel's own dump of that ring.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/tracefile/trace_file.h"

namespace {

const double kTimeout = 1200; // seconds, for the slowest (nested) hosts

struct Call {
	std::string fn, parent;
	bool operator==(const Call &o) const { return fn == o.fn && parent == o.parent; }
};

std::ostream &operator<<(std::ostream &os, const Call &c)
{
	return os << c.fn << " <-" << c.parent;
}

// The events of ftrace_dump_on_oops on the console: the lines between
// "Dumping ftrace buffer:" and the closing dashes, "FUNC <-PARENT" at the
// end of each (after printk's time, the task, CPU, flags and time).
std::vector<Call> kernel_dump(const std::string &console)
{
	std::vector<Call> calls;
	size_t at = console.find("Dumping ftrace buffer:");
	if (at == std::string::npos)
		return calls;
	std::istringstream in(console.substr(at));
	std::string line;
	int dashes = 0;
	const std::regex call(": (\\S+) <-(\\S+)\\s*$");
	while (std::getline(in, line) && dashes < 2) {
		if (line.find("---------------------------------") != std::string::npos) {
			dashes++;
			continue;
		}
		std::smatch m;
		if (dashes == 1 && std::regex_search(line, m, call))
			calls.push_back({ m[1], m[2] });
	}
	return calls;
}

// The calls of a --follow trace in file order, named: earlytrace's own
// (before the handoff) and the kernel's (read from its ftrace ring).
struct FollowTrace {
	std::vector<Call> early, kernel;
	size_t early_after_kernel = 0; // own calls filed after a kernel call
	bool ordered = true;	       // the TSC never goes back
	uint64_t nr_ftrace = 0, dropped = 0;
	std::string state, marks;
};

FollowTrace read_follow_trace(const std::string &path)
{
	FollowTrace t;
	struct trace_reader *reader = nullptr;
	if (trace_reader_open(&reader, path.c_str()) != 0) {
		ADD_FAILURE() << et_last_error();
		return t;
	}
	const struct symtab *tab = trace_reader_symtab(reader);
	auto name = [tab](uint64_t ip) {
		const struct symbol *s = symtab_lookup(tab, ip, nullptr);
		return std::string(s ? s->name : "?");
	};
	uint64_t last_tsc = 0;
	struct trace_record rec;
	while (trace_reader_next(reader, &rec) == 1) {
		if (rec.type != TRACE_REC_EVENTS)
			continue;
		for (size_t i = 0; i < rec.nr_events; i++) {
			const et_ring_record &e = rec.events[i];
			if (et_rec_kind(&e) != ET_REC_CALL)
				continue;
			t.ordered &= e.tsc >= last_tsc;
			last_tsc = e.tsc;
			Call c{ name(e.ip), name(e.parent_ip) };
			if (e.flags & ET_REC_F_FTRACE) {
				t.kernel.push_back(c);
			} else {
				t.early.push_back(c);
				t.early_after_kernel += !t.kernel.empty();
			}
		}
	}
	const struct trace_info *info = trace_reader_info(reader);
	t.nr_ftrace = info->nr_ftrace;
	t.dropped = info->dropped;
	size_t nr_notes = 0;
	const struct trace_note *notes = trace_reader_notes(reader, &nr_notes);
	for (size_t i = 0; i < nr_notes; i++)
		t.marks += std::string(notes[i].text) + "\n";
	char state_buf[256];
	t.state = trace_reader_state(reader, state_buf, sizeof(state_buf));
	trace_reader_close(reader);
	return t;
}

bool has_call(const std::vector<Call> &calls, const std::string &fn)
{
	for (const Call &c : calls)
		if (c.fn == fn)
			return true;
	return false;
}

} // namespace

// The NMI (--nmi-at) panics the kernel at trace_init, where its function
// tracer has run since early_trace_init; ftrace_dump_on_oops prints its
// ring on the early console; earlytrace read the same ring from memory at
// panic(). The two must agree call for call, and the earlier calls must
// be earlytrace's own, before the handoff, in time order.
TEST(LinuxFollow, KernelRingAgreesWithTheKernelsOwnDump)
{
	REQUIRE_KVM();
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	if (!file_exists(vmlinuz))
		GTEST_SKIP() << vmlinuz << " is missing: run images/fetch-debian-kernel.sh";
	TempDir d;
	std::string out = d.file("follow.trace");
	VmmRun run;
	run.args = { "trace", "--kernel", vmlinuz, "--mem", "256M", "--append",
		     "console=ttyS0 earlycon=uart8250,io,0x3f8 unknown_nmi_panic "
		     "ftrace_dump_on_oops panic=-1",
		     "--follow", "-f", "*_init", "--nmi-at", "trace_init", "--output", out,
		     "--timeout", std::to_string((int)kTimeout) };
	run.harness_timeout_s = kTimeout + 60;
	VmmResult r = run_vmm(run);
	ASSERT_EQ(r.status, 3) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_NE(r.err.find("ftrace=function"), std::string::npos) << r.err;
	EXPECT_NE(r.out.find("NMI: Not continuing"), std::string::npos);
	std::vector<Call> dump = kernel_dump(r.out);
	ASSERT_GE(dump.size(), 10u) << r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0);

	FollowTrace t = read_follow_trace(out);
	// earlytrace's own, from the first instruction: the filter selects a few
	// dozen functions before ftrace_init (73 on 6.1.0-56), among them the
	// two start_kernel calls just before it.
	EXPECT_GE(t.early.size(), 20u);
	EXPECT_TRUE(has_call(t.early, "trap_init")) << t.early.size();
	EXPECT_TRUE(has_call(t.early, "mm_init")) << t.early.size();
	EXPECT_EQ(t.early_after_kernel, 0u); // then the kernel's, after the handoff
	EXPECT_TRUE(t.ordered);		     // one clock: the TSC, in both
	EXPECT_EQ(t.dropped, 0u);
	EXPECT_EQ(t.nr_ftrace, t.kernel.size());
	EXPECT_EQ(t.kernel, dump);
	EXPECT_NE(t.marks.find("follow: blind window of"), std::string::npos) << t.marks;
	EXPECT_NE(t.marks.find("NMI sent at trace_init (--nmi-at)"), std::string::npos) << t.marks;
}

// Every end reads the kernel's ring, --timeout too: the kernel boots
// (towards an /init that would wait for a shell's input) until --timeout
// ends the run, wherever it got to (how far depends on the host's speed);
// the trace then holds the kernel's calls up to that moment (90 s; on
// kvm-pvm 600, and only with EARLYTRACE_SLOW_TESTS=1).
TEST(LinuxFollow, TimeoutKeepsTheKernelsEventsUpToThatMoment)
{
	REQUIRE_KVM();
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	if (!file_exists(vmlinuz) || !file_exists(initramfs_path()))
		GTEST_SKIP() << "needs images/fetch-debian-kernel.sh and images/make-initramfs.sh";
	if (std::string why = stock_boot_skip_reason("a stock-kernel boot to /init"); !why.empty())
		GTEST_SKIP() << why;
	// Long enough to reach /init: seconds where stock kernels boot fast,
	// minutes on kvm-pvm.
	const int timeout_s = file_exists("/sys/module/kvm_pvm") ? 600 : 90;
	TempDir d;
	std::string out = d.file("follow-timeout.trace");
	VmmRun run;
	run.args = { "trace", "--kernel", vmlinuz, "--initrd", initramfs_path(), "--mem", "256M",
		     "--append", "console=ttyS0 et_init=shell", "--follow", "-f", "*_init",
		     "--output", out, "--timeout", std::to_string(timeout_s) };
	run.harness_timeout_s = timeout_s + 60;
	VmmResult r = run_vmm(run);
	ASSERT_EQ(r.status, 124) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_NE(r.err.find("(--timeout)"), std::string::npos) << r.err;

	FollowTrace t = read_follow_trace(out);
	EXPECT_NE(t.state.find("timeout"), std::string::npos) << t.state;
	EXPECT_TRUE(t.ordered);
	EXPECT_EQ(t.dropped, 0u);
	// The kernel's calls from the whole boot: start_kernel's rcu_init (just
	// after the tracer started; kernel/trace/ itself is never traced), then
	// kernel_init and driver_init in the first task, later.
	EXPECT_EQ(t.nr_ftrace, t.kernel.size());
	EXPECT_GT(t.kernel.size(), 1000u);
	for (const char *fn : { "rcu_init", "kernel_init", "driver_init" })
		EXPECT_TRUE(has_call(t.kernel, fn)) << fn << " of " << t.kernel.size();
}

// A boot that hangs in an initcall still has the kernel's events up to
// the hang: the NMI (--nmi-at) panics the kernel at the start of an early
// initcall, panic=0 leaves it spinning there (--on-panic continue lets it),
// and --hang-timeout ends the run, reading the ring once more (the status
// is the panic's, the root cause). The
// timeout is long because ftrace_init's own work (converting every site,
// tens of seconds of emulated code here) records nothing either: a
// shorter one ends the run as hung there. Minutes here: behind the
// slow-test switch.
TEST(LinuxFollow, HangInAnInitcallKeepsTheKernelsEventsUpToTheHang)
{
	REQUIRE_KVM();
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	if (!file_exists(vmlinuz))
		GTEST_SKIP() << vmlinuz << " is missing: run images/fetch-debian-kernel.sh";
	if (std::string why = stock_boot_skip_reason("a stock-kernel boot to its initcalls"); !why.empty())
		GTEST_SKIP() << why;
	TempDir d;
	std::string out = d.file("follow-hang.trace");
	VmmRun run;
	run.args = { "trace", "--kernel", vmlinuz, "--mem", "256M", "--append",
		     "console=ttyS0 unknown_nmi_panic panic=0", "--follow", "-f", "*_init",
		     "--nmi-at", "spawn_ksoftirqd", "--on-panic", "continue", "--hang-timeout", "120",
		     "--output", out, "--timeout", std::to_string((int)kTimeout) };
	run.harness_timeout_s = kTimeout + 60;
	VmmResult r = run_vmm(run);
	// The panic is the root cause (status 3); the hang ended the run.
	ASSERT_EQ(r.status, 3) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_NE(r.err.find("hang: no new event for 120 s (--hang-timeout)"), std::string::npos) << r.err;
	EXPECT_NE(r.out.find("Kernel panic - not syncing: NMI: Not continuing"), std::string::npos);

	FollowTrace t = read_follow_trace(out);
	EXPECT_NE(t.state.find("guest panic: \"NMI: Not continuing\""), std::string::npos) << t.state;
	EXPECT_NE(t.state.find("; then hang"), std::string::npos) << t.state;
	EXPECT_TRUE(t.ordered);
	EXPECT_EQ(t.dropped, 0u);
	EXPECT_EQ(t.nr_ftrace, t.kernel.size());
	// From the tracer's start in start_kernel to the initcalls: rcu_init
	// early, then kernel_init's first initcalls before the NMI.
	EXPECT_TRUE(has_call(t.kernel, "rcu_init")) << t.kernel.size();
	EXPECT_NE(t.marks.find("NMI sent at spawn_ksoftirqd (--nmi-at)"), std::string::npos) << t.marks;
}
