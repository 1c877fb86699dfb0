// SPDX-License-Identifier: MIT
// What the hostile-guest and fault tests read back from a trace file: the
// calls (events of other kinds are counted, not kept), their functions and
// parents by name, the marks, and the END/DROPS accounting. Header-only.
#ifndef TESTS_BOOT_TRACE_CHECKS_H
#define TESTS_BOOT_TRACE_CHECKS_H

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/symbols/symtab.h"
#include "vmm/tracefile/trace_file.h"

struct TraceFile {
	std::string error;	    // trace_reader_open()'s, "" when it opened
	std::string state;	    // trace_reader_state(): how the run ended
	bool has_end = false, truncated = false;
	uint64_t events = 0;	    // every event in the file, of any kind
	uint64_t dropped = 0;	    // the highest DROPS total
	uint64_t end_recorded = 0, end_written = 0, end_dropped = 0, end_lost = 0;
	std::string exit_reason;
	std::vector<et_ring_record> calls; // file order
	std::vector<std::string> fn, parent; // per call, by symbol ("" for parent 0)
	std::map<std::string, long> count;   // calls per function
	std::map<unsigned, long> by_source;  // calls per source
	std::vector<std::pair<uint64_t, std::string>> marks; // tsc, text
};

inline std::string symbol_name(const struct symtab *tab, uint64_t addr)
{
	if (!addr)
		return "";
	const struct symbol *s = symtab_lookup(tab, addr, nullptr);
	return s ? s->name : "?";
}

inline TraceFile load_trace(const std::string &path)
{
	TraceFile t;
	struct trace_reader *r = nullptr;
	char buf[512];

	if (trace_reader_open(&r, path.c_str())) {
		t.error = et_last_error();
		return t;
	}
	const struct trace_info *in = trace_reader_info(r);
	const struct symtab *tab = trace_reader_symtab(r);
	t.state = trace_reader_state(r, buf, sizeof(buf));
	t.has_end = in->has_end;
	t.truncated = in->truncated;
	t.events = in->nr_events;
	t.dropped = in->dropped;
	t.end_recorded = in->end_recorded;
	t.end_written = in->end_written;
	t.end_dropped = in->end_dropped;
	t.end_lost = in->end_lost;
	t.exit_reason = in->exit_reason;
	struct trace_record rec;
	while (trace_reader_next(r, &rec) == 1) {
		if (rec.type == TRACE_REC_MARK)
			t.marks.emplace_back(rec.tsc, rec.text);
		for (size_t i = 0; i < rec.nr_events; i++) {
			const et_ring_record &ev = rec.events[i];
			if ((ev.kind & 0xff) != ET_REC_CALL)
				continue;
			t.calls.push_back(ev);
			t.fn.push_back(symbol_name(tab, ev.ip));
			t.parent.push_back(symbol_name(tab, ev.parent_ip));
			t.count[t.fn.back()]++;
			t.by_source[ev.flags & ET_REC_SRC_MASK]++;
		}
	}
	trace_reader_close(r);
	return t;
}

// Calls to the call tree's functions (ct_*), optionally from one source.
inline long ct_calls(const TraceFile &t, unsigned source = 0)
{
	long n = 0;
	for (size_t i = 0; i < t.calls.size(); i++)
		n += t.fn[i].rfind("ct_", 0) == 0 &&
		     (!source || (t.calls[i].flags & ET_REC_SRC_MASK) == source);
	return n;
}

// The sanitizer build aborts with a report on stderr (exit status 1,
// which a test expecting a clean refusal must not take for one).
inline void expect_no_sanitizer_report(const VmmResult &r)
{
	EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
}

// ...and neither build may crash or hang.
inline void expect_no_crash(const VmmResult &r)
{
	expect_no_sanitizer_report(r);
	EXPECT_FALSE(r.timed_out) << r.err;
	EXPECT_LT(r.status, 128) << "killed by a signal: " << r.err;
}

// `earlytrace report FILE --format FORMAT`, as a user would run it.
inline VmmResult report(const std::string &path, const char *format = "summary")
{
	return run_vmm({ "report", path, "--format", format });
}

inline long occurrences(const std::string &text, const std::string &what)
{
	long n = 0;
	for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
		n++;
	return n;
}

// A finished trace written in-process, no KVM needed: `records` EVENTS
// records of `per_record` calls each (alternately to two functions), then
// END counting them all as written.
inline void write_small_trace(const std::string &path, int records = 4, int per_record = 10)
{
	static struct symbol syms[] = {
		{ 0xffffffff81000000ull, 0x100, "ct_root", 'T' },
		{ 0xffffffff81000100ull, 0x100, "ct_leaf", 'T' },
	};
	static struct symtab tab = { syms, 2 };
	struct trace_meta m {};
	m.kernel_path = "x86_64.elf";
	m.tsc_khz = 1000000;
	m.mode = "breakpoint";
	struct trace_writer *w = nullptr;
	ASSERT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	ASSERT_EQ(trace_writer_symbols(w, &tab), 0);
	uint64_t tsc = 1000;
	for (int r = 0; r < records; r++) {
		std::vector<et_ring_record> ev((size_t)per_record);
		for (auto &e : ev) {
			e = et_ring_record{};
			e.tsc = tsc += 10;
			e.ip = syms[tsc / 10 % 2].addr;
			e.kind = ET_REC_CALL;
			e.flags = ET_REC_SRC_BREAKPOINT;
		}
		ASSERT_EQ(trace_writer_events(w, ev.data(), ev.size()), 0);
	}
	uint64_t n = (uint64_t)records * (uint64_t)per_record;
	ASSERT_EQ(trace_writer_close(w, n, 0, "debug-exit port"), 0);
}

// The time of the test kernel's call trees in folded stacks: the sum of
// every ct_root stack's self time (ns), which adds up to the roots'
// durations.
inline uint64_t folded_sum(const std::string &text)
{
	uint64_t sum = 0;
	std::regex folded("^(ct_root(;ct_[a-z]+)*) ([0-9]+)$");
	for (auto &x : text_lines(text)) {
		std::smatch m;
		if (std::regex_match(x, m, folded))
			sum += std::stoull(m[3]);
	}
	return sum;
}

// A trace cut by a signal while the guest calls as fast as it can: nothing
// lost, and a drop only where the default host buffer (--buf-size 64M,
// its events) had filled, every drop counted. How far a guest gets before
// the signal depends on the KVM: with trampolines on a fast one it fills
// the buffer in a fraction of a second.
inline void expect_nothing_lost_but_a_full_buffer(const TraceFile &t)
{
	const uint64_t capacity = (64ull << 20) / sizeof(struct et_ring_record);

	EXPECT_EQ(t.end_lost, 0u);
	if (t.end_dropped) {
		EXPECT_EQ(t.end_recorded - t.end_dropped, capacity)
			<< t.end_dropped << " dropped before the buffer was full";
	}
}

#endif // TESTS_BOOT_TRACE_CHECKS_H
