// SPDX-License-Identifier: MIT
// The host's waits (vmm/kvm/host_wait.h, vmm/trace/host_waits.h): when the
// VMM's threads share their host CPU with a busy process, the guest's TSC
// runs on while the vCPU thread waits, the trace says each wait in a WAIT
// record, and reports take the waits out of the durations they fell into.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

// This process, the VMM it starts and a busy child all on one host CPU
// for the life of the object: the scheduler must make the vCPU thread wait.
class SharedHostCpu {
public:
	SharedHostCpu()
	{
		CPU_ZERO(&saved_);
		if (sched_getaffinity(0, sizeof(saved_), &saved_))
			return;
		int cpu = 0;
		while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &saved_))
			cpu++;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return;
		busy_ = fork();
		if (busy_ == 0)
			for (;;) // spins until the test kills it
				__asm__ volatile("" ::: "memory");
	}
	~SharedHostCpu()
	{
		if (busy_ > 0) {
			kill(busy_, SIGKILL);
			waitpid(busy_, nullptr, 0);
		}
		sched_setaffinity(0, sizeof(saved_), &saved_);
	}
	bool ok() const { return busy_ > 0; }

private:
	cpu_set_t saved_;
	pid_t busy_ = -1;
};

// `earlytrace trace` of the x86_64 test kernel with args, written to out,
// on one host CPU shared with a busy process. Skips the test where KVM
// keeps no steal time for the VMM (MSR_KVM_STEAL_TIME refused: the run
// says the waits stay in the durations); the caller returns on a failure
// or a skip.
void trace_sharing_a_cpu(const std::vector<std::string> &args, const std::string &out)
{
	std::vector<std::string> all = { "trace", "--kernel", image("x86_64"), "--mem", "32M" };
	all.insert(all.end(), args.begin(), args.end());
	all.insert(all.end(), { "--output", out, "--timeout", "120" });
	VmmResult r;
	{
		SharedHostCpu shared;
		ASSERT_TRUE(shared.ok()) << "cannot pin this test to one host CPU";
		r = run_vmm(all);
	}
	ASSERT_EQ(r.status, 0) << r.err;
	if (r.err.find("taken out of the durations") == std::string::npos)
		GTEST_SKIP() << "KVM here keeps no steal time for the VMM to read: " << r.err;
}

} // namespace

TEST(HostWaits, WaitsAreRecordedAndTakenOutOfTheDurationsTheyFellInto)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	TempDir d;
	std::string out = d.file("waits.trace");
	trace_sharing_a_cpu({ "--graph", "--filter", "ct_root", "--append", "repeat=20" }, out);
	if (HasFatalFailure() || IsSkipped())
		return;

	trace_reader *rd = nullptr;
	ASSERT_EQ(trace_reader_open(&rd, out.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(rd);
	ASSERT_GT(in->nr_waits, 0u) << "a busy process on the same CPU and not one wait";
	ASSERT_GT(in->tsc_khz, 0u);
	// Every wait lies within the run and none is longer than the run.
	uint64_t span = in->max_tsc - in->origin_tsc;
	EXPECT_LE(in->waits_ticks, span);
	for (size_t i = 0; i < in->nr_waits; i++) {
		EXPECT_EQ(in->waits[i].cpu, 0u);
		EXPECT_GE(in->waits[i].tsc, in->origin_tsc);
		if (i) {
			EXPECT_GE(in->waits[i].tsc, in->waits[i - 1].tsc) << "in TSC order";
		}
	}
	// ct_root's calls and returns pair up one after the other: the waits
	// learnt at an exit inside a call (after the call, up to its return)
	// fell into that call's duration.
	std::vector<std::pair<uint64_t, uint64_t>> roots;
	trace_merge *m = nullptr;
	ASSERT_EQ(trace_merge_open(rd, &m), 0);
	et_ring_record e;
	uint64_t open = 0;
	while (trace_merge_next(m, &e) == 1) {
		if (et_rec_is_exit(&e))
			continue;
		if (et_rec_kind(&e) == ET_REC_CALL) {
			open = e.tsc;
		} else if (et_rec_kind(&e) == ET_REC_RET && open) {
			roots.emplace_back(open, e.tsc);
			open = 0;
		}
	}
	trace_merge_close(m);
	ASSERT_EQ(roots.size(), 80u) << "repeat=20: four phases a repeat";
	uint64_t inside = 0;
	for (size_t i = 0; i < in->nr_waits; i++)
		for (const auto &[from, to] : roots)
			if (in->waits[i].tsc > from && in->waits[i].tsc <= to)
				inside += in->waits[i].ticks;
	uint64_t khz = in->tsc_khz;
	trace_reader_close(rd);

	VmmResult f = run_vmm({ "report", out, "--format", "folded" });
	VmmResult fraw = run_vmm({ "report", out, "--format", "folded", "--raw-durations" });
	ASSERT_EQ(f.status, 0) << f.err;
	ASSERT_EQ(fraw.status, 0) << fraw.err;
	uint64_t fixed = folded_sum(f.out), raw = folded_sum(fraw.out);
	uint64_t inside_ns = inside * 1000000 / khz;
	ASSERT_GT(raw, 0u);
	EXPECT_GT(fixed, 0u);
	// The corrected total lost at least the waits inside the calls (and
	// one exit a call besides), a nanosecond of rounding aside.
	EXPECT_LE(fixed + inside_ns, raw + 1) << "waits inside: " << inside_ns << " ns";

	VmmResult g = run_vmm({ "report", out, "--format", "graph" });
	ASSERT_EQ(g.status, 0) << g.err;
	EXPECT_NE(g.out.find("waits of the vCPU threads for a host CPU"), std::string::npos)
		<< g.out.substr(0, 800);
	EXPECT_NE(g.out.find("taken out"), std::string::npos);
}

// Trampolines record calls in the guest with no exit: a KVM_RUN holds
// thousands of them, and the waits KVM reports at its end, as one sum,
// happened somewhere between them. Each WAIT must lie in the gap it
// stretched (a gap at least as long as itself), and the corrected
// timeline must keep the calls apart: a wait put at the run's end would
// be taken out of the calls after it, the clock would stand still for
// the length of the wait and the calls there would share one timestamp.
TEST(HostWaits, TrampolineRunWaitsLieBetweenTheCallsTheyFellBetween)
{
	REQUIRE_KVM();
	TempDir d;
	std::string out = d.file("tramp-waits.trace");
	trace_sharing_a_cpu({ "--mode", "trampoline", "--filter", "ct_*", "--append", "repeat=20" }, out);
	if (HasFatalFailure() || IsSkipped())
		return;

	trace_reader *rd = nullptr;
	ASSERT_EQ(trace_reader_open(&rd, out.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(rd);
	ASSERT_GT(in->nr_waits, 0u) << "a busy process on the same CPU and not one wait";
	std::vector<uint64_t> tscs;
	trace_merge *m = nullptr;
	ASSERT_EQ(trace_merge_open(rd, &m), 0);
	et_ring_record e;
	uint64_t tramp_calls = 0;
	while (trace_merge_next(m, &e) == 1) {
		tscs.push_back(e.tsc);
		tramp_calls += !et_rec_is_exit(&e) && (e.flags & ET_REC_SRC_TRAMPOLINE);
	}
	trace_merge_close(m);
	ASSERT_GT(tramp_calls, 10000u) << "the calls must be the trampolines'";
	uint64_t in_gaps = 0, all = 0;
	for (size_t i = 0; i < in->nr_waits; i++) {
		const auto &w = in->waits[i];
		auto next = std::upper_bound(tscs.begin(), tscs.end(), w.tsc);
		all += w.ticks;
		if (next != tscs.begin() && next != tscs.end() && *next - *(next - 1) >= w.ticks)
			in_gaps += w.ticks;
	}
	trace_reader_close(rd);
	// Waits learnt at a port's exit with no calls in its run are placed
	// by the stretch that held them, not by the calls: most, not all
	// (placed at the exit, as before, about 1 % of the time lies in such
	// gaps).
	EXPECT_GE(in_gaps * 10, all * 8)
		<< in_gaps << " of " << all << " ticks of waits lie in gaps at least as long";

	VmmResult j = run_vmm({ "report", out, "--format", "json" });
	ASSERT_EQ(j.status, 0) << j.err;
	std::regex call("\"cat\":\"call\",\"ph\":\"[a-zA-Z]+\"(?:,\"s\":\"t\")?,\"ts\":([0-9.]+)");
	std::string prev;
	long calls = 0, same = 0;
	for (auto it = std::sregex_iterator(j.out.begin(), j.out.end(), call); it != std::sregex_iterator();
	     ++it, ++calls) {
		same += (*it)[1] == prev;
		prev = (*it)[1];
	}
	ASSERT_GT(calls, 10000);
	// At the exit, about half of them did.
	EXPECT_LT(same * 20, calls) << same << " of " << calls
				     << " calls share the timestamp of the call before them";
}
