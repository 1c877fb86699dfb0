/* SPDX-License-Identifier: MIT */
/*
 * reset=bios: restart through the BIOS as Linux's machine_real_restart()
 * does for reboot=b (arch/x86/kernel/reboot.c and realmode/rm/reboot.S):
 * leave long mode (x86_64) or paging (i386), drop to 16-bit protected mode,
 * then real mode, write the CMOS shutdown status byte, and far-jump to the
 * BIOS reset vector F000:FFF0, where firmware would reset the machine.
 *
 * The code from rm_stub_start on runs at RM_STUB_PHYS, below 64 KiB so its
 * real-mode offsets fit in 16 bits, where reset_bios() copies it: every
 * absolute address in it is RM_STUB_PHYS + (label - rm_stub_start). The
 * page at 0x4000 is free once the kernel has booted (the loader's
 * structures are at 0x500, 0x6000 and up). Both kernels reach it through
 * their identity map.
 */
#define RM_STUB_PHYS 0x4000
#define RM(label) (RM_STUB_PHYS + (label) - rm_stub_start)

#define SEL_CODE32 0x08
#define SEL_DATA32 0x10
#define SEL_CODE16 0x18
#define SEL_DATA16 0x20

#define CR0_PE 0x00000001
#define CR0_PG 0x80000000
#define MSR_EFER 0xc0000080
#define EFER_LME 0x00000100

#define CMOS_INDEX 0x70
#define CMOS_DATA 0x71
#define CMOS_SHUTDOWN_NMI_OFF 0x8f /* register 0x0f, NMIs masked */

	.text
	.globl reset_bios
	.type reset_bios, @function
reset_bios:
	cli
	cld
#ifdef __x86_64__
	.code64
	lea rm_stub_start(%rip), %rsi
	mov $RM_STUB_PHYS, %edi
	mov $(rm_stub_end - rm_stub_start), %ecx
	rep movsb
	lgdt RM(rm_gdt_desc)
	/* A far return into the 32-bit code segment: compatibility mode. */
	pushq $SEL_CODE32
	pushq $RM(rm_stub32)
	lretq
#else
	.code32
	mov $rm_stub_start, %esi
	mov $RM_STUB_PHYS, %edi
	mov $(rm_stub_end - rm_stub_start), %ecx
	rep movsb
	lgdt RM(rm_gdt_desc)
	ljmp $SEL_CODE32, $RM(rm_stub32)
#endif
	.size reset_bios, . - reset_bios

	.section .rodata
	.balign 16
rm_stub_start:
	.code32
rm_stub32:
	mov $SEL_DATA32, %eax
	mov %eax, %ds
	mov %eax, %es
	mov %eax, %ss
	/* Paging off: this leaves long mode, or just paging on i386. */
	mov %cr0, %eax
	and $~CR0_PG, %eax
	mov %eax, %cr0
	xor %eax, %eax
	mov %eax, %cr3
	mov %eax, %cr4
	/* EFER.LME off, so that turning paging on would not re-enter long mode. */
	mov $MSR_EFER, %ecx
	rdmsr
	and $~EFER_LME, %eax
	wrmsr
	/* 16-bit protected mode: 64 KiB segments, as real mode will have. */
	mov $SEL_DATA16, %eax
	mov %eax, %ds
	mov %eax, %es
	mov %eax, %fs
	mov %eax, %gs
	mov %eax, %ss
	ljmp $SEL_CODE16, $RM(rm_stub16)

	.code16
rm_stub16:
	mov %cr0, %eax
	and $~CR0_PE, %eax
	mov %eax, %cr0
	/* Real mode: reload CS with a real-mode segment. */
	ljmp $0, $RM(rm_real)
rm_real:
	xor %ax, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov $RM_STUB_PHYS, %sp
	lidt RM(rm_ivt_desc)
	/* "Shutdown status 0": a normal power-on, as Linux writes it. */
	mov $CMOS_SHUTDOWN_NMI_OFF, %al
	outb %al, $CMOS_INDEX
	xor %al, %al
	outb %al, $CMOS_DATA
	ljmp $0xf000, $0xfff0

	.balign 8
rm_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* SEL_CODE32: flat 32-bit code */
	.quad 0x00cf92000000ffff	/* SEL_DATA32: flat data */
	.quad 0x00009a000000ffff	/* SEL_CODE16: base 0, 64 KiB, 16-bit */
	.quad 0x000092000000ffff	/* SEL_DATA16 */
rm_gdt_end:
rm_gdt_desc:				/* 64-bit lgdt reads an 8-byte base */
	.word rm_gdt_end - rm_gdt - 1
	.long RM(rm_gdt)
	.long 0
rm_ivt_desc:				/* the real-mode interrupt vector table */
	.word 0x3ff
	.long 0
rm_stub_end:

	.section .note.GNU-stack, "", @progbits
