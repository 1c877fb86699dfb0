/* SPDX-License-Identifier: MIT */
/*
 * MSRs the VMM wants to see (earlytrace trace --trace-msr). KVM's MSR
 * filter denies the guest's rdmsr/wrmsr of them, and with
 * KVM_CAP_X86_USER_SPACE_MSR (reason KVM_MSR_EXIT_REASON_FILTER) a denied
 * access exits to user space (KVM_EXIT_X86_RDMSR/WRMSR) instead of
 * raising #GP. The VMM completes the access itself through KVM_GET_MSRS
 * and KVM_SET_MSRS, which KVM never filters (host-initiated accesses), so
 * the guest gets the value, or the #GP, KVM would have given it. Limits:
 * KVM checks a few MSRs less strictly for the host than for the guest
 * (APIC base, EFER, the TSC: a host write of IA32_TSC sets the TSC
 * offset), and x2APIC MSRs (0x800-0x8ff) cannot be filtered at all.
 * MSRs are x86's: arch/x86/kvm/msr_trap.c defines these functions.
 */
#ifndef VMM_KVM_MSR_TRAP_H
#define VMM_KVM_MSR_TRAP_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

/* KVM's limit on filter ranges; each traced MSR takes one. */
#define MSR_TRAP_MAX 16

/* Makes every rdmsr/wrmsr of the nr MSRs exit to the VMM. 0, or -1 with
 * an error (this KVM cannot, too many, an x2APIC MSR). */
int msr_trap_enable(struct vm *vm, const uint32_t *msrs, size_t nr);

/* Completes the KVM_EXIT_X86_RDMSR/WRMSR in vcpu->run: reads the value
 * into run->msr.data, or writes it; run->msr.error = 1 makes KVM raise
 * #GP in the guest, as for an MSR KVM refuses. */
void msr_trap_complete(struct vcpu *vcpu);

#endif /* VMM_KVM_MSR_TRAP_H */
