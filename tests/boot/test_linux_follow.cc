// SPDX-License-Identifier: MIT
// trace --follow on Debian's stock cloud kernel: earlytrace's own calls
// until the handoff, then the kernel's ftrace ring read from guest memory,
// in one file; checked against the kernel's own dump of that ring.
#include <gtest/gtest.h>

#include <algorithm>
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

// The function tracer's lines in the kernel's own text (ftrace_dump_on_oops
// on the console, or tracefs's trace file): "... TS: FUNC <-PARENT" at the
// end of each line. With trace_clock=x86-tsc TS counts TSC cycles: from
// the buffer's start in the dump's latency format (negative for what came
// before it, as the early calls did), absolute in tracefs's trace file.
struct KernelText {
	std::vector<Call> calls;
	std::vector<int64_t> ts;
};

void parse_call_line(const std::string &line, KernelText &k)
{
	static const std::regex call("\\s(-?\\d+): (\\S+) <-(\\S+)\\s*$");
	std::smatch m;
	if (std::regex_search(line, m, call)) {
		k.calls.push_back({ m[2], m[3] });
		k.ts.push_back(std::stoll(m[1]));
	}
}

// The events of ftrace_dump_on_oops on the console: the lines between
// "Dumping ftrace buffer:" and the closing dashes.
KernelText kernel_dump(const std::string &console)
{
	KernelText k;
	size_t at = console.find("Dumping ftrace buffer:");
	if (at == std::string::npos)
		return k;
	std::istringstream in(console.substr(at));
	std::string line;
	int dashes = 0;
	while (std::getline(in, line) && dashes < 2) {
		if (line.find("---------------------------------") != std::string::npos) {
			dashes++;
			continue;
		}
		if (dashes == 1)
			parse_call_line(line, k);
	}
	return k;
}

// The lines /init printed from /sys/kernel/tracing/trace (et_init=tracefs).
KernelText tracefs_lines(const std::string &console)
{
	KernelText k;
	size_t begin = console.find("EARLYTRACE-TRACEFS-BEGIN");
	size_t end = console.find("EARLYTRACE-TRACEFS-END");
	if (begin == std::string::npos || end == std::string::npos || end < begin)
		return k;
	std::istringstream in(console.substr(begin, end - begin));
	std::string line;
	while (std::getline(in, line))
		parse_call_line(line, k);
	return k;
}

// The calls of a --follow trace in file order, named: earlytrace's own
// (before the handoff) and the kernel's (read from its ftrace ring).
struct FollowTrace {
	std::vector<Call> early, kernel;
	std::vector<uint64_t> early_tsc;
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
				t.early_tsc.push_back(e.tsc);
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


// Debian's kernel followed with -f '*_init' until an NMI at trace_init
// panics it, and ftrace_dump_on_oops prints its ring on the console.
VmmResult follow_to_dump(const std::string &vmlinuz, const std::string &out,
			 const std::vector<std::string> &extra)
{
	VmmRun run;
	run.args = { "trace", "--kernel", vmlinuz, "--mem", "256M", "--append",
		     "console=ttyS0 earlycon=uart8250,io,0x3f8 unknown_nmi_panic "
		     "ftrace_dump_on_oops panic=-1",
		     "--follow", "-f", "*_init", "--nmi-at", "trace_init", "--output", out,
		     "--timeout", std::to_string((int)kTimeout) };
	run.args.insert(run.args.end(), extra.begin(), extra.end());
	run.harness_timeout_s = kTimeout + 60;
	return run_vmm(run);
}

// The kernel's own text shows earlytrace's early calls first: the same
// calls, in order, with the times earlytrace recorded (TSC cycles on both
// sides, so the same gaps between them), ascending into the kernel's own
// calls.
void expect_early_calls_first(const KernelText &k, const FollowTrace &t, size_t kernel_calls)
{
	ASSERT_GE(k.calls.size(), t.early.size());
	ASSERT_FALSE(t.early.empty());
	std::vector<Call> head(k.calls.begin(), k.calls.begin() + (ptrdiff_t)t.early.size());
	EXPECT_EQ(head, t.early);
	std::vector<int64_t> gaps, want;
	for (size_t i = 1; i < t.early.size(); i++) {
		gaps.push_back(k.ts[i] - k.ts[0]);
		want.push_back((int64_t)(t.early_tsc[i] - t.early_tsc[0]));
	}
	EXPECT_EQ(gaps, want);
	EXPECT_TRUE(std::is_sorted(k.ts.begin(), k.ts.end()));
	if (kernel_calls) {
		EXPECT_GT(k.calls.size(), t.early.size()) << "no kernel call after the early ones";
	}
}

} // namespace

// The NMI (--nmi-at) panics the kernel at trace_init, where its function
// tracer has run since early_trace_init; ftrace_dump_on_oops prints its
// ring on the early console; earlytrace read the same ring from memory at
// panic(). The ring begins with earlytrace's own calls from before the
// handoff (the fill), call for call and with their times, then the
// kernel's own calls, which must equal what earlytrace read, with
// nothing dropped and none read twice.
TEST(LinuxFollow, KernelRingAgreesWithTheKernelsOwnDump)
{
	REQUIRE_KVM();
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	if (!file_exists(vmlinuz))
		GTEST_SKIP() << vmlinuz << " is missing: run images/fetch-debian-kernel.sh";
	TempDir d;
	std::string out = d.file("follow.trace");
	VmmResult r = follow_to_dump(vmlinuz, out, {});
	ASSERT_EQ(r.status, 3) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	EXPECT_NE(r.err.find("ftrace=function"), std::string::npos) << r.err;
	EXPECT_NE(r.out.find("NMI: Not continuing"), std::string::npos);
	KernelText dump = kernel_dump(r.out);
	ASSERT_GE(dump.calls.size(), 10u) << r.out.substr(r.out.size() > 6000 ? r.out.size() - 6000 : 0);

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
	EXPECT_NE(t.marks.find("follow: " + std::to_string(t.early.size()) +
			       " early calls written into the kernel's ftrace ring"),
		  std::string::npos)
		<< t.marks;
	EXPECT_NE(r.err.find("the early calls: " + std::to_string(t.early.size()) +
			     " written into it, 0 of them too old to fit;"),
		  std::string::npos)
		<< r.err;

	// The kernel's dump: the early calls first, then the kernel's own,
	// which earlytrace read from memory once each (the early ones it
	// wrote are in its file once, as its own).
	expect_early_calls_first(dump, t, 1);
	std::vector<Call> rest(dump.calls.begin() + (ptrdiff_t)std::min(t.early.size(), dump.calls.size()),
			       dump.calls.end());
	EXPECT_EQ(t.nr_ftrace, t.kernel.size());
	EXPECT_EQ(t.kernel, rest);
	EXPECT_NE(t.marks.find("follow: blind window of"), std::string::npos) << t.marks;
	EXPECT_NE(t.marks.find("NMI sent at trace_init (--nmi-at)"), std::string::npos) << t.marks;
}

// --no-fill: the kernel's ring, and its dump, hold the kernel's own calls
// only, as before the fill; earlytrace's file is the same.
TEST(LinuxFollow, NoFillLeavesTheKernelsRingToTheKernel)
{
	REQUIRE_KVM();
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	if (!file_exists(vmlinuz))
		GTEST_SKIP() << vmlinuz << " is missing: run images/fetch-debian-kernel.sh";
	if (std::string why = stock_boot_skip_reason("a second stock-kernel boot to trace_init");
	    !why.empty())
		GTEST_SKIP() << why;
	TempDir d;
	std::string out = d.file("nofill.trace");
	VmmResult r = follow_to_dump(vmlinuz, out, { "--no-fill" });
	ASSERT_EQ(r.status, 3) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	KernelText dump = kernel_dump(r.out);
	FollowTrace t = read_follow_trace(out);
	EXPECT_GE(t.early.size(), 20u);
	EXPECT_EQ(t.kernel, dump.calls);
	EXPECT_FALSE(has_call(dump.calls, "trap_init")); // an early call, before the handoff
	EXPECT_NE(r.err.find("the early calls: not written into it (--no-fill)"), std::string::npos)
		<< r.err;
}

// Inside the guest: the kernel's own tracefs begins with the early calls.
// A busybox /init reads /sys/kernel/tracing/trace (et_init=tracefs); its
// first calls are earlytrace's from start_kernel on, before ftrace_init,
// with the same gaps between their times (the trace file prints the
// TSC). Needs stock user space (the nested test VM, real VMX/SVM).
TEST(LinuxFollow, TheGuestsOwnTracefsShowsTheEarlyCallsFirst)
{
	REQUIRE_KVM();
	std::string vmlinuz = debian_kernel_dir() + "/vmlinuz";
	if (!file_exists(vmlinuz) || !file_exists(initramfs_path()))
		GTEST_SKIP() << "needs images/fetch-debian-kernel.sh and images/make-initramfs.sh";
	if (std::string why = stock_boot_skip_reason("a stock-kernel boot to /init"); !why.empty())
		GTEST_SKIP() << why;
	TempDir d;
	std::string out = d.file("tracefs.trace");
	VmmRun run;
	run.args = { "trace", "--kernel", vmlinuz, "--initrd", initramfs_path(), "--mem", "256M",
		     "--append", "console=ttyS0 et_init=tracefs", "--follow", "-f", "*_init",
		     // insn_init: 70,000 of the kernel's calls up to /init, none early
		     "-n", "insn_init", "--output", out, "--timeout", std::to_string((int)kTimeout) };
	run.harness_timeout_s = kTimeout + 60;
	VmmResult r = run_vmm(run);
	ASSERT_EQ(r.status, 0) << r.err << r.out.substr(r.out.size() > 3000 ? r.out.size() - 3000 : 0);
	KernelText k = tracefs_lines(r.out);
	FollowTrace t = read_follow_trace(out);
	ASSERT_GE(t.early.size(), 20u);
	EXPECT_TRUE(has_call(t.early, "start_kernel") || has_call(t.early, "trap_init"));
	expect_early_calls_first(k, t, 1);
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
