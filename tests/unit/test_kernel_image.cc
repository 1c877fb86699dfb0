// SPDX-License-Identifier: MIT
// ELF/PVH parsing and loading, on the real test kernels and on corrupted
// copies of them.
#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

std::string image_path(const char *arch)
{
	return std::string(ET_TEST_IMAGES) + "/" + arch + ".elf";
}

class KernelImage : public ::testing::Test {
protected:
	void TearDown() override { kernel_image_close(&img); }
	int parse(const std::vector<uint8_t> &bytes)
	{
		kernel_image_close(&img);
		return kernel_image_parse(&img, bytes.data(), bytes.size(), "test.elf");
	}
	std::string parse_error(const std::vector<uint8_t> &bytes)
	{
		EXPECT_EQ(parse(bytes), -1);
		return et_last_error();
	}
	struct kernel_image img = {};
};

Elf64_Phdr *phdr64(std::vector<uint8_t> &b, unsigned i)
{
	auto *eh = reinterpret_cast<Elf64_Ehdr *>(b.data());
	return reinterpret_cast<Elf64_Phdr *>(b.data() + eh->e_phoff + i * eh->e_phentsize);
}

unsigned phnum64(std::vector<uint8_t> &b)
{
	return reinterpret_cast<Elf64_Ehdr *>(b.data())->e_phnum;
}

} // namespace

TEST_F(KernelImage, ParsesX86_64Kernel)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	ASSERT_FALSE(bytes.empty());
	ASSERT_EQ(parse(bytes), 0) << et_last_error();
	EXPECT_EQ(img.elf_class, 64u);
	EXPECT_EQ(img.machine, EM_X86_64);
	ASSERT_TRUE(img.has_pvh);
	EXPECT_GE(img.pvh_entry, 0x100000u);
	EXPECT_TRUE(kernel_image_phys_in_segment(&img, img.pvh_entry));
	ASSERT_GE(img.nr_segments, 1u);
	// Linked high, loaded low, like Linux.
	EXPECT_EQ(img.segments[0].paddr, 0x100000u);
	EXPECT_EQ(img.segments[0].vaddr - img.segments[0].paddr, 0xffffffff80000000ull);
	EXPECT_EQ(img.phys_start, 0x100000u);
	EXPECT_GT(img.phys_end, img.phys_start);
}

// Sections by name: __mcount_loc where its bracketing symbols say, the
// first of a name, nothing for a name no section has.
TEST_F(KernelImage, FindsSectionsByName)
{
	ASSERT_EQ(parse(read_file_bytes(image_path("x86_64"))), 0) << et_last_error();
	symtab tab{};
	ASSERT_EQ(symtab_from_elf(&tab, &img), 0) << et_last_error();
	const symbol *start = symtab_find(&tab, "__start_mcount_loc");
	const symbol *stop = symtab_find(&tab, "__stop_mcount_loc");
	ASSERT_NE(start, nullptr);
	ASSERT_NE(stop, nullptr);

	kernel_section s{};
	ASSERT_TRUE(kernel_image_section(&img, "__mcount_loc", &s));
	EXPECT_EQ(s.type, (uint32_t)SHT_PROGBITS);
	EXPECT_EQ(s.addr, start->addr);
	EXPECT_EQ(s.addr + s.size, stop->addr);
	ASSERT_LE(s.offset + s.size, img.size);
	// Its bytes in the file are the sites: addresses in the kernel's text.
	uint64_t first;
	memcpy(&first, img.data + s.offset, sizeof(first));
	EXPECT_NE(symtab_lookup(&tab, first, nullptr), nullptr) << std::hex << first;

	ASSERT_TRUE(kernel_image_section(&img, ".bss", &s));
	EXPECT_EQ(s.type, (uint32_t)SHT_NOBITS);
	EXPECT_FALSE(kernel_image_section(&img, "no_such_section", &s));
	EXPECT_FALSE(kernel_image_section(&img, "__mcount", &s)) << "a prefix is not a name";
	symtab_free(&tab);
}

TEST_F(KernelImage, ParsesI386Kernel)
{
	auto bytes = read_file_bytes(image_path("i386"));
	ASSERT_EQ(parse(bytes), 0) << et_last_error();
	EXPECT_EQ(img.elf_class, 32u);
	EXPECT_EQ(img.machine, EM_386);
	EXPECT_TRUE(img.has_pvh);
	EXPECT_EQ(img.segments[0].vaddr, img.segments[0].paddr);
}

TEST_F(KernelImage, LoadsSegmentsAndZeroesBss)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	ASSERT_EQ(parse(bytes), 0);
	struct guest_mem mem;
	ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0);
	memset(mem.host, 0xcc, mem.size);
	ASSERT_EQ(kernel_image_load(&img, &mem), 0) << et_last_error();
	for (unsigned i = 0; i < img.nr_segments; i++) {
		const struct kernel_segment *s = &img.segments[i];
		const uint8_t *p = static_cast<const uint8_t *>(guest_mem_ptr(&mem, s->paddr, s->memsz));
		ASSERT_NE(p, nullptr);
		EXPECT_EQ(memcmp(p, bytes.data() + s->offset, s->filesz), 0);
		for (uint64_t j = s->filesz; j < s->memsz; j++)
			ASSERT_EQ(p[j], 0) << "bss byte " << j << " of segment " << i;
	}
	guest_mem_free(&mem);
}

TEST_F(KernelImage, SegmentOutsideRamIsRefusedAtLoad)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	ASSERT_EQ(parse(bytes), 0);
	struct guest_mem mem;
	ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0);
	img.segments[img.nr_segments - 1].paddr = 16 << 20; // just past the end
	EXPECT_EQ(kernel_image_load(&img, &mem), -1);
	EXPECT_NE(std::string(et_last_error()).find("outside guest RAM"), std::string::npos)
		<< et_last_error();
	img.segments[0].paddr = 0x9f000; // below 1 MiB, over the boot structures
	EXPECT_EQ(kernel_image_load(&img, &mem), -1);
	EXPECT_NE(std::string(et_last_error()).find("below 1 MiB"), std::string::npos)
		<< et_last_error();
	guest_mem_free(&mem);
}

TEST_F(KernelImage, RefusesNonElf)
{
	std::vector<uint8_t> text(100, 'a');
	EXPECT_NE(parse_error(text).find("not an ELF file"), std::string::npos);
	EXPECT_NE(parse_error({}).find("not an ELF file"), std::string::npos);
}

TEST_F(KernelImage, RefusesEveryTruncation)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	ASSERT_EQ(parse(bytes), 0);
	uint64_t end_of_load = 0;
	for (unsigned i = 0; i < img.nr_segments; i++)
		end_of_load = std::max(end_of_load, img.segments[i].offset + img.segments[i].filesz);
	// Cut at every interesting length: inside the header, the program
	// headers and each segment. Each must fail cleanly, never crash.
	for (size_t len : { (size_t)4, (size_t)20, sizeof(Elf64_Ehdr) - 1, sizeof(Elf64_Ehdr) + 8,
			    (size_t)(end_of_load / 2), (size_t)end_of_load - 1 }) {
		std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + len);
		EXPECT_EQ(parse(cut), -1) << "length " << len;
		EXPECT_NE(std::string(et_last_error()).find("test.elf: "), std::string::npos);
	}
	std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + end_of_load - 1);
	EXPECT_NE(parse_error(cut).find("truncated"), std::string::npos) << et_last_error();
}

TEST_F(KernelImage, RefusesWrongMachineAndType)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	auto *eh = reinterpret_cast<Elf64_Ehdr *>(bytes.data());
	eh->e_machine = EM_AARCH64;
	EXPECT_NE(parse_error(bytes).find("not x86"), std::string::npos) << et_last_error();
	eh->e_machine = EM_X86_64;
	eh->e_type = ET_REL;
	EXPECT_NE(parse_error(bytes).find("not an executable"), std::string::npos);
	eh->e_type = ET_EXEC;
	bytes[EI_DATA] = ELFDATA2MSB;
	EXPECT_NE(parse_error(bytes).find("little-endian"), std::string::npos);
}

TEST_F(KernelImage, RefusesOverlappingSegments)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	std::vector<unsigned> loads;
	for (unsigned i = 0; i < phnum64(bytes); i++)
		if (phdr64(bytes, i)->p_type == PT_LOAD)
			loads.push_back(i);
	ASSERT_GE(loads.size(), 1u);
	// Duplicate the first load segment's placement into another header.
	unsigned victim = 0;
	while (victim < phnum64(bytes) && phdr64(bytes, victim)->p_type == PT_LOAD)
		victim++;
	ASSERT_LT(victim, phnum64(bytes));
	*phdr64(bytes, victim) = *phdr64(bytes, loads[0]);
	EXPECT_NE(parse_error(bytes).find("overlap"), std::string::npos) << et_last_error();
}

TEST_F(KernelImage, SegmentBiggerOnDiskThanInMemory)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	for (unsigned i = 0; i < phnum64(bytes); i++) {
		Elf64_Phdr *ph = phdr64(bytes, i);
		if (ph->p_type == PT_LOAD) {
			ph->p_memsz = ph->p_filesz - 1;
			break;
		}
	}
	EXPECT_NE(parse_error(bytes).find("more file bytes"), std::string::npos) << et_last_error();
}

TEST_F(KernelImage, MissingPvhNoteIsNotedNotFatal)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	// Rename the note type so no PHYS32_ENTRY note remains.
	for (unsigned i = 0; i < phnum64(bytes); i++) {
		Elf64_Phdr *ph = phdr64(bytes, i);
		if (ph->p_type != PT_NOTE)
			continue;
		for (uint64_t off = ph->p_offset; off + 12 <= ph->p_offset + ph->p_filesz; off += 4) {
			uint32_t w[3];
			memcpy(w, &bytes[off], 12);
			if (w[0] == 4 && w[2] == 18 && !memcmp(&bytes[off + 12], "Xen", 4))
				bytes[off + 8] = 17;
		}
	}
	ASSERT_EQ(parse(bytes), 0) << et_last_error();
	EXPECT_FALSE(img.has_pvh);
}

TEST_F(KernelImage, PvhEntryOutsideSegmentsIsRefused)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	ASSERT_EQ(parse(bytes), 0);
	uint32_t entry = img.pvh_entry, bogus = 0x7000000;
	bool patched = false;
	for (size_t off = 0; off + 4 <= bytes.size(); off++) {
		// The note's descriptor follows "Xen\0".
		if (!memcmp(&bytes[off], "Xen", 4) && off + 8 <= bytes.size() &&
		    !memcmp(&bytes[off + 4], &entry, 4)) {
			memcpy(&bytes[off + 4], &bogus, 4);
			patched = true;
		}
	}
	ASSERT_TRUE(patched);
	EXPECT_NE(parse_error(bytes).find("PVH entry 0x7000000"), std::string::npos) << et_last_error();
}

TEST_F(KernelImage, SymbolsFromSymtab)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	ASSERT_EQ(parse(bytes), 0);
	struct symtab tab;
	ASSERT_EQ(symtab_from_elf(&tab, &img), 0);
	ASSERT_GT(tab.nr, 5u);
	// Sorted, and every function symbol finds itself.
	for (size_t i = 1; i < tab.nr; i++)
		ASSERT_LE(tab.syms[i - 1].addr, tab.syms[i].addr);
	bool saw_leaf = false;
	for (size_t i = 0; i < tab.nr; i++) {
		uint64_t off;
		const struct symbol *s = symtab_lookup(&tab, tab.syms[i].addr, &off);
		ASSERT_NE(s, nullptr);
		EXPECT_EQ(off, 0u);
		EXPECT_EQ(s->addr, tab.syms[i].addr);
		if (!strcmp(tab.syms[i].name, "ct_leaf")) {
			saw_leaf = true;
			char buf[64];
			EXPECT_STREQ(symtab_format(&tab, tab.syms[i].addr + 3, buf, sizeof(buf)), "ct_leaf+0x3");
		}
	}
	EXPECT_TRUE(saw_leaf);
	EXPECT_EQ(symtab_lookup(&tab, 0x1000, nullptr), nullptr);
	symtab_free(&tab);
}
