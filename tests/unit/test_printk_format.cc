// SPDX-License-Identifier: MIT
// The printk renderer (vmm/printk/printk_format.c) on its own, with an
// in-memory argument source: flags, widths, precisions, sizes, %p and its
// extensions, both callers' styles, hostile formats and cut output. The
// callers' argument layouts are tested in test_panic_message.cc and
// test_ftrace_entries.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

// The two callers' styles, as vmm/machine/panic_message.c and
// vmm/ftrace/bprint.c set them.
const printk_style kKernel = { 256, false, true, false, "<args truncated>" };
const printk_style kPanic = { 64, true, false, true, "?" };

struct Pointer {
	uint64_t address;
	const char *text; // nullptr: the address
};

// Arguments in three queues, taken in order; what the renderer asked for
// is kept.
struct Source {
	std::deque<uint64_t> ints;
	std::deque<std::string> strings;
	std::deque<Pointer> pointers;
	unsigned long_bytes = 8;
	bool symbols = true;
	std::vector<unsigned> int_sizes;
	std::vector<size_t> string_max;
	std::vector<char> extensions;
};

bool next_int(void *ctx, unsigned bytes, uint64_t *v)
{
	auto *s = static_cast<Source *>(ctx);
	s->int_sizes.push_back(bytes);
	if (s->ints.empty())
		return false;
	*v = s->ints.front();
	s->ints.pop_front();
	return true;
}

bool next_string(void *ctx, size_t max, const char **text, size_t *len)
{
	// Kept until the source goes: the renderer reads the text after the call.
	static std::deque<std::string> taken;
	auto *s = static_cast<Source *>(ctx);
	s->string_max.push_back(max);
	if (s->strings.empty())
		return false;
	taken.push_back(s->strings.front());
	s->strings.pop_front();
	*text = taken.back().data();
	*len = taken.back().size();
	return true;
}

bool next_pointer(void *ctx, char ext, printk_pointer *p)
{
	auto *s = static_cast<Source *>(ctx);
	s->extensions.push_back(ext);
	if (s->pointers.empty())
		return false;
	Pointer q = s->pointers.front();
	s->pointers.pop_front();
	p->address = q.address;
	p->text = q.text;
	p->text_len = q.text ? strlen(q.text) : 0;
	return true;
}

// Functions at 0x1000 (one page each): "func_1+0x234/0x1000".
bool symbol(void *, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	if (addr < 0x1000 || addr >= 0x3000)
		return false;
	if (with_offset)
		snprintf(buf, size, "func_%llu+0x%llx/0x1000", (unsigned long long)(addr >> 12),
			 (unsigned long long)(addr & 0xfff));
	else
		snprintf(buf, size, "func_%llu", (unsigned long long)(addr >> 12));
	return true;
}

std::string render(const char *fmt, const printk_style &style, Source &src,
		   printk_result *res = nullptr, size_t size = 512)
{
	printk_args a = { &src, src.long_bytes, next_int, next_string, next_pointer,
			  src.symbols ? symbol : nullptr };
	std::vector<char> out(size + 1, 'Z');
	printk_result r;
	printk_format(fmt, &style, &a, out.data(), size, &r);
	if (res)
		*res = r;
	if (size) {
		EXPECT_EQ(strlen(out.data()), r.len) << fmt;
		EXPECT_LT(r.len, size) << fmt;
	}
	EXPECT_EQ(out[size], 'Z') << "nothing past the buffer";
	return size ? out.data() : std::string();
}

std::string render(const char *fmt, const printk_style &style, std::deque<uint64_t> ints)
{
	Source s;
	s.ints = ints;
	return render(fmt, style, s);
}

} // namespace

TEST(PrintkFormat, FlagsAndWidths)
{
	const char *fmt = "[%5d|%-5d|%05d|%+d|% d|%+ d|%-05d|%#x|%#X|%#x|%#o|%5u|%x|%X|%o]";
	std::deque<uint64_t> ints = { 42, 42, 42, 42, 42, 42, 42, 255, 255, 0, 8, 7, 0xbeef, 0xbeef, 8 };
	EXPECT_EQ(render(fmt, kKernel, ints),
		  "[   42|42   |00042|+42| 42|+42|42   |0xff|0XFF|0|010|    7|beef|BEEF|10]");
	// Panic's own rules: "%#o" has no leading 0, the rest is alike.
	EXPECT_EQ(render(fmt, kPanic, ints),
		  "[   42|42   |00042|+42| 42|+42|42   |0xff|0XFF|0|10|    7|beef|BEEF|10]");
	// Signs are for %d and %i only; negative numbers keep theirs.
	EXPECT_EQ(render("%+u % x %+i %05d %-6d|", kKernel, { 3, 3, 0xfffffffb, 0xfffffffb, 0xfffffffb }),
		  "3 3 -5 -0005 -5    |");
}

TEST(PrintkFormat, Precisions)
{
	// Under the kernel's rules a precision is an integer's least number of
	// digits (and turns '0' off), and cuts a string.
	Source s;
	s.ints = { 5, 5, 255, 5, 0, 0, 0, 8 };
	s.strings = { "abc", "xyz" };
	EXPECT_EQ(render("%.3d|%8.3d|%-8.3x|%08.3d|%.0d|%#.0o|%#.0x|%#.3o|%.2s|%5.1s|", kKernel, s),
		  "005|     005|0ff     |     005||0||010|ab|    x|");
	EXPECT_EQ(s.string_max, (std::vector<size_t>{ 2, 1 })) << "the source may read less";
	// Panic's: integers ignore it; a string's precision is left to the
	// source, which reads no more.
	Source p;
	p.ints = { 5 };
	p.strings = { "abc" };
	EXPECT_EQ(render("%.3d|%.2s|%s", kPanic, p), "5|abc|?");
	EXPECT_EQ(p.string_max, (std::vector<size_t>{ 2, SIZE_MAX }));
	// '*' precisions; a negative one is none.
	Source t;
	t.ints = { 2, (uint64_t)-1 };
	t.strings = { "abcdef", "abcdef" };
	EXPECT_EQ(render("%.*s|%.*s", kKernel, t), "ab|abcdef");
}

TEST(PrintkFormat, IntegerSizes)
{
	Source s;
	s.ints = { 0x1ff, 0x18000, 0xfffffffe, (uint64_t)-3, (uint64_t)-4,
		   12, (uint64_t)-5, 0x1ff, 0x1ffff, 0x7fffffffffffffff };
	EXPECT_EQ(render("%hhd %hd %d %ld %lld %zu %td %hhu %hx %Ld", kKernel, s),
		  "-1 -32768 -2 -3 -4 12 -5 255 ffff 9223372036854775807");
	EXPECT_EQ(s.int_sizes, (std::vector<unsigned>{ 1, 2, 4, 8, 8, 8, 8, 1, 2, 8 }));
	// A long is what the source says: 4 bytes in 32-bit code.
	Source l;
	l.long_bytes = 4;
	l.ints = { 0xfffffffe, 0xffffffff, 1 };
	EXPECT_EQ(render("%ld %zu %lld", kKernel, l), "-2 4294967295 1");
	EXPECT_EQ(l.int_sizes, (std::vector<unsigned>{ 4, 4, 8 }));
	// j and q: 64-bit sizes in best effort; the kernel knows neither.
	Source j;
	j.ints = { (uint64_t)-7, 9 };
	EXPECT_EQ(render("%jd %qu", kPanic, j), "-7 9");
	EXPECT_EQ(j.int_sizes, (std::vector<unsigned>{ 8, 8 }));
	printk_result r;
	Source k;
	k.ints = { 1 };
	EXPECT_EQ(render("a %jd b", kKernel, k, &r), "a ");
	EXPECT_TRUE(r.invalid);
	// %c is a 1-byte integer.
	Source c;
	c.ints = { 0x4142 };
	EXPECT_EQ(render("%c", kKernel, c), "B");
	EXPECT_EQ(c.int_sizes, (std::vector<unsigned>{ 1 }));
}

TEST(PrintkFormat, PointerExtensions)
{
	Source s;
	s.pointers = { { 0x1234, nullptr }, { 0x1234, nullptr }, { 0x2010, nullptr },
		       { 0x2010, nullptr }, { 0x2010, nullptr }, { 0x9999, nullptr },
		       { 0x10, nullptr },   { 0xff, nullptr },   { 0, "00:11:22:33:44:55" } };
	EXPECT_EQ(render("%pS %ps %pB %pF %pf %pS %px %p %pM", kKernel, s),
		  "func_1+0x234/0x1000 func_1 func_2+0x10/0x1000 func_2+0x10/0x1000 func_2 0x9999 0x10 "
		  "0xff 00:11:22:33:44:55");
	EXPECT_EQ(s.extensions, (std::vector<char>{ 'S', 's', 'B', 'F', 'f', 'S', 'x', ' ', 'M' }));
	// The letters after the 'p' belong to it; a bare %p's next character
	// does not.
	Source e;
	e.pointers = { { 0x1000, nullptr }, { 0x20, nullptr } };
	EXPECT_EQ(render("[%pISpc][%p-]", kKernel, e), "[0x1000][0x20-]");
	// Widths apply to what a pointer prints.
	Source w;
	w.pointers = { { 0x1000, nullptr }, { 0x1000, nullptr }, { 0xab, nullptr } };
	EXPECT_EQ(render("[%10ps][%-10ps][%06p]", kKernel, w), "[    func_1][func_1    ][  0xab]");
	Source wp;
	wp.pointers = { { 0xab, nullptr } };
	EXPECT_EQ(render("[%06p]", kPanic, wp), "[000xab]") << "panic's '0' pads anything";
	// Without a symbol callback, addresses print in hex.
	Source n;
	n.symbols = false;
	n.pointers = { { 0x1234, nullptr } };
	EXPECT_EQ(render("%pS", kKernel, n), "0x1234");
	// %pe: the error number under the kernel's rules, hex under panic's.
	Source k, p;
	k.pointers = p.pointers = { { (uint64_t)-22, nullptr } };
	EXPECT_EQ(render("%pe", kKernel, k), "-22");
	EXPECT_EQ(render("%pe", kPanic, p), "0xffffffffffffffea");
}

TEST(PrintkFormat, MissingArguments)
{
	printk_result r;
	// The kernel's rules end the text at the first missing argument.
	Source k;
	k.ints = { 1 };
	EXPECT_EQ(render("%d %d %d", kKernel, k, &r), "1 <args truncated>");
	EXPECT_TRUE(r.args_short);
	Source ks;
	EXPECT_EQ(render("[%*d]", kKernel, ks, &r), "[<args truncated>");
	EXPECT_TRUE(r.args_short);
	// Best effort marks each and goes on; a missing '*' is no width.
	Source p;
	EXPECT_EQ(render("%d %s %p %c %*d %5y.", kPanic, p, &r), "? ? ? ? ? %y.");
	EXPECT_TRUE(r.args_short);
}

TEST(PrintkFormat, HostileFormats)
{
	printk_result r;
	// An unterminated conversion.
	EXPECT_EQ(render("abc%", kPanic, { 1 }), "abc");
	Source u;
	EXPECT_EQ(render("abc%-08.5l", kKernel, u, &r), "abc");
	EXPECT_TRUE(r.invalid);
	// Huge widths and precisions are clamped to the style's bounds.
	EXPECT_EQ(render("%999999999d", kKernel, { 1 }).size(), 256u);
	EXPECT_EQ(render("%999999999d", kPanic, { 1 }).size(), 64u);
	EXPECT_EQ(render("%2147483648d", kKernel, { 1 }).size(), 256u);
	Source big;
	big.ints = { 1 };
	big.strings = { std::string(1000, 'x') };
	EXPECT_EQ(render("%.99999999999d|%.99999999999s", kKernel, big, nullptr, 2048),
		  std::string(255, '0') + "1|" + std::string(256, 'x'));
	// A negative '*' width left-justifies under the kernel's rules, and is
	// ignored by panic's; INT_MIN is clamped like any other.
	EXPECT_EQ(render("[%*d]", kKernel, { (uint64_t)-6, 1 }), "[1     ]");
	EXPECT_EQ(render("[%*d]", kPanic, { (uint64_t)-6, 1 }), "[1]");
	EXPECT_EQ(render("%*d", kKernel, { 0x80000000, 1 }).size(), 256u);
	EXPECT_EQ(render("[%*d]", kKernel, { 0xfffffffa00000003, 1 }), "[  1]")
		<< "a '*' is an int: the low 4 bytes";
	// %n never writes (there is nothing it could write to) and takes no
	// argument: the kernel's rules stop there, best effort prints it.
	Source n;
	n.ints = { 1, 2 };
	EXPECT_EQ(render("a %d %n %d", kKernel, n, &r), "a 1 ");
	EXPECT_TRUE(r.invalid);
	EXPECT_EQ(n.ints.size(), 1u);
	EXPECT_EQ(render("a %d %n %d", kPanic, { 1, 2 }), "a 1 %n 2");
	// '%' after flags or a width: best effort prints it, the kernel's
	// rules stop as bprint always did.
	EXPECT_EQ(render("%%|%5%|%-%", kPanic, {}), "%|%|%");
	EXPECT_EQ(render("%%|%5%", kKernel, {}), "%|");
	// Flags repeated, sizes doubled up.
	EXPECT_EQ(render("[%--+ +0#5d][%hld]", kPanic, { 3, 4 }), "[+3   ][%ld]");
}

TEST(PrintkFormat, CharactersTheOutputKeeps)
{
	// A %c of 0: left out (kernel rules, not printable), a '?' in a
	// printable message. Padded to what prints.
	Source z;
	z.ints = { 0, 'q', 0 };
	EXPECT_EQ(render("a%cb%c[%3c]", kKernel, z), "abq[   ]");
	EXPECT_EQ(render("a%cb", kPanic, { 0 }), "a?b");
	// Printable only: line breaks and tabs are spaces, other bytes '?';
	// otherwise bytes go through.
	Source p, k;
	p.strings = k.strings = { "a\tb\nc\r\x01\x7f\xff" };
	EXPECT_EQ(render("%s|\n", kPanic, p), "a b c ???| ");
	EXPECT_EQ(render("%s", kKernel, k), "a\tb\nc\r\x01\x7f\xff");
	// Strings are taken by their length, NUL-terminated or not.
	Source t;
	t.strings = { std::string("ab\0cd", 5) };
	EXPECT_EQ(render("%s", kKernel, t), "abcd");
	// panic's '0' pads strings too; %c is never padded there.
	Source q;
	q.ints = { 'x' };
	q.strings = { "ab" };
	EXPECT_EQ(render("[%05s][%5c]", kPanic, q), "[000ab][x]");
}

TEST(PrintkFormat, OutputIsCutAndAlwaysTerminated)
{
	printk_result r;
	Source s;
	s.strings = { "0123456789" };
	EXPECT_EQ(render("%s and more", kKernel, s, &r, 8), "0123456");
	EXPECT_TRUE(r.cut);
	EXPECT_EQ(r.len, 7u);
	// Padding is cut too, and nothing more is rendered once it is full.
	Source w;
	w.ints = { 1, 2 };
	EXPECT_EQ(render("%200d%d", kKernel, w, &r, 10), std::string(9, ' '));
	EXPECT_TRUE(r.cut);
	EXPECT_EQ(w.ints.size(), 1u);
	// Room for the NUL alone; no room at all (render() checks nothing
	// was written).
	Source one;
	one.ints = { 5 };
	EXPECT_EQ(render("%d", kPanic, one, &r, 1), "");
	EXPECT_TRUE(r.cut);
	Source none;
	render("abc", kKernel, none, &r, 0);
	EXPECT_EQ(r.len, 0u);
	// A symbol callback that fills its buffer without a NUL.
	auto greedy = [](void *, uint64_t, bool, char *buf, size_t size) -> bool {
		memset(buf, 'n', size);
		return true;
	};
	Source g;
	g.pointers = { { 0x1000, nullptr } };
	printk_args a = { &g, 8, next_int, next_string, next_pointer, greedy };
	char out[600];
	printk_format("%ps|", &kKernel, &a, out, sizeof(out), &r);
	EXPECT_EQ(std::string(out), std::string(255, 'n') + "|");
}
