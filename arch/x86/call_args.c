/* SPDX-License-Identifier: MIT */
#include "arch/x86/call_args.h"

#include "arch/x86/cpu_mode.h"
#include "arch/x86/page_walk.h"

#define SYSV_REG_ARGS 6

unsigned arch_call_args(const struct guest_mem *gm, const struct kvm_regs *r,
		       const struct kvm_sregs *s, uint64_t *args, unsigned n,
		       unsigned *word_bytes)
{
	const uint64_t regs[SYSV_REG_ARGS] = { r->rdi, r->rsi, r->rdx, r->rcx, r->r8, r->r9 };
	struct arch_paging pg = arch_paging_of(s);
	unsigned word = x86_word_bytes(s), got = 0, in_regs = word == 8 ? SYSV_REG_ARGS : 0;
	uint64_t sp = x86_stack_pointer(s, r);

	*word_bytes = word;
	for (; got < n && got < in_regs; got++)
		args[got] = regs[got];
	/* The stack: the return address, then the arguments left. */
	for (; got < n; got++) {
		uint64_t value = 0, va = sp + word * (1 + got - in_regs);

		if (!x86_is_64bit_code(s))
			va = (uint32_t)va;
		if (arch_read_virt(gm, &pg, va, &value, word))
			break;
		args[got] = value;
	}
	return got;
}
