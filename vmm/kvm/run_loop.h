/* SPDX-License-Identifier: MIT */
/*
 * The run loop: KVM_RUN until something asks the VM to stop, handing each
 * exit to the I/O bus, the architecture's own exit handler
 * (arch/x86/kvm/exit.h: MSR accesses, instructions KVM could not emulate,
 * debug exits) or the crash reporter.
 */
#ifndef VMM_KVM_RUN_LOOP_H
#define VMM_KVM_RUN_LOOP_H

#include "vmm/kvm/vcpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Handles the exit described by vcpu->run (vcpu->regs_synced says whether
 * run->s.regs holds its registers). Tests feed it exits they made up.
 */
enum exit_verdict vcpu_dispatch_exit(struct vcpu *vcpu);

/*
 * Runs until vm_stop_reason() is set. Returns 0 when the run ended for a
 * reason the VM recorded, or -1 with an error when KVM or the VMM failed
 * (the stop reason is then RUN_END_VMM_ERROR). Crashes (triple fault,
 * failed entry, emulation errors) print a report on stderr and stop the
 * VM with RUN_END_GUEST_CRASH.
 */
int vcpu_run(struct vcpu *vcpu);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_RUN_LOOP_H */
