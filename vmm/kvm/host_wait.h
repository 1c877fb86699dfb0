/* SPDX-License-Identifier: MIT */
/*
 * How long each vCPU's thread waited for a host CPU (runnable, but other
 * host tasks ran), learnt without a system call. The guest's TSC keeps
 * counting while its thread waits, so a loaded host makes every traced
 * duration longer; reports take these waits out (vmm/trace/overhead.h).
 *
 * KVM already keeps the figure for paravirtual guests: its steal-time
 * area (MSR_KVM_STEAL_TIME, Documentation/virt/kvm/x86/msr.rst) holds the
 * thread's run-queue delay in ns, refreshed every time the vCPU enters the
 * guest. The VMM points each vCPU's MSR at 64 bytes of a page of its own,
 * mapped where the guest has neither RAM nor a device
 * (LAYOUT_HOST_WAIT_AREA, in the MMIO hole; the memory map never names
 * it), and reads it after every KVM_RUN: one load from memory.
 *
 * A guest that uses steal time itself (Linux with KVM_FEATURE_STEAL_TIME)
 * writes the MSR with its own address; KVM then refreshes the guest's
 * area instead and ours stops changing. The first exit that finds our
 * area's version unchanged asks KVM for the MSR once (KVM_GET_MSRS) and
 * goes on reading the guest's area, whose steal field KVM keeps counting
 * the same way (an INIT, which resets the MSR, gets ours back). What a guest writes into its own area is not trusted: a
 * steal value that goes backwards is a new baseline, not a wait. A guest
 * that turns steal time off, or an area outside RAM, ends the counting
 * (host_wait.known false from then on).
 */
#ifndef VMM_KVM_HOST_WAIT_H
#define VMM_KVM_HOST_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vm;
struct vcpu;

/* One vCPU's view of its steal-time area. */
struct host_wait {
	const uint8_t *area; /* host address of the struct kvm_steal_time read; NULL: none */
	uint64_t area_gpa;
	uint32_t version;    /* the area's version at the last read */
	uint64_t steal;	     /* its steal field then (ns) */
	uint64_t waited_ns;  /* waits seen since the vCPU first ran */
	bool known;	     /* counting (KVM took the MSR, the area is readable) */
	bool followed_guest; /* reading the guest's own area */
};

/* Maps the VM's page of steal-time areas (one 64-byte slot per vCPU).
 * Without it every vCPU's waits are unknown; never fatal. */
int host_wait_map(struct vm *vm);
void host_wait_unmap(struct vm *vm);

/* Points this vCPU's MSR_KVM_STEAL_TIME at its slot. known stays false
 * where KVM refuses (no steal time, a host without scheduler statistics). */
void host_wait_enable(struct vcpu *vcpu);

/* After a KVM_RUN that entered the guest: the ns the thread waited since
 * the previous call (0 if none or unknown). */
uint64_t host_wait_update(struct vcpu *vcpu);
/* The same, handed to the vCPU's on_wait when there was a wait. */
void host_wait_note(struct vcpu *vcpu, bool during_exit);
/* Counts from now: what the thread waited so far (before the guest's
 * first instruction, say) is no wait of the run's. */
void host_wait_rebase(struct vcpu *vcpu);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_HOST_WAIT_H */
