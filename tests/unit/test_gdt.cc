// SPDX-License-Identifier: MIT
// Boot GDT bytes and the CPU state for a PVH entry, checked bit for bit
// against the values the PVH ABI and the reference VMMs use.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/shim/earlytrace_shim.h"

TEST(Gdt, EncodesFlatDescriptors)
{
	EXPECT_EQ(gdt_entry(GDT_FLAGS_CODE32, 0, 0xfffff), 0x00cf9b000000ffffull);
	EXPECT_EQ(gdt_entry(GDT_FLAGS_DATA32, 0, 0xfffff), 0x00cf93000000ffffull);
	EXPECT_EQ(gdt_entry(GDT_FLAGS_TSS32, 0, 0x67), 0x00008b0000000067ull);
	EXPECT_EQ(gdt_entry(GDT_FLAGS_CODE64, 0, 0xfffff), 0x00af9b000000ffffull);
	// The limit field is 20 bits: a 32-bit limit encodes the same.
	EXPECT_EQ(gdt_entry(GDT_FLAGS_CODE32, 0, 0xffffffff), 0x00cf9b000000ffffull);
	EXPECT_EQ(gdt_entry(GDT_FLAGS_DATA32, 0x12345678, 0xabcde), 0x12ca93345678bcdeull);
}

TEST(Gdt, DecodesToKvmSegment)
{
	struct kvm_segment cs = gdt_to_kvm_segment(0x00cf9b000000ffffull, 1);

	EXPECT_EQ(cs.base, 0u);
	EXPECT_EQ(cs.limit, 0xffffffffu); // scaled by G: KVM wants bytes
	EXPECT_EQ(cs.selector, 8);
	EXPECT_EQ(cs.type, 0xb);
	EXPECT_EQ(cs.present, 1);
	EXPECT_EQ(cs.s, 1);
	EXPECT_EQ(cs.db, 1);
	EXPECT_EQ(cs.l, 0);
	EXPECT_EQ(cs.g, 1);
	EXPECT_EQ(cs.unusable, 0);

	struct kvm_segment tr = gdt_to_kvm_segment(0x00008b0000000067ull, 3);
	EXPECT_EQ(tr.limit, 0x67u);
	EXPECT_EQ(tr.g, 0);
	EXPECT_EQ(tr.selector, 0x18);
	EXPECT_EQ(tr.type, 0xb);
	EXPECT_EQ(tr.s, 0);

	struct kvm_segment absent = gdt_to_kvm_segment(0, 0);
	EXPECT_EQ(absent.unusable, 1);

	struct kvm_segment based = gdt_to_kvm_segment(0x12ca93345678bcdeull, 2);
	EXPECT_EQ(based.base, 0x12345678u);
	EXPECT_EQ(based.limit, 0xabcdefffu);
}

class BootCpu : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0); }
	void TearDown() override { guest_mem_free(&mem); }
	struct guest_mem mem;
};

TEST_F(BootCpu, PvhEntryState)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;

	memset(&sregs, 0xaa, sizeof(sregs));
	ASSERT_EQ(boot_cpu_setup_pvh(&mem, 0x100123, LAYOUT_PVH_START_INFO, &regs, &sregs), 0);

	// Registers: entry point, start_info in ebx, interrupts off.
	EXPECT_EQ(regs.rip, 0x100123u);
	EXPECT_EQ(regs.rbx, (uint64_t)LAYOUT_PVH_START_INFO);
	EXPECT_EQ(regs.rflags, 2u);
	EXPECT_EQ(regs.rax, 0u);

	// Protected mode, paging off, no PAE/long mode.
	EXPECT_EQ(sregs.cr0 & (X86_CR0_PE | X86_CR0_PG), X86_CR0_PE);
	EXPECT_EQ(sregs.cr4, 0u);
	EXPECT_EQ(sregs.efer, 0u);

	// The GDT in guest memory matches what the segment registers claim.
	uint64_t gdt[4];
	ASSERT_EQ(guest_mem_read(&mem, LAYOUT_BOOT_GDT, gdt, sizeof(gdt)), 0);
	EXPECT_EQ(gdt[0], 0u);
	EXPECT_EQ(gdt[1], 0x00cf9b000000ffffull);
	EXPECT_EQ(gdt[2], 0x00cf93000000ffffull);
	EXPECT_EQ(gdt[3], 0x00008b0000000067ull);
	EXPECT_EQ(sregs.gdt.base, (uint64_t)LAYOUT_BOOT_GDT);
	EXPECT_EQ(sregs.gdt.limit, 31);
	EXPECT_EQ(sregs.idt.base, (uint64_t)LAYOUT_BOOT_IDT);
	EXPECT_EQ(sregs.idt.limit, 7);

	EXPECT_EQ(sregs.cs.selector, 0x08);
	EXPECT_EQ(sregs.cs.db, 1);
	EXPECT_EQ(sregs.cs.limit, 0xffffffffu);
	for (const struct kvm_segment *s : { &sregs.ds, &sregs.es, &sregs.fs, &sregs.gs, &sregs.ss }) {
		EXPECT_EQ(s->selector, 0x10);
		EXPECT_EQ(s->base, 0u);
		EXPECT_EQ(s->limit, 0xffffffffu);
		EXPECT_EQ(s->type, 3);
	}
	EXPECT_EQ(sregs.tr.selector, 0x18);
	EXPECT_EQ(sregs.tr.limit, 0x67u);
	EXPECT_EQ(sregs.ldt.unusable, 1);
}

TEST_F(BootCpu, FpuResetState)
{
	struct kvm_fpu fpu;

	boot_cpu_setup_fpu(&fpu);
	EXPECT_EQ(fpu.fcw, 0x37f);
	EXPECT_EQ(fpu.mxcsr, 0x1f80u);
}

TEST(Disasm, DecodesInEachMode)
{
	const uint8_t mov_cr0[] = { 0x0f, 0x22, 0xc0 };
	const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const uint8_t bad[] = { 0x0f }; // an opcode cut short
	char text[64];

	EXPECT_EQ(x86_disasm_one(mov_cr0, sizeof(mov_cr0), 0x1000, X86_CODE32, text, sizeof(text)), 3u);
	EXPECT_STREQ(text, "mov cr0, eax");
	EXPECT_EQ(x86_disasm_one(mov_cr0, sizeof(mov_cr0), 0x1000, X86_CODE64, text, sizeof(text)), 3u);
	EXPECT_STREQ(text, "mov cr0, rax");
	EXPECT_EQ(x86_disasm_one(nop5, sizeof(nop5), 0, X86_CODE64, text, sizeof(text)), 5u);
	EXPECT_STREQ(text, "nop dword ptr [rax + rax]");
	EXPECT_EQ(x86_disasm_one(bad, sizeof(bad), 0, X86_CODE64, text, sizeof(text)), 0u);
}

TEST(CpuModel, HidesDocumentedFeaturesAndAddsHypervisorBit)
{
	struct kvm_cpuid2 *cpuid = cpuid_alloc(3);
	ASSERT_NE(cpuid, nullptr);
	struct kvm_cpuid_entry2 *leaf1 = cpuid_entry(cpuid, 0);
	struct kvm_cpuid_entry2 *topo = cpuid_entry(cpuid, 1);
	struct kvm_cpuid_entry2 *xsave = cpuid_entry(cpuid, 2);
	leaf1->function = 1;
	leaf1->ecx = (1u << 13) | (1u << 26) | (1u << 27) | 1u; // cx16 xsave osxsave sse3
	leaf1->ebx = 0xff000800;
	topo->function = 0xb;
	topo->flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
	topo->edx = 77;
	xsave->function = 0xd;
	xsave->flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
	xsave->eax = 7;
	EXPECT_EQ(cpuid_find_entry(cpuid, 0xd, 0), xsave);
	EXPECT_EQ(cpuid_find_entry(cpuid, 0xd, 1), nullptr);
	EXPECT_EQ(cpuid_entry(cpuid, 3), nullptr);

	const struct cpu_model *host = cpu_model_find("host");
	ASSERT_NE(host, nullptr);
	cpu_model_apply(host, cpuid, 0);
	EXPECT_EQ(leaf1->ecx, (1u << 13) | (1u << 26) | (1u << 27) | 1u | (1u << 31));
	EXPECT_EQ(leaf1->ebx >> 24, 0u);	     // APIC ID of vCPU 0
	EXPECT_EQ((leaf1->ebx >> 16) & 0xff, 1u); // one logical CPU
	EXPECT_EQ(topo->edx, 0u);

	const struct cpu_model *pvm = cpu_model_find("nested-pvm");
	ASSERT_NE(pvm, nullptr);
	cpu_model_apply(pvm, cpuid, 0);
	EXPECT_EQ(leaf1->ecx, 1u | (1u << 31));
	EXPECT_EQ(xsave->eax, 0u);
	for (unsigned i = 0; i < pvm->nr_hidden; i++) {
		EXPECT_NE(pvm->hidden[i].reason, nullptr);
		EXPECT_GT(strlen(pvm->hidden[i].reason), 0u);
	}
	EXPECT_EQ(cpu_model_find("pentium"), nullptr);
	free(cpuid);
}

TEST(Decode, MemoryOperandsOfInstructionsTheVmmFinishes)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	memset(&regs, 0, sizeof(regs));
	memset(&sregs, 0, sizeof(sregs));
	regs.rip = 0xffffffff81000000ull;
	regs.rsp = 0xffffc90000093b80ull;
	regs.rax = 0x1000;
	regs.rcx = 3;
	sregs.fs.base = 0x7f0000000000ull;
	struct x86_decoded d;

	// ldmxcsr [rsp + 4], as in Linux's kernel_fpu_begin_mask()
	const uint8_t ld[] = { 0x0f, 0xae, 0x54, 0x24, 0x04 };
	ASSERT_EQ(x86_decode_for_emulation(ld, sizeof(ld), X86_CODE64, &regs, &sregs, &d), 0) << et_last_error();
	EXPECT_EQ(d.id, X86_INSN_LDMXCSR);
	EXPECT_EQ(d.len, 5u);
	EXPECT_TRUE(d.has_mem);
	EXPECT_EQ(d.mem_size, 4u);
	EXPECT_EQ(d.linear, regs.rsp + 4);

	// stmxcsr [rip + 0x10]: relative to the next instruction
	const uint8_t st_rip[] = { 0x0f, 0xae, 0x1d, 0x10, 0x00, 0x00, 0x00 };
	ASSERT_EQ(x86_decode_for_emulation(st_rip, sizeof(st_rip), X86_CODE64, &regs, &sregs, &d), 0);
	EXPECT_EQ(d.id, X86_INSN_STMXCSR);
	EXPECT_EQ(d.linear, regs.rip + 7 + 0x10);

	// stmxcsr fs:[rax + rcx*8 - 8]
	const uint8_t st_fs[] = { 0x64, 0x0f, 0xae, 0x5c, 0xc8, 0xf8 };
	ASSERT_EQ(x86_decode_for_emulation(st_fs, sizeof(st_fs), X86_CODE64, &regs, &sregs, &d), 0);
	EXPECT_EQ(d.linear, sregs.fs.base + 0x1000 + 3 * 8 - 8);

	// 32-bit: ds base applies and the address wraps at 4 GiB
	sregs.ds.base = 0x100;
	regs.rax = 0xffffffff;
	const uint8_t ld32[] = { 0x0f, 0xae, 0x10 }; // ldmxcsr [eax]
	ASSERT_EQ(x86_decode_for_emulation(ld32, sizeof(ld32), X86_CODE32, &regs, &sregs, &d), 0);
	EXPECT_EQ(d.linear, 0xffu);

	const uint8_t nop[] = { 0x90 };
	ASSERT_EQ(x86_decode_for_emulation(nop, sizeof(nop), X86_CODE64, &regs, &sregs, &d), 0);
	EXPECT_EQ(d.id, X86_INSN_OTHER);
	EXPECT_FALSE(d.has_mem);
	const uint8_t cut[] = { 0x0f, 0xae };
	EXPECT_EQ(x86_decode_for_emulation(cut, sizeof(cut), X86_CODE64, &regs, &sregs, &d), -1);
}

namespace {
const char *thunk_at(void *, uint64_t addr)
{
	return addr == 0x2000 ? "__x86_return_thunk" : addr == 0x3000 ? "do_things" : nullptr;
}
} // namespace

TEST(FentryCheck, OnlyABareReturnLetsCallsBeSkipped)
{
	const uint8_t ret[] = { 0xc3, 0xcc };
	const uint8_t endbr_ret[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xc3 };
	const uint8_t jmp_thunk[] = { 0xe9, 0xfb, 0x0f, 0x00, 0x00 };	 // jmp 0x2000 from 0x1000
	const uint8_t jmp_other[] = { 0xe9, 0xfb, 0x1f, 0x00, 0x00 };	 // jmp 0x3000
	const uint8_t does_work[] = { 0x55, 0x48, 0x89, 0xe5, 0xc3 }; // push rbp; ...
	EXPECT_TRUE(x86_fentry_only_returns(ret, sizeof(ret), 0x1000, X86_CODE64, thunk_at, nullptr));
	EXPECT_TRUE(x86_fentry_only_returns(endbr_ret, sizeof(endbr_ret), 0x1000, X86_CODE64, thunk_at, nullptr));
	EXPECT_TRUE(x86_fentry_only_returns(jmp_thunk, sizeof(jmp_thunk), 0x1000, X86_CODE64, thunk_at, nullptr));
	EXPECT_FALSE(x86_fentry_only_returns(jmp_other, sizeof(jmp_other), 0x1000, X86_CODE64, thunk_at, nullptr));
	EXPECT_FALSE(x86_fentry_only_returns(does_work, sizeof(does_work), 0x1000, X86_CODE64, thunk_at, nullptr));
	EXPECT_FALSE(x86_fentry_only_returns(ret, 0, 0x1000, X86_CODE64, thunk_at, nullptr));
}
