/* SPDX-License-Identifier: MIT */
/*
 * What this KVM reports to the VMM, learnt once per process in a scratch
 * VM of its own before any guest runs (the architecture's probes:
 * arch/x86/kvm/kvm_traits.c), so that nothing the VMM finds out changes
 * what the real guest executes:
 *  - whether a guest int3 exits to the VMM (KVM_GUESTDBG_USE_SW_BP, or as
 *    an emulation failure at the int3 on KVMs that cannot run it): real
 *    VMX and SVM do; KVM nested under QEMU's TCG does not (the int3 goes
 *    through the guest's own IDT), and breakpoint tracing is impossible
 *    there;
 *  - whether a debug-register execution breakpoint exits
 *    (KVM_GUESTDBG_USE_HW_BP): where not, the VMM's own breakpoints
 *    become code hooks (vmm/kvm/code_hook.h);
 *  - whether a code hook works: its port I/O completes on an immediate
 *    exit and the instruction can be run again;
 *  - whether the vCPU's registers still show the guest's state after a
 *    triple fault (KVM_EXIT_SHUTDOWN): not on AMD SVM, where KVM
 *    re-initializes the vCPU (as INIT would) before it reports the exit;
 *  - what an int3 exit's round trip costs (the median of 31), for the
 *    tracer's overhead figures.
 *
 * $EARLYTRACE_KVM_TRAITS (a comma-separated list of no-int3 and no-hw-bp)
 * takes away what a KVM does report, so the tests run the fallbacks on
 * every KVM (docs/building.md).
 */
#ifndef VMM_KVM_KVM_TRAITS_H
#define VMM_KVM_KVM_TRAITS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVM_TRAITS_ENV "EARLYTRACE_KVM_TRAITS"

struct kvm_traits {
	bool int3_exits;
	bool hw_bp_exits;
	bool code_hooks;
	bool shutdown_keeps_state;
	uint64_t int3_exit_ticks; /* host TSC ticks; 0 when int3s do not exit */
	/* Why not, in words, where one of the three is false. */
	char no_int3[160];
	char no_hw_bp[160];
	char no_code_hooks[160];
};

/* Probes the KVM behind kvm_fd now, $EARLYTRACE_KVM_TRAITS applied. 0, or
 * -1 with an error when not even the scratch VM could be made. */
int kvm_traits_probe(int kvm_fd, struct kvm_traits *out);

/* The same, probed on the first call and kept for the rest of the
 * process; NULL with an error. */
const struct kvm_traits *kvm_traits_get(int kvm_fd);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_KVM_TRAITS_H */
