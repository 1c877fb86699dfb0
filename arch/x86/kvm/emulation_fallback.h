/* SPDX-License-Identifier: MIT */
/*
 * Finishing instructions the KVM could not: some KVMs (nested kvm-pvm
 * emulates all guest kernel code) stop with an emulation failure on
 * instructions any CPU runs. For a few, the VMM does what the CPU would
 * have done. On a KVM that runs them natively this code is never reached,
 * so it cannot change what a guest sees there.
 */
#ifndef ARCH_X86_KVM_EMULATION_FALLBACK_H
#define ARCH_X86_KVM_EMULATION_FALLBACK_H

#include <stdbool.h>

#include "vmm/kvm/vcpu.h"

/* Called on KVM_EXIT_INTERNAL_ERROR; true when the instruction at rip was
 * completed (or its exception delivered) and the guest can go on. */
bool emulation_fallback(struct vcpu *vcpu);

#endif /* ARCH_X86_KVM_EMULATION_FALLBACK_H */
