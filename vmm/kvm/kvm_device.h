/* SPDX-License-Identifier: MIT */
/*
 * The KVM device node: opening it and checking it is a KVM the VMM can
 * use. The tests ask the same function whether KVM is usable, so they
 * skip (or, under EARLYTRACE_REQUIRE_KVM=1, fail) exactly when the VMM
 * would refuse to start.
 */
#ifndef VMM_KVM_KVM_DEVICE_H
#define VMM_KVM_KVM_DEVICE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The node can be overridden for tests and unusual setups. */
#define VM_KVM_DEVICE_DEFAULT "/dev/kvm"
#define VM_KVM_DEVICE_ENV "EARLYTRACE_KVM_DEVICE"

/* $EARLYTRACE_KVM_DEVICE when set and not empty, else /dev/kvm. */
const char *kvm_device_path(void);

/* Opens kvm_device_path() read-write and checks its API version and the
 * capabilities the VMM needs: the descriptor, or -1 with an error that
 * says what to fix. */
int kvm_device_open(void);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_KVM_DEVICE_H */
