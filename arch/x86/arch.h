/* SPDX-License-Identifier: MIT */
/*
 * x86's side of arch/arch.h: the names code outside arch/ uses, defined
 * for x86 (the functions behind them live in the files included here).
 */
#ifndef ARCH_X86_ARCH_H
#define ARCH_X86_ARCH_H

#include <elf.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/call_args.h"
#include "arch/x86/cpu_mode.h"
#include "arch/x86/cpu_model.h"
#include "arch/x86/fentry_check.h"
#include "arch/x86/host_tsc.h" /* host_tsc(): the host's counter the VMM times in */
#include "arch/x86/insn.h"
#include "arch/x86/msr_names.h"
#include "arch/x86/page_walk.h"
#include "arch/x86/site_verify.h"

/* A function's patchable entry, its fentry call site (`call __fentry__`,
 * or the 5-byte nop the kernel made of it). */
#define ARCH_SITE_LEN X86_SITE_LEN
/* The breakpoint instruction the tracer writes: int3, one byte. */
#define ARCH_BREAKPOINT_INSN X86_OPCODE_INT3
/* The bytes a code hook overwrites (vmm/kvm/code_hook.h). */
#define ARCH_CODE_HOOK_LEN X86_CODE_HOOK_LEN

/* The instruction pointer in a vCPU's registers (rip), and setting it. */
static inline uint64_t arch_regs_ip(const struct kvm_regs *r)
{
	return r->rip;
}

static inline void arch_regs_set_ip(struct kvm_regs *r, uint64_t ip)
{
	r->rip = ip;
}

/* Whether the guest takes interrupts with these registers (RFLAGS.IF). */
static inline bool arch_regs_interrupts_enabled(const struct kvm_regs *r)
{
	return r->rflags & X86_RFLAGS_IF;
}

/* The registers KVM hands over with each exit (KVM_CAP_SYNC_REGS, in
 * kvm_run's s.regs): the general ones, and all the VMM reads. */
#define ARCH_KVM_SYNC_GPRS KVM_SYNC_X86_REGS
#define ARCH_KVM_SYNC_ALL (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)

/* The linear address the vCPU executes at (CS's base added outside long
 * mode), and that of the top of its stack. */
static inline uint64_t arch_code_address(const struct kvm_sregs *s, const struct kvm_regs *r)
{
	return x86_instruction_pointer(s, r);
}

static inline uint64_t arch_stack_address(const struct kvm_sregs *s, const struct kvm_regs *r)
{
	return x86_stack_pointer(s, r);
}

/* Bytes in the code's addresses and stack words: 8 in 64-bit code, else 4;
 * and the mask addresses wrap at. */
static inline unsigned arch_word_bytes(const struct kvm_sregs *s)
{
	return x86_word_bytes(s);
}

static inline uint64_t arch_address_mask(const struct kvm_sregs *s)
{
	return x86_is_64bit_code(s) ? ~0ull : 0xffffffffull;
}

/* The width code runs at, as the site checks take it, for a kernel
 * image of ELF class 32 or 64. */
typedef enum x86_code_mode arch_code_mode;
static inline arch_code_mode arch_code_mode_of_elf(unsigned elf_class)
{
	return elf_class == 64 ? X86_CODE64 : X86_CODE32;
}

/* A site rewritten to call `target` (the trampolines), as the code runs
 * at `at`: false when the target is out of the call's reach. */
static inline bool arch_encode_site_call(uint8_t out[ARCH_SITE_LEN], uint64_t at, uint64_t target)
{
	return x86_encode_call_rel32(out, at, target);
}

/* A code hook's bytes for port `port` (`out port, al`), and where on a
 * function-entry site (its first bytes) a code hook for a breakpoint on
 * it goes (vmm/kvm/code_hook.h). */
static inline void arch_encode_code_hook(uint8_t out[ARCH_CODE_HOOK_LEN], uint8_t port)
{
	x86_encode_code_hook(out, port);
}

static inline size_t arch_code_hook_offset(const uint8_t site[ARCH_SITE_LEN])
{
	return x86_code_hook_offset(site);
}

/* A site as the kernel leaves it when tracing is off: the 5-byte nop. */
#define arch_site_nop x86_nop5

/* True if the kernel's __fentry__ (code[0..len) at addr, in an ELF image
 * of elf_class 32 or 64) only returns, so that a call site may be
 * skipped over instead of run. */
static inline bool arch_fentry_only_returns(const uint8_t *code, size_t len, uint64_t addr,
					    unsigned elf_class, fentry_symbol_fn symbol, void *ctx)
{
	return x86_fentry_only_returns(code, len, addr, arch_code_mode_of_elf(elf_class), symbol,
				       ctx);
}

/* Whether the vCPU runs 64-bit code. */
static inline bool arch_is_64bit_code(const struct kvm_sregs *s)
{
	return x86_is_64bit_code(s);
}

#endif /* ARCH_X86_ARCH_H */
