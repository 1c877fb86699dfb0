// SPDX-License-Identifier: MIT
// FtraceHostile rings: the guest owns the ring buffer, so every structure the
// reader follows may be corrupt. Each fault ends that CPU's read with one
// warning, and the events read before it are handed over all the same.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/ftrace_ring_sim.h"
#include "vmm/util/error.h"
#include "vmm/ftrace/ring_reader.h"
#include "vmm/ftrace/ring_walk.h"

namespace {

constexpr uint64_t kIp = 0xffffffff81000000ull;

// A 6-page ring on one CPU with 700 function events: five pages used
// (145 events each), the commit page fifth.
struct FtraceHostile : ::testing::Test {
	SynthMem mem;
	ftrace_layout L = fixture_layout();
	RingSim sim{ mem, L, 1, 6 };
	uint64_t t = 1000;
	Collected got;

	FtraceHostile()
	{
		for (int i = 0; i < 700; i++, t += 10)
			sim.write(0, t, sim.fn(kIp + i, kIp));
	}
	uint64_t page(int pos) { return sim.ring_page(0, pos); }
	uint64_t next_field(int pos)
	{
		return page(pos) + L.buffer_page.list.offset + L.list_head.next.offset;
	}
	uint64_t events_on(int pos) { return mem.get(page(pos), L.buffer_page.entries); }
	// The events of the first n pages, as written.
	std::vector<SimEvent> first_pages(int n)
	{
		size_t count = 0;
		for (int p = 0; p < n; p++)
			count += events_on(p);
		const auto &w = sim.written();
		return std::vector<SimEvent>(w.begin(), w.begin() + (ptrdiff_t)count);
	}
	// A byte offset in page pos's data where its k-th event starts.
	uint64_t event_at(int pos, int k)
	{
		return sim.data_page(page(pos)) + L.data_page.data.offset + 28ull * k;
	}
	int read(uint64_t max_pages = 0, bool final = false)
	{
		ftrace_reader_config cfg{};
		cfg.layout = &L;
		cfg.global_trace = sim.global_trace();
		cfg.read = SynthMem::read;
		cfg.read_ctx = &mem;
		cfg.max_pages = max_pages;
		if (!reader)
			reader = ftrace_reader_new(&cfg);
		got.clear();
		ftrace_sink s = got.sink();
		return ftrace_reader_read(reader, &s, final);
	}
	~FtraceHostile() override { ftrace_reader_free(reader); }
	ftrace_reader *reader = nullptr;

	void expect_kept(const std::vector<SimEvent> &want, const char *warning)
	{
		std::vector<SimEvent> have = got.on(0);
		ASSERT_EQ(have.size(), want.size());
		for (size_t i = 0; i < have.size(); i++) {
			EXPECT_EQ(have[i].ts, want[i].ts) << i;
			EXPECT_EQ(have[i].payload, want[i].payload) << i;
		}
		ASSERT_EQ(got.warnings.size(), 1u);
		EXPECT_EQ(got.warnings[0].first, 0);
		EXPECT_NE(got.warnings[0].second.find(warning), std::string::npos)
			<< got.warnings[0].second;
		const ftrace_cpu_stats *s = ftrace_reader_get_cpu_stats(reader, 0);
		ASSERT_NE(s, nullptr);
		EXPECT_GE(s->warnings, 1u);
		EXPECT_EQ(std::string(s->first_warning), got.warnings[0].second);
		EXPECT_NE(std::string(ftrace_reader_get_stats(reader)->first_warning).find(warning),
			  std::string::npos);
	}
};

} // namespace

TEST_F(FtraceHostile, Loop)
{
	mem.put(next_field(2), page(1) + L.buffer_page.list.offset, 8);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(first_pages(3), "loop in the ring");
}

TEST_F(FtraceHostile, SelfLoop)
{
	mem.put(next_field(1), page(1) + L.buffer_page.list.offset, 8);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(first_pages(2), "loop in the ring");
}

TEST_F(FtraceHostile, CrossLink)
{
	mem.put(next_field(1), page(3) + L.buffer_page.list.offset, 8);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(first_pages(2), "cross-linked ring");
}

TEST_F(FtraceHostile, PageOutsideGuestMemory)
{
	mem.put(next_field(2), 0xdead000000ull, 8);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(first_pages(3), "buffer_page 0xdead000000 is not readable");
}

TEST_F(FtraceHostile, DataPageOutsideGuestMemory)
{
	mem.put(page(2), L.buffer_page.page, 0x10);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(first_pages(2), "the data page of buffer_page");
}

TEST_F(FtraceHostile, CommitPastThePageThenTheNextReadGoesOn)
{
	uint64_t data = sim.data_page(page(2));
	mem.put(data, L.data_page.commit, 5000);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(first_pages(2), "past the page");
	// The next read resumes after the damaged page, and counts its events
	// as lost.
	uint64_t damaged = events_on(2);
	std::vector<SimEvent> after = first_pages(5);
	after.erase(after.begin(), after.begin() + (ptrdiff_t)first_pages(3).size());
	ASSERT_EQ(read(), 0) << et_last_error();
	std::vector<SimEvent> have = got.on(0);
	ASSERT_EQ(have.size(), after.size());
	EXPECT_EQ(have.front().ts, after.front().ts);
	EXPECT_EQ(have.back().ts, after.back().ts);
	EXPECT_TRUE(got.warnings.empty());
	EXPECT_EQ(got.overwritten(0), damaged);
}

TEST_F(FtraceHostile, BogusRecordLength)
{
	// The 10th record of page 2 becomes type_len 0 with a length of 2.
	mem.put(event_at(2, 9), 0, 4);
	mem.put(event_at(2, 9) + 4, 2, 4);
	ASSERT_EQ(read(), 0) << et_last_error();
	std::vector<SimEvent> want = first_pages(2);
	std::vector<SimEvent> p2 = first_pages(3);
	want.insert(want.end(), p2.begin() + (ptrdiff_t)want.size(),
		    p2.begin() + (ptrdiff_t)want.size() + 9);
	expect_kept(want, "has length 2");
}

TEST_F(FtraceHostile, TimeBackwardsWithinAPage)
{
	// The 10th record of page 2 becomes a TIME_STAMP before the page's start.
	mem.put(event_at(2, 9), 31 | (5u << 5), 4);
	mem.put(event_at(2, 9) + 4, 0, 4);
	ASSERT_EQ(read(), 0) << et_last_error();
	std::vector<SimEvent> want = first_pages(2);
	std::vector<SimEvent> p2 = first_pages(3);
	want.insert(want.end(), p2.begin() + (ptrdiff_t)want.size(),
		    p2.begin() + (ptrdiff_t)want.size() + 9);
	expect_kept(want, "goes back");
}

TEST_F(FtraceHostile, TimeBackwardsAcrossPages)
{
	mem.put(sim.data_page(page(3)), L.data_page.time_stamp, 5);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(first_pages(3), "time runs backwards");
}

TEST_F(FtraceHostile, HugeNrPages)
{
	// nr_pages bounds nothing by itself: the ring closes after its 6
	// pages, every event is read, and the mismatch is said once.
	mem.put(sim.cpu_buffer(0), L.cpu_buffer.nr_pages, 1ull << 40);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept(sim.written(), "nr_pages says 1099511627776");
	ASSERT_EQ(read(), 0);
	EXPECT_TRUE(got.warnings.empty()) << "said once";
}

TEST_F(FtraceHostile, RingLongerThanTheCap)
{
	ASSERT_EQ(read(/*max_pages=*/3), 0) << et_last_error();
	expect_kept(first_pages(3), "does not close within 3 pages");
}

TEST_F(FtraceHostile, ReaderPageOutsideGuestMemory)
{
	mem.put(sim.cpu_buffer(0), L.cpu_buffer.reader_page, 0xdead000000ull);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept({}, "reader page 0xdead000000 is not readable");
}

TEST_F(FtraceHostile, NoHeadPage)
{
	mem.put(sim.cpu_buffer(0), L.cpu_buffer.head_page, 0);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept({}, "head_page is NULL");
}

TEST_F(FtraceHostile, CommitPageNotInTheRing)
{
	mem.put(sim.cpu_buffer(0), L.cpu_buffer.commit_page, page(0) + 8);
	ASSERT_EQ(read(), 0) << et_last_error();
	expect_kept({}, "is not in the ring");
}

TEST_F(FtraceHostile, PerCpuStructOutsideGuestMemory)
{
	uint64_t buffers = mem.get(sim.buffer(), L.trace_buffer.buffers);
	mem.put(buffers, 0xdead000000ull, 8);
	ASSERT_EQ(read(), 0) << et_last_error();
	ASSERT_EQ(got.warnings.size(), 1u);
	EXPECT_NE(got.warnings[0].second.find("ring_buffer_per_cpu at 0xdead000000 is not readable"),
		  std::string::npos);
}

TEST_F(FtraceHostile, ImplausibleCpuCounts)
{
	mem.put(sim.buffer(), L.trace_buffer.cpus, 100000);
	ASSERT_EQ(read(), 0) << et_last_error();
	// What follows the one real pointer is other structs' bytes, read as
	// pointers: faults, warnings, no crash; CPU 0 still read whole.
	EXPECT_EQ(got.on(0).size(), sim.written().size());
	ASSERT_FALSE(got.warnings.empty());
	EXPECT_EQ(got.warnings[0].first, -1);
	EXPECT_NE(got.warnings[0].second.find("claims 100000 CPUs"), std::string::npos);

	mem.put(sim.buffer(), L.trace_buffer.cpus, (uint32_t)-3);
	ASSERT_EQ(read(), 0) << et_last_error();
	EXPECT_TRUE(got.events.empty());
	ASSERT_EQ(got.warnings.size(), 1u);
	EXPECT_NE(got.warnings[0].second.find("-3 CPUs"), std::string::npos);
}

TEST_F(FtraceHostile, BuffersArrayOutsideGuestMemoryIsAnError)
{
	mem.put(sim.buffer(), L.trace_buffer.buffers, 0xdead000000ull);
	EXPECT_EQ(read(), -1);
	EXPECT_NE(std::string(et_last_error()).find("per-CPU buffer pointers"), std::string::npos);
}
