/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot_cpu.h"

#include <string.h>

#include "arch/x86/cpu_model.h"
#include "arch/x86/gdt.h"
#include "arch/x86/layout.h"
#include "arch/x86/msr.h"

_Static_assert(LAYOUT_BOOT_GDT + 8 * LAYOUT_BOOT_GDT_ENTRIES <= LAYOUT_BOOT_IDT,
	       "boot GDT runs into the IDT");

enum { GDT_NULL, GDT_CODE, GDT_DATA, GDT_TSS };
/* The Linux boot protocol's selectors: __BOOT_CS 0x10, __BOOT_DS 0x18. */
enum { GDT64_CODE = 2, GDT64_DATA = 3, GDT64_TSS = 4 };

/* Writes the boot GDT and the empty IDT, and loads CS, every data segment
 * and TR from the GDT's entries code, data and tss. */
static int load_boot_tables(const struct guest_mem *gm, const uint64_t *gdt, unsigned entries,
			    unsigned code, unsigned data, unsigned tss, struct kvm_sregs *sregs)
{
	const uint64_t idt = 0;
	struct kvm_segment data_seg;

	if (guest_mem_write(gm, LAYOUT_BOOT_GDT, gdt, entries * sizeof(gdt[0])) ||
	    guest_mem_write(gm, LAYOUT_BOOT_IDT, &idt, sizeof(idt)))
		return -1;
	sregs->gdt.base = LAYOUT_BOOT_GDT;
	sregs->gdt.limit = (uint16_t)(entries * sizeof(gdt[0]) - 1);
	sregs->idt.base = LAYOUT_BOOT_IDT;
	sregs->idt.limit = sizeof(idt) - 1;
	/* No LDT: mark it unusable rather than leave reset-state garbage. */
	memset(&sregs->ldt, 0, sizeof(sregs->ldt));
	sregs->ldt.unusable = 1;

	sregs->cs = gdt_to_kvm_segment(gdt[code], code);
	data_seg = gdt_to_kvm_segment(gdt[data], data);
	sregs->ds = sregs->es = sregs->fs = sregs->gs = sregs->ss = data_seg;
	sregs->tr = gdt_to_kvm_segment(gdt[tss], tss);
	return 0;
}

int boot_cpu_setup_pvh(const struct guest_mem *gm, uint32_t entry, uint32_t start_info,
		       struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	const uint64_t gdt[4] = {
		[GDT_NULL] = 0,
		[GDT_CODE] = gdt_entry(GDT_FLAGS_CODE32, 0, 0xfffff),
		[GDT_DATA] = gdt_entry(GDT_FLAGS_DATA32, 0, 0xfffff),
		/* The PVH ABI asks for a TSS with base 0 and limit 0x67. */
		[GDT_TSS] = gdt_entry(GDT_FLAGS_TSS32, 0, 0x67),
	};

	if (load_boot_tables(gm, gdt, 4, GDT_CODE, GDT_DATA, GDT_TSS, sregs))
		return -1;

	sregs->cr0 = X86_CR0_PE | X86_CR0_ET;
	sregs->cr3 = 0;
	sregs->cr4 = 0;
	sregs->efer = 0;

	memset(regs, 0, sizeof(*regs));
	regs->rflags = X86_RFLAGS_RESERVED; /* IF=0, TF=0, VM=0 */
	regs->rip = entry;
	regs->rbx = start_info;
	regs->rsp = LAYOUT_BOOT_STACK_TOP;
	return 0;
}

int boot_cpu_setup_long64(const struct guest_mem *gm, uint64_t entry, uint64_t boot_params,
			  uint64_t cr3, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	/* A 64-bit TSS descriptor takes two slots; the upper one stays 0. */
	const uint64_t gdt[6] = {
		[GDT64_CODE] = gdt_entry(GDT_FLAGS_CODE64, 0, 0xfffff),
		[GDT64_DATA] = gdt_entry(GDT_FLAGS_DATA32, 0, 0xfffff),
		[GDT64_TSS] = gdt_entry(GDT_FLAGS_TSS32, 0, 0x67),
	};

	if (load_boot_tables(gm, gdt, 6, GDT64_CODE, GDT64_DATA, GDT64_TSS, sregs))
		return -1;

	sregs->cr0 = X86_CR0_PE | X86_CR0_ET | X86_CR0_NE | X86_CR0_PG;
	sregs->cr3 = cr3;
	sregs->cr4 = X86_CR4_PAE;
	sregs->efer = X86_EFER_LME | X86_EFER_LMA;

	memset(regs, 0, sizeof(*regs));
	regs->rflags = X86_RFLAGS_RESERVED;
	regs->rip = entry;
	regs->rsi = boot_params;
	regs->rsp = LAYOUT_BOOT_STACK_TOP;
	return 0;
}

void boot_cpu_setup_fpu(struct kvm_fpu *fpu)
{
	memset(fpu, 0, sizeof(*fpu));
	fpu->fcw = 0x37f;     /* all x87 exceptions masked, 64-bit precision */
	fpu->mxcsr = 0x1f80;  /* all SSE exceptions masked */
}

unsigned boot_cpu_msrs(struct kvm_msr_entry *out, unsigned max)
{
	const struct kvm_msr_entry all[BOOT_CPU_MAX_MSRS] = {
		{ .index = X86_MSR_IA32_MISC_ENABLE, .data = X86_MSR_MISC_ENABLE_FAST_STRING },
		{ .index = X86_MSR_MTRR_DEF_TYPE, .data = X86_MTRR_DEF_TYPE_ENABLE_WB },
		{ .index = X86_MSR_K7_HWCR, .data = X86_MSR_K7_HWCR_TSC_FREQ_SEL },
	};
	/* The guest sees the host's vendor (every CPU model passes it). */
	unsigned n = cpu_host_is_amd() ? 3 : 2;

	if (n > max)
		n = max;
	memcpy(out, all, n * sizeof(all[0]));
	return n;
}
