// SPDX-License-Identifier: MIT
// Several vCPUs (--cpus N): the x86-64 test kernel's smp option starts the
// other CPUs with INIT-SIPI-SIPI from the MADT, each runs a call tree of
// its own size (CPU i: pc_root once, pc_leaf 8 * (i + 1) times), and the
// trace has exactly those calls on each CPU. N is 4, or fewer where KVM
// recommends fewer (KVM_CAP_NR_VCPUS: the host's CPUs).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/kvm_translate_helper.h"

namespace {

// A run with several vCPUs, less the one line that says there are more
// vCPUs than host CPUs (on a one-CPU host, the nested test VM, every run
// here has it; MoreVcpusThanKvmRecommendsWarnsAndRuns checks it).
VmmResult without_overcommit_note(VmmResult r)
{
	static const std::regex overcommit("earlytrace: --cpus [0-9]+: more vCPUs than KVM here "
					   "recommends [^\n]*\n");
	r.err = std::regex_replace(r.err, overcommit, "");
	return r;
}

VmmResult run_smp(const VmmRun &run)
{
	return without_overcommit_note(run_vmm(run));
}

VmmResult run_smp(std::vector<std::string> args)
{
	return without_overcommit_note(run_vmm(std::move(args)));
}

// 4 vCPUs, or as many as KVM recommends here, and never fewer than 2: on
// a one-CPU host (the nested test VM) two vCPUs take turns.
unsigned cpus_for_test()
{
	return std::max(2u, std::min(4u, kvm_recommended_vcpus()));
}

#define REQUIRE_SMP(n)                                                                   \
	REQUIRE_KVM();                                                                     \
	const unsigned n = cpus_for_test();

constexpr long kLeaves = 8; // SMP_LEAVES in images/x86_64/smp.h

using CallsPerCpu = std::map<std::pair<unsigned, std::string>, long>;

// Calls by (vCPU, function).
CallsPerCpu calls_per_cpu(const TraceFile &t)
{
	CallsPerCpu per_cpu;
	for (size_t i = 0; i < t.calls.size(); i++)
		per_cpu[{ et_rec_cpu(&t.calls[i]), t.fn[i] }]++;
	return per_cpu;
}

// What smp's per-CPU trees call on n vCPUs.
CallsPerCpu tree_calls(unsigned n)
{
	CallsPerCpu want;
	for (unsigned i = 0; i < n; i++) {
		want[{ i, "pc_root" }] = 1;
		want[{ i, "pc_leaf" }] = kLeaves * (i + 1);
	}
	return want;
}

std::string cpu_line(unsigned i)
{
	return "smp cpu=" + std::to_string(i) + " apic=" + std::to_string(i) +
	       " pc_root=1 pc_leaf=" + std::to_string(kLeaves * (i + 1)) + "\n";
}

std::string smp_node_uri()
{
	char *abs = realpath((std::string(ET_TEST_SRCDIR) + "/libvirt/node.xml").c_str(), nullptr);
	std::string uri = std::string("test://") + (abs ? abs : "/nonexistent");
	free(abs);
	return uri;
}

} // namespace

TEST(Smp, EveryCpuStartsAndRunsItsOwnCallTree)
{
	REQUIRE_SMP(n);
	VmmResult r = run_smp({ "run", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--append", "smp exit=5", "--timeout", "120" });
	EXPECT_EQ(r.status, 5) << r.err << r.out;
	for (unsigned i = 0; i < n; i++)
		EXPECT_NE(r.out.find(cpu_line(i)), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("smp cpus=" + std::to_string(n) + " started=" + std::to_string(n)),
		  std::string::npos)
		<< r.out;
	EXPECT_EQ(r.err, "");
}

TEST(Smp, OneVcpuStartsNothing)
{
	REQUIRE_KVM();
	VmmResult r = run_smp({ "run", "--kernel", image("x86_64"), "--mem", "32M", "--append",
				"smp exit=0", "--timeout", "60" });
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_NE(r.out.find(cpu_line(0)), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("smp cpus=1 started=1"), std::string::npos) << r.out;
}

// Whether KVM here offers the guest RDTSCP, which trampolines need with
// several vCPUs (nested kvm-pvm, which emulates guest kernel code, does
// not): the CPUID of a vCPU the VMM made, as the VMM asks it.
bool kvm_offers_rdtscp()
{
	std::unique_ptr<kth, void (*)(kth *)> k(kth_open(4 << 20), kth_close);
	return k && kth_has_rdtscp(k.get());
}

std::string no_rdtscp_note(unsigned n)
{
	return "with " + std::to_string(n) +
	       " vCPUs (--cpus) trampolines need RDTSCP, which KVM here does not offer the guest";
}

// Each vCPU's calls on that vCPU, exactly, in both modes: breakpoints, and
// trampolines (a batch per vCPU, picked by rdtscp's TSC_AUX) where KVM
// offers RDTSCP; where it does not, trampoline mode is refused in one line
// and auto says it uses breakpoints.
class SmpTrace : public ::testing::TestWithParam<const char *> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(GetParam()); }
};

TEST_P(SmpTrace, TraceHasEachCpusCallsOnThatCpu)
{
	REQUIRE_SMP(n);
	const std::string mode = GetParam();
	std::string path = temp_path("smp.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--mode", mode, "--append", "smp exit=0", "-f",
				"pc_*", "--batch-events", "5", "-o", path, "--timeout", "300" });
	bool rdtscp = kvm_offers_rdtscp();
	if (mode == "trampoline" && !rdtscp) {
		EXPECT_EQ(r.status, 1) << r.err;
		EXPECT_EQ(r.err, "earlytrace: --mode trampoline: " + no_rdtscp_note(n) + "\n");
		unlink(path.c_str());
		GTEST_SKIP() << "KVM here offers no RDTSCP: trampoline mode refused, as it must be";
	}
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	long per_site_calls = 0;
	for (unsigned i = 0; i < n; i++)
		per_site_calls += 1 + kLeaves * (i + 1);
	if (mode == "auto" && !rdtscp) {
		EXPECT_NE(r.err.find("earlytrace: trampolines: " + no_rdtscp_note(n) +
				     "; using breakpoints"),
			  std::string::npos)
			<< r.err;
	}
	if (mode != "int3" && rdtscp) {
		EXPECT_NE(r.err.find("trampolines on 2 sites " + std::to_string(per_site_calls)),
			  std::string::npos)
			<< r.err;
	}
	if (mode == "int3" || !rdtscp) {
		EXPECT_NE(r.err.find("breakpoints on 2 sites " + std::to_string(per_site_calls)),
			  std::string::npos)
			<< r.err;
	}
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	EXPECT_EQ(calls_per_cpu(t), tree_calls(n));

	// The reports show the vCPU as their readers expect.
	VmmResult text = run_smp({ "report", path });
	ASSERT_EQ(text.status, 0) << text.err;
	EXPECT_NE(text.out.find("#P:" + std::to_string(n)), std::string::npos) << text.out;
	std::string last = "[00" + std::to_string(n - 1) + "]";
	size_t at = text.out.find(last);
	ASSERT_NE(at, std::string::npos) << text.out;
	EXPECT_NE(text.out.find("pc_leaf <-pc_root", at), std::string::npos) << text.out;
	std::string json = temp_path("smp.json");
	VmmResult j = run_smp({ "report", path, "-o", json });
	ASSERT_EQ(j.status, 0) << j.err;
	std::ifstream in(json);
	std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	EXPECT_NE(body.find("\"name\":\"vCPU " + std::to_string(n - 1) + "\""), std::string::npos);
	unlink(json.c_str());
	unlink(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Modes, SmpTrace, ::testing::Values("int3", "trampoline", "auto"));

// One vCPU crashes: the run ends at once with the crash status, the
// report names that vCPU, and the flight recorder shows the others.
TEST(Smp, CrashOnOneVcpuStopsThemAllAndNamesIt)
{
	REQUIRE_SMP(n);
	std::string path = temp_path("smp-crash.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--append", "smp=crash exit=0", "-f", "pc_*",
				"-o", path, "--timeout", "120" });
	EXPECT_FALSE(r.timed_out);
	if (!kvm_shutdown_keeps_state()) {
		// The KVM reset vCPU 1 at its triple fault: the machine resets
		// (fixtures.h), and the line names the vCPU.
		EXPECT_EQ(r.status, 0) << r.err;
		EXPECT_NE(r.err.find("earlytrace: guest reset (triple fault on vCPU 1; this KVM "
				     "reset the vCPU"),
			  std::string::npos)
			<< r.err;
		unlink(path.c_str());
		return;
	}
	EXPECT_EQ(r.status, 2) << r.err;
	EXPECT_NE(r.err.find("earlytrace: guest stopped on vCPU 1: triple fault"),
		  std::string::npos)
		<< r.err;
	EXPECT_NE(r.err.find("earlytrace: flight recorder: guest crash: triple fault"),
		  std::string::npos)
		<< r.err;
	EXPECT_NE(r.err.find("  on vCPU 1\n"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("  vCPU 0: "), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("<smp_ap_main+"), std::string::npos) << r.err;
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	EXPECT_TRUE(t.has_end);
	long on_cpu1 = 0;
	for (size_t i = 0; i < t.calls.size(); i++)
		on_cpu1 += et_rec_cpu(&t.calls[i]) == 1 && t.fn[i] == "pc_leaf";
	EXPECT_EQ(on_cpu1, 2 * kLeaves) << "CPU 1's tree ran before it crashed";
	unlink(path.c_str());
}

// --oneshot slots are one per site, not per vCPU: refused with several
// (on every host, RDTSCP or not).
TEST(Smp, OneshotTrampolinesWithSeveralVcpusAreRefused)
{
	REQUIRE_SMP(n);
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--mode", "trampoline", "--oneshot", "-f", "pc_*",
				"-o", temp_path("smp-refused.trace"), "--timeout", "60" });
	EXPECT_EQ(r.status, 1);
	EXPECT_EQ(r.err, "earlytrace: --mode trampoline: --oneshot trampolines record on one vCPU "
			 "only; this machine has " +
				 std::to_string(n) + " (--cpus)\n");
	unlink(temp_path("smp-refused.trace").c_str());
}

// More vCPUs than the host has CPUs run, as under QEMU, with one line that
// says so; every vCPU still runs its tree.
TEST(Smp, MoreVcpusThanKvmRecommendsWarnsAndRuns)
{
	REQUIRE_KVM();
	unsigned more = kvm_recommended_vcpus() + 1;
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(more), "--append", "smp exit=5", "--timeout", "120" });
	EXPECT_EQ(r.status, 5) << r.err << r.out;
	EXPECT_EQ(r.err, "earlytrace: --cpus " + std::to_string(more) +
				 ": more vCPUs than KVM here recommends (" +
				 std::to_string(kvm_recommended_vcpus()) +
				 ", KVM_CAP_NR_VCPUS: the host's CPUs); they take turns on them\n");
	for (unsigned i = 0; i < more; i++)
		EXPECT_NE(r.out.find(cpu_line(i)), std::string::npos) << r.out;
}

// The APs halt once their tree is done; --timeout must still end the run
// (every vCPU is taken out of its halt) with the timeout's status.
TEST(Smp, TimeoutStopsEveryVcpuEvenHaltedOnes)
{
	REQUIRE_SMP(n);
	VmmResult r = run_smp({ "run", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--append", "smp end=spin", "--timeout", "3" });
	EXPECT_FALSE(r.timed_out);
	EXPECT_EQ(r.status, 124) << r.err << r.out;
	EXPECT_NE(r.out.find("smp cpus=" + std::to_string(n)), std::string::npos) << r.out;
}

// A signal goes to the boot processor's thread and ends every vCPU's.
TEST(Smp, SignalStopsEveryVcpu)
{
	REQUIRE_SMP(n);
	VmmRun run;
	run.args = { "run", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
		     std::to_string(n), "--append", "smp end=spin", "--timeout", "60" };
	run.wait_for = "done";
	run.send_signal = SIGTERM;
	VmmResult r = run_smp(run);
	EXPECT_FALSE(r.timed_out);
	EXPECT_EQ(r.status, 128 + SIGTERM) << r.err << r.out;
}

// A libvirt domain with <vcpu>2</vcpu> (its kernel: the test kernel with smp).
TEST(Smp, LibvirtDomainWithTwoVcpusBoots)
{
	REQUIRE_SMP(n);
	(void)n;
	VmmResult r = run_smp({ "run", "--connect", smp_node_uri(), "--domain", "et-two-vcpus",
				"--timeout", "120" });
	EXPECT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_NE(r.out.find("smp cpus=2 started=2"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find(cpu_line(1)), std::string::npos) << r.out;
}

// --hang-timeout with several vCPUs: the watchdog stops them all, and the
// flight recorder shows every vCPU (the APs halted after their trees).
TEST(Smp, HangReportShowsEveryVcpu)
{
	REQUIRE_SMP(n);
	std::string path = temp_path("smp-hang.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--append", "smp end=spin", "-f", "pc_*", "-o",
				path, "--hang-timeout", "2", "--timeout", "120" });
	EXPECT_FALSE(r.timed_out);
	EXPECT_EQ(r.status, 124) << r.err;
	EXPECT_NE(r.err.find("earlytrace: flight recorder: hang: no new event for 2 s on any of the " +
			     std::to_string(n) + " vCPUs (--hang-timeout)"),
		  std::string::npos)
		<< r.err;
	for (unsigned i = 1; i < n; i++)
		EXPECT_NE(r.err.find("  vCPU " + std::to_string(i) +
				     ": halted (HLT), waiting for an interrupt"),
			  std::string::npos)
			<< r.err;
	// Which vCPUs were stuck where: the BSP in its spin, each AP halted
	// after its tree.
	EXPECT_NE(r.err.find("  no vCPU made progress"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("    vCPU 0 stuck at machine_spin"), std::string::npos) << r.err;
	for (unsigned i = 1; i < n; i++)
		EXPECT_NE(r.err.find("    vCPU " + std::to_string(i) +
				     " stuck at smp_ap_main+"),
			  std::string::npos)
			<< r.err;
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	EXPECT_NE(t.exit_reason.find("on any of the " + std::to_string(n) + " vCPUs"),
		  std::string::npos)
		<< t.exit_reason;
	unlink(path.c_str());
}

// One vCPU still recording is no hang, however still the others are: CPU
// 1 calls pc_leaf for ever (an exit each, in int3 mode) while the BSP
// spins without an event; --timeout, not the watchdog, ends the run.
TEST(Smp, OneVcpuMakingProgressIsNoHang)
{
	REQUIRE_SMP(n);
	REQUIRE_INT3();
	std::string path = temp_path("smp-busy.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--mode", "int3", "--append", "smp=busy end=spin",
				"-f", "pc_leaf", "-o", path, "--hang-timeout", "3", "--timeout",
				"12" });
	EXPECT_FALSE(r.timed_out);
	EXPECT_EQ(r.status, 124) << r.err;
	EXPECT_NE(r.err.find("(--timeout)"), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find("flight recorder: hang"), std::string::npos) << r.err;
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	long on_cpu1 = 0;
	for (size_t i = 0; i < t.calls.size(); i++)
		on_cpu1 += et_rec_cpu(&t.calls[i]) == 1;
	EXPECT_GT(on_cpu1, 2 * kLeaves) << "CPU 1 went on calling pc_leaf after its tree";
	unlink(path.c_str());
}

constexpr long kRaceFns = 16; // RACE_FNS in images/x86_64/smp.c

std::string race_line(unsigned i, long calls)
{
	return "smp race cpu=" + std::to_string(i) + " calls=" + std::to_string(calls) + "\n";
}

// The hits found already removed by another vCPU's exit, as the summary
// counts them (0 when the vCPUs never met at a site).
long stale_hits(const std::string &err)
{
	size_t at = err.find("earlytrace: breakpoints: ");
	return at == std::string::npos ? 0 : std::atol(err.c_str() + at + 25);
}

// smp=race: every CPU calls race_fn_0..15 at once, so several vCPUs hit
// one site's int3 together. --oneshot: the first hit records the call and
// puts the site back while the others' exits wait for the exit lock; they
// must go on at the instruction now there (each CPU makes all 16 calls)
// and not be recorded again (each function exactly once in the trace).
TEST(Smp, OneshotSiteRemovedWhileAnotherVcpuWaitsResumesThatVcpu)
{
	REQUIRE_SMP(n);
	REQUIRE_INT3();
	std::string path = temp_path("smp-race1.trace");
	long stale = 0;
	// Whether the vCPUs meet at a site is the host's to decide (about one
	// run in ten on a loaded 2-CPU host): every run must be right, and a
	// few runs give the race its chances. Before the fix, kvm-pvm's
	// emulation failure at the removed int3 ended such a run as a crash.
	for (int run = 0; run < 20 && !stale && !HasFailure(); run++) {
		VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M",
					"--cpus", std::to_string(n), "--mode", "int3", "--oneshot",
					"--append", "smp=race exit=0", "-f", "race_fn_*", "-o", path,
					"--timeout", "120" });
		ASSERT_EQ(r.status, 0) << "run " << run << ": " << r.err << r.out;
		for (unsigned i = 0; i < n; i++)
			EXPECT_NE(r.out.find(race_line(i, kRaceFns)), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("smp cpus=" + std::to_string(n) +
				     " started=" + std::to_string(n)),
			  std::string::npos)
			<< r.out;
		TraceFile t = load_trace(path);
		ASSERT_EQ(t.error, "");
		std::map<std::string, long> per_fn;
		for (size_t i = 0; i < t.calls.size(); i++)
			per_fn[t.fn[i]]++;
		EXPECT_EQ(per_fn.size(), (size_t)kRaceFns);
		for (const auto &[fn, calls] : per_fn)
			EXPECT_EQ(calls, 1) << fn;
		EXPECT_NE(r.err.find("breakpoints on " + std::to_string(kRaceFns) + " sites " +
				     std::to_string(kRaceFns)),
			  std::string::npos)
			<< r.err;
		stale = stale_hits(r.err);
	}
	// Not a condition (timing), but worth seeing in the log.
	RecordProperty("stale_int3_hits", (int)stale);
	unlink(path.c_str());
}

// Without --oneshot the same race records every call, each on its vCPU.
TEST(Smp, SimultaneousHitsOfOneSiteAreEachRecordedOnTheirVcpu)
{
	REQUIRE_SMP(n);
	REQUIRE_INT3();
	std::string path = temp_path("smp-race.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--mode", "int3", "--append", "smp=race exit=0",
				"-f", "race_fn_*", "-o", path, "--timeout", "120" });
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	for (unsigned i = 0; i < n; i++)
		EXPECT_NE(r.out.find(race_line(i, kRaceFns)), std::string::npos) << r.out;
	EXPECT_EQ(stale_hits(r.err), 0) << r.err; // nothing removes a site here
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	CallsPerCpu want;
	for (unsigned c = 0; c < n; c++)
		for (long f = 0; f < kRaceFns; f++)
			want[{ c, "race_fn_" + std::to_string(f) }] = 1;
	EXPECT_EQ(calls_per_cpu(t), want);
	unlink(path.c_str());
}

// i386 trampolines with several vCPUs: a batch per vCPU, picked by rdtscp
// as on x86-64; refused in one line where KVM offers no RDTSCP. The i386
// test kernel starts no other CPU, so every call is vCPU 0's, recorded in
// its batch through the several-vCPU entry (phases: before paging, and at
// the higher-half alias where the KVM allows 32-bit paging).
TEST(Smp, I386TrampolinesGetABatchPerVcpuOrAreRefusedWithoutRdtscp)
{
	REQUIRE_SMP(n);
	std::string path = temp_path("smp-i386.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("i386"), "--mem", "32M", "--cpus",
				std::to_string(n), "--mode", "trampoline", "-f", "ct_*", "-o", path,
				"--timeout", "120" });
	if (!kvm_offers_rdtscp()) {
		EXPECT_EQ(r.status, 1) << r.err;
		EXPECT_EQ(r.err, "earlytrace: --mode trampoline: " + no_rdtscp_note(n) + "\n");
		unlink(path.c_str());
		GTEST_SKIP() << "KVM here offers no RDTSCP: trampoline mode refused, as it must be";
	}
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.err.find("(a batch per vCPU)"), std::string::npos) << r.err;
	long phases = r.out.find("paging: on, alias") != std::string::npos ? 2 : 1;
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	EXPECT_EQ(t.count["ct_leaf"], 512 * phases);
	for (size_t i = 0; i < t.calls.size(); i++)
		ASSERT_EQ(et_rec_cpu(&t.calls[i]), 0u) << t.fn[i];
	unlink(path.c_str());
}

// smp=ring: the boot CPU hands one guestlib ring per CPU over
// (ET_HC_HANDOFF_PERCPU) before it starts the others, so every tree runs
// in guest mode, each CPU recording into its own ring through its GS base
// (et_fentry_percpu). The trace has exactly each CPU's calls on that CPU,
// all recorded by the guest, and the rings say the same inside the guest.
TEST(Smp, PerCpuGuestRingsHaveEachCpusCallsOnThatCpu)
{
	REQUIRE_SMP(n);
	std::string path = temp_path("smp-ring.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--append", "smp=ring exit=0", "-f", "pc_*",
				"-o", path, "--timeout", "300" });
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_NE(r.out.find("smp ring: handoff result=0 cpus=" + std::to_string(n) +
			     " vmm_events=0 "),
		  std::string::npos)
		<< r.out;
	for (unsigned i = 0; i < n; i++) {
		EXPECT_NE(r.out.find(cpu_line(i)), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("smp ring cpu=" + std::to_string(i) + " root=1 leaf=" +
				     std::to_string(kLeaves * (i + 1)) + " lost=0 incomplete=0\n"),
			  std::string::npos)
			<< r.out;
	}
	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	CallsPerCpu per_cpu;
	for (size_t i = 0; i < t.calls.size(); i++) {
		if (t.fn[i] != "pc_root" && t.fn[i] != "pc_leaf")
			continue;
		EXPECT_EQ(t.calls[i].flags & ET_REC_SRC_MASK, (unsigned)ET_REC_SRC_GUEST) << t.fn[i];
		per_cpu[{ et_rec_cpu(&t.calls[i]), t.fn[i] }]++;
	}
	EXPECT_EQ(per_cpu, tree_calls(n));
	bool marked = false;
	for (const auto &m : t.marks)
		marked |= m.second.rfind("handoff: guest rings of " + std::to_string(n) + " CPUs", 0) ==
			  0;
	EXPECT_TRUE(marked);

	// ftrace text: the last CPU's leaves in its own column.
	VmmResult text = run_smp({ "report", path });
	ASSERT_EQ(text.status, 0) << text.err;
	std::string last = "[00" + std::to_string(n - 1) + "]";
	long last_leaves = 0;
	for (size_t at = text.out.find(last); at != std::string::npos;
	     at = text.out.find(last, at + 1)) {
		size_t eol = text.out.find('\n', at);
		last_leaves += text.out.substr(at, eol - at).find("pc_leaf <-pc_root") != std::string::npos;
	}
	EXPECT_EQ(last_leaves, kLeaves * n) << text.out;
	unlink(path.c_str());
}

// --graph with several vCPUs: each vCPU's calls return through their own
// frames. With smp=race every CPU has race_nest open at once and CPU 0
// returns first, under the frames the others pushed after it: a return
// on one vCPU must never end (unwind) another's frames, and every call
// gets its return on its vCPU.
TEST(Smp, GraphReturnsPairWithTheirCallsOnEachVcpu)
{
	REQUIRE_SMP(n);
	REQUIRE_INT3();
	std::string path = temp_path("smp-graph.trace");
	VmmResult r = run_smp({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--cpus",
				std::to_string(n), "--graph", "--append", "smp=race exit=0", "-f",
				"pc_*", "-f", "race_*", "-o", path, "--timeout", "300" });
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	for (unsigned i = 0; i < n; i++) {
		EXPECT_NE(r.out.find(cpu_line(i)), std::string::npos) << r.out;
		EXPECT_NE(r.out.find(race_line(i, kRaceFns)), std::string::npos) << r.out;
	}
	EXPECT_NE(r.err.find(" 0 unwound, 0 calls without a return"), std::string::npos) << r.err;
	trace_reader *rd = nullptr;
	ASSERT_EQ(trace_reader_open(&rd, path.c_str()), 0) << et_last_error();
	const symtab *tab = trace_reader_symtab(rd);
	trace_merge *m = nullptr;
	ASSERT_EQ(trace_merge_open(rd, &m), 0);
	std::map<unsigned, std::vector<std::string>> open;
	CallsPerCpu calls, returns;
	long mismatched = 0, unwound = 0;
	et_ring_record e;
	while (trace_merge_next(m, &e) == 1) {
		if (et_rec_is_exit(&e))
			continue;
		std::string fn = symbol_name(tab, e.ip);
		unsigned cpu = et_rec_cpu(&e);
		if (et_rec_kind(&e) == ET_REC_CALL) {
			calls[{ cpu, fn }]++;
			open[cpu].push_back(fn);
		} else if (et_rec_kind(&e) == ET_REC_RET) {
			returns[{ cpu, fn }]++;
			unwound += (e.flags & ET_REC_F_UNWOUND) != 0;
			if (open[cpu].empty() || open[cpu].back() != fn)
				mismatched++;
			else
				open[cpu].pop_back();
		}
	}
	trace_merge_close(m);
	trace_reader_close(rd);
	EXPECT_EQ(calls, returns);
	EXPECT_EQ(mismatched, 0) << "a return that is not its vCPU's innermost open call";
	EXPECT_EQ(unwound, 0);
	for (unsigned i = 0; i < n; i++) {
		EXPECT_EQ((calls[{ i, "pc_leaf" }]), kLeaves * (i + 1)) << "vCPU " << i;
		EXPECT_EQ((calls[{ i, "race_fn_0" }]), 1) << "vCPU " << i;
		EXPECT_EQ((calls[{ i, "race_nest" }]), 1) << "vCPU " << i;
	}
	unlink(path.c_str());
}
