// SPDX-License-Identifier: MIT
// `earlytrace trace` on the test kernels: every call of the call tree is
// recorded with the right function, parent and clock; the buffer policies,
// --oneshot, --until and --max-events do what they say; and the handoff to
// a guestlib ring loses nothing and duplicates nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/shim/earlytrace_shim.h"
#include "tests/fixtures.h"
#include "vmm/symbols/symbols.h"
#include "vmm/tracefile/trace_file.h"
#include "trampolines/region.h"

namespace {

struct Trace {
	std::vector<et_ring_record> events;	   // calls only, in file order
	std::vector<et_ring_record> exits;	   // VM exit events, in file order
	std::vector<et_ring_record> all;	   // both, in file order
	std::map<std::string, long> calls;	   // by function name
	std::map<std::string, std::string> parent; // function -> parent's function (last seen)
	std::map<unsigned, long> by_source;
	uint64_t dropped = 0;
	bool has_end = false;
	std::vector<std::string> marks;
	std::string error;
};

std::string name_of(const struct symtab *tab, uint64_t addr)
{
	const struct symbol *s = symtab_lookup(tab, addr, nullptr);
	return s ? s->name : "?";
}

Trace read_trace(const std::string &path)
{
	Trace t;
	struct trace_reader *r = nullptr;
	if (trace_reader_open(&r, path.c_str())) {
		t.error = et_last_error();
		return t;
	}
	const struct symtab *tab = trace_reader_symtab(r);
	const struct trace_info *info = trace_reader_info(r);
	t.dropped = info->dropped;
	t.has_end = info->has_end;
	struct trace_record rec;
	while (trace_reader_next(r, &rec) == 1) {
		if (rec.type == TRACE_REC_MARK)
			t.marks.push_back(rec.text);
		for (size_t i = 0; i < rec.nr_events; i++) {
			const et_ring_record &ev = rec.events[i];
			t.all.push_back(ev);
			if (et_rec_is_exit(&ev)) {
				t.exits.push_back(ev);
				continue;
			}
			t.events.push_back(ev);
			std::string fn = name_of(tab, ev.ip);
			t.calls[fn]++;
			t.parent[fn] = name_of(tab, ev.parent_ip);
			t.by_source[ev.flags & ET_REC_SRC_MASK]++;
		}
	}
	trace_reader_close(r);
	return t;
}

VmmResult trace_image(const char *arch, const std::string &out, std::vector<std::string> extra)
{
	std::vector<std::string> args = { "trace", "--kernel", image(arch), "--mem", "32M",
					  "--output", out, "--timeout", "120" };
	args.insert(args.end(), extra.begin(), extra.end());
	return run_vmm(args);
}

// The tests that must hold in both ways of seeing calls.
class TraceInMode : public ::testing::TestWithParam<const char *> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(GetParam()); }
	VmmResult trace(const char *arch, const std::string &out, std::vector<std::string> extra)
	{
		extra.insert(extra.begin(), { "--mode", GetParam() });
		return trace_image(arch, out, extra);
	}
	unsigned source() const
	{
		return std::string(GetParam()) == "int3" ? ET_REC_SRC_BREAKPOINT : ET_REC_SRC_TRAMPOLINE;
	}
};

INSTANTIATE_TEST_SUITE_P(Modes, TraceInMode, ::testing::Values("int3", "trampoline"));

} // namespace

TEST_P(TraceInMode, EveryCallOfTheCallTreeIsRecorded)
{
	REQUIRE_KVM();
	std::string out = temp_path("x86_64.trace");
	VmmResult r = trace("x86_64", out, { "--filter", "ct_*" });
	ASSERT_EQ(r.status, 0) << r.err;
	Trace t = read_trace(out);
	ASSERT_EQ(t.error, "");
	EXPECT_TRUE(t.has_end);
	// The counts the image prints are the counts the trace holds.
	EXPECT_EQ(t.calls["ct_root"], 4);
	EXPECT_EQ(t.calls["ct_branch"], 32);
	EXPECT_EQ(t.calls["ct_leaf"], 512);
	EXPECT_EQ(t.calls["ct_fib"], 268);
	EXPECT_EQ(t.events.size(), 816u);
	EXPECT_EQ(t.by_source[source()], 816);
	EXPECT_EQ(t.dropped, 0u);
	// Parents come from the guest stack.
	EXPECT_EQ(t.parent["ct_leaf"], "ct_branch");
	EXPECT_EQ(t.parent["ct_branch"], "ct_root");
	// One clock, in order.
	for (size_t i = 1; i < t.events.size(); i++)
		ASSERT_LE(t.events[i - 1].tsc, t.events[i].tsc) << i;
	EXPECT_NE(r.err.find("816 calls, 0 returns,"), std::string::npos) << r.err;
	EXPECT_TRUE(std::regex_search(r.err, std::regex(std::string(source() == ET_REC_SRC_BREAKPOINT
									    ? "breakpoints"
									    : "trampolines") +
							" on [0-9]+ sites 816,")))
		<< r.err;
	// The console's port I/O is in the timeline too.
	EXPECT_GT(t.exits.size(), 100u);
	remove(out.c_str());
}

TEST_P(TraceInMode, I386BeforePagingAndAtTheHigherHalfAlias)
{
	REQUIRE_KVM();
	std::string out = temp_path("i386.trace");
	VmmResult r = trace("i386", out, { "--filter", "ct_*" });
	ASSERT_EQ(r.status, 0) << r.err;
	Trace t = read_trace(out);
	ASSERT_EQ(t.error, "");
	// The same sites run at their physical addresses, then (where the KVM
	// allows 32-bit paging) at the alias: both map to one site.
	long phases = r.out.find("paging: on, alias") != std::string::npos ? 2 : 1;
	EXPECT_EQ(t.calls["ct_leaf"], 512 * phases);
	EXPECT_EQ(t.calls["ct_fib"], 268 * phases);
	EXPECT_EQ((long)t.events.size(), 816 * phases);
	remove(out.c_str());
}

TEST_P(TraceInMode, AllSitesWithoutAFilter)
{
	REQUIRE_KVM();
	std::string out = temp_path("all.trace");
	VmmResult r = trace("x86_64", out, {});
	ASSERT_EQ(r.status, 0) << r.err;
	Trace t = read_trace(out);
	EXPECT_EQ(t.calls["ct_leaf"], 512);
	// Console output goes through traced helpers too.
	EXPECT_GT(t.events.size(), 816u);
	EXPECT_GT(t.calls["uart_putc"], 100);
	remove(out.c_str());
}

TEST_P(TraceInMode, OneshotRecordsEachFunctionOnce)
{
	REQUIRE_KVM();
	std::string out = temp_path("oneshot.trace");
	VmmResult r = trace("x86_64", out, { "--filter", "ct_*", "--oneshot" });
	ASSERT_EQ(r.status, 0) << r.err;
	Trace t = read_trace(out);
	EXPECT_EQ(t.events.size(), 4u);
	for (const char *fn : { "ct_root", "ct_branch", "ct_leaf", "ct_fib" })
		EXPECT_EQ(t.calls[fn], 1) << fn;
	remove(out.c_str());
}

TEST_P(TraceInMode, MaxEventsAndUntilEndTheRun)
{
	REQUIRE_KVM();
	std::string out = temp_path("max.trace");
	VmmResult r = trace("x86_64", out, { "--filter", "ct_*", "--max-events", "100", "--no-exits" });
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out.find("done"), std::string::npos); // the guest did not finish
	EXPECT_EQ(read_trace(out).events.size(), 100u);

	r = trace("x86_64", out, { "--filter", "ct_*", "--until", "ct_fib" });
	EXPECT_EQ(r.status, 0) << r.err;
	Trace t = read_trace(out);
	// The first root runs its 8 branches of 16 leaves, then calls ct_fib.
	EXPECT_EQ(t.calls["ct_fib"], 1);
	EXPECT_EQ(t.calls["ct_leaf"], 128);
	EXPECT_EQ(t.calls["ct_root"], 1);
	remove(out.c_str());
}

TEST_P(TraceInMode, FullBufferDropsAreCountedExactly)
{
	REQUIRE_KVM();
	std::string out = temp_path("small.trace");
	// 100 events of 32 bytes (calls only: no VM exits to count).
	VmmResult r = trace("x86_64", out, { "--filter", "ct_*", "--buf-size", "3200B", "--no-exits" });
	ASSERT_EQ(r.status, 0) << r.err;
	Trace t = read_trace(out);
	EXPECT_EQ(t.events.size(), 100u);
	EXPECT_EQ(t.dropped, 716u);
	EXPECT_NE(r.err.find("716 dropped"), std::string::npos) << r.err;

	// A flight recorder keeps the newest 100: the last calls of the tree.
	r = trace("x86_64", out, { "--filter", "ct_*", "--buf-size", "3200B", "--overflow", "overwrite",
				   "--no-exits" });
	ASSERT_EQ(r.status, 0) << r.err;
	t = read_trace(out);
	EXPECT_EQ(t.events.size(), 100u);
	EXPECT_EQ(t.dropped, 716u);
	EXPECT_EQ(t.calls["ct_root"], 0);
	remove(out.c_str());
}

TEST(Trace, BadTraceOptions)
{
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--overflow", "wrap" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--overflow: unknown overflow policy 'wrap'"), std::string::npos) << r.err;
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--max-events", "0" });
	EXPECT_NE(r.err.find("--max-events: invalid count '0'"), std::string::npos) << r.err;
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--buf-size", "8B" });
	EXPECT_NE(r.err.find("holds no event"), std::string::npos) << r.err;
	REQUIRE_KVM();
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--until", "no_such_function",
		      "--output", temp_path("x.trace") });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--until: no symbol 'no_such_function'"), std::string::npos) << r.err;
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--filter", "nothing_matches*",
		      "--output", temp_path("x.trace") });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("matches no traceable function"), std::string::npos) << r.err;
}

// guestlib's handoff: the VMM restores its sites, copies its events into
// the guest's ring, and the guest records from then on. Every call is in
// the trace exactly once, on one clock, with nothing dropped.
TEST_P(TraceInMode, HandoffToTheGuestRingLosesAndDuplicatesNothing)
{
	REQUIRE_KVM();
	for (const char *arch : { "x86_64", "i386" }) {
		std::string out = temp_path(std::string(arch) + "-ring.trace");
		VmmResult r = trace(arch, out, { "--append", "trace=ring exit=0" });
		ASSERT_EQ(r.status, 0) << arch << r.err;
		EXPECT_NE(r.out.find("ring: handoff result=0"), std::string::npos) << r.out;
		// The guest sees the VMM's early calls in its ring...
		EXPECT_NE(r.out.find("ring vmm fn=ct_leaf calls=512"), std::string::npos) << r.out;
		// ...and records its own after the handoff.
		EXPECT_NE(r.out.find("ring fn=ct_leaf calls=512"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("lost=0"), std::string::npos) << r.out;

		Trace t = read_trace(out);
		ASSERT_EQ(t.error, "");
		// Both phases (early: the VMM, ring: the guest), once each.
		EXPECT_EQ(t.calls["ct_leaf"], 2 * 512);
		EXPECT_EQ(t.calls["ct_fib"], 2 * 268);
		EXPECT_GT(t.by_source[source()], 816);
		EXPECT_GT(t.by_source[ET_REC_SRC_GUEST], 816);
		EXPECT_EQ(t.dropped, 0u);
		bool handoff_mark = false;
		for (const auto &m : t.marks)
			handoff_mark |= m.find("handoff: guest ring") != std::string::npos;
		EXPECT_TRUE(handoff_mark);
		// One clock: the VMM's events, then the guest's, all in order.
		for (size_t i = 1; i < t.events.size(); i++)
			ASSERT_LE(t.events[i - 1].tsc, t.events[i].tsc) << arch << " event " << i;
		EXPECT_NE(r.err.find("handoff: guest ring"), std::string::npos) << r.err;
		remove(out.c_str());
	}
}

TEST(Trace, WithoutAnOutputFileTheTraceIsPrinted)
{
	REQUIRE_KVM();
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "16M", "--filter", "ct_root",
				"--timeout", "60" });
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("# tracer: function"), std::string::npos) << r.out;
	std::regex line("<idle>-0 +\\[000\\] d\\.\\.\\.\\. +[0-9]+\\.[0-9]{6}: ct_root <-calltree_run");
	auto begin = std::sregex_iterator(r.out.begin(), r.out.end(), line);
	EXPECT_EQ(std::distance(begin, std::sregex_iterator()), 4) << r.out;
}

// Trampolines see exactly what breakpoints see: the same calls, parents
// and order, in every phase, across batch drains (an odd batch size so
// drains land mid-phase) and across the handoff.
TEST(TraceModes, BreakpointsAndTrampolinesRecordTheSameSequence)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	// The first without VM exits: each exit drains the batch first, and
	// this one counts the drains the guest asks for.
	const std::vector<std::vector<std::string>> configs = {
		{ "--no-exits" },
		{ "--append", "trace=ring exit=0" },
		{ "--oneshot" },
	};
	for (const char *arch : { "x86_64", "i386" }) {
		for (const auto &extra : configs) {
			std::string a = temp_path("int3.trace"), b = temp_path("tramp.trace");
			std::vector<std::string> x = extra;
			x.insert(x.end(), { "--mode", "int3" });
			VmmResult r1 = trace_image(arch, a, x);
			x = extra;
			x.insert(x.end(), { "--mode", "trampoline", "--batch-events", "37" });
			VmmResult r2 = trace_image(arch, b, x);
			ASSERT_EQ(r1.status, 0) << r1.err;
			ASSERT_EQ(r2.status, 0) << r2.err;
			EXPECT_EQ(r2.err.find("using breakpoints"), std::string::npos) << r2.err;
			Trace t1 = read_trace(a), t2 = read_trace(b);
			std::string what = std::string(arch) + (extra.empty() ? "" : " " + extra.back());
			ASSERT_EQ(t1.events.size(), t2.events.size()) << what;
			ASSERT_GT(t1.events.size(), 0u);
			for (size_t i = 0; i < t1.events.size(); i++) {
				const et_ring_record &e1 = t1.events[i], &e2 = t2.events[i];
				ASSERT_EQ(e1.ip, e2.ip) << what << " event " << i;
				ASSERT_EQ(e1.parent_ip, e2.parent_ip) << what << " event " << i;
				ASSERT_EQ(e1.cpu, e2.cpu);
				ASSERT_EQ(e1.kind, e2.kind);
			}
			for (size_t i = 1; i < t2.events.size(); i++)
				ASSERT_LE(t2.events[i - 1].tsc, t2.events[i].tsc) << what << " event " << i;
			// VM exits sit between the same calls in both modes: the
			// batch is drained before an exit is recorded. In time order:
			// after a handoff the guest ring's calls reach the file at
			// each periodic read, between exits wherever a read fell.
			ASSERT_EQ(t1.all.size(), t2.all.size()) << what;
			auto by_time = [](std::vector<et_ring_record> v) {
				std::stable_sort(v.begin(), v.end(),
						 [](const et_ring_record &lhs, const et_ring_record &rhs) {
							 return lhs.tsc < rhs.tsc;
						 });
				return v;
			};
			const std::vector<et_ring_record> all1 = by_time(t1.all), all2 = by_time(t2.all);
			for (size_t i = 0; i < all1.size(); i++) {
				ASSERT_EQ(all1[i].kind, all2[i].kind) << what << " event " << i;
				ASSERT_EQ(all1[i].ip, all2[i].ip) << what << " event " << i;
				ASSERT_EQ(all1[i].parent_ip, all2[i].parent_ip) << what << " event " << i;
			}
			if (extra.front() != "--no-exits") {
				EXPECT_GT(t1.exits.size(), 100u) << what;
			}
			EXPECT_EQ(t2.by_source[ET_REC_SRC_BREAKPOINT], 0) << what;
			EXPECT_GT(t2.by_source[ET_REC_SRC_TRAMPOLINE], 0) << what;
			EXPECT_EQ(t1.by_source[ET_REC_SRC_TRAMPOLINE], 0) << what;
			EXPECT_EQ(t1.dropped + t2.dropped, 0u);
			// More than one batch: the drain protocol ran.
			if (extra.front() == "--no-exits") {
				std::smatch m;
				ASSERT_TRUE(std::regex_search(r2.err, m, std::regex("(\\d+) drains \\((\\d+) asked")))
					<< r2.err;
				// Each exit takes 37 records and the call that
				// found the batch full.
				EXPECT_GE(std::stol(m[2]), (long)(t2.events.size() / 38) - 1) << r2.err;
			}
			remove(a.c_str());
			remove(b.c_str());
		}
	}
}

// No room for trampolines: --mode trampoline refuses, auto says so and
// uses breakpoints; where int3s do not exit, auto refuses too, naming
// both reasons.
TEST(TraceModes, WithoutRoomTrampolineModeRefusesAndAutoFallsBack)
{
	REQUIRE_KVM();
	std::vector<uint8_t> bytes = read_file_bytes(image("x86_64"));
	// Put an instruction in the middle of the reserved section.
	struct kernel_image img = {};
	ASSERT_EQ(kernel_image_parse(&img, bytes.data(), bytes.size(), "x"), 0);
	struct symbols syms = {};
	ASSERT_EQ(symbols_load(&syms, &img, nullptr), 0);
	struct tramp_region region;
	ASSERT_EQ(tramp_region_find(&region, &img, &syms), 0);
	const uint8_t *p = kernel_image_vaddr_bytes(&img, region.vaddr + 100, 1, nullptr, nullptr);
	ASSERT_NE(p, nullptr);
	size_t off = (size_t)(p - img.data);
	symbols_free(&syms);
	kernel_image_close(&img);
	bytes[off] = 0x90;
	std::string kernel = temp_path("used-region.elf");
	{
		FILE *f = fopen(kernel.c_str(), "wb");
		ASSERT_NE(f, nullptr);
		ASSERT_EQ(fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
		fclose(f);
	}
	std::string out = temp_path("fallback.trace");
	VmmResult r = run_vmm({ "trace", "--kernel", kernel, "--mem", "32M", "--mode", "trampoline",
				"--output", out, "--timeout", "60" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--mode trampoline: section .earlytrace.trampolines is not unused"),
		  std::string::npos)
		<< r.err;
	r = run_vmm({ "trace", "--kernel", kernel, "--mem", "32M", "--filter", "ct_*", "--output",
		      out, "--timeout", "60" });
	if (int3_skip_reason().empty()) {
		EXPECT_EQ(r.status, 0) << r.err;
		EXPECT_NE(r.err.find("; using breakpoints"), std::string::npos) << r.err;
		Trace t = read_trace(out);
		EXPECT_EQ(t.by_source[ET_REC_SRC_BREAKPOINT], 816);
	} else {
		EXPECT_EQ(r.status, 1) << r.err;
		EXPECT_NE(r.err.find("earlytrace: nothing can be traced here: this KVM does not "
				     "report a guest's int3"),
			  std::string::npos)
			<< r.err;
		EXPECT_NE(r.err.find(", and trampolines: section .earlytrace.trampolines is not "
				     "unused"),
			  std::string::npos)
			<< r.err;
	}
	r = run_vmm({ "trace", "--kernel", kernel, "--mode", "sideways" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--mode: unknown mode 'sideways'"), std::string::npos) << r.err;
	remove(kernel.c_str());
	remove(out.c_str());
}
