/* SPDX-License-Identifier: MIT */
/*
 * regcheck for i386 (see common/regcheck.h): a traced function whose site
 * a tracer executes with every register and flag loaded with a pattern,
 * and the caller that loads them. Hand-written so that nothing but the
 * site runs between the two snapshots. The snapshots are reached by
 * absolute address, which needs no register and works in both phases
 * (data stays reachable through the identity map when the code runs at
 * its alias); the call to regcheck_target is rel32, so it runs at whichever
 * address its caller runs at.
 */
#include "regcheck.h"

#define BEFORE(slot) (regcheck_before + (slot) * RC_WORD)
#define AFTER(slot) (regcheck_after + (slot) * RC_WORD)

/* reg = seed ^ k: a value of its own in every register, changing with seed. */
.macro LOAD reg, k
	mov $\k, %\reg
	xor regcheck_seed, %\reg
.endm

.macro SAVE_ALL buf
	mov %eax, (\buf + RC_EAX * RC_WORD)
	mov %ebx, (\buf + RC_EBX * RC_WORD)
	mov %ecx, (\buf + RC_ECX * RC_WORD)
	mov %edx, (\buf + RC_EDX * RC_WORD)
	mov %esi, (\buf + RC_ESI * RC_WORD)
	mov %edi, (\buf + RC_EDI * RC_WORD)
	mov %ebp, (\buf + RC_EBP * RC_WORD)
	mov %esp, (\buf + RC_ESP * RC_WORD)
.endm

	.text
	.code32

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
	.balign 4
	.long regcheck_target
	.popsection
	SAVE_ALL regcheck_after
	pushfl
	popl AFTER(RC_FLAGS)
	ret
	.size regcheck_target, . - regcheck_target

/* void regcheck_call(uintptr_t seed, uintptr_t flags), cdecl */
	.globl regcheck_call
	.type regcheck_call, @function
	.balign 16
regcheck_call:
	push %ebp
	push %ebx
	push %esi
	push %edi
	mov 20(%esp), %eax		/* seed, above 4 saves and the return */
	mov %eax, regcheck_seed
	/* The checked flags from the argument, IF and the rest as they are. */
	pushfl
	pop %eax
	and $~RC_FLAGS_CHECKED, %eax
	mov 24(%esp), %ecx		/* flags */
	and $RC_FLAGS_CHECKED, %ecx
	or %ecx, %eax
	mov %eax, regcheck_flags

	LOAD eax, 0x01010101
	LOAD ebx, 0x02020202
	LOAD ecx, 0x03030303
	LOAD edx, 0x04040404
	LOAD esi, 0x05050505
	LOAD edi, 0x06060606
	LOAD ebp, 0x07070707
	SAVE_ALL regcheck_before
	/* Flags last: the xors above set them. */
	pushl regcheck_flags
	popfl
	pushfl
	popl BEFORE(RC_FLAGS)
	call regcheck_target

	cld				/* the ABI's DF = 0 on return */
	/* regcheck_target sees esp below the return address. */
	subl $RC_WORD, BEFORE(RC_ESP)
	pop %edi
	pop %esi
	pop %ebx
	pop %ebp
	ret
	.size regcheck_call, . - regcheck_call

	.section .bss
	.balign 4
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
	.skip 4
regcheck_flags:
	.skip 4

	.section .note.GNU-stack, "", @progbits
