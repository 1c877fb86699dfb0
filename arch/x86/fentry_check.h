/* SPDX-License-Identifier: MIT */
/*
 * Whether a kernel's __fentry__ (or mcount) only returns. Breakpoint mode
 * resumes a traced call after its 5-byte site: for a `call __fentry__`
 * site that skips the call, which is only right while the callee does
 * nothing. Until a kernel's ftrace initializes, Linux's __fentry__ is a
 * bare `ret` (or a jump to the return thunk that mitigations put in its
 * place); anything else and call sites must be left alone.
 */
#ifndef ARCH_X86_FENTRY_CHECK_H
#define ARCH_X86_FENTRY_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/disasm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Names the symbol at a code address, or NULL (to recognise the thunk). */
typedef const char *(*fentry_symbol_fn)(void *ctx, uint64_t addr);

/* True if code[0..len), found at addr, is `[endbr] ret` or `[endbr] jmp`
 * to a return thunk (a symbol whose name ends in "return_thunk"). */
bool x86_fentry_only_returns(const uint8_t *code, size_t len, uint64_t addr,
			     enum x86_code_mode mode, fentry_symbol_fn symbol, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_FENTRY_CHECK_H */
