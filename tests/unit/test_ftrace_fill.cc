// SPDX-License-Identifier: MIT
// Writing early calls into the kernel's own ring (vmm/ftrace/ring_fill.c),
// checked three ways over rings in synthetic guest memory with the Debian
// 6.1 layout: byte for byte against the model of the kernel's writer
// (tests/unit/ftrace_ring_sim.h) writing the same events; through the
// reader, which must hand back exactly what was written; and by the
// writer model going on after the fill as the kernel would. Refusals
// leave guest memory as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/unit/ftrace_ring_sim.h"
#include "vmm/ftrace/ring_fill.h"
#include "vmm/ftrace/ring_reader.h"
#include "vmm/util/error.h"

namespace {

constexpr uint64_t kIp = 0xffffffff81000000ull;

ftrace_fill_config config(SynthMem &mem, const RingSim &sim)
{
	ftrace_fill_config cfg{};
	cfg.layout = &sim.layout();
	cfg.global_trace = sim.global_trace();
	cfg.read = SynthMem::read;
	cfg.write = SynthMem::write;
	cfg.ctx = &mem;
	return cfg;
}

ftrace_fill_event fn_event(uint64_t ts, uint64_t ip, uint64_t parent)
{
	ftrace_fill_event e{};
	e.ts = ts;
	e.kind = FTRACE_FILL_FUNCTION;
	e.ip = ip;
	e.parent_ip = parent;
	return e;
}

// What the fill writes for an event, as the writer model's payload: pid
// 0, preempt count 0, flags "irqs-off state unknown".
std::vector<uint8_t> payload_of(const RingSim &sim, const ftrace_fill_event &e)
{
	const ftrace_layout &L = sim.layout();
	std::vector<uint8_t> p;

	switch (e.kind) {
	case FTRACE_FILL_FUNCTION:
		p = sim.fn(e.ip, e.parent_ip, e.pid);
		p.resize(L.fill.fn_size);
		break;
	case FTRACE_FILL_GRAPH_ENTRY:
		p = sim.graph_entry(e.ip, e.depth);
		p.resize(L.fill.graph_ent_size);
		break;
	case FTRACE_FILL_GRAPH_RETURN:
		p = sim.graph_return(e.ip, e.depth, e.calltime, e.ts);
		p.resize(L.fill.graph_ret_size);
		break;
	}
	p[L.entry.flags.offset] = (uint8_t)L.fill.irqs_nosupport;
	p[L.entry.preempt_count.offset] = 0;
	memcpy(p.data() + L.entry.pid.offset, &e.pid, L.entry.pid.size);
	return p;
}

// n function calls from t0; every 7th delta too large for the header's
// 27 bits (a TIME_EXTEND record).
std::vector<ftrace_fill_event> calls(size_t n, uint64_t t0 = 1000000)
{
	std::vector<ftrace_fill_event> ev;
	uint64_t t = t0;
	for (size_t i = 0; i < n; i++) {
		t += i % 7 == 3 ? (3ull << 27) + i : 50 + i % 13;
		ev.push_back(fn_event(t, kIp + 16 * i, kIp + 8 * (i % 5)));
	}
	return ev;
}

// Function calls and graph entries and returns so that pages end in each
// way the writer knows: exactly full (170 graph entries of 24 bytes fill
// the first page), a discarded event, a bare 4-byte padding header.
std::vector<ftrace_fill_event> mixed(size_t n)
{
	std::vector<ftrace_fill_event> ev;
	uint64_t t = 5000;
	for (size_t i = 0; i < n; i++) {
		ftrace_fill_event e{};
		t += i > 170 && i % 11 == 5 ? (1ull << 27) : 40;
		e.ts = t;
		e.ip = kIp + 32 * i;
		switch (i <= 170 ? 1 : i % 3) {
		case 0:
			e.kind = FTRACE_FILL_FUNCTION;
			e.parent_ip = kIp + 4;
			break;
		case 1:
			e.kind = FTRACE_FILL_GRAPH_ENTRY;
			e.depth = (int32_t)(i % 4);
			break;
		default:
			e.kind = FTRACE_FILL_GRAPH_RETURN;
			e.depth = (int32_t)(i % 4);
			e.calltime = t - 20;
			break;
		}
		ev.push_back(e);
	}
	return ev;
}

struct Ring {
	SynthMem mem;
	RingSim sim;
	Ring(int ncpus, int pages, bool overwrite = true)
		: mem(8u << 20), sim(mem, fixture_layout(), ncpus, pages, overwrite)
	{
	}
	int fill(int cpu, const std::vector<ftrace_fill_event> &ev, ftrace_fill_result *res)
	{
		ftrace_fill_config cfg = config(mem, sim);
		return ftrace_ring_fill(&cfg, (uint32_t)cpu, ev.data(), ev.size(), res);
	}
	std::vector<SimEvent> read_all()
	{
		ftrace_reader_config cfg{};
		cfg.layout = &sim.layout();
		cfg.global_trace = sim.global_trace();
		cfg.read = SynthMem::read;
		cfg.read_ctx = &mem;
		ftrace_reader *r = ftrace_reader_new(&cfg);
		Collected got;
		ftrace_sink s = got.sink();
		EXPECT_EQ(ftrace_reader_read(r, &s, true), 0) << et_last_error();
		EXPECT_TRUE(got.warnings.empty()) << got.warnings[0].second;
		overwritten = got.overwritten(0);
		ftrace_reader_free(r);
		return got.on(0);
	}
	uint64_t overwritten = 0;
};

std::vector<SimEvent> expected(const RingSim &sim, const std::vector<ftrace_fill_event> &ev,
			       size_t from = 0)
{
	std::vector<SimEvent> out;
	for (size_t i = from; i < ev.size(); i++)
		out.push_back({ 0, ev[i].ts, payload_of(sim, ev[i]) });
	return out;
}

void expect_same(const std::vector<SimEvent> &got, const std::vector<SimEvent> &want)
{
	ASSERT_EQ(got.size(), want.size());
	for (size_t i = 0; i < got.size(); i++) {
		EXPECT_EQ(got[i].ts, want[i].ts) << "event " << i;
		EXPECT_EQ(got[i].payload, want[i].payload) << "event " << i;
	}
}

// The filled ring equals the writer model's ring for the same events:
// page by page from the head, every byte up to commit (and a bare pad
// past it), the page headers, and the buffer_page and CPU counters.
// How the pages ended, to show a test covers each way.
struct PageEnds {
	int full = 0, discarded = 0, bare = 0;
};

PageEnds expect_as_the_writer(const std::vector<ftrace_fill_event> &ev, int pages)
{
	PageEnds ends;
	Ring filled(1, pages), model(1, pages);
	ftrace_fill_result res;

	EXPECT_EQ(filled.fill(0, ev, &res), 0) << et_last_error();
	for (const auto &e : ev)
		model.sim.write(0, e.ts, payload_of(model.sim, e));

	const ftrace_layout &L = filled.sim.layout();
	uint64_t fa = filled.sim.cpu_buffer(0), ma = model.sim.cpu_buffer(0);
	EXPECT_EQ(filled.mem.get(fa, L.cpu_buffer.entries), model.sim.entries(0));
	EXPECT_EQ(filled.mem.get(fa, L.cpu_buffer.overrun), model.sim.overrun(0));
	EXPECT_EQ(res.overrun, model.sim.overrun(0));
	EXPECT_EQ(res.written, model.sim.entries(0) - model.sim.overrun(0));

	// The model's pages from its head up to its tail.
	uint64_t m_tail = model.mem.get(ma, L.cpu_buffer.tail_page);
	size_t n = 0;
	while (model.sim.ring_page(0, (int)n) != m_tail)
		n++;
	n++;
	EXPECT_EQ(res.pages, n);
	if (res.pages != n)
		return ends;
	EXPECT_EQ(filled.mem.get(fa, L.cpu_buffer.tail_page), filled.sim.ring_page(0, (int)n - 1));
	EXPECT_EQ(filled.mem.get(fa, L.cpu_buffer.commit_page), filled.sim.ring_page(0, (int)n - 1));
	for (size_t i = 0; i < n; i++) {
		uint64_t fb = filled.sim.ring_page(0, (int)i), mb = model.sim.ring_page(0, (int)i);
		uint64_t fd = filled.sim.data_page(fb), md = model.sim.data_page(mb);
		uint32_t commit = (uint32_t)model.mem.get(md, L.data_page.commit);
		uint32_t real_end = (uint32_t)model.mem.get(mb, L.buffer_page.real_end);
		uint32_t bytes = commit + (real_end && real_end == commit ? 4 : 0);

		if (i + 1 < n)
			++(real_end == 0 ? ends.full : real_end == commit ? ends.bare : ends.discarded);

		SCOPED_TRACE("page " + std::to_string(i));
		EXPECT_EQ(filled.mem.get(fd, L.data_page.commit), commit);
		EXPECT_EQ(filled.mem.get(fd, L.data_page.time_stamp),
			  model.mem.get(md, L.data_page.time_stamp));
		EXPECT_EQ(filled.mem.get(fb, L.buffer_page.entries) & 0xfffff,
			  model.mem.get(mb, L.buffer_page.entries));
		EXPECT_EQ(filled.mem.get(fb, L.buffer_page.real_end), real_end);
		EXPECT_EQ(filled.mem.get(fb, L.fill.write) & 0xfffff, commit);
		std::vector<uint8_t> a(filled.mem.at(fd + L.data_page.data.offset, bytes),
				       filled.mem.at(fd + L.data_page.data.offset, bytes) + bytes);
		std::vector<uint8_t> b(model.mem.at(md + L.data_page.data.offset, bytes),
				       model.mem.at(md + L.data_page.data.offset, bytes) + bytes);
		auto diff = std::mismatch(a.begin(), a.end(), b.begin());
		EXPECT_EQ(diff.first, a.end()) << "first difference at data byte " << (diff.first - a.begin())
					       << " of " << bytes;
	}
	EXPECT_EQ(filled.mem.get(fa, L.fill.write_stamp), ev.back().ts);
	EXPECT_EQ(filled.mem.get(fa, L.fill.before_stamp), ev.back().ts);
	return ends;
}

} // namespace

TEST(FtraceFill, LayoutHasWhatTheFillWrites)
{
	ftrace_layout L = fixture_layout();
	EXPECT_STREQ(L.fill_missing, "");
	EXPECT_EQ(L.fill.write.offset, 16u); // buffer_page: list, then write
	EXPECT_EQ(L.fill.write_stamp.size, 8u);
	EXPECT_EQ(L.fill.fn_size, 24u);
	EXPECT_EQ(L.fill.graph_ent_size, 20u); // __packed
	EXPECT_EQ(L.fill.graph_ret_size, 40u);
	EXPECT_EQ(L.fill.irqs_nosupport, 2);
}

TEST(FtraceFill, PagesEqualTheKernelWritersBytes)
{
	expect_as_the_writer(calls(1000), 16);
}

TEST(FtraceFill, EveryWayAPageEndsEqualsTheKernelWriter)
{
	// Function (28-byte records), graph entries (24) and returns (44)
	// with TIME_EXTENDs: pages end full, with a discarded event, or with
	// a bare padding header.
	PageEnds ends = expect_as_the_writer(mixed(3000), 64);
	EXPECT_GT(ends.full, 0);
	EXPECT_GT(ends.discarded, 0);
	EXPECT_GT(ends.bare, 0);
}

TEST(FtraceFill, TheReaderHandsBackExactlyWhatWasWritten)
{
	Ring r(2, 16);
	auto ev = calls(900);
	ftrace_fill_result res;

	ASSERT_EQ(r.fill(0, ev, &res), 0) << et_last_error();
	EXPECT_EQ(res.written, 900u);
	EXPECT_EQ(res.overrun, 0u);
	EXPECT_EQ(res.nr_pages, 16u);
	EXPECT_EQ(res.first_ts, ev[0].ts);
	expect_same(r.read_all(), expected(r.sim, ev));
	EXPECT_EQ(r.overwritten, 0u);
}

TEST(FtraceFill, TooManyEventsLoseTheOldestPagesAsTheKernelsOverwriteDoes)
{
	Ring r(1, 4);
	auto ev = calls(2000);
	ftrace_fill_result res;

	ASSERT_EQ(r.fill(0, ev, &res), 0) << et_last_error();
	EXPECT_EQ(res.pages, 4u);
	EXPECT_GT(res.overrun, 0u);
	EXPECT_EQ(res.written + res.overrun, 2000u);
	const ftrace_layout &L = r.sim.layout();
	EXPECT_EQ(r.mem.get(r.sim.cpu_buffer(0), L.cpu_buffer.overrun), res.overrun);
	uint64_t lost = r.mem.get(r.sim.cpu_buffer(0), L.fill.pages_lost);
	EXPECT_GT(lost, 0u);
	EXPECT_EQ(r.mem.get(r.sim.cpu_buffer(0), L.fill.pages_touched), lost + res.pages - 1);
	// The reader sees the newest res.written, and the kernel's counters
	// tell it the rest were overwritten.
	expect_same(r.read_all(), expected(r.sim, ev, res.overrun));
	EXPECT_EQ(r.overwritten, res.overrun);
	expect_as_the_writer(ev, 4);
}

TEST(FtraceFill, TheKernelsWriterGoesOnAfterTheFill)
{
	Ring r(1, 8);
	auto ev = calls(500);
	ftrace_fill_result res;

	ASSERT_EQ(r.fill(0, ev, &res), 0) << et_last_error();
	r.sim.adopt(0);
	// The kernel's own calls: its deltas come from the write_stamp the
	// fill left; then on around the ring, overwriting the fill's pages.
	std::vector<SimEvent> want = expected(r.sim, ev);
	uint64_t t = ev.back().ts + 10;
	for (int i = 0; i < 40; i++, t += 30) {
		auto p = r.sim.fn(kIp + 0x1000 + i, kIp + 2, 1);
		r.sim.write(0, t, p);
		want.push_back({ 0, t, p });
	}
	expect_same(r.read_all(), want);
	for (int i = 0; i < 1200; i++, t += 30) {
		auto p = r.sim.fn(kIp + 0x2000 + i, kIp + 2, 1);
		r.sim.write(0, t, p);
		want.push_back({ 0, t, p });
	}
	auto got = r.read_all();
	ASSERT_LT(got.size(), want.size());
	expect_same(got, std::vector<SimEvent>(want.end() - (ptrdiff_t)got.size(), want.end()));
	EXPECT_EQ(r.overwritten, want.size() - got.size());
}

TEST(FtraceFill, GraphEntriesAndReturnsReadBack)
{
	Ring r(1, 8);
	auto ev = mixed(300);
	ftrace_fill_result res;

	ASSERT_EQ(r.fill(0, ev, &res), 0) << et_last_error();
	expect_same(r.read_all(), expected(r.sim, ev));
}

TEST(FtraceFill, NoEventsWritesNothing)
{
	Ring r(1, 4);
	std::vector<uint8_t> before = r.mem.bytes;
	ftrace_fill_result res;

	ASSERT_EQ(r.fill(0, {}, &res), 0) << et_last_error();
	EXPECT_EQ(res.written, 0u);
	EXPECT_TRUE(r.mem.bytes == before);
}

// Each refusal names its reason and writes nothing.
void expect_refused(Ring &r, int cpu, const std::vector<ftrace_fill_event> &ev,
		    const std::string &why, int status = -1)
{
	std::vector<uint8_t> before = r.mem.bytes;
	ftrace_fill_result res;

	EXPECT_EQ(r.fill(cpu, ev, &res), status);
	EXPECT_NE(std::string(et_last_error()).find(why), std::string::npos) << et_last_error();
	EXPECT_TRUE(r.mem.bytes == before) << "guest memory changed";
}

TEST(FtraceFill, ARingThatHoldsEventsIsRefused)
{
	Ring r(1, 4);
	r.sim.write(0, 10, r.sim.fn(kIp, kIp + 4));
	expect_refused(r, 0, calls(10), "CPU 0's ring already holds 1 events");
}

TEST(FtraceFill, ACommitInProgressIsRefused)
{
	Ring r(1, 4);
	r.sim.write(0, 10, r.sim.fn(kIp, kIp + 4));
	r.sim.begin_commit(0, 20, r.sim.fn(kIp, kIp + 4));
	expect_refused(r, 0, calls(10), "in the middle of a commit");
}

TEST(FtraceFill, ARingWithoutOverwriteIsRefused)
{
	Ring r(1, 4, false);
	expect_refused(r, 0, calls(10), "does not overwrite");
}

TEST(FtraceFill, ACpuWithoutARingIsRefused)
{
	Ring r(2, 4);
	expect_refused(r, 2, calls(10), "the kernel has no ring for CPU 2", 1);
}

TEST(FtraceFill, EventsOutOfTimeOrderAreRefused)
{
	Ring r(1, 4);
	auto ev = calls(10);
	std::swap(ev[3], ev[4]);
	expect_refused(r, 0, ev, "not in time order (event 4)");
}

TEST(FtraceFill, ACrossLinkedRingIsRefused)
{
	Ring r(1, 6);
	const ftrace_layout &L = r.sim.layout();
	// Page 2's prev points elsewhere: the reader's walk stops there.
	r.mem.put(r.sim.ring_page(0, 2) + L.buffer_page.list.offset + L.list_head.prev.offset,
		  r.sim.ring_page(0, 4) + L.buffer_page.list.offset, 8);
	expect_refused(r, 0, calls(10), "cross-linked ring");
}

TEST(FtraceFill, ABtfWithoutAFillMemberIsReadButNotFilled)
{
	// A kernel whose ring_buffer_per_cpu lacks pages_touched: the reader
	// still works, the fill says what is missing.
	std::vector<uint8_t> b = read_file_bytes(ftrace_fixture_path());
	std::string from = std::string("pages_touched") + '\0';
	auto it = std::search(b.begin(), b.end(), from.begin(), from.end());
	ASSERT_NE(it, b.end());
	*(it + 6) = 'X';
	ftrace_layout L;
	ASSERT_EQ(ftrace_layout_from_btf(&L, b.data(), b.size()), 0) << et_last_error();
	EXPECT_STREQ(L.fill_missing,
		     "BTF: struct ring_buffer_per_cpu has no member pages_touched");

	SynthMem mem;
	RingSim sim(mem, L, 1, 4);
	ftrace_fill_config cfg = config(mem, sim);
	ftrace_fill_result res;
	auto ev = calls(5);
	EXPECT_EQ(ftrace_ring_fill(&cfg, 0, ev.data(), ev.size(), &res), -1);
	EXPECT_STREQ(et_last_error(), "BTF: struct ring_buffer_per_cpu has no member pages_touched");
}

TEST(FtraceFill, TwoPagesSharingADataPageAreRefused)
{
	Ring r(1, 4);
	const ftrace_layout &L = r.sim.layout();
	r.mem.put(r.sim.ring_page(0, 2), L.buffer_page.page, r.sim.data_page(r.sim.ring_page(0, 1)));
	expect_refused(r, 0, calls(10), "two buffer pages share data page");
}

TEST(FtraceFill, AStructInsideADataPageIsRefused)
{
	// A hostile ring whose data page holds the CPU's own struct: writing
	// events there would overwrite the counters the fill writes too.
	Ring r(1, 4);
	const ftrace_layout &L = r.sim.layout();
	uint64_t cpu = r.sim.cpu_buffer(0);
	r.mem.put(r.sim.ring_page(0, 3), L.buffer_page.page, cpu - cpu % 4096);
	expect_refused(r, 0, calls(10), "lies in a data page");
}

TEST(FtraceFill, AnUnalignedDataPageIsRefused)
{
	Ring r(1, 4);
	const ftrace_layout &L = r.sim.layout();
	r.mem.put(r.sim.ring_page(0, 1), L.buffer_page.page,
		  r.sim.data_page(r.sim.ring_page(0, 1)) + 64);
	expect_refused(r, 0, calls(10), "is not page-aligned");
}

TEST(FtraceFill, AReaderPageWithEventsIsRefused)
{
	Ring r(1, 4);
	r.sim.write(0, 10, r.sim.fn(kIp, kIp + 4));
	r.sim.consume_all(0); // the event is on the reader page now
	r.sim.reset(0);	      // the counters say empty again; the reader page not
	const ftrace_layout &L = r.sim.layout();
	uint64_t reader = r.mem.get(r.sim.cpu_buffer(0), L.cpu_buffer.reader_page);
	r.mem.put(r.sim.data_page(reader), L.data_page.commit, 28);
	expect_refused(r, 0, calls(10), "reader page holds events");
}

TEST(FtraceFill, OldTimeStampsOnEmptyPagesDoNotReadAsRecycledPages)
{
	// A reset zeroes commit, not time_stamp: pages used before keep their
	// stamps, which a reader could take for pages a consumer recycled.
	Ring r(1, 8);
	const ftrace_layout &L = r.sim.layout();
	for (int i = 1; i < 8; i++)
		r.mem.put(r.sim.data_page(r.sim.ring_page(0, i)), L.data_page.time_stamp, 10 + i);
	auto ev = calls(100);
	ftrace_fill_result res;
	ASSERT_EQ(r.fill(0, ev, &res), 0) << et_last_error();
	expect_same(r.read_all(), expected(r.sim, ev));
}

TEST(FtraceFill, ADataPageCutByTheEndOfMemoryIsRefused)
{
	// The walk reads each data page's header only; the page the fill
	// writes must be readable whole, as every reader reads it (the fuzz
	// target ftrace_fill found a fill that did not read back).
	SynthMem mem((8u << 20) + 2048);
	RingSim sim(mem, fixture_layout(), 1, 4);
	const ftrace_layout &L = sim.layout();
	mem.put(sim.ring_page(0, 0), L.buffer_page.page, SynthMem::kBase + (8u << 20));
	std::vector<uint8_t> before = mem.bytes;
	ftrace_fill_config cfg = config(mem, sim);
	ftrace_fill_result res;
	auto ev = calls(10);
	EXPECT_EQ(ftrace_ring_fill(&cfg, 0, ev.data(), ev.size(), &res), -1);
	EXPECT_NE(std::string(et_last_error()).find("is not readable whole"), std::string::npos)
		<< et_last_error();
	EXPECT_TRUE(mem.bytes == before);
}

TEST(FtraceFill, AReaderPageInsideARingDataPageIsRefused)
{
	// The events written there would become the reader page's header,
	// which readers take for events (found by the fuzz target).
	Ring r(1, 4);
	const ftrace_layout &L = r.sim.layout();
	uint64_t reader = r.mem.get(r.sim.cpu_buffer(0), L.cpu_buffer.reader_page);
	r.mem.put(reader, L.buffer_page.page, r.sim.data_page(r.sim.ring_page(0, 0)) + 1024);
	expect_refused(r, 0, calls(10), "lies in a data page");
}

TEST(FtraceFill, AReaderPageThatIsARingPageIsRefused)
{
	// Readers would take the ring's first page for the writer on the
	// reader page, and read nothing of the fill (found by the fuzz target).
	Ring r(1, 4);
	const ftrace_layout &L = r.sim.layout();
	r.mem.put(r.sim.cpu_buffer(0), L.cpu_buffer.reader_page, r.sim.ring_page(0, 0));
	expect_refused(r, 0, calls(10), "is one of the ring's pages");
}
