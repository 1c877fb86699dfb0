/* SPDX-License-Identifier: MIT */
/* x86 instruction encodings and exception vectors the VMM acts on. */
#ifndef ARCH_X86_INSN_H
#define ARCH_X86_INSN_H

#define X86_MAX_INSN_LEN 15
#define X86_OPCODE_0F 0x0f /* two-byte opcode escape */
#define X86_OPCODE_INT3 0xcc
#define X86_OPCODE_CALL_REL32 0xe8
#define X86_OPCODE_FWAIT 0x9b

#define X86_VECTOR_BP 3	 /* breakpoint: a trap, saved rip is after the int3 */
#define X86_VECTOR_UD 6	 /* invalid opcode */
#define X86_VECTOR_NM 7	 /* device not available (FPU owned elsewhere) */
#define X86_VECTOR_GP 13 /* general protection */
#define X86_VECTOR_MF 16 /* x87 floating-point error */

#endif /* ARCH_X86_INSN_H */
