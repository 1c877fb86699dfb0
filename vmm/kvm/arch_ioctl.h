/* SPDX-License-Identifier: MIT */
/*
 * The KVM ioctls only an architecture knows (x86's IRQ chip and PIT, its
 * MSRs, CPUID, the MSR filter), issued by arch/<arch>/kvm/ on the file
 * descriptors the core owns. The core is still the only code that calls
 * ioctl(); what each request means is the architecture's. Nothing but
 * vmm/kvm/ and arch/<arch>/kvm/ includes this header
 * (scripts/folder-graph.sh checks it).
 */
#ifndef VMM_KVM_ARCH_IOCTL_H
#define VMM_KVM_ARCH_IOCTL_H

#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ioctl(2) on /dev/kvm, the VM and the vCPU: its return value, errno set. */
int kvm_arch_ioctl(struct vm *vm, unsigned long request, void *arg);
int vm_arch_ioctl(struct vm *vm, unsigned long request, void *arg);
int vcpu_arch_ioctl(struct vcpu *vcpu, unsigned long request, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_ARCH_IOCTL_H */
