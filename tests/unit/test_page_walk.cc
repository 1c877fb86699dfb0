// SPDX-License-Identifier: MIT
// The guest page walker: page tables built in guest RAM for every paging
// mode and page size, then translated; and the same tables checked against
// KVM_TRANSLATE on a real vCPU where this host's KVM allows it.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/kvm_translate_helper.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

constexpr uint64_t KiB4 = 0x1000, MiB2 = 2ull << 20, MiB4 = 4ull << 20, GiB1 = 1ull << 30;
constexpr uint64_t RW = 1ull << 1;
constexpr uint64_t PK_AND_IGNORED = 0x7ff0000000000000ull; // bits 62:52
constexpr uint64_t CR0_PE = 1, CR0_ET = 1ull << 4, EFER_LME = 1ull << 8;

enum class Mode { Off, Bits32, Pae, Long4, Long5 };

const char *mode_name(Mode m)
{
	switch (m) {
	case Mode::Off: return "paging off";
	case Mode::Bits32: return "32-bit paging";
	case Mode::Pae: return "PAE paging";
	case Mode::Long4: return "4-level paging";
	case Mode::Long5: return "5-level paging";
	}
	return "?";
}

struct Level {
	unsigned shift, bits;
};

// Builds page tables in guest RAM the way a guest kernel would, allocating
// table pages upwards from `next`.
class PageTables {
public:
	PageTables(const guest_mem *gm, Mode mode, uint64_t next = 0x100000)
		: gm_(gm), mode_(mode), next_(next)
	{
		switch (mode) {
		case Mode::Off: break;
		case Mode::Bits32: levels_ = { { 22, 10 }, { 12, 10 } }; break;
		case Mode::Pae: levels_ = { { 30, 2 }, { 21, 9 }, { 12, 9 } }; break;
		case Mode::Long4: levels_ = { { 39, 9 }, { 30, 9 }, { 21, 9 }, { 12, 9 } }; break;
		case Mode::Long5:
			levels_ = { { 48, 9 }, { 39, 9 }, { 30, 9 }, { 21, 9 }, { 12, 9 } };
			break;
		}
		root_ = alloc();
		// PAE's PDPT is only 32-byte aligned: put it off the page start
		// to prove CR3 bits 11:5 are honoured.
		if (mode == Mode::Pae)
			root_ += 0x20;
	}

	uint64_t root() const { return root_; }
	unsigned entry_size() const { return mode_ == Mode::Bits32 ? 4 : 8; }

	arch_paging paging() const
	{
		arch_paging pg = {};
		pg.cr0 = CR0_PE | CR0_ET;
		if (mode_ == Mode::Off)
			return pg;
		pg.cr0 |= X86_CR0_PG;
		pg.cr3 = root_;
		switch (mode_) {
		case Mode::Bits32: pg.cr4 = X86_CR4_PSE; break;
		case Mode::Pae:
			pg.cr4 = X86_CR4_PAE;
			pg.efer = X86_EFER_NXE;
			break;
		case Mode::Long5: pg.cr4 = X86_CR4_LA57; [[fallthrough]];
		case Mode::Long4:
			pg.cr4 |= X86_CR4_PAE;
			pg.efer = EFER_LME | X86_EFER_LMA | X86_EFER_NXE;
			break;
		case Mode::Off: break;
		}
		return pg;
	}

	// Maps [va, va+size) to pa with one page of `size` bytes; `extra` is
	// ORed into every entry written on the way (not into PAE's PDPTEs,
	// which have no such bits).
	void map(uint64_t va, uint64_t pa, uint64_t size, uint64_t extra = 0)
	{
		uint64_t table = root_;
		for (size_t i = 0; i < levels_.size(); i++) {
			uint64_t slot = entry_addr_in(table, va, i);
			if ((1ull << levels_[i].shift) == size) {
				uint64_t e = pa | X86_PW_P | RW | extra;
				if (size != KiB4)
					e |= X86_PW_PS;
				if (mode_ == Mode::Bits32 && size == MiB4)
					e = (pa & 0xffc00000u) | ((pa >> 32) & 0xff) << 13 | X86_PW_P | RW |
					    X86_PW_PS | extra;
				put(slot, e);
				return;
			}
			uint64_t e = get(slot);
			if (!(e & X86_PW_P)) {
				bool pdpte = mode_ == Mode::Pae && i == 0;
				e = alloc() | X86_PW_P | (pdpte ? 0 : RW | extra);
				put(slot, e);
			}
			table = e & (mode_ == Mode::Bits32 ? 0xfffff000ull : X86_PW_ADDR_MASK);
		}
		ADD_FAILURE() << "no level maps pages of 0x" << std::hex << size;
	}

	// Guest-physical address of the entry at `level` (0 = top) for va,
	// following the present entries above it.
	uint64_t entry_addr(uint64_t va, size_t level) const
	{
		uint64_t table = root_;
		for (size_t i = 0; i < level; i++)
			table = get(entry_addr_in(table, va, i)) &
				(mode_ == Mode::Bits32 ? 0xfffff000ull : X86_PW_ADDR_MASK);
		return entry_addr_in(table, va, level);
	}

	uint64_t get(uint64_t gpa) const
	{
		uint64_t v = 0;
		EXPECT_EQ(guest_mem_read(gm_, gpa, &v, entry_size()), 0);
		return v;
	}
	void put(uint64_t gpa, uint64_t v) const
	{
		EXPECT_EQ(guest_mem_write(gm_, gpa, &v, entry_size()), 0) << et_last_error();
	}
	void clear_present(uint64_t va, size_t level) const
	{
		uint64_t a = entry_addr(va, level);
		put(a, get(a) & ~X86_PW_P);
	}
	uint64_t alloc()
	{
		uint64_t p = next_;
		next_ += KiB4;
		void *host = guest_mem_ptr(gm_, p, KiB4);
		EXPECT_NE(host, nullptr);
		if (host)
			memset(host, 0, KiB4);
		return p;
	}

private:
	uint64_t entry_addr_in(uint64_t table, uint64_t va, size_t i) const
	{
		uint64_t idx = (va >> levels_[i].shift) & ((1ull << levels_[i].bits) - 1);
		return table + idx * entry_size();
	}

	const guest_mem *gm_;
	Mode mode_;
	uint64_t next_;
	uint64_t root_ = 0;
	std::vector<Level> levels_;
};

class PageWalk : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_EQ(guest_mem_init(&gm, 64 << 20), 0); }
	void TearDown() override { guest_mem_free(&gm); }

	// pa and page_end of a translation that must succeed.
	void expect_maps(const arch_paging &pg, uint64_t va, uint64_t want_pa, uint64_t want_end)
	{
		uint64_t pa = ~0ull, end = ~0ull;
		ASSERT_EQ(arch_translate(&gm, &pg, va, &pa, &end), 0)
			<< std::hex << "va 0x" << va << ": " << et_last_error();
		EXPECT_EQ(pa, want_pa) << std::hex << "va 0x" << va;
		EXPECT_EQ(end, want_end) << std::hex << "va 0x" << va;
		// page_end is optional.
		EXPECT_EQ(arch_translate(&gm, &pg, va, &pa, nullptr), 0);
	}
	// A translation that must fail with an error containing `why`.
	void expect_fails(const arch_paging &pg, uint64_t va, const std::string &why)
	{
		uint64_t pa = 0x5a5a;
		et_clear_error();
		EXPECT_EQ(arch_translate(&gm, &pg, va, &pa, nullptr), -1) << std::hex << "va 0x" << va;
		EXPECT_EQ(pa, 0x5a5au) << "pa written on failure";
		EXPECT_NE(std::string(et_last_error()).find(why), std::string::npos)
			<< "error: " << et_last_error() << "\nwanted: " << why;
	}
	void fill(uint64_t gpa, uint8_t byte, uint64_t len)
	{
		void *p = guest_mem_ptr(&gm, gpa, len);
		ASSERT_NE(p, nullptr);
		memset(p, byte, len);
	}

	guest_mem gm = {};
};

} // namespace

TEST_F(PageWalk, PagingOffIsIdentityIn32Bits)
{
	PageTables t(&gm, Mode::Off);
	arch_paging pg = t.paging();

	expect_maps(pg, 0x12345, 0x12345, 0x13000);
	expect_maps(pg, 0x0, 0x0, 0x1000);
	// Linear addresses are 32 bits outside long mode.
	expect_maps(pg, 0x100abcdefull, 0xabcdef, 0x100abd000ull);
	// No tables are read: addresses outside RAM translate too.
	expect_maps(pg, 0xfffffff0u, 0xfffffff0u, 0x100000000ull);

	fill(0x3000, 0x11, 0x1000);
	fill(0x4000, 0x22, 0x1000);
	uint8_t buf[8];
	ASSERT_EQ(arch_read_virt(&gm, &pg, 0x3ffc, buf, sizeof(buf)), 0) << et_last_error();
	EXPECT_EQ(std::vector<uint8_t>(buf, buf + 8),
		  (std::vector<uint8_t>{ 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22 }));
}

TEST_F(PageWalk, Bits32With4KAnd4MPages)
{
	PageTables t(&gm, Mode::Bits32);
	t.map(0xc0001000u, 0x200000, KiB4);
	t.map(0x80000000u, 0x1400000, MiB4);
	arch_paging pg = t.paging();

	expect_maps(pg, 0xc0001234u, 0x200234, 0xc0002000u);
	expect_maps(pg, 0xc0001fffu, 0x200fff, 0xc0002000u);
	expect_maps(pg, 0x80123456u, 0x1523456, 0x80400000u);
	// The upper 32 bits of va are not part of a 32-bit linear address.
	expect_maps(pg, 0x7c0001234ull, 0x200234, 0x7c0002000ull);

	// Without CR4.PSE the PS bit means nothing: the PDE points at a page
	// table (here the zeroed 4 MiB page's first page) whose PTE is empty.
	arch_paging nopse = pg;
	nopse.cr4 = 0;
	expect_fails(nopse, 0x80123456u, "PTE not present");
	expect_maps(nopse, 0xc0001234u, 0x200234, 0xc0002000u);
}

TEST_F(PageWalk, Bits32Pse36HighAddressBits)
{
	PageTables t(&gm, Mode::Bits32);
	t.map(0x00400000u, 0x5c0400000ull, MiB4); // pa bits 39:32 = 0x5
	t.map(0x00800000u, 0xff00000000ull, MiB4);
	arch_paging pg = t.paging();

	expect_maps(pg, 0x00412345u, 0x5c0412345ull, 0x00800000u);
	expect_maps(pg, 0x00bfffffu, 0xff003fffffull, 0x00c00000u);
}

TEST_F(PageWalk, Bits32NotPresentAndOutsideRam)
{
	PageTables t(&gm, Mode::Bits32);
	t.map(0xc0001000u, 0x200000, KiB4);
	arch_paging pg = t.paging();

	expect_fails(pg, 0xc0002000u, "PTE not present");
	expect_fails(pg, 0x40000000u, "PDE not present");
	t.clear_present(0xc0001000u, 0);
	expect_fails(pg, 0xc0001000u, "va 0xc0001000: PDE not present");

	// A page directory in the MMIO hole, a page table past the end of RAM.
	arch_paging bad = pg;
	bad.cr3 = 0xd0000000u;
	expect_fails(bad, 0x1000, "PDE at 0xd0000000 is outside guest RAM");
	t.put(t.entry_addr(0xc0001000u, 0), 0x08000000u | X86_PW_P);
	expect_fails(pg, 0xc0001000u, "PTE at 0x8000004 is outside guest RAM");
}

TEST_F(PageWalk, PaeWith4KAnd2MPages)
{
	PageTables t(&gm, Mode::Pae);
	ASSERT_EQ(t.root() & 0xfff, 0x20u);
	t.map(0xc0001000u, 0x300000, KiB4, X86_PW_NX | PK_AND_IGNORED);
	t.map(0x40200000u, 0x1600000, MiB2, X86_PW_NX | PK_AND_IGNORED);
	t.map(0x00000000u, 0x3ffff000ull, KiB4); // a page of pa bits 29:12 all set
	arch_paging pg = t.paging();

	// NX and the bits above 51 are attributes, not address bits.
	expect_maps(pg, 0xc0001abcu, 0x300abc, 0xc0002000u);
	expect_maps(pg, 0x40212345u, 0x1612345, 0x40400000u);
	expect_maps(pg, 0x00000008u, 0x3ffff008ull, 0x1000);
	expect_maps(pg, 0x1c0001abcull, 0x300abc, 0x1c0002000ull);
}

TEST_F(PageWalk, PaeNotPresentAtEachLevelAndOutsideRam)
{
	PageTables t(&gm, Mode::Pae);
	t.map(0xc0001000u, 0x300000, KiB4);
	t.map(0xc0400000u, 0x400000, MiB2);
	arch_paging pg = t.paging();

	expect_fails(pg, 0x80000000u, "va 0x80000000: PDPTE not present");
	expect_fails(pg, 0xc0200000u, "PDE not present");
	expect_fails(pg, 0xc0002000u, "PTE not present");
	t.clear_present(0xc0001000u, 2);
	expect_fails(pg, 0xc0001000u, "PTE not present");
	t.clear_present(0xc0400000u, 1);
	expect_fails(pg, 0xc0400000u, "PDE not present");
	t.clear_present(0xc0001000u, 0);
	expect_fails(pg, 0xc0001000u, "PDPTE not present");

	arch_paging bad = pg;
	bad.cr3 = 0xfffff000u; // above RAM, in the 32-bit hole
	expect_fails(bad, 0x1000, "PDPTE at 0xfffff000 is outside guest RAM");
	// A present PDPTE pointing past 4 GiB, where this guest has no RAM.
	t.put(t.entry_addr(0xc0001000u, 0), 0x123456000ull | X86_PW_P);
	expect_fails(pg, 0xc0001000u, "PDE at 0x123456000 is outside guest RAM");
}

TEST_F(PageWalk, LongModeWith4K2MAnd1GPages)
{
	PageTables t(&gm, Mode::Long4);
	t.map(0x400000, 0x500000, KiB4);
	t.map(0xffffffff80000000ull, 0x1000000, MiB2);
	t.map(0x7f0040000000ull, 0x80000000ull, GiB1);
	t.map(0xffff888000000000ull, 0, GiB1);
	arch_paging pg = t.paging();

	expect_maps(pg, 0x400123, 0x500123, 0x401000);
	expect_maps(pg, 0xffffffff80123456ull, 0x1123456, 0xffffffff80200000ull);
	expect_maps(pg, 0x7f0041234567ull, 0x81234567ull, 0x7f0080000000ull);
	expect_maps(pg, 0xffff888000001000ull, 0x1000, 0xffff888040000000ull);

	// Reading through the 1 GiB direct map sees guest RAM.
	fill(0x2000, 0x7e, 16);
	uint8_t buf[16];
	ASSERT_EQ(arch_read_virt(&gm, &pg, 0xffff888000002000ull, buf, sizeof(buf)), 0);
	EXPECT_EQ(buf[0], 0x7e);
	EXPECT_EQ(buf[15], 0x7e);
}

TEST_F(PageWalk, LongModeNxAndProtectionKeysDoNotLeakIntoAddresses)
{
	PageTables t(&gm, Mode::Long4);
	const uint64_t attrs = X86_PW_NX | PK_AND_IGNORED;
	t.map(0x400000, 0x500000, KiB4, attrs);
	t.map(0x600000, 0x800000, MiB2, attrs);
	t.map(0x40000000, 0x40000000, GiB1, attrs);
	// Every physical-address bit the architecture has (51:12), and the
	// PAT bit of a large page (bit 12) is not an address bit.
	t.map(0x1000, 0x000ffffffffff000ull, KiB4, attrs);
	t.map(0xa00000, 0xc00000 | (1ull << 12), MiB2, attrs);
	arch_paging pg = t.paging();

	expect_maps(pg, 0x400001, 0x500001, 0x401000);
	expect_maps(pg, 0x612345, 0x812345, 0x800000);
	expect_maps(pg, 0x40000010, 0x40000010, 0x80000000);
	expect_maps(pg, 0x1fff, 0x000fffffffffffffull, 0x2000);
	expect_maps(pg, 0xa00010, 0xc00010, 0xc00000);
	// CR3's top bit (PCID no-flush) and low PCID bits are not addresses.
	arch_paging pcid = pg;
	pcid.cr3 |= (1ull << 63) | 0x5;
	expect_maps(pcid, 0x400001, 0x500001, 0x401000);
}

TEST_F(PageWalk, LongModeNotPresentAtEachLevel)
{
	PageTables t(&gm, Mode::Long4);
	t.map(0x400000, 0x500000, KiB4);
	t.map(0x40000000, 0x40000000, GiB1);
	t.map(0x200000, 0x200000, MiB2);
	arch_paging pg = t.paging();

	expect_fails(pg, 0x8000000000ull, "va 0x8000000000: PML4E not present");
	expect_fails(pg, 0x80000000ull, "PDPTE not present");
	expect_fails(pg, 0x800000, "PDE not present");
	expect_fails(pg, 0x401000, "PTE not present");

	t.clear_present(0x400000, 3);
	expect_fails(pg, 0x400000, "PTE not present");
	t.clear_present(0x200000, 2);
	expect_fails(pg, 0x200000, "PDE not present");
	t.clear_present(0x40000000, 1);
	expect_fails(pg, 0x40000000, "PDPTE not present");
	t.clear_present(0x400000, 0);
	expect_fails(pg, 0x400000, "PML4E not present");
}

TEST_F(PageWalk, LongModeTablesOutsideRam)
{
	PageTables t(&gm, Mode::Long4);
	t.map(0x400000, 0x500000, KiB4);
	arch_paging pg = t.paging();

	arch_paging bad = pg;
	bad.cr3 = 0x4000000; // exactly the end of 64 MiB of RAM
	expect_fails(bad, 0x400000, "PML4E at 0x4000000 is outside guest RAM");
	// A page directory in the MMIO hole; a page table far above RAM.
	t.put(t.entry_addr(0x400000, 1), 0xc0000000ull | X86_PW_P);
	expect_fails(pg, 0x400000, "PDE at 0xc0000010 is outside guest RAM");
	t.put(t.entry_addr(0x400000, 1), 0x000ffffffffff000ull | X86_PW_P | X86_PW_NX);
	expect_fails(pg, 0x400000, "PDE at 0xffffffffff010 is outside guest RAM");
}

TEST_F(PageWalk, LongModeNonCanonicalFails)
{
	PageTables t(&gm, Mode::Long4);
	t.map(0xffff800000000000ull, 0x200000, KiB4);
	t.map(0x00007ffffffff000ull, 0x300000, KiB4);
	arch_paging pg = t.paging();

	expect_maps(pg, 0xffff800000000010ull, 0x200010, 0xffff800000001000ull);
	expect_maps(pg, 0x00007fffffffffffull, 0x300fff, 0x0000800000000000ull);
	// Same table indices, but bits 63:48 do not copy bit 47.
	expect_fails(pg, 0x0000800000000010ull, "va 0x800000000010 is not canonical");
	expect_fails(pg, 0xfff0800000000010ull, "not canonical (48-bit");
	expect_fails(pg, 0x8000000000000000ull, "not canonical");

	// Reading up to the last canonical byte of the low half stops there.
	uint8_t buf[2];
	EXPECT_EQ(arch_read_virt(&gm, &pg, 0x00007fffffffffffull, buf, 2), -1);
	EXPECT_NE(std::string(et_last_error()).find("not canonical"), std::string::npos);
}

TEST_F(PageWalk, LongModePageEndWrapsAtTheTop)
{
	PageTables t(&gm, Mode::Long4);
	t.map(0xfffffffffffff000ull, 0x200000, KiB4);
	t.map(0xffffffffffe00000ull, 0x400000, KiB4);
	t.map(0, 0x300000, KiB4);
	arch_paging pg = t.paging();

	expect_maps(pg, 0xfffffffffffffff8ull, 0x200ff8, 0);
	// A read across the top of the address space continues at 0.
	fill(0x200ff8, 0xaa, 8);
	fill(0x300000, 0xbb, 8);
	uint8_t buf[12];
	ASSERT_EQ(arch_read_virt(&gm, &pg, 0xfffffffffffffffcull, buf, sizeof(buf)), 0)
		<< et_last_error();
	EXPECT_EQ(buf[3], 0xaa);
	EXPECT_EQ(buf[4], 0xbb);
}

TEST_F(PageWalk, FiveLevelPaging)
{
	PageTables t(&gm, Mode::Long5);
	const uint64_t va57 = 0x00ab123456789000ull; // canonical only with LA57
	const uint64_t high57 = 0xff11000000000000ull;
	t.map(va57, 0x600000, KiB4, X86_PW_NX);
	t.map(high57, 0x800000, MiB2);
	t.map(0x40000000, 0x40000000, GiB1);
	arch_paging pg = t.paging();

	expect_maps(pg, va57 + 0x42, 0x600042, va57 + 0x1000);
	expect_maps(pg, high57 + 0x1234, 0x801234, high57 + MiB2);
	expect_maps(pg, 0x40000001, 0x40000001, 0x80000000);
	expect_fails(pg, 0x0100000000000000ull, "not canonical (57-bit");
	expect_fails(pg, 0x0001000000000000ull, "PML5E not present");
	t.clear_present(va57, 4);
	expect_fails(pg, va57, "PTE not present");

	// The same tables under 4-level paging: va57 is not canonical there.
	arch_paging four = pg;
	four.cr4 &= ~X86_CR4_LA57;
	expect_fails(four, va57, "not canonical (48-bit");
}

TEST_F(PageWalk, SelfReferencingTablesCannotLoop)
{
	PageTables t(&gm, Mode::Long4);
	// The classic recursive slot: PML4[511] points at the PML4 itself.
	// Through it, va 0xfffffffffffff000 names the PML4 page; the walk has
	// four reads whatever the tables say.
	t.put(t.root() + 511 * 8, t.root() | X86_PW_P | RW);
	arch_paging pg = t.paging();
	expect_maps(pg, 0xfffffffffffff008ull, t.root() + 8, 0);
	expect_fails(pg, 0xffffff8000000000ull, "PDPTE not present");

	// A 32-bit page directory whose every entry points at itself.
	PageTables t32(&gm, Mode::Bits32, 0x800000);
	for (unsigned i = 0; i < 1024; i++)
		t32.put(t32.root() + i * 4, t32.root() | X86_PW_P);
	arch_paging pg32 = t32.paging();
	expect_maps(pg32, 0xdeadbeefu, t32.root() + 0xeef, 0xdeadc000u);
}

TEST_F(PageWalk, ReadVirtAcrossPages)
{
	PageTables t(&gm, Mode::Long4);
	// Virtually contiguous, physically scattered and in reverse order.
	t.map(0x10000, 0x900000, KiB4);
	t.map(0x11000, 0x700000, KiB4);
	t.map(0x12000, 0x500000, KiB4);
	arch_paging pg = t.paging();
	fill(0x900000, 0x01, KiB4);
	fill(0x700000, 0x02, KiB4);
	fill(0x500000, 0x03, KiB4);

	std::vector<uint8_t> buf(KiB4 + 8);
	ASSERT_EQ(arch_read_virt(&gm, &pg, 0x10ffc, buf.data(), buf.size()), 0)
		<< et_last_error();
	EXPECT_EQ(buf[0], 0x01);
	EXPECT_EQ(buf[3], 0x01);
	EXPECT_EQ(buf[4], 0x02);
	EXPECT_EQ(buf[KiB4 + 3], 0x02);
	EXPECT_EQ(buf[KiB4 + 4], 0x03);
	EXPECT_EQ(buf[KiB4 + 7], 0x03);

	// Zero bytes: nothing translated, nothing read.
	EXPECT_EQ(arch_read_virt(&gm, &pg, 0xdead0000, buf.data(), 0), 0);

	// The read stops with an error at the first unmapped page.
	et_clear_error();
	EXPECT_EQ(arch_read_virt(&gm, &pg, 0x12ff0, buf.data(), 32), -1);
	EXPECT_NE(std::string(et_last_error()).find("va 0x13000: PTE not present"),
		  std::string::npos)
		<< et_last_error();

	// A mapping whose page lies outside RAM translates but cannot be read.
	t.map(0x14000, 0x8000000, KiB4);
	EXPECT_EQ(arch_read_virt(&gm, &pg, 0x14000, buf.data(), 8), -1);
	EXPECT_NE(std::string(et_last_error()).find("va 0x14000"), std::string::npos)
		<< et_last_error();
}

TEST_F(PageWalk, ReadVirtAcrossLargePagesIn32BitModes)
{
	PageTables t(&gm, Mode::Bits32);
	t.map(0x00000000u, 0x00c00000u, MiB4);
	t.map(0x00400000u, 0x00400000u, MiB4);
	arch_paging pg = t.paging();
	fill(0x00fffffe, 0x44, 2);
	fill(0x00400000, 0x55, 2);
	uint8_t buf[4];
	ASSERT_EQ(arch_read_virt(&gm, &pg, 0x003ffffe, buf, 4), 0) << et_last_error();
	EXPECT_EQ(std::vector<uint8_t>(buf, buf + 4),
		  (std::vector<uint8_t>{ 0x44, 0x44, 0x55, 0x55 }));

	PageTables p(&gm, Mode::Pae, 0x2000000);
	p.map(0x40000000u, 0x00e00000u, MiB2);
	p.map(0x40200000u, 0x00400000u, KiB4);
	arch_paging ppg = p.paging();
	fill(0x00fffffe, 0x66, 2);
	ASSERT_EQ(arch_read_virt(&gm, &ppg, 0x401ffffe, buf, 4), 0) << et_last_error();
	EXPECT_EQ(std::vector<uint8_t>(buf, buf + 4),
		  (std::vector<uint8_t>{ 0x66, 0x66, 0x55, 0x55 }));
}

TEST_F(PageWalk, PagingFromSregs)
{
	kvm_sregs s = {};
	s.cr0 = 0x80050033;
	s.cr3 = 0x1000;
	s.cr4 = 0x20;
	s.efer = 0xd01;
	arch_paging pg = arch_paging_of(&s);
	EXPECT_EQ(pg.cr0, 0x80050033u);
	EXPECT_EQ(pg.cr3, 0x1000u);
	EXPECT_EQ(pg.cr4, 0x20u);
	EXPECT_EQ(pg.efer, 0xd01u);
}

// ---------------------------------------------------------------------
// Cross-check against KVM_TRANSLATE on a real vCPU.

namespace {

struct KvmDeleter {
	void operator()(kth *k) const { kth_close(k); }
};

// Builds `mode`'s tables in a fresh VM, loads the registers, and compares
// the walker with KVM_TRANSLATE at each address. Sets *skip to a reason
// when this KVM cannot take part for that mode.
void cross_check(Mode mode, std::string *skip)
{
	std::unique_ptr<kth, KvmDeleter> k(kth_open(64 << 20));
	// CROSS_CHECK saw KVM usable: a VM that cannot be made is a fault.
	if (!k)
		FAIL() << et_last_error();
	const guest_mem *gm = kth_mem(k.get());
	PageTables t(gm, mode);
	std::vector<uint64_t> vas;
	const bool long_mode = mode == Mode::Long4 || mode == Mode::Long5;
	// NX where the mode has it; the ignored/protection-key bits 62:52
	// only where they are not reserved (long mode).
	const uint64_t attrs = mode == Mode::Bits32 ? 0
			       : long_mode	    ? X86_PW_NX | PK_AND_IGNORED
						    : X86_PW_NX;

	if (mode == Mode::Long5 && !kth_has_la57(k.get())) {
		*skip = "the guest CPU has no LA57 (5-level paging) here";
		return;
	}
	switch (mode) {
	case Mode::Off:
		vas = { 0x0, 0x1234, 0x3ffffff, 0x80001000u, 0xfffff123u };
		break;
	case Mode::Bits32:
		t.map(0xc0001000u, 0x200000, KiB4);
		t.map(0xc0002000u, 0x3ff000, KiB4);
		t.map(0x80000000u, 0x1400000, MiB4);
		vas = { 0xc0001234u, 0xc0002fffu, 0xc0003000u, 0x80123456u, 0x803fffffu,
			0x80400000u, 0x0, 0xfffff000u };
		break;
	case Mode::Pae:
		t.map(0xc0001000u, 0x300000, KiB4, attrs);
		t.map(0x40200000u, 0x1600000, MiB2, attrs);
		t.map(0x1000, 0x1000, KiB4);
		vas = { 0xc0001abcu, 0xc0002000u, 0xc0200000u, 0x40212345u, 0x403fffffu,
			0x40400000u, 0x80000000u, 0x1008, 0x0 };
		break;
	case Mode::Long4:
	case Mode::Long5: {
		const uint64_t top = mode == Mode::Long5 ? 0xff00000000000000ull
							 : 0xffff800000000000ull;
		t.map(0x400000, 0x500000, KiB4, attrs);
		t.map(0xffffffff80000000ull, 0x1000000, MiB2, attrs);
		t.map(top, 0x2000000, KiB4, attrs);
		vas = { 0x400123, 0x401000, 0xffffffff80123456ull, 0xffffffff801fffffull,
			0xffffffff80200000ull, top + 0x10, top + 0x1000, 0x8000000000ull,
			0x0 };
		if (kth_has_1g_pages(k.get())) {
			t.map(0x7f0040000000ull, 0x80000000ull, GiB1, attrs);
			vas.insert(vas.end(), { 0x7f0041234567ull, 0x7f007fffffffull,
						0x7f0080000000ull });
		} else {
			// KVM would take PS in a PDPTE as a reserved bit.
			std::cerr << "note: the guest CPU has no 1 GiB pages here; "
				  << mode_name(mode) << " cross-checked with 4 KiB and 2 MiB pages\n";
		}
		if (mode == Mode::Long5) {
			t.map(0x00ab123456789000ull, 0x600000, KiB4, attrs);
			vas.insert(vas.end(), { 0x00ab123456789042ull, 0x00ab12345678a000ull,
						0x0001000000000000ull });
		}
		break;
	}
	}

	const arch_paging want = t.paging();
	arch_paging actual = {};
	if (kth_set_paging(k.get(), &want, &actual)) {
		if (mode == Mode::Long4)
			FAIL() << "KVM refused " << mode_name(mode) << ": " << et_last_error();
		*skip = std::string("this KVM refuses ") + mode_name(mode) +
			" register state (nested kvm-pvm runs guests in long mode only): " +
			et_last_error();
		return;
	}
	// KVM may accept the registers yet hold others (nested kvm-pvm drops
	// CR0.PG outside long mode): comparing then would check nothing.
	const uint64_t cr4_bits = X86_CR4_PAE | X86_CR4_PSE | X86_CR4_LA57;
	const uint64_t efer_bits = X86_EFER_LMA | X86_EFER_NXE;
	if ((actual.cr0 & X86_CR0_PG) != (want.cr0 & X86_CR0_PG) ||
	    (actual.cr4 & cr4_bits) != want.cr4 || (actual.efer & efer_bits) != (want.efer & efer_bits) ||
	    (want.cr0 & X86_CR0_PG && actual.cr3 != want.cr3)) {
		std::ostringstream why;
		why << std::hex << "this KVM did not keep the " << mode_name(mode)
		    << " registers (asked cr0=0x" << want.cr0 << " cr4=0x" << want.cr4 << " efer=0x"
		    << want.efer << ", holds cr0=0x" << actual.cr0 << " cr4=0x" << actual.cr4
		    << " efer=0x" << actual.efer
		    << "; nested kvm-pvm, for one, drops CR0.PG outside long mode)";
		if (mode == Mode::Long4)
			FAIL() << why.str();
		*skip = why.str();
		return;
	}

	unsigned mapped = 0;
	for (uint64_t va : vas) {
		int valid = 0;
		uint64_t kvm_pa = 0, our_pa = 0;
		if (kth_translate(k.get(), va, &valid, &kvm_pa)) {
			if (mode == Mode::Long4)
				FAIL() << et_last_error();
			*skip = std::string("KVM_TRANSLATE does not work in ") + mode_name(mode) +
				" on this KVM: " + et_last_error();
			return;
		}
		int ours = arch_translate(gm, &actual, va, &our_pa, nullptr);
		EXPECT_EQ(ours == 0, valid != 0)
			<< mode_name(mode) << std::hex << " va 0x" << va << ": ours "
			<< (ours ? et_last_error() : "valid") << ", KVM " << (valid ? "valid" : "invalid");
		if (ours == 0 && valid) {
			EXPECT_EQ(our_pa, kvm_pa) << mode_name(mode) << std::hex << " va 0x" << va;
			mapped++;
		}
	}
	EXPECT_GE(mapped, 3u) << "too few mapped addresses compared";
}

} // namespace

#define CROSS_CHECK(mode)                                  \
	do {                                               \
		REQUIRE_KVM();                             \
		std::string skip;                          \
		cross_check(mode, &skip);                  \
		if (!skip.empty())                         \
			GTEST_SKIP() << skip;              \
	} while (0)

TEST(PageWalkKvm, PagingOff) { CROSS_CHECK(Mode::Off); }
TEST(PageWalkKvm, Bits32) { CROSS_CHECK(Mode::Bits32); }
TEST(PageWalkKvm, Pae) { CROSS_CHECK(Mode::Pae); }
TEST(PageWalkKvm, FourLevel) { CROSS_CHECK(Mode::Long4); }
TEST(PageWalkKvm, FiveLevel) { CROSS_CHECK(Mode::Long5); }
