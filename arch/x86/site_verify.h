/* SPDX-License-Identifier: MIT */
/*
 * What an x86 function-entry site may look like. Linux's ftrace (and our
 * images, built with -mfentry -mnop-mcount) leave exactly one of two 5-byte
 * instructions at a function's entry: the nop 0f 1f 44 00 00, or
 * call rel32 to __fentry__ (mcount on old -pg kernels). Anything else is
 * code we did not expect and must never patch.
 */
#ifndef ARCH_X86_SITE_VERIFY_H
#define ARCH_X86_SITE_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/disasm.h"
#include "arch/x86/insn.h"

#ifdef __cplusplus
extern "C" {
#endif

enum arch_site_bytes {
	ARCH_SITE_NOP,		/* 0f 1f 44 00 00 */
	ARCH_SITE_CALL,		/* e8 rel32 to one of the expected targets */
	ARCH_SITE_CALL_ELSEWHERE, /* e8 rel32 to something else */
	ARCH_SITE_OTHER,		/* neither */
};

extern const uint8_t x86_nop5[X86_SITE_LEN];

/*
 * Classifies the 5 bytes at code (which sit at virtual address vaddr).
 * targets[0..nr_targets) are the acceptable call targets (__fentry__,
 * mcount); 0 entries are ignored. mode picks 32- or 64-bit wraparound.
 */
enum arch_site_bytes arch_site_classify(const uint8_t code[X86_SITE_LEN], uint64_t vaddr,
				      const uint64_t *targets, size_t nr_targets,
				      enum x86_code_mode mode);

/* Where a code hook (vmm/kvm/code_hook.h) for a breakpoint on the
 * instruction at code goes: X86_SITE_LEN past a function-entry site there
 * (a 5-byte nop, a call, or an int3 the tracer put over one), which the
 * tracer and the kernel's ftrace patch and check; else 0. */
size_t x86_code_hook_offset(const uint8_t code[X86_SITE_LEN]);

/* Length of an endbr64/endbr32 at code (4), or 0: a site may follow one. */
size_t arch_entry_landing_pad_len(const uint8_t *code, size_t len);

/* The target of a 5-byte call at vaddr, wrapped to the mode's width. */
uint64_t x86_call_target(const uint8_t code[X86_SITE_LEN], uint64_t vaddr,
			 enum x86_code_mode mode);

/* A capstone handle kept open over a scan of many functions. */
struct arch_entry_scanner {
	size_t handle; /* csh */
	enum x86_code_mode mode;
};

int arch_entry_scanner_open(struct arch_entry_scanner *sc, enum x86_code_mode mode);
void arch_entry_scanner_close(struct arch_entry_scanner *sc);

/* Decodes the first instruction of a function with capstone (after an
 * endbr); true and *site_off set when it is a 5-byte call to one of the
 * targets. Used when a kernel recorded no sites. */
bool arch_scan_function_entry(struct arch_entry_scanner *sc, const uint8_t *code, size_t len,
			     uint64_t vaddr, const uint64_t *targets, size_t nr_targets,
			     size_t *site_off);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_SITE_VERIFY_H */
