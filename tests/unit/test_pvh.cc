// SPDX-License-Identifier: MIT
// The PVH start_info block, memory map, module list and command line as a
// guest reads them from memory.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/shim/earlytrace_shim.h"

namespace {

class Pvh : public ::testing::Test {
protected:
	void TearDown() override { guest_mem_free(&mem); }
	struct hvm_start_info start_info()
	{
		struct hvm_start_info si;
		EXPECT_EQ(guest_mem_read(&mem, LAYOUT_PVH_START_INFO, &si, sizeof(si)), 0);
		return si;
	}
	struct guest_mem mem = {};
};

} // namespace

TEST_F(Pvh, StartInfoWithCmdlineAndInitrd)
{
	ASSERT_EQ(guest_mem_init(&mem, 64 << 20), 0);
	struct pvh_boot_info info = { "console=ttyS0 exit=3", 0x3f00000, 0x1234, 0xe0000 };
	ASSERT_EQ(pvh_write_start_info(&mem, &info), 0);

	struct hvm_start_info si = start_info();
	EXPECT_EQ(si.magic, 0x336ec578u);
	EXPECT_EQ(si.version, 1u);
	EXPECT_EQ(si.flags, 0u);
	EXPECT_EQ(si.nr_modules, 1u);
	EXPECT_EQ(si.modlist_paddr, (uint64_t)LAYOUT_PVH_MODLIST);
	EXPECT_EQ(si.cmdline_paddr, (uint64_t)LAYOUT_CMDLINE);
	EXPECT_EQ(si.rsdp_paddr, 0xe0000u); // the ACPI tables
	EXPECT_EQ(si.memmap_paddr, (uint64_t)LAYOUT_PVH_MEMMAP);
	EXPECT_EQ(si.memmap_entries, 3u);
	EXPECT_EQ(si.reserved, 0u);

	// Byte layout as the ABI fixes it: magic at 0, cmdline_paddr at 24.
	const uint8_t *raw = static_cast<const uint8_t *>(guest_mem_ptr(&mem, LAYOUT_PVH_START_INFO, 56));
	ASSERT_NE(raw, nullptr);
	EXPECT_EQ(raw[0], 0x78);
	EXPECT_EQ(raw[3], 0x33);
	uint64_t cmdline_field;
	memcpy(&cmdline_field, raw + 24, 8);
	EXPECT_EQ(cmdline_field, (uint64_t)LAYOUT_CMDLINE);

	const char *cmdline = static_cast<const char *>(guest_mem_ptr(&mem, LAYOUT_CMDLINE, 21));
	EXPECT_STREQ(cmdline, "console=ttyS0 exit=3");

	struct hvm_modlist_entry mod;
	ASSERT_EQ(guest_mem_read(&mem, LAYOUT_PVH_MODLIST, &mod, sizeof(mod)), 0);
	EXPECT_EQ(mod.paddr, 0x3f00000u);
	EXPECT_EQ(mod.size, 0x1234u);
	EXPECT_EQ(mod.cmdline_paddr, 0u);

	struct hvm_memmap_table_entry map[3];
	ASSERT_EQ(guest_mem_read(&mem, LAYOUT_PVH_MEMMAP, map, sizeof(map)), 0);
	EXPECT_EQ(map[0].addr, 0u);
	EXPECT_EQ(map[0].size, (uint64_t)LAYOUT_EBDA_START);
	EXPECT_EQ(map[0].type, E820_TYPE_RAM);
	EXPECT_EQ(map[1].addr, (uint64_t)LAYOUT_EBDA_START);
	EXPECT_EQ(map[1].addr + map[1].size, 0x100000u);
	EXPECT_EQ(map[1].type, E820_TYPE_RESERVED);
	EXPECT_EQ(map[2].addr, 0x100000u);
	EXPECT_EQ(map[2].addr + map[2].size, 64u << 20);
	EXPECT_EQ(map[2].type, E820_TYPE_RAM);
}

TEST_F(Pvh, NoInitrdNoCmdline)
{
	ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0);
	struct pvh_boot_info info = {};
	ASSERT_EQ(pvh_write_start_info(&mem, &info), 0);
	struct hvm_start_info si = start_info();
	EXPECT_EQ(si.nr_modules, 0u);
	EXPECT_EQ(si.modlist_paddr, 0u);
	const char *cmdline = static_cast<const char *>(guest_mem_ptr(&mem, LAYOUT_CMDLINE, 1));
	EXPECT_EQ(cmdline[0], '\0');
}

TEST_F(Pvh, RamAboveTheHoleIsMappedAtFourGiB)
{
	ASSERT_EQ(guest_mem_init(&mem, 4ull << 30), 0);
	struct memmap_entry map[8];
	unsigned n = memmap_build(&mem, map, 8);
	ASSERT_EQ(n, 4u);
	EXPECT_EQ(map[2].addr + map[2].size, LAYOUT_MMIO_HOLE_START);
	EXPECT_EQ(map[3].addr, LAYOUT_MMIO_HOLE_END);
	EXPECT_EQ(map[3].size, (4ull << 30) - LAYOUT_MMIO_HOLE_START);
	EXPECT_EQ(guest_mem_ptr(&mem, LAYOUT_MMIO_HOLE_START, 1), nullptr);
	EXPECT_NE(guest_mem_ptr(&mem, LAYOUT_MMIO_HOLE_END, 1), nullptr);
}

TEST_F(Pvh, RefusesOverlongCmdline)
{
	ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0);
	std::string huge(LAYOUT_CMDLINE_MAX, 'x');
	struct pvh_boot_info info = { huge.c_str(), 0, 0, 0 };
	EXPECT_EQ(pvh_write_start_info(&mem, &info), -1);
	EXPECT_NE(strstr(et_last_error(), "command line"), nullptr) << et_last_error();
}

TEST(GuestMem, ChecksEveryRange)
{
	struct guest_mem mem;
	ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0);
	EXPECT_NE(guest_mem_ptr(&mem, 0, 16 << 20), nullptr);
	EXPECT_NE(guest_mem_ptr(&mem, (16 << 20) - 1, 1), nullptr);
	EXPECT_NE(guest_mem_ptr(&mem, 16 << 20, 0), nullptr);
	EXPECT_EQ(guest_mem_ptr(&mem, 16 << 20, 1), nullptr);
	EXPECT_EQ(guest_mem_ptr(&mem, (16 << 20) - 1, 2), nullptr);
	// Hostile values that would wrap a naive gpa + len.
	EXPECT_EQ(guest_mem_ptr(&mem, 0x1000, ~0ull), nullptr);
	EXPECT_EQ(guest_mem_ptr(&mem, ~0ull, 2), nullptr);
	uint8_t b = 0;
	EXPECT_EQ(guest_mem_write(&mem, ~0ull - 1, &b, 4), -1);
	guest_mem_free(&mem);

	EXPECT_EQ(guest_mem_init(&mem, 1 << 20), -1);
	EXPECT_NE(strstr(et_last_error(), "too small"), nullptr) << et_last_error();
	EXPECT_EQ(guest_mem_init(&mem, (16 << 20) + 1), -1);
}
