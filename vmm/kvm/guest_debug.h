/* SPDX-License-Identifier: MIT */
/*
 * The vCPU's debug facilities as the VMM uses them: up to four hardware
 * execution breakpoints (guest virtual addresses, each with its handler)
 * and software breakpoints (int3) that a tracer patched into the guest.
 * One place computes KVM_SET_GUEST_DEBUG from all users, so they never
 * overwrite each other's settings.
 */
#ifndef VMM_KVM_GUEST_DEBUG_H
#define VMM_KVM_GUEST_DEBUG_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

struct vcpu;

#define GUEST_DEBUG_HW_SLOTS 4

/* A hardware breakpoint fired. The handler must clear its slot or stop the
 * VM: an armed execution breakpoint fires again as the guest resumes. */
typedef void (*guest_debug_hw_fn)(void *ctx, struct vcpu *vcpu, unsigned slot);
/* The guest executed an int3. Returns true when the int3 was the
 * handler's own and it has set the registers to go on; false hands the
 * int3 to the guest as the #BP it would have raised. */
typedef bool (*guest_debug_int3_fn)(void *ctx, struct vcpu *vcpu, struct kvm_regs *regs,
				    const struct kvm_sregs *sregs);

struct guest_debug {
	uint64_t hw_addr[GUEST_DEBUG_HW_SLOTS]; /* 0: slot free */
	guest_debug_hw_fn hw_fn[GUEST_DEBUG_HW_SLOTS];
	void *hw_ctx[GUEST_DEBUG_HW_SLOTS];
	guest_debug_int3_fn int3_fn;
	void *int3_ctx;
};

/*
 * The breakpoints are the VM's: every call below changes them on every
 * vCPU of vcpu's VM. The given vCPU (the caller's own, or any before the
 * run) gets them at once; the others, which may be running in other
 * threads, are kicked and apply them before they next enter the guest.
 */

/* Arms (addr != 0) or clears (addr == 0) hardware breakpoint `slot`. On a
 * KVM that reports no debug-register breakpoints the slots are code hooks
 * (vmm/kvm/code_hook.h), which fire once: a handler moves or clears its
 * slot, as it must anyway. */
int guest_debug_set_hw(struct vcpu *vcpu, unsigned slot, uint64_t addr, guest_debug_hw_fn fn,
		       void *ctx);
/* Installs (fn != NULL) or removes the handler for int3s. While one is
 * installed, a KVM that can report int3 exits (KVM_GUESTDBG_USE_SW_BP) is
 * asked to; the guest's own int3s are then delivered back to it. */
int guest_debug_set_int3(struct vcpu *vcpu, guest_debug_int3_fn fn, void *ctx);

/* In the vCPU's own thread: applies what another vCPU changed. 0, or -1
 * with an error. */
int guest_debug_apply_pending(struct vcpu *vcpu);

/* Handles KVM_EXIT_DEBUG; false if it was none of ours (a crash). */
bool guest_debug_handle_exit(struct vcpu *vcpu);

/* Offers an int3 at regs->rip to the handler, else delivers #BP to the
 * guest; with several vCPUs, an int3 that is no longer there (another
 * vCPU's exit removed it while this one waited for the exit lock) goes
 * to neither: the vCPU resumes at rip, unchanged, and vcpu->stale_int3
 * counts it. Used for KVM_EXIT_DEBUG and for KVMs that stop with an
 * emulation failure at an int3. False only if delivering failed. */
bool guest_debug_int3(struct vcpu *vcpu, struct kvm_regs *regs, const struct kvm_sregs *sregs);

/* A KVM_EXIT_IO that may be a code hook: true when it was one (the
 * handlers of the slots watching it have run; *fatal when the hook could
 * not be undone, et_last_error() says why), false for any other port I/O. */
bool guest_debug_code_hook_exit(struct vcpu *vcpu, bool *fatal);

#endif /* VMM_KVM_GUEST_DEBUG_H */
