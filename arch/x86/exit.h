/* SPDX-License-Identifier: MIT */
/*
 * The exits only x86 has, behind the one hook the generic run loop
 * (vmm/kvm/run_loop.c) calls for exits it does not know, as kvmtool's
 * kvm_cpu__handle_exit and Firecracker's run_arch_emulation:
 *  - rdmsr/wrmsr of an MSR traced with --trace-msr (KVM's user-space MSR
 *    exits): completed as KVM would have, and observed;
 *  - KVM_EXIT_INTERNAL_ERROR for an instruction KVM could not emulate:
 *    the emulation fallback, else a crash;
 *  - KVM_EXIT_DEBUG: the VMM's breakpoints (vmm/kvm/guest_debug.h), else
 *    a crash.
 * The run loop reports a crash (arch/x86/crash_report.h).
 */
#ifndef ARCH_X86_EXIT_H
#define ARCH_X86_EXIT_H

#include "vmm/kvm/vcpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* EXIT_RESUME; EXIT_CRASH with *why set when the guest cannot go on; or
 * EXIT_UNKNOWN for an exit reason x86 does not handle either. */
enum exit_verdict arch_handle_exit(struct vcpu *vcpu, const char **why);

/*
 * What a triple fault (KVM_EXIT_SHUTDOWN) was. On a PC a shutdown cycle
 * resets the machine; earlytrace takes it for a reset when it was the
 * guest's way to reset, as Linux's reboot=t does: an empty IDT (limit 0,
 * which idt_invalidate() loads) and an int3 at rip or just before it
 * (where rip is depends on who delivered the #BP); anything else (an
 * exception the guest's IDT could not deliver) is a crash. On a KVM that
 * re-initializes the vCPU before it reports the shutdown (AMD SVM: the
 * VMCB is undefined after one) the guest's state is gone and which of the
 * two it was cannot be told: the machine resets, as a PC's would.
 */
enum arch_shutdown {
	ARCH_SHUTDOWN_CRASH,
	ARCH_SHUTDOWN_RESET,
	ARCH_SHUTDOWN_STATE_LOST,
};
enum arch_shutdown arch_shutdown_kind(struct vcpu *vcpu);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_EXIT_H */
