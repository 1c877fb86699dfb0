/* SPDX-License-Identifier: MIT */
/*
 * A vCPU's boot state on x86 (declared in vmm/kvm/vcpu.h): the registers
 * a boot protocol chose, the FPU, and the MSRs firmware would have set
 * (arch/x86/boot_cpu.h).
 */
#include "vmm/kvm/vcpu.h"

#include "arch/x86/boot_cpu.h"
#include "vmm/kvm/arch_ioctl.h"
#include "vmm/util/error.h"

int vcpu_set_firmware_msrs(struct vcpu *vcpu)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entries[BOOT_CPU_MAX_MSRS];
	} msrs = { 0 };

	msrs.hdr.nmsrs = boot_cpu_msrs(msrs.entries, BOOT_CPU_MAX_MSRS);
	if (vcpu_arch_ioctl(vcpu, KVM_SET_MSRS, &msrs) < 0)
		return et_error_errno("KVM_SET_MSRS failed");
	return 0;
}

int vcpu_set_boot_state(struct vcpu *vcpu, const struct kvm_regs *regs,
			const struct kvm_sregs *sregs)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entries[BOOT_CPU_MAX_MSRS];
	} msrs = { 0 };
	struct kvm_fpu fpu;

	msrs.hdr.nmsrs = boot_cpu_msrs(msrs.entries, BOOT_CPU_MAX_MSRS);
	boot_cpu_setup_fpu(&fpu);
	if (vcpu_arch_ioctl(vcpu, KVM_SET_SREGS, (void *)sregs) < 0)
		return et_error_errno("KVM_SET_SREGS failed");
	if (vcpu_arch_ioctl(vcpu, KVM_SET_REGS, (void *)regs) < 0)
		return et_error_errno("KVM_SET_REGS failed");
	if (vcpu_arch_ioctl(vcpu, KVM_SET_FPU, &fpu) < 0)
		return et_error_errno("KVM_SET_FPU failed");
	/* KVM_SET_MSRS returns how many it set; fewer is not fatal (a host
	 * without MTRR emulation), the guest then sees reset values. */
	if (vcpu_arch_ioctl(vcpu, KVM_SET_MSRS, &msrs) < 0)
		return et_error_errno("KVM_SET_MSRS failed");
	return 0;
}
