/* SPDX-License-Identifier: MIT */
/*
 * i386 trampoline templates: the same contract as x86_64.S (read that
 * first), for 32-bit kernels. There is no eip-relative addressing, so the
 * batch's cursor is addressed absolutely too (AT_HEADER): the VMM fills in
 * the region's virtual addresses, which a 32-bit kernel reaches wherever
 * its traced code runs: after paging at its virtual addresses, and before
 * paging only if it is linked at its physical ones (virtual = physical,
 * as our i386 test kernel is; Linux runs no traced code before paging).
 * Records get 32-bit ip and parent ip in the low halves; the VMM ignores
 * the high halves of a 32-bit kernel's records.
 *
 * On entry [esp] = site + 5 and [esp + 4] = parent ip.
 *
 * Several vCPUs: et_tramp32_record_smp, as et_tramp64_record_smp (a batch
 * per vCPU, stride bytes apart, picked by rdtscp's TSC_AUX).
 */
#include <earlytrace/abi.h>

	.section .rodata.earlytrace_tramp32_end_relocs, "a"
	.balign 4
	.globl	et_tramp32_end_relocs
et_tramp32_end_relocs:
	.section .rodata.earlytrace_tramp32_header_relocs, "a"
	.balign 4
	.globl	et_tramp32_header_relocs
et_tramp32_header_relocs:
	.section .rodata.earlytrace_tramp32_stride_relocs, "a"
	.balign 4
	.globl	et_tramp32_stride_relocs
et_tramp32_stride_relocs:

	.section .rodata.earlytrace_trampolines, "a"
	.code32

#define FRAME 16 /* flags and three registers */

/* An instruction whose last 4 bytes the VMM patches; their offset in the
 * template goes to the table of that kind (et_tramp32_<kind>_relocs). */
.macro RELOC kind, insn:vararg
	\insn
.Lreloc\@:
	.pushsection .rodata.earlytrace_tramp32_\kind\()_relocs, "a"
	.long	.Lreloc\@ - 4 - et_tramp32_start
	.popsection
.endm

/* Displacements the VMM adds the records' end to; see x86_64.S. */
.macro AT_END insn:vararg
	RELOC end, \insn
.endm

/* A displacement (an offset into the template) the VMM adds the
 * template's virtual address to. */
.macro AT_HEADER insn:vararg
	RELOC header, \insn
.endm

/* An immediate: the VMM sets the distance between two vCPUs' batches. */
.macro AT_STRIDE insn:vararg
	RELOC stride, \insn
.endm

.macro SAVE
	pushfl
	push	%eax
	push	%edx
	push	%ecx
.endm

.macro RESTORE
	pop	%ecx
	pop	%edx
	pop	%eax
	popfl
.endm

.macro RECORD extra, full
	rdtsc
	mov	$ET_TB_RECORD_BYTES, %ecx
	AT_HEADER xadd %ecx, batch32 - et_tramp32_start + ET_TB_OFF_CURSOR
	jg	\full
	AT_END	{disp32} mov %eax, 0(%ecx)		/* tsc */
	AT_END	{disp32} mov %edx, 4(%ecx)
	mov	FRAME + \extra + 4(%esp), %eax	/* parent ip */
	AT_END	{disp32} mov %eax, 16(%ecx)
	mov	FRAME + \extra(%esp), %eax	/* site + 5 */
	AT_END	{disp32} mov %eax, 8(%ecx)	/* ip, last: the record is complete */
.endm

.macro FULL extra
	push	%ebx
	push	%esi
	push	%edi
	mov	FRAME + 12 + \extra(%esp), %esi		/* site + 5 */
	mov	FRAME + 12 + \extra + 4(%esp), %edi	/* parent ip */
	mov	%eax, %ecx				/* tsc, low */
	mov	%edx, %ebx				/* tsc, high */
	mov	$ET_TB_DRAIN_RECORD, %eax
	mov	$ET_PORT_TRAMP_DRAIN, %edx
	outb	%al, %dx
	pop	%edi
	pop	%esi
	pop	%ebx
.endm

	.balign 4096
	.globl	et_tramp32_start
et_tramp32_start:

	.globl	et_tramp32_record
et_tramp32_record:
	SAVE
	RECORD	0, 2f
1:	RESTORE
	ret
2:	FULL	0
	jmp	1b

/* [esp] = the slot's original bytes, [esp + 4] = site + 5, [esp + 8] =
 * parent ip; see et_tramp64_oneshot. */
	.globl	et_tramp32_oneshot
et_tramp32_oneshot:
	SAVE
	RECORD	4, 2f
1:	mov	FRAME(%esp), %ecx
	mov	FRAME + 4(%esp), %edx
	movw	$0x03eb, -5(%edx)
	movzwl	2(%ecx), %eax
	mov	%ax, -3(%edx)
	movzbl	4(%ecx), %eax
	mov	%al, -1(%edx)
	movzwl	(%ecx), %eax
	mov	%ax, -5(%edx)
	RESTORE
	lea	4(%esp), %esp
	ret
2:	FULL	4
	jmp	1b

/*
 * Several vCPUs (--cpus N): see et_tramp64_record_smp. rdtscp gives the
 * time and, in ecx, the vCPU's index (its TSC_AUX, which the VMM set);
 * ecx becomes our batch's offset from batch 0, ebx our record's.
 */
	.globl	et_tramp32_record_smp
et_tramp32_record_smp:
	SAVE
	push	%ebx
	rdtscp					/* edx:eax the tsc, ecx our vCPU */
	AT_STRIDE imul $0x7fffffff, %ecx, %ecx	/* ecx: our batch, from batch 0 */
	mov	$ET_TB_RECORD_BYTES, %ebx
	AT_HEADER xadd %ebx, batch32 - et_tramp32_start + ET_TB_OFF_CURSOR(%ecx)
	jg	2f
	AT_END	{disp32} mov %eax, 0(%ecx,%ebx)	/* tsc */
	AT_END	{disp32} mov %edx, 4(%ecx,%ebx)
	mov	FRAME + 4 + 4(%esp), %eax	/* parent ip */
	AT_END	{disp32} mov %eax, 16(%ecx,%ebx)
	mov	FRAME + 4(%esp), %eax		/* site + 5 */
	AT_END	{disp32} mov %eax, 8(%ecx,%ebx)	/* ip, last: the record is complete */
1:	pop	%ebx
	RESTORE
	ret
2:	FULL	4
	jmp	1b

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

	.section .rodata.earlytrace_tramp32_end_relocs, "a"
	.globl	et_tramp32_end_relocs_end
et_tramp32_end_relocs_end:
	.section .rodata.earlytrace_tramp32_header_relocs, "a"
	.globl	et_tramp32_header_relocs_end
et_tramp32_header_relocs_end:
	.section .rodata.earlytrace_tramp32_stride_relocs, "a"
	.globl	et_tramp32_stride_relocs_end
et_tramp32_stride_relocs_end:

	.section .note.GNU-stack, "", @progbits
