/* SPDX-License-Identifier: MIT */
/*
 * __fentry__ for x86_64 guests: patched sites (patch.c) call it as the
 * first instruction of a traced function, before its prologue.
 *
 * On entry:
 *   (%rsp)  = the site's return address = function start + 5
 *   8(%rsp) = the traced function's own return address (its parent)
 *   rdi, rsi, rdx, rcx, r8, r9 = the traced function's arguments, rax = the
 *   vector-register count of a varargs call, r10 = a static chain; none of
 *   them has been saved by anyone yet.
 *
 * Why this is enough to preserve: the C recorder follows the SysV ABI, so
 * it keeps rbx, rbp, rsp, r12-r15 itself; we save every other general
 * register (rax, rcx, rdx, rsi, rdi, r8-r11) and the flags. guestlib is
 * built with -mgeneral-regs-only, so the recorder touches no x87/SSE/AVX
 * state and there is none to save. DF is 0 at any call (ABI), as the C code
 * expects. The stack below the traced function's rsp is free: the call
 * that entered it already overwrote any red zone, and kernels use none.
 *
 * Interrupts are off while recording (pushfq; cli ... popfq restores IF):
 * the ring has one producer, and an interrupt handler whose sites are
 * patched must not interleave its record with ours. NMIs are not covered.
 */
	.text
	.globl __fentry__
	.type __fentry__, @function
	.p2align 4
__fentry__:
	pushfq
	cli
	pushq %rax
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	/* 10 quadwords pushed: the site's return address is at 80(%rsp), and
	 * rsp is 16-byte aligned again (it was at the call into us, since the
	 * traced function's entry rsp is 8 mod 16), as the C call needs. */
	rdtsc
	shlq $32, %rdx
	orq %rax, %rdx			/* arg 3: tsc */
	movq 80(%rsp), %rdi
	subq $5, %rdi			/* arg 1: ip = the site = function start */
	movq 88(%rsp), %rsi		/* arg 2: parent_ip */
	call et_fentry_record
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rax
	popfq
	ret
	.size __fentry__, . - __fentry__

	.section .note.GNU-stack, "", @progbits
