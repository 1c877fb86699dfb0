/* SPDX-License-Identifier: MIT */
/*
 * What a PC's VM needs before its first vCPU, as kvmtool's x86/kvm.c
 * kvm__arch_init(): KVM's TSS and identity map for real mode on Intel
 * (VMX), the in-kernel PIC and IOAPIC, the PIT.
 */
#include "vmm/kvm/arch.h"

#include <errno.h>
#include <linux/kvm.h>

#include "arch/x86/layout.h"
#include "vmm/kvm/arch_ioctl.h"
#include "vmm/util/error.h"

int arch_vm_create_platform(struct vm *vm)
{
	/* The speaker port (0x61) stays in the kernel's PIT model: Linux polls
	 * its output bit while calibrating, and a userspace round trip per
	 * poll would be slow or, unanswered, hang. */
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	uint64_t identity_map = LAYOUT_KVM_IDENTITY_MAP;

	if (vm_arch_ioctl(vm, KVM_SET_TSS_ADDR, (void *)(unsigned long)LAYOUT_KVM_TSS) < 0)
		return et_error_errno("KVM_SET_TSS_ADDR failed");
	if (vm_arch_ioctl(vm, KVM_SET_IDENTITY_MAP_ADDR, &identity_map) < 0 && errno != ENOTTY &&
	    errno != EINVAL)
		return et_error_errno("KVM_SET_IDENTITY_MAP_ADDR failed");
	if (vm_arch_ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0)
		return et_error_errno("KVM_CREATE_IRQCHIP failed");
	if (vm_arch_ioctl(vm, KVM_CREATE_PIT2, &pit) < 0)
		return et_error_errno("KVM_CREATE_PIT2 failed");
	return 0;
}
