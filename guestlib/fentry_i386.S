/* SPDX-License-Identifier: MIT */
/*
 * __fentry__ for i386 guests: the same as fentry_x86_64.S (read that
 * first), with 32-bit registers.
 *
 * On entry:
 *   (%esp)  = the site's return address = function start + 5
 *   4(%esp) = the traced function's own return address (its parent)
 *   8(%esp) ... = its stack arguments (cdecl), which we never touch;
 *   eax, edx, ecx = its register arguments under -mregparm=3 (Linux i386).
 * It changes only eax, ecx, edx, esi, edi and the flags, and puts them
 * back. The ring's 64-bit head moves in its low half only (a 32-bit xadd),
 * and records get the low halves of ip and parent_ip (et_ring_init zeroed
 * the high halves).
 *
 * 30 instructions from the site's call to the return.
 *
 * et_fentry_percpu reads the calling CPU's ring from the per-CPU variable
 * %fs:et_fentry_ring (FS base + &et_fentry_ring: Linux i386 keeps its
 * per-CPU base in FS), otherwise the same.
 */
#include <earlytrace/abi.h>

/* The handler: RING_LOAD loads the ring's address into esi. */
.macro FENTRY name, ring_load:vararg
	.globl \name
	.type \name, @function
	.p2align 4
\name:
	pushfl
	pushl %eax
	pushl %edx
	pushl %ecx
	pushl %esi
	pushl %edi
	/* 6 dwords pushed: the site's return address is at 24(%esp). */
	rdtsc					/* edx:eax: the TSC */
	\ring_load
	movl $1, %ecx
	xaddl %ecx, ET_RING_OFF_HEAD(%esi)	/* ecx: our record's index */
	movl %ecx, %edi
	andl ET_RING_OFF_SLOT_MASK(%esi), %edi
	shll $ET_RING_RECORD_SHIFT, %edi	/* edi: its slot, in bytes */
	movl %eax, ET_RING_HEADER_SIZE + 0(%esi,%edi)	/* tsc */
	movl %edx, ET_RING_HEADER_SIZE + 4(%esi,%edi)
	movl 24(%esp), %eax
	subl $5, %eax
	movl %eax, ET_RING_HEADER_SIZE + 8(%esi,%edi)	/* ip = the site */
	movl 28(%esp), %eax
	movl %eax, ET_RING_HEADER_SIZE + 16(%esi,%edi)	/* parent_ip */
	movl $ET_RING_GUEST_KIND_FLAGS, ET_RING_HEADER_SIZE + 28(%esi,%edi)
	movl %ecx, ET_RING_HEADER_SIZE + 24(%esi,%edi)	/* cpu = index, last: complete */
	popl %edi
	popl %esi
	popl %ecx
	popl %edx
	popl %eax
	popfl
	ret
	.size \name, . - \name
.endm

	.text
	FENTRY __fentry__, movl et_fentry_ring, %esi
	FENTRY et_fentry_percpu, movl %fs:et_fentry_ring, %esi

	.section .note.GNU-stack, "", @progbits
