// SPDX-License-Identifier: MIT
// VM exits as trace events: the exit encoding of the 32-byte record, and
// the reports, which show exits between calls in time order even when the
// file holds them in two runs (the VMM's stream, then a guest ring).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "arch/x86/msr_names.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

const uint64_t K = 0xffffffff80100000ull;

struct symbol syms[] = {
	{ K + 0x000, 0x100, "main", 'T' },
	{ K + 0x100, 0x40, "uart_putc", 't' },
	{ K + 0x200, 0x40, "es_msr", 't' },
};
struct symtab tab = { syms, 3 };

et_ring_record exit_event(uint64_t tsc, uint64_t ip, uint16_t kind, uint64_t addr, uint64_t value,
			  uint8_t size, bool write, bool unclaimed = false)
{
	et_exit x{};
	x.kind = kind;
	x.addr = addr;
	x.value = value;
	x.size = size;
	x.write = write;
	x.unclaimed = unclaimed;
	return et_exit_pack(tsc, ip, &x);
}

// The VMM's stream (calls and exits), then a guest ring dumped at the end
// whose calls happened between the VMM's exits: two runs.
std::string write_trace(const TempDir &d)
{
	std::string path = d.file("exits.ettrace");
	trace_meta m{};
	m.kernel_path = "x86_64.elf";
	m.tsc_khz = 1000000; // 1 GHz: a cycle is a nanosecond
	m.mode = "breakpoint";
	trace_writer *w;
	EXPECT_EQ(trace_writer_open(&w, path.c_str(), &m), 0);
	EXPECT_EQ(trace_writer_symbols(w, &tab), 0);
	EXPECT_EQ(trace_writer_clock(w, 0), 0); // time zero at TSC 0: times are TSCs
	et_ring_record vmm[] = {
		make_call(1000, K + 0x100, K + 0x10),
		exit_event(1100, K + 0x11c, ET_REC_PIO, 0x3f8, 0x41, 1, true),
		exit_event(1200, K + 0x11d, ET_REC_PIO, 0x3fd, 0x60, 1, false),
		exit_event(5000, K + 0x211, ET_REC_MSR, 0x174, 0x10, 8, true),
		exit_event(6000, K + 0x30, ET_REC_MMIO, 0xd0000000, 0x12345678, 4, true, true),
	};
	EXPECT_EQ(trace_writer_events(w, vmm, 5), 0);
	et_ring_record ring[] = {
		make_call(3000, K + 0x200, K + 0x20, 0, ET_REC_SRC_GUEST),
		make_call(7000, K + 0x100, K + 0x20, 0, ET_REC_SRC_GUEST),
	};
	EXPECT_EQ(trace_writer_events(w, ring, 2), 0);
	EXPECT_EQ(trace_writer_close(w, 7, 0, "guest exited (0)"), 0);
	return path;
}

} // namespace

TEST(ExitEvents, EncodingRoundTrips)
{
	struct Case {
		uint16_t kind;
		uint64_t addr, value;
		uint8_t size;
		bool write, unclaimed;
		uint32_t cpu;
	} cases[] = {
		{ ET_REC_PIO, 0x3f8, 0x41, 1, true, false, 0 },
		{ ET_REC_PIO, 0xcfc, 0xffffffff, 4, false, true, 3 },
		{ ET_REC_MMIO, 0x3ffffffffffull, 0x0123456789abcdefull, 8, true, false, 255 },
		{ ET_REC_MMIO, 0xfed00000, 0xffff, 2, false, true, 1 },
		{ ET_REC_MSR, 0xc0000080, 0xd01, 8, true, false, 0 },
		{ ET_REC_MSR, 0xffffffff, 0xffffffffffffffffull, 8, false, true, 7 },
		{ ET_REC_HYPERCALL, ET_HC_HANDOFF, (uint64_t)-22, 0, true, false, 0 },
		{ ET_REC_SHUTDOWN, 0, 0, 0, false, false, 0 },
	};
	for (const Case &c : cases) {
		et_exit x{};
		x.kind = c.kind;
		x.addr = c.addr;
		x.value = c.value;
		x.size = c.size;
		x.write = c.write;
		x.unclaimed = c.unclaimed;
		x.cpu = c.cpu;
		et_ring_record r = et_exit_pack(123, 0xffffffff80100abcull, &x);
		EXPECT_EQ(r.tsc, 123u);
		EXPECT_EQ(r.ip, 0xffffffff80100abcull);
		EXPECT_TRUE(et_rec_is_exit(&r));
		EXPECT_EQ(r.flags & ET_REC_SRC_MASK, ET_REC_SRC_BREAKPOINT);
		et_exit y = et_exit_unpack(&r);
		EXPECT_EQ(y.kind, c.kind);
		EXPECT_EQ(y.addr, c.addr);
		EXPECT_EQ(y.value, c.value);
		EXPECT_EQ(y.size, c.size);
		EXPECT_EQ(y.write, c.write);
		EXPECT_EQ(y.unclaimed, c.unclaimed);
		EXPECT_EQ(y.cpu, c.cpu);
		EXPECT_EQ(et_rec_cpu(&r), c.cpu);
	}
	// Calls keep their own layout.
	et_ring_record call = make_call(1, 2, 3, 5);
	EXPECT_FALSE(et_rec_is_exit(&call));
	EXPECT_EQ(et_rec_cpu(&call), 5u);
}

TEST(ExitEvents, MsrNames)
{
	uint32_t i = 0;
	EXPECT_EQ(arch_msr_parse("efer", &i), 0);
	EXPECT_EQ(i, 0xc0000080u);
	EXPECT_EQ(arch_msr_parse("0x1a0", &i), 0);
	EXPECT_EQ(i, 0x1a0u);
	EXPECT_EQ(arch_msr_parse("372", &i), 0);
	EXPECT_EQ(i, 372u);
	EXPECT_EQ(arch_msr_parse("nonsense", &i), -1);
	EXPECT_EQ(arch_msr_parse("0x100000000", &i), -1);
	EXPECT_STREQ(arch_msr_name(0x277), "pat");
	EXPECT_EQ(arch_msr_name(0x12345), nullptr);
}

TEST(ExitEvents, ReaderCountsKindsAndRuns)
{
	TempDir d;
	trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, write_trace(d).c_str()), 0) << et_last_error();
	const trace_info *in = trace_reader_info(r);
	EXPECT_EQ(in->version, (uint32_t)TRACE_FILE_VERSION);
	EXPECT_EQ(in->nr_events, 7u);
	EXPECT_EQ(in->nr_exits, 4u);
	EXPECT_EQ(in->exits_by_kind[ET_REC_PIO - ET_REC_EXIT_FIRST], 2u);
	EXPECT_EQ(in->exits_by_kind[ET_REC_MSR - ET_REC_EXIT_FIRST], 1u);
	EXPECT_EQ(in->events_by_source[ET_REC_SRC_BREAKPOINT], 1u); // calls only
	EXPECT_EQ(in->events_by_source[ET_REC_SRC_GUEST], 2u);
	EXPECT_EQ(in->nr_runs, 2u);
	EXPECT_EQ(in->nr_cpus, 1u);

	// The merge yields every event once, in TSC order.
	trace_merge *m;
	ASSERT_EQ(trace_merge_open(r, &m), 0);
	et_ring_record ev;
	std::vector<uint64_t> tscs;
	while (trace_merge_next(m, &ev) == 1)
		tscs.push_back(ev.tsc);
	trace_merge_close(m);
	EXPECT_EQ(tscs, (std::vector<uint64_t>{ 1000, 1100, 1200, 3000, 5000, 6000, 7000 }));
	trace_reader_close(r);
}

TEST(ExitEvents, FtraceShowsExitsAsTheirOwnLinesInTimeOrder)
{
	TempDir d;
	std::string text = report_text(write_trace(d), REPORT_FTRACE);
	std::vector<std::string> body;
	for (auto &l : text_lines(text))
		if (l[0] != '#')
			body.push_back(l);
	std::vector<std::string> want = {
		"          <idle>-0       [000] d....     0.000001: uart_putc <-main",
		"          <idle>-0       [000] d....     0.000001: vm_exit: pio write port 0x3f8 size 1 value 0x41 in uart_putc+0x1c",
		"          <idle>-0       [000] d....     0.000001: vm_exit: pio read port 0x3fd size 1 value 0x60 in uart_putc+0x1d",
		"          <idle>-0       [000] .....     0.000003: es_msr <-main",
		"          <idle>-0       [000] d....     0.000005: vm_exit: msr write 0x174 (sysenter_cs) value 0x10 in es_msr+0x11",
		"          <idle>-0       [000] d....     0.000006: vm_exit: mmio write addr 0xd0000000 size 4 value 0x12345678 (unclaimed) in main+0x30",
		"          <idle>-0       [000] .....     0.000007: uart_putc <-main",
	};
	EXPECT_EQ(body, want) << text;
	EXPECT_NE(text.find("# earlytrace: 7 events: 3 calls, 0 returns, 4 exits, 0 kernel events\n"
			    "# earlytrace: calls and returns by source: breakpoint 1, trampoline 0, guest 2\n"
			    "# earlytrace: exits: 4 (pio 2, mmio 1, msr 1)\n"), std::string::npos)
		<< text;
}

TEST(ExitEvents, CsvJsonAndSummary)
{
	TempDir d;
	std::string path = write_trace(d);
	std::string csv = report_text(path, REPORT_CSV);
	EXPECT_NE(csv.find("0.000001100,1100,0,exit,uart_putc,0x1c,0xffffffff8010011c,,,,pio write port "
			   "0x3f8 size 1 value 0x41\n"),
		  std::string::npos)
		<< csv;
	// Rows in time order: the guest's call at 3000 before the MSR at 5000.
	EXPECT_LT(csv.find(",3000,"), csv.find(",5000,")) << csv;

	std::string json = report_text(path, REPORT_JSON);
	EXPECT_NE(json.find("{\"name\":\"msr write 0x174 (sysenter_cs) value 0x10\",\"cat\":\"exit\","
			    "\"ph\":\"i\",\"s\":\"t\",\"ts\":5.000,\"pid\":1,\"tid\":0,\"args\":{\"kind\":"
			    "\"msr\",\"address\":\"0x174\",\"value\":\"0x10\",\"size\":8,\"write\":true,"
			    "\"ip\":\"0xffffffff80100211\",\"function\":\"es_msr+0x11\"}}"),
		  std::string::npos)
		<< json;

	std::string summary = report_text(path, REPORT_SUMMARY);
	EXPECT_NE(summary.find("recorded as:  7 events: 3 calls, 0 returns, 4 exits, 0 kernel events\n"
			       "by source:    breakpoint 1, trampoline 0, guest 2 (calls and returns)\n"),
		  std::string::npos)
		<< summary;
	EXPECT_NE(summary.find("exits:        4 (pio 2, mmio 1, msr 1)\n"), std::string::npos) << summary;
	// Exits are not calls.
	EXPECT_NE(summary.find("functions:    2 called"), std::string::npos) << summary;
}
