/* SPDX-License-Identifier: MIT */
/*
 * How long each vCPU's thread waited for a host CPU (runnable, but other
 * host tasks ran), learnt without a system call. The guest's TSC keeps
 * counting while its thread waits, so a loaded host makes every traced
 * duration longer; reports take these waits out (vmm/trace/overhead.h).
 *
 * KVM already keeps the figure for paravirtual guests, in a memory area
 * per vCPU that it refreshes every time the vCPU enters the guest: the
 * VMM points each vCPU at a slot of a page of its own and reads it after
 * every KVM_RUN, one load from memory. Where that area is and how a vCPU
 * is pointed at it is the architecture's (x86: KVM's steal-time MSR,
 * arch/x86/kvm/host_wait.c, which defines these functions). A guest that
 * uses the area itself is followed; what it writes there is not trusted.
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
