/* SPDX-License-Identifier: MIT */
/*
 * regcheck for x86_64 (see common/regcheck.h): a traced function whose
 * site a tracer executes with every register and flag loaded with a
 * pattern, and the caller that loads them. Hand-written so that nothing
 * but the site runs between the two snapshots. Snapshots are reached
 * rip-relative, which needs no register.
 */
#include "regcheck.h"

#define BEFORE(slot) (regcheck_before + (slot) * RC_WORD)(%rip)
#define AFTER(slot) (regcheck_after + (slot) * RC_WORD)(%rip)

/* reg = seed ^ k: a value of its own in every register, changing with seed. */
.macro LOAD reg, k
	movabs $\k, %\reg
	xor regcheck_seed(%rip), %\reg
.endm

.macro SAVE_ALL buf
	mov %rax, (\buf + RC_RAX * RC_WORD)(%rip)
	mov %rbx, (\buf + RC_RBX * RC_WORD)(%rip)
	mov %rcx, (\buf + RC_RCX * RC_WORD)(%rip)
	mov %rdx, (\buf + RC_RDX * RC_WORD)(%rip)
	mov %rsi, (\buf + RC_RSI * RC_WORD)(%rip)
	mov %rdi, (\buf + RC_RDI * RC_WORD)(%rip)
	mov %rbp, (\buf + RC_RBP * RC_WORD)(%rip)
	mov %r8, (\buf + RC_R8 * RC_WORD)(%rip)
	mov %r9, (\buf + RC_R9 * RC_WORD)(%rip)
	mov %r10, (\buf + RC_R10 * RC_WORD)(%rip)
	mov %r11, (\buf + RC_R11 * RC_WORD)(%rip)
	mov %r12, (\buf + RC_R12 * RC_WORD)(%rip)
	mov %r13, (\buf + RC_R13 * RC_WORD)(%rip)
	mov %r14, (\buf + RC_R14 * RC_WORD)(%rip)
	mov %r15, (\buf + RC_R15 * RC_WORD)(%rip)
	mov %rsp, (\buf + RC_RSP * RC_WORD)(%rip)
.endm

	.text
	.code64

/*
 * The fentry site exactly as gcc's -mfentry -mnop-mcount -mrecord-mcount
 * make it: the 5-byte nop as the first instruction, its address in
 * __mcount_loc, and a FUNC symbol with a size, so the VMM finds, verifies
 * and patches it like any other site. mov, push and pop leave the flags
 * alone, so the snapshot sees them as the site left them.
 */
	.globl regcheck_target
	.type regcheck_target, @function
	.balign 16
regcheck_target:
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	.pushsection __mcount_loc, "a", @progbits
	.balign 8
	.quad regcheck_target
	.popsection
	SAVE_ALL regcheck_after
	pushfq
	popq AFTER(RC_FLAGS)
	ret
	.size regcheck_target, . - regcheck_target

/* void regcheck_call(uintptr_t seed, uintptr_t flags) */
	.globl regcheck_call
	.type regcheck_call, @function
	.balign 16
regcheck_call:
	push %rbp
	push %rbx
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rdi, regcheck_seed(%rip)
	/* The checked flags from the argument, IF and the rest as they are. */
	pushfq
	pop %rax
	and $~RC_FLAGS_CHECKED, %rax
	and $RC_FLAGS_CHECKED, %rsi
	or %rsi, %rax
	mov %rax, regcheck_flags(%rip)

	LOAD rax, 0x0101010101010101
	LOAD rbx, 0x0202020202020202
	LOAD rcx, 0x0303030303030303
	LOAD rdx, 0x0404040404040404
	LOAD rsi, 0x0505050505050505
	LOAD rdi, 0x0606060606060606
	LOAD rbp, 0x0707070707070707
	LOAD r8, 0x0808080808080808
	LOAD r9, 0x0909090909090909
	LOAD r10, 0x0a0a0a0a0a0a0a0a
	LOAD r11, 0x0b0b0b0b0b0b0b0b
	LOAD r12, 0x0c0c0c0c0c0c0c0c
	LOAD r13, 0x0d0d0d0d0d0d0d0d
	LOAD r14, 0x0e0e0e0e0e0e0e0e
	LOAD r15, 0x0f0f0f0f0f0f0f0f
	SAVE_ALL regcheck_before
	/* Flags last: the xors above set them. */
	pushq regcheck_flags(%rip)
	popfq
	pushfq
	popq BEFORE(RC_FLAGS)
	call regcheck_target

	cld				/* the ABI's DF = 0 on return */
	/* regcheck_target sees rsp below the return address. */
	subq $RC_WORD, BEFORE(RC_RSP)
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbx
	pop %rbp
	ret
	.size regcheck_call, . - regcheck_call

	.section .bss
	.balign 8
	.globl regcheck_before
	.type regcheck_before, @object
regcheck_before:
	.skip RC_NR_SLOTS * RC_WORD
	.size regcheck_before, . - regcheck_before
	.globl regcheck_after
	.type regcheck_after, @object
regcheck_after:
	.skip RC_NR_SLOTS * RC_WORD
	.size regcheck_after, . - regcheck_after
regcheck_seed:
	.skip 8
regcheck_flags:
	.skip 8

	.section .note.GNU-stack, "", @progbits
