/* SPDX-License-Identifier: MIT */
/*
 * Architectural register bits, and what they say about the mode the CPU
 * runs in: the one place the VMM reads CR0, CR4, EFER, RFLAGS and DR7.
 */
#ifndef ARCH_X86_CPU_MODE_H
#define ARCH_X86_CPU_MODE_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define X86_CR0_PE (1ull << 0)	/* protected mode */
#define X86_CR0_MP (1ull << 1)	/* FWAIT obeys TS */
#define X86_CR0_TS (1ull << 3)	/* FPU state belongs to another task */
#define X86_CR0_ET (1ull << 4)
#define X86_CR0_NE (1ull << 5)
#define X86_CR0_PG (1ull << 31) /* paging */
#define X86_CR4_PSE (1ull << 4)	/* 4 MiB pages in 32-bit paging */
#define X86_CR4_PAE (1ull << 5)
#define X86_CR4_OSFXSR (1ull << 9) /* SSE instructions allowed */
#define X86_CR4_LA57 (1ull << 12)  /* 5-level paging */
#define X86_EFER_LME (1ull << 8)
#define X86_EFER_LMA (1ull << 10) /* long mode active */
#define X86_EFER_NXE (1ull << 11)
#define X86_RFLAGS_RESERVED (1ull << 1) /* always 1 */
#define X86_RFLAGS_IF (1ull << 9)	/* interrupts enabled */
/* DR7: global enable of debug register `slot`; RW = LEN = 0 is an
 * execution breakpoint. */
#define X86_DR7_GLOBAL(slot) (1ull << (2 * (slot) + 1))
/* DR6: debug register `slot` matched. */
#define X86_DR6_HIT(slot) (1ull << (slot))

enum x86_code_mode { X86_CODE16 = 16, X86_CODE32 = 32, X86_CODE64 = 64 };

/* 64-bit code: long mode active and a 64-bit code segment. */
static inline bool x86_is_64bit_code(const struct kvm_sregs *s)
{
	return (s->efer & X86_EFER_LMA) && s->cs.l;
}

/* The operand size code runs with: 64-bit, else CS.D picks 32 or 16. */
static inline enum x86_code_mode x86_code_mode(const struct kvm_sregs *s)
{
	if (x86_is_64bit_code(s))
		return X86_CODE64;
	return s->cs.db ? X86_CODE32 : X86_CODE16;
}

/* Bytes in a stack word and a return address in that mode (16-bit code
 * is treated as 32: no traced kernel runs its calls in real mode). */
static inline unsigned x86_word_bytes(const struct kvm_sregs *s)
{
	return x86_is_64bit_code(s) ? 8 : 4;
}

/*
 * The linear address of `offset` in a segment with base `base` (CS, SS,
 * DS or ES): in 64-bit mode the CPU takes their bases as 0, whatever the
 * descriptor loaded, which is what KVM reports (only FS and GS keep a
 * base there); elsewhere base + offset, in 32 bits.
 */
static inline uint64_t x86_linear(const struct kvm_sregs *s, uint64_t base, uint64_t offset)
{
	return x86_is_64bit_code(s) ? offset : (uint32_t)(base + offset);
}

/* The linear address of the instruction at rip. */
static inline uint64_t x86_instruction_pointer(const struct kvm_sregs *s, const struct kvm_regs *r)
{
	return x86_linear(s, s->cs.base, r->rip);
}

/* The linear address of the top of the stack. */
static inline uint64_t x86_stack_pointer(const struct kvm_sregs *s, const struct kvm_regs *r)
{
	return x86_linear(s, s->ss.base, x86_is_64bit_code(s) ? r->rsp : (uint32_t)r->rsp);
}

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_CPU_MODE_H */
