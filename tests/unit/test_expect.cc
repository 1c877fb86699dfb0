// SPDX-License-Identifier: MIT
// The expectation language: parsing (every assertion kind, comments,
// every malformed line with its file:line), evaluation of each kind
// passing and failing on synthetic trace files written with trace_writer,
// and `check`'s KTAP report and exit status.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/ktap_checker.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/check/expect.h"
#include "vmm/check/ktap.h"
#include "vmm/cmd/check.h"

namespace {

const uint64_t kBase = 0xffffffff81000000ull;
enum : uint64_t {
	START_KERNEL = kBase + 0x1000,
	SETUP_ARCH = kBase + 0x2000,
	CT_LEAF = kBase + 0x3000,
	CT_BRANCH = kBase + 0x3100,
	MEMCPY = kBase + 0x4000, // also __memcpy
	PANIC = kBase + 0x5000,
	FTRACE_INIT = kBase + 0x6000,
	UNNAMED = 0xffffffffa0000000ull,
};

struct symbol syms[] = {
	{ START_KERNEL, 0x100, "start_kernel", 'T' },
	{ SETUP_ARCH, 0x100, "setup_arch", 'T' },
	{ CT_LEAF, 0x100, "ct_leaf", 't' },
	{ CT_BRANCH, 0x100, "ct_branch", 't' },
	{ MEMCPY, 0x80, "__memcpy", 'T' },
	{ MEMCPY, 0x80, "memcpy", 'W' },
	{ PANIC, 0x100, "panic", 'T' },
	{ FTRACE_INIT, 0x100, "ftrace_init", 'T' },
};

et_ring_record exit_event(uint64_t tsc)
{
	et_ring_record e = make_call(tsc, START_KERNEL + 0x10, 0x3f8);
	e.kind = 16; // a VM exit (port I/O): not a call
	return e;
}

struct TraceSpec {
	uint64_t tsc_khz = 1000000; // 1 GHz: one TSC cycle a nanosecond
	std::vector<std::vector<et_ring_record>> batches;
	std::vector<std::pair<uint64_t, std::string>> marks;
	uint64_t dropped = 0;
};

// The usual boot: an exit first (guest time starts there), start_kernel,
// setup_arch, five ct_leaf, memcpy through its alias, a ct_branch 6 ms in,
// a return (not a call), the handoff mark.
TraceSpec boot_spec()
{
	TraceSpec s;
	std::vector<et_ring_record> v;
	v.push_back(exit_event(1000));
	v.push_back(make_call(2000, START_KERNEL, 0));
	v.push_back(make_call(3000, SETUP_ARCH, START_KERNEL + 0x20));
	for (uint64_t i = 0; i < 5; i++)
		v.push_back(make_call(4000 + i, CT_LEAF, SETUP_ARCH + 0x30));
	v.push_back(make_call(5000, MEMCPY, SETUP_ARCH + 0x40));
	v.push_back(make_call(5100, UNNAMED, 0));
	v.push_back(make_call(6001000, CT_BRANCH, START_KERNEL + 0x40));
	et_ring_record ret = make_call(7000000, SETUP_ARCH, START_KERNEL + 0x24);
	ret.kind = 2; // a return
	v.push_back(ret);
	s.batches.push_back(v);
	s.marks.push_back({ 6500, "handoff: ftrace_init reached, 8 sites restored" });
	return s;
}

std::string write_trace(const TempDir &dir, const TraceSpec &s, const char *name = "t.trace")
{
	std::string path = dir.file(name);
	struct trace_meta meta = {};
	meta.kernel_path = "vmlinux";
	meta.symbol_source = "test";
	meta.tsc_khz = s.tsc_khz;
	meta.mode = "breakpoint";
	struct symtab tab = { syms, sizeof(syms) / sizeof(syms[0]) };
	struct trace_writer *w = nullptr;
	EXPECT_EQ(trace_writer_open(&w, path.c_str(), &meta), 0) << et_last_error();
	EXPECT_EQ(trace_writer_symbols(w, &tab), 0);
	uint64_t n = 0;
	for (const auto &b : s.batches) {
		EXPECT_EQ(trace_writer_events(w, b.data(), b.size()), 0);
		n += b.size();
	}
	for (const auto &m : s.marks)
		EXPECT_EQ(trace_writer_mark(w, m.first, m.second.c_str()), 0);
	if (s.dropped) {
		EXPECT_EQ(trace_writer_drops(w, s.dropped, 9000, "host buffer full"), 0);
	}
	EXPECT_EQ(trace_writer_close(w, n + s.dropped, s.dropped, "guest exited (0)"), 0);
	return path;
}

struct Parsed {
	int ret;
	std::string error;
	expect_list list{};
};

Parsed parse(const std::string &text, const char *name = "t.expect")
{
	Parsed p;
	et_clear_error();
	p.ret = expect_parse(&p.list, name, text.data(), text.size());
	if (p.ret)
		p.error = et_last_error();
	return p;
}

std::string parse_error(const std::string &text)
{
	Parsed p = parse(text);
	EXPECT_EQ(p.ret, -1) << text;
	expect_list_free(&p.list);
	return p.error;
}

// Evaluates one file's assertions over a trace file.
std::vector<expect_outcome> evaluate(const std::string &trace, const std::string &text,
				     expect_facts *facts = nullptr)
{
	Parsed p = parse(text);
	EXPECT_EQ(p.ret, 0) << p.error;
	std::vector<expect_outcome> out(p.list.nr);
	struct trace_reader *r = nullptr;
	EXPECT_EQ(trace_reader_open(&r, trace.c_str()), 0) << et_last_error();
	if (r) {
		EXPECT_EQ(expect_evaluate(&p.list, r, out.data(), facts), 0) << et_last_error();
		trace_reader_close(r);
	}
	expect_list_free(&p.list);
	return out;
}

expect_outcome one(const std::string &trace, const std::string &line)
{
	std::vector<expect_outcome> v = evaluate(trace, line + "\n");
	return v.empty() ? expect_outcome{} : v[0];
}

// check_trace's KTAP report and status.
std::string check_ktap(const std::string &trace, const std::string &text, int *status)
{
	Parsed p = parse(text);
	EXPECT_EQ(p.ret, 0) << p.error;
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	*status = check_trace(trace.c_str(), nullptr, &p.list, f);
	fclose(f);
	std::string s(buf, len);
	free(buf);
	expect_list_free(&p.list);
	return s;
}

} // namespace

TEST(ExpectParse, EveryAssertionKind)
{
	Parsed p = parse("# a comment\n"
			 "\n"
			 "called start_kernel\n"
			 "  not-called\tpanic   # trailing comment\n"
			 "before start_kernel setup_arch\r\n"
			 "calls ct_leaf >= 512\n"
			 "calls ct_leaf <= 600\n"
			 "calls ct_* == 816\n"
			 "reached ftrace_init within 500000 events\n"
			 "reached x within 200 ms\n"
			 "reached x within 1.5 s\n"
			 "reached x within 250 us\n"
			 "reached x within 7 ns\n"
			 "reached x within 3 calls\n"
			 "handoff\n"
			 "no-drops\n"
			 "handoff guest-ring\n"
			 "handoff ftrace_init", // no final newline
			 "f.expect");
	ASSERT_EQ(p.ret, 0) << p.error;
	ASSERT_EQ(p.list.nr, 16u);
	const expect *e = p.list.items;
	EXPECT_STREQ(p.list.name, "f.expect");
	EXPECT_EQ(e[0].kind, EXPECT_CALLED);
	EXPECT_STREQ(e[0].func[0], "start_kernel");
	EXPECT_EQ(e[0].line, 3u);
	EXPECT_EQ(e[1].kind, EXPECT_NOT_CALLED);
	EXPECT_STREQ(e[1].text, "not-called panic"); // one space, no comment
	EXPECT_EQ(e[2].kind, EXPECT_BEFORE);
	EXPECT_STREQ(e[2].func[0], "start_kernel");
	EXPECT_STREQ(e[2].func[1], "setup_arch"); // CRLF taken off
	EXPECT_EQ(e[3].kind, EXPECT_CALLS);
	EXPECT_EQ(e[3].cmp, EXPECT_CMP_GE);
	EXPECT_EQ(e[3].count, 512u);
	EXPECT_EQ(e[4].cmp, EXPECT_CMP_LE);
	EXPECT_EQ(e[5].cmp, EXPECT_CMP_EQ);
	EXPECT_STREQ(e[5].func[0], "ct_*");
	EXPECT_EQ(e[6].kind, EXPECT_REACHED_EVENTS);
	EXPECT_EQ(e[6].count, 500000u);
	EXPECT_EQ(e[7].kind, EXPECT_REACHED_TIME);
	EXPECT_EQ(e[7].ns, 200000000u);
	EXPECT_EQ(e[8].ns, 1500000000u);
	EXPECT_EQ(e[9].ns, 250000u);
	EXPECT_EQ(e[10].ns, 7u);
	EXPECT_EQ(e[11].kind, EXPECT_REACHED_EVENTS);
	EXPECT_EQ(e[11].count, 3u);
	EXPECT_EQ(e[12].kind, EXPECT_HANDOFF);
	EXPECT_EQ(e[12].func[0], nullptr);
	EXPECT_EQ(e[12].handoff, nullptr);
	EXPECT_EQ(e[13].kind, EXPECT_NO_DROPS);
	EXPECT_EQ(e[13].line, 16u);
	EXPECT_STREQ(e[14].handoff, "guest-ring");
	EXPECT_STREQ(e[15].handoff, "ftrace_init");
	EXPECT_STREQ(e[15].text, "handoff ftrace_init");
	expect_list_free(&p.list);
}

TEST(ExpectParse, MalformedLinesNameFileAndLine)
{
	struct {
		const char *text, *error;
	} cases[] = {
		{ "calld x", "t.expect:1: unknown assertion 'calld' (expected called, not-called" },
		{ "# c\n\ncalled", "t.expect:3: 'called' takes one function" },
		{ "called a b", "'called' takes one function" },
		{ "not-called", "'not-called' takes one function: 'not-called FUNC'" },
		{ "before a", "'before' takes two functions" },
		{ "before a a", "two different functions" },
		{ "calls a 3", "'calls' takes a function, ==, >= or <=, and a count" },
		{ "calls a > 3", "unknown comparison '>'" },
		{ "calls a >= -1", "bad count '-1'" },
		{ "calls a >= 3x", "bad count '3x'" },
		{ "calls a >= 99999999999999999999", "bad count" },
		{ "reached a", "'reached' takes 'reached FUNC within N events'" },
		{ "reached a in 3 ms", "'reached' takes" },
		{ "reached a within 0 events", "bad event count '0'" },
		{ "reached a within 3 hours", "unknown unit 'hours'" },
		{ "reached a within 0 ms", "bad time '0 ms'" },
		{ "reached a within 1.0000000001 s", "to the nanosecond at most" },
		{ "reached a within 1.5.2 s", "bad time" },
		{ "reached a within 99999999999 s", "bad time" },
		{ "handoff a b", "'handoff' takes at most one word" },
		{ "no-drops 3", "'no-drops' takes nothing" },
		{ "called foo[", "'[' without a closing ']'" },
		{ "called a b c d e f g h i", "too many words" },
		{ "called \xc3\xa9t\xc3\xa9", "unexpected byte 0xc3" },
		{ "", "t.expect: no assertions" },
		{ "# only comments\n\n   \n", "no assertions" },
	};
	for (const auto &c : cases)
		EXPECT_NE(parse_error(c.text).find(c.error), std::string::npos)
			<< "'" << c.text << "' gave: " << parse_error(c.text);
	std::string nul("called a\ncalled b\0c\n", 20);
	EXPECT_NE(parse_error(nul).find("t.expect:2: NUL byte"), std::string::npos);
}

TEST(ExpectParse, Files)
{
	TempDir dir;
	expect_list l;
	EXPECT_EQ(expect_parse_file(&l, dir.file("missing").c_str()), -1);
	EXPECT_NE(std::string(et_last_error()).find("cannot open"), std::string::npos);
	EXPECT_EQ(expect_parse_file(&l, dir.path.c_str()), -1);
	EXPECT_NE(std::string(et_last_error()).find("not a regular file"), std::string::npos);
	FILE *f = fopen(dir.file("ok.expect").c_str(), "w");
	fputs("called a\n", f);
	fclose(f);
	ASSERT_EQ(expect_parse_file(&l, dir.file("ok.expect").c_str()), 0) << et_last_error();
	EXPECT_EQ(l.nr, 1u);
	expect_list_free(&l);
	// The example files in tests/expect parse.
	for (const char *name : { "x86_64", "x86_64-ring", "x86_64-failing", "i386", "debian-early" }) {
		std::string path = std::string(ET_TEST_SRCDIR) + "/expect/" + name + ".expect";
		EXPECT_EQ(expect_parse_file(&l, path.c_str()), 0) << et_last_error();
		expect_list_free(&l);
	}
}

TEST(ExpectEval, CalledAndNotCalled)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	EXPECT_EQ(one(t, "called start_kernel").status, EXPECT_PASS);
	EXPECT_STREQ(one(t, "called start_kernel").detail, "1 call, the first is call 1 at 0.001000 ms");
	expect_outcome o = one(t, "called panic");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "'panic' to be called");
	EXPECT_STREQ(o.detail, "it was never called (the trace holds 10 calls)");
	EXPECT_EQ(one(t, "not-called panic").status, EXPECT_PASS);
	o = one(t, "not-called ct_leaf");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.detail, "it was called 5 times, the first is call 3 at 0.003000 ms");
	// Globs: any matching function.
	EXPECT_EQ(one(t, "called ct_*").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "not-called *panic*").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "not-called setup_*").status, EXPECT_FAIL);
	// An alias counts the calls recorded under the other name.
	EXPECT_EQ(one(t, "called memcpy").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "called __memcpy").status, EXPECT_PASS);
	// The return of setup_arch is not a second call.
	EXPECT_EQ(one(t, "calls setup_arch == 1").status, EXPECT_PASS);
}

TEST(ExpectEval, UnknownFunctionsAreErrorsNotPasses)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	// A typo must not pass as "never called".
	expect_outcome o = one(t, "not-called pnaic");
	EXPECT_EQ(o.status, EXPECT_ERROR);
	EXPECT_STREQ(o.detail, "none of the trace file's 8 symbols is named 'pnaic'");
	EXPECT_EQ(one(t, "not-called zz_*").status, EXPECT_ERROR);
	EXPECT_EQ(one(t, "called pnaic").status, EXPECT_ERROR);
	EXPECT_EQ(one(t, "before start_kernel pnaic").status, EXPECT_ERROR);
	EXPECT_EQ(one(t, "calls pnaic <= 3").status, EXPECT_ERROR);
	EXPECT_EQ(one(t, "reached pnaic within 3 events").status, EXPECT_ERROR);
}

TEST(ExpectEval, Before)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	EXPECT_EQ(one(t, "before start_kernel setup_arch").status, EXPECT_PASS);
	expect_outcome o = one(t, "before setup_arch start_kernel");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "the first call of 'setup_arch' before the first call of 'start_kernel'");
	EXPECT_STREQ(o.detail, "start_kernel came first (call 1 at 0.001000 ms); setup_arch only as call 2 at 0.002000 ms");
	o = one(t, "before panic start_kernel");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_NE(std::string(o.detail).find("panic was never called"), std::string::npos) << o.detail;
	EXPECT_EQ(one(t, "before start_kernel panic").status, EXPECT_FAIL);
	EXPECT_EQ(one(t, "before panic ftrace_init").status, EXPECT_FAIL);
	EXPECT_STREQ(one(t, "before panic ftrace_init").detail, "neither was called");
}

TEST(ExpectEval, BeforeFollowsGuestTimeNotFileOrder)
{
	// A guest ring appended at the end of the run holds calls that happened
	// before the VMM's last ones.
	TempDir dir;
	TraceSpec s;
	s.batches.push_back({ make_call(100, START_KERNEL, 0), make_call(300, CT_BRANCH, 0) });
	s.batches.push_back({ make_call(200, CT_LEAF, 0, 0, ET_REC_SRC_GUEST) });
	std::string t = write_trace(dir, s);
	EXPECT_EQ(one(t, "before ct_leaf ct_branch").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "before ct_branch ct_leaf").status, EXPECT_FAIL);
	EXPECT_EQ(one(t, "reached ct_leaf within 2 events").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "reached ct_branch within 2 events").status, EXPECT_FAIL);
	EXPECT_STREQ(one(t, "reached ct_branch within 2 events").detail,
		     "it was first called only as call 3 at 0.000200 ms");
}

TEST(ExpectEval, Calls)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	EXPECT_EQ(one(t, "calls ct_leaf == 5").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "calls ct_leaf >= 5").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "calls ct_leaf <= 5").status, EXPECT_PASS);
	EXPECT_STREQ(one(t, "calls ct_leaf == 5").detail, "5 calls");
	expect_outcome o = one(t, "calls ct_leaf == 4");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "'ct_leaf' to be called exactly 4 times");
	EXPECT_STREQ(o.detail, "it was called 5 times");
	o = one(t, "calls ct_leaf >= 6");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "'ct_leaf' to be called at least 6 times");
	o = one(t, "calls ct_leaf <= 4");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "'ct_leaf' to be called at most 4 times");
	// Globs sum over their functions.
	EXPECT_EQ(one(t, "calls ct_* == 6").status, EXPECT_PASS);
	EXPECT_STREQ(one(t, "calls ct_* == 7").expected, "a function matching 'ct_*' to be called exactly 7 times");
	EXPECT_EQ(one(t, "calls panic == 0").status, EXPECT_PASS);
}

TEST(ExpectEval, ReachedWithinEventsAndTime)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	// Calls count, exits and returns do not: setup_arch is the 2nd call.
	EXPECT_EQ(one(t, "reached setup_arch within 2 events").status, EXPECT_PASS);
	expect_outcome o = one(t, "reached setup_arch within 1 events");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "'setup_arch' to be called within the first 1 call");
	EXPECT_STREQ(o.detail, "it was first called only as call 2 at 0.002000 ms");
	o = one(t, "reached panic within 100 events");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.detail, "it was never called (the trace holds 10 calls)");
	// Guest time from the first event (the exit at TSC 1000): ct_branch
	// is called 6 ms later.
	EXPECT_EQ(one(t, "reached ct_branch within 6 ms").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "reached ct_branch within 6000000 ns").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "reached ct_branch within 5999999 ns").status, EXPECT_FAIL);
	o = one(t, "reached ct_branch within 5.5 ms");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "'ct_branch' to be called within 5.500000 ms of guest time");
	EXPECT_STREQ(o.detail, "it was first called only as call 10 at 6.000000 ms");
	EXPECT_EQ(one(t, "reached start_kernel within 1 us").status, EXPECT_PASS);
	EXPECT_EQ(one(t, "reached panic within 1 s").status, EXPECT_FAIL);

	// Without a TSC frequency there is no guest time: undecidable.
	TraceSpec s = boot_spec();
	s.tsc_khz = 0;
	std::string t2 = write_trace(dir, s, "nokhz.trace");
	o = one(t2, "reached start_kernel within 1 s");
	EXPECT_EQ(o.status, EXPECT_ERROR);
	EXPECT_NE(std::string(o.detail).find("does not record the guest TSC frequency"), std::string::npos);
	EXPECT_EQ(one(t2, "reached start_kernel within 1 events").status, EXPECT_PASS);
}

TEST(ExpectEval, HandoffAndDrops)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	expect_outcome o = one(t, "handoff");
	EXPECT_EQ(o.status, EXPECT_PASS);
	EXPECT_STREQ(o.detail, "handoff: ftrace_init reached, 8 sites restored");
	EXPECT_EQ(one(t, "handoff ftrace_init").status, EXPECT_PASS);
	o = one(t, "handoff guest-ring");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.expected, "a handoff to the guest's ring (guestlib)");
	EXPECT_STREQ(o.detail, "the handoff was another: 'handoff: ftrace_init reached, 8 sites restored'");
	o = one(t, "handoff ftrace");
	EXPECT_EQ(o.status, EXPECT_FAIL); // the whole symbol, not a prefix
	EXPECT_STREQ(o.expected, "a handoff when the kernel reached ftrace");
	EXPECT_EQ(one(t, "no-drops").status, EXPECT_PASS);

	TraceSpec ring = boot_spec();
	ring.marks = { { 6500, "handoff: guest ring at 0x120180 (8190 records), 816 early events copied, 0 did not fit" } };
	std::string tr = write_trace(dir, ring, "ring.trace");
	EXPECT_EQ(one(tr, "handoff guest-ring").status, EXPECT_PASS);
	EXPECT_EQ(one(tr, "handoff").status, EXPECT_PASS);
	EXPECT_EQ(one(tr, "handoff ftrace_init").status, EXPECT_FAIL);

	TraceSpec s = boot_spec();
	s.marks = { { 10, "timeout" } };
	s.dropped = 7;
	std::string t2 = write_trace(dir, s, "drops.trace");
	o = one(t2, "handoff");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.detail, "the trace has no handoff mark (1 other mark, the last 'timeout')");
	o = one(t2, "no-drops");
	EXPECT_EQ(o.status, EXPECT_FAIL);
	EXPECT_STREQ(o.detail, "7 events were dropped (host buffer full)");

	s.marks.clear();
	std::string t3 = write_trace(dir, s, "nomarks.trace");
	EXPECT_STREQ(one(t3, "handoff").detail, "the trace has no marks at all");
}

TEST(ExpectEval, Facts)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	expect_facts f{};
	evaluate(t, "no-drops\n", &f);
	EXPECT_EQ(f.calls, 10u);  // 12 events, less the exit and the return
	EXPECT_EQ(f.unnamed, 1u); // the call at an address no symbol covers
}

TEST(ExpectEval, FilterWarnings)
{
	Parsed p = parse("called ct_leaf\nnot-called panic\ncalled uart_*\nbefore ct_leaf ct_fib\nhandoff\n");
	ASSERT_EQ(p.ret, 0);
	std::vector<std::string> got;
	auto warn = [](void *ctx, const expect_list *, const expect *e, const char *func,
		       const char *why) {
		static_cast<std::vector<std::string> *>(ctx)->push_back(
			std::to_string(e->line) + " " + func + ": " + why);
	};
	const char *filters[] = { "ct_*" }, *notrace[] = { "ct_fib" };
	ASSERT_EQ(expect_check_filters(&p.list, filters, 1, notrace, 1, warn, &got), 0);
	std::vector<std::string> want = { "2 panic: no --filter selects it",
					  "4 ct_fib: --notrace leaves it out" };
	EXPECT_EQ(got, want); // globs (uart_*) are not judged
	got.clear();
	ASSERT_EQ(expect_check_filters(&p.list, nullptr, 0, nullptr, 0, warn, &got), 0);
	EXPECT_TRUE(got.empty()); // no filter: everything is traced
	expect_list_free(&p.list);
}

// ---- KTAP ------------------------------------------------------------

TEST(Ktap, WriterOutputIsValidKtap)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ktap k;
	ktap_begin(&k, f);
	ktap_diag(&k, "header %d", 1);
	ktap_plan(&k, 4);
	ktap_result(&k, KTAP_PASS, "first one", "12 calls");
	ktap_diag(&k, "why\nthe next failed"); // a line break cannot split the line
	ktap_result(&k, KTAP_FAIL, "a # in a description", nullptr);
	ktap_result(&k, KTAP_ERROR, "third", "no such symbol");
	ktap_result(&k, KTAP_SKIP, "fourth", nullptr);
	EXPECT_EQ(ktap_end(&k), 0);
	fclose(f);
	std::string s(buf, len);
	free(buf);
	// Data goes on a '#' line before its result: the result line is the
	// description and a directive alone.
	EXPECT_EQ(s, "KTAP version 1\n"
		     "# header 1\n"
		     "1..4\n"
		     "# 12 calls\n"
		     "ok 1 first one\n"
		     "# why?the next failed\n"
		     "not ok 2 a ? in a description\n"
		     "# no such symbol\n"
		     "not ok 3 third # ERROR\n"
		     "ok 4 fourth # SKIP\n"
		     "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:1\n");
	KtapDocument doc = parse_ktap(s);
	EXPECT_EQ(doc.error, "");
	EXPECT_EQ(doc.totals, ktap_totals(doc));
}

TEST(Ktap, WriterCatchesAPlanMismatch)
{
	FILE *f = fopen("/dev/null", "w");
	struct ktap k;
	ktap_begin(&k, f);
	ktap_plan(&k, 2);
	ktap_result(&k, KTAP_PASS, "only one", nullptr);
	EXPECT_EQ(ktap_end(&k), -1);
	fclose(f);
}

TEST(Ktap, CheckerRefusesMalformedDocuments)
{
	// The checker must be able to fail, or its passes mean nothing.
	EXPECT_NE(parse_ktap("1..1\nok 1 a\n").error, "");			    // no version
	EXPECT_NE(parse_ktap("KTAP version 1\nok 1 a\n").error, "");		    // no plan
	EXPECT_NE(parse_ktap("KTAP version 1\n1..2\nok 1 a\n").error, "");	    // short
	EXPECT_NE(parse_ktap("KTAP version 1\n1..1\nok 2 a\n").error, "");	    // numbering
	EXPECT_NE(parse_ktap("KTAP version 1\n1..1\nok 1 a\nstray\n").error, ""); // junk
	EXPECT_NE(parse_ktap("KTAP version 1\n1..1\nok 1 a # ERROR x\n").error, "");
	EXPECT_EQ(parse_ktap("console noise\nKTAP version 1\n1..1\nok 1 a # x\n").error, "");
}

TEST(Check, KtapReportAndExitStatus)
{
	TempDir dir;
	std::string t = write_trace(dir, boot_spec());
	int status = -1;
	std::string passing = "called start_kernel\n"
			      "not-called panic\n"
			      "before start_kernel setup_arch\n"
			      "calls ct_leaf >= 5\n"
			      "calls ct_leaf <= 5\n"
			      "reached setup_arch within 2 events\n"
			      "reached ct_branch within 7 ms\n"
			      "handoff\n"
			      "no-drops\n";
	std::string out = check_ktap(t, passing, &status);
	EXPECT_EQ(status, 0) << out;
	KtapDocument doc = parse_ktap(out);
	ASSERT_EQ(doc.error, "") << out;
	EXPECT_EQ(doc.plan, 9u);
	for (const auto &r : doc.results)
		EXPECT_TRUE(r.ok) << r.description;
	EXPECT_EQ(doc.results[0].description, "called start_kernel");
	for (const auto &r : doc.results)
		EXPECT_EQ(r.data, "") << r.description; // data is on '#' lines
	EXPECT_NE(out.find("# t.expect:4: 5 calls\nok 4 calls ct_leaf >= 5\n"), std::string::npos)
		<< out;
	EXPECT_EQ(doc.totals, ktap_totals(doc));
	EXPECT_EQ(doc.totals, "pass:9 fail:0 xfail:0 xpass:0 skip:0 error:0");
	EXPECT_NE(out.find("# earlytrace check: t.expect on " + t), std::string::npos) << out;
	EXPECT_NE(out.find("10 calls in 12 events, 0 dropped; finished: guest exited (0)"),
		  std::string::npos) << out;
	EXPECT_NE(out.find("1 call at addresses no symbol of the file covers"), std::string::npos);

	std::string failing = "called start_kernel\n"
			      "calls ct_leaf <= 4\n"
			      "called pnaic\n";
	out = check_ktap(t, failing, &status);
	EXPECT_EQ(status, EXIT_STATUS_EXPECT_FAILED) << out;
	doc = parse_ktap(out);
	ASSERT_EQ(doc.error, "") << out;
	ASSERT_EQ(doc.results.size(), 3u);
	EXPECT_TRUE(doc.results[0].ok);
	EXPECT_FALSE(doc.results[1].ok);
	EXPECT_EQ(doc.results[1].description, "calls ct_leaf <= 4");
	EXPECT_FALSE(doc.results[2].ok);
	EXPECT_EQ(doc.results[2].directive, "ERROR");
	EXPECT_EQ(doc.totals, "pass:1 fail:1 xfail:0 xpass:0 skip:0 error:1");
	// The diagnostics come before the failed result, naming file:line.
	EXPECT_NE(out.find("# t.expect:2: expected 'ct_leaf' to be called at most 4 times\n"
			   "# t.expect:2: it was called 5 times\n"
			   "not ok 2 calls ct_leaf <= 4\n"),
		  std::string::npos)
		<< out;

	// An unreadable trace is an error, with nothing written.
	out = check_ktap(dir.file("missing.trace"), passing, &status);
	EXPECT_EQ(status, EXIT_STATUS_ERROR);
	EXPECT_EQ(out, "");
}

TEST(Check, CommandLine)
{
	struct check_options o;
	std::vector<std::string> args = { "check", "t.trace", "--expect", "x.expect", "-o", "k.tap" };
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(&a[0]);
	ASSERT_EQ(cli_parse_check((int)argv.size(), argv.data(), &o), 0) << et_last_error();
	EXPECT_STREQ(o.trace_file, "t.trace");
	EXPECT_STREQ(o.expect, "x.expect");
	EXPECT_STREQ(o.output, "k.tap");
	auto error_of = [](std::vector<std::string> a) {
		struct check_options opts;
		std::vector<char *> v;
		a.insert(a.begin(), "check");
		for (auto &s : a)
			v.push_back(&s[0]);
		EXPECT_EQ(cli_parse_check((int)v.size(), v.data(), &opts), -1);
		return std::string(et_last_error());
	};
	EXPECT_NE(error_of({ "t.trace" }).find("--expect FILE is required"), std::string::npos);
	EXPECT_NE(error_of({ "--expect", "x" }).find("no trace file given"), std::string::npos);
	EXPECT_NE(error_of({ "a", "b", "--expect", "x" }).find("unexpected argument 'b'"), std::string::npos);
	EXPECT_NE(error_of({ "a", "-e", "x", "-e", "y" }).find("--expect given twice"), std::string::npos);
	EXPECT_NE(error_of({ "a", "--bogus" }).find("unknown option '--bogus'"), std::string::npos);
}

namespace {

// Each test's description as Perl's TAP::Parser (what prove runs) reads
// the document: everything on a result line but a TAP directive. Empty
// with *available false when perl or TAP::Parser is missing.
std::vector<std::string> tap_parser_names(const TempDir &dir, const std::string &ktap,
					  bool *available)
{
	std::string path = dir.file("names.tap");
	FILE *f = fopen(path.c_str(), "w");
	fputs(ktap.c_str(), f);
	fclose(f);
	*available = system("perl -MTAP::Parser -e 1 >/dev/null 2>&1") == 0;
	if (!*available)
		return {};
	std::string cmd = "perl -MTAP::Parser -e 'my $p = TAP::Parser->new({ source => $ARGV[0] });"
			  " while (my $r = $p->next) { print $r->description, \"\\n\" if $r->is_test }"
			  " exit scalar($p->parse_errors)' " + path;
	FILE *p = popen(cmd.c_str(), "r");
	std::vector<std::string> names;
	char line[512];
	while (p && fgets(line, sizeof(line), p)) {
		std::string l(line);
		if (!l.empty() && l.back() == '\n')
			l.pop_back();
		names.push_back(l);
	}
	EXPECT_EQ(p ? pclose(p) : -1, 0) << "TAP::Parser found parse errors in\n" << ktap;
	return names;
}

} // namespace

// Two runs whose traces differ (counts, times, a failure) give the same
// test names, to the KTAP checker and to a real TAP parser, and those names
// are the assertions as written; only the '#' lines differ.
TEST(Check, KtapTestNamesAreStableAcrossRuns)
{
	TempDir dir;
	TraceSpec other = boot_spec();
	for (uint64_t i = 0; i < 7; i++) // more ct_leaf calls, later
		other.batches[0].push_back(make_call(8000000 + i, CT_LEAF, SETUP_ARCH + 0x30));
	std::string a = write_trace(dir, boot_spec(), "a.trace");
	std::string b = write_trace(dir, other, "b.trace");
	const std::string text = "called start_kernel\n"
				 "calls ct_leaf >= 5\n"
				 "calls ct_leaf <= 6\n"
				 "reached ct_branch within 7 ms\n"
				 "called pnaic\n";
	std::vector<std::string> want = { "called start_kernel", "calls ct_leaf >= 5",
					  "calls ct_leaf <= 6", "reached ct_branch within 7 ms",
					  "called pnaic" };
	int status_a, status_b;
	std::string out_a = check_ktap(a, text, &status_a), out_b = check_ktap(b, text, &status_b);
	ASSERT_NE(out_a, out_b); // the runs do differ
	KtapDocument doc_a = parse_ktap(out_a), doc_b = parse_ktap(out_b);
	ASSERT_EQ(doc_a.error, "") << out_a;
	ASSERT_EQ(doc_b.error, "") << out_b;
	ASSERT_NE(doc_a.diagnostics, doc_b.diagnostics);
	EXPECT_TRUE(doc_a.results[2].ok);
	EXPECT_FALSE(doc_b.results[2].ok); // 12 calls this time
	std::vector<std::string> names_a, names_b;
	for (const auto &r : doc_a.results) {
		names_a.push_back(r.description);
		EXPECT_EQ(r.data, "") << r.description;
	}
	for (const auto &r : doc_b.results) {
		names_b.push_back(r.description);
		EXPECT_EQ(r.data, "") << r.description;
	}
	EXPECT_EQ(names_a, want) << out_a;
	EXPECT_EQ(names_b, want) << out_b;

	bool available;
	std::vector<std::string> tap_a = tap_parser_names(dir, out_a, &available);
	if (!available)
		GTEST_SKIP() << "perl's TAP::Parser is not installed (KTAP checker passed)";
	std::vector<std::string> tap_b = tap_parser_names(dir, out_b, &available);
	// TAP reads "# ERROR" (not a TAP directive) as part of the name: a
	// constant word, the same in both runs.
	want.back() += " # ERROR";
	EXPECT_EQ(tap_a, want) << out_a;
	EXPECT_EQ(tap_b, want) << out_b;
}
