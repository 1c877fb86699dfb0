// SPDX-License-Identifier: MIT
// `report --format trace-dat` on trace files made by earlytrace's own
// writer (no boot): every kind of event, two vCPUs, --graph returns with
// the odd cases, VM exits of each kind, marks and drops, a run that died,
// an unknown TSC frequency. libtracecmd opens each result and every event
// is compared with earlytrace's own reading (tests/tracedat_check.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "tests/tracedat_check.h"

namespace {

const uint64_t K = 0xffffffff81000000ull;

symbol syms[] = {
	{ K + 0x000, 0x100, "start_kernel", 'T' },
	{ K + 0x100, 0x40, "foo", 't' }, // a gap after it, to 0x200
	{ K + 0x200, 0x20, "bar", 't' },
	{ K + 0x300, 0, "unsized", 'T' },
	{ K + 0x400, 0x80, "last_one", 'T' },
};
symtab tab = { syms, sizeof(syms) / sizeof(syms[0]) };

et_ring_record ret_of(uint64_t tsc, uint64_t ip, uint64_t to, uint32_t cpu, bool unwound = false)
{
	et_ring_record e = make_call(tsc, ip, to, cpu);
	e.kind = ET_REC_RET;
	if (unwound)
		e.flags |= ET_REC_F_UNWOUND;
	return e;
}

et_ring_record traced_call(uint64_t tsc, uint64_t ip, uint64_t parent, uint32_t cpu)
{
	et_ring_record e = make_call(tsc, ip, parent, cpu);
	e.flags |= ET_REC_F_RET_TRACED;
	return e;
}

et_ring_record exit_of(uint64_t tsc, uint64_t rip, uint16_t kind, uint64_t addr, uint64_t value,
		       uint8_t size, bool write, bool unclaimed, uint32_t cpu)
{
	et_exit x{};
	x.kind = kind;
	x.addr = addr;
	x.value = value;
	x.size = size;
	x.write = write;
	x.unclaimed = unclaimed;
	x.cpu = cpu;
	return et_exit_pack(tsc, rip, &x);
}

trace_writer *open_trace(const std::string &path, uint64_t khz, const char *build_id = "abcdef01")
{
	trace_meta m{};
	m.kernel_path = "images/x86_64.elf";
	m.build_id_hex = build_id;
	m.symbol_source = "kernel .symtab (5 symbols)";
	m.tsc_khz = khz;
	m.mode = "breakpoint";
	trace_writer *w = nullptr;
	EXPECT_EQ(trace_writer_open(&w, path.c_str(), &m), 0) << et_last_error();
	EXPECT_EQ(trace_writer_symbols(w, &tab), 0);
	return w;
}

// Every event kind the trace file has, on two vCPUs, with enough calls to
// fill many pages on both, and the --graph odd cases.
std::string write_everything(const TempDir &d, uint64_t khz)
{
	std::string path = d.file("all.etr");
	trace_writer *w = open_trace(path, khz);
	std::vector<et_ring_record> ev;
	uint64_t t = 1000000;

	ev.push_back(exit_of(t, 0x100123, ET_REC_MSR, 0xc0000080, 0xd01, 8, false, false, 0));
	ev.push_back(traced_call(t += 10, K + 0x000, K + 0x420, 0));	// start_kernel {
	ev.push_back(traced_call(t += 10, K + 0x100, K + 0x010, 0));	//   foo {
	ev.push_back(exit_of(t += 5, K + 0x11c, ET_REC_PIO, 0x3f8, 0x41, 1, true, false, 0));
	ev.push_back(exit_of(t += 5, K + 0x11d, ET_REC_MMIO, 0xd0000004, 0xffffffff, 4, false, true, 0));
	ev.push_back(exit_of(t += 5, K + 0x11e, ET_REC_MSR, 0x10a, 0, 8, false, true, 0));
	ev.push_back(exit_of(t += 5, K + 0x11f, ET_REC_HYPERCALL, ET_HC_MARK, 0, 0, true, false, 0));
	ev.push_back(ret_of(t += 10, K + 0x100, K + 0x010, 0));		//   }
	ev.push_back(traced_call(t += 10, K + 0x200, K + 0x020, 0));	//   bar {
	ev.push_back(traced_call(t += 10, K + 0x300, K + 0x210, 0));	//     unsized {
	ev.push_back(ret_of(t += 10, K + 0x300, K + 0x210, 0, true));	//     } unwound
	ev.push_back(ret_of(t += 10, K + 0x200, K + 0x020, 0));		//   }
	ev.push_back(ret_of(t += 10, K + 0x400, K + 0x020, 0));		//   } of a call not there
	// A gap in time a time extend holds, then many plain calls: one
	// named in foo's gap, ips no symbol covers, no parent.
	t += 5ull << 27;
	for (int i = 0; i < 3000; i++)
		ev.push_back(make_call(t += 7 + i % 5, K + 0x100 * (i % 5), i % 3 ? K + 0x150 : 0, 0,
				       i % 2 ? ET_REC_SRC_BREAKPOINT : ET_REC_SRC_TRAMPOLINE));
	ev.push_back(make_call(t += 3, 0xdead, K + 0x500, 0));
	ev.push_back(exit_of(t += 3, K + 0x401, ET_REC_HLT, 0, 0, 0, false, false, 0));
	ev.push_back(exit_of(t += 3, K + 0x402, ET_REC_SHUTDOWN, 0, 0, 0, false, false, 0));
	ev.push_back(ret_of(t += 10, K + 0x000, K + 0x420, 0)); // start_kernel }
	EXPECT_EQ(trace_writer_events(w, ev.data(), ev.size()), 0);
	EXPECT_EQ(trace_writer_mark(w, t += 5, "handoff to guest ring"), 0);
	EXPECT_EQ(trace_writer_drops(w, 7, 1000100, "host buffer full"), 0);

	// The guest ring's events, appended after the VMM's: a second run,
	// interleaving in time, on vCPU 1 (and 0).
	std::vector<et_ring_record> g;
	uint64_t u = 1000050;
	for (int i = 0; i < 2500; i++)
		g.push_back(make_call(u += 3000 + i, K + 0x200, K + 0x00c, 1 - (i % 7 == 0),
				      ET_REC_SRC_GUEST));
	EXPECT_EQ(trace_writer_events(w, g.data(), g.size()), 0);
	EXPECT_EQ(trace_writer_drops(w, 3, u + 1, "overwritten in the guest ring"), 0);
	EXPECT_EQ(trace_writer_close(w, 5600, 10, "guest exited (0)"), 0);
	return path;
}

std::string convert(const std::string &etr, const std::string &dat)
{
	trace_reader *r = nullptr;
	EXPECT_EQ(trace_reader_open(&r, etr.c_str()), 0) << et_last_error();
	FILE *f = fopen(dat.c_str(), "w");
	EXPECT_NE(f, nullptr);
	EXPECT_EQ(report_write(r, REPORT_TRACE_DAT, f), 0) << et_last_error();
	fclose(f);
	trace_reader_close(r);
	return report_note();
}

TEST(TraceDat, LibtracecmdReadsEveryEventAsEarlytraceDoes)
{
	TempDir d;
	std::string etr = write_everything(d, 2445400), dat = d.file("all.dat");
	std::string note = convert(etr, dat);
	DatExpect want = expect_tracedat(etr);
	DatFile got = read_tracedat(dat);
	EXPECT_EQ(want.cpus, 2);
	EXPECT_EQ(compare_tracedat(want, got), want.events.size());
	EXPECT_EQ(got.events.size(), want.events.size() + 1); // and the losses mark
	EXPECT_EQ(want.graph_parents, 4u);
	EXPECT_EQ(want.unmatched, 1u);
	EXPECT_EQ(want.unwound, 1u);
	EXPECT_EQ(note, "trace-dat could not express: 4 parent ips of calls written as "
			"funcgraph_entry, which has no parent field; 1 returns whose call is not in "
			"the trace (calltime set to rettime); 1 unwound frames, written as ordinary "
			"returns");

	// A few events spelled out, beyond the comparison's rules.
	ASSERT_GT(got.events.size(), 10u);
	const DatEvent &run = got.events[0];
	EXPECT_EQ(run.name, "run");
	EXPECT_EQ(run.str.at("kernel"), "images/x86_64.elf");
	EXPECT_EQ(run.str.at("build_id"), "abcdef01");
	EXPECT_EQ(run.num.at("tsc_khz"), 2445400u);
	const DatEvent *pio = nullptr, *gap = nullptr, *dead = nullptr;
	for (const DatEvent &e : got.events) {
		if (e.name == "vm_exit" && e.num.at("kind") == ET_REC_PIO)
			pio = &e;
		if (e.name == "function" && e.num.at("parent_ip") == K + 0x150)
			gap = &e;
		if (e.name == "function" && e.num.at("ip") == 0xdead)
			dead = &e;
	}
	ASSERT_TRUE(pio && gap && dead);
	EXPECT_EQ(pio->str.at("desc"), "pio write port 0x3f8 size 1 value 0x41");
	EXPECT_EQ(pio->sym.at("rip"), "foo");
	EXPECT_EQ(gap->sym.at("parent_ip"), "foo"); // kallsyms has no sizes
	EXPECT_EQ(dead->sym.at("ip"), "");
	EXPECT_EQ(dead->sym.at("parent_ip"), ""); // beyond last_one's end
	const DatEvent &end = got.events.back();
	EXPECT_EQ(end.name, "end");
	EXPECT_EQ(end.str.at("reason"), "finished: guest exited (0)");
	EXPECT_EQ(end.num.at("recorded"), 5600u);
	EXPECT_EQ(end.num.at("dropped"), 10u);
}

TEST(TraceDat, PipeGetsTheSameBytesAsAFile)
{
	TempDir d;
	std::string etr = write_everything(d, 2445400);
	std::string file = d.file("file.dat"), piped = d.file("piped.dat");
	std::string err;
	ASSERT_EQ(convert_to_tracedat(etr, file, &err), 0) << err;
	std::string cmd = std::string(ET_TEST_BIN) + " report " + etr +
			  " --format trace-dat 2>/dev/null | cat > " + piped;
	ASSERT_EQ(system(cmd.c_str()), 0);
	std::vector<uint8_t> a = read_file_bytes(file), b = read_file_bytes(piped);
	EXPECT_GT(a.size(), 20u * 4096);
	EXPECT_TRUE(a == b) << a.size() << " and " << b.size() << " bytes";
	// The command says what the format could not express.
	EXPECT_NE(err.find("earlytrace: note: trace-dat could not express: 4 parent ips"),
		  std::string::npos)
		<< err;
}

TEST(TraceDat, UnknownFrequencyKeepsRawTscAndADeadRunSaysSo)
{
	TempDir d;
	std::string etr = d.file("dead.etr"), dat = d.file("dead.dat");
	trace_writer *w = open_trace(etr, 0, "");
	et_ring_record a[] = {
		make_call(5, K + 0x000, K + 0x420),
		make_call(9, K + 0x100, K + 0x010),
		exit_of(12, K + 0x110, ET_REC_PIO, 0x80, 0, 1, true, true, 0),
	};
	EXPECT_EQ(trace_writer_events(w, a, 3), 0);
	EXPECT_EQ(trace_writer_mark(w, 10, "timeout"), 0);
	EXPECT_EQ(trace_writer_close(w, 3, 0, "x"), 0);
	{
		// Cut the END record off, as a killed VMM leaves the file.
		trace_reader *r = nullptr;
		trace_record rec;
		uint64_t end_at = 0;
		ASSERT_EQ(trace_reader_open(&r, etr.c_str()), 0);
		while (trace_reader_next(r, &rec) > 0)
			if (rec.type == TRACE_REC_END)
				end_at = rec.offset;
		trace_reader_close(r);
		ASSERT_GT(end_at, 0u);
		ASSERT_EQ(truncate(etr.c_str(), (off_t)end_at), 0);
	}
	EXPECT_EQ(convert(etr, dat), "");
	DatExpect want = expect_tracedat(etr);
	DatFile got = read_tracedat(dat);
	EXPECT_EQ(compare_tracedat(want, got), 6u); // run, 2 calls, mark, exit, end
	ASSERT_EQ(got.events.size(), 6u);
	EXPECT_EQ(got.events[1].ts, 5u); // raw TSC: no TSC2NSEC without a frequency
	EXPECT_EQ(got.events[3].str.at("text"), "timeout");
	EXPECT_EQ(got.events[4].str.at("desc"), "pio write port 0x80 size 1 value 0x0 (unclaimed)");
	EXPECT_EQ(got.events[0].str.at("build_id"), "none");
	EXPECT_EQ(got.events[5].num.at("finished"), 0u);
	EXPECT_EQ(got.events[5].str.at("reason"),
		  "run did not finish cleanly: last mark 'timeout', 3 events written");
}

TEST(TraceDat, WhatCannotBeExpressedIsCountedAndSaid)
{
	TempDir d;
	std::string etr = d.file("odd.etr"), dat = d.file("odd.dat");
	trace_writer *w = open_trace(etr, 1000000);
	// More runs than the merge takes (each record goes back in time), so
	// the events come in file order and go back on their vCPU; a vCPU
	// above what trace.dat holds; a text longer than a page.
	for (int i = 0; i < 70; i++) {
		et_ring_record e = make_call(100000 - (uint64_t)i * 10, K, K + 0x420);
		EXPECT_EQ(trace_writer_events(w, &e, 1), 0);
	}
	et_ring_record far = make_call(200000, K + 0x100, K, 5000);
	EXPECT_EQ(trace_writer_events(w, &far, 1), 0);
	EXPECT_EQ(trace_writer_mark(w, 300000, std::string(4000, 'm').c_str()), 0);
	EXPECT_EQ(trace_writer_close(w, 72, 0, "guest exited (0)"), 0);

	std::string note = convert(etr, dat);
	EXPECT_EQ(note, "trace-dat could not express: 1 events of vCPUs above 1023, left out; 69 "
			"events earlier than the one before on their vCPU, written at its time");
	DatFile got = read_tracedat(dat);
	ASSERT_TRUE(got.ok) << got.error;
	EXPECT_EQ(got.cpus, 1024);
	size_t calls = 0;
	for (const DatEvent &e : got.events) {
		EXPECT_EQ(e.cpu, 0);
		calls += e.name == "function";
		if (e.name == "mark" && e.str.at("text")[0] == 'm') {
			EXPECT_EQ(e.str.at("text"), std::string(4000, 'm'));
		}
	}
	EXPECT_EQ(calls, 70u);
	ASSERT_GE(got.events.size(), 2u);
	EXPECT_EQ(got.events[got.events.size() - 2].str.at("text"), note);
}

TEST(TraceDat, EmptyTraceIsAValidFile)
{
	TempDir d;
	std::string etr = d.file("empty.etr"), dat = d.file("empty.dat");
	trace_writer *w = open_trace(etr, 1000000);
	EXPECT_EQ(trace_writer_close(w, 0, 0, "guest exited (0)"), 0);
	convert(etr, dat);
	DatExpect want = expect_tracedat(etr);
	DatFile got = read_tracedat(dat);
	EXPECT_EQ(compare_tracedat(want, got), 2u); // run and end
}

TEST(TraceDat, HelpNamesTheFormatAndBadInputFailsCleanly)
{
	VmmResult r = run_vmm({ "report", "--help" });
	EXPECT_EQ(r.status, 0);
	EXPECT_NE(r.out.find("trace-dat:"), std::string::npos) << r.out;
	TempDir d;
	std::string err;
	EXPECT_NE(convert_to_tracedat(d.file("missing.etr"), d.file("x.dat"), &err), 0);
	EXPECT_NE(err.find("missing.etr"), std::string::npos) << err;
}

} // namespace

// libtracecmd turns a TSC into ns in 64 bits: past 2^64 ns (centuries of
// TSC, seen only in damaged or hostile files) its times wrap and come out
// of order. The writer keeps the raw TSC, and counts and says it.
TEST(TraceDat, TimesPastWhatTraceCmdConvertsAreCountedAndSaid)
{
	TempDir d;
	std::string etr = d.file("far.etr"), dat = d.file("far.dat");
	trace_writer *w = open_trace(etr, 1000); // 1 MHz: a microsecond a cycle
	et_ring_record near = make_call(1000, K, K + 0x420);
	et_ring_record far = make_call(1ull << 60, K + 0x100, K);
	EXPECT_EQ(trace_writer_events(w, &near, 1), 0);
	EXPECT_EQ(trace_writer_events(w, &far, 1), 0);
	EXPECT_EQ(trace_writer_close(w, 2, 0, "guest exited (0)"), 0);

	EXPECT_EQ(convert(etr, dat), "trace-dat could not express: 1 events at TSCs past 2^64 ns, "
				     "where trace-cmd's conversion to ns wraps (shown at wrong "
				     "times)");
	DatFile got = read_tracedat(dat);
	ASSERT_TRUE(got.ok) << got.error;
	size_t calls = 0;
	for (const DatEvent &e : got.events)
		calls += e.name == "function";
	EXPECT_EQ(calls, 2u);
}
