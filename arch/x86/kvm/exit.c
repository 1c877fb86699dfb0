/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/arch.h"

#include "arch/x86/cpu_mode.h"
#include "arch/x86/insn.h"
#include "arch/x86/kvm/emulation_fallback.h"
#include "arch/x86/page_walk.h"
#include "vmm/kvm/kvm_traits.h"
#include "vmm/kvm/msr_trap.h"

/* An MSR the VMM asked to see (--trace-msr): done as KVM would have. */
static enum exit_verdict handle_msr(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct et_exit x = {
		.kind = ET_REC_MSR,
		.addr = run->msr.index,
		.size = 8,
		.write = run->exit_reason == KVM_EXIT_X86_WRMSR,
		.cpu = vcpu->id,
	};

	msr_trap_complete(vcpu);
	x.value = run->msr.data;
	x.unclaimed = run->msr.error != 0;
	vcpu_observe_exit(vcpu, &x);
	return EXIT_RESUME;
}

enum exit_verdict arch_handle_exit(struct vcpu *vcpu, const char **why)
{
	switch (vcpu->run->exit_reason) {
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		return handle_msr(vcpu);
	case KVM_EXIT_INTERNAL_ERROR:
		if (emulation_fallback(vcpu))
			return EXIT_RESUME;
		*why = "KVM internal error (KVM_EXIT_INTERNAL_ERROR)";
		return EXIT_CRASH;
	case KVM_EXIT_DEBUG:
		if (guest_debug_handle_exit(vcpu))
			return EXIT_RESUME;
		*why = "unexpected debug exit (KVM_EXIT_DEBUG)";
		return EXIT_CRASH;
	default:
		return EXIT_UNKNOWN;
	}
}

/* The code byte at linear address `va`, or -1 when it cannot be read. */
static int code_byte(struct vcpu *vcpu, const struct arch_paging *pg, uint64_t va)
{
	uint8_t b;

	return arch_read_virt(&vcpu->vm->mem, pg, va, &b, 1) ? -1 : b;
}

enum arch_shutdown arch_shutdown_kind(struct vcpu *vcpu)
{
	struct kvm_regs r;
	struct kvm_sregs s;
	struct arch_paging pg;
	uint64_t rip;

	if (vcpu->vm->traits && !vcpu->vm->traits->shutdown_keeps_state)
		return ARCH_SHUTDOWN_STATE_LOST;
	if (vcpu_get_regs(vcpu, &r, &s) < 0 || s.idt.limit != 0)
		return ARCH_SHUTDOWN_CRASH;
	pg = arch_paging_of(&s);
	rip = x86_instruction_pointer(&s, &r);
	return code_byte(vcpu, &pg, rip) == X86_OPCODE_INT3 ||
			       code_byte(vcpu, &pg, x86_linear(&s, s.cs.base, r.rip - 1)) ==
				       X86_OPCODE_INT3
		       ? ARCH_SHUTDOWN_RESET
		       : ARCH_SHUTDOWN_CRASH;
}
