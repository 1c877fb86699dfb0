// SPDX-License-Identifier: MIT
// Reports from a small synthetic trace: exact ftrace text, JSON that
// parses (a tiny checker below), exact CSV, the summary, symbolization,
// and marks and drops merged in by time.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/check/expect.h"
#include "vmm/cmd/check.h"
#include "vmm/cmd/report.h"
#include "vmm/util/version.h"

namespace {

const uint64_t K = 0xffffffff81000000ull;

struct symbol syms[] = {
	{ K + 0x000, 0x100, "start_kernel", 'T' },
	{ K + 0x100, 0x40, "foo", 't' },
	{ K + 0x200, 0x20, "we\"ird\\name", 't' },
	{ K + 0x300, 0x80, "x86_64_start_reservations", 'T' },
};
struct symtab tab = { syms, 4 };

// 1 GHz TSC: one cycle is one nanosecond.
// Time zero (the guest's first instruction) is TSC 1000000.
const uint64_t kOriginTsc = 1000000;

std::string write_trace(const TempDir &d, uint64_t khz, bool finish = true)
{
	std::string path = d.file("t.ettrace");
	trace_meta m{};
	m.kernel_path = "images/x86_64.elf";
	m.build_id_hex = "abcdef01";
	m.symbol_source = "kernel .symtab (4 symbols)";
	m.tsc_khz = khz;
	m.mode = "breakpoint";
	trace_writer *w;
	EXPECT_EQ(trace_writer_open(&w, path.c_str(), &m), 0);
	EXPECT_EQ(trace_writer_symbols(w, &tab), 0);
	EXPECT_EQ(trace_writer_clock(w, kOriginTsc), 0);
	et_ring_record a[] = {
		make_call(1234000, K, K + 0x320, 0, ET_REC_SRC_BREAKPOINT),
		make_call(2000000, K + 0x105, K + 0x10, 0, ET_REC_SRC_BREAKPOINT),
		make_call(2100000, K + 0x200, K + 0x110, 0, ET_REC_SRC_TRAMPOLINE),
	};
	EXPECT_EQ(trace_writer_events(w, a, 3), 0);
	// Written after the events it precedes in time: must be merged by tsc.
	EXPECT_EQ(trace_writer_drops(w, 7, 2050000, "host buffer full"), 0);
	EXPECT_EQ(trace_writer_mark(w, 2500000, "handoff to guest ring"), 0);
	et_ring_record b[] = {
		make_call(3000000, 0xdead, 0, 1, ET_REC_SRC_GUEST),
		make_call(3000500, K + 0x100, K + 0x5, 1, ET_REC_SRC_GUEST),
	};
	EXPECT_EQ(trace_writer_events(w, b, 2), 0);
	EXPECT_EQ(trace_writer_drops(w, 3, 3000200, "guest ring overwrite"), 0);
	if (finish)
		EXPECT_EQ(trace_writer_close(w, 15, 10, "guest exited (0)"), 0);
	else
		trace_writer_close(w, 15, 10, "guest exited (0)");
	return path;
}

TEST(Report, FtraceGolden)
{
	TempDir d;
	std::string text = report_text(write_trace(d, 1000000), REPORT_FTRACE);
	std::vector<std::string> want = {
		"# tracer: function",
		"#",
		"# earlytrace " EARLYTRACE_VERSION ": kernel images/x86_64.elf (build-id abcdef01), mode breakpoint",
		"# earlytrace: symbols: kernel .symtab (4 symbols)",
		"# earlytrace: 5 events: 5 calls, 0 returns, 0 exits, 0 kernel events",
		"# earlytrace: calls and returns by source: breakpoint 2, trampoline 1, guest 2",
		"# earlytrace: clock: guest TSC at 1000000 kHz; TIMESTAMP is seconds of guest time since "
		"its first instruction (guest TSC 1000000)",
		"# earlytrace: finished: guest exited (0)",
		"# earlytrace: 10 events dropped, 0 not written to the trace file",
		"#",
		// Entries: the 6 event lines below (5 calls and a mark); written
		// adds the 10 dropped.
		"# entries-in-buffer/entries-written: 6/16   #P:2",
		"#",
		"#                                _-----=> irqs-off/BH-disabled",
		"#                               / _----=> need-resched",
		"#                              | / _---=> hardirq/softirq",
		"#                              || / _--=> preempt-depth",
		"#                              ||| / _-=> migrate-disable",
		"#                              |||| /     delay",
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
		"#              | |         |   |||||     |         |",
		"          <idle>-0       [000] d....     0.000234: start_kernel <-x86_64_start_reservations",
		"          <idle>-0       [000] d....     0.001000: foo <-start_kernel",
		"# earlytrace: 7 events dropped (host buffer full)",
		"          <idle>-0       [000] d....     0.001100: we\"ird\\name <-foo",
		"          <idle>-0       [000] d....     0.001500: tracing_mark_write: handoff to guest ring",
		"          <idle>-0       [001] .....     0.002000: 0xdead",
		"# earlytrace: 3 events dropped (guest ring overwrite), 10 in total",
		"          <idle>-0       [001] .....     0.002000: foo <-start_kernel",
	};
	EXPECT_EQ(text_lines(text), want) << text;
}

TEST(Report, FtraceWithoutTscFrequencyPrintsCycles)
{
	TempDir d;
	std::string text = report_text(write_trace(d, 0), REPORT_FTRACE);
	EXPECT_NE(text.find("# earlytrace: clock: guest TSC frequency unknown; TIMESTAMP is TSC "
			    "cycles of guest time since its first instruction (guest TSC 1000000)\n"),
		  std::string::npos);
	EXPECT_NE(text.find("          <idle>-0       [000] d....       234000: start_kernel "
			    "<-x86_64_start_reservations\n"),
		  std::string::npos)
		<< text;
	EXPECT_NE(text.find("          <idle>-0       [001] .....      2000500: foo <-start_kernel\n"),
		  std::string::npos)
		<< text;
}

TEST(Report, UnfinishedRunSaysSo)
{
	TempDir d;
	std::string path = write_trace(d, 1000000);
	// Cut the END record off (the last 12 + 32 + 16 bytes).
	std::string bytes = read_file_text(path);
	ASSERT_EQ(truncate(path.c_str(), (off_t)(bytes.size() - 60)), 0);
	std::string text = report_text(path, REPORT_FTRACE);
	EXPECT_NE(text.find("# earlytrace: run did not finish cleanly: last mark 'handoff to guest "
			    "ring', 5 events written\n"),
		  std::string::npos)
		<< text;
	ASSERT_EQ(truncate(path.c_str(), (off_t)(bytes.size() - 70)), 0);
	text = report_text(path, REPORT_SUMMARY);
	EXPECT_NE(text.find("; file truncated after 5 events"), std::string::npos) << text;
}

// A minimal JSON checker: true when s is one valid JSON value.
struct Json {
	const std::string &s;
	size_t i = 0;
	explicit Json(const std::string &text) : s(text) {}
	void ws()
	{
		while (i < s.size() && strchr(" \t\r\n", s[i]))
			i++;
	}
	bool lit(const char *w)
	{
		size_t n = strlen(w);
		if (s.compare(i, n, w))
			return false;
		i += n;
		return true;
	}
	bool str()
	{
		if (s[i] != '"')
			return false;
		for (i++; i < s.size(); i++) {
			unsigned char c = (unsigned char)s[i];
			if (c == '"') {
				i++;
				return true;
			}
			if (c < 0x20)
				return false;
			if (c == '\\') {
				i++;
				if (i >= s.size())
					return false;
				if (s[i] == 'u') {
					for (int k = 0; k < 4; k++)
						if (++i >= s.size() || !isxdigit((unsigned char)s[i]))
							return false;
				} else if (!strchr("\"\\/bfnrt", s[i])) {
					return false;
				}
			}
		}
		return false;
	}
	bool num()
	{
		size_t st = i;
		if (s[i] == '-')
			i++;
		if (i >= s.size() || !isdigit((unsigned char)s[i]))
			return false;
		if (s[i] == '0' && i + 1 < s.size() && isdigit((unsigned char)s[i + 1]))
			return false;
		while (i < s.size() && isdigit((unsigned char)s[i]))
			i++;
		if (i < s.size() && s[i] == '.') {
			i++;
			if (i >= s.size() || !isdigit((unsigned char)s[i]))
				return false;
			while (i < s.size() && isdigit((unsigned char)s[i]))
				i++;
		}
		return i > st;
	}
	bool value(int depth = 0)
	{
		if (depth > 64)
			return false;
		ws();
		if (i >= s.size())
			return false;
		if (s[i] == '{' || s[i] == '[') {
			char close = s[i] == '{' ? '}' : ']';
			bool obj = s[i] == '{';
			i++;
			ws();
			if (i < s.size() && s[i] == close) {
				i++;
				return true;
			}
			for (;;) {
				ws();
				if (obj) {
					if (i >= s.size() || !str())
						return false;
					ws();
					if (i >= s.size() || s[i++] != ':')
						return false;
				}
				if (!value(depth + 1))
					return false;
				ws();
				if (i >= s.size())
					return false;
				if (s[i] == close) {
					i++;
					return true;
				}
				if (s[i++] != ',')
					return false;
			}
		}
		if (s[i] == '"')
			return str();
		if (lit("true") || lit("false") || lit("null"))
			return true;
		return num();
	}
	bool valid()
	{
		if (!value())
			return false;
		ws();
		return i == s.size();
	}
};

TEST(Report, JsonCheckerWorks)
{
	EXPECT_TRUE(Json("{\"a\":[1,2.5,\"x\\\"\"],\"b\":{}}").valid());
	EXPECT_FALSE(Json("{\"a\":[1,]}").valid());
	EXPECT_FALSE(Json("{\"a\":\"x\"y\"}").valid());
	EXPECT_FALSE(Json("[01]").valid());
}

TEST(Report, JsonIsValidChromeTrace)
{
	TempDir d;
	std::string text = report_text(write_trace(d, 1000000), REPORT_JSON);
	EXPECT_TRUE(Json(text).valid()) << text;
	EXPECT_EQ(text.rfind("{\"traceEvents\":[", 0), 0u);
	EXPECT_NE(text.find("\"displayTimeUnit\":\"ns\""), std::string::npos);
	EXPECT_NE(text.find("{\"name\":\"start_kernel\",\"cat\":\"call\",\"ph\":\"i\",\"s\":\"t\","
			    "\"ts\":234.000,\"pid\":1,\"tid\":0,\"args\":{\"parent\":"
			    "\"x86_64_start_reservations\",\"ip\":\"0xffffffff81000000\","
			    "\"source\":\"breakpoint\"}}"),
		  std::string::npos)
		<< text;
	// Names are escaped.
	EXPECT_NE(text.find("{\"name\":\"we\\\"ird\\\\name\""), std::string::npos) << text;
	EXPECT_NE(text.find("{\"name\":\"0xdead\",\"cat\":\"call\",\"ph\":\"i\",\"s\":\"t\","
			    "\"ts\":2000.000,\"pid\":1,\"tid\":1,\"args\":{\"parent\":\"0x0\""),
		  std::string::npos)
		<< text;
	EXPECT_NE(text.find("{\"name\":\"handoff to guest ring\",\"cat\":\"mark\",\"ph\":\"i\","
			    "\"s\":\"g\",\"ts\":1500.000"),
		  std::string::npos)
		<< text;
	EXPECT_NE(text.find("{\"name\":\"7 events dropped\",\"cat\":\"drop\",\"ph\":\"i\",\"s\":\"g\","
			    "\"ts\":1050.000,\"pid\":1,\"tid\":0,\"args\":{\"dropped\":7,\"total\":7,"
			    "\"reason\":\"host buffer full\"}}"),
		  std::string::npos)
		<< text;
	EXPECT_NE(text.find("\"args\":{\"name\":\"vCPU 1\"}"), std::string::npos);
	EXPECT_NE(text.find("\"build_id\":\"abcdef01\""), std::string::npos);
	// Time order: the first drop comes between foo and the weird name.
	EXPECT_LT(text.find("\"ts\":1000.000"), text.find("\"ts\":1050.000"));
	EXPECT_LT(text.find("\"ts\":1050.000"), text.find("\"ts\":1100.000"));
}

// RFC 4180 records: fields split at commas outside quotes, "" inside
// quotes is one quote; false on a malformed field.
bool csv_records(const std::string &text, std::vector<std::vector<std::string>> *out)
{
	size_t i = 0;
	out->clear();
	while (i < text.size()) {
		std::vector<std::string> rec;
		for (;;) {
			std::string f;
			if (i < text.size() && text[i] == '"') {
				for (i++;; i++) {
					if (i >= text.size())
						return false;
					if (text[i] == '"') {
						if (i + 1 < text.size() && text[i + 1] == '"') {
							f += '"';
							i++;
							continue;
						}
						i++;
						break;
					}
					f += text[i];
				}
			} else {
				while (i < text.size() && !strchr(",\n\"", text[i]))
					f += text[i++];
				if (i < text.size() && text[i] == '"')
					return false;
			}
			rec.push_back(f);
			if (i >= text.size())
				return false; // every record ends with a line break
			if (text[i++] == '\n')
				break;
			if (text[i - 1] != ',')
				return false;
		}
		out->push_back(rec);
	}
	return true;
}

const size_t csv_fields = 11;

TEST(Report, CsvGolden)
{
	TempDir d;
	std::string text = report_text(write_trace(d, 1000000), REPORT_CSV);
	std::vector<std::string> want = {
		"seconds,tsc,cpu,source,function,offset,ip,parent_function,parent_offset,parent_ip,note",
		"0.000234000,1234000,0,breakpoint,start_kernel,0x0,0xffffffff81000000,"
		"x86_64_start_reservations,0x20,0xffffffff81000320,",
		"0.001000000,2000000,0,breakpoint,foo,0x5,0xffffffff81000105,start_kernel,0x10,"
		"0xffffffff81000010,",
		"0.001050000,2050000,,,,,,,,,dropped 7: host buffer full",
		"0.001100000,2100000,0,trampoline,\"we\"\"ird\\name\",0x0,0xffffffff81000200,foo,0x10,"
		"0xffffffff81000110,",
		"0.001500000,2500000,,,,,,,,,handoff to guest ring",
		"0.002000000,3000000,1,guest,,,0xdead,,,,",
		"0.002000200,3000200,,,,,,,,,dropped 3: guest ring overwrite",
		"0.002000500,3000500,1,guest,foo,0x0,0xffffffff81000100,start_kernel,0x5,"
		"0xffffffff81000005,",
	};
	EXPECT_EQ(text_lines(text), want) << text;

	std::vector<std::vector<std::string>> recs;
	ASSERT_TRUE(csv_records(text, &recs)) << text;
	ASSERT_EQ(recs.size(), want.size());
	for (auto &rec : recs)
		EXPECT_EQ(rec.size(), csv_fields) << text;
	EXPECT_EQ(recs[4][4], "we\"ird\\name");
}

TEST(Report, CsvWithoutTscFrequencyLeavesSecondsEmpty)
{
	TempDir d;
	std::string text = report_text(write_trace(d, 0), REPORT_CSV);
	auto l = text_lines(text);
	ASSERT_EQ(l.size(), 9u) << text;
	EXPECT_EQ(l[1], ",1234000,0,breakpoint,start_kernel,0x0,0xffffffff81000000,"
			"x86_64_start_reservations,0x20,0xffffffff81000320,");
	EXPECT_EQ(l[3], ",2050000,,,,,,,,,dropped 7: host buffer full");
	std::vector<std::vector<std::string>> recs;
	ASSERT_TRUE(csv_records(text, &recs)) << text;
	for (auto &rec : recs)
		EXPECT_EQ(rec.size(), csv_fields) << text;
}

TEST(Report, CsvQuotesFields)
{
	TempDir d;
	std::string path = d.file("q.ettrace");
	struct symbol qs[] = { { K, 0x100, "a,b", 'T' } };
	struct symtab qtab = { qs, 1 };
	trace_meta m{};
	m.tsc_khz = 1000000;
	trace_writer *w;
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0);
	ASSERT_EQ(trace_writer_symbols(w, &qtab), 0);
	et_ring_record a[] = { make_call(1000, K + 1, K + 2, 0, ET_REC_SRC_GUEST) };
	ASSERT_EQ(trace_writer_events(w, a, 1), 0);
	ASSERT_EQ(trace_writer_mark(w, 500, "say \"hi\", then\nstop"), 0);
	ASSERT_EQ(trace_writer_drops(w, 2, 2000, "full, \"really\""), 0);
	ASSERT_EQ(trace_writer_drops(w, 3, 3000, ""), 0);
	ASSERT_EQ(trace_writer_close(w, 4, 3, "done"), 0);
	std::string text = report_text(path, REPORT_CSV);
	std::vector<std::string> want = {
		"seconds,tsc,cpu,source,function,offset,ip,parent_function,parent_offset,parent_ip,note",
		// No CLOCK record: time zero is the earliest event, and this mark
		// comes before it; the reader turns the newline into '?'.
		"-0.000000500,500,,,,,,,,,\"say \"\"hi\"\", then?stop\"",
		"0.000000000,1000,0,guest,\"a,b\",0x1,0xffffffff81000001,\"a,b\",0x2,0xffffffff81000002,",
		"0.000001000,2000,,,,,,,,,\"dropped 2: full, \"\"really\"\"\"",
		// Another reason: its own running total, 3 so far.
		"0.000002000,3000,,,,,,,,,dropped 3",
	};
	EXPECT_EQ(text_lines(text), want) << text;
	std::vector<std::vector<std::string>> recs;
	ASSERT_TRUE(csv_records(text, &recs)) << text;
	for (auto &rec : recs)
		EXPECT_EQ(rec.size(), csv_fields) << text;
	EXPECT_EQ(recs[1][10], "say \"hi\", then?stop");
	EXPECT_EQ(recs[2][4], "a,b");
	EXPECT_EQ(recs[3][10], "dropped 2: full, \"really\"");
}

TEST(Report, Summary)
{
	TempDir d;
	std::string text = report_text(write_trace(d, 1000000), REPORT_SUMMARY);
	auto l = text_lines(text);
	auto has = [&](const std::string &want) {
		for (auto &x : l)
			if (x == want)
				return true;
		return false;
	};
	EXPECT_TRUE(has("recorded as:  5 events: 5 calls, 0 returns, 0 exits, 0 kernel events"))
		<< text;
	EXPECT_TRUE(has("by source:    breakpoint 2, trampoline 1, guest 2 (calls and returns)")) << text;
	EXPECT_TRUE(has("dropped:      10 (guest ring overwrite)")) << text;
	EXPECT_TRUE(has("first event:  0.000234 s (tsc 1234000)")) << text;
	EXPECT_TRUE(has("last event:   0.002000 s (tsc 3000500)")) << text;
	EXPECT_TRUE(has("symbols:      kernel .symtab (4 symbols) (4 in the trace file)")) << text;
	// Counts, descending, then by name.
	std::vector<std::string> tail(l.end() - 5, l.end());
	std::vector<std::string> want = {
		"       calls  function",
		"           2  foo",
		"           1  start_kernel",
		"           1  we\"ird\\name",
		"           1  0xdead",
	};
	EXPECT_EQ(tail, want) << text;
}

// One call, foo at TSC 2000000, 1 ms after time zero (TSC 1000000): every
// format that shows times says 1 ms, and check's "within T" agrees.
TEST(Report, OneCallHasTheSameTimeInEveryFormat)
{
	TempDir d;
	std::string path = write_trace(d, 1000000);

	std::string ftrace = report_text(path, REPORT_FTRACE);
	EXPECT_NE(ftrace.find("] d....     0.001000: foo <-start_kernel\n"), std::string::npos)
		<< ftrace;
	std::string json = report_text(path, REPORT_JSON);
	EXPECT_NE(json.find("{\"name\":\"foo\",\"cat\":\"call\",\"ph\":\"i\",\"s\":\"t\","
			    "\"ts\":1000.000,"),
		  std::string::npos)
		<< json;
	EXPECT_NE(json.find("\"origin_tsc\":\"1000000\""), std::string::npos) << json;
	std::string csv = report_text(path, REPORT_CSV);
	// seconds since time zero, and the raw TSC beside it.
	EXPECT_NE(csv.find("\n0.001000000,2000000,0,breakpoint,foo,"), std::string::npos) << csv;
	std::string summary = report_text(path, REPORT_SUMMARY);
	EXPECT_NE(summary.find("times are guest time since its first instruction (tsc 1000000)"),
		  std::string::npos)
		<< summary;

	// check: foo is reached within 1 ms of guest time, not within 999 us,
	// and its KTAP line says when.
	expect_list l{};
	const char text[] = "reached foo within 1 ms\nreached foo within 999 us\n";
	ASSERT_EQ(expect_parse(&l, "t.expect", text, sizeof(text) - 1), 0) << et_last_error();
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	EXPECT_EQ(check_trace(path.c_str(), nullptr, &l, f), EXIT_STATUS_EXPECT_FAILED);
	fclose(f);
	std::string ktap(buf, len);
	free(buf);
	expect_list_free(&l);
	EXPECT_NE(ktap.find("ok 1 reached foo within 1 ms"), std::string::npos) << ktap;
	EXPECT_NE(ktap.find("not ok 2 reached foo within 999 us"), std::string::npos) << ktap;
	EXPECT_NE(ktap.find("call 2 at 1.000000 ms"), std::string::npos) << ktap;
}

TEST(Report, FormatNames)
{
	report_format f;
	EXPECT_EQ(report_parse_format("json", &f), 0);
	EXPECT_EQ(f, REPORT_JSON);
	EXPECT_EQ(report_parse_format("csv", &f), 0);
	EXPECT_EQ(f, REPORT_CSV);
	EXPECT_EQ(report_parse_format("xml", &f), -1);
	EXPECT_NE(strstr(et_last_error(), "unknown report format 'xml' (use ftrace, json, csv, "
					  "summary, graph, folded or trace-dat)"),
		  nullptr);
	EXPECT_EQ(report_parse_format("trace-dat", &f), 0);
	EXPECT_EQ(f, REPORT_TRACE_DAT);
}

// -o FILE picks the format by FILE's extension unless --format is given.
TEST(Report, OutputExtensionPicksTheFormat)
{
	report_format f = REPORT_FTRACE;
	EXPECT_TRUE(report_format_of_path("boot.dat", &f));
	EXPECT_EQ(f, REPORT_TRACE_DAT);
	EXPECT_TRUE(report_format_of_path("/tmp/x/boot.json", &f));
	EXPECT_EQ(f, REPORT_JSON);
	EXPECT_TRUE(report_format_of_path("b.csv", &f));
	EXPECT_EQ(f, REPORT_CSV);
	f = REPORT_SUMMARY;
	EXPECT_FALSE(report_format_of_path("boot.trace", &f));
	EXPECT_FALSE(report_format_of_path(".dat", &f));
	EXPECT_FALSE(report_format_of_path("dir/.dat", &f));
	EXPECT_FALSE(report_format_of_path("boot.data", &f));
	EXPECT_EQ(f, REPORT_SUMMARY); // untouched

	auto parsed = [](std::vector<std::string> args) {
		report_options o;
		std::vector<char *> v;
		args.insert(args.begin(), "report");
		for (auto &a : args)
			v.push_back(&a[0]);
		EXPECT_EQ(cli_parse_report((int)v.size(), v.data(), &o), 0) << et_last_error();
		return o.format;
	};
	EXPECT_EQ(parsed({ "t.trace", "-o", "t.dat" }), REPORT_TRACE_DAT);
	EXPECT_EQ(parsed({ "-o", "t.json", "t.trace" }), REPORT_JSON);
	EXPECT_EQ(parsed({ "t.trace", "-o", "t.txt" }), REPORT_FTRACE);
	EXPECT_EQ(parsed({ "t.trace", "-o", "t.dat", "-f", "ftrace" }), REPORT_FTRACE); // -f wins
	EXPECT_EQ(parsed({ "t.trace" }), REPORT_FTRACE);
}

int run_cli(const std::string &args, std::string *err = nullptr)
{
	std::string cmd = std::string(ET_TEST_BIN) + " " + args + " 2>/tmp/et-report-stderr.txt";
	int st = system(cmd.c_str());
	if (err)
		*err = read_file_text("/tmp/et-report-stderr.txt");
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(Report, Command)
{
	TempDir d;
	std::string path = write_trace(d, 1000000);
	std::string out = d.file("out.json"), err;
	ASSERT_EQ(run_cli("report " + path + " --format json --output " + out), 0);
	EXPECT_TRUE(Json(read_file_text(out)).valid());
	ASSERT_EQ(run_cli("report " + path + " -f summary -o " + out), 0);
	EXPECT_NE(read_file_text(out).find("calls  function"), std::string::npos);
	// Without --format, out.json's extension asks for JSON; another name
	// gets the default, ftrace text.
	ASSERT_EQ(run_cli("report " + path + " -o " + out), 0);
	EXPECT_TRUE(Json(read_file_text(out)).valid());
	ASSERT_EQ(run_cli("report " + path + " -o " + d.file("out.txt")), 0);
	EXPECT_EQ(read_file_text(d.file("out.txt")).rfind("# tracer: function\n", 0), 0u);

	EXPECT_EQ(run_cli("report " + d.file("missing"), &err), 1);
	EXPECT_EQ(err.rfind("earlytrace: cannot open trace file", 0), 0u) << err;
	ASSERT_EQ(run_cli("report " + path + " --format csv -o " + out), 0);
	EXPECT_EQ(read_file_text(out).rfind("seconds,tsc,cpu,", 0), 0u);

	EXPECT_EQ(run_cli("report " + path + " --format xml", &err), 1);
	EXPECT_NE(err.find("unknown report format 'xml'"), std::string::npos) << err;
	EXPECT_EQ(run_cli("report", &err), 1);
	EXPECT_NE(err.find("no trace file given"), std::string::npos) << err;
	EXPECT_EQ(run_cli("report " + path + " " + path, &err), 1);
	EXPECT_NE(err.find("report: unexpected argument '" + path + "'"), std::string::npos) << err;
	EXPECT_EQ(run_cli("report " + path + " --bogus", &err), 1);
	EXPECT_NE(err.find("unknown option '--bogus' (try 'earlytrace report --help')"),
		  std::string::npos)
		<< err;
	EXPECT_EQ(run_cli("report " + path + " -z", &err), 1);
	EXPECT_NE(err.find("unknown option '-z'"), std::string::npos) << err;
	EXPECT_EQ(run_cli("report " + path + " -o", &err), 1);
	EXPECT_NE(err.find("option '-o' needs a value"), std::string::npos) << err;
}

} // namespace
