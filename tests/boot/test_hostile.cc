// SPDX-License-Identifier: MIT
// Hostile guests: the x86_64 test kernel's hostile=<case> knobs
// (images/common/hostile.c) abuse every interface a guest has to the
// tracer: the handoff's ring, the hypercall port, our patched sites, the
// trampolines' batch and code, and the page tables the VMM walks. The VMM
// must keep running (or stop with a clear message), count what it
// refused, and record every call it still can; the sanitizer build runs
// the sanitizer-built VMM (ET_TEST_BIN), so an access outside guest RAM or
// outside the VMM's own objects aborts it. docs/reliability.md lists what
// each case guarantees.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

const long kCallTree = 816; // calls per phase of the call tree (calltree.c)

VmmResult run_case(const std::string &name, const std::string &mode, const std::string &out,
		   std::vector<std::string> extra = {})
{
	std::vector<std::string> args = { "trace",	 "--kernel", image("x86_64"),
					  "--mem",	 "32M",	     "--output",
					  out,		 "--timeout", "60",
					  "--mode",	 mode,	     "--batch-events",
					  "37",		 "--filter", "ct_*",
					  "--append",	 "hostile=" + name };
	args.insert(args.end(), extra.begin(), extra.end());
	return run_vmm(args);
}

long count_lines(const std::string &text, const std::string &pattern)
{
	std::regex re(pattern);
	return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
			     std::sregex_iterator());
}

// The cases that must hold in both ways of recording calls.
class HostileGuest : public ::testing::TestWithParam<const char *> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(GetParam()); }
	std::string mode() const { return GetParam(); }
	bool trampolines() const { return mode() == "trampoline"; }
	unsigned source() const { return trampolines() ? ET_REC_SRC_TRAMPOLINE : ET_REC_SRC_BREAKPOINT; }
	// Runs the case, checks the run ended cleanly and the file is readable.
	TraceFile run(const std::string &name, VmmResult *res, std::vector<std::string> extra = {})
	{
		std::string out = temp_path(name + ".trace");
		*res = run_case(name, mode(), out, extra);
		expect_no_crash(*res);
		EXPECT_EQ(res->status, 0) << res->err;
		EXPECT_NE(res->out.find("hostile: " + name + " end\ndone\n"), std::string::npos)
			<< res->out;
		TraceFile t = load_trace(out);
		EXPECT_EQ(t.error, "");
		EXPECT_TRUE(t.has_end) << t.state;
		VmmResult rep = report(out);
		EXPECT_EQ(rep.status, 0) << rep.err;
		remove(out.c_str());
		return t;
	}
};

INSTANTIATE_TEST_SUITE_P(Hostile, HostileGuest, ::testing::Values("int3", "trampoline"));

} // namespace

// Rings outside RAM, over the MMIO hole and KVM's TSS pages, above 4 GiB,
// and one that starts in RAM and runs past its end: each refused with
// ET_E_INVAL; the VMM keeps recording every call.
TEST_P(HostileGuest, RingOutsideRamIsRefused)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("ring-outside-ram", &r);
	EXPECT_EQ(count_lines(r.out, "ring-outside-ram at=0x[0-9a-f]+ bytes=0x1000 result=-22\n"), 6)
		<< r.out;
	EXPECT_EQ(ct_calls(t, source()), kCallTree);
	EXPECT_EQ(t.count["ct_leaf"], 512);
	EXPECT_EQ(t.dropped, 0u);
	EXPECT_NE(r.err.find("earlytrace: hypercalls: 6, 6 refused (the first: handoff: no valid "
			     "ring at 0x2000000 (4096 bytes))"),
		  std::string::npos)
		<< r.err;
	EXPECT_EQ(r.err.find("handoff: guest ring"), std::string::npos) << r.err;
}

// Sizes of ~0, 1 TiB and twice RAM, too small for a header, and headers
// that promise more records than the buffer holds: all refused.
TEST_P(HostileGuest, AbsurdRingSizesAreRefused)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("ring-huge", &r);
	EXPECT_EQ(count_lines(r.out, "hostile: ring-huge [^ ]+ result=-22\n"), 11) << r.out;
	EXPECT_EQ(ct_calls(t, source()), kCallTree);
	EXPECT_NE(r.err.find("hypercalls: 11, 11 refused"), std::string::npos) << r.err;
}

// Address + size past 2^64, and rings at the top of the 64- and 32-bit
// spaces: refused.
TEST_P(HostileGuest, WrappingRingsAreRefused)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("ring-wrap", &r);
	EXPECT_EQ(count_lines(r.out, "hostile: ring-wrap [^ ]+ result=-22\n"), 5) << r.out;
	EXPECT_EQ(ct_calls(t, source()), kCallTree);
	EXPECT_NE(r.err.find("hypercalls: 5, 5 refused"), std::string::npos) << r.err;
}

// A ring at guest-physical 0, over the boot structures the VMM wrote (the
// guest is done with them): a valid handoff, and the guest's events are
// collected at the end. (The VMM used to take address 0 for "no ring" and
// silently drop every guest event.)
TEST_P(HostileGuest, RingAtPhysicalZeroIsCollected)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("ring-low", &r);
	EXPECT_NE(r.out.find("ring-low handoff result=0\n"), std::string::npos) << r.out;
	std::smatch m;
	ASSERT_TRUE(std::regex_search(r.out, m,
				      std::regex("ring head=(\\d+) lost=0 capacity=\\d+ vmm_events=(\\d+)")))
		<< r.out;
	EXPECT_EQ(std::stol(m[2]), kCallTree);
	EXPECT_EQ(t.by_source[ET_REC_SRC_GUEST], std::stol(m[1]) - std::stol(m[2]));
	EXPECT_EQ(ct_calls(t, source()), kCallTree);
	EXPECT_EQ(ct_calls(t, ET_REC_SRC_GUEST), kCallTree);
	EXPECT_EQ(t.dropped, 0u);
}

// A ring inside the trampoline region: while trampolines run there the VMM
// refuses it (the handoff puts the region's own bytes back, which would
// wipe the ring under the guest: it used to accept it, the guest found its
// ring zeroed and gave up, and nobody recorded the calls after); in
// breakpoint mode it is plain guest memory and the handoff goes through.
TEST_P(HostileGuest, RingOverTheTrampolineRegion)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("ring-over-tramp", &r);
	if (trampolines()) {
		EXPECT_NE(r.out.find("ring-over-tramp handoff result=-22\n"), std::string::npos) << r.out;
		EXPECT_NE(r.err.find("hypercalls: 1, 1 refused (the first: handoff: ring at 0x"),
			  std::string::npos)
			<< r.err;
		EXPECT_NE(r.err.find("overlaps the trampoline region)"), std::string::npos) << r.err;
		// early and after: every call, by the trampolines.
		EXPECT_EQ(ct_calls(t, ET_REC_SRC_TRAMPOLINE), 2 * kCallTree);
		EXPECT_EQ(t.by_source[ET_REC_SRC_GUEST], 0);
	} else {
		EXPECT_NE(r.out.find("ring-over-tramp handoff result=0\n"), std::string::npos) << r.out;
		EXPECT_EQ(ct_calls(t, ET_REC_SRC_BREAKPOINT), kCallTree);
		// The guest's ring overflows: at least what it kept at the end
		// is in the file (more when a periodic read came before the
		// guest overwrote it: the host's timing decides), and every
		// guest event is either in the file or counted as dropped.
		std::smatch m;
		ASSERT_TRUE(std::regex_search(
			r.out, m, std::regex("ring head=(\\d+) lost=\\d+ capacity=(\\d+) vmm_events=(\\d+)")))
			<< r.out;
		long guest = std::stol(m[1]) - std::stol(m[3]), capacity = std::stol(m[2]);
		EXPECT_GT(guest, capacity);
		EXPECT_GE(t.by_source[ET_REC_SRC_GUEST], capacity);
		EXPECT_EQ(t.by_source[ET_REC_SRC_GUEST] + (long)t.dropped, guest);
	}
}

// Hypercall blocks outside RAM, across its end, sent with 8- and 16-bit
// writes; wrong ABI version, unknown number; markers outside RAM,
// wrapping, unterminated at the end of RAM, too long: refused and counted.
// A 255-character marker, one with control characters (kept as '?') and a
// block in RAM's last 32 bytes are accepted.
TEST_P(HostileGuest, BadHypercallBlocksAreCounted)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("hc-bad-block", &r);
	for (const char *line : { "abi_version=99 result=-95", "nr=77 result=-22",
				  "mark outside RAM result=-22", "mark at 2^64-1 result=-22",
				  "mark unterminated at the end of RAM result=-22",
				  "mark of 256 characters result=-22", "mark of 255 characters result=0",
				  "mark with control characters result=0",
				  "block at the end of RAM result=0" })
		EXPECT_NE(r.out.find(std::string("hostile: hc-bad-block ") + line + "\n"),
			  std::string::npos)
			<< line << "\n"
			<< r.out;
	EXPECT_NE(r.err.find("earlytrace: hypercalls: 14, 11 refused (the first: block at "
			     "0x40000000 is not in guest RAM or not aligned)"),
		  std::string::npos)
		<< r.err;
	EXPECT_EQ(ct_calls(t, source()), 2 * kCallTree);
	std::vector<std::string> texts;
	for (const auto &m : t.marks)
		texts.push_back(m.second);
	auto has = [&](const std::string &text) {
		return std::find(texts.begin(), texts.end(), text) != texts.end();
	};
	EXPECT_TRUE(has("?[31mhostile: red?"));
	EXPECT_TRUE(has(std::string(255, 'C')));
	EXPECT_TRUE(has("hostile: block at the end of RAM"));
	EXPECT_TRUE(has("hypercall refused: block at 0x40000000 is not in guest RAM or not aligned "
			"(later refusals are only counted)"));
	EXPECT_EQ(texts.size(), 4u);
}

// The guest rewrites sites the VMM patched before it hands over: another
// 5-byte nop over ct_leaf and ct_fib, the image's own nop over ct_branch.
// The VMM restores the rest, leaves those alone and says so; guestlib then
// skips the two.
TEST_P(HostileGuest, SitesTheGuestRewroteAreLeftAlone)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("patch-sites", &r);
	EXPECT_NE(r.out.find("patch-sites handoff result=0\n"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("hostile: patch-sites after ct_root=0f1f440000 ct_branch=0f1f440000 "
			     "ct_leaf=6666666690 ct_fib=6666666690\n"),
		  std::string::npos)
		<< r.out;
	EXPECT_NE(r.out.find(" skipped=2\n"), std::string::npos) << r.out;
	EXPECT_NE(r.err.find("0 sites not patched (bytes differed), 2 not restored (the guest "
			     "changed them)"),
		  std::string::npos)
		<< r.err;
	// The VMM: the early phase, then ct_root only (the guest took the
	// others' patches away). The guest: ct_root and ct_branch.
	EXPECT_EQ(ct_calls(t, source()), kCallTree + 4);
	EXPECT_EQ(ct_calls(t, ET_REC_SRC_GUEST), 4 + 32);
	EXPECT_EQ(t.count["ct_leaf"], 512);
	EXPECT_EQ(t.count["ct_fib"], 268);
	EXPECT_EQ(t.count["ct_root"], 12);
}

// The guest's page tables loop: the call tree runs on a stack reached
// through a top-level entry that points back at its own table. The CPU
// and the VMM's walker (breakpoint mode, for every parent) agree.
TEST_P(HostileGuest, PageTablesThatLoop)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("pt-loop", &r);
	EXPECT_NE(r.out.find("hostile: pt-loop stack=0xffff"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("calltree phase=loop total=816\n"), std::string::npos) << r.out;
	EXPECT_EQ(ct_calls(t, source()), 3 * kCallTree);
	for (size_t i = 0; i < t.calls.size(); i++) {
		const std::string &fn = t.fn[i], &parent = t.parent[i];
		std::string want = fn == "ct_leaf"     ? "ct_branch"
				   : fn == "ct_branch" ? "ct_root"
				   : fn == "ct_root"   ? "calltree_run"
				   : parent == "ct_fib" ? "ct_fib"
							: "ct_root";
		ASSERT_EQ(parent, want) << "call " << i << ": " << fn;
	}
}

// Code and stack segments whose descriptors have a base, which 64-bit mode
// ignores (KVM still reports it). The VMM used to add them: with SS it read
// every parent at the wrong address, with CS it missed its own int3 and
// the guest died of the #BP.
TEST_P(HostileGuest, SegmentBasesIgnoredIn64BitMode)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("seg-base", &r);
	EXPECT_NE(r.out.find("calltree phase=cs total=816\n"), std::string::npos) << r.out;
	EXPECT_EQ(ct_calls(t, source()), 4 * kCallTree);
	for (size_t i = 0; i < t.calls.size(); i++) {
		if (t.fn[i] == "ct_leaf") {
			ASSERT_EQ(t.parent[i], "ct_branch") << "call " << i;
		}
	}
}

// Garbage in the trampolines' batch header and records: every batch the VMM
// cannot trust is refused and counted, the events the guest wiped are
// exactly the ones missing, forged records are counted, and a clean phase
// afterwards is recorded exactly.
TEST_P(HostileGuest, TrampolineBatchGarbage)
{
	REQUIRE_KVM();
	VmmResult r;
	TraceFile t = run("tramp-garbage", &r);
	if (!trampolines()) {
		EXPECT_NE(r.out.find("tramp-garbage no batch (breakpoint mode)"), std::string::npos);
		EXPECT_EQ(ct_calls(t, source()), 2 * kCallTree);
		return;
	}
	long lost = 0, steps = 0;
	std::regex re("hostile: tramp-garbage ([a-z-]+) lost=(\\d+)\n");
	for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), re);
	     it != std::sregex_iterator(); ++it, steps++)
		lost += std::stol((*it)[2]);
	ASSERT_EQ(steps, 6) << r.out;
	EXPECT_GT(lost, 0);
	// 8 phases, 5 leaf calls before each of the 6 steps, one more for
	// each of the 3 steps that drain by a call.
	EXPECT_EQ(ct_calls(t, ET_REC_SRC_TRAMPOLINE), 8 * kCallTree + 6 * 5 + 3 - lost);
	EXPECT_NE(r.err.find("earlytrace: trampolines: 5 records named no site, 4 batches were "
			     "overwritten by the guest"),
		  std::string::npos)
		<< r.err;
	long refused_marks = 0;
	uint64_t clean_tsc = 0;
	for (const auto &m : t.marks) {
		refused_marks += m.second.find("trampoline batch header overwritten by the guest") == 0;
		if (m.second == "hostile: tramp-garbage clean phase")
			clean_tsc = m.first;
	}
	EXPECT_EQ(refused_marks, 4);
	ASSERT_NE(clean_tsc, 0u);
	long clean = 0;
	for (size_t i = 0; i < t.calls.size(); i++)
		clean += t.calls[i].tsc > clean_tsc && t.fn[i].rfind("ct_", 0) == 0;
	EXPECT_EQ(clean, kCallTree);
}

// 10,000 refused hypercalls one by one and 20,480 more by `rep outsl`,
// with 10 valid markers among them: every one counted, the markers all
// recorded, the calls before and after all there.
TEST(HostileGuests, HypercallFlood)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	std::string out = temp_path("flood.trace");
	VmmResult r = run_case("hc-flood", "int3", out);
	expect_no_crash(r);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("hostile: hc-flood flood sent\n"), std::string::npos) << r.out;
	EXPECT_NE(r.err.find("earlytrace: hypercalls: 30490, 30480 refused"), std::string::npos)
		<< r.err;
	TraceFile t = load_trace(out);
	EXPECT_EQ(t.error, "");
	EXPECT_EQ(ct_calls(t, ET_REC_SRC_BREAKPOINT), 2 * kCallTree);
	long markers = 0;
	for (const auto &m : t.marks)
		markers += m.second == "hostile: flood marker";
	EXPECT_EQ(markers, 10);
	remove(out.c_str());
}

// ud2 over the trampoline code: the guest's next traced call triple-faults.
// A crash report and status 2; the early phase's calls, still in the batch
// at the crash, are drained into the file, which ends cleanly.
TEST(HostileGuests, TrampolineCodeOverwritten)
{
	REQUIRE_KVM();
	std::string out = temp_path("tramp-code.trace");
	VmmResult r = run_case("tramp-code", "trampoline", out);
	expect_no_sanitizer_report(r);
	// Where the KVM resets the vCPU at a triple fault, a reset (fixtures.h).
	bool crash = kvm_shutdown_keeps_state();
	EXPECT_EQ(r.status, crash ? 2 : 0) << r.err;
	EXPECT_NE(r.out.find("hostile: tramp-code ud2 at=0xffffffff8"), std::string::npos) << r.out;
	EXPECT_NE(r.err.find(crash ? "earlytrace: guest stopped: " : "earlytrace: guest reset (triple fault"),
		  std::string::npos)
		<< r.err;
	TraceFile t = load_trace(out);
	EXPECT_EQ(t.error, "");
	EXPECT_TRUE(t.has_end);
	EXPECT_EQ(t.exit_reason.rfind(crash ? "guest crash" : "guest reset (triple fault", 0), 0u)
		<< t.exit_reason;
	EXPECT_EQ(ct_calls(t, ET_REC_SRC_TRAMPOLINE), kCallTree);
	EXPECT_EQ(report(out).status, 0);
	remove(out.c_str());
}

// Stack pointers whose translation leads nowhere (not present, tables and
// pages outside RAM, the local APIC, non-canonical), wraps past 2^64, or
// loops: the guest reaches a traced site with each (a jmp, so only the
// VMM's walker reads there). Each call is recorded, with parent 0 where
// the walk fails and the exact bytes where it succeeds.
TEST(HostileGuests, PageTablesOutsideRam)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	std::string out = temp_path("pt-outside.trace");
	VmmResult r = run_case("pt-outside", "int3", out, { "--filter", "hostile_pt_target" });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 0) << r.err;
	std::vector<uint64_t> expect;
	std::regex re("hostile: pt-outside case=[a-z-]+ rsp=0x[0-9a-f]+ expect=0x([0-9a-f]+)\n");
	for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), re);
	     it != std::sregex_iterator(); ++it)
		expect.push_back(std::stoull((*it)[1], nullptr, 16));
	ASSERT_EQ(expect.size(), 10u) << r.out;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	std::vector<uint64_t> parents;
	for (size_t i = 0; i < t.calls.size(); i++)
		if (t.fn[i] == "hostile_pt_target")
			parents.push_back(t.calls[i].parent_ip);
	EXPECT_EQ(parents, expect);
	EXPECT_EQ(ct_calls(t, ET_REC_SRC_BREAKPOINT), 2 * kCallTree);
	remove(out.c_str());

	// Trampolines would push on that stack: the guest skips the jumps.
	r = run_case("pt-outside", "trampoline", out, { "--filter", "hostile_pt_target" });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("pt-outside skipped"), std::string::npos) << r.out;
	remove(out.c_str());
}

TEST(HostileGuests, UnknownCase)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "32M", "--timeout", "60",
				"--append", "hostile=nonsense" });
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("hostile: unknown case nonsense\ndone\n"), std::string::npos) << r.out;
}
