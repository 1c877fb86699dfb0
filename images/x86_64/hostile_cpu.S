/* SPDX-License-Identifier: MIT */
/*
 * The CPU tricks behind hostile=pt-loop, pt-outside and seg-base
 * (hostile_cpu.c): running a function on another stack, reaching a traced
 * site with a stack pointer nothing may touch, loading segment registers.
 */

	.text
	.code64

/* void hostile_on_stack(void (*fn)(void), uint64_t stack_top): calls fn
 * with rsp = stack_top (16-byte aligned), then returns on our own stack. */
	.globl hostile_on_stack
	.type hostile_on_stack, @function
	.balign 16
hostile_on_stack:
	push %rbp
	mov %rsp, %rbp
	mov %rsi, %rsp
	call *%rdi
	mov %rbp, %rsp
	pop %rbp
	ret
	.size hostile_on_stack, . - hostile_on_stack

/*
 * A traced function with a site exactly as gcc makes one (nop5 first, its
 * address in __mcount_loc, a sized FUNC symbol; see regcheck.S), entered
 * by a jmp from hostile_pt_jump: nothing is pushed on the stack rsp names,
 * so rsp may point anywhere. In breakpoint mode the VMM reads the "return
 * address" at rsp through the guest's page tables as for any site; then
 * the function puts cr3 and rsp back and returns to hostile_pt_jump's
 * caller.
 */
	.globl hostile_pt_target
	.type hostile_pt_target, @function
	.balign 16
hostile_pt_target:
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	.pushsection __mcount_loc, "a", @progbits
	.balign 8
	.quad hostile_pt_target
	.popsection
	mov hostile_pt_saved_cr3(%rip), %rax
	mov %rax, %cr3
	mov hostile_pt_saved_rsp(%rip), %rsp
	ret
	.size hostile_pt_target, . - hostile_pt_target

/* void hostile_pt_jump(uint64_t cr3, uint64_t rsp): switches to cr3 and
 * rsp and jumps to hostile_pt_target. Interrupts are off throughout. */
	.globl hostile_pt_jump
	.type hostile_pt_jump, @function
	.balign 16
hostile_pt_jump:
	mov %rsp, hostile_pt_saved_rsp(%rip)
	mov %cr3, %rax
	mov %rax, hostile_pt_saved_cr3(%rip)
	mov %rdi, %cr3
	mov %rsi, %rsp
	jmp hostile_pt_target
	.size hostile_pt_jump, . - hostile_pt_jump

/* void hostile_load_ss(uint16_t selector) */
	.globl hostile_load_ss
	.type hostile_load_ss, @function
	.balign 16
hostile_load_ss:
	mov %di, %ss
	ret
	.size hostile_load_ss, . - hostile_load_ss

/* void hostile_load_cs(uint16_t selector): a far return to our caller
 * with CS = selector (a 64-bit code segment). */
	.globl hostile_load_cs
	.type hostile_load_cs, @function
	.balign 16
hostile_load_cs:
	pop %rax
	movzwl %di, %edi
	push %rdi
	push %rax
	lretq
	.size hostile_load_cs, . - hostile_load_cs

	.bss
	.balign 8
hostile_pt_saved_rsp:
	.skip 8
hostile_pt_saved_cr3:
	.skip 8

	.section .note.GNU-stack, "", @progbits
