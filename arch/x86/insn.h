/* SPDX-License-Identifier: MIT */
/* x86 instruction encodings and exception vectors the VMM acts on. */
#ifndef ARCH_X86_INSN_H
#define ARCH_X86_INSN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define X86_MAX_INSN_LEN 15
#define X86_OPCODE_0F 0x0f /* two-byte opcode escape */
#define X86_OPCODE_INT3 0xcc
#define X86_OPCODE_CALL_REL32 0xe8
#define X86_OPCODE_FWAIT 0x9b
#define X86_OPCODE_NOP 0x90
#define X86_OPCODE_HLT 0xf4
#define X86_OPCODE_MOV_AL_IMM8 0xb0
#define X86_OPCODE_OUT_IMM8_AL 0xe6 /* out imm8, al: port I/O, no register changes */
/* A code hook: the VMM's own breakpoint where a KVM reports no debug
 * exits (vmm/kvm/code_hook.h), `out port, al` over an instruction's first
 * two bytes; the VMM puts them back before the instruction runs. */
#define X86_CODE_HOOK_LEN 2
/* A function-entry site is one 5-byte instruction: `call rel32` (to
 * __fentry__ or mcount, or a trampoline of ours) or a 5-byte nop. */
#define X86_SITE_LEN 5
#define X86_CALL_REL32_LEN 5
/* The bytes linkers fill gaps in code with. */
#define X86_FILL_ZERO 0x00
#define X86_FILL_INT3 X86_OPCODE_INT3

#define X86_VECTOR_BP 3	 /* breakpoint: a trap, saved rip is after the int3 */
#define X86_VECTOR_UD 6	 /* invalid opcode */
#define X86_VECTOR_NM 7	 /* device not available (FPU owned elsewhere) */
#define X86_VECTOR_GP 13 /* general protection */
#define X86_VECTOR_MF 16 /* x87 floating-point error */

/*
 * `call target` placed at `at` (both as the code runs): false when the
 * target is beyond a rel32's reach from the end of the instruction.
 */
static inline bool x86_encode_call_rel32(uint8_t out[X86_CALL_REL32_LEN], uint64_t at,
					 uint64_t target)
{
	int64_t rel = (int64_t)(target - (at + X86_CALL_REL32_LEN));
	int32_t rel32 = (int32_t)rel;

	if (rel != rel32)
		return false;
	out[0] = X86_OPCODE_CALL_REL32;
	memcpy(&out[1], &rel32, sizeof(rel32)); /* little-endian guest and host */
	return true;
}

/* The code hook's bytes for an 8-bit port. */
static inline void x86_encode_code_hook(uint8_t out[X86_CODE_HOOK_LEN], uint8_t port)
{
	out[0] = X86_OPCODE_OUT_IMM8_AL;
	out[1] = port;
}

#endif /* ARCH_X86_INSN_H */
