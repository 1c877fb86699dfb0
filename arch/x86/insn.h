/* SPDX-License-Identifier: MIT */
/* x86 instruction encodings and exception vectors the VMM acts on. */
#ifndef ARCH_X86_INSN_H
#define ARCH_X86_INSN_H

#define X86_OPCODE_INT3 0xcc
#define X86_VECTOR_BP 3 /* breakpoint: a trap, saved rip is after the int3 */

#endif /* ARCH_X86_INSN_H */
