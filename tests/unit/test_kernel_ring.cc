// SPDX-License-Identifier: MIT
// trace --follow's reading side (vmm/trace/kernel_ring.c): a synthetic ring
// with the real Debian layout (tests/unit/ftrace_ring_sim.h) read into a
// trace file through the recorder, then read back as the reports read it:
// the kernel's calls and returns with source ftrace, trace_printk text and
// raw events as KEVENTs, drops per reason, the blind window marked, and
// nothing twice across reads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/unit/ftrace_ring_sim.h"
#include "vmm/util/error.h"
#include "vmm/trace/event.h"
#include "vmm/trace/kernel_ring.h"

namespace {

constexpr uint64_t kIp = 0xffffffff81000000ull;

struct Follow {
	TempDir dir;
	std::string path = dir.file("follow.trace");
	SynthMem mem;
	RingSim sim;
	struct vm vm;
	struct vcpu vcpu = {};
	struct recorder rec;
	struct kernel_ring kr = {};

	explicit Follow(int cpus = 2, int pages = 4, bool overwrite = true)
		: sim(mem, fixture_layout(), cpus, pages, overwrite)
	{
		memset(static_cast<void *>(&vm), 0, sizeof(vm));
		vcpu.vm = &vm;
		vcpu.fd = -1; // the guest clock reads 0: the takeover is at TSC 0
		EXPECT_EQ(recorder_init(&rec, &vcpu, 1u << 16, OVERFLOW_STOP, 0), 0);
		EXPECT_EQ(trace_writer_open(&rec.out, path.c_str(), nullptr), 0) << et_last_error();
		kr.layout = sim.layout();
		kr.global_trace = sim.global_trace();
		kr.rec = &rec;
		kr.vcpu = &vcpu;
		EXPECT_EQ(kernel_ring_start_with(&kr, SynthMem::read, SynthMem::write, &mem), 0) << et_last_error();
	}
	~Follow()
	{
		kernel_ring_free(&kr);
		recorder_free(&rec);
	}

	// Closes the file and opens it as `report` does.
	struct trace_reader *reopen()
	{
		EXPECT_EQ(trace_writer_close(rec.out, 0, 0, "test"), 0);
		rec.out = nullptr;
		struct trace_reader *r = nullptr;
		EXPECT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
		return r;
	}
};

std::vector<et_ring_record> events_of(struct trace_reader *r)
{
	std::vector<et_ring_record> out;
	struct trace_merge *m;
	et_ring_record ev;

	EXPECT_EQ(trace_merge_open(r, &m), 0);
	while (trace_merge_next(m, &ev) > 0)
		out.push_back(ev);
	trace_merge_close(m);
	return out;
}

} // namespace

TEST(KernelRing, CallsAndReturnsGoInWithSourceFtraceOnTheirCpu)
{
	Follow f;

	f.sim.write(0, 1000, f.sim.fn(kIp + 0x10, kIp + 0x100));
	f.sim.write(1, 1500, f.sim.graph_entry(kIp + 0x20, 0));
	f.sim.write(1, 1700, f.sim.graph_return(kIp + 0x20, 0, 1500, 1700));
	kernel_ring_read(&f.kr, false);
	EXPECT_EQ(f.kr.calls, 2u);
	EXPECT_EQ(f.kr.returns, 1u);

	struct trace_reader *r = f.reopen();
	std::vector<et_ring_record> ev = events_of(r);
	ASSERT_EQ(ev.size(), 3u);
	EXPECT_EQ(ev[0].tsc, 1000u);
	EXPECT_EQ(ev[0].ip, kIp + 0x10);
	EXPECT_EQ(ev[0].parent_ip, kIp + 0x100);
	EXPECT_EQ(ev[0].cpu, 0u);
	EXPECT_STREQ(trace_event_source_name(&ev[0]), "ftrace");
	EXPECT_EQ(et_rec_kind(&ev[1]), (unsigned)ET_REC_CALL);
	EXPECT_EQ(ev[1].cpu, 1u);
	EXPECT_TRUE(ev[1].flags & ET_REC_F_RET_TRACED);
	EXPECT_EQ(et_rec_kind(&ev[2]), (unsigned)ET_REC_RET);
	EXPECT_EQ(ev[2].ip, kIp + 0x20);
	EXPECT_EQ(ev[2].tsc, 1700u);
	const trace_info *in = trace_reader_info(r);
	EXPECT_EQ(in->nr_ftrace, 3u);
	EXPECT_EQ(in->events_by_source[ET_REC_SRC_GUEST], 0u) << "not counted as guestlib's ring";

	// The blind window is marked at the kernel's first event.
	size_t nr;
	const trace_note *notes = trace_reader_notes(r, &nr);
	ASSERT_GE(nr, 1u);
	EXPECT_EQ(notes[0].type, (uint32_t)TRACE_REC_MARK);
	EXPECT_EQ(notes[0].tsc, 1000u);
	EXPECT_NE(std::string(notes[0].text).find("blind window"), std::string::npos)
		<< notes[0].text;
	trace_reader_close(r);
}

TEST(KernelRing, RepeatedReadsRecordEachEventOnce)
{
	Follow f;
	uint64_t t = 100;

	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 40; i++, t += 10)
			f.sim.write(round % 2, t, f.sim.fn(kIp + 16 * i, kIp));
		kernel_ring_read(&f.kr, false);
		kernel_ring_read(&f.kr, false); // nothing new: nothing recorded
	}
	kernel_ring_read(&f.kr, true);
	EXPECT_EQ(f.kr.calls, 200u);
	EXPECT_EQ(f.kr.reads, 11u);

	struct trace_reader *r = f.reopen();
	std::vector<et_ring_record> ev = events_of(r);
	ASSERT_EQ(ev.size(), 200u);
	for (size_t i = 1; i < ev.size(); i++)
		EXPECT_LT(ev[i - 1].tsc, ev[i].tsc) << "event " << i;
	trace_reader_close(r);
}

TEST(KernelRing, TextAndUnknownEventsAreKeptAsKevents)
{
	Follow f;
	uint64_t fmt = f.mem.str("value %d");
	std::vector<uint8_t> args = { 42, 0, 0, 0 };

	f.sim.write(0, 10, f.sim.print(kIp + 0x30, "hello\n"));
	f.sim.write(0, 20, f.sim.bprint(kIp + 0x40, fmt, args));
	f.sim.write(0, 30, f.sim.raw(77, 24));
	kernel_ring_read(&f.kr, true);
	EXPECT_EQ(f.kr.texts, 2u);
	EXPECT_EQ(f.kr.raw, 1u);

	struct trace_reader *r = f.reopen();
	EXPECT_EQ(trace_reader_info(r)->nr_kevents, 3u);
	size_t nr;
	const trace_note *notes = trace_reader_notes(r, &nr);
	std::vector<const trace_note *> kev;
	for (size_t i = 0; i < nr; i++)
		if (notes[i].type == TRACE_REC_KEVENT)
			kev.push_back(&notes[i]);
	ASSERT_EQ(kev.size(), 3u);
	EXPECT_EQ(kev[0]->kevent_kind, TRACE_KEVENT_PRINT);
	EXPECT_EQ(kev[0]->ip, kIp + 0x30);
	EXPECT_EQ(std::string(kev[0]->text).substr(0, 5), "hello");
	EXPECT_EQ(kev[1]->kevent_kind, TRACE_KEVENT_BPRINT);
	EXPECT_STREQ(kev[1]->text, "value 42");
	EXPECT_EQ(kev[2]->kevent_kind, TRACE_KEVENT_RAW);
	EXPECT_EQ(kev[2]->kevent_type, 77);
	EXPECT_NE(std::string(kev[2]->text).find("event type 77"), std::string::npos) << kev[2]->text;
	trace_reader_close(r);
}

TEST(KernelRing, WhatTheKernelOverwroteIsCountedAsDrops)
{
	Follow f(1, 3);
	uint64_t t = 1;

	// Far more than three pages hold, between two reads.
	for (int i = 0; i < 2000; i++, t += 5)
		f.sim.write(0, t, f.sim.fn(kIp + 16 * (i % 64), kIp));
	kernel_ring_read(&f.kr, true);
	ASSERT_GT(f.kr.overwritten, 0u);
	EXPECT_EQ(f.kr.calls + f.kr.overwritten, 2000u);

	struct trace_reader *r = f.reopen();
	const trace_info *in = trace_reader_info(r);
	EXPECT_EQ(in->dropped, f.kr.overwritten);
	EXPECT_EQ(in->nr_ftrace, f.kr.calls);
	trace_reader_close(r);
}

TEST(KernelRing, DropsOfSeveralReasonsAddUp)
{
	// The host buffer's drops and the kernel ring's are separate totals;
	// the reader sums them (it used to keep only the largest).
	TempDir dir;
	std::string path = dir.file("t.trace");
	struct trace_writer *w;

	ASSERT_EQ(trace_writer_open(&w, path.c_str(), nullptr), 0);
	trace_writer_drops(w, 5, 10, "host buffer full (--overflow stop)");
	trace_writer_drops(w, 3, 20, "overwritten in the kernel's ftrace ring before earlytrace read it");
	trace_writer_drops(w, 7, 30, "host buffer full (--overflow stop)");
	ASSERT_EQ(trace_writer_close(w, 0, 0, "test"), 0);
	struct trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0);
	EXPECT_EQ(trace_reader_info(r)->dropped, 10u);
	size_t nr;
	const trace_note *n = trace_reader_notes(r, &nr);
	ASSERT_EQ(nr, 3u);
	EXPECT_EQ(n[0].dropped, 5u);
	EXPECT_EQ(n[1].dropped, 3u);
	EXPECT_EQ(n[2].dropped, 2u) << "7 of the host buffer's, 5 of them said before";
	trace_reader_close(r);
}

// ---- the fill (vmm/trace/kernel_fill.c) --------------------------------

namespace {

et_ring_record early_call(uint64_t tsc, uint64_t ip, uint64_t parent, uint16_t flags = 0)
{
	et_ring_record e{};
	e.tsc = tsc;
	e.ip = ip;
	e.parent_ip = parent;
	e.kind = ET_REC_CALL;
	e.flags = (uint16_t)(ET_REC_SRC_TRAMPOLINE | flags);
	return e;
}

et_ring_record early_return(uint64_t tsc, uint64_t ip, uint16_t flags = 0)
{
	et_ring_record e{};
	e.tsc = tsc;
	e.ip = ip;
	e.kind = ET_REC_RET;
	e.flags = (uint16_t)(ET_REC_SRC_BREAKPOINT | flags);
	return e;
}

void record(Follow &f, et_ring_record e)
{
	recorder_record(&f.rec, &e);
}

// What a reader inside the guest (tracefs) would get from CPU 0's ring.
std::vector<SimEvent> ring_contents(Follow &f)
{
	ftrace_reader_config cfg{};
	cfg.layout = &f.kr.layout;
	cfg.global_trace = f.kr.global_trace;
	cfg.read = SynthMem::read;
	cfg.read_ctx = &f.mem;
	ftrace_reader *r = ftrace_reader_new(&cfg);
	Collected got;
	ftrace_sink s = got.sink();
	EXPECT_EQ(ftrace_reader_read(r, &s, true), 0);
	ftrace_reader_free(r);
	return got.on(0);
}

} // namespace

TEST(KernelRing, FillPutsTheEarlyCallsFirstAndTheFileHasEachCallOnce)
{
	Follow f(1, 8);
	// Early calls as the tracer recorded them: a trampoline batch drained
	// after a later breakpoint event, so not in time order in the buffer;
	// a VM exit, which is no call.
	for (int i = 0; i < 50; i++)
		record(f, early_call(1000 + 10 * (uint64_t)i,
									   kIp + 16 * i, kIp + 4));
	record(f, early_call(990, kIp + 0x900, kIp + 4));
	struct et_exit x = {};
	x.addr = 0x3f8;
	x.size = 1;
	record(f, et_exit_pack(995, kIp, &x));

	// The kernel's reset set the buffer's start after the early calls:
	// tracefs's trace file would skip them.
	f.mem.put(f.kr.global_trace, f.kr.layout.fill.time_start, 4000);
	kernel_ring_fill(&f.kr, &f.rec.buf, false);
	EXPECT_STREQ(f.kr.fill_skipped, "");
	EXPECT_EQ(f.kr.filled, 51u);
	EXPECT_EQ(f.mem.get(f.kr.global_trace, f.kr.layout.fill.time_start), 990u);
	EXPECT_EQ(f.kr.fill_overrun, 0u);
	EXPECT_EQ(f.kr.fill_readback_mismatches, 0u);

	// The kernel's tracer starts and writes after them.
	f.sim.adopt(0);
	for (int i = 0; i < 30; i++)
		f.sim.write(0, 5000 + 10 * (uint64_t)i, f.sim.fn(kIp + 0x4000 + i, kIp + 8));
	kernel_ring_read(&f.kr, true);
	EXPECT_EQ(f.kr.calls, 30u) << "the early calls are not read back as the kernel's";
	EXPECT_EQ(f.kr.overwritten, 0u);

	// Inside the guest: the early calls first, in time order, then the
	// kernel's.
	std::vector<SimEvent> ring = ring_contents(f);
	ASSERT_EQ(ring.size(), 81u);
	EXPECT_EQ(ring[0].ts, 990u);
	EXPECT_EQ(ring[1].ts, 1000u);
	EXPECT_EQ(ring[51].ts, 5000u);

	// The file: 51 early calls (and the exit) as earlytrace's own, 30
	// calls of source ftrace; nothing dropped.
	struct trace_reader *r = f.reopen();
	std::vector<et_ring_record> ev = events_of(r);
	size_t own = 0, ftrace = 0;
	for (const auto &e : ev)
		if (et_rec_kind(&e) == ET_REC_CALL)
			++(e.flags & ET_REC_F_FTRACE ? ftrace : own);
	EXPECT_EQ(own, 51u);
	EXPECT_EQ(ftrace, 30u);
	EXPECT_EQ(trace_reader_info(r)->dropped, 0u);
	size_t nr;
	const trace_note *notes = trace_reader_notes(r, &nr);
	std::string marks;
	for (size_t i = 0; i < nr; i++)
		marks += std::string(notes[i].text) + "\n";
	EXPECT_NE(marks.find("follow: 51 early calls written into the kernel's ftrace ring (1 of its "
			     "8 pages)"),
		  std::string::npos)
		<< marks;
	trace_reader_close(r);
}

TEST(KernelRing, FillOfMoreThanTheRingHoldsKeepsTheNewestAndCountsTheRest)
{
	Follow f(1, 2);
	for (int i = 0; i < 1000; i++)
		record(f, early_call(1000 + 10 * (uint64_t)i,
									   kIp + 16 * i, kIp + 4));
	kernel_ring_fill(&f.kr, &f.rec.buf, false);
	// 145 records of 28 bytes a page: the newest two pages (145 + 130).
	EXPECT_EQ(f.kr.filled, 275u);
	EXPECT_EQ(f.kr.fill_overrun, 725u);
	EXPECT_EQ(f.kr.fill_readback_mismatches, 0u);
	EXPECT_EQ(f.mem.get(f.sim.cpu_buffer(0), f.kr.layout.cpu_buffer.overrun), f.kr.fill_overrun);
	kernel_ring_read(&f.kr, true);
	// Not a loss of earlytrace's: its file has all 1000.
	EXPECT_EQ(f.kr.overwritten, 0u);
	std::vector<SimEvent> ring = ring_contents(f);
	ASSERT_EQ(ring.size(), 275u);
	EXPECT_EQ(ring[0].ts, 1000u + 10 * 725);
}

TEST(KernelRing, FillRefusedSaysWhyAndTheKernelsEventsStillComeIn)
{
	Follow f(1, 4);
	f.mem.put(f.kr.global_trace, f.kr.layout.fill.time_start, 4000);
	f.sim.write(0, 50, f.sim.fn(kIp, kIp + 4)); // the ring is not empty
	record(f, early_call(10, kIp + 16, kIp + 4));
	kernel_ring_fill(&f.kr, &f.rec.buf, false);
	EXPECT_STREQ(f.kr.fill_skipped, "CPU 0's ring already holds 1 events");
	EXPECT_EQ(f.kr.filled, 0u);
	EXPECT_EQ(f.mem.get(f.kr.global_trace, f.kr.layout.fill.time_start), 4000u) << "untouched";
	kernel_ring_read(&f.kr, true);
	EXPECT_EQ(f.kr.calls, 1u);
}

TEST(KernelRing, FillEventsForTheGraphCarryDepthAndCalltime)
{
	struct host_buffer b;
	ASSERT_EQ(host_buffer_init(&b, 64, OVERFLOW_STOP), 0);
	const uint64_t a = kIp + 0x10, c = kIp + 0x20, d = kIp + 0x30, u = kIp + 0x40;
	for (const et_ring_record &e : {
		     early_call(10, a, kIp, ET_REC_F_RET_TRACED),
		     early_call(30, d, a, ET_REC_F_RET_TRACED),
		     early_call(20, c, a, ET_REC_F_RET_TRACED), // recorded late, called earlier
		     early_return(25, c),
		     early_return(35, d),
		     early_call(40, u, a, ET_REC_F_RET_TRACED),
		     early_return(50, u, ET_REC_F_UNWOUND), // abandoned: no exit event
		     early_return(60, a),
		     early_return(70, kIp + 0x50), // its call came before capture
	     })
		host_buffer_add(&b, &e);

	ftrace_fill_event *ev;
	ssize_t n = kernel_fill_events(&b, 0, true, &ev);
	ASSERT_EQ(n, 8);
	struct Want {
		uint64_t ts;
		ftrace_fill_kind kind;
		uint64_t ip;
		int32_t depth;
		uint64_t calltime;
	} want[] = {
		{ 10, FTRACE_FILL_GRAPH_ENTRY, a, 0, 0 },  { 20, FTRACE_FILL_GRAPH_ENTRY, c, 1, 0 },
		{ 25, FTRACE_FILL_GRAPH_RETURN, c, 1, 20 }, { 30, FTRACE_FILL_GRAPH_ENTRY, d, 1, 0 },
		{ 35, FTRACE_FILL_GRAPH_RETURN, d, 1, 30 }, { 40, FTRACE_FILL_GRAPH_ENTRY, u, 1, 0 },
		{ 60, FTRACE_FILL_GRAPH_RETURN, a, 0, 10 }, { 70, FTRACE_FILL_GRAPH_RETURN, kIp + 0x50, 0, 70 },
	};
	for (size_t i = 0; i < 8; i++) {
		SCOPED_TRACE(i);
		EXPECT_EQ(ev[i].ts, want[i].ts);
		EXPECT_EQ(ev[i].kind, want[i].kind);
		EXPECT_EQ(ev[i].ip, want[i].ip);
		EXPECT_EQ(ev[i].depth, want[i].depth);
		EXPECT_EQ(ev[i].calltime, want[i].calltime);
	}
	free(ev);
	// Without --graph: the calls only, as function events with parents.
	n = kernel_fill_events(&b, 0, false, &ev);
	ASSERT_EQ(n, 4);
	EXPECT_EQ(ev[1].ip, c);
	EXPECT_EQ(ev[1].parent_ip, a);
	EXPECT_EQ(ev[1].kind, FTRACE_FILL_FUNCTION);
	free(ev);
	host_buffer_free(&b);
}
