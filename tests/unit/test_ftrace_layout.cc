// SPDX-License-Identifier: MIT
// The ring buffer's layout from BTF (vmm/ftrace/layout.c): from the
// committed fixture, from the real Debian kernel when it is cached (whose
// offsets the fixture must equal), and the one-line errors for what a
// kernel can lack.
#include <gtest/gtest.h>

#include <bpf/btf.h>
#include <elf.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/unit/ftrace_ring_sim.h"
#include "vmm/util/error.h"
#include "vmm/ftrace/layout.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"

namespace {

std::string debian_vmlinux() { return debian_kernel_dir() + "/vmlinux"; }

// The offsets docs/../notes record for Debian's 6.1.0-56 (6.1.192) cloud
// kernel, checked against whichever layout is given.
void expect_debian_61_offsets(const ftrace_layout &L)
{
	EXPECT_EQ(L.trace_array.buffer.offset, 32u); // array_buffer @24 + buffer @8
	EXPECT_EQ(L.trace_buffer.cpus.offset, 4u);
	EXPECT_EQ(L.trace_buffer.buffers.offset, 64u);
	EXPECT_EQ(L.cpu_buffer.size, 480u);
	EXPECT_EQ(L.cpu_buffer.nr_pages.offset, 40u);
	EXPECT_EQ(L.cpu_buffer.pages.offset, 56u);
	EXPECT_EQ(L.cpu_buffer.head_page.offset, 64u);
	EXPECT_EQ(L.cpu_buffer.tail_page.offset, 72u);
	EXPECT_EQ(L.cpu_buffer.commit_page.offset, 80u);
	EXPECT_EQ(L.cpu_buffer.reader_page.offset, 88u);
	EXPECT_EQ(L.buffer_page.size, 56u);
	EXPECT_EQ(L.buffer_page.real_end.offset, 40u);
	EXPECT_EQ(L.buffer_page.page.offset, 48u);
	EXPECT_EQ(L.data_page.time_stamp.offset, 0u);
	EXPECT_EQ(L.data_page.commit.offset, 8u);
	EXPECT_EQ(L.data_page.commit.size, 8u);
	EXPECT_EQ(L.data_page.data.offset, 16u);
	EXPECT_EQ(L.entry.size, 8u);
	EXPECT_EQ(L.fn.ip.offset, 8u);
	EXPECT_EQ(L.fn.parent_ip.offset, 16u);
	EXPECT_EQ(L.graph_ent.depth.offset, 16u); // ftrace_graph_ent is __packed
	EXPECT_EQ(L.graph_ret.rettime.offset, 32u);
	EXPECT_EQ(L.bprint.buf.offset, 24u);
	EXPECT_EQ(L.type.fn, 1);
	EXPECT_EQ(L.type.print, 5);
	EXPECT_EQ(L.type.bprint, 6);
	EXPECT_EQ(L.type.graph_ret, 10);
	EXPECT_EQ(L.type.graph_ent, 11);
	EXPECT_EQ(L.type.bputs, 14);
}

// The fixture's bytes with one string of its string table renamed.
std::vector<uint8_t> fixture_renaming(const std::string &from, const std::string &to)
{
	std::vector<uint8_t> b = read_file_bytes(ftrace_fixture_path());
	std::string needle = from + std::string(1, '\0');
	auto it = std::search(b.begin(), b.end(), needle.begin(), needle.end());
	EXPECT_NE(it, b.end()) << from;
	if (it != b.end())
		std::copy(to.begin(), to.end(), it);
	return b;
}

} // namespace

TEST(FtraceLayout, FixtureHasDebianOffsets)
{
	expect_debian_61_offsets(fixture_layout());
}

TEST(FtraceLayout, FixtureIsSmall)
{
	// The point of the fixture: a few hundred bytes instead of 4 MB.
	EXPECT_LT(read_file_bytes(ftrace_fixture_path()).size(), 4096u);
}

TEST(FtraceLayout, MissingStructNamed)
{
	struct btf *b = btf__new_empty();
	int u64 = btf__add_int(b, "u64", 8, 0);
	ASSERT_GT(btf__add_struct(b, "trace_array", 64), 0);
	ASSERT_EQ(btf__add_field(b, "unrelated", u64, 0, 0), 0);
	uint32_t size;
	const void *raw = btf__raw_data(b, &size);
	ftrace_layout L;
	EXPECT_EQ(ftrace_layout_from_btf(&L, raw, size), -1);
	EXPECT_STREQ(et_last_error(), "BTF: struct trace_array has no member array_buffer.buffer");

	struct btf *e = btf__new_empty();
	btf__add_int(e, "u64", 8, 0);
	raw = btf__raw_data(e, &size);
	EXPECT_EQ(ftrace_layout_from_btf(&L, raw, size), -1);
	EXPECT_STREQ(et_last_error(), "BTF: no struct trace_array");
	btf__free(b);
	btf__free(e);
}

TEST(FtraceLayout, MissingMemberNamed)
{
	std::vector<uint8_t> b = fixture_renaming("reader_page", "reader_pagX");
	ftrace_layout L;
	EXPECT_EQ(ftrace_layout_from_btf(&L, b.data(), b.size()), -1);
	EXPECT_STREQ(et_last_error(), "BTF: struct ring_buffer_per_cpu has no member reader_page");
}

TEST(FtraceLayout, MissingEnumValueNamed)
{
	std::vector<uint8_t> b = fixture_renaming("TRACE_BPRINT", "TRACE_BPRINX");
	ftrace_layout L;
	EXPECT_EQ(ftrace_layout_from_btf(&L, b.data(), b.size()), -1);
	EXPECT_STREQ(et_last_error(), "BTF: enum trace_type has no TRACE_BPRINT");
}

TEST(FtraceLayout, GarbageRefused)
{
	std::vector<uint8_t> junk(512, 0x5a);
	ftrace_layout L;
	EXPECT_EQ(ftrace_layout_from_btf(&L, junk.data(), junk.size()), -1);
	EXPECT_NE(std::string(et_last_error()).find("BTF: cannot parse 512 bytes"), std::string::npos)
		<< et_last_error();
	std::vector<uint8_t> b = read_file_bytes(ftrace_fixture_path());
	for (size_t cut : { size_t(0), size_t(8), b.size() / 2, b.size() - 1 })
		EXPECT_EQ(ftrace_layout_from_btf(&L, b.data(), cut), -1) << cut;
}

TEST(FtraceLayout, PointerWhereIntegerExpectedRefused)
{
	// A member of the wrong kind (here: a 16-byte array for `cpus`) is
	// named, not read as something else.
	struct btf *b = btf__new_empty();
	int u8 = btf__add_int(b, "u8", 1, 0), u32 = btf__add_int(b, "u32", 4, 0);
	int ptr = btf__add_ptr(b, 0);
	int arr = btf__add_array(b, u32, u8, 16);
	int ab = btf__add_struct(b, "array_buffer", 16);
	btf__add_field(b, "buffer", ptr, 64, 0);
	btf__add_struct(b, "trace_array", 64);
	btf__add_field(b, "array_buffer", ab, 192, 0);
	btf__add_struct(b, "trace_buffer", 192);
	btf__add_field(b, "cpus", arr, 32, 0);
	uint32_t size;
	const void *raw = btf__raw_data(b, &size);
	ftrace_layout L;
	EXPECT_EQ(ftrace_layout_from_btf(&L, raw, size), -1);
	EXPECT_STREQ(et_last_error(), "BTF: trace_buffer.cpus is 16 bytes, not an integer");
	btf__free(b);
}

TEST(FtraceLayout, MemberInsideAnonymousUnion)
{
	// struct outer { long a; union { struct { int pad; int x; }; long y; }; }
	struct btf *b = btf__new_empty();
	int i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED), i64 = btf__add_int(b, "long", 8, 0);
	int inner = btf__add_struct(b, nullptr, 8);
	btf__add_field(b, "pad", i32, 0, 0);
	btf__add_field(b, "x", i32, 32, 0);
	int un = btf__add_union(b, nullptr, 8);
	btf__add_field(b, nullptr, inner, 0, 0);
	btf__add_field(b, "y", i64, 0, 0);
	int outer = btf__add_struct(b, "outer", 16);
	btf__add_field(b, "a", i64, 0, 0);
	btf__add_field(b, nullptr, un, 64, 0);

	ftrace_btf_hop hops[FTRACE_BTF_MAX_HOPS];
	int n = ftrace_btf_member_path(b, outer, "x", hops, FTRACE_BTF_MAX_HOPS);
	ASSERT_EQ(n, 3) << et_last_error();
	EXPECT_EQ(hops[0].bit_offset + hops[1].bit_offset + hops[2].bit_offset, 96u);
	EXPECT_STREQ(hops[2].name, "x");
	EXPECT_EQ(ftrace_btf_member_path(b, outer, "z", hops, FTRACE_BTF_MAX_HOPS), -1);
	EXPECT_STREQ(et_last_error(), "BTF: struct outer has no member z");
	btf__free(b);
}

TEST(FtraceLayout, ImageWithoutBtfRefused)
{
	std::string elf = std::string(ET_TEST_IMAGES) + "/x86_64.elf";
	if (!file_exists(elf))
		GTEST_SKIP() << "no " << elf;
	kernel_image img;
	ASSERT_EQ(kernel_image_open(&img, elf.c_str()), 0) << et_last_error();
	ftrace_layout L;
	EXPECT_EQ(ftrace_layout_from_image(&L, &img), -1);
	EXPECT_NE(std::string(et_last_error()).find("has no .BTF section"), std::string::npos)
		<< et_last_error();
	const uint8_t *bytes;
	size_t size;
	EXPECT_EQ(kernel_image_section_bytes(&img, ".text", &bytes, &size), 0) << et_last_error();
	EXPECT_GT(size, 0u);
	kernel_image_close(&img);
}

// ---- the real kernel -----------------------------------------------------

TEST(FtraceLayoutDebian, RealImageMatchesNotesAndFixture)
{
	if (!file_exists(debian_vmlinux()))
		GTEST_SKIP() << "no " << debian_vmlinux() << " (run images/fetch-debian-kernel.sh)";
	kernel_image img;
	ASSERT_EQ(kernel_image_open(&img, debian_vmlinux().c_str()), 0) << et_last_error();
	ftrace_layout real;
	ASSERT_EQ(ftrace_layout_from_image(&real, &img), 0) << et_last_error();
	kernel_image_close(&img);

	EXPECT_GT(real.btf_types, 90000u); // the whole kernel's BTF, not a fixture
	expect_debian_61_offsets(real);
	// Every offset, size and type id the fixture gives equals the image's:
	// the unit tests' rings have the real kernel's layout.
	ftrace_layout fix = fixture_layout();
	real.btf_types = fix.btf_types = 0;
	EXPECT_EQ(memcmp(&real, &fix, sizeof(real)), 0)
		<< "tests/fixtures/ftrace-*.btf is stale: rerun tests/fixtures/make-ftrace-btf.sh";
}

// The reader needs global_trace's address; it is a static variable, in
// kallsyms only because Debian builds with CONFIG_KALLSYMS_ALL. The
// symbols earlytrace recovers from the image have it (before
// symbols_keep_functions() trims the table to functions).
TEST(FtraceLayoutDebian, GlobalTraceInRecoveredSymbols)
{
	if (!file_exists(debian_vmlinux()))
		GTEST_SKIP() << "no " << debian_vmlinux() << " (run images/fetch-debian-kernel.sh)";
	kernel_image img;
	symbols syms;
	ASSERT_EQ(kernel_image_open(&img, debian_vmlinux().c_str()), 0) << et_last_error();
	ASSERT_EQ(symbols_load(&syms, &img, nullptr), 0) << et_last_error();
	uint64_t addr = 0;
	ASSERT_EQ(symbols_addr(&syms, "global_trace", &addr), 0);
	uint32_t flags = 0;
	EXPECT_NE(kernel_image_vaddr_bytes(&img, addr, 7752, nullptr, &flags), nullptr)
		<< std::hex << addr;
	EXPECT_TRUE(flags & PF_W) << "global_trace lies in a writable segment";
	EXPECT_FALSE(flags & PF_X);

	ASSERT_EQ(symbols_keep_functions(&syms), 0);
	EXPECT_NE(symbols_addr(&syms, "global_trace", &addr), 0)
		<< "trimmed to functions: look global_trace up before the trim";
	symbols_free(&syms);
	kernel_image_close(&img);
}
