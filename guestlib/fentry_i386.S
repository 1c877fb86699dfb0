/* SPDX-License-Identifier: MIT */
/*
 * __fentry__ for i386 guests: patched sites (patch.c) call it as the first
 * instruction of a traced function, before its prologue.
 *
 * On entry:
 *   (%esp)  = the site's return address = function start + 5
 *   4(%esp) = the traced function's own return address (its parent)
 *   8(%esp) ... = its stack arguments (cdecl), which we never touch;
 *   eax, edx, ecx = its register arguments under -mregparm=3 (Linux i386).
 *
 * Why this is enough to preserve: the C recorder follows the i386 cdecl
 * ABI, so it keeps ebx, esi, edi, ebp and esp itself; we save eax, ecx, edx
 * and the flags. guestlib is built without x87/MMX/SSE (-mno-80387
 * -mno-mmx -mno-sse), so there is no FPU state to save. DF is 0 at any
 * call (ABI).
 *
 * Interrupts are off while recording (pushfl; cli ... popfl restores IF):
 * the ring has one producer, and an interrupt handler whose sites are
 * patched must not interleave its record with ours. NMIs are not covered.
 */
	.text
	.globl __fentry__
	.type __fentry__, @function
	.p2align 4
__fentry__:
	pushfl
	cli
	pushl %eax
	pushl %ecx
	pushl %edx
	/* et_fentry_record(ip, parent_ip, tsc), cdecl: pushed right to left. */
	rdtsc
	pushl %edx			/* tsc, high half */
	pushl %eax			/* tsc, low half */
	/* 6 dwords pushed: the site's return address is at 24(%esp), the
	 * parent at 28(%esp). Loaded through ecx rather than "pushl
	 * 28(%esp)" to keep the offsets obvious. */
	movl 28(%esp), %ecx
	pushl %ecx			/* parent_ip */
	movl 28(%esp), %ecx		/* the return address, one slot further now */
	subl $5, %ecx
	pushl %ecx			/* ip = the site = function start */
	call et_fentry_record
	addl $16, %esp
	popl %edx
	popl %ecx
	popl %eax
	popfl
	ret
	.size __fentry__, . - __fentry__

	.section .note.GNU-stack, "", @progbits
