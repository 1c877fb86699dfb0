// SPDX-License-Identifier: MIT
// Trampoline mode's parts: the templates (their recording path, counted
// instruction by instruction), the region finder on our images and on
// hand-corrupted copies, the layout, site routing (rel32 targets, oneshot
// slots), the batch a hostile guest may scribble on, and site patching.
#include <gtest/gtest.h>

#include <capstone/capstone.h>
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "trampolines/templates.h"
#include "vmm/sites/sites.h"
#include "vmm/symbols/symbols.h"
#include "vmm/trace/site_patch.h"
#include "vmm/trace/tramp_mode.h"
#include "trampolines/region.h"
#include "trampolines/placement.h"

namespace {

// Instructions from an entry to its first ret, the path a call takes when
// the batch has room (the template's only branch there is not taken).
std::vector<std::string> record_path(const struct tramp_template *t, size_t entry)
{
	csh cs;
	cs_insn *insn = nullptr;
	std::vector<std::string> path;
	size_t n;

	if (cs_open(CS_ARCH_X86, t->word_bytes == 8 ? CS_MODE_64 : CS_MODE_32, &cs) != CS_ERR_OK)
		return path;
	n = cs_disasm(cs, t->bytes + entry, t->size - entry, entry, 0, &insn);
	for (size_t i = 0; i < n; i++) {
		path.push_back(insn[i].mnemonic);
		if (!strcmp(insn[i].mnemonic, "ret"))
			break;
	}
	cs_free(insn, n);
	cs_close(&cs);
	return path;
}

TEST(TrampolineTemplates, RecordingPathIsShortAndExitFree)
{
	// The site's call, then the template up to its ret (issue 19's goal:
	// at most 20; the previous design, pushf/cli and a count, took 26 on
	// x86-64 and 28 on i386).
	const struct { unsigned cls; size_t insns; } want[] = { { 64, 20 }, { 32, 20 } };

	for (const auto &w : want) {
		const struct tramp_template *t = tramp_template_for(w.cls);
		ASSERT_NE(t, nullptr);
		auto path = record_path(t, t->record_entry);
		ASSERT_FALSE(path.empty());
		EXPECT_EQ(path.size() + 1, w.insns) << t->arch;
		EXPECT_EQ(path.back(), "ret");
		EXPECT_EQ(path.front(), t->word_bytes == 8 ? "pushfq" : "pushfd");
		// Interrupts stay on: one xadd reserves the record.
		EXPECT_EQ(std::count(path.begin(), path.end(), "xadd"), 1) << t->arch;
		for (const auto &m : path) {
			EXPECT_NE(m, "out") << t->arch << ": an exit on the recording path";
			EXPECT_NE(m, "int3") << t->arch;
			EXPECT_NE(m, "cli") << t->arch;
		}
		// Code, then the header on a page of its own, then the records.
		EXPECT_LT(t->oneshot_entry, t->header);
		EXPECT_EQ(t->header % 4096, 0u);
		EXPECT_EQ(t->size, t->header + sizeof(struct et_tramp_batch));
		// Four record stores on each entry's path, each relocated (the
		// third entry is for several vCPUs); i386 addresses its cursor
		// absolutely on every entry, x86-64 on the smp one only.
		EXPECT_EQ(t->nr_end_relocs, 12u) << t->arch;
		EXPECT_EQ(t->nr_base_relocs, t->word_bytes == 8 ? 1u : 3u) << t->arch;
	}
	EXPECT_EQ(tramp_template_for(16), nullptr);
}

TEST(TrampolineTemplates, SeveralVcpuPathPicksItsBatchWithRdtscp)
{
	// Both templates: rdtscp for rdtsc (the time, and TSC_AUX: our
	// vCPU), an imul to our batch, and (e/r)bx saved for the record's
	// offset: 3 instructions more than the one-vCPU path, still one
	// xadd, no lock.
	for (unsigned cls : { 64u, 32u }) {
		const struct tramp_template *t = tramp_template_for(cls);
		ASSERT_NE(t->smp_record_entry, 0u) << t->arch;
		auto path = record_path(t, t->smp_record_entry);
		ASSERT_FALSE(path.empty());
		EXPECT_EQ(path.size() + 1, 23u) << t->arch;
		EXPECT_EQ(path.front(), cls == 64 ? "pushfq" : "pushfd");
		EXPECT_EQ(path.back(), "ret");
		EXPECT_EQ(std::count(path.begin(), path.end(), "rdtscp"), 1) << t->arch;
		EXPECT_EQ(std::count(path.begin(), path.end(), "rdtsc"), 0) << t->arch;
		EXPECT_EQ(std::count(path.begin(), path.end(), "xadd"), 1) << t->arch;
		EXPECT_EQ(std::count(path.begin(), path.end(), "imul"), 1) << t->arch;
		for (const auto &m : path) {
			EXPECT_NE(m, "out") << t->arch;
			EXPECT_NE(m, "cli") << t->arch;
		}
		EXPECT_EQ(t->nr_stride_relocs, 1u) << t->arch;
		EXPECT_GT(t->smp_record_entry, t->oneshot_entry) << t->arch;
		EXPECT_LT(t->smp_record_entry, t->header) << t->arch;
	}
}

TEST(TrampolineTemplates, OneshotPathRestoresTheSite)
{
	const struct tramp_template *t = tramp_template_for(64);
	auto path = record_path(t, t->oneshot_entry);

	// Record, then put the original bytes back (a jump over the site
	// first, then 2 + 1 + 2 bytes), then drop the slot's return address
	// without touching the flags.
	ASSERT_GT(path.size(), 19u + 9u);
	EXPECT_EQ(path[path.size() - 2], "lea");
	EXPECT_EQ(path.back(), "ret");
}

std::string image_path(const char *arch)
{
	return std::string(ET_TEST_IMAGES) + "/" + arch + ".elf";
}

struct Image {
	std::vector<uint8_t> bytes;
	struct kernel_image img = {};
	struct symbols syms = {};
	bool ok = false;

	explicit Image(std::vector<uint8_t> b) : bytes(std::move(b))
	{
		ok = !kernel_image_parse(&img, bytes.data(), bytes.size(), "test.elf") &&
		     !symbols_load(&syms, &img, nullptr);
	}
	~Image()
	{
		symbols_free(&syms);
		kernel_image_close(&img);
	}
};

// The offset of section `name` in an ELF64 file, or 0.
size_t section_offset64(const std::vector<uint8_t> &b, const char *name, uint64_t *size)
{
	Elf64_Ehdr eh;
	memcpy(&eh, b.data(), sizeof(eh));
	std::vector<Elf64_Shdr> sh(eh.e_shnum);
	memcpy(sh.data(), b.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
	const char *strs = reinterpret_cast<const char *>(b.data() + sh[eh.e_shstrndx].sh_offset);
	for (const auto &s : sh)
		if (!strcmp(strs + s.sh_name, name)) {
			*size = s.sh_size;
			return s.sh_offset;
		}
	return 0;
}

TEST(TrampolineRegion, TestImagesReserveOne)
{
	for (const char *arch : { "x86_64", "i386" }) {
		Image im(read_file_bytes(image_path(arch)));
		struct tramp_region r;
		ASSERT_TRUE(im.ok) << arch;
		ASSERT_EQ(tramp_region_find(&r, &im.img, &im.syms), 0) << et_last_error();
		EXPECT_NE(std::string(r.desc).find(TRAMP_REGION_SECTION), std::string::npos);
		EXPECT_GE(r.size, 4096u);
		EXPECT_EQ(r.vaddr & 0xfff, 0u);
	}
}

TEST(TrampolineRegion, RefusesAReservedRegionTheGuestUses)
{
	auto bytes = read_file_bytes(image_path("x86_64"));
	uint64_t size = 0;
	size_t off = section_offset64(bytes, TRAMP_REGION_SECTION, &size);
	ASSERT_NE(off, 0u);
	bytes[off + size / 2] = 0x90; // something lives there now
	Image im(bytes);
	struct tramp_region r;
	ASSERT_TRUE(im.ok);
	EXPECT_EQ(tramp_region_find(&r, &im.img, &im.syms), -1);
	EXPECT_NE(std::string(et_last_error()).find("not unused"), std::string::npos)
		<< et_last_error();
}

TEST(TrampolineRegion, DebianKernelUsesTheTextRodataGap)
{
	std::string dir = debian_kernel_dir();
	if (!file_exists(dir + "/vmlinuz"))
		GTEST_SKIP() << "no " << dir << "/vmlinuz (run images/fetch-debian-kernel.sh)";
	struct kernel_image img = {};
	struct symbols syms = {};
	struct tramp_region r;
	ASSERT_EQ(kernel_image_open(&img, (dir + "/vmlinuz").c_str()), 0) << et_last_error();
	ASSERT_EQ(symbols_load(&syms, &img, nullptr), 0) << et_last_error();
	ASSERT_EQ(tramp_region_find(&r, &img, &syms), 0) << et_last_error();
	EXPECT_NE(std::string(r.desc).find("between .text and .rodata"), std::string::npos)
		<< r.desc;
	// _etext to the 2 MiB-aligned __start_rodata.
	uint64_t etext = 0, rodata = 0;
	ASSERT_EQ(symbols_addr(&syms, "_etext", &etext), 0);
	ASSERT_EQ(symbols_addr(&syms, "__start_rodata", &rodata), 0);
	EXPECT_EQ(r.vaddr, etext);
	EXPECT_EQ(r.vaddr + r.size, rodata);
	EXPECT_EQ(rodata % (2 << 20), 0u);
	symbols_free(&syms);
	kernel_image_close(&img);
}

class TrampolineLayout : public ::testing::Test {
protected:
	void SetUp() override
	{
		ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0);
		region = { 0xffffffff80200000ull, 0x200000, 64 * 1024, "test region" };
	}
	void TearDown() override
	{
		trampolines_free(&tr);
		guest_mem_free(&mem);
	}
	struct patched_site site(uint64_t paddr)
	{
		struct patched_site s = {};
		const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
		s.paddr = paddr;
		s.vaddr = paddr + (region.vaddr - region.paddr);
		memcpy(s.orig, nop5, 5);
		memcpy(s.patch, nop5, 5);
		s.patch[0] = 0xcc;
		return s;
	}
	static int32_t rel32(const struct patched_site &s)
	{
		int32_t rel;
		memcpy(&rel, &s.patch[1], 4);
		return rel;
	}
	struct guest_mem mem;
	struct tramp_region region;
	struct trampolines tr = {};
};

TEST_F(TrampolineLayout, PlansInstallsAndRoutes)
{
	ASSERT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), 0) << et_last_error();
	const struct tramp_template *t = tr.tpl;
	EXPECT_EQ(tr.capacity, (region.size - t->size) / 32);
	ASSERT_EQ(trampolines_install(&tr, &mem), 0);

	auto *b = static_cast<struct et_tramp_batch *>(guest_mem_ptr(&mem, tr.base + t->header, 64));
	EXPECT_EQ(b->magic, ET_TB_MAGIC);
	EXPECT_EQ(b->records, 64u);
	EXPECT_EQ(b->cursor, -(int64_t)tr.capacity * 32);
	// The template as it is, but for the displacements that reach the
	// records' end, those into the blob (the several-vCPU entry's cursor;
	// the plain one finds its header rip-relatively), and the distance
	// between batches (none with one).
	std::vector<uint8_t> want(t->bytes, t->bytes + t->header);
	auto add = [&](const uint32_t *relocs, size_t nr, uint64_t value) {
		for (size_t i = 0; i < nr; i++) {
			uint32_t disp;
			memcpy(&disp, &want[relocs[i]], 4);
			disp += (uint32_t)value;
			memcpy(&want[relocs[i]], &disp, 4);
		}
	};
	add(t->end_relocs, t->nr_end_relocs, tr.end_vaddr);
	add(t->base_relocs, t->nr_base_relocs, region.vaddr);
	EXPECT_EQ(tr.nr_batches, 1u);
	EXPECT_EQ(tr.stride, 0u);
	for (size_t i = 0; i < t->nr_stride_relocs; i++)
		memset(&want[t->stride_relocs[i]], 0, 4);
	EXPECT_EQ(tr.end_vaddr, region.vaddr + t->size + tr.capacity * 32);
	EXPECT_EQ(memcmp(guest_mem_ptr(&mem, tr.base, t->header), want.data(), t->header), 0);

	struct patched_site s = site(0x100000);
	ASSERT_TRUE(tramp_route_site(&tr, &s, false, &mem));
	EXPECT_EQ(s.kind, PATCH_CALL);
	EXPECT_EQ(s.patch[0], 0xe8);
	EXPECT_EQ(s.vaddr + 5 + (int64_t)rel32(s), region.vaddr + t->record_entry);

	// A site whose virtual alias differs from the region's cannot be
	// reached by the same rel32 in every phase.
	struct patched_site odd = site(0x100000);
	odd.vaddr += 0x1000;
	EXPECT_FALSE(tramp_route_site(&tr, &odd, false, &mem));
	EXPECT_EQ(odd.kind, PATCH_INT3);
}

TEST_F(TrampolineLayout, OneshotSlotsCallTheOneshotEntryAndKeepTheOriginalBytes)
{
	ASSERT_EQ(trampolines_plan(&tr, &region, 64, 2, 0), 0) << et_last_error();
	ASSERT_EQ(trampolines_install(&tr, &mem), 0);
	struct patched_site a = site(0x100000), b = site(0x100040), c = site(0x100080);
	b.orig[4] = 0x42; // distinguishable bytes

	ASSERT_TRUE(tramp_route_site(&tr, &a, true, &mem));
	ASSERT_TRUE(tramp_route_site(&tr, &b, true, &mem));
	EXPECT_FALSE(tramp_route_site(&tr, &c, true, &mem)) << "only two slots";

	uint64_t slot = b.vaddr + 5 + (int64_t)rel32(b) - tr.virt_offset;
	EXPECT_EQ(slot, tr.slots_paddr + TRAMP_SLOT_BYTES);
	auto *p = static_cast<uint8_t *>(guest_mem_ptr(&mem, slot, TRAMP_SLOT_BYTES));
	int32_t rel;
	memcpy(&rel, p + 1, 4);
	EXPECT_EQ(p[0], 0xe8);
	EXPECT_EQ(slot + 5 + (int64_t)rel, tr.base + tr.tpl->oneshot_entry);
	EXPECT_EQ(memcmp(p + 5, b.orig, 5), 0);
	// Slots sit after the records, inside the region.
	EXPECT_GE(tr.slots_paddr, tr.base + tr.tpl->size + tr.capacity * 32);
	EXPECT_EQ(tr.slots_paddr % 4096, 0u) << "slots are code: a page apart from the records";
	EXPECT_LE(tr.slots_paddr + 2 * TRAMP_SLOT_BYTES, region.paddr + region.size);
}

TEST_F(TrampolineLayout, RefusesARegionTooSmall)
{
	region.size = 256;
	EXPECT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), -1);
	EXPECT_NE(std::string(et_last_error()).find("holds too little"), std::string::npos);
	region.size = 64 * 1024;
	EXPECT_EQ(trampolines_plan(&tr, &region, 64, 10000, 0), -1) << "no room for the slots";
}

// --cpus N: a batch per vCPU, each a share of the region, page-aligned
// and stride bytes apart; sites call the entry that picks one by TSC_AUX.
TEST_F(TrampolineLayout, SeveralVcpusGetABatchEach)
{
	ASSERT_EQ(trampolines_plan_batches(&tr, &region, 64, 0, 0, 4), 0) << et_last_error();
	EXPECT_EQ(tr.nr_batches, 4u);
	EXPECT_EQ(tr.stride % 4096, 0u);
	EXPECT_LE(4 * tr.stride, region.size);
	EXPECT_GE(tr.stride, tr.tpl->size + tr.capacity * 32);
	EXPECT_EQ(tr.capacity, (region.size / 4 - tr.tpl->size) / 32);
	ASSERT_EQ(trampolines_install(&tr, &mem), 0);
	EXPECT_EQ(trampolines_record_entry(&tr), region.vaddr + tr.tpl->smp_record_entry);
	// The code's imul gets the stride; vCPU 3's batch is its own.
	uint32_t imm;
	memcpy(&imm, guest_mem_ptr(&mem, tr.base + tr.tpl->stride_relocs[0], 4), 4);
	EXPECT_EQ(imm, tr.stride);
	struct trampolines v3;
	ASSERT_EQ(trampolines_batch_view(&tr, 3, &v3, &mem), 0) << et_last_error();
	auto *b = static_cast<struct et_tramp_batch *>(
		guest_mem_ptr(&mem, tr.base + 3 * tr.stride + tr.tpl->header, 64));
	EXPECT_EQ(b->magic, ET_TB_MAGIC);
	EXPECT_EQ(b->cursor, -(int64_t)tr.capacity * 32);
	EXPECT_EQ(trampolines_batch_view(&tr, 4, &v3, &mem), -1) << "only 4 batches";

	// Too many to fit: a one-line error that says so.
	EXPECT_EQ(trampolines_plan_batches(&tr, &region, 64, 0, 0, 64), -1);
	EXPECT_NE(std::string(et_last_error()).find("holds too little for 64 vCPUs' batches"),
		  std::string::npos)
		<< et_last_error();
	// Not with oneshot slots (one per site, not per vCPU).
	EXPECT_EQ(trampolines_plan_batches(&tr, &region, 64, 10, 0, 2), -1);
	EXPECT_NE(std::string(et_last_error()).find("--oneshot"), std::string::npos);
}

// The i386 smp entry as installed for 2 vCPUs, read back with capstone:
// the imul multiplies TSC_AUX by the stride, the xadd reserves from batch
// 0's cursor (plus that), and the four stores put tsc low and high, ip
// and parent ip at 0, 4, 8 and 16 of the record (struct et_ring_record),
// ip last, each from the records' end plus the two offsets.
TEST_F(TrampolineLayout, I386SeveralVcpuEntryAddressesItsOwnBatchAndTheRecordLayout)
{
	region = { 0xc0200000ull, 0x200000, 64 * 1024, "test region" };
	ASSERT_EQ(trampolines_plan_batches(&tr, &region, 32, 0, 0, 2), 0) << et_last_error();
	ASSERT_EQ(tr.nr_batches, 2u);
	ASSERT_EQ(trampolines_install(&tr, &mem), 0);
	const struct tramp_template *t = tr.tpl;
	EXPECT_EQ(trampolines_record_entry(&tr), region.vaddr + t->smp_record_entry);
	struct trampolines v1;
	ASSERT_EQ(trampolines_batch_view(&tr, 1, &v1, &mem), 0) << et_last_error();

	csh cs;
	cs_insn *insn = nullptr;
	ASSERT_EQ(cs_open(CS_ARCH_X86, CS_MODE_32, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	const uint8_t *code =
		static_cast<const uint8_t *>(guest_mem_ptr(&mem, tr.base, t->header));
	size_t n = cs_disasm(cs, code + t->smp_record_entry, t->header - t->smp_record_entry,
			     region.vaddr + t->smp_record_entry, 0, &insn);
	int64_t imul = -1, xadd_disp = -1;
	std::vector<std::pair<int64_t, unsigned>> stores; // displacement, source register
	for (size_t i = 0; i < n && strcmp(insn[i].mnemonic, "ret"); i++) {
		const cs_x86 &x = insn[i].detail->x86;
		if (!strcmp(insn[i].mnemonic, "imul") && x.op_count == 3)
			imul = x.operands[2].imm;
		if (!strcmp(insn[i].mnemonic, "xadd")) {
			EXPECT_EQ(x.operands[0].mem.base, X86_REG_ECX);
			xadd_disp = (uint32_t)x.operands[0].mem.disp;
		}
		if (!strcmp(insn[i].mnemonic, "mov") && x.op_count == 2 &&
		    x.operands[0].type == X86_OP_MEM && x.operands[0].mem.index == X86_REG_EBX) {
			EXPECT_EQ(x.operands[0].mem.base, X86_REG_ECX);
			stores.emplace_back((uint32_t)x.operands[0].mem.disp, x.operands[1].reg);
		}
	}
	cs_free(insn, n);
	cs_close(&cs);
	EXPECT_EQ(imul, (int64_t)tr.stride);
	EXPECT_EQ(xadd_disp, (int64_t)(region.vaddr + t->header + offsetof(struct et_tramp_batch, cursor)));
	const int64_t end = (int64_t)(uint32_t)tr.end_vaddr;
	ASSERT_EQ(stores.size(), 4u);
	EXPECT_EQ(stores[0], std::make_pair(end + (int64_t)offsetof(et_ring_record, tsc), (unsigned)X86_REG_EAX));
	EXPECT_EQ(stores[1], std::make_pair(end + (int64_t)offsetof(et_ring_record, tsc) + 4, (unsigned)X86_REG_EDX));
	EXPECT_EQ(stores[2], std::make_pair(end + (int64_t)offsetof(et_ring_record, parent_ip), (unsigned)X86_REG_EAX));
	EXPECT_EQ(stores[3], std::make_pair(end + (int64_t)offsetof(et_ring_record, ip), (unsigned)X86_REG_EAX));
	// vCPU 1's batch: stride bytes on, a header of its own, emptied.
	auto *b = static_cast<struct et_tramp_batch *>(
		guest_mem_ptr(&mem, tr.base + tr.stride + t->header, 64));
	EXPECT_EQ(b->magic, ET_TB_MAGIC);
	EXPECT_EQ((int32_t)b->cursor, -(int32_t)tr.capacity * 32);
	// A record made there (the epoch's first slot, the cursor moved past
	// it as the 32-bit xadd does) is drained from vCPU 1's view.
	auto *r = static_cast<struct et_ring_record *>(
		guest_mem_ptr(&mem, tr.base + tr.stride + t->size, 32));
	r->tsc = 77;
	r->parent_ip = 0xc0100010;
	r->ip = 0xc0100005;
	b->cursor = (uint32_t)(-(int32_t)(tr.capacity - 1) * 32);
	std::vector<et_ring_record> got;
	EXPECT_EQ(trampolines_batch_take(&v1, &mem,
					 [](void *ctx, const struct et_ring_record *rec) {
						 static_cast<std::vector<et_ring_record> *>(ctx)
							 ->push_back(*rec);
					 },
					 &got),
		  1);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].tsc, 77u);
	EXPECT_EQ(got[0].ip, 0xc0100005u);
	EXPECT_EQ(got[0].parent_ip, 0xc0100010u);
}

TEST_F(TrampolineLayout, BatchSizeIsCapped)
{
	ASSERT_EQ(trampolines_plan(&tr, &region, 32, 0, 100), 0);
	EXPECT_EQ(tr.capacity, 100u);
}

// A trampoline's moves, done by hand: reserve a record (the xadd), fill it
// (tsc, parent, ip last), and what a drain takes.
class TrampolineBatch : public TrampolineLayout {
protected:
	void SetUp() override
	{
		TrampolineLayout::SetUp();
		ASSERT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), 0) << et_last_error();
		ASSERT_EQ(trampolines_install(&tr, &mem), 0);
	}
	struct et_tramp_batch *header()
	{
		return static_cast<struct et_tramp_batch *>(
			guest_mem_ptr(&mem, tr.base + tr.tpl->header, sizeof(struct et_tramp_batch)));
	}
	struct et_ring_record *slot(int64_t off)
	{
		return static_cast<struct et_ring_record *>(guest_mem_ptr(
			&mem, tr.base + tr.tpl->size + tr.capacity * 32 + (uint64_t)off, 32));
	}
	int64_t reserve()
	{
		int64_t old = header()->cursor;
		header()->cursor = old + 32;
		return old;
	}
	void fill(int64_t off, uint64_t tsc)
	{
		struct et_ring_record *r = slot(off);
		r->tsc = tsc;
		r->parent_ip = 0x1234;
		r->ip = 0xffffffff80100005ull + tsc;
	}
	static void collect(void *ctx, const struct et_ring_record *r)
	{
		static_cast<std::vector<uint64_t> *>(ctx)->push_back(r->tsc);
	}
	int64_t take(std::vector<uint64_t> *into)
	{
		into->clear();
		return trampolines_batch_take(&tr, &mem, collect, into);
	}
	std::vector<uint64_t> got;
};

TEST_F(TrampolineBatch, CompleteRecordsAreTakenAndTheirSlotsFreed)
{
	EXPECT_EQ(header()->cursor, -(int64_t)tr.capacity * 32);
	EXPECT_EQ(header()->start, header()->cursor);
	EXPECT_FALSE(trampolines_batch_dirty(&tr, &mem));
	for (uint64_t i = 1; i <= 3; i++)
		fill(reserve(), i);
	EXPECT_TRUE(trampolines_batch_dirty(&tr, &mem));
	EXPECT_EQ(take(&got), 3);
	EXPECT_EQ(got, (std::vector<uint64_t>{ 1, 2, 3 }));
	EXPECT_EQ(slot(-(int64_t)tr.capacity * 32)->ip, 0u) << "taken slots are empty again";
	trampolines_batch_reset(&tr, &mem, 10);
	EXPECT_EQ(header()->cursor, -10 * 32) << "an allowance of 10 records";
	EXPECT_FALSE(trampolines_batch_dirty(&tr, &mem));
}

TEST_F(TrampolineBatch, ABatchTheGuestOverwroteIsRefused)
{
	struct et_tramp_batch *b = header();
	int64_t start = b->cursor;

	// Each time: two records in, then garbage; the take reads nothing.
	const std::vector<std::pair<const char *, std::function<void()>>> garbage = {
		{ "cursor below the epoch", [&] { b->cursor = start - 32; } },
		{ "cursor off a record", [&] { b->cursor += 8; } },
		{ "cursor far past the end", [&] { b->cursor = 17 * 32; } },
		{ "cursor over unwritten slots", [&] { b->cursor = start + 40 * 32; } },
		{ "magic", [&] { b->magic = 0; } },
		{ "record offset (would read the code)", [&] { b->records = 0; } },
	};
	for (const auto &g : garbage) {
		fill(reserve(), 1);
		fill(reserve(), 2);
		g.second();
		EXPECT_EQ(take(&got), -1) << g.first;
		EXPECT_TRUE(got.empty()) << g.first;
		EXPECT_EQ(slot(start)->ip, 0u) << g.first << ": the guest's leftovers are wiped";
		trampolines_batch_reset(&tr, &mem, tr.capacity);
		EXPECT_EQ(b->magic, ET_TB_MAGIC);
		EXPECT_EQ(b->records, 64u);
		EXPECT_EQ(b->cursor, start);
	}
	// Capacity is the VMM's note to itself: the code never reads it.
	fill(reserve(), 7);
	b->capacity = 0;
	EXPECT_EQ(take(&got), 1);
}

// A host wait learnt at an exit is placed between the calls the batch
// holds (vmm/trace/host_waits.c): their TSCs in a window, read without
// taking them; nothing from a batch no trampoline could have left.
TEST_F(TrampolineBatch, TscsInAWindowAreReadWithoutTakingTheRecords)
{
	for (uint64_t tsc : { 100, 200, 300, 400, 500 })
		fill(reserve(), tsc);
	reserve(); // reserved, not yet complete: no TSC yet
	uint64_t out[8];
	ASSERT_EQ(trampolines_batch_tscs(&tr, &mem, 200, 400, out, 8), 3u);
	EXPECT_EQ(std::vector<uint64_t>(out, out + 3), (std::vector<uint64_t>{ 200, 300, 400 }));
	EXPECT_EQ(trampolines_batch_tscs(&tr, &mem, 0, UINT64_MAX, out, 2), 5u)
		<< "how many there are, though only 2 fit";
	EXPECT_EQ(take(&got), 5) << "still in the batch";

	trampolines_batch_reset(&tr, &mem, tr.capacity);
	fill(reserve(), 600);
	header()->cursor += 8; // off a record: the guest's
	EXPECT_EQ(trampolines_batch_tscs(&tr, &mem, 0, UINT64_MAX, out, 8), 0u);
}

// An interrupt nested in a recording: the outer call has reserved its
// record but not written it when the inner one completes, and a drain
// comes. The outer record stays reserved until a later drain finds it
// complete, and no later call gets its slot.
TEST_F(TrampolineBatch, AnUnfinishedRecordKeepsItsSlotUntilItIsComplete)
{
	int64_t outer = reserve();
	fill(reserve(), 2); // the nested call
	EXPECT_EQ(take(&got), 1);
	EXPECT_EQ(got, std::vector<uint64_t>{ 2 });
	EXPECT_EQ(tr.nr_pending, 1u);
	trampolines_batch_reset(&tr, &mem, tr.capacity);
	EXPECT_EQ(header()->cursor, outer + 32) << "the new epoch starts past it";
	int64_t later = reserve();
	EXPECT_NE(later, outer);
	fill(outer, 1); // the interrupted call goes on
	fill(later, 3);
	EXPECT_EQ(take(&got), 2);
	EXPECT_EQ(got, (std::vector<uint64_t>{ 1, 3 })) << "the older reservation first";
	EXPECT_EQ(tr.nr_pending, 0u);
	trampolines_batch_reset(&tr, &mem, tr.capacity);
	EXPECT_EQ(header()->cursor, -(int64_t)tr.capacity * 32) << "the whole batch again";
}

// The worst case: the interrupted call holds the last record and the
// nested ones find the batch full. The batch has no room until that record
// is complete (the VMM records those calls itself, from the full exit),
// then all of it again.
TEST_F(TrampolineBatch, AnUnfinishedLastRecordLeavesNoRoomUntilItIsComplete)
{
	for (uint64_t i = 0; i + 1 < tr.capacity; i++)
		fill(reserve(), 10 + i);
	int64_t last = reserve();
	EXPECT_EQ(last, -32);
	EXPECT_EQ(reserve(), 0) << "a nested call finds the batch full";
	EXPECT_EQ(take(&got), (int64_t)tr.capacity - 1);
	trampolines_batch_reset(&tr, &mem, tr.capacity);
	EXPECT_EQ(header()->cursor, 0) << "no room: every call exits";
	EXPECT_EQ(take(&got), 0);
	trampolines_batch_reset(&tr, &mem, tr.capacity);
	fill(last, 5);
	EXPECT_TRUE(trampolines_batch_dirty(&tr, &mem));
	EXPECT_EQ(take(&got), 1);
	EXPECT_EQ(got, std::vector<uint64_t>{ 5 });
	trampolines_batch_reset(&tr, &mem, tr.capacity);
	EXPECT_EQ(header()->cursor, -(int64_t)tr.capacity * 32);
}

// The code the VMM installs addresses the records' end it planned: every
// record store's displacement is the end plus its field, ip stored last;
// i386 also reaches its cursor absolutely.
TEST_F(TrampolineLayout, InstalledCodeAddressesTheRecordsEnd)
{
	for (unsigned cls : { 64u, 32u }) {
		trampolines_free(&tr);
		ASSERT_EQ(trampolines_plan(&tr, &region, cls, 0, 0), 0) << et_last_error();
		ASSERT_EQ(trampolines_install(&tr, &mem), 0);
		const uint8_t *code = static_cast<const uint8_t *>(guest_mem_ptr(&mem, tr.base, tr.tpl->header));
		csh cs;
		cs_insn *insn = nullptr;
		ASSERT_EQ(cs_open(CS_ARCH_X86, cls == 64 ? CS_MODE_64 : CS_MODE_32, &cs), CS_ERR_OK);
		cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
		size_t n = cs_disasm(cs, code + tr.tpl->record_entry, tr.tpl->header - tr.tpl->record_entry,
				     tr.base + tr.virt_offset + tr.tpl->record_entry, 0, &insn);
		std::vector<int64_t> fields;
		bool cursor = false;
		for (size_t i = 0; i < n && strcmp(insn[i].mnemonic, "ret"); i++) {
			const cs_x86 &x = insn[i].detail->x86;
			for (int k = 0; k < x.op_count; k++) {
				if (x.operands[k].type != X86_OP_MEM)
					continue;
				const x86_op_mem &m = x.operands[k].mem;
				if (m.base == X86_REG_RCX || m.base == X86_REG_ECX)
					fields.push_back((int64_t)(uint32_t)m.disp -
							 (int64_t)(uint32_t)tr.end_vaddr);
				if (!strcmp(insn[i].mnemonic, "xadd"))
					cursor = cls == 64 ? m.base == X86_REG_RIP
							   : (uint32_t)m.disp == (uint32_t)(tr.base + tr.virt_offset +
										tr.tpl->header + ET_TB_OFF_CURSOR);
			}
		}
		cs_free(insn, n);
		cs_close(&cs);
		EXPECT_EQ(fields, (std::vector<int64_t>{ 0, 4, 16, 8 })) << tr.tpl->arch;
		EXPECT_TRUE(cursor) << tr.tpl->arch;
	}
}

// x86-64 code reaches the records by a sign-extended 32-bit displacement:
// a region elsewhere cannot take trampolines (breakpoints then).
TEST_F(TrampolineLayout, RefusesARegionOutOfDisplacementReach)
{
	region.vaddr = 0xffff888000200000ull; // a direct-map address
	EXPECT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), -1);
	EXPECT_NE(std::string(et_last_error()).find("top and bottom 2 GiB"), std::string::npos)
		<< et_last_error();
	region.vaddr = region.paddr; // the bottom 2 GiB
	EXPECT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), 0) << et_last_error();
}

TEST_F(TrampolineLayout, RemoveRestoresTheRegionBytes)
{
	auto *r = static_cast<uint8_t *>(guest_mem_ptr(&mem, region.paddr, region.size));
	for (uint64_t i = 0; i < region.size; i++)
		r[i] = (uint8_t)(i * 7);
	std::vector<uint8_t> before(r, r + region.size);
	ASSERT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), 0);
	ASSERT_EQ(trampolines_install(&tr, &mem), 0);
	EXPECT_NE(memcmp(r, before.data(), region.size), 0);
	trampolines_remove(&tr, &mem);
	EXPECT_EQ(memcmp(r, before.data(), region.size), 0);
}

// A region found in a gap is all fill bytes: the VMM keeps one byte, not a
// copy of the region (2 MiB on the Debian kernel), and restores it exactly.
TEST_F(TrampolineLayout, AFillOnlyRegionIsRestoredWithoutACopy)
{
	auto *r = static_cast<uint8_t *>(guest_mem_ptr(&mem, region.paddr, region.size));
	memset(r, 0xcc, region.size);
	ASSERT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), 0);
	ASSERT_EQ(trampolines_install(&tr, &mem), 0);
	EXPECT_EQ(tr.saved, nullptr);
	EXPECT_EQ(tr.saved_fill, 0xcc);
	EXPECT_NE(r[0], 0xcc); // the code is in
	trampolines_remove(&tr, &mem);
	for (uint64_t i = 0; i < region.size; i++)
		ASSERT_EQ(r[i], 0xcc) << i;
	// One byte that differs anywhere, even the last, means a full copy.
	r[region.size - 1] = 0x90;
	std::vector<uint8_t> before(r, r + region.size);
	trampolines_free(&tr);
	ASSERT_EQ(trampolines_plan(&tr, &region, 64, 0, 0), 0);
	ASSERT_EQ(trampolines_install(&tr, &mem), 0);
	EXPECT_NE(tr.saved, nullptr);
	trampolines_remove(&tr, &mem);
	EXPECT_EQ(memcmp(r, before.data(), region.size), 0);
}

TEST(SitePatch, CallsOutOfReachStayBreakpoints)
{
	struct patched_site s = {};
	s.vaddr = 0xffffffff81000000ull;
	s.patch[0] = 0xcc;
	s.kind = PATCH_INT3;
	EXPECT_FALSE(site_patch_set_call(&s, 0x700000000000ull)); // far beyond 2 GiB
	EXPECT_EQ(s.kind, PATCH_INT3);
	EXPECT_TRUE(site_patch_set_call(&s, s.vaddr - 0x1000));
	EXPECT_EQ(s.kind, PATCH_CALL);
}

TEST(SitePatch, RestoresOnlyItsOwnPatch)
{
	struct guest_mem mem;
	ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0);
	const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	struct patched_site sites[3] = {};
	for (int i = 0; i < 3; i++) {
		sites[i].paddr = 0x1000 + 16 * i;
		sites[i].vaddr = sites[i].paddr;
		memcpy(sites[i].orig, nop5, 5);
		memcpy(sites[i].patch, nop5, 5);
		ASSERT_TRUE(site_patch_set_call(&sites[i], 0x8000));
		ASSERT_EQ(guest_mem_write(&mem, sites[i].paddr, nop5, 5), 0);
	}
	struct site_patches sp = {};
	sp.sites = sites;
	sp.nr = 3;
	site_patches_arm(&sp, &mem);
	EXPECT_EQ(sp.armed, 3u);
	EXPECT_EQ(sp.nr_call, 3u);

	auto *code = static_cast<uint8_t *>(guest_mem_ptr(&mem, 0x1000, 48));
	memcpy(code + 16, nop5, 5); // a oneshot trampoline put site 1 back
	code[32] = 0x90;	     // the guest rewrote site 2
	site_patches_disarm_all(&sp, &mem);
	EXPECT_EQ(sp.armed, 0u);
	EXPECT_EQ(sp.modified_by_guest, 1u);
	EXPECT_EQ(memcmp(code, nop5, 5), 0);
	EXPECT_EQ(memcmp(code + 16, nop5, 5), 0);
	EXPECT_EQ(code[32], 0x90) << "left alone";
	guest_mem_free(&mem);
}

} // namespace
