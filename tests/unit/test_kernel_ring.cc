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
		EXPECT_EQ(kernel_ring_start_with(&kr, SynthMem::read, &mem), 0) << et_last_error();
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
