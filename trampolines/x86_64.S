/* SPDX-License-Identifier: MIT */
/*
 * x86-64 trampoline templates. The VMM copies the bytes between
 * et_tramp64_start and et_tramp64_end into guest memory (the code, then on
 * the next page the 64-byte batch header; see trampolines/placement.c),
 * puts the records after them, and turns every
 * selected fentry site into `call et_tramp64_record`. The code is
 * position-independent: it finds the header rip-relatively, so the same
 * bytes work wherever they run. This file is assembled into the VMM as
 * data; it never runs on the host.
 *
 * A site is the first instruction of a function, so on entry
 *	[rsp]     = the site's address + 5 (the call's return address)
 *	[rsp + 8] = the traced function's return address (parent ip)
 * and, as for any fentry call, every register holds the traced function's
 * arguments: the trampoline preserves them all, and the flags. It runs
 * with interrupts off (pushfq/cli ... popfq) so that a traced interrupt
 * handler cannot take the same batch slot. No red zone is touched below
 * the traced function's stack pointer that a kernel built for fentry
 * (-mno-red-zone) does not already give its __fentry__ call.
 *
 * Recording path (batch not full): 26 instructions from the site's call
 * to the return (i386: 28), counted by tests/unit/test_trampolines.cc.
 */
#include <earlytrace/abi.h>

	.section .rodata.earlytrace_trampolines, "a"
	.code64

/* Saves what the record path clobbers; with the call and the frame
 * below, [rsp + FRAME] is the site's return address. */
#define FRAME 40

/* Records one event into the batch at %rsi, or jumps to `full`. `extra`
 * is how many bytes sit between the saved registers and the site's return
 * address. The records follow the header (see `records` below), so a
 * record is addressed from the header without loading the offset. */
.macro RECORD extra, full
	mov	ET_TB_OFF_COUNT(%rsi), %rcx
	cmp	ET_TB_OFF_CAPACITY(%rsi), %rcx
	jae	\full
	shl	$ET_TB_RECORD_SHIFT, %rcx
	rdtsc
	mov	%eax, records-batch+0(%rsi,%rcx)
	mov	%edx, records-batch+4(%rsi,%rcx)
	mov	FRAME+\extra(%rsp), %rax	/* site + 5 */
	mov	%rax, records-batch+8(%rsi,%rcx)
	mov	FRAME+\extra+8(%rsp), %rax	/* parent ip */
	mov	%rax, records-batch+16(%rsi,%rcx)
	incq	ET_TB_OFF_COUNT(%rsi)
.endm

/* The batch is full: one exit, the VMM drains it and sets count to 0. */
.macro DRAIN again
	mov	$ET_PORT_TRAMP_DRAIN, %edx
	outb	%al, %dx
	jmp	\again
.endm

.macro SAVE
	pushfq
	cli
	push	%rax
	push	%rcx
	push	%rdx
	push	%rsi
	lea	batch(%rip), %rsi
.endm

.macro RESTORE
	pop	%rsi
	pop	%rdx
	pop	%rcx
	pop	%rax
	popfq
.endm

	.balign 4096
	.globl	et_tramp64_start
et_tramp64_start:

/* `call et_tramp64_record` at a site: records the call, returns past it. */
	.globl	et_tramp64_record
et_tramp64_record:
	SAVE
1:	RECORD	0, 2f
	RESTORE
	ret
2:	DRAIN	1b

/*
 * --oneshot: a site calls its own slot, `call et_tramp64_oneshot`
 * followed by the site's 5 original bytes, so on entry
 *	[rsp] = the slot's original bytes, [rsp + 8] = site + 5,
 *	[rsp + 16] = parent ip.
 * Records the call, puts the original bytes back over the site (the guest
 * runs its own code from the next call on, without an exit), and returns
 * past the site.
 */
	.globl	et_tramp64_oneshot
et_tramp64_oneshot:
	SAVE
1:	RECORD	8, 2f
	mov	FRAME(%rsp), %rcx		/* the original bytes */
	mov	FRAME+8(%rsp), %rdx		/* site + 5 */
	mov	(%rcx), %eax
	mov	%eax, -5(%rdx)
	movzbl	4(%rcx), %eax
	mov	%al, -1(%rdx)
	RESTORE
	lea	8(%rsp), %rsp			/* drop the slot's return address */
	ret
2:	DRAIN	1b

/* The record array starts here; the VMM sizes it. */
/*
 * The batch lives on its own page after the code: a store to a page the
 * CPU is executing from is self-modifying code to it (a pipeline flush on
 * real hardware, a re-decode under emulating KVMs), and the trampoline
 * stores on every call.
 */
	.balign	4096
batch:
	.globl	et_tramp64_header
et_tramp64_header:
	.skip	ET_TB_HEADER_SIZE
	.globl	et_tramp64_end
et_tramp64_end:
records:

	.section .note.GNU-stack, "", @progbits
