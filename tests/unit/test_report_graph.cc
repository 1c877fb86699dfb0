// SPDX-License-Identifier: MIT
// The function graph reports from a small synthetic --graph trace: the
// exact function_graph text (leaves, nesting, ftrace's duration format and
// overhead marks, exits as comments, unwound and unmatched returns, calls
// without a return), the folded stacks' self times, and the JSON's B/E
// durations parsed and checked for the nesting speedscope requires.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/json_parse.h"
#include "tests/speedscope_check.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

const uint64_t K = 0xffffffff81000000ull;

struct symbol syms[] = {
	{ K + 0x000, 0x100, "outer", 'T' },
	{ K + 0x100, 0x100, "middle", 'T' },
	{ K + 0x200, 0x100, "leaf", 'T' },
	{ K + 0x300, 0x100, "lost", 'T' },
};
struct symtab tab = { syms, 4 };

et_ring_record call(uint64_t tsc, uint64_t ip, bool ret_traced = true)
{
	et_ring_record e = make_call(tsc, ip, K + 0x50);
	if (ret_traced)
		e.flags |= ET_REC_F_RET_TRACED;
	return e;
}

et_ring_record ret(uint64_t tsc, uint64_t ip, uint16_t extra = 0)
{
	et_ring_record e = make_call(tsc, ip, K + 0x60);
	e.kind = ET_REC_RET;
	e.flags |= extra;
	return e;
}

std::string write_trace(const TempDir &d, bool with_returns = true)
{
	std::string path = d.file("graph.ettrace");
	trace_meta m{};
	m.kernel_path = "k";
	m.tsc_khz = 1000000; // a cycle is a nanosecond
	m.mode = "breakpoint";
	trace_writer *w;
	EXPECT_EQ(trace_writer_open(&w, path.c_str(), &m), 0);
	EXPECT_EQ(trace_writer_symbols(w, &tab), 0);
	et_exit x{};
	x.kind = ET_REC_PIO;
	x.addr = 0x3f8;
	x.value = 0x41;
	x.size = 1;
	x.write = 1;
	std::vector<et_ring_record> ev = {
		call(1000, K),			       // outer() {
		call(2000, K + 0x100),		       //   middle() {
		call(3000, K + 0x200),		       //     leaf();  1.234 us
		ret(4234, K + 0x200),
		et_exit_pack(5000, K + 0x120, &x),     //     /* vm_exit */
		call(6000, K + 0x200),		       //     leaf(); + 12.345 us
		ret(18345, K + 0x200),
		ret(20000, K + 0x100),		       //   } 18.000 us
		call(21000, K + 0x300),		       //   lost() {  (unwound)
		ret(2001000, K + 0x300, ET_REC_F_UNWOUND), //   } 1980.000 us, unwound
		ret(2101000, K),		       // } 2100.000 us
		ret(2200000, K + 0x200),	       // } /* leaf */: no call for it
		call(2300000, K + 0x100, false),       // middle(); no return traced
	};
	if (!with_returns)
		ev = { call(1000, K, false) };
	EXPECT_EQ(trace_writer_events(w, ev.data(), ev.size()), 0);
	EXPECT_EQ(trace_writer_mark(w, 5500, "hello"), 0);
	EXPECT_EQ(trace_writer_close(w, ev.size(), 0, "guest exited (0)"), 0);
	return path;
}

std::string write_events(const TempDir &d, const std::vector<et_ring_record> &ev)
{
	std::string path = d.file("events.ettrace");
	trace_meta m{};
	m.kernel_path = "k";
	m.tsc_khz = 1000000;
	m.mode = "breakpoint";
	trace_writer *w;
	EXPECT_EQ(trace_writer_open(&w, path.c_str(), &m), 0);
	EXPECT_EQ(trace_writer_symbols(w, &tab), 0);
	EXPECT_EQ(trace_writer_events(w, ev.data(), ev.size()), 0);
	EXPECT_EQ(trace_writer_close(w, ev.size(), 0, "guest exited (0)"), 0);
	return path;
}

std::vector<std::string> body(const std::string &text)
{
	std::vector<std::string> out;
	std::istringstream in(text);
	for (std::string l; std::getline(in, l);)
		if (l[0] != '#')
			out.push_back(l);
	return out;
}

} // namespace

TEST(ReportGraph, FunctionGraphTextGolden)
{
	TempDir d;
	std::string text = report_text(write_trace(d), REPORT_GRAPH);
	EXPECT_EQ(text.rfind("# tracer: function_graph\n", 0), 0u) << text;
	EXPECT_NE(text.find("# CPU  DURATION                  FUNCTION CALLS\n"
			    "# |     |   |                     |   |   |   |\n"),
		  std::string::npos)
		<< text;
	std::vector<std::string> want = {
		" 0)               |  outer() {",
		" 0)               |    middle() {",
		" 0)   1.234 us    |      leaf();",
		" 0)               |      /* vm_exit: pio write port 0x3f8 size 1 value 0x41 in middle+0x20 */",
		" 0)               |      /* mark: hello */",
		" 0) + 12.345 us   |      leaf();",
		" 0) + 18.000 us   |    }",
		" 0)               |    lost() {",
		" 0) # 1980.000 us |    } /* lost: unwound, its return was never seen */",
		" 0) # 2100.000 us |  }",
		" 0)               |  } /* leaf */",
		" 0)               |  middle(); /* no return traced */",
	};
	EXPECT_EQ(body(text), want) << text;
}

TEST(ReportGraph, DurationColumnAsFtracePrintsIt)
{
	// 7 digits of microseconds at most: the nanoseconds shrink, then go.
	TempDir d;
	std::string path = d.file("long.ettrace");
	trace_meta m{};
	m.tsc_khz = 1000000;
	trace_writer *w;
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0);
	ASSERT_EQ(trace_writer_symbols(w, &tab), 0);
	std::vector<et_ring_record> ev = {
		call(0, K),	     ret(12345678, K),	       // 12345.678 us -> "12345.67"
		call(20000000, K), ret(143456789, K),	       // 123456.789 -> "123456.7"
		call(200000000, K), ret(1434567890, K),	       // 1234567.890 -> "1234567"
	};
	ASSERT_EQ(trace_writer_events(w, ev.data(), ev.size()), 0);
	ASSERT_EQ(trace_writer_close(w, 6, 0, "x"), 0);
	std::vector<std::string> want = {
		" 0) * 12345.67 us |  outer();",
		" 0) @ 123456.7 us |  outer();",
		" 0) $ 1234567 us  |  outer();",
	};
	EXPECT_EQ(body(report_text(path, REPORT_GRAPH)), want);
}

TEST(ReportGraph, FoldedSelfTimes)
{
	TempDir d;
	std::string text = report_text(write_trace(d), REPORT_FOLDED);
	// outer: 2100000 - middle 18000 - lost 1980000 = 102000 of its own;
	// middle: 18000 - 1234 - 12345; each leaf its own; an unwound frame
	// is a frame like any other; the unmatched return adds nothing.
	EXPECT_EQ(text, "outer 102000\n"
			"outer;lost 1980000\n"
			"outer;middle 4421\n"
			"outer;middle;leaf 13579\n");
	// Without returns there is nothing to fold: an error that says why.
	report_text(write_trace(d, false), REPORT_FOLDED, -1);
	EXPECT_NE(std::string(et_last_error()).find("recorded with 'earlytrace trace --graph'"),
		  std::string::npos)
		<< et_last_error();
}

// A trace of calls alone: the function graph refuses it as folded does
// (one error, nothing written), rather than a line per call "with no
// return traced".
TEST(ReportGraph, CallsAloneAreRefusedAsFoldedRefusesThem)
{
	TempDir d;
	std::string path = write_trace(d, false);
	EXPECT_EQ(report_text(path, REPORT_GRAPH, -1), "");
	std::string graph_error = et_last_error();
	EXPECT_NE(graph_error.find("no returns in this trace: the function graph needs one recorded "
				   "with 'earlytrace trace --graph'"),
		  std::string::npos)
		<< graph_error;
	report_text(path, REPORT_FOLDED, -1);
	EXPECT_NE(std::string(et_last_error()).find("no returns in this trace:"), std::string::npos);
	// A --graph trace whose calls have not returned yet still has a graph.
	std::vector<et_ring_record> open = { call(1000, K), call(2000, K + 0x100) };
	std::string text = report_text(write_events(d, open), REPORT_GRAPH);
	EXPECT_NE(text.find("outer() {"), std::string::npos) << text;
}

TEST(ReportGraph, JsonDurationsNestAsSpeedscopeRequires)
{
	TempDir d;
	json::Value doc = json::parse(report_text(write_trace(d), REPORT_JSON));
	size_t durations;
	EXPECT_EQ(speedscope_problems(doc, &durations), "");
	// outer, middle, two leaf, lost; the return with no open call is left out.
	EXPECT_EQ(durations, 5u);
	EXPECT_EQ(doc["otherData"]["calls_drawn"].str, "5 as durations (B/E), 1 as instants");
	EXPECT_EQ(doc["otherData"]["nesting"].str,
		  "0 frames ended by a return further down, 0 still open at the end of the trace, "
		  "1 returns without an open call");

	// A return to a frame further down ends the frames above it first;
	// frames open at the end end there; each vCPU nests on its own.
	std::vector<et_ring_record> ev = {
		call(1000, K),		  // outer() {   cpu 0
		call(2000, K + 0x100),	  //   middle() {
		call(3000, K + 0x200),	  //     leaf() {     never returns
		ret(4000, K + 0x100),	  //   } middle: ends leaf first
		call(5000, K + 0x300),	  //   lost() {     open at the end
	};
	et_ring_record other = call(4500, K + 0x200); // leaf() { on cpu 1
	other.cpu = 1;
	ev.insert(ev.begin() + 4, other);
	et_ring_record other_ret = ret(4600, K + 0x200);
	other_ret.cpu = 1;
	ev.insert(ev.begin() + 5, other_ret);
	std::string text = report_text(write_events(d, ev), REPORT_JSON);
	doc = json::parse(text);
	EXPECT_EQ(speedscope_problems(doc, &durations), "") << text;
	EXPECT_EQ(durations, 5u) << text; // outer, middle, leaf twice, lost
	EXPECT_EQ(doc["otherData"]["nesting"].str,
		  "1 frames ended by a return further down, 2 still open at the end of the trace, "
		  "0 returns without an open call");
	// The frames open at the end end at the last event's time (4 us
	// after the first: no CLOCK record here).
	const std::vector<json::Value> &all = doc["traceEvents"].arr;
	size_t ends_at_end = 0;
	for (const json::Value &e : all)
		ends_at_end += e["ph"].str == "E" && e["ts"].num == 4.0;
	EXPECT_EQ(ends_at_end, 2u) << text;
}

TEST(ReportGraph, JsonOfACallOnlyTraceSaysItHoldsInstants)
{
	TempDir d;
	json::Value doc = json::parse(report_text(write_trace(d, false), REPORT_JSON));
	size_t durations;
	EXPECT_EQ(speedscope_problems(doc, &durations), "");
	EXPECT_EQ(durations, 0u);
	EXPECT_NE(doc["otherData"]["note"].str.find("every call is an instant event"),
		  std::string::npos);
	EXPECT_NE(std::string(report_note()).find("trace with --graph for durations"),
		  std::string::npos)
		<< report_note();
}

TEST(ReportGraph, SpeedscopeCheckerFindsMismatches)
{
	size_t n;
	auto problems = [&](const char *events) {
		return speedscope_problems(json::parse(std::string("{\"traceEvents\":[") + events +
						       "]}"),
					   &n);
	};
	EXPECT_EQ(problems(R"({"name":"a","ph":"B","ts":1,"tid":0},{"name":"a","ph":"E","ts":2,"tid":0})"),
		  "");
	EXPECT_NE(problems(R"({"name":"a","ph":"B","ts":1,"tid":0},{"name":"b","ph":"B","ts":1,"tid":0},)"
			   R"({"name":"a","ph":"E","ts":2,"tid":0},{"name":"b","ph":"E","ts":2,"tid":0})"),
		  "");
	EXPECT_NE(problems(R"({"name":"a","ph":"B","ts":1,"tid":0,"args":{"parent":"x"}},)"
			   R"({"name":"a","ph":"E","ts":2,"tid":0})"),
		  "");
	EXPECT_NE(problems(R"({"name":"a","ph":"B","ts":1,"tid":0})"), "");
	EXPECT_NE(problems(R"({"name":"a","ph":"E","ts":1,"tid":0})"), "");
}
