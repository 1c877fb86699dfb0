/* SPDX-License-Identifier: MIT */
/*
 * Entering long mode, for the boot processor (entry.S) and the
 * application processors (smp_boot.S): the control bits, the two GDT
 * selectors both use, and the steps with paging still off.
 */
#ifndef IMAGES_X86_64_LONG_MODE_H
#define IMAGES_X86_64_LONG_MODE_H

#define CR0_PE 0x00000001
#define CR0_PG 0x80000000
#define CR4_PAE 0x00000020
#define MSR_EFER 0xc0000080
#define EFER_LME 0x00000100

#define GDT_CODE64 0x08
#define GDT_DATA 0x10

#ifdef __ASSEMBLER__
/* PAE, then the top page table (load_cr3: an instruction that puts its
 * physical address in %eax), EFER.LME, then paging and protection on.
 * Compatibility mode until the caller's far jump to GDT_CODE64. */
.macro ENABLE_LONG_MODE load_cr3:vararg
	mov %cr4, %eax
	or $CR4_PAE, %eax
	mov %eax, %cr4
	\load_cr3
	mov %eax, %cr3
	mov $MSR_EFER, %ecx
	rdmsr
	or $EFER_LME, %eax
	wrmsr
	mov %cr0, %eax
	or $(CR0_PG | CR0_PE), %eax
	mov %eax, %cr0
.endm
#endif

#endif /* IMAGES_X86_64_LONG_MODE_H */
