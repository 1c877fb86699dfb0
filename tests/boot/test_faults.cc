// SPDX-License-Identifier: MIT
// Faults: whatever ends a traced run — a guest triple fault, a hang cut by
// --timeout, SIGINT, SIGTERM, SIGKILL of the VMM, a full disk under the
// trace file — the file is one `earlytrace report` reads, holding every
// call recorded up to the fault, or saying exactly how many it lacks.
// (Full host buffers, in both overflow policies, are tested in
// test_trace.cc: TraceInMode.FullBufferDropsAreCountedExactly.)
// docs/reliability.md lists the guarantees.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

// The order in which the call tree calls its functions (calltree.c), for
// `repeat` rounds: what a ct_* trace must be a prefix of.
void fib(int n, std::vector<std::string> &seq)
{
	seq.push_back("ct_fib");
	if (n < 2)
		return;
	fib(n - 1, seq);
	fib(n - 2, seq);
}

std::vector<std::string> calltree_order(size_t at_least)
{
	std::vector<std::string> seq;
	while (seq.size() < at_least) {
		seq.push_back("ct_root");
		for (int b = 0; b < 8; b++) {
			seq.push_back("ct_branch");
			for (int l = 0; l < 16; l++)
				seq.push_back("ct_leaf");
		}
		fib(8, seq);
	}
	return seq;
}

// The calls are exactly the first calls the guest made, with no gap.
void expect_calltree_prefix(const TraceFile &t)
{
	std::vector<std::string> seq = calltree_order(t.fn.size());
	for (size_t i = 0; i < t.fn.size(); i++)
		ASSERT_EQ(t.fn[i], seq[i]) << "call " << i << " of " << t.fn.size();
}

// Every event the VMM recorded is in the file or counted: by END, or,
// when END could not be written, on stderr.
void expect_accounted(const TraceFile &t)
{
	ASSERT_TRUE(t.has_end) << t.state;
	EXPECT_EQ(t.end_written, t.events);
	EXPECT_EQ(t.end_written + t.end_dropped + t.end_lost, t.end_recorded);
}

class FaultInMode : public ::testing::TestWithParam<const char *> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(GetParam()); }
	std::vector<std::string> args(const std::string &out, const std::string &append,
				      std::vector<std::string> extra = {})
	{
		std::vector<std::string> a = { "trace", "--kernel", image("x86_64"), "--mem", "32M",
					       "--output", out, "--mode", GetParam(), "--append",
					       append };
		if (std::string(GetParam()) == "trampoline")
			a.insert(a.end(), { "--batch-events", "37" });
		a.insert(a.end(), extra.begin(), extra.end());
		return a;
	}
};

INSTANTIATE_TEST_SUITE_P(Fault, FaultInMode, ::testing::Values("int3", "trampoline"));

// A signal some time into a long call tree (repeat=100000 takes minutes).
VmmResult signal_midway(std::vector<std::string> a, int sig)
{
	VmmRun run;
	run.args = std::move(a);
	run.args.insert(run.args.end(), { "--filter", "ct_*", "--timeout", "60" });
	run.wait_for = "modules: "; // the last line before the call tree
	run.send_signal = sig;
	run.signal_delay_s = 1.0;
	return run_vmm(run);
}

} // namespace

// The guest triple-faults (no IDT): status 2 and a crash report; the file
// ends cleanly and its last call is the function that faulted.
TEST_P(FaultInMode, TripleFault)
{
	REQUIRE_KVM();
	std::string out = temp_path("triple.trace");
	VmmResult r = run_vmm(args(out, "crash=triple", { "--timeout", "60" }));
	expect_no_sanitizer_report(r);
	// Where the KVM reset the vCPU first, the machine resets (fixtures.h).
	bool crash = kvm_shutdown_keeps_state();
	EXPECT_EQ(r.status, crash ? 2 : 0) << r.err;
	EXPECT_NE(r.err.find(crash ? "earlytrace: guest stopped: triple fault"
				   : "earlytrace: guest reset (triple fault"),
		  std::string::npos)
		<< r.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	expect_accounted(t);
	EXPECT_EQ(t.exit_reason.rfind(crash ? "guest crash" : "guest reset (triple fault", 0), 0u)
		<< t.exit_reason;
	EXPECT_EQ(t.end_dropped + t.end_lost, 0u);
	ASSERT_FALSE(t.fn.empty());
	EXPECT_EQ(t.fn.back(), "machine_triple_fault");
	EXPECT_EQ(t.parent.back(), "boot_begin");
	EXPECT_EQ(report(out).status, 0);
	remove(out.c_str());
}

// A guest that hangs (cli; hlt) until --timeout: status 124; the file ends
// cleanly and its last call is the function that hung.
TEST_P(FaultInMode, HangCutByTimeout)
{
	REQUIRE_KVM();
	std::string out = temp_path("hang.trace");
	VmmResult r = run_vmm(args(out, "crash=hlt", { "--timeout", "2" }));
	expect_no_sanitizer_report(r);
	EXPECT_EQ(r.status, 124) << r.err;
	EXPECT_NE(r.err.find("guest still running after 2 s (--timeout)"), std::string::npos) << r.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	expect_accounted(t);
	EXPECT_EQ(t.exit_reason.rfind("timeout", 0), 0u) << t.exit_reason;
	ASSERT_FALSE(t.fn.empty());
	EXPECT_EQ(t.fn.back(), "machine_hang");
	EXPECT_EQ(report(out).status, 0);
	remove(out.c_str());
}

// SIGINT and SIGTERM stop the run at once, status 128 + N; the file ends
// cleanly with every call up to then (trampoline mode: the batch in guest
// memory is drained first).
TEST_P(FaultInMode, SigintAndSigterm)
{
	REQUIRE_KVM();
	for (int sig : { SIGINT, SIGTERM }) {
		std::string out = temp_path("signal.trace");
		VmmResult r = signal_midway(args(out, "repeat=100000"), sig);
		expect_no_sanitizer_report(r);
		EXPECT_EQ(r.status, 128 + sig) << r.err;
		EXPECT_NE(r.err.find("earlytrace: stopped by signal " + std::to_string(sig)),
			  std::string::npos)
			<< r.err;
		TraceFile t = load_trace(out);
		ASSERT_EQ(t.error, "");
		expect_accounted(t);
		EXPECT_EQ(t.exit_reason.rfind("signal", 0), 0u) << t.exit_reason;
		expect_nothing_lost_but_a_full_buffer(t);
		EXPECT_GT(t.fn.size(), 100u) << "the signal came too early to test anything";
		expect_calltree_prefix(t);
		std::smatch m;
		ASSERT_TRUE(std::regex_search(r.err, m, std::regex("earlytrace: trace: (\\d+) events")))
			<< r.err;
		EXPECT_EQ(std::stoull(m[1]), t.end_recorded);
		EXPECT_EQ(report(out, "ftrace").status, 0);
		remove(out.c_str());
	}
}

// A flight recorder (--overflow overwrite) keeps its buffer in the VMM
// until the run ends: a SIGTERM still writes it, and counts what it
// overwrote.
TEST_P(FaultInMode, SigtermWritesTheFlightRecorder)
{
	REQUIRE_KVM();
	std::string out = temp_path("flight.trace");
	VmmResult r = signal_midway(args(out, "repeat=100000",
					 { "--overflow", "overwrite", "--buf-size", "3200B" }),
				    SIGTERM);
	expect_no_sanitizer_report(r);
	EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	expect_accounted(t);
	EXPECT_EQ(t.events, 100u);
	EXPECT_GT(t.end_dropped, 0u);
	EXPECT_EQ(t.dropped, t.end_dropped);
	// The newest 100 calls: a window of the call tree's order (which
	// repeats every 816 calls), without a gap.
	std::vector<std::string> seq = calltree_order(816 + 100);
	ASSERT_EQ(t.fn.size(), 100u);
	bool window = false;
	for (size_t at = 0; at < 816 && !window; at++)
		window = std::equal(t.fn.begin(), t.fn.end(), seq.begin() + (long)at);
	EXPECT_TRUE(window);
	remove(out.c_str());
}

// SIGKILL: no chance to finish. The file has no END but reads cleanly,
// and holds the first calls of the call tree without a gap: in breakpoint
// mode every call recorded, in trampoline mode every batch drained (the
// one in guest memory at the kill is lost, as docs/trampolines.md says,
// so the prefix ends at a drain).
TEST_P(FaultInMode, Sigkill)
{
	REQUIRE_KVM();
	std::string out = temp_path("kill.trace");
	VmmResult r = signal_midway(args(out, "repeat=100000"), SIGKILL);
	EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	EXPECT_FALSE(t.has_end);
	EXPECT_NE(t.state.find("did not finish cleanly"), std::string::npos) << t.state;
	EXPECT_GT(t.fn.size(), 100u) << "the signal came too early to test anything";
	expect_calltree_prefix(t);
	VmmResult rep = report(out);
	EXPECT_EQ(rep.status, 0) << rep.err;
	EXPECT_NE(rep.out.find("did not finish cleanly"), std::string::npos) << rep.out;
	remove(out.c_str());
}

// guestlib's ring is read while the guest runs (every --follow-period,
// with the vCPU stopped), not only at the end: a VMM killed while the
// guest spins after its ring phase has written every call the guest
// recorded, each once.
TEST_P(FaultInMode, SigkillAfterTheHandoffKeepsWhatTheGuestRingHeld)
{
	REQUIRE_KVM();
	std::string out = temp_path("kill-ring.trace");
	VmmRun run;
	run.args = args(out, "trace=ring end=spin", { "--filter", "ct_*", "--timeout", "60" });
	run.wait_for = "\ndone\n"; // the ring phase is over; the guest spins
	run.send_signal = SIGKILL;
	run.signal_delay_s = 1.0; // ten read periods
	VmmResult r = run_vmm(run);
	EXPECT_EQ(r.status, 128 + SIGKILL) << r.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	EXPECT_FALSE(t.has_end);
	// The early phase from the VMM, the ring phase (816 calls of ct_*, and
	// the calls of the guest's own reporting) from the guest's ring.
	EXPECT_GE(t.by_source[ET_REC_SRC_GUEST], 816) << t.state;
	EXPECT_EQ(t.count["ct_leaf"], 2 * 512);
	EXPECT_EQ(t.count["ct_fib"], 2 * 268);
	remove(out.c_str());
}

namespace {

// The trace file fills up: the VMM says so and exits 1; the file holds the
// first calls without a gap and an END that counts what it lacks.
void expect_disk_full(const VmmResult &r, const std::string &out, const char *why)
{
	expect_no_sanitizer_report(r);
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_NE(r.err.find(std::string("write failed at offset")), std::string::npos) << r.err;
	EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
	std::smatch lost, total;
	ASSERT_TRUE(std::regex_search(r.err, lost, std::regex("; (\\d+) events were not stored")))
		<< r.err;
	ASSERT_TRUE(std::regex_search(r.err, total, std::regex("earlytrace: trace: (\\d+) events")))
		<< r.err;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	EXPECT_FALSE(t.truncated);
	expect_accounted(t);
	EXPECT_EQ(t.end_lost, std::stoull(lost[1]));
	EXPECT_GT(t.end_lost, 0u);
	EXPECT_EQ(t.end_recorded, std::stoull(total[1]));
	EXPECT_EQ(t.end_dropped, 0u);
	expect_calltree_prefix(t);
	VmmResult rep = report(out);
	EXPECT_EQ(rep.status, 0) << rep.err;
}

} // namespace

// RLIMIT_FSIZE: writes past 20,000 bytes raise SIGXFSZ, whose default
// would kill the VMM (the harness leaves it at the default); the VMM
// ignores it, so they fail with EFBIG, as on a full disk.
TEST_P(FaultInMode, FileSizeLimitWhileTracing)
{
	REQUIRE_KVM();
	std::string out = temp_path("fsize.trace");
	VmmRun run;
	run.args = args(out, "exit=0", { "--filter", "ct_*", "--timeout", "60" });
	run.fsize_limit = 20000;
	VmmResult r = run_vmm(run);
	expect_disk_full(r, out, "File too large");
	EXPECT_NE(r.out.find("calltree phase=longmode total=816"), std::string::npos)
		<< "the guest ran on";
	struct stat sb;
	ASSERT_EQ(stat(out.c_str(), &sb), 0);
	EXPECT_LE(sb.st_size, 20000);
	remove(out.c_str());
}

// A real full disk: a 64 KiB tmpfs (skipped where mounting is not allowed).
TEST_P(FaultInMode, DiskFullWhileTracing)
{
	REQUIRE_KVM();
	TempDir d;
	std::string mnt = d.file("mnt");
	ASSERT_EQ(mkdir(mnt.c_str(), 0700), 0);
	if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k"))
		GTEST_SKIP() << "cannot mount a tmpfs: " << strerror(errno);
	std::string out = mnt + "/full.trace";
	VmmResult r = run_vmm(args(out, "repeat=3", { "--filter", "ct_*", "--timeout", "60" }));
	expect_disk_full(r, out, "No space left on device");
	umount(mnt.c_str());
}
