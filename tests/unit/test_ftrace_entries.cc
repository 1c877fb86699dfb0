// SPDX-License-Identifier: MIT
// Event payloads decoded by the real layout (vmm/ftrace/entries.c), the
// binary trace_printk arguments rendered (bprint.c), and guest strings
// read bounded and cached (guest_strings.c).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/unit/ftrace_ring_sim.h"
#include "vmm/ftrace/bprint.h"
#include "vmm/ftrace/entries.h"
#include "vmm/ftrace/guest_strings.h"

namespace {

struct Fixture : ::testing::Test {
	SynthMem mem{ 1u << 20 };
	ftrace_layout L = fixture_layout();
	RingSim sim{ mem, L, 1, 2 };
	guest_strings gs;
	char text[FTRACE_READER_TEXT_MAX];

	Fixture() { guest_strings_init(&gs, SynthMem::read, &mem); }
	~Fixture() override { guest_strings_free(&gs); }

	ftrace_event decode(const std::vector<uint8_t> &p)
	{
		ftrace_event ev;
		ftrace_event_decode(&L, p.data(), (uint32_t)p.size(), &ev);
		ftrace_event_render_text(&ev, &L, &gs, nullptr, nullptr, text, sizeof(text));
		return ev;
	}
};

// Packs arguments the way the kernel's vbin_printf() does.
struct Args {
	std::vector<uint8_t> b;
	void align(size_t a)
	{
		while (b.size() % a)
			b.push_back(0);
	}
	Args &i32(int32_t v)
	{
		align(4);
		b.insert(b.end(), (uint8_t *)&v, (uint8_t *)&v + 4);
		return *this;
	}
	Args &i64(int64_t v) // long, long long, size_t, pointers: 4-aligned
	{
		align(4);
		b.insert(b.end(), (uint8_t *)&v, (uint8_t *)&v + 8);
		return *this;
	}
	Args &i16(int16_t v)
	{
		align(2);
		b.insert(b.end(), (uint8_t *)&v, (uint8_t *)&v + 2);
		return *this;
	}
	Args &c(char v)
	{
		b.push_back((uint8_t)v);
		return *this;
	}
	Args &s(const std::string &v)
	{
		b.insert(b.end(), v.begin(), v.end());
		b.push_back(0);
		return *this;
	}
};

std::string render(const char *fmt, const Args &a, ftrace_bprint_result *res = nullptr,
		   ftrace_symbol_fn sym = nullptr)
{
	char out[512];
	ftrace_bprint_result r;
	ftrace_bprint_render(fmt, a.b.data(), a.b.size(), 8, sym, nullptr, out, sizeof(out), &r);
	if (res)
		*res = r;
	EXPECT_EQ(strlen(out), r.len);
	return out;
}

} // namespace

TEST_F(Fixture, Function)
{
	ftrace_event ev = decode(sim.fn(0xffffffff81001000, 0xffffffff81002000, 42));
	EXPECT_EQ(ev.kind, FTRACE_EVENT_FUNCTION);
	EXPECT_FALSE(ev.malformed);
	EXPECT_EQ(ev.type, 1);
	EXPECT_EQ(ev.pid, 42);
	EXPECT_EQ(ev.flags, 1);
	EXPECT_EQ(ev.preempt_count, 2);
	EXPECT_EQ(ev.ip, 0xffffffff81001000u);
	EXPECT_EQ(ev.parent_ip, 0xffffffff81002000u);
	EXPECT_EQ(ev.text, nullptr);
	EXPECT_STREQ(ftrace_event_kind_name(ev.kind), "function");
}

TEST_F(Fixture, FunctionGraph)
{
	ftrace_event ev = decode(sim.graph_entry(0xffffffff81003000, 3));
	EXPECT_EQ(ev.kind, FTRACE_EVENT_GRAPH_ENTRY);
	EXPECT_EQ(ev.func, 0xffffffff81003000u);
	EXPECT_EQ(ev.depth, 3);
	ev = decode(sim.graph_return(0xffffffff81003000, -1, 100, 250, 7));
	EXPECT_EQ(ev.kind, FTRACE_EVENT_GRAPH_RETURN);
	EXPECT_EQ(ev.func, 0xffffffff81003000u);
	EXPECT_EQ(ev.depth, -1);
	EXPECT_EQ(ev.overrun, 7u);
	EXPECT_EQ(ev.calltime, 100u);
	EXPECT_EQ(ev.rettime, 250u);
}

TEST_F(Fixture, PrintText)
{
	ftrace_event ev = decode(sim.print(0xffffffff81004000, "hello from init\n"));
	EXPECT_EQ(ev.kind, FTRACE_EVENT_PRINT);
	EXPECT_EQ(ev.ip, 0xffffffff81004000u);
	EXPECT_EQ(std::string(ev.text, ev.text_len), "hello from init\n");
	EXPECT_FALSE(ev.text_truncated);
	// Without a NUL the text stops at the payload's end, and says so.
	auto p = sim.print(1, "abcd");
	p.pop_back();
	ev = decode(p);
	EXPECT_EQ(std::string(ev.text), "abcd");
	EXPECT_TRUE(ev.text_truncated);
}

TEST_F(Fixture, BprintRenderedFromGuestFormat)
{
	uint64_t fmt = mem.str("x=%d name=%s addr=%lx c=%c\n");
	Args a;
	a.i32(-5).s("swapper").i64(0xffff888012345678).c('Z');
	ftrace_event ev = decode(sim.bprint(0xffffffff81005000, fmt, a.b));
	EXPECT_EQ(ev.kind, FTRACE_EVENT_BPRINT);
	EXPECT_EQ(ev.fmt, fmt);
	EXPECT_EQ(std::string(ev.text), "x=-5 name=swapper addr=ffff888012345678 c=Z\n");
	EXPECT_FALSE(ev.text_truncated);
	// The format is read once, then cached.
	uint64_t reads = gs.reads - gs.hits;
	decode(sim.bprint(0xffffffff81005000, fmt, a.b));
	EXPECT_EQ(gs.reads - gs.hits, reads);
}

TEST_F(Fixture, BprintUnreadableFormat)
{
	Args a;
	a.i32(1);
	ftrace_event ev = decode(sim.bprint(1, 0xdead000000000000ull, a.b));
	EXPECT_EQ(ev.kind, FTRACE_EVENT_BPRINT);
	EXPECT_EQ(std::string(ev.text), "<format at 0xdead000000000000 unreadable>");
	EXPECT_TRUE(ev.text_truncated);
}

TEST_F(Fixture, BputsString)
{
	uint64_t s = mem.str("constant message\n");
	ftrace_event ev = decode(sim.bputs(0xffffffff81006000, s));
	EXPECT_EQ(ev.kind, FTRACE_EVENT_BPUTS);
	EXPECT_EQ(ev.ip, 0xffffffff81006000u);
	EXPECT_EQ(std::string(ev.text), "constant message\n");
}

TEST_F(Fixture, OtherTypesKeptRaw)
{
	auto p = sim.raw(2 /* TRACE_CTX */, 40);
	ftrace_event ev = decode(p);
	EXPECT_EQ(ev.kind, FTRACE_EVENT_RAW);
	EXPECT_FALSE(ev.malformed);
	EXPECT_EQ(ev.type, 2);
	EXPECT_EQ(ev.pid, 1);
	ASSERT_EQ(ev.payload_len, 40u);
	EXPECT_EQ(memcmp(ev.payload, p.data(), 40), 0);
	ev = decode(sim.raw(600, 12)); // a trace_event= id
	EXPECT_EQ(ev.kind, FTRACE_EVENT_RAW);
	EXPECT_EQ(ev.type, 600);
}

TEST_F(Fixture, ShortPayloadsKeptRawAndMarked)
{
	auto fn = sim.fn(1, 2);
	fn.resize(20); // parent_ip cut
	ftrace_event ev = decode(fn);
	EXPECT_EQ(ev.kind, FTRACE_EVENT_RAW);
	EXPECT_TRUE(ev.malformed);
	EXPECT_EQ(ev.type, 1);
	std::vector<uint8_t> tiny = { 1, 0, 0 }; // not even a trace_entry
	ev = decode(tiny);
	EXPECT_EQ(ev.kind, FTRACE_EVENT_RAW);
	EXPECT_TRUE(ev.malformed);
	EXPECT_EQ(ev.type, 1);
	ev = decode({});
	EXPECT_TRUE(ev.malformed);
	EXPECT_EQ(ev.type, 0xffff);
	auto bp = sim.bprint(1, 2, {});
	bp.resize(20); // fmt cut
	ev = decode(bp);
	EXPECT_EQ(ev.kind, FTRACE_EVENT_RAW);
	EXPECT_TRUE(ev.malformed);
}

// ---- bprint rendering ------------------------------------------------------

TEST(FtraceBprint, IntegerSizesAndAlignment)
{
	Args a;
	a.c('a').i16(-2).i32(3).c('b').i64(-4).i64(5).i64(6).i32(0x7f);
	EXPECT_EQ(render("%hhd %hd %d %c %ld %llu %zu %#x", a), "97 -2 3 b -4 5 6 0x7f");
}

TEST(FtraceBprint, WidthPrecisionAndStar)
{
	Args a;
	a.i32(7).i32(42).i32(3).s("abcdef").i32(-6).i32(1).i32(255);
	EXPECT_EQ(render("[%*d] [%.*s] [%*d] [%05X]", a), "[     42] [abc] [1     ] [000FF]");
	Args b;
	b.s("hi");
	EXPECT_EQ(render("[%-5s|%5s]", b), "[hi   |<args truncated>");
}

TEST(FtraceBprint, Pointers)
{
	Args a;
	a.i64(0xffffffff81000000).i64(0x1234).s("00:11:22:33:44:55").i64(-22);
	EXPECT_EQ(render("%pS %px %pM %pe", a), "0xffffffff81000000 0x1234 00:11:22:33:44:55 -22");
	auto sym = [](void *, uint64_t addr, bool off, char *buf, size_t n) -> int {
		if (addr != 0xffffffff81000010)
			return -1;
		snprintf(buf, n, off ? "start_kernel+0x10/0x200" : "start_kernel");
		return 0;
	};
	Args b;
	b.i64(0xffffffff81000010).i64(0xffffffff81000010).i64(0xffffffff8100ffff);
	EXPECT_EQ(render("%pS %ps %pS", b, nullptr, sym),
		  "start_kernel+0x10/0x200 start_kernel 0xffffffff8100ffff");
}

TEST(FtraceBprint, HostileFormatsAndArguments)
{
	ftrace_bprint_result r;
	Args a;
	a.i32(1);
	// %n is refused as the kernel refuses it: formatting stops there.
	EXPECT_EQ(render("a %d %n b", a, &r), "a 1 ");
	EXPECT_TRUE(r.invalid);
	// Arguments that run out.
	EXPECT_EQ(render("%d %d", a, &r), "1 <args truncated>");
	EXPECT_TRUE(r.args_short);
	// An inline string without its NUL.
	Args s;
	s.b = { 'x', 'y' };
	EXPECT_EQ(render("%s", s, &r), "<args truncated>");
	// Huge widths are clamped, and the output is cut at its buffer.
	std::string wide = render("%999999999d", a, &r);
	EXPECT_EQ(wide.size(), 256u);
	char small[8];
	ftrace_bprint_render("%s and more", (const uint8_t *)"0123456789", 11, 8, nullptr, nullptr,
			     small, sizeof(small), &r);
	EXPECT_STREQ(small, "0123456");
	EXPECT_TRUE(r.cut);
	// A trailing '%' and a dangling length.
	EXPECT_EQ(render("50%", a, &r), "50");
	EXPECT_EQ(render("%l", a, &r), "");
	EXPECT_EQ(render("%%d", a, &r), "%d");
	// A %c of 0 (found by fuzzing): left out, so the text stays one string
	// whose length is what the result says.
	Args z;
	z.c('\0').c('q');
	EXPECT_EQ(render("a%cb%c", z, &r), "abq");
	EXPECT_EQ(r.len, 3u);
}

// ---- guest strings ---------------------------------------------------------

TEST(FtraceGuestStrings, StopsAtUnreadableMemoryAndTheLimit)
{
	SynthMem mem(64 << 10);
	guest_strings gs;
	guest_strings_init(&gs, SynthMem::read, &mem);
	// A string running into the end of memory: what was readable, marked.
	uint64_t end = SynthMem::kBase + mem.bytes.size();
	memcpy(mem.at(end - 5, 5), "tail!", 5);
	int truncated = 0;
	const char *s = guest_string_get(&gs, end - 5, &truncated);
	ASSERT_NE(s, nullptr);
	// Reads go page by page: the last page is whole here, so all 5 bytes.
	EXPECT_EQ(std::string(s), "tail!");
	EXPECT_TRUE(truncated);
	// Nothing readable at all.
	EXPECT_EQ(guest_string_get(&gs, 0x1000, &truncated), nullptr);
	EXPECT_EQ(gs.failures, 1u);
	// No NUL within the limit.
	uint64_t long_str = mem.alloc(GUEST_STRING_MAX * 2, 1);
	memset(mem.at(long_str, GUEST_STRING_MAX * 2), 'x', GUEST_STRING_MAX * 2);
	s = guest_string_get(&gs, long_str, &truncated);
	ASSERT_NE(s, nullptr);
	EXPECT_EQ(strlen(s), GUEST_STRING_MAX - 1u);
	EXPECT_TRUE(truncated);
	// A string across a 4 KiB boundary.
	uint64_t cross = (long_str + GUEST_STRING_MAX * 2 + 4096) / 4096 * 4096 - 3;
	memcpy(mem.at(cross, 7), "abcdef", 7);
	s = guest_string_get(&gs, cross, &truncated);
	EXPECT_STREQ(s, "abcdef");
	EXPECT_FALSE(truncated);
	guest_strings_free(&gs);
}
