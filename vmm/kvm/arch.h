/* SPDX-License-Identifier: MIT */
/*
 * What the generic KVM core asks of an architecture: the hooks each
 * arch/<arch>/kvm/ fills in (today arch/x86/kvm/), as kvmtool's generic
 * kvm-cpu.c leaves unknown exits and register dumps to x86/kvm-cpu.c and
 * Firecracker's vCPU loop hands them to run_arch_emulation. They are
 * declared here and defined there, so the core includes no x86 header
 * (only arch/arch.h's generic names) and an arch/arm64/kvm/ would know
 * which functions to write. The ioctls they issue go through
 * vmm/kvm/arch_ioctl.h.
 */
#ifndef VMM_KVM_ARCH_H
#define VMM_KVM_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/kvm/vcpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the VM needs before its RAM and its first vCPU (x86: KVM's TSS
 * and identity map, the in-kernel IRQ chip, the PIT). 0, or -1 with an
 * error. */
int arch_vm_create_platform(struct vm *vm);

/* A new vCPU's architectural state that KVM wants before it first runs
 * (x86: its CPUID, from what KVM supports and the CPU model). 0, or -1
 * with an error. */
int arch_vcpu_init(struct vcpu *vcpu, const struct cpu_model *model);

/* Probes what the KVM behind kvm_fd reports, in a scratch VM of the
 * architecture's own (vmm/kvm/kvm_traits.h says what): fills in out. 0,
 * or -1 with an error when not even the scratch VM could be made. */
struct kvm_traits;
int arch_probe_kvm_traits(int kvm_fd, struct kvm_traits *out);

/* Hardware breakpoint `slot` at `addr` in the debug state KVM is given
 * (vmm/kvm/guest_debug.c; x86: DR0-DR3 and their enable bits in DR7). */
void arch_guest_debug_set_hw(struct kvm_guest_debug *dbg, unsigned slot, uint64_t addr);
/* A debug exit (KVM_EXIT_DEBUG): whether it was a software breakpoint
 * (int3 on x86), and whether hardware breakpoint `slot`, placed at `addr`,
 * is among what hit (some KVMs report no hit bits: the address counts). */
bool arch_debug_exit_is_int3(const struct kvm_debug_exit_arch *exit);
bool arch_debug_exit_hit(const struct kvm_debug_exit_arch *exit, unsigned slot, uint64_t addr);
/* Hands a software breakpoint no one in the VMM claimed to the guest, as
 * the CPU would have (x86: #BP, a trap, rip past the int3). true if done. */
bool arch_deliver_int3(struct vcpu *vcpu, struct kvm_regs *regs);

/* An exit the generic run loop does not know (vmm/kvm/run_loop.c):
 * EXIT_RESUME; EXIT_CRASH with *why set when the guest cannot go on; or
 * EXIT_UNKNOWN for an exit reason the architecture does not handle either.
 * On x86: MSR exits, instructions KVM could not emulate, debug exits. */
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

/* The report printed when a guest dies in a way the VMM cannot continue
 * from: why, the exit's details, the registers, and the instruction at
 * the vCPU's instruction pointer decoded (with its symbol when the kernel
 * has symbols). */
void arch_crash_report(struct vcpu *vcpu, const char *what, FILE *out);
/* Just the registers and the decoded instruction (for reports of a guest
 * that is not dead: a panic, a hang). */
void arch_show_vcpu_state(struct vcpu *vcpu, FILE *out);

/* Code a guest may jump to in place of firmware to reset the machine
 * (x86: the BIOS reset vector, F000:FFF0; arch/x86/kvm/reset_vector.c),
 * written into guest memory. 0, or -1 with an error. */
int arch_install_reset_code(const struct guest_mem *gm);
/* Whether the vCPU is running that code: tells a reset through it from
 * one a kernel asked for itself. */
bool arch_runs_reset_code(struct vcpu *vcpu);

/* Whether the guest can read an id the VMM gives each vCPU with one
 * instruction that also reads the time (x86: RDTSCP and TSC_AUX), as the
 * trampolines of a guest with several vCPUs do; KVM offers it only where
 * it can run it (nested kvm-pvm does not). */
bool arch_guest_reads_cpu_id(struct vcpu *vcpu);
/* Gives the vCPU that id. 0, or -1. */
int arch_set_guest_cpu_id(struct vcpu *vcpu, uint32_t id);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_ARCH_H */
