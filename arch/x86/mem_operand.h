/* SPDX-License-Identifier: MIT */
/*
 * Decoding one instruction with capstone far enough to finish it in the
 * VMM: its length and, for an instruction with one memory operand, the
 * linear address that operand names (base + index * scale + displacement
 * + segment base, rip-relative included), computed from the guest's
 * registers.
 */
#ifndef ARCH_X86_MEM_OPERAND_H
#define ARCH_X86_MEM_OPERAND_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/disasm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum x86_insn_id {
	X86_INSN_OTHER = 0,
	X86_INSN_LDMXCSR,
	X86_INSN_STMXCSR,
};

struct x86_decoded {
	enum x86_insn_id id;
	size_t len;	  /* bytes */
	bool has_mem;	  /* one memory operand, address below */
	uint64_t linear;  /* its linear address */
	unsigned mem_size; /* bytes it names */
};

/* Decodes code[0..len) found at rip. 0, or -1 with an error when the
 * bytes do not decode or name a register we cannot read. */
int x86_decode_for_emulation(const uint8_t *code, size_t len, enum x86_code_mode mode,
			     const struct kvm_regs *regs, const struct kvm_sregs *sregs,
			     struct x86_decoded *out);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_MEM_OPERAND_H */
