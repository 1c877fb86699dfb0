/* SPDX-License-Identifier: MIT */
/* Decoding guest instructions with capstone, for reports and checks. */
#ifndef ARCH_X86_DISASM_H
#define ARCH_X86_DISASM_H

#include <stddef.h>
#include <stdint.h>

#include "arch/x86/cpu_mode.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Decodes the first instruction in code[0..len) as if it sat at `addr`.
 * Writes "mnemonic operands" to out and returns the instruction length,
 * or 0 if the bytes do not decode (out then says why).
 */
size_t x86_disasm_one(const uint8_t *code, size_t len, uint64_t addr,
		      enum x86_code_mode mode, char *out, size_t out_len);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_DISASM_H */
