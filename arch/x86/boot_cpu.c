/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot_cpu.h"

#include <string.h>

#include "arch/x86/gdt.h"
#include "arch/x86/layout.h"

enum { GDT_NULL, GDT_CODE, GDT_DATA, GDT_TSS };

int boot_cpu_setup_pvh(const struct guest_mem *gm, uint32_t entry, uint32_t start_info,
		       struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	const uint64_t gdt[LAYOUT_BOOT_GDT_ENTRIES] = {
		[GDT_NULL] = 0,
		[GDT_CODE] = gdt_entry(GDT_FLAGS_CODE32, 0, 0xfffff),
		[GDT_DATA] = gdt_entry(GDT_FLAGS_DATA32, 0, 0xfffff),
		/* The PVH ABI asks for a TSS with base 0 and limit 0x67. */
		[GDT_TSS] = gdt_entry(GDT_FLAGS_TSS32, 0, 0x67),
	};
	const uint64_t idt = 0;
	struct kvm_segment data;

	if (guest_mem_write(gm, LAYOUT_BOOT_GDT, gdt, sizeof(gdt)) ||
	    guest_mem_write(gm, LAYOUT_BOOT_IDT, &idt, sizeof(idt)))
		return -1;

	sregs->gdt.base = LAYOUT_BOOT_GDT;
	sregs->gdt.limit = sizeof(gdt) - 1;
	sregs->idt.base = LAYOUT_BOOT_IDT;
	sregs->idt.limit = sizeof(idt) - 1;

	sregs->cs = gdt_to_kvm_segment(gdt[GDT_CODE], GDT_CODE);
	data = gdt_to_kvm_segment(gdt[GDT_DATA], GDT_DATA);
	sregs->ds = sregs->es = sregs->fs = sregs->gs = sregs->ss = data;
	sregs->tr = gdt_to_kvm_segment(gdt[GDT_TSS], GDT_TSS);
	/* No LDT: mark it unusable rather than leave reset-state garbage. */
	memset(&sregs->ldt, 0, sizeof(sregs->ldt));
	sregs->ldt.unusable = 1;

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

void boot_cpu_setup_fpu(struct kvm_fpu *fpu)
{
	memset(fpu, 0, sizeof(*fpu));
	fpu->fcw = 0x37f;     /* all x87 exceptions masked, 64-bit precision */
	fpu->mxcsr = 0x1f80;  /* all SSE exceptions masked */
}
