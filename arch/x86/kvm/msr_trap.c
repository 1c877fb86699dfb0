/* SPDX-License-Identifier: MIT */
/*
 * x86's half of vmm/kvm/msr_trap.h: the MSR filter is KVM's x86 API.
 */
#include "vmm/kvm/msr_trap.h"

#include <linux/kvm.h>

#include "arch/x86/msr.h"
#include "vmm/kvm/arch_ioctl.h"
#include "vmm/util/error.h"

int msr_trap_enable(struct vm *vm, const uint32_t *msrs, size_t nr)
{
	/* One bit per MSR, 0: denied, so the access exits to us. KVM copies
	 * the bitmaps during the ioctl. */
	static uint8_t deny[MSR_TRAP_MAX];
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args = { KVM_MSR_EXIT_REASON_FILTER },
	};
	struct kvm_msr_filter filter = { .flags = KVM_MSR_FILTER_DEFAULT_ALLOW };

	if (!nr)
		return 0;
	if (nr > MSR_TRAP_MAX)
		return et_error("at most %d MSRs can be traced (KVM's filter ranges), not %zu",
				MSR_TRAP_MAX, nr);
	for (size_t i = 0; i < nr; i++) {
		if (msrs[i] >= X86_MSR_X2APIC_FIRST && msrs[i] <= X86_MSR_X2APIC_LAST)
			return et_error("MSR 0x%x is an x2APIC register, which KVM's filter "
					"never applies to",
					msrs[i]);
		filter.ranges[i] = (struct kvm_msr_filter_range){
			.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
			.nmsrs = 1,
			.base = msrs[i],
			.bitmap = &deny[i],
		};
	}
	if (vm_arch_ioctl(vm, KVM_CHECK_EXTENSION, (void *)(uintptr_t)KVM_CAP_X86_USER_SPACE_MSR) <= 0)
		return et_error("this KVM cannot exit to user space on MSR accesses "
				"(no KVM_CAP_X86_USER_SPACE_MSR)");
	if (vm_arch_ioctl(vm, KVM_CHECK_EXTENSION, (void *)(uintptr_t)KVM_CAP_X86_MSR_FILTER) <= 0)
		return et_error("this KVM has no MSR filter (no KVM_CAP_X86_MSR_FILTER)");
	if (vm_arch_ioctl(vm, KVM_ENABLE_CAP, &cap) < 0)
		return et_error_errno("KVM_ENABLE_CAP(KVM_CAP_X86_USER_SPACE_MSR) failed");
	if (vm_arch_ioctl(vm, KVM_X86_SET_MSR_FILTER, &filter) < 0)
		return et_error_errno("KVM_X86_SET_MSR_FILTER failed");
	return 0;
}

void msr_trap_complete(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint64_t value = 0;

	/* A failure is an MSR KVM does not have or a value it refuses. */
	if (run->exit_reason == KVM_EXIT_X86_RDMSR) {
		run->msr.error = vcpu_get_msr(vcpu, run->msr.index, &value) ? 1 : 0;
		run->msr.data = run->msr.error ? 0 : value;
		return;
	}
	run->msr.error = vcpu_set_msr(vcpu, run->msr.index, run->msr.data) ? 1 : 0;
}
