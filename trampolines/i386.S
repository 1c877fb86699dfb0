/* SPDX-License-Identifier: MIT */
/*
 * i386 trampoline templates: the same contract as x86_64.S (read that
 * first), for 32-bit kernels. There is no eip-relative addressing, so the
 * code finds its batch header with call/pop. Records get 32-bit ip and
 * parent ip in the low halves; the VMM ignores the high halves of a 32-bit
 * kernel's records.
 *
 * On entry [esp] = site + 5 and [esp + 4] = parent ip.
 */
#include <earlytrace/abi.h>

	.section .rodata.earlytrace_trampolines, "a"
	.code32

#define FRAME 20 /* flags and four registers */

/* Records one event into the batch at %esi, or jumps to `full`; see
 * x86_64.S. */
.macro RECORD extra, full
	mov	ET_TB_OFF_COUNT(%esi), %ecx
	cmp	ET_TB_OFF_CAPACITY(%esi), %ecx
	jae	\full
	shl	$ET_TB_RECORD_SHIFT, %ecx
	rdtsc
	mov	%eax, records32-batch32+0(%esi,%ecx)
	mov	%edx, records32-batch32+4(%esi,%ecx)
	mov	FRAME+\extra(%esp), %eax	/* site + 5 */
	mov	%eax, records32-batch32+8(%esi,%ecx)
	mov	FRAME+\extra+4(%esp), %eax	/* parent ip */
	mov	%eax, records32-batch32+16(%esi,%ecx)
	incl	ET_TB_OFF_COUNT(%esi)
.endm

.macro DRAIN again
	mov	$ET_PORT_TRAMP_DRAIN, %edx
	outb	%al, %dx
	jmp	\again
.endm

/* Saves what the record path clobbers and points %esi at the batch header,
 * position-independently (call/pop: there is no eip-relative addressing). */
.macro SAVE
	pushfl
	cli
	push	%eax
	push	%ecx
	push	%edx
	push	%esi
	call	4f
4:	pop	%esi
	sub	$(4b - batch32), %esi
.endm

.macro RESTORE
	pop	%esi
	pop	%edx
	pop	%ecx
	pop	%eax
	popfl
.endm

	.balign 4096
	.globl	et_tramp32_start
et_tramp32_start:

	.globl	et_tramp32_record
et_tramp32_record:
	SAVE
1:	RECORD	0, 2f
	RESTORE
	ret
2:	DRAIN	1b

/* [esp] = the slot's original bytes, [esp + 4] = site + 5, [esp + 8] =
 * parent ip; see et_tramp64_oneshot. */
	.globl	et_tramp32_oneshot
et_tramp32_oneshot:
	SAVE
1:	RECORD	4, 2f
	mov	FRAME(%esp), %ecx
	mov	FRAME+4(%esp), %edx
	mov	(%ecx), %eax
	mov	%eax, -5(%edx)
	movzbl	4(%ecx), %eax
	mov	%al, -1(%edx)
	RESTORE
	lea	4(%esp), %esp
	ret
2:	DRAIN	1b

/*
 * The batch lives on its own page after the code: a store to a page the
 * CPU is executing from is self-modifying code to it (a pipeline flush on
 * real hardware, a re-decode under emulating KVMs), and the trampoline
 * stores on every call.
 */
	.balign	4096
batch32:
	.globl	et_tramp32_header
et_tramp32_header:
	.skip	ET_TB_HEADER_SIZE
	.globl	et_tramp32_end
et_tramp32_end:
records32:

	.section .note.GNU-stack, "", @progbits
