/* SPDX-License-Identifier: MIT */
/*
 * The smallest guest: a PVH entry that prints one line on COM1 at once and
 * ends the run. bench/performance.sh stamps that line's arrival on the
 * VMM's standard output (start to the first guest instruction, plus two
 * port exits) and the process's end (plus teardown): earlytrace's
 * debug-exit port ends an earlytrace run, QEMU's isa-debug-exit (iobase
 * 0xf4) ends QEMU's.
 */
	.section .text, "ax"
	.code32
	.globl	_start
_start:
	mov	$0x3f8, %dx	/* COM1's transmit register */
	mov	$'!', %al
	out	%al, %dx
	mov	$'\n', %al
	out	%al, %dx
	mov	$0x510, %dx	/* earlytrace: ET_PORT_DEBUG_EXIT */
	xor	%eax, %eax
	out	%eax, %dx
	mov	$0xf4, %dx	/* QEMU: isa-debug-exit */
	out	%eax, %dx
1:	hlt
	jmp	1b

	/* XEN_ELFNOTE_PHYS32_ENTRY: the PVH entry point. */
	.section .note.Xen, "a", @note
	.balign	4
	.long	4		/* name size */
	.long	4		/* descriptor size */
	.long	18		/* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz	"Xen"
	.long	_start

	.section .note.GNU-stack, "", @progbits
