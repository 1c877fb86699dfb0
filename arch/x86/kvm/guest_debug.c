/* SPDX-License-Identifier: MIT */
/*
 * x86's half of vmm/kvm/guest_debug.c: the debug registers (DR0-DR3 the
 * addresses, DR7 their enables, DR6 which one hit) and #BP, the vector
 * an int3 raises.
 */
#include "vmm/kvm/arch.h"

#include "arch/x86/cpu_mode.h"
#include "arch/x86/insn.h"

void arch_guest_debug_set_hw(struct kvm_guest_debug *dbg, unsigned slot, uint64_t addr)
{
	dbg->arch.debugreg[slot] = addr;
	dbg->arch.debugreg[7] |= X86_DR7_GLOBAL(slot);
}

bool arch_debug_exit_is_int3(const struct kvm_debug_exit_arch *exit)
{
	return exit->exception == X86_VECTOR_BP;
}

bool arch_debug_exit_hit(const struct kvm_debug_exit_arch *exit, unsigned slot, uint64_t addr)
{
	return (exit->dr6 & X86_DR6_HIT(slot)) || addr == exit->pc;
}

/* int3 raises #BP, a trap: the guest's handler sees rip after the int3. */
bool arch_deliver_int3(struct vcpu *vcpu, struct kvm_regs *regs)
{
	regs->rip += 1;
	return vcpu_set_regs(vcpu, regs) == 0 &&
	       vcpu_inject_exception(vcpu, X86_VECTOR_BP, false, 0) == 0;
}
