/* SPDX-License-Identifier: MIT */
/*
 * The #PF entry of nest=<case> (nest_cpu.c): saves what C may change,
 * calls nest_on_page_fault(cr2, interrupted rip), and returns to the
 * faulting instruction, which runs again.
 */

	.text
	.code64

	.globl nest_pf_entry
	.type nest_pf_entry, @function
	.balign 16
nest_pf_entry:
	/* The CPU pushed ss, rsp, rflags, cs, rip and an error code, with
	 * rsp 16-byte aligned first: 48 bytes. */
	push %rax
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	cld				/* iretq puts the interrupted DF back */
	mov %cr2, %rdi
	mov 80(%rsp), %rsi		/* rip: past 9 registers and the error code */
	sub $8, %rsp			/* 16-byte aligned for the call */
	call nest_on_page_fault
	add $8, %rsp
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	pop %rax
	add $8, %rsp			/* the error code */
	iretq
	.size nest_pf_entry, . - nest_pf_entry

	.section .note.GNU-stack, "", @progbits
