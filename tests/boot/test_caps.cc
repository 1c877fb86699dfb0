// SPDX-License-Identifier: MIT
// Work and output proportional to the input: a small --graph trace of
// very deeply nested calls must not make `report --format folded` or
// `graph` need gigabytes. Stacks are capped at REPORT_MAX_DEPTH frames
// (vmm/report/report_util.h) and the output says so. docs/reliability.md,
// "Bounded work".
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

// `depth` nested calls, alternately to two functions, then their returns.
void write_deep_trace(const std::string &path, size_t depth)
{
	static struct symbol syms[] = {
		{ 0xffffffff81000000ull, 0x100, "ct_fib", 'T' },
		{ 0xffffffff81000100ull, 0x100, "ct_leaf", 'T' },
	};
	static struct symtab tab = { syms, 2 };
	struct trace_meta m {};
	m.tsc_khz = 1000000;
	m.mode = "breakpoint";
	struct trace_writer *w = nullptr;
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	ASSERT_EQ(trace_writer_symbols(w, &tab), 0);
	std::vector<et_ring_record> ev;
	uint64_t tsc = 1000;
	for (size_t i = 0; i < depth; i++) {
		et_ring_record e{};
		e.tsc = tsc += 10;
		e.ip = syms[i % 2].addr;
		e.kind = ET_REC_CALL;
		e.flags = ET_REC_SRC_BREAKPOINT | ET_REC_F_RET_TRACED;
		ev.push_back(e);
	}
	for (size_t i = depth; i-- > 0;) {
		et_ring_record e{};
		e.tsc = tsc += 10;
		e.ip = syms[i % 2].addr;
		e.kind = ET_REC_RET;
		e.flags = ET_REC_SRC_BREAKPOINT;
		ev.push_back(e);
	}
	ASSERT_EQ(trace_writer_events(w, ev.data(), ev.size()), 0);
	ASSERT_EQ(trace_writer_close(w, ev.size(), 0, "debug-exit port"), 0);
}

long long size_of(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) ? -1 : (long long)st.st_size;
}

// `report --format format` of a trace of 32,000 nested calls (2 MB),
// which must succeed and warn of `warning`; the trace and the output
// stay in d.
void report_deep_trace(const TempDir &d, const char *format, const char *warning,
		       std::string *trace, std::string *out)
{
	*trace = d.file("deep.trace");
	*out = d.file((std::string("deep.") + format).c_str());
	write_deep_trace(*trace, 32000);
	if (::testing::Test::HasFatalFailure())
		return;
	VmmResult r = run_vmm({ "report", *trace, "--format", format, "-o", *out });
	expect_no_crash(r);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.err.find(warning), std::string::npos) << r.err;
}

} // namespace

// 32,000 nested calls (a 2 MB trace): the folded stacks stay a few lines
// of at most 127 frames, and say they were cut.
TEST(Caps, FoldedStacksOfDeepCallsAreCapped)
{
	TempDir d;
	std::string t, out;
	report_deep_trace(d, "folded", "calls nest deeper than 127 frames", &t, &out);
	ASSERT_FALSE(HasFatalFailure());
	std::string text = read_file_text(out);
	EXPECT_LT(size_of(out), size_of(t)) << "the output grew with the square of the depth";
	size_t deepest = 0;
	for (const auto &line : text_lines(text))
		deepest = std::max(deepest, (size_t)occurrences(line, ";") + 1);
	EXPECT_EQ(deepest, 127u);
	EXPECT_NE(text.find("[outer frames];ct_"), std::string::npos) << text.substr(0, 300);
	// A shallow stack is whole, with no pseudo-frame.
	EXPECT_NE(text.find("\nct_fib;ct_leaf "), std::string::npos) << text.substr(0, 300);
}

// The function graph of the same trace: lines stop indenting at 127
// levels, and a comment line says so.
TEST(Caps, GraphIndentationOfDeepCallsIsCapped)
{
	TempDir d;
	std::string t, out;
	report_deep_trace(d, "graph", "calls nest 32000 levels deep", &t, &out);
	ASSERT_FALSE(HasFatalFailure());
	// 64,000 lines of at most 127 levels of indentation (2 spaces each)
	// and a few dozen columns: about 20 MB, where 2 GB were written.
	EXPECT_LT(size_of(out), 64000LL * (127 * 2 + 64)) << "indentation grew with the depth";
	std::string text = read_file_text(out);
	EXPECT_EQ(occurrences(text, "# earlytrace: calls nest deeper than 127 levels"), 1);
}
