// SPDX-License-Identifier: MIT
// The Linux 64-bit boot protocol: zero page, identity page tables, long-mode
// entry state; and the command-line assembly every protocol shares.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/shim/earlytrace_shim.h"

namespace {

template <typename T> T field(const uint8_t *bp, size_t off)
{
	T v;
	memcpy(&v, bp + off, sizeof(v));
	return v;
}

std::string appended(const char *user, const char *params, std::string *added = nullptr)
{
	char *extra = nullptr;
	char *out = cmdline_append_params(user, params, &extra);
	std::string s = out ? out : "(null)";
	if (added)
		*added = extra ? extra : "(null)";
	free(out);
	free(extra);
	return s;
}

class Linux64 : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_EQ(guest_mem_init(&mem, 64 << 20), 0); }
	void TearDown() override { guest_mem_free(&mem); }
	const uint8_t *zero_page() { return static_cast<const uint8_t *>(guest_mem_ptr(&mem, LAYOUT_ZERO_PAGE, 4096)); }
	struct guest_mem mem;
	struct kernel_image img = {};
};

} // namespace

TEST_F(Linux64, SynthesizedZeroPageForAVmlinux)
{
	img.machine = 62; // EM_X86_64
	struct linux64_boot_info info = { "console=ttyS0 root=/dev/ram0", 0x3000000, 0x12345, 0xe0000 };
	ASSERT_EQ(linux64_write_boot_params(&mem, &img, &info), 0) << et_last_error();
	const uint8_t *bp = zero_page();

	EXPECT_EQ(field<uint16_t>(bp, BZ_OFF_BOOT_FLAG), 0xaa55);
	EXPECT_EQ(field<uint32_t>(bp, BZ_OFF_HEADER), 0x53726448u);
	EXPECT_EQ(field<uint16_t>(bp, BZ_OFF_VERSION), BP_SYNTH_VERSION);
	EXPECT_EQ(bp[BP_TYPE_OF_LOADER], 0xff);
	EXPECT_EQ(bp[BZ_OFF_LOADFLAGS] & 0x81, 0x81); // LOADED_HIGH | CAN_USE_HEAP
	EXPECT_EQ(field<uint16_t>(bp, BP_VID_MODE), 0xffff);
	EXPECT_EQ(field<uint32_t>(bp, BP_CMD_LINE_PTR), (uint32_t)LAYOUT_CMDLINE);
	EXPECT_STREQ(static_cast<const char *>(guest_mem_ptr(&mem, LAYOUT_CMDLINE, 1)),
		     "console=ttyS0 root=/dev/ram0");
	EXPECT_EQ(field<uint32_t>(bp, BP_RAMDISK_IMAGE), 0x3000000u);
	EXPECT_EQ(field<uint32_t>(bp, BP_RAMDISK_SIZE), 0x12345u);
	EXPECT_EQ(field<uint32_t>(bp, BP_EXT_RAMDISK_IMAGE), 0u);
	EXPECT_EQ(field<uint64_t>(bp, BP_ACPI_RSDP_ADDR), 0xe0000u); // the ACPI tables

	// The same map PVH guests see, in E820's packed 20-byte entries.
	ASSERT_EQ(bp[BP_E820_ENTRIES], 3);
	EXPECT_EQ(field<uint64_t>(bp, BP_E820_TABLE + 0), 0u);
	EXPECT_EQ(field<uint64_t>(bp, BP_E820_TABLE + 8), (uint64_t)LAYOUT_EBDA_START);
	EXPECT_EQ(field<uint32_t>(bp, BP_E820_TABLE + 16), E820_TYPE_RAM);
	EXPECT_EQ(field<uint32_t>(bp, BP_E820_TABLE + 20 + 16), E820_TYPE_RESERVED);
	EXPECT_EQ(field<uint64_t>(bp, BP_E820_TABLE + 40), 0x100000u);
	EXPECT_EQ(field<uint64_t>(bp, BP_E820_TABLE + 48), (64u << 20) - 0x100000u);
}

TEST_F(Linux64, SetupHeaderFromTheBzImageIsKept)
{
	img.from_bzimage = true;
	img.bzimage.setup_header_len = 0x70;
	img.bzimage.cmdline_size = 16;
	uint8_t *hdr = img.bzimage.setup_header;
	hdr[BZ_OFF_BOOT_FLAG - BP_SETUP_HEADER] = 0x55;
	hdr[BZ_OFF_BOOT_FLAG - BP_SETUP_HEADER + 1] = 0xaa;
	memcpy(hdr + BZ_OFF_HEADER - BP_SETUP_HEADER, "HdrS", 4);
	hdr[BZ_OFF_VERSION - BP_SETUP_HEADER] = 0x0f;
	hdr[BZ_OFF_VERSION - BP_SETUP_HEADER + 1] = 0x02;
	uint32_t initrd_max = 0x037fffff; // 56 MiB
	memcpy(hdr + BZ_OFF_INITRD_ADDR_MAX - BP_SETUP_HEADER, &initrd_max, 4);

	struct linux64_boot_info info = { "quiet", 0, 0, 0 };
	ASSERT_EQ(linux64_write_boot_params(&mem, &img, &info), 0) << et_last_error();
	EXPECT_EQ(field<uint32_t>(zero_page(), BZ_OFF_INITRD_ADDR_MAX), initrd_max);
	EXPECT_EQ(zero_page()[BP_TYPE_OF_LOADER], 0xff); // ours, over the image's

	// The kernel's own limits are enforced.
	struct linux64_boot_info long_line = { "0123456789abcdefXYZ", 0, 0, 0 };
	EXPECT_EQ(linux64_write_boot_params(&mem, &img, &long_line), -1);
	EXPECT_NE(std::string(et_last_error()).find("at most 16"), std::string::npos) << et_last_error();
	struct linux64_boot_info high_initrd = { "", 0x3800000, 0x1000, 0 };
	EXPECT_EQ(linux64_write_boot_params(&mem, &img, &high_initrd), -1);
	EXPECT_NE(std::string(et_last_error()).find("above this kernel's limit"), std::string::npos);
}

TEST_F(Linux64, IdentityPageTablesCoverFourGiB)
{
	uint64_t cr3 = boot_paging_identity_4g(&mem);
	ASSERT_EQ(cr3, (uint64_t)LAYOUT_BOOT_PML4);
	auto entry = [&](uint64_t gpa) {
		uint64_t v;
		EXPECT_EQ(guest_mem_read(&mem, gpa, &v, 8), 0);
		return v;
	};
	EXPECT_EQ(entry(LAYOUT_BOOT_PML4), (uint64_t)LAYOUT_BOOT_PDPT | 3);
	EXPECT_EQ(entry(LAYOUT_BOOT_PML4 + 8), 0u);
	for (unsigned i = 0; i < 4; i++)
		EXPECT_EQ(entry(LAYOUT_BOOT_PDPT + 8 * i), (LAYOUT_BOOT_PD + 0x1000ull * i) | 3);
	EXPECT_EQ(entry(LAYOUT_BOOT_PDPT + 32), 0u);
	// Walk a few addresses by hand: every 2 MiB page maps to itself.
	for (uint64_t va : { 0ull, 0x1000000ull, 0xbfe00000ull, 0xfee00000ull, 0xffe00000ull }) {
		uint64_t pde = entry(LAYOUT_BOOT_PD + 8 * (va >> 21));
		EXPECT_EQ(pde & ~0xfffull, va) << std::hex << va;
		EXPECT_EQ(pde & 0x83, 0x83u);
	}
}

TEST_F(Linux64, LongModeEntryState)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	memset(&sregs, 0, sizeof(sregs));
	ASSERT_EQ(boot_cpu_setup_long64(&mem, 0x1000000, LAYOUT_ZERO_PAGE, LAYOUT_BOOT_PML4, &regs, &sregs), 0);
	EXPECT_EQ(regs.rip, 0x1000000u);
	EXPECT_EQ(regs.rsi, (uint64_t)LAYOUT_ZERO_PAGE);
	EXPECT_EQ(regs.rflags, 2u);
	EXPECT_EQ(sregs.cr3, (uint64_t)LAYOUT_BOOT_PML4);
	EXPECT_TRUE(sregs.cr0 & X86_CR0_PG);
	EXPECT_TRUE(sregs.cr0 & X86_CR0_PE);
	EXPECT_EQ(sregs.cr4, X86_CR4_PAE);
	EXPECT_EQ(sregs.efer, X86_EFER_LME | X86_EFER_LMA);
	// __BOOT_CS and __BOOT_DS as the boot protocol names them.
	EXPECT_EQ(sregs.cs.selector, 0x10);
	EXPECT_EQ(sregs.cs.l, 1);
	EXPECT_EQ(sregs.cs.db, 0);
	EXPECT_EQ(sregs.ds.selector, 0x18);
	EXPECT_EQ(sregs.ss.selector, 0x18);
	EXPECT_EQ(sregs.tr.selector, 0x20);
	uint64_t code;
	ASSERT_EQ(guest_mem_read(&mem, LAYOUT_BOOT_GDT + 0x10, &code, 8), 0);
	EXPECT_EQ(code, 0x00af9b000000ffffull);
}

TEST(Cmdline, AppendsOnlyWhatTheUserDidNotSay)
{
	std::string added;
	EXPECT_EQ(appended("console=ttyS0", "noxsave clearcpuid=308", &added),
		  "console=ttyS0 noxsave clearcpuid=308");
	EXPECT_EQ(added, "noxsave clearcpuid=308");
	// The user's own value wins, and nothing is repeated.
	EXPECT_EQ(appended("clearcpuid=1 noxsave", "noxsave clearcpuid=308", &added),
		  "clearcpuid=1 noxsave");
	EXPECT_EQ(added, "");
	EXPECT_EQ(appended(nullptr, "a b"), "a b");
	EXPECT_EQ(appended("", nullptr), "");
	EXPECT_EQ(appended("  x  ", "y"), "  x   y");
	// A prefix is not the same parameter.
	EXPECT_EQ(appended("noxsaveopt", "noxsave"), "noxsaveopt noxsave");
}

TEST(BootProtocol, ParsesAndChooses)
{
	enum boot_protocol p;
	ASSERT_EQ(boot_protocol_parse("linux64", &p), 0);
	EXPECT_EQ(p, BOOT_LINUX64);
	EXPECT_STREQ(boot_protocol_name(BOOT_PVH), "pvh");
	EXPECT_EQ(boot_protocol_parse("bios", &p), -1);

	struct kernel_segment seg = { 0x100000, 0xffffffff80100000ull, 0, 0x1000, 0x2000, 5 };
	struct kernel_image img = {};
	char name[] = "k";
	img.name = name;
	img.machine = 62;
	img.entry = 0x100000;
	img.nr_segments = 1;
	img.segments = &seg;
	ASSERT_EQ(boot_choose_protocol(&img, BOOT_AUTO, &p), 0);
	EXPECT_EQ(p, BOOT_LINUX64);
	img.has_pvh = true;
	img.pvh_entry = 0x100040;
	ASSERT_EQ(boot_choose_protocol(&img, BOOT_AUTO, &p), 0);
	EXPECT_EQ(p, BOOT_PVH);
	ASSERT_EQ(boot_choose_protocol(&img, BOOT_LINUX64, &p), 0);
	EXPECT_EQ(p, BOOT_LINUX64);
	img.entry = 0xffffffff80100000ull; // a virtual entry cannot be entered
	EXPECT_EQ(boot_choose_protocol(&img, BOOT_LINUX64, &p), -1);
}
