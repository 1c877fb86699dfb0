/* SPDX-License-Identifier: MIT */
/*
 * x86's part of a new vCPU (vmm/kvm/vcpu.c): its CPUID, what KVM supports
 * shaped by the CPU model (arch/x86/cpu_model.h).
 */
#include "vmm/kvm/arch.h"

#include <stdlib.h>

#include "arch/x86/cpu_model.h"
#include "vmm/kvm/arch_ioctl.h"
#include "vmm/util/error.h"

#define CPUID_MAX_ENTRIES 256

int arch_vcpu_init(struct vcpu *vcpu, const struct cpu_model *model)
{
	struct kvm_cpuid2 *cpuid;
	int ret = 0;

	cpuid = cpuid_alloc(CPUID_MAX_ENTRIES);
	if (!cpuid)
		return et_error("out of memory");
	if (kvm_arch_ioctl(vcpu->vm, KVM_GET_SUPPORTED_CPUID, cpuid) < 0)
		ret = et_error_errno("KVM_GET_SUPPORTED_CPUID failed");
	if (!ret) {
		cpu_model_apply(model, cpuid, vcpu->id);
		if (vcpu_arch_ioctl(vcpu, KVM_SET_CPUID2, cpuid) < 0)
			ret = et_error_errno("KVM_SET_CPUID2 failed");
	}
	free(cpuid);
	return ret;
}
