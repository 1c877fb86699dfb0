/* SPDX-License-Identifier: MIT */
/*
 * x86-64 trampoline templates. The VMM copies the bytes between
 * et_tramp64_start and et_tramp64_end into guest memory (the code, then on
 * the next page the 64-byte batch header; see trampolines/placement.c),
 * puts the records after them, fills in the records' end address (see
 * AT_END), and turns every selected fentry site into `call
 * et_tramp64_record`. This file is assembled into the VMM as data; it never
 * runs on the host.
 *
 * A site is the first instruction of a function, so on entry
 *	[rsp]     = the site's address + 5 (the call's return address)
 *	[rsp + 8] = the traced function's return address (parent ip)
 * and, as for any fentry call, every register holds the traced function's
 * arguments: the trampoline preserves them all, and the flags. No red zone
 * is touched below the traced function's stack pointer that a kernel built
 * for fentry (-mno-red-zone) does not already give its __fentry__ call.
 *
 * Interrupts stay on: a record is reserved with one xadd on the batch's
 * cursor, so an interrupt or NMI whose handler makes a traced call while
 * we record gets the next slot, and ours is complete only once its ip is
 * written, last (struct et_tramp_batch in abi.h has the protocol, and
 * docs/trampolines.md why each instruction is there).
 *
 * Recording path (batch not full): 20 instructions from the site's call
 * to the return (i386: 20), counted by tests/unit/test_trampolines.cc.
 */
#include <earlytrace/abi.h>

/* Offsets (from et_tramp64_start) of 32-bit displacements to which the
 * VMM adds the records' end, a virtual address it knows only when it
 * places the batch (trampolines/templates.h). */
	.section .rodata.earlytrace_tramp64_end_relocs, "a"
	.balign 4
	.globl	et_tramp64_end_relocs
et_tramp64_end_relocs:

/* Offsets of 32-bit displacements to which the VMM adds the blob's own
 * virtual address (they hold an offset into the blob). */
	.section .rodata.earlytrace_tramp64_base_relocs, "a"
	.balign 4
	.globl	et_tramp64_base_relocs
et_tramp64_base_relocs:

/* Offsets of 32-bit immediates the VMM sets to the distance between two
 * vCPUs' batches (several vCPUs only). */
	.section .rodata.earlytrace_tramp64_stride_relocs, "a"
	.balign 4
	.globl	et_tramp64_stride_relocs
et_tramp64_stride_relocs:

	.section .rodata.earlytrace_trampolines, "a"
	.code64

/* What the recording path clobbers: with the call and these pushed,
 * [rsp + FRAME] is the site's return address. */
#define FRAME 32

/* An instruction whose last 4 bytes the VMM patches; their offset in the
 * template goes to the table of that kind (et_tramp64_<kind>_relocs). */
.macro RELOC kind, insn:vararg
	\insn
.Lreloc\@:
	.pushsection .rodata.earlytrace_tramp64_\kind\()_relocs, "a"
	.long	.Lreloc\@ - 4 - et_tramp64_start
	.popsection
.endm

/* A displacement from the records' end: the VMM adds the end's virtual
 * address. Absolute: the region lies in the top or bottom 2 GiB
 * (placement.c checks), and every traced call runs where the kernel's
 * virtual addresses are mapped (64-bit code always runs with paging on). */
.macro AT_END insn:vararg
	RELOC end, \insn
.endm

/* An offset into the template: the VMM adds the template's address. */
.macro AT_BASE insn:vararg
	RELOC base, \insn
.endm

/* An immediate: the VMM sets the distance between two vCPUs' batches. */
.macro AT_STRIDE insn:vararg
	RELOC stride, \insn
.endm

.macro SAVE
	pushfq				/* xadd sets the flags */
	push	%rax			/* rdtsc */
	push	%rdx			/* rdtsc */
	push	%rcx			/* the record's offset */
.endm

.macro RESTORE
	pop	%rcx
	pop	%rdx
	pop	%rax
	popfq
.endm

/*
 * Reserves a record and fills it, or jumps to `full`. `extra` is how many
 * bytes sit between the saved registers and the site's return address.
 * The TSC is read first: the call happened before anything we do.
 */
.macro RECORD extra, full
	rdtsc
	mov	$ET_TB_RECORD_BYTES, %ecx
	xadd	%rcx, batch + ET_TB_OFF_CURSOR(%rip)	/* rcx: our record, from the end */
	jg	\full				/* the cursor passed the end: no room */
	AT_END	{disp32} mov %eax, 0(%rcx)		/* tsc */
	AT_END	{disp32} mov %edx, 4(%rcx)
	mov	FRAME + \extra + 8(%rsp), %rax	/* parent ip */
	AT_END	{disp32} mov %rax, 16(%rcx)
	mov	FRAME + \extra(%rsp), %rax	/* site + 5 */
	AT_END	{disp32} mov %rax, 8(%rcx)	/* ip, last: the record is complete */
.endm

/*
 * The batch is full: one exit. The VMM takes the batch's records and
 * records this call itself from the registers (ET_TB_DRAIN_RECORD), so the
 * call needs no slot: a record reserved under us by an interrupted
 * recording may keep the batch from emptying (abi.h).
 */
.macro FULL extra
	push	%rbx
	push	%rsi
	push	%rdi
	mov	FRAME + 24 + \extra(%rsp), %rsi		/* site + 5 */
	mov	FRAME + 24 + \extra + 8(%rsp), %rdi	/* parent ip */
	mov	%eax, %ecx				/* tsc, low */
	mov	%edx, %ebx				/* tsc, high */
	mov	$ET_TB_DRAIN_RECORD, %eax
	mov	$ET_PORT_TRAMP_DRAIN, %edx
	outb	%al, %dx
	pop	%rdi
	pop	%rsi
	pop	%rbx
.endm

	.balign 4096
	.globl	et_tramp64_start
et_tramp64_start:

/* `call et_tramp64_record` at a site: records the call, returns past it. */
	.globl	et_tramp64_record
et_tramp64_record:
	SAVE
	RECORD	0, 2f
1:	RESTORE
	ret
2:	FULL	0
	jmp	1b

/*
 * --oneshot: a site calls its own slot, `call et_tramp64_oneshot`
 * followed by the site's 5 original bytes, so on entry
 *	[rsp] = the slot's original bytes, [rsp + 8] = site + 5,
 *	[rsp + 16] = parent ip.
 * Records the call, puts the original bytes back over the site (the guest
 * runs its own code from the next call on, without an exit), and returns
 * past the site. Each store leaves a whole instruction at the site, so a
 * call nested in an interrupt finds either our call, a jump over the site,
 * or the site's own bytes.
 */
	.globl	et_tramp64_oneshot
et_tramp64_oneshot:
	SAVE
	RECORD	8, 2f
1:	mov	FRAME(%rsp), %rcx		/* the original bytes */
	mov	FRAME + 8(%rsp), %rdx		/* site + 5 */
	movw	$0x03eb, -5(%rdx)		/* jmp .+5: the site skips itself */
	movzwl	2(%rcx), %eax
	mov	%ax, -3(%rdx)
	movzbl	4(%rcx), %eax
	mov	%al, -1(%rdx)
	movzwl	(%rcx), %eax
	mov	%ax, -5(%rdx)			/* the original instruction, whole */
	RESTORE
	lea	8(%rsp), %rsp			/* drop the slot's return address */
	ret
2:	FULL	8
	jmp	1b

/*
 * Several vCPUs (--cpus N): one batch per vCPU, `stride` bytes apart, so
 * a reservation needs no lock. The VMM sets each vCPU's IA32_TSC_AUX to
 * its index before it runs (Linux later writes its CPU number there, the
 * same index: docs/trampolines.md), so rdtscp gives the time and, in ecx,
 * which batch is ours. rbx holds the record's offset, rcx the batch's.
 */
	.globl	et_tramp64_record_smp
et_tramp64_record_smp:
	SAVE
	push	%rbx
	rdtscp					/* edx:eax the tsc, ecx our vCPU */
	AT_STRIDE imul $0x7fffffff, %ecx, %ecx	/* rcx: our batch, from batch 0 */
	mov	$ET_TB_RECORD_BYTES, %ebx
	AT_BASE	{disp32} xadd %rbx, (batch - et_tramp64_start + ET_TB_OFF_CURSOR)(%rcx)
	jg	2f
	AT_END	{disp32} mov %eax, 0(%rcx,%rbx)
	AT_END	{disp32} mov %edx, 4(%rcx,%rbx)
	mov	FRAME + 8 + 8(%rsp), %rax	/* parent ip */
	AT_END	{disp32} mov %rax, 16(%rcx,%rbx)
	mov	FRAME + 8(%rsp), %rax		/* site + 5 */
	AT_END	{disp32} mov %rax, 8(%rcx,%rbx)	/* ip, last: the record is complete */
1:	pop	%rbx
	RESTORE
	ret
2:	FULL	8
	jmp	1b

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

	.section .rodata.earlytrace_tramp64_end_relocs, "a"
	.globl	et_tramp64_end_relocs_end
et_tramp64_end_relocs_end:

	.section .rodata.earlytrace_tramp64_base_relocs, "a"
	.globl	et_tramp64_base_relocs_end
et_tramp64_base_relocs_end:

	.section .rodata.earlytrace_tramp64_stride_relocs, "a"
	.globl	et_tramp64_stride_relocs_end
et_tramp64_stride_relocs_end:

	.section .note.GNU-stack, "", @progbits
