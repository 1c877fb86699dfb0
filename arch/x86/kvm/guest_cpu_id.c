// SPDX-License-Identifier: MIT
/*
 * The guest's way to tell which vCPU it runs on, for the SMP trampolines
 * (trampolines/x86_64.S): RDTSCP returns the time and, in ECX, the vCPU's
 * TSC_AUX, which the VMM sets to its index.
 */
#include "vmm/kvm/arch.h"

#include <stdbool.h>
#include <stdlib.h>

#include "arch/x86/cpu_model.h"
#include "arch/x86/msr.h"

#define CPUID_EXT_FEATURES 0x80000001u
#define CPUID_EXT_EDX_RDTSCP (1u << 27)

bool arch_guest_reads_cpu_id(struct vcpu *vcpu)
{
	struct kvm_cpuid2 *cpuid = cpuid_alloc(256);
	struct kvm_cpuid_entry2 *e;
	bool has;

	if (!cpuid)
		return false;
	e = vcpu_get_cpuid(vcpu, cpuid) == 0 ? cpuid_find_entry(cpuid, CPUID_EXT_FEATURES, 0) : NULL;
	has = e && (e->edx & CPUID_EXT_EDX_RDTSCP);
	free(cpuid);
	return has;
}

int arch_set_guest_cpu_id(struct vcpu *vcpu, uint32_t id)
{
	return vcpu_set_msr(vcpu, X86_MSR_TSC_AUX, id);
}
