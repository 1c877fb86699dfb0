// SPDX-License-Identifier: MIT
// trace.dat of real runs of the test kernels, judged by real consumers:
// libtracecmd reads every event (compared with earlytrace's own reading of
// the trace file), and the `trace-cmd report` binary prints the same calls,
// parents, VM exits and marks, at the same times, as `earlytrace report
// --format ftrace`, and with --graph the same call tree as --format graph.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/tracedat_check.h"
#include "vmm/util/error.h"

namespace {

// A command's standard output (its exit status in *status).
std::string command_output(const std::string &cmd, int *status)
{
	std::string out;
	FILE *p = popen(cmd.c_str(), "r");
	if (!p) {
		*status = -1;
		return out;
	}
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	*status = pclose(p);
	return out;
}

struct Line {
	int cpu;
	double seconds;
	std::string event, body; // body: "func <- parent", an exit in words, a mark's text
	bool operator==(const Line &o) const
	{
		return cpu == o.cpu && event == o.event && body == o.body;
	}
};

std::ostream &operator<<(std::ostream &os, const Line &l)
{
	return os << "[" << l.cpu << "] " << l.seconds << " " << l.event << ": " << l.body;
}

// `trace-cmd report -O parent=1`: "<idle>-0 [000] 1067.172398: function:   boot_main <-- pvh_high64".
std::vector<Line> trace_cmd_lines(const std::string &dat)
{
	int status;
	std::string out = command_output("trace-cmd report -O parent=1 " + dat + " 2>/dev/null", &status);
	EXPECT_EQ(status, 0) << "trace-cmd report " << dat;
	std::vector<Line> lines;
	std::regex re(R"(^\s*\S+-\d+\s+\[(\d+)\]\s+(\d+\.\d+): (\w+):\s+(.*)$)");
	std::regex plus0(R"(\+0x0\b)");
	std::smatch m;
	for (const std::string &l : text_lines(out)) {
		if (!std::regex_match(l, m, re))
			continue;
		Line x{ std::stoi(m[1]), std::stod(m[2]), m[3], m[4] };
		if (x.event == "function") {
			size_t arrow = x.body.find(" <-- ");
			if (arrow != std::string::npos)
				x.body.replace(arrow, 5, " <- ");
		}
		if (x.event == "vm_exit") // %pS prints +0x0 at a symbol's start
			x.body = std::regex_replace(x.body, plus0, "");
		lines.push_back(x);
	}
	return lines;
}

// The trace file's time zero (its CLOCK record) in seconds of raw TSC, as
// trace-cmd converts the x86-tsc clock.
double time_zero_seconds(const std::string &etr)
{
	trace_reader *r = nullptr;
	EXPECT_EQ(trace_reader_open(&r, etr.c_str()), 0) << et_last_error();
	if (!r)
		return 0;
	const trace_info *in = trace_reader_info(r);
	EXPECT_TRUE(in->has_origin) << etr;
	EXPECT_NE(in->tsc_khz, 0u);
	double s = in->tsc_khz ? (double)in->origin_tsc / ((double)in->tsc_khz * 1000.0) : 0;
	trace_reader_close(r);
	return s;
}

// `earlytrace report --format ftrace`, in the same shape.
std::vector<Line> ftrace_lines(const std::string &etr)
{
	VmmResult r = run_vmm({ "report", etr, "--format", "ftrace" });
	EXPECT_EQ(r.status, 0) << r.err;
	std::vector<Line> lines;
	std::regex re(R"(^\s*\S+-\d+\s+\[(\d+)\] \S+\s+(\d+\.\d+): (.*)$)");
	std::smatch m;
	for (const std::string &l : text_lines(r.out)) {
		if (!std::regex_match(l, m, re))
			continue;
		Line x{ std::stoi(m[1]), std::stod(m[2]), "function", m[3] };
		for (const char *prefix : { "vm_exit: ", "tracing_mark_write: " }) {
			if (x.body.rfind(prefix, 0) == 0) {
				x.event = *prefix == 'v' ? "vm_exit" : "mark";
				x.body = x.body.substr(strlen(prefix));
			}
		}
		if (x.event == "function") {
			size_t arrow = x.body.find(" <-");
			if (arrow != std::string::npos)
				x.body.replace(arrow, 3, " <- ");
		}
		lines.push_back(x);
	}
	return lines;
}

// The function_graph tree: the text after the duration column ("  f() {",
// "    g();", "  }"), from `trace-cmd report` or `report --format graph`.
std::vector<std::string> graph_tree(const std::string &text, bool trace_cmd)
{
	std::vector<std::string> tree;
	for (const std::string &l : text_lines(text)) {
		if (trace_cmd && l.find(" funcgraph_entry: ") == std::string::npos &&
		    l.find(" funcgraph_exit: ") == std::string::npos)
			continue;
		if (!trace_cmd && (l[0] == '#' || l.find("/*") != std::string::npos))
			continue;
		size_t bar = l.find('|');
		if (bar != std::string::npos)
			tree.push_back(l.substr(bar + 1));
	}
	return tree;
}

struct Converted {
	std::string etr, dat;
};

Converted trace_and_convert(const TempDir &d, const char *arch, std::vector<std::string> extra)
{
	Converted c{ d.file("t.etr"), d.file("t.dat") };
	std::vector<std::string> args = { "trace", "--kernel", image(arch), "--mem", "32M",
					   "--output", c.etr, "--timeout", "60" };
	args.insert(args.end(), extra.begin(), extra.end());
	VmmResult r = run_vmm(args);
	EXPECT_EQ(r.status, 0) << r.err;
	std::string err;
	EXPECT_EQ(convert_to_tracedat(c.etr, c.dat, &err), 0) << err;
	return c;
}

// libtracecmd's reading against earlytrace's, and trace-cmd report's text
// against the ftrace report's: the same calls with the same parents, the
// same exits and marks, on the same CPU, within a microsecond.
void check_readers(const Converted &c, size_t min_calls)
{
	DatExpect want = expect_tracedat(c.etr);
	DatFile got = read_tracedat(c.dat);
	EXPECT_EQ(compare_tracedat(want, got), want.events.size());

	std::vector<Line> tc = trace_cmd_lines(c.dat), et = ftrace_lines(c.etr);
	// trace.dat keeps the raw x86-tsc clock; the text reports count from
	// the guest's first instruction (the trace file's time zero).
	double zero_s = time_zero_seconds(c.etr);
	for (Line &l : tc)
		l.seconds -= zero_s;
	std::vector<Line> tc_kept;
	for (const Line &l : tc)
		if (l.event == "function" || l.event == "vm_exit" ||
		    (l.event == "mark" && l.body.rfind("trace-dat could not express", 0) != 0))
			tc_kept.push_back(l);
	size_t calls = 0;
	for (const Line &l : et)
		calls += l.event == "function";
	EXPECT_GE(calls, min_calls);
	ASSERT_EQ(tc_kept.size(), et.size());
	size_t bad = 0, gaps = 0;
	std::regex hex_parent(R"(^(\S+) <- 0x([0-9a-f]+)$)");
	std::smatch m;
	for (size_t i = 0; i < et.size() && bad < 5; i++) {
		// A return address just past a function that ends in a call
		// (to a noreturn function): earlytrace, knowing the function's
		// size, names nothing; kallsyms readers name that function.
		if (!(tc_kept[i] == et[i]) && std::regex_match(et[i].body, m, hex_parent)) {
			std::string name = kallsyms_gap_name(c.etr, std::stoull(m[2], nullptr, 16));
			if (!name.empty() && tc_kept[i].body == std::string(m[1]) + " <- " + name) {
				et[i].body = tc_kept[i].body;
				gaps++;
			}
		}
		bool same = tc_kept[i] == et[i] && std::abs(tc_kept[i].seconds - et[i].seconds) < 1.5e-6;
		EXPECT_TRUE(same) << "line " << i << ": trace-cmd " << tc_kept[i] << "\n  ftrace    "
				  << et[i];
		bad += !same;
	}
	EXPECT_LT(gaps, 10u);
}

TEST(TraceDatBoot, X86_64CallsAndExitsReadByLibtracecmdAndTraceCmd)
{
	REQUIRE_KVM();
	TempDir d;
	Converted c = trace_and_convert(d, "x86_64", {});
	check_readers(c, 1000);
}

TEST(TraceDatBoot, I386CallsAndExitsReadByLibtracecmdAndTraceCmd)
{
	REQUIRE_KVM();
	TempDir d;
	Converted c = trace_and_convert(d, "i386", {});
	check_readers(c, 1000);
}

TEST(TraceDatBoot, HandoffMarksDropsAndGuestRingEvents)
{
	REQUIRE_KVM();
	TempDir d;
	// A small host buffer drops most of the early calls; the guest's ring
	// takes over after the handoff mark.
	Converted c = trace_and_convert(d, "x86_64",
					{ "--filter", "ct_*", "--append", "trace=ring exit=0",
					  "--buf-size", "3200B" });
	check_readers(c, 500);
	DatFile got = read_tracedat(c.dat);
	size_t marks = 0, drops = 0, guest = 0;
	for (const DatEvent &e : got.events) {
		marks += e.name == "mark";
		drops += e.name == "drops";
		guest += e.name == "function" && e.flags == 0;
	}
	EXPECT_GE(marks, 1u);
	EXPECT_GE(drops, 1u);
	EXPECT_GT(guest, 500u);
}

// trace -o FILE.dat: the run's trace, converted to trace.dat at the end,
// and no earlytrace trace file left behind.
TEST(TraceDatBoot, TraceOutputDatIsATraceDat)
{
	REQUIRE_KVM();
	TempDir d;
	std::string dat = d.file("run.dat");
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--filter", "ct_*",
				"-o", dat, "--timeout", "60" });
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.err.find("written to " + dat + " (converted"), std::string::npos) << r.err;
	EXPECT_EQ(read_file_text(dat).rfind(std::string("\x17\x08\x44tracing", 10), 0), 0u);
	DatFile got = read_tracedat(dat);
	ASSERT_TRUE(got.ok) << got.error;
	size_t calls = 0;
	for (const DatEvent &e : got.events)
		calls += e.system == "ftrace" && e.name == "function";
	EXPECT_EQ(calls, 816u);
}

TEST(TraceDatBoot, GraphTreeIsTheOneFormatGraphShows)
{
	REQUIRE_KVM();
	REQUIRE_INT3();
	TempDir d;
	Converted c = trace_and_convert(d, "x86_64",
					{ "--graph", "--trace-msr", "efer", "--append", "exits=sequence" });
	DatExpect want = expect_tracedat(c.etr);
	DatFile got = read_tracedat(c.dat);
	EXPECT_EQ(compare_tracedat(want, got), want.events.size());
	EXPECT_GT(want.graph_parents, 1000u);

	int status;
	std::string tc = command_output("trace-cmd report " + c.dat + " 2>/dev/null", &status);
	EXPECT_EQ(status, 0);
	VmmResult g = run_vmm({ "report", c.etr, "--format", "graph" });
	ASSERT_EQ(g.status, 0) << g.err;
	std::vector<std::string> a = graph_tree(tc, true), b = graph_tree(g.out, false);
	EXPECT_GT(b.size(), 1500u);
	EXPECT_TRUE(a == b) << a.size() << " lines from trace-cmd, " << b.size()
			    << " from --format graph";
	// Leaves come out as leaves, with durations, in both.
	EXPECT_NE(tc.find("ct_leaf();"), std::string::npos);
}

} // namespace
