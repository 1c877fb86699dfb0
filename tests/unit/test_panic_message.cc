// SPDX-License-Identifier: MIT
// A panic's message as the VMM renders it from the format and argument
// words it read at panic()'s entry: printk's conversions, in 64-bit and
// 32-bit argument layouts, with a made-up guest memory for %s.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "vmm/machine/panic_message.h"

namespace {

// Strings at made-up guest addresses; anything else is unmapped.
std::map<uint64_t, std::string> guest_strings;

int read_guest(void *, uint64_t va, void *buf, size_t len)
{
	for (const auto &[addr, text] : guest_strings) {
		// A string's NUL is readable; the byte after it is not.
		if (va >= addr && va + len <= addr + text.size() + 1) {
			memcpy(buf, text.c_str() + (va - addr), len);
			return 0;
		}
	}
	return -1;
}

const char *symbolize(void *, uint64_t addr, char *buf, size_t len)
{
	if (addr < 0x1000 || addr >= 0x2000)
		return nullptr;
	snprintf(buf, len, "mount_root+0x%llx", (unsigned long long)(addr - 0x1000));
	return buf;
}

std::string render(const char *fmt, std::vector<uint64_t> words, unsigned word_bytes = 8,
		   size_t len = PANIC_MESSAGE_MAX)
{
	std::vector<char> out(len + 1, 'Z');
	struct panic_args a = { words.data(), (unsigned)words.size(), word_bytes,
				read_guest, nullptr, symbolize, nullptr };
	panic_message_format(fmt, &a, out.data(), len);
	return out.data();
}

} // namespace

TEST(PanicMessage, LinuxMessagesRenderAsPrintkWould)
{
	guest_strings = { { 0x9000, "unknown-block(0,0)" } };
	EXPECT_EQ(render("VFS: Unable to mount root fs on %s", { 0x9000 }),
		  "VFS: Unable to mount root fs on unknown-block(0,0)");
	// The trailing newline many panic formats have goes.
	EXPECT_EQ(render("System is deadlocked on memory\n", {}), "System is deadlocked on memory");
	EXPECT_EQ(render("Attempted to kill init! exitcode=0x%08x\n", { 0x9 }),
		  "Attempted to kill init! exitcode=0x00000009");
	EXPECT_EQ(render("code %d, %i, %u, %ld, %lld, %zu", { 0xfffffff9, 0x7fffffff, 0xffffffff,
							     (uint64_t)-3, (uint64_t)-4, 12 }),
		  "code -7, 2147483647, 4294967295, -3, -4, 12");
	EXPECT_EQ(render("%hhx %hx %lx %X %o %c%c %%", { 0x1ff, 0x1ffff, 0xdeadbeefcafe, 0xab, 8, 'o',
							  'k' }),
		  "ff ffff deadbeefcafe AB 10 ok %");
	EXPECT_EQ(render("[%5d|%-5d|%05d|%+d|%#x|%.3s|%*d]", { 42, 42, 42, 42, 255, 0x9000, 4, 7 }),
		  "[   42|42   |00042|+42|0xff|unk|   7]");
	EXPECT_EQ(render("in %pS at %p, %px", { 0x1234, 0xffffffff81000000, 0x10 }),
		  "in mount_root+0x234 at 0xffffffff81000000, 0x10");
	// printk's level prefix is not part of the message.
	EXPECT_EQ(render("\0013oops", {}), "oops");
}

TEST(PanicMessage, ThirtyTwoBitCodePassesLongLongInTwoWords)
{
	guest_strings = { { 0x9000, "init" } };
	EXPECT_EQ(render("%s %d %lld %ld %pS", { 0x9000, 0xfffffffe, 0x00000005, 0x00000001,
						  0xffffffff, 0x1010 },
			 4),
		  "init -2 4294967301 -1 mount_root+0x10");
}

TEST(PanicMessage, MissingArgumentsAndUnreadableStringsAreMarked)
{
	guest_strings = { { 0x9000, "ab" } };
	EXPECT_EQ(render("%s/%s/%d/%s", { 0x9000, 0x5000 }), "ab/?/?/?");
	EXPECT_EQ(render("%s", { 0 }), "(null)");
	EXPECT_EQ(render("%y %", {}), "%y") << "an unknown conversion stands as it is";
}

TEST(PanicMessage, TheGuestCannotBreakOutOfTheBuffer)
{
	guest_strings = { { 0x9000, std::string(500, 'x') + "\n\x01\x7f\xff" } };
	std::string s = render("%s", { 0x9000 });
	EXPECT_EQ(s, std::string(PANIC_STRING_ARG_MAX, 'x')) << "each %s is bounded";
	// Control characters and bytes above 0x7e become '?', line breaks spaces.
	guest_strings = { { 0x9000, "a\tb\rc\001d\x7f" } };
	EXPECT_EQ(render("%s|\n", { 0x9000 }), "a b c?d?|");
	// A huge width is capped; the message is cut to the buffer.
	EXPECT_EQ(render("%1000000d", { 1 }).size(), 64u);
	EXPECT_EQ(render("%s%s%s", { 0x9000, 0x9000, 0x9000 }, 8, 8), "a b c?d");
	EXPECT_EQ(render(std::string(1000, 'y').c_str(), {}, 8, 16), std::string(15, 'y'));
}
