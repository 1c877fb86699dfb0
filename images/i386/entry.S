/* SPDX-License-Identifier: MIT */
/*
 * PVH entry of the i386 test kernel. The VMM starts us in 32-bit protected
 * mode with paging off, flat segments and ebx = physical address of struct
 * hvm_start_info. The kernel is linked at its physical address, so symbols
 * need no translation here.
 */
#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define BOOT_STACK_SIZE 16384
#define GDT_CODE32 0x08
#define GDT_DATA 0x10

	/* Tells a PVH loader where to enter; see kernel.ld for the PT_NOTE. */
	.pushsection .note.Xen, "a", @note
	.balign 4
	.long 2f - 1f			/* namesz */
	.long 4f - 3f			/* descsz */
	.long XEN_ELFNOTE_PHYS32_ENTRY
1:	.asciz "Xen"
2:	.balign 4
3:	.long pvh_start
4:	.balign 4
	.popsection

	.section .text.boot, "ax"
	.code32
	.globl pvh_start
	.type pvh_start, @function
pvh_start:
	cli
	cld
	/* PVH promises flat segments but not a GDT we may rely on later (the
	 * #GP gate in paging.c needs one), so bring our own. */
	lgdt boot_gdt_desc
	ljmp $GDT_CODE32, $1f
1:	mov $GDT_DATA, %eax
	mov %eax, %ds
	mov %eax, %es
	mov %eax, %ss
	mov %eax, %fs
	mov %eax, %gs
	/* PVH leaves esp undefined. */
	mov $boot_stack_top, %esp
	mov %ebx, %esi

	/* The loader may not zero .bss; C expects zeroed globals. */
	mov $__bss_start, %edi
	mov $__bss_end, %ecx
	sub %edi, %ecx
	shr $2, %ecx
	xor %eax, %eax
	rep stosl

	sub $12, %esp			/* keep the ABI's 16-byte call alignment */
	push %esi			/* boot_main(start_info_pa) */
	call boot_main
2:	cli
	hlt
	jmp 2b
	.size pvh_start, . - pvh_start

	.section .rodata
	.balign 8
boot_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* GDT_CODE32: flat 4 GiB, 32-bit */
	.quad 0x00cf92000000ffff	/* GDT_DATA: flat 4 GiB read/write */
boot_gdt_end:
boot_gdt_desc:
	.word boot_gdt_end - boot_gdt - 1
	.long boot_gdt

	.section .bss
	.balign 16
boot_stack:
	.skip BOOT_STACK_SIZE
boot_stack_top:

	.section .note.GNU-stack, "", @progbits
