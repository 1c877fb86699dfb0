/* SPDX-License-Identifier: MIT */
/*
 * The application processors' way in (smp: images/x86_64/smp.c). The BSP
 * copies the bytes between smp_ap_start and smp_ap_end to SMP_AP_PA, fills
 * in the data at their end and sends INIT-SIPI-SIPI with vector
 * SMP_AP_PA >> 12: the AP starts here in real mode with cs = SMP_AP_PA >> 4,
 * switches on PAE, the BSP's page tables, long mode and paging in one go,
 * and far-jumps straight into a 64-bit code segment of the BSP's GDT,
 * where it sets its GS base (its per-CPU base, smp=ring) and its stack.
 */
#include "smp_layout.h"

#include "long_mode.h"
#include "arch/x86/msr.h"

/* An address inside the copy, as the AP sees it once segments are flat. */
#define AT(sym) (SMP_AP_PA + (sym) - smp_ap_start)

	.section .rodata
	.balign 16
	.globl smp_ap_start, smp_ap_end
	.code16
smp_ap_start:
	cli
	cld
	mov %cs, %ax			/* SMP_AP_PA >> 4: the data below by offset */
	mov %ax, %ds
	lgdtl smp_ap_gdt_desc - smp_ap_start
	ENABLE_LONG_MODE movl smp_ap_cr3 - smp_ap_start, %eax
	ljmpl $GDT_CODE64, $AT(smp_ap_64)

	.code64
smp_ap_64:
	mov $GDT_DATA, %eax
	mov %eax, %ds
	mov %eax, %es
	mov %eax, %ss
	xor %eax, %eax
	mov %eax, %fs
	mov %eax, %gs
	/* The per-CPU base before anything traced runs (smp=ring: the
	 * AP's first call may already be recorded through it). */
	mov $X86_MSR_GS_BASE, %ecx
	mov AT(smp_ap_gs_base), %eax
	mov AT(smp_ap_gs_base) + 4, %edx
	wrmsr
	mov AT(smp_ap_stack), %rsp
	mov AT(smp_ap_entry), %rax
	jmp *%rax

	.balign 8
	.globl smp_ap_gdt_desc, smp_ap_cr3, smp_ap_stack, smp_ap_entry, smp_ap_gs_base
smp_ap_gdt_desc:
	.word 0
	.long 0				/* the BSP's GDT, physical */
	.word 0
smp_ap_cr3:
	.quad 0
smp_ap_stack:
	.quad 0				/* this AP's stack top, virtual */
smp_ap_entry:
	.quad 0				/* smp_ap_main, virtual */
smp_ap_gs_base:
	.quad 0				/* this AP's GS base (smp=ring; else 0) */
smp_ap_end:

	.section .note.GNU-stack, "", @progbits
