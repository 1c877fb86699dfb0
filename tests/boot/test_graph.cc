// SPDX-License-Identifier: MIT
// --graph on the test kernel's call tree, whose shape is known: every call
// gets its return, paired exactly, at the depths the tree has; durations
// nest; the reports (function_graph text, Chrome B/E events, folded
// stacks) agree with the events; and a handoff with traced frames still
// on the guest's stack leaves the guest running correctly.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/speedscope_check.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

struct Frame {
	std::string fn;
	uint64_t tsc;
	size_t depth;
	uint64_t children = 0;
};

// Calls and returns replayed on a stack, as the graph report does.
struct Replay {
	std::map<std::string, long> calls, returns;
	std::map<std::string, size_t> max_depth, min_depth;
	std::map<std::string, uint64_t> total; // summed durations, cycles
	size_t max_fib_chain = 0;
	long unmatched = 0, unflagged = 0, nonpositive = 0, outliving_parent = 0;
	uint64_t tsc_khz = 0;
	std::vector<uint64_t> root_durations;
};

Replay replay(const std::string &path)
{
	Replay rp;
	trace_reader *r = nullptr;
	if (trace_reader_open(&r, path.c_str())) {
		ADD_FAILURE() << et_last_error();
		return rp;
	}
	const symtab *tab = trace_reader_symtab(r);
	rp.tsc_khz = trace_reader_info(r)->tsc_khz;
	std::vector<Frame> stack;
	trace_merge *m;
	EXPECT_EQ(trace_merge_open(r, &m), 0);
	et_ring_record e;
	while (trace_merge_next(m, &e) == 1) {
		if (et_rec_is_exit(&e))
			continue;
		const symbol *s = symtab_lookup(tab, e.ip, nullptr);
		std::string fn = s ? s->name : "?";
		if (et_rec_kind(&e) == ET_REC_CALL) {
			rp.calls[fn]++;
			if (!(e.flags & ET_REC_F_RET_TRACED))
				rp.unflagged++;
			size_t depth = stack.size();
			rp.max_depth[fn] = std::max(rp.max_depth[fn], depth);
			if (!rp.min_depth.count(fn) || depth < rp.min_depth[fn])
				rp.min_depth[fn] = depth;
			stack.push_back({ fn, e.tsc, depth });
			size_t chain = 0;
			for (size_t i = stack.size(); i-- > 0 && stack[i].fn == "ct_fib";)
				chain++;
			rp.max_fib_chain = std::max(rp.max_fib_chain, chain);
			continue;
		}
		rp.returns[fn]++;
		if (stack.empty() || stack.back().fn != fn || (e.flags & ET_REC_F_UNWOUND)) {
			rp.unmatched++;
			continue;
		}
		Frame f = stack.back();
		stack.pop_back();
		uint64_t d = e.tsc - f.tsc;
		if (e.tsc <= f.tsc)
			rp.nonpositive++;
		if (f.children > d)
			rp.outliving_parent++;
		rp.total[fn] += d;
		if (fn == "ct_root")
			rp.root_durations.push_back(d);
		if (!stack.empty())
			stack.back().children += d;
	}
	trace_merge_close(m);
	trace_reader_close(r);
	return rp;
}

// ftrace's duration text of ns, as the graph report prints it.
std::string ftrace_duration(uint64_t ns)
{
	char usecs[24], nsecs[8], out[64];
	snprintf(usecs, sizeof(usecs), "%llu", (unsigned long long)(ns / 1000));
	size_t len = strlen(usecs);
	std::string s = usecs;
	if (len < 7) {
		snprintf(nsecs, 8 - len < 5 ? 8 - len : 5, "%03llu", (unsigned long long)(ns % 1000));
		s += std::string(".") + nsecs;
	}
	snprintf(out, sizeof(out), "%s us", s.c_str());
	return out;
}

} // namespace

TEST(FunctionGraph, ExactPairingDepthsAndDurationsOnTheCallTree)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	TempDir d;
	std::string out = d.file("graph.trace");
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--filter",
				"ct_*", "--graph", "--output", out, "--timeout", "60" });
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("calltree phase=longmode total=816"), std::string::npos) << r.out;
	EXPECT_NE(r.err.find("earlytrace: graph: 816 returns"), std::string::npos) << r.err;
	Replay rp = replay(out);
	// Every call has its return, in stack order.
	EXPECT_EQ(rp.calls["ct_root"], 4);
	EXPECT_EQ(rp.calls["ct_branch"], 32);
	EXPECT_EQ(rp.calls["ct_leaf"], 512);
	EXPECT_EQ(rp.calls["ct_fib"], 268);
	EXPECT_EQ(rp.returns, rp.calls);
	EXPECT_EQ(rp.unmatched, 0);
	EXPECT_EQ(rp.unflagged, 0);
	// The tree's depths: root, branch below it, leaf below that; ct_fib(8)
	// recurses 8 deep under the root.
	EXPECT_EQ(rp.min_depth["ct_root"], 0u);
	EXPECT_EQ(rp.max_depth["ct_root"], 0u);
	EXPECT_EQ(rp.min_depth["ct_branch"], 1u);
	EXPECT_EQ(rp.max_depth["ct_branch"], 1u);
	EXPECT_EQ(rp.min_depth["ct_leaf"], 2u);
	EXPECT_EQ(rp.max_depth["ct_leaf"], 2u);
	EXPECT_EQ(rp.min_depth["ct_fib"], 1u);
	EXPECT_EQ(rp.max_depth["ct_fib"], 8u);
	EXPECT_EQ(rp.max_fib_chain, 8u);
	// Durations are positive and nest: no callee outlives its caller.
	EXPECT_EQ(rp.nonpositive, 0);
	EXPECT_EQ(rp.outliving_parent, 0);
	ASSERT_GT(rp.tsc_khz, 0u);

	// One vocabulary: trace's final line, the summary and the ftrace
	// header count the same calls, returns and exits, and the header's
	// entries are the event lines the ftrace text holds.
	std::smatch counts;
	ASSERT_TRUE(std::regex_search(r.err, counts,
				      std::regex("earlytrace: trace: (\\d+) events: (\\d+) calls, "
						 "(\\d+) returns, (\\d+) exits, (\\d+) kernel events;")))
		<< r.err;
	EXPECT_EQ(counts[2], "816");
	EXPECT_EQ(counts[3], "816");
	std::string words = std::string(counts[0]).substr(strlen("earlytrace: trace: "));
	words.pop_back(); // the ';'
	VmmResult s = run_vmm({ "report", out, "--format", "summary" });
	ASSERT_EQ(s.status, 0) << s.err;
	EXPECT_NE(s.out.find("recorded as:  " + words + "\n"), std::string::npos) << s.out << r.err;
	VmmResult ft = run_vmm({ "report", out, "--format", "ftrace" });
	ASSERT_EQ(ft.status, 0) << ft.err;
	EXPECT_NE(ft.out.find("# earlytrace: " + words + "\n"), std::string::npos) << ft.out.substr(0, 800);
	size_t event_lines = 0;
	for (const std::string &l : text_lines(ft.out))
		event_lines += !l.empty() && l[0] != '#';
	std::string entries = std::to_string(event_lines);
	EXPECT_NE(ft.out.find("# entries-in-buffer/entries-written: " + entries + "/" + entries + " "),
		  std::string::npos)
		<< ft.out.substr(0, 800);

	// function_graph text: the same tree, the exact durations as recorded.
	VmmResult g = run_vmm({ "report", out, "--format", "graph", "--raw-durations" });
	ASSERT_EQ(g.status, 0) << g.err;
	auto l = text_lines(g.out);
	EXPECT_EQ(l[0], "# tracer: function_graph");
	std::regex leaf("^ 0\\) [ +!#*@$] +[0-9.]+ us +\\|      ct_leaf\\(\\);$");
	std::regex branch_open("^ 0\\)               \\|    ct_branch\\(\\) \\{$");
	std::regex root_close("^ 0\\) ([ +!#*@$]) +([0-9.]+ us) +\\|  \\}$");
	size_t leaves = 0, branches = 0;
	std::vector<std::string> root_closes;
	for (auto &x : l) {
		std::smatch m;
		leaves += std::regex_match(x, leaf);
		branches += std::regex_match(x, branch_open);
		if (std::regex_match(x, m, root_close))
			root_closes.push_back(m[2]);
	}
	EXPECT_EQ(leaves, 512u) << g.out.substr(0, 3000);
	EXPECT_EQ(branches, 32u);
	ASSERT_EQ(root_closes.size(), 4u);
	for (size_t i = 0; i < 4; i++) {
		uint64_t ns = (uint64_t)((unsigned __int128)rp.root_durations[i] * 1000000u / rp.tsc_khz);
		EXPECT_EQ(root_closes[i], ftrace_duration(ns)) << i;
	}

	// Chrome JSON: one B and one E per call, nesting on the vCPU's track.
	VmmResult j = run_vmm({ "report", out, "--format", "json" });
	ASSERT_EQ(j.status, 0) << j.err;
	std::regex be("\\{\"name\":\"(ct_[a-z]+)\",\"cat\":\"call\",\"ph\":\"([BE])\"");
	std::vector<std::string> open;
	long begins = 0, ends = 0, misnested = 0;
	for (auto it = std::sregex_iterator(j.out.begin(), j.out.end(), be); it != std::sregex_iterator();
	     ++it) {
		if ((*it)[2] == "B") {
			begins++;
			open.push_back((*it)[1]);
		} else {
			ends++;
			misnested += open.empty() || open.back() != (*it)[1];
			if (!open.empty())
				open.pop_back();
		}
	}
	EXPECT_EQ(begins, 816);
	EXPECT_EQ(ends, 816);
	EXPECT_EQ(misnested, 0);
	// Parsed: plain names, no args on B/E, every vCPU's frames nested.
	size_t durations = 0;
	EXPECT_EQ(speedscope_problems(json::parse(j.out), &durations), "");
	EXPECT_EQ(durations, 816u);

	// Folded stacks: self times add up to the roots' durations exactly
	// (to a nanosecond per stack of rounding).
	VmmResult f = run_vmm({ "report", out, "--format", "folded", "--raw-durations" });
	ASSERT_EQ(f.status, 0) << f.err;
	uint64_t sum = 0, roots = 0;
	size_t stacks = 0;
	std::regex folded("^(ct_root(;ct_[a-z]+)*) ([0-9]+)$");
	for (auto &x : text_lines(f.out)) {
		std::smatch m;
		ASSERT_TRUE(std::regex_match(x, m, folded)) << x;
		sum += std::stoull(m[3]);
		stacks++;
	}
	for (uint64_t dr : rp.root_durations)
		roots += (uint64_t)((unsigned __int128)dr * 1000000u / rp.tsc_khz);
	EXPECT_EQ(sum, roots); // self times telescope to the roots' totals
	EXPECT_GT(stacks, 10u);
	EXPECT_NE(f.out.find("ct_root;ct_branch;ct_leaf "), std::string::npos);
	EXPECT_NE(f.out.find("ct_root;ct_fib;ct_fib;ct_fib;ct_fib;ct_fib;ct_fib;ct_fib;ct_fib "),
		  std::string::npos)
		<< f.out;
}

namespace {

// The roots' durations in a function_graph report, in ns (to the 10 ns
// ftrace's format keeps above 10 ms).
std::vector<uint64_t> graph_roots(const std::string &text)
{
	std::regex root_close("^ 0\\) [ +!#*@$] +([0-9]+\\.[0-9]+) us +\\|  \\}$");
	std::vector<uint64_t> ns;
	for (auto &x : text_lines(text)) {
		std::smatch m;
		if (std::regex_match(x, m, root_close))
			ns.push_back((uint64_t)(std::stod(m[1]) * 1000.0 + 0.5));
	}
	return ns;
}

} // namespace

// Durations without the tracer's own cost: the run writes an OVERHEAD
// record counting every breakpoint exit it took (a call or a return each),
// the reports take that cost out by default (shorter than as recorded,
// and the same in function_graph text and folded stacks), and
// --raw-durations shows them as recorded.
TEST(FunctionGraph, DurationsWithoutTheTracersCost)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	TempDir d;
	std::string out = d.file("graph.trace");
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--filter",
				"ct_*", "--graph", "--output", out, "--timeout", "60" });
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.err.find("earlytrace: tracer cost: 1632 breakpoint exits"), std::string::npos)
		<< r.err;
	trace_reader *rd = nullptr;
	ASSERT_EQ(trace_reader_open(&rd, out.c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(rd);
	bool has_overhead = in->has_overhead;
	trace_overhead ov = in->overhead;
	trace_reader_close(rd);
	if (!has_overhead)
		GTEST_SKIP() << "no OVERHEAD record: this KVM gives no TSC offset to read the "
				"guest clock by";
	EXPECT_EQ(ov.exits, 1632u) << "816 calls and 816 returns, each an exit";
	EXPECT_GT(ov.exit_ticks, 0u);
	EXPECT_EQ(ov.drains, 0u);
	// The round trip timed at exits spread over the run (the first 31,
	// then every 64th...), not only at its first ones.
	if (ov.flags & TRACE_OVERHEAD_REST_IN_RUN) {
		std::smatch m;
		ASSERT_TRUE(std::regex_search(r.err, m, std::regex("timed in the run, (\\d+) times")))
			<< r.err;
		EXPECT_GT(std::stoul(m[1]), 31u) << r.err;
		EXPECT_GT(ov.rest_ticks, 0u);
	}
	// The host thread's wait is measured where the host says it, and
	// said (taken out where WAIT records say when: test_host_waits.cc).
	if (ov.flags & TRACE_OVERHEAD_WAITED_KNOWN) {
		EXPECT_TRUE(std::regex_search(r.err, std::regex("the vCPU threads? waited [0-9.]+ ms "
								"for a host CPU")))
			<< r.err;
	}

	VmmResult g = run_vmm({ "report", out, "--format", "graph" });
	VmmResult graw = run_vmm({ "report", out, "--format", "graph", "--raw-durations" });
	ASSERT_EQ(g.status, 0) << g.err;
	ASSERT_EQ(graw.status, 0) << graw.err;
	EXPECT_NE(g.out.find("# earlytrace: durations without the tracer's own cost: 1632 "
			     "breakpoint exits at "),
		  std::string::npos)
		<< g.out.substr(0, 1000);
	EXPECT_NE(graw.out.find("durations as recorded (--raw-durations)"), std::string::npos);
	// Corrected durations never exceed the recorded ones, nor go below
	// zero (the clamp).
	auto roots = graph_roots(g.out), raw = graph_roots(graw.out);
	ASSERT_EQ(roots.size(), 4u);
	ASSERT_EQ(raw.size(), 4u);
	for (size_t i = 0; i < 4; i++) {
		EXPECT_LT(roots[i], raw[i]) << "root " << i;
		EXPECT_GT(roots[i], 0u) << "root " << i;
	}

	// Folded stacks use the same clock: their self times add up to the
	// corrected roots (a nanosecond of rounding per stack, 10 ns per root
	// in the graph's text).
	VmmResult f = run_vmm({ "report", out, "--format", "folded" });
	VmmResult fraw = run_vmm({ "report", out, "--format", "folded", "--raw-durations" });
	ASSERT_EQ(f.status, 0) << f.err;
	uint64_t sum_roots = 0, sum_raw = 0;
	for (size_t i = 0; i < 4; i++) {
		sum_roots += roots[i];
		sum_raw += raw[i];
	}
	EXPECT_NEAR((double)folded_sum(f.out), (double)sum_roots, 200.0);
	EXPECT_NEAR((double)folded_sum(fraw.out), (double)sum_raw, 200.0);

	// Chrome JSON says which durations it shows.
	VmmResult j = run_vmm({ "report", out, "--format", "json" });
	ASSERT_EQ(j.status, 0) << j.err;
	EXPECT_NE(j.out.find("\"durations\":\"durations without the tracer's own cost"),
		  std::string::npos);
}

// trace=ring hands off inside traced functions (tracering_run, which
// longmode_main and boot_main called): their return addresses on the
// guest's stack are the VMM's until then, and must be the real ones after.
TEST(FunctionGraph, HandoffWithFramesOnTheStackLeavesTheGuestRunning)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	for (const char *arch : { "x86_64", "i386" }) {
		TempDir d;
		std::string out = d.file("ring.trace");
		VmmResult r = run_vmm({ "trace", "--kernel", image(arch), "--mem", "32M", "--graph",
					"--append", "trace=ring exit=0", "--output", out, "--timeout",
					"60" });
		ASSERT_EQ(r.status, 0) << arch << r.err << r.out;
		// The guest returned through those frames to its normal end.
		EXPECT_NE(r.out.find("ring fn=ct_leaf calls=512"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("ring vmm fn=ct_leaf calls=512"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("\ndone\n"), std::string::npos) << r.out;
		std::smatch m;
		ASSERT_TRUE(std::regex_search(r.err, m, std::regex("graph: (\\d+) returns, (\\d+) frames "
								      "handed back at the end of capture, 0 not")))
			<< r.err;
		EXPECT_GE(std::stoul(m[2]), 2u) << arch; // tracering_run and its callers
		Replay rp = replay(out);
		EXPECT_EQ(rp.unmatched, 0) << arch;
		EXPECT_EQ(rp.returns["ct_leaf"], 512) << arch; // the early phase's, by the VMM
		EXPECT_EQ(rp.calls["ct_leaf"], 1024) << arch;	// and the guest's own calls
	}
}

TEST(FunctionGraph, StackOfACrashIsExactAndTrampolineModeIsRefused)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	TempDir d;
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--graph",
				"--append", "crash=triple", "--output", d.file("t.trace"), "--timeout",
				"60" });
	EXPECT_EQ(r.status, 2) << r.err;
	EXPECT_NE(r.err.find("call stack from --graph's return frames (exact"), std::string::npos)
		<< r.err;
	EXPECT_TRUE(std::regex_search(r.err, std::regex("#1  boot_begin\\+0x[0-9a-f]+ +called "
							"machine_triple_fault")))
		<< r.err;
	EXPECT_TRUE(std::regex_search(r.err, std::regex("#2  boot_main\\+0x[0-9a-f]+ +called boot_begin")))
		<< r.err;

	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--graph", "--mode", "trampoline" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--graph needs breakpoint mode"), std::string::npos) << r.err;
	r = run_vmm({ "report", d.file("t.trace"), "--format", "graph" });
	EXPECT_EQ(r.status, 0) << r.err;
}
