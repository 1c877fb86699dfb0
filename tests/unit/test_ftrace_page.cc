// SPDX-License-Identifier: MIT
// One ring-buffer page decoded (vmm/ftrace/ring_page.c): every record
// kind, absolute timestamps, the commit flags, and hostile pages that
// must end the decode with a warning while keeping what came before.
// Well-formed random pages are also decoded by libtraceevent's kbuffer,
// an independent parser, and both must agree.
#include <gtest/gtest.h>

// libtraceevent's header has no C++ guards of its own.
extern "C" {
#include <kbuffer.h>
}

#include <cstring>
#include <random>
#include <vector>

#include "tests/unit/ftrace_ring_sim.h"
#include "vmm/ftrace/ring_page.h"

namespace {

// A buffer_data_page written record by record (6.1 x86-64 layout: the
// header fields come from the fixture's BTF).
struct Page {
	ring_page_format f;
	std::vector<uint8_t> b;
	uint32_t off = 0;

	explicit Page(uint64_t stamp)
	{
		ftrace_layout L = fixture_layout();
		ring_page_format_from_layout(&f, &L, 4096);
		b.assign(f.page_size, 0);
		memcpy(b.data() + f.time_stamp.offset, &stamp, 8);
	}
	uint8_t *data() { return b.data() + f.data_offset; }
	Page &u32(uint32_t v)
	{
		memcpy(data() + off, &v, 4);
		off += 4;
		return *this;
	}
	Page &hdr(uint32_t type_len, uint32_t delta) { return u32(type_len | (delta << 5)); }
	// A data event whose payload is len bytes of a pattern; type_len 1-28,
	// or 0 (length in array[0]) when big or asked for.
	Page &event(uint32_t delta, uint32_t len, bool force_big = false)
	{
		uint32_t aligned = (len + 3) & ~3u;
		if (aligned <= 112 && !force_big) {
			hdr(aligned / 4, delta);
		} else {
			hdr(0, delta);
			u32(aligned + 4);
		}
		for (uint32_t i = 0; i < aligned; i++)
			data()[off + i] = (uint8_t)(off + i);
		off += aligned;
		return *this;
	}
	Page &extend(uint64_t delta)
	{
		hdr(30, (uint32_t)(delta & ((1u << 27) - 1)));
		return u32((uint32_t)(delta >> 27));
	}
	Page &stamp(uint64_t abs)
	{
		hdr(31, (uint32_t)(abs & ((1u << 27) - 1)));
		return u32((uint32_t)(abs >> 27));
	}
	// A discarded event: 4 + len bytes in all (len counts array[0]).
	Page &discarded(uint32_t delta, uint32_t len)
	{
		hdr(29, delta);
		u32(len);
		off += len - 4;
		return *this;
	}
	Page &commit(uint64_t raw)
	{
		memcpy(b.data() + f.commit.offset, &raw, 8);
		return *this;
	}
	Page &commit() { return commit(off); }
};

struct Decoded {
	std::vector<ring_page_event> events;
	ring_page_info info;
	int ret;
	int stop_after = -1;
};

Decoded decode(Page &p, uint32_t bound = RING_PAGE_BOUND_COMMIT, uint32_t emit_from = 0,
	       int stop_after = -1)
{
	Decoded d;
	d.stop_after = stop_after;
	d.ret = ring_page_decode(
		p.b.data(), p.b.size(), &p.f, bound, emit_from,
		[](void *ctx, const ring_page_event *ev) -> int {
			Decoded *dd = static_cast<Decoded *>(ctx);
			if (dd->stop_after >= 0 && dd->events.size() >= (size_t)dd->stop_after)
				return 1;
			dd->events.push_back(*ev);
			return 0;
		},
		&d, &d.info);
	return d;
}

} // namespace

TEST(FtracePage, DataEventsGetAbsoluteTimes)
{
	Page p(1000);
	p.event(0, 24).event(10, 24).event(20, 24).commit();
	Decoded d = decode(p);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	ASSERT_EQ(d.events.size(), 3u);
	EXPECT_EQ(d.events[0].ts, 1000u);
	EXPECT_EQ(d.events[1].ts, 1010u);
	EXPECT_EQ(d.events[2].ts, 1030u);
	EXPECT_EQ(d.events[1].offset, 28u);
	EXPECT_EQ(d.events[1].next, 56u);
	EXPECT_EQ(d.events[1].len, 24u);
	EXPECT_EQ(d.events[1].data, p.data() + 32);
	EXPECT_EQ(d.info.end, 84u);
	EXPECT_EQ(d.info.last_ts, 1030u);
}

TEST(FtracePage, EveryTypeLenAndTheLengthWord)
{
	Page p(5);
	std::vector<uint32_t> lens;
	for (uint32_t len = 4; len <= 112; len += 4)
		lens.push_back(len); // type_len 1..28
	for (uint32_t len : lens)
		p.event(1, len);
	p.event(1, 200);       // type_len 0: too big for type_len
	p.event(1, 24, true);  // type_len 0 by choice (8-byte-aligned architectures)
	p.commit();
	Decoded d = decode(p);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	ASSERT_EQ(d.events.size(), lens.size() + 2);
	for (size_t i = 0; i < lens.size(); i++) {
		EXPECT_EQ(d.events[i].len, lens[i]);
		EXPECT_EQ(d.events[i].data, p.data() + d.events[i].offset + 4);
	}
	EXPECT_EQ(d.events[lens.size()].len, 200u);
	EXPECT_EQ(d.events[lens.size()].data, p.data() + d.events[lens.size()].offset + 8);
	EXPECT_EQ(d.events[lens.size() + 1].len, 24u);
	EXPECT_EQ(d.events.back().ts, 5u + lens.size() + 2);
}

TEST(FtracePage, TimeExtendCarriesLargeDeltas)
{
	uint64_t big = (5ull << 27) + 3;
	Page p(100);
	p.event(0, 24).extend(big).event(0, 24).extend(1ull << 40).event(7, 24).commit();
	Decoded d = decode(p);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	ASSERT_EQ(d.events.size(), 3u);
	EXPECT_EQ(d.events[1].ts, 100 + big);
	EXPECT_EQ(d.events[2].ts, 100 + big + (1ull << 40) + 7);
	EXPECT_EQ(d.info.time_extends, 2u);
}

TEST(FtracePage, TimeStampIsAbsoluteWithThePagesTopBits)
{
	Page p(1000);
	p.event(0, 24).stamp(5000).event(3, 24).commit();
	Decoded d = decode(p);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	EXPECT_EQ(d.events[1].ts, 5003u);

	// A 59-bit stamp takes bits 59-63 from the page (rb_fix_abs_ts).
	uint64_t top = 3ull << 59;
	Page q(top | 1000);
	q.event(0, 24).stamp(5000).event(0, 24).commit();
	d = decode(q);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	EXPECT_EQ(d.events[1].ts, top | 5000);
	// ...and a stamp below the page's low bits has wrapped into the next epoch.
	Page r(top | 9000);
	r.event(0, 24).stamp(500).event(0, 24).commit();
	d = decode(r);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	EXPECT_EQ(d.events[1].ts, (top | 500) + (1ull << 59));
}

TEST(FtracePage, PaddingKinds)
{
	// A discarded event is skipped and does not move the time (as the
	// kernel's rb_update_read_stamp); null padding ends the page even if
	// commit says there is more.
	Page p(10);
	p.event(0, 24).discarded(50, 24).event(5, 24);
	uint32_t before_null = p.off;
	p.hdr(29, 0).event(1, 24).commit();
	Decoded d = decode(p);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	ASSERT_EQ(d.events.size(), 2u);
	EXPECT_EQ(d.events[1].ts, 15u);
	EXPECT_EQ(d.info.discarded, 1u);
	EXPECT_EQ(d.info.end, before_null);
}

TEST(FtracePage, MissedEventBits)
{
	Page p(1);
	p.event(0, 24).commit();
	uint64_t lost = 1234;
	memcpy(p.data() + p.off, &lost, 8);
	p.commit(p.off | (1ull << 31) | (1ull << 30));
	Decoded d = decode(p);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	EXPECT_EQ(d.events.size(), 1u);
	EXPECT_TRUE(d.info.missed_events);
	EXPECT_TRUE(d.info.missed_stored);
	EXPECT_EQ(d.info.missed, 1234u);
	EXPECT_EQ(d.info.commit, 28u);
}

TEST(FtracePage, EmitFromKeepsTimeFromTheStart)
{
	Page p(100);
	p.event(0, 24).event(10, 24).event(10, 24).commit();
	Decoded d = decode(p, RING_PAGE_BOUND_COMMIT, 28);
	ASSERT_EQ(d.events.size(), 2u);
	EXPECT_EQ(d.events[0].offset, 28u);
	EXPECT_EQ(d.events[0].ts, 110u);
	EXPECT_EQ(d.info.events, 3u);
}

TEST(FtracePage, BoundOverridesCommit)
{
	// A page a consuming reader recycled: commit 0, its events intact,
	// ending with padding.
	Page p(7);
	p.event(0, 24).event(1, 24);
	uint32_t rest = 4080 - p.off;
	p.discarded(1, rest - 4).commit(0);
	EXPECT_TRUE(decode(p).events.empty());
	Decoded d = decode(p, 4080);
	ASSERT_EQ(d.ret, 0) << d.info.message;
	EXPECT_EQ(d.events.size(), 2u);
}

TEST(FtracePage, CallbackStops)
{
	Page p(1);
	p.event(0, 24).event(0, 24).event(0, 24).commit();
	Decoded d = decode(p, RING_PAGE_BOUND_COMMIT, 0, 1);
	EXPECT_EQ(d.ret, -1);
	EXPECT_EQ(d.info.status, RING_PAGE_STOPPED);
	EXPECT_EQ(d.events.size(), 1u);
}

// ---- hostile pages ---------------------------------------------------------

TEST(FtracePageHostile, CommitPastThePage)
{
	for (uint64_t commit : { 4081ull, 0x7ffffffull, 1ull << 40 }) {
		Page p(1);
		p.event(0, 24).commit(commit);
		Decoded d = decode(p);
		EXPECT_EQ(d.ret, -1);
		EXPECT_EQ(d.info.status, RING_PAGE_BAD_COMMIT);
		EXPECT_TRUE(d.events.empty());
		EXPECT_NE(std::string(d.info.message).find("past the page"), std::string::npos)
			<< d.info.message;
	}
}

TEST(FtracePageHostile, EventPastCommitKeepsThoseBefore)
{
	Page p(1);
	p.event(0, 24).event(0, 24);
	p.event(0, 24).commit(p.off - 8); // the third ends past commit
	Decoded d = decode(p);
	EXPECT_EQ(d.ret, -1);
	EXPECT_EQ(d.info.status, RING_PAGE_PAST_COMMIT);
	EXPECT_EQ(d.events.size(), 2u);
	EXPECT_EQ(d.info.end, 56u);

	Page q(1); // a header cut by commit
	q.event(0, 24).commit(q.off + 2);
	EXPECT_EQ(decode(q).info.status, RING_PAGE_PAST_COMMIT);
	Page r(1); // a length word cut by commit
	r.event(0, 24).hdr(0, 0).commit(r.off);
	EXPECT_EQ(decode(r).info.status, RING_PAGE_PAST_COMMIT);
}

TEST(FtracePageHostile, BogusLengths)
{
	// type_len 0 with a length that is not a whole number of words.
	Page p(1);
	p.event(0, 24).hdr(0, 0).u32(2).event(0, 24).commit();
	Decoded d = decode(p);
	EXPECT_EQ(d.info.status, RING_PAGE_BAD_LENGTH);
	EXPECT_EQ(d.events.size(), 1u);
	// A discarded record of length -4, which sends libtraceevent 1.7.1's
	// kbuffer into an endless loop on the same record: here a length far
	// past commit.
	Page q(1);
	q.event(0, 24).hdr(29, 1).u32(0xfffffffcu).event(0, 24).commit();
	d = decode(q);
	EXPECT_EQ(d.info.status, RING_PAGE_PAST_COMMIT);
	EXPECT_EQ(d.events.size(), 1u);
	// A discarded record shorter than its own length word.
	Page z(1);
	z.event(0, 24).hdr(29, 1).u32(0).event(0, 24).commit();
	EXPECT_EQ(decode(z).info.status, RING_PAGE_BAD_LENGTH);
	// A huge type_len 0 length.
	Page r(1);
	r.hdr(0, 0).u32(0xfffffff0u).commit(4080);
	EXPECT_EQ(decode(r).info.status, RING_PAGE_PAST_COMMIT);
}

TEST(FtracePageHostile, TimeRunningBackwards)
{
	Page p(10000);
	p.event(0, 24).event(5, 24).stamp(9000).event(0, 24).commit();
	Decoded d = decode(p);
	EXPECT_EQ(d.ret, -1);
	EXPECT_EQ(d.info.status, RING_PAGE_TIME_BACKWARDS);
	EXPECT_EQ(d.events.size(), 2u);
	// The clock overflowing through a delta or an extend counts the same.
	Page q(UINT64_MAX - 3);
	q.event(0, 24).event(10, 24).commit();
	d = decode(q);
	EXPECT_EQ(d.info.status, RING_PAGE_TIME_BACKWARDS);
	EXPECT_EQ(d.events.size(), 1u);
	Page r(UINT64_MAX - (1ull << 30));
	r.event(0, 24).extend(1ull << 40).event(0, 24).commit();
	EXPECT_EQ(decode(r).info.status, RING_PAGE_TIME_BACKWARDS);
}

TEST(FtracePageHostile, ShortBufferRefused)
{
	Page p(1);
	p.event(0, 24).commit();
	ring_page_info info;
	EXPECT_EQ(ring_page_decode(p.b.data(), 100, &p.f, RING_PAGE_BOUND_COMMIT, 0, nullptr,
				   nullptr, &info),
		  -1);
	EXPECT_EQ(info.status, RING_PAGE_BAD_COMMIT);
}

// ---- a second opinion: libtraceevent's kbuffer -----------------------------

TEST(FtracePage, AgreesWithKbufferOnWellFormedPages)
{
	std::mt19937_64 rng(16);
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	ASSERT_NE(kb, nullptr);
	size_t compared = 0;
	for (int round = 0; round < 200; round++) {
		Page p(rng() >> 8);
		while (true) {
			uint32_t len = 4 + 4 * (uint32_t)(rng() % 40);
			uint64_t delta = rng() % 4 == 0 ? rng() % (1ull << 36) : rng() % 5000;
			uint32_t need = 8 + 8 + len + 8;
			if (p.off + need > 4080)
				break;
			if (delta >> 27) {
				p.extend(delta);
				delta = 0;
			}
			p.event((uint32_t)delta, len);
		}
		if (round % 2 && 4080 - p.off >= 8)
			p.discarded(1, 4080 - p.off - 4); // the page-end padding
		p.commit();
		Decoded ours = decode(p);
		ASSERT_EQ(ours.ret, 0) << ours.info.message;

		ASSERT_EQ(kbuffer_load_subbuffer(kb, p.b.data()), 0);
		unsigned long long ts;
		size_t i = 0;
		for (void *e = kbuffer_read_event(kb, &ts); e; e = kbuffer_next_event(kb, &ts), i++) {
			ASSERT_LT(i, ours.events.size());
			EXPECT_EQ(ours.events[i].ts, ts) << "round " << round << " event " << i;
			EXPECT_EQ(ours.events[i].data, e) << "round " << round << " event " << i;
			compared++;
		}
		EXPECT_EQ(i, ours.events.size()) << "round " << round;
	}
	kbuffer_free(kb);
	EXPECT_GT(compared, 2000u);
}
