// SPDX-License-Identifier: MIT
// The reader of the kernel's ring buffers (vmm/ftrace/ring_reader.c) over
// rings that a model of the 6.1 writer fills in synthetic guest memory
// with the real Debian layout (tests/unit/ftrace_ring_sim.h): every event
// handed over once and in order, across pages, CPUs, wraps, repeated
// reads and a consuming dump; drops counted from the kernel's counters.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/unit/ftrace_ring_sim.h"
#include "vmm/util/error.h"
#include "vmm/ftrace/ring_reader.h"

namespace {

constexpr uint64_t kIp = 0xffffffff81000000ull;

struct Reader {
	ftrace_reader *r = nullptr;
	Collected got;

	Reader(SynthMem &mem, const RingSim &sim, uint64_t max_pages = 0)
	{
		ftrace_reader_config cfg{};
		cfg.layout = &sim.layout();
		cfg.global_trace = sim.global_trace();
		cfg.read = SynthMem::read;
		cfg.read_ctx = &mem;
		cfg.max_pages = max_pages;
		r = ftrace_reader_new(&cfg);
		EXPECT_NE(r, nullptr) << et_last_error();
	}
	~Reader() { ftrace_reader_free(r); }
	// One read; what it handed over is in got (cleared first).
	int read(bool final = false)
	{
		got.clear();
		ftrace_sink s = got.sink();
		return ftrace_reader_read(r, &s, final);
	}
	const ftrace_cpu_stats &cpu(uint32_t n) { return *ftrace_reader_get_cpu_stats(r, n); }
};

// Writes n function events on cpu, ts from t with step, ips numbered from first.
void write_fns(RingSim &sim, int cpu, int n, uint64_t &t, uint64_t step = 100, int first = 0)
{
	for (int i = 0; i < n; i++, t += step)
		sim.write(cpu, t, sim.fn(kIp + 16 * (first + i), kIp + 8));
}

// The events handed over equal the expected ones, in order.
void expect_same(const std::vector<SimEvent> &got, const std::vector<SimEvent> &want)
{
	ASSERT_EQ(got.size(), want.size());
	for (size_t i = 0; i < got.size(); i++) {
		EXPECT_EQ(got[i].ts, want[i].ts) << "event " << i;
		EXPECT_EQ(got[i].payload, want[i].payload) << "event " << i;
	}
}

// A payload whose record takes exactly `record` bytes (type_len up to 28
// words, else a length word too).
std::vector<uint8_t> filling(const RingSim &sim, uint32_t record)
{
	return sim.raw(300, record - 4 <= 112 ? record - 4 : record - 8);
}

std::vector<SimEvent> tail_of(const std::vector<SimEvent> &v, size_t n)
{
	return std::vector<SimEvent>(v.end() - (ptrdiff_t)std::min(n, v.size()), v.end());
}

} // namespace

TEST(FtraceReader, TwoCpusSeveralPages)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 2, 8);
	uint64_t t0 = 1000, t1 = 1050;
	write_fns(sim, 0, 600, t0);	 // 28-byte records: 145 a page, so 5 pages
	write_fns(sim, 1, 300, t1, 170); // 3 pages
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(), 0) << et_last_error();
	expect_same(rd.got.on(0), sim.written_on(0));
	expect_same(rd.got.on(1), sim.written_on(1));
	// One CPU after the other, each in time order, with its number.
	EXPECT_EQ(rd.got.events.front().cpu, 0u);
	EXPECT_EQ(rd.got.events.back().cpu, 1u);
	EXPECT_EQ(rd.got.events[5].kind, FTRACE_EVENT_FUNCTION);
	EXPECT_EQ(rd.got.events[5].ip, kIp + 16 * 5);
	EXPECT_EQ(rd.got.events[5].parent_ip, kIp + 8);
	EXPECT_TRUE(rd.got.drops.empty());
	EXPECT_TRUE(rd.got.warnings.empty());
	EXPECT_EQ(rd.cpu(0).pages, 8u);
	EXPECT_EQ(ftrace_reader_get_stats(rd.r)->events, 900u);
}

TEST(FtraceReader, RepeatedReadsHandOverEachEventOnce)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 8);
	Reader rd(mem, sim);
	uint64_t t = 1;
	size_t seen = 0;
	for (int n : { 100, 300, 0, 1, 44, 145, 290 }) {
		write_fns(sim, 0, n, t, 7, (int)seen);
		ASSERT_EQ(rd.read(), 0) << et_last_error();
		expect_same(rd.got.on(0), sim.written_on(0, seen));
		seen = sim.written().size();
		EXPECT_TRUE(rd.got.drops.empty()) << "after " << seen;
	}
	EXPECT_EQ(rd.cpu(0).events, seen);
}

TEST(FtraceReader, WrappedBufferCountsWhatWasOverwritten)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	uint64_t t = 500;
	write_fns(sim, 0, 2000, t);
	ASSERT_GT(sim.overrun(0), 0u) << "the writer went round the ring";
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(), 0) << et_last_error();
	std::vector<SimEvent> got = rd.got.on(0);
	// What the ring still holds: the newest events, in order, none twice.
	ASSERT_GT(got.size(), 3u * 145 - 1);
	expect_same(got, tail_of(sim.written(), got.size()));
	// The rest is reported lost, from the kernel's own counters.
	ASSERT_EQ(rd.got.drops.size(), 1u);
	EXPECT_EQ(rd.got.drops[0].overwritten, 2000 - got.size());
	EXPECT_EQ(rd.got.drops[0].before_ts, got.front().ts);
	EXPECT_EQ(rd.got.drops[0].not_written, 0u);
	EXPECT_EQ(rd.cpu(0).kernel_overrun, sim.overrun(0));
}

TEST(FtraceReader, WrapBetweenReads)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	Reader rd(mem, sim);
	uint64_t t = 10;
	write_fns(sim, 0, 100, t);
	ASSERT_EQ(rd.read(), 0);
	EXPECT_EQ(rd.got.events.size(), 100u);
	uint64_t last = rd.got.events.back().ts;
	write_fns(sim, 0, 1000, t, 100, 100);
	ASSERT_EQ(rd.read(), 0);
	std::vector<SimEvent> got = rd.got.on(0);
	expect_same(got, tail_of(sim.written(), got.size()));
	ASSERT_EQ(rd.got.drops.size(), 1u);
	EXPECT_EQ(rd.got.drops[0].overwritten, 1000 - got.size());
	EXPECT_EQ(rd.got.drops[0].after_ts, last);
	// Handed over + dropped = written.
	EXPECT_EQ(rd.cpu(0).events + rd.cpu(0).overwritten, 1100u);
	// And a read with nothing new hands over nothing.
	ASSERT_EQ(rd.read(), 0);
	EXPECT_TRUE(rd.got.events.empty());
	EXPECT_TRUE(rd.got.drops.empty());
}

TEST(FtraceReader, FullBufferWithoutOverwriteCountsWhatWasNotWritten)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 2, /*overwrite=*/false);
	Reader rd(mem, sim);
	uint64_t t = 10;
	write_fns(sim, 0, 400, t); // 2 pages hold 290
	ASSERT_EQ(rd.read(), 0);
	EXPECT_EQ(rd.got.events.size(), sim.written().size());
	ASSERT_EQ(rd.got.drops.size(), 1u);
	EXPECT_EQ(rd.got.drops[0].not_written, 400 - sim.written().size());
	EXPECT_EQ(rd.got.drops[0].overwritten, 0u);
}

TEST(FtraceReader, TimeExtendsGiveAbsoluteTimes)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	uint64_t t = 1000;
	for (uint64_t gap : { 5ull, 1ull << 27, (1ull << 27) - 1, 3ull << 40, 1ull, 1ull << 33 }) {
		t += gap;
		sim.write(0, t, sim.fn(kIp, kIp));
	}
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(), 0);
	expect_same(rd.got.on(0), sim.written());
}

TEST(FtraceReader, PaddingBothKindsAndDiscardedEvents)
{
	SynthMem mem;
	ftrace_layout L = fixture_layout();
	RingSim sim(mem, L, 1, 4);
	uint64_t t = 1;
	// Fill page 1 to exactly 4 bytes short of its end (null padding past
	// commit when the next event moves on), page 2 to 40 short (a
	// discarded record to the end, inside commit).
	uint32_t cap = sim.page_capacity();
	std::vector<uint8_t> big = sim.raw(300, 104); // 108-byte records
	while (sim.tail_offset(0) + 108 <= cap - 4 - 108)
		sim.write(0, t++, big);
	sim.write(0, t++, filling(sim, cap - 4 - sim.tail_offset(0)));
	ASSERT_EQ(sim.tail_offset(0), cap - 4);
	sim.write(0, t++, sim.fn(kIp, kIp)); // page 2
	sim.discard(0, t++, 24);	     // a filtered event, discarded in place
	sim.write(0, t++, sim.fn(kIp + 1, kIp));
	while (sim.tail_offset(0) + 108 <= cap - 40)
		sim.write(0, t++, big);
	sim.write(0, t++, filling(sim, cap - 40 - sim.tail_offset(0)));
	ASSERT_EQ(sim.tail_offset(0), cap - 40);
	sim.write(0, t++, sim.fn(kIp + 2, kIp)); // page 3
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(), 0);
	expect_same(rd.got.on(0), sim.written());
	EXPECT_TRUE(rd.got.warnings.empty());
}

TEST(FtraceReader, EveryEventType)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	uint64_t fmt = mem.str("irq %d on cpu%u: %s\n"), str = mem.str("reached the end\n");
	std::vector<uint8_t> args = { 9, 0, 0, 0, 1, 0, 0, 0, 't', 'i', 'm', 'e', 'r', 0 };
	uint64_t t = 100;
	sim.write(0, t++, sim.fn(kIp, kIp + 8));
	sim.write(0, t++, sim.graph_entry(kIp + 32, 2));
	sim.write(0, t++, sim.graph_return(kIp + 32, 2, 101, 103));
	sim.write(0, t++, sim.print(kIp + 48, "printk text\n"));
	sim.write(0, t++, sim.bprint(kIp + 64, fmt, args));
	sim.write(0, t++, sim.bputs(kIp + 80, str));
	sim.write(0, t++, sim.raw(2, 36)); // TRACE_CTX: not decoded, kept
	auto short_fn = sim.fn(kIp, kIp);
	short_fn.resize(12);
	sim.write(0, t++, short_fn);
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(), 0);
	const auto &ev = rd.got.events;
	ASSERT_EQ(ev.size(), 8u);
	EXPECT_EQ(ev[0].kind, FTRACE_EVENT_FUNCTION);
	EXPECT_EQ(ev[1].kind, FTRACE_EVENT_GRAPH_ENTRY);
	EXPECT_EQ(ev[1].depth, 2);
	EXPECT_EQ(ev[2].kind, FTRACE_EVENT_GRAPH_RETURN);
	EXPECT_EQ(ev[2].rettime, 103u);
	EXPECT_EQ(ev[3].kind, FTRACE_EVENT_PRINT);
	EXPECT_EQ(rd.got.texts[3], "printk text\n");
	EXPECT_EQ(ev[4].kind, FTRACE_EVENT_BPRINT);
	EXPECT_EQ(rd.got.texts[4], "irq 9 on cpu1: timer\n");
	EXPECT_EQ(ev[5].kind, FTRACE_EVENT_BPUTS);
	EXPECT_EQ(rd.got.texts[5], "reached the end\n");
	EXPECT_EQ(ev[6].kind, FTRACE_EVENT_RAW);
	EXPECT_EQ(ev[6].type, 2);
	EXPECT_EQ(rd.got.payloads[6], sim.written()[6].payload);
	EXPECT_EQ(ev[7].kind, FTRACE_EVENT_RAW);
	EXPECT_TRUE(ev[7].malformed);
	for (size_t i = 0; i < ev.size(); i++)
		EXPECT_EQ(ev[i].ts, 100 + i);
}

TEST(FtraceReader, NoBufferYet)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 2);
	mem.put(sim.global_trace(), sim.layout().trace_array.buffer, 0);
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(), 0);
	EXPECT_TRUE(rd.got.events.empty());
	EXPECT_FALSE(ftrace_reader_get_stats(rd.r)->buffer_allocated);
}

TEST(FtraceReader, UnreadableGlobalTraceIsAnError)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 2);
	ftrace_layout L = sim.layout();
	ftrace_reader_config cfg{};
	cfg.layout = &L;
	cfg.global_trace = 0x1000;
	cfg.read = SynthMem::read;
	cfg.read_ctx = &mem;
	ftrace_reader *r = ftrace_reader_new(&cfg);
	Collected got;
	ftrace_sink s = got.sink();
	EXPECT_EQ(ftrace_reader_read(r, &s, false), -1);
	EXPECT_STREQ(et_last_error(),
		     "ftrace: cannot read global_trace.array_buffer.buffer at 0x1020");
	ftrace_reader_free(r);
}

TEST(FtraceReader, SinkRefusalStopsAndTheEventComesAgain)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	uint64_t t = 1;
	write_fns(sim, 0, 50, t);
	Reader rd(mem, sim);
	rd.got.clear();
	rd.got.stop_after = 20;
	ftrace_sink s = rd.got.sink();
	EXPECT_EQ(ftrace_reader_read(rd.r, &s, false), -1);
	EXPECT_EQ(rd.got.events.size(), 20u);
	ASSERT_EQ(rd.read(), 0);
	expect_same(rd.got.on(0), sim.written_on(0, 20));
}

// A vCPU stopped in the middle of a commit: the event is counted in
// `entries` but not visible yet. Not a drop, unless the run ends there.
TEST(FtraceReader, CommitInProgressIsNotADrop)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	uint64_t t = 1;
	write_fns(sim, 0, 10, t);
	sim.begin_commit(0, t++, sim.fn(kIp, kIp));
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(), 0);
	EXPECT_EQ(rd.got.events.size(), 10u);
	EXPECT_TRUE(rd.got.drops.empty());
	sim.end_commit(0);
	ASSERT_EQ(rd.read(), 0);
	EXPECT_EQ(rd.got.events.size(), 1u);
	EXPECT_TRUE(rd.got.drops.empty());
	// At the end of a run, what never became visible is lost.
	sim.begin_commit(0, t++, sim.fn(kIp, kIp));
	ASSERT_EQ(rd.read(/*final=*/true), 0);
	ASSERT_EQ(rd.got.drops.size(), 1u);
	EXPECT_EQ(rd.got.drops[0].overwritten, 1u);
}

TEST(FtraceReader, KernelResetStartsAfresh)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	Reader rd(mem, sim);
	uint64_t t = 1000;
	write_fns(sim, 0, 200, t);
	ASSERT_EQ(rd.read(), 0);
	sim.reset(0);
	size_t mark = sim.written().size();
	write_fns(sim, 0, 50, t);
	ASSERT_EQ(rd.read(), 0);
	expect_same(rd.got.on(0), sim.written_on(0, mark));
	EXPECT_TRUE(rd.got.drops.empty());
	EXPECT_EQ(rd.cpu(0).resets, 1u);
}

// What a read costs: two small reads a ring page (its buffer_page and its
// data page's header) and one page read for each page with new events; a
// read with nothing new re-reads only the page it stopped in.
TEST(FtraceReader, ReadCostIsBoundedByTheRing)
{
	SynthMem mem(16u << 20);
	const int pages = 352; // the kernel's default trace_buf_size (1.4 MB)
	RingSim sim(mem, fixture_layout(), 1, pages);
	uint64_t t = 1;
	write_fns(sim, 0, 145 * (pages + 10), t); // wrapped: every page full
	Reader rd(mem, sim);
	mem.reads = 0;
	auto t0 = std::chrono::steady_clock::now();
	ASSERT_EQ(rd.read(), 0);
	double full_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	size_t events = rd.got.events.size();
	EXPECT_LE(mem.reads, 3u * pages + 8);
	mem.reads = 0;
	t0 = std::chrono::steady_clock::now();
	ASSERT_EQ(rd.read(), 0);
	double idle_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	EXPECT_TRUE(rd.got.events.empty());
	EXPECT_LE(mem.reads, 2u * pages + 8);
	printf("[ ftrace ] %d-page ring: first read %zu events, %.2f ms; a read with nothing new %.2f ms "
	       "(%llu reads; memcpy, not a page walk)\n",
	       pages, events, full_ms, idle_ms, (unsigned long long)mem.reads);
}

// ---- a consuming reader inside the guest (ftrace_dump at a panic) ---------

TEST(FtraceReaderDump, ReadAfterDumpHasNoDuplicatesAndLosesNothing)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 8);
	Reader rd(mem, sim);
	uint64_t t = 1;
	write_fns(sim, 0, 250, t);
	ASSERT_EQ(rd.read(), 0);
	ASSERT_EQ(rd.got.events.size(), 250u);
	size_t mark = sim.written().size();
	write_fns(sim, 0, 500, t, 100, 250); // pages the dump will consume and recycle
	sim.consume_all(0);		     // the dump; tracing is off after it
	ASSERT_EQ(rd.read(/*final=*/true), 0);
	expect_same(rd.got.on(0), sim.written_on(0, mark));
	EXPECT_TRUE(rd.got.drops.empty());
	EXPECT_TRUE(rd.got.warnings.empty());
	ASSERT_EQ(rd.read(true), 0);
	EXPECT_TRUE(rd.got.events.empty());
}

TEST(FtraceReaderDump, EverythingReadBeforeTheDump)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 8);
	Reader rd(mem, sim);
	uint64_t t = 1;
	write_fns(sim, 0, 700, t);
	ASSERT_EQ(rd.read(), 0);
	ASSERT_EQ(rd.got.events.size(), 700u);
	sim.consume_all(0);
	ASSERT_EQ(rd.read(true), 0);
	EXPECT_TRUE(rd.got.events.empty());
	EXPECT_TRUE(rd.got.drops.empty());
}

TEST(FtraceReaderDump, FirstReadAfterTheDump)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 2, 8);
	uint64_t t = 1, u = 3;
	write_fns(sim, 0, 600, t);
	write_fns(sim, 1, 100, u);
	sim.consume_all(0);
	sim.consume_all(1);
	Reader rd(mem, sim);
	ASSERT_EQ(rd.read(true), 0);
	expect_same(rd.got.on(0), sim.written_on(0));
	expect_same(rd.got.on(1), sim.written_on(1));
	EXPECT_TRUE(rd.got.drops.empty());
}

TEST(FtraceReaderDump, DumpOfAWrappedBuffer)
{
	SynthMem mem;
	RingSim sim(mem, fixture_layout(), 1, 4);
	Reader rd(mem, sim);
	uint64_t t = 1;
	write_fns(sim, 0, 300, t);
	ASSERT_EQ(rd.read(), 0);
	write_fns(sim, 0, 1000, t, 100, 300);
	sim.consume_all(0);
	ASSERT_EQ(rd.read(true), 0);
	std::vector<SimEvent> got = rd.got.on(0);
	expect_same(got, tail_of(sim.written(), got.size()));
	EXPECT_EQ(rd.cpu(0).events + rd.cpu(0).overwritten, 1300u);
}
