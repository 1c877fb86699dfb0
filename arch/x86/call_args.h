/* SPDX-License-Identifier: MIT */
/*
 * A function's integer arguments, read at its first instruction (a
 * breakpoint on its entry), in the calling convention of the code that
 * runs: x86-64 System V (rdi, rsi, rdx, rcx, r8, r9, then the stack above
 * the return address), or i386 cdecl (all on the stack above the return
 * address). Variadic functions such as Linux's panic() take their
 * arguments that way on i386 even in kernels built with -mregparm.
 */
#ifndef ARCH_X86_CALL_ARGS_H
#define ARCH_X86_CALL_ARGS_H

#include <linux/kvm.h>
#include <stdint.h>

#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stores up to n argument words (8 bytes in 64-bit code, 4 otherwise,
 * zero-extended) in args; returns how many could be read (stack words
 * whose page is not mapped end the list). *word_bytes gets the size. */
unsigned arch_call_args(const struct guest_mem *gm, const struct kvm_regs *r,
		       const struct kvm_sregs *s, uint64_t *args, unsigned n,
		       unsigned *word_bytes);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_CALL_ARGS_H */
