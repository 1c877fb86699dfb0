/* SPDX-License-Identifier: MIT */
/*
 * Entry points of the x86_64 test kernel, one per boot protocol:
 *
 * - pvh_start (the Xen note's PHYS32_ENTRY): 32-bit protected mode, paging
 *   off, flat segments, ebx = physical address of struct hvm_start_info.
 * - startup_64 (e_entry, like Linux's vmlinux; Documentation/arch/x86/
 *   boot.rst, "64-bit Boot Protocol"): long mode with paging on and an
 *   identity map covering at least the kernel, boot_params and the command
 *   line, a flat GDT with __BOOT_CS = 0x10 and __BOOT_DS = 0x18, interrupts
 *   off, rsi = physical address of struct boot_params, rsp unspecified. It
 *   runs at its physical address; we rely on nothing of the loader's state
 *   past our own far return (page tables, GDT, stack are all ours).
 *
 * Everything is linked at its higher-half address, so until our page tables
 * are loaded this code must use PHYS(symbol), as Linux's head code does.
 * Both entries build the same boot page tables: the first 4 GiB
 * identity-mapped (the code keeps running at its physical address across
 * the switch, and C reaches start_info/boot_params, the command line and
 * modules wherever below 4 GiB the loader put them), and the first 1 GiB
 * again at KERNEL_VIRT_BASE for the kernel proper. One set of page
 * directories serves both maps. Then each calls its C entry (main.c) at its
 * higher-half address.
 *
 * startup_64 comes first in .text, as in Linux, so it is also where the
 * kernel's text starts.
 */
#include "layout.h"
#include "long_mode.h"

#define PHYS(sym) ((sym) - KERNEL_VIRT_BASE)

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define BOOT_STACK_SIZE 16384

#define PTE_PRESENT 0x001
#define PTE_WRITE 0x002
#define PTE_2M 0x080
#define NR_PDS (IDENTITY_MAP_SIZE >> 30)	/* one page directory per GiB */


	/* Tells a PVH loader where to enter; see kernel.ld for the PT_NOTE. */
	.pushsection .note.Xen, "a", @note
	.balign 4
	.long 2f - 1f			/* namesz */
	.long 4f - 3f			/* descsz */
	.long XEN_ELFNOTE_PHYS32_ENTRY
1:	.asciz "Xen"
2:	.balign 4
3:	.long PHYS(pvh_start)
4:	.balign 4
	.popsection

/*
 * Zero .bss and build the boot page tables in it. Assembles to working code
 * both as 32-bit code with paging off (pvh_start) and as 64-bit code on the
 * loader's identity map (startup_64): it only uses eax, ecx and edi (32-bit
 * writes zero the upper halves in long mode) and physical addresses below
 * 4 GiB. Keeps esi/rsi, which holds the loader's pointer.
 */
.macro BUILD_BOOT_PAGE_TABLES
	/* The loader may not zero .bss; the page tables below need zeroes. */
	mov $PHYS(__bss_start), %edi
	mov $PHYS(__bss_end), %ecx
	sub %edi, %ecx
	shr $2, %ecx
	xor %eax, %eax
	rep stosl

	/* Page directories: consecutive 2 MiB pages from physical 0. */
	mov $PHYS(boot_pd), %edi
	mov $(PTE_2M | PTE_WRITE | PTE_PRESENT), %eax
	mov $(NR_PDS * 512), %ecx
1:	mov %eax, (%edi)		/* high dword stays 0: all below 4 GiB */
	add $0x200000, %eax
	add $8, %edi
	loop 1b

	/* Low PDPT: one directory per GiB of the identity map. */
	mov $PHYS(boot_pdpt_low), %edi
	mov $(PHYS(boot_pd) + PTE_WRITE + PTE_PRESENT), %eax
	mov $NR_PDS, %ecx
2:	mov %eax, (%edi)
	add $4096, %eax
	add $8, %edi
	loop 2b

	/* High PDPT: slot 510 is KERNEL_VIRT_BASE, served by the first GiB. */
	movl $(PHYS(boot_pd) + PTE_WRITE + PTE_PRESENT), PHYS(boot_pdpt_high) + 510 * 8

	movl $(PHYS(boot_pdpt_low) + PTE_WRITE + PTE_PRESENT), PHYS(boot_pml4)
	movl $(PHYS(boot_pdpt_high) + PTE_WRITE + PTE_PRESENT), PHYS(boot_pml4) + 511 * 8
.endm

/* Our flat data segment in ds/es/ss, null in fs/gs (64-bit code). */
.macro LOAD_DATA_SEGMENTS
	mov $GDT_DATA, %eax
	mov %eax, %ds
	mov %eax, %es
	mov %eax, %ss
	xor %eax, %eax
	mov %eax, %fs
	mov %eax, %gs
.endm

	.section .text.boot, "ax"

	/* Linux 64-bit boot protocol entry; e_entry is its physical address. */
	.code64
	.globl startup_64
	.type startup_64, @function
startup_64:
	cli
	cld
	BUILD_BOOT_PAGE_TABLES

	/* Our tables map this code at the same (physical) address. */
	mov $PHYS(boot_pml4), %eax
	mov %rax, %cr3
	lgdt PHYS(boot_gdt_desc)

	/*
	 * Load our CS (the loader's is 0x10 in its GDT) and go to the higher
	 * half in one far return; the stack is usable now that the higher
	 * half is mapped.
	 */
	mov $boot_stack_top, %rsp
	pushq $GDT_CODE64
	pushq $startup_64_high
	lretq
startup_64_high:
	LOAD_DATA_SEGMENTS
	mov %rsi, %rdi			/* boot_main_linux64(boot_params_pa) */
	call boot_main_linux64
1:	cli
	hlt
	jmp 1b
	.size startup_64, . - startup_64

	/* PVH entry, named by the Xen note. */
	.code32
	.globl pvh_start
	.type pvh_start, @function
pvh_start:
	cli
	cld
	mov %ebx, %esi			/* start_info, until boot_main */
	BUILD_BOOT_PAGE_TABLES

	ENABLE_LONG_MODE mov $PHYS(boot_pml4), %eax

	/* Still in compatibility mode until CS holds a 64-bit segment. */
	lgdt PHYS(boot_gdt_desc)
	ljmp $GDT_CODE64, $PHYS(pvh_start64)

	.code64
pvh_start64:
	LOAD_DATA_SEGMENTS

	/* Leave the identity map for the addresses we are linked at. */
	movabs $pvh_high64, %rax
	jmp *%rax
pvh_high64:
	mov $boot_stack_top, %rsp
	mov %esi, %edi			/* boot_main(start_info_pa); zero-extends */
	call boot_main
3:	cli
	hlt
	jmp 3b
	.size pvh_start, . - pvh_start

	.section .rodata
	.balign 8
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff	/* GDT_CODE64: present, DPL 0, L */
	.quad 0x00cf92000000ffff	/* GDT_DATA: flat read/write */
boot_gdt_end:
boot_gdt_desc:
	.word boot_gdt_end - boot_gdt - 1
	/* Physical: lgdt runs before paging (PVH) or on the identity map
	 * (startup_64). 32-bit lgdt reads the low 4 bytes, 64-bit all 8. */
	.quad PHYS(boot_gdt)

	.section .bss
	.balign 4096
boot_pml4:
	.skip 4096
boot_pdpt_low:
	.skip 4096
boot_pdpt_high:
	.skip 4096
boot_pd:
	.skip NR_PDS * 4096
	.balign 16
boot_stack:
	.skip BOOT_STACK_SIZE
boot_stack_top:

	.section .note.GNU-stack, "", @progbits
