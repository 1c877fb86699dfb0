/* SPDX-License-Identifier: MIT */
/*
 * Setting CR0.PG, with a way back if the CPU refuses.
 *
 * Not every KVM accepts 32-bit paging: kvm_pvm, for one, runs guests only
 * in 64-bit paging modes and answers a CR0.PG write outside long mode with
 * #GP. Rather than triple-fault, the i386 test kernel then reports that the
 * paging phase is unavailable and finishes normally. paging.c loads an IDT
 * whose only gate is #GP -> paging_gp_trap around the call.
 */

	.text
	.code32

/* int paging_switch_on(uint32_t cr0): 1 once paging is on, 0 on #GP. */
	.globl paging_switch_on
	.type paging_switch_on, @function
paging_switch_on:
	mov 4(%esp), %eax
paging_cr0_write:
	mov %eax, %cr0
	mov $1, %eax
	ret
paging_cr0_refused:
	xor %eax, %eax
	ret
	.size paging_switch_on, . - paging_switch_on

/* #GP handler; the stack holds error code, eip, cs, eflags. */
	.globl paging_gp_trap
	.type paging_gp_trap, @function
paging_gp_trap:
	/* Any other #GP is a bug: escalate to the triple fault it would
	 * have been (the #UD gate is not present). */
	cmpl $paging_cr0_write, 4(%esp)
	jne 1f
	/*
	 * Drop the frame and go on instead of iret: same CS, same stack, and
	 * IF was already clear, so nothing is lost, while kvm_pvm's emulator
	 * cannot iret in this mode.
	 */
	add $16, %esp
	jmp paging_cr0_refused
1:	ud2
	.size paging_gp_trap, . - paging_gp_trap

	.section .note.GNU-stack, "", @progbits
