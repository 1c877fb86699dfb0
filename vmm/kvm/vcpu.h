/* SPDX-License-Identifier: MIT */
/*
 * A virtual CPU and its run loop: KVM_RUN until something asks the VM to
 * stop, dispatching each exit to the I/O bus or the crash reporter.
 */
#ifndef VMM_KVM_VCPU_H
#define VMM_KVM_VCPU_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpu_model.h"
#include "vmm/kvm/guest_debug.h"
#include "vmm/kvm/vm.h"

#include "earlytrace/abi.h"

struct vcpu;

/* Turns a guest address into "symbol+0xoff" for reports; may be NULL. */
typedef const char *(*vcpu_symbolize_fn)(void *ctx, uint64_t addr, char *buf, size_t len);

/* Sees each exit the run loop handled (port I/O, MMIO, MSR, HLT, triple
 * fault), after the device or the MSR emulation did its part, so a read's
 * value is known. The tracer's timeline (vmm/trace/exit_events.c). */
typedef void (*vcpu_exit_observer_fn)(void *ctx, struct vcpu *vcpu, const struct et_exit *x);

struct vcpu {
	struct vm *vm;
	unsigned id;
	int fd;
	struct kvm_run *run;
	uint64_t nr_exits;
	vcpu_symbolize_fn symbolize;
	void *symbolize_ctx;
	int debug_io; /* log accesses no device claims */
	uint64_t nr_emulation_fallbacks; /* instructions the KVM left to us */
	struct guest_debug debug;	 /* breakpoints the VMM placed */
	bool sync_regs;	 /* KVM_CAP_SYNC_REGS: registers come with each exit */
	bool regs_synced; /* run->s.regs holds this exit's registers */
	vcpu_exit_observer_fn observe_exit; /* NULL: nobody watches */
	void *observe_exit_ctx;
	const char *crash_reason; /* why the guest crashed, once it has */
};

int vcpu_create(struct vcpu *vcpu, struct vm *vm, unsigned id, const struct cpu_model *model);
void vcpu_destroy(struct vcpu *vcpu);

/* Loads the boot register state (regs, sregs, FPU, MSRs). */
int vcpu_set_boot_state(struct vcpu *vcpu, const struct kvm_regs *regs,
			const struct kvm_sregs *sregs);

/*
 * Runs until vm_stop_reason() is set. Returns 0 when the run ended for a
 * reason the VM recorded, or -1 with an error when KVM itself failed.
 * Crashes (triple fault, failed entry, emulation errors) print a report on
 * stderr and stop the VM with VM_STOP_GUEST_CRASH.
 */
int vcpu_run(struct vcpu *vcpu);

/*
 * The registers at the current exit. With KVM_CAP_SYNC_REGS they come in
 * the run structure with the exit, so reading and changing them costs no
 * system call (each register ioctl is microseconds on nested KVMs, and a
 * breakpoint exit needs three); otherwise KVM_GET_REGS/SREGS. sregs may
 * be NULL. 0, or -1 with errno set.
 */
int vcpu_get_regs(struct vcpu *vcpu, struct kvm_regs *regs, struct kvm_sregs *sregs);

/* Sets the general registers for the next KVM_RUN (no ioctl with sync
 * regs). 0, or -1 with errno set. */
int vcpu_set_regs(struct vcpu *vcpu, const struct kvm_regs *regs);

/* Makes a KVM_RUN in progress (or the next one) return at once; safe in a
 * signal handler. */
void vcpu_kick(struct vcpu *vcpu);

#endif /* VMM_KVM_VCPU_H */
