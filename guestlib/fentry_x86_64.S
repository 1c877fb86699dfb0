/* SPDX-License-Identifier: MIT */
/*
 * __fentry__ for x86_64 guests: patched sites (patch.c) call it as the
 * first instruction of a traced function, before its prologue. It appends
 * one record to the ring et_fentry_ring points to (patch.c: the guest's
 * ring while tracing, else a one-slot sink nobody reads).
 *
 * On entry:
 *   (%rsp)  = the site's return address = function start + 5
 *   8(%rsp) = the traced function's own return address (its parent)
 *   every register holds the traced function's arguments (and rax a
 *   varargs call's vector-register count, r10 a static chain).
 * It changes only rax, rcx, rdx, rsi and the flags, and puts them back.
 * The stack below the traced function's rsp is free: the call that entered
 * it already overwrote any red zone, and kernels use none.
 *
 * Interrupts stay on. A record is reserved with one xadd on the ring's
 * head, so an interrupt or NMI that records while we do gets the next
 * index, and the record's cpu field gets its own index last, which tells a
 * reader it is complete (struct et_ring in abi.h; ring.c reads it).
 *
 * 29 instructions from the site's call to the return (i386: 30).
 *
 * et_fentry_percpu is the same for per-CPU tracing (patch.c,
 * et_trace_start_percpu): it finds the calling CPU's ring through a
 * per-CPU variable, %gs:et_fentry_ring(%rip) (GS base + &et_fentry_ring,
 * as Linux reads its per-CPU variables), in the same one load: no lock,
 * no exit, and the same 29 instructions. Each ring has one CPU writing it,
 * so the xadd needs no lock prefix there either.
 */
#include <earlytrace/abi.h>

/*
 * The handler: RING_LOAD is the one instruction that loads the ring's
 * address into rsi.
 */
.macro FENTRY name, ring_load:vararg
	.globl \name
	.type \name, @function
	.p2align 4
\name:
	pushfq					/* xadd, and, shl, sub set the flags */
	pushq %rax
	pushq %rdx
	pushq %rcx
	pushq %rsi
	/* 5 quadwords pushed: the site's return address is at 40(%rsp). */
	rdtsc					/* first: the call came before us */
	shlq $32, %rdx
	orq %rax, %rdx				/* rdx: the TSC */
	\ring_load
	movl $1, %eax
	xaddq %rax, ET_RING_OFF_HEAD(%rsi)	/* rax: our record's index */
	movl %eax, %ecx
	andl ET_RING_OFF_SLOT_MASK(%rsi), %ecx
	shlq $ET_RING_RECORD_SHIFT, %rcx	/* rcx: its slot, in bytes */
	movq %rdx, ET_RING_HEADER_SIZE + 0(%rsi,%rcx)	/* tsc */
	movq 40(%rsp), %rdx
	subq $5, %rdx
	movq %rdx, ET_RING_HEADER_SIZE + 8(%rsi,%rcx)	/* ip = the site = function start */
	movq 48(%rsp), %rdx
	movq %rdx, ET_RING_HEADER_SIZE + 16(%rsi,%rcx)	/* parent_ip */
	movl $ET_RING_GUEST_KIND_FLAGS, ET_RING_HEADER_SIZE + 28(%rsi,%rcx)
	movl %eax, ET_RING_HEADER_SIZE + 24(%rsi,%rcx)	/* cpu = index, last: complete */
	popq %rsi
	popq %rcx
	popq %rdx
	popq %rax
	popfq
	ret
	.size \name, . - \name
.endm

	.text
	FENTRY __fentry__, movq et_fentry_ring(%rip), %rsi
	FENTRY et_fentry_percpu, movq %gs:et_fentry_ring(%rip), %rsi

	.section .note.GNU-stack, "", @progbits
