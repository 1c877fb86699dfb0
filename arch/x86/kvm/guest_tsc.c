/* SPDX-License-Identifier: MIT */
/*
 * The guest's clock on x86 (declared in vmm/kvm/vcpu.h): its TSC, the
 * host's RDTSC plus KVM's offset for the vCPU where that holds, else
 * IA32_TSC through KVM_GET_MSRS; and its frequency.
 */
#include "vmm/kvm/vcpu.h"

#include "arch/x86/host_tsc.h"
#include "arch/x86/msr.h"
#include "vmm/kvm/arch_ioctl.h"

/* RDTSC + KVM's offset is the guest's TSC when, bracketed by two RDTSCs,
 * KVM_GET_MSRS reads a value between them plus the offset. */
static bool tsc_offset_holds(struct vcpu *vcpu, uint64_t offset)
{
	for (int i = 0; i < 3; i++) {
		uint64_t before = host_tsc(), tsc, after;

		if (vcpu_get_msr(vcpu, X86_MSR_IA32_TSC, &tsc))
			return false;
		after = host_tsc();
		if (tsc - offset >= before && tsc - offset <= after)
			return true;
	}
	return false;
}

static void choose_tsc_source(struct vcpu *vcpu)
{
	vcpu->tsc_source = 2;
#ifdef KVM_VCPU_TSC_OFFSET
	{
		uint64_t offset = 0;
		struct kvm_device_attr attr = {
			.group = KVM_VCPU_TSC_CTRL,
			.attr = KVM_VCPU_TSC_OFFSET,
			.addr = (uint64_t)(uintptr_t)&offset,
		};

		if (vcpu_arch_ioctl(vcpu, KVM_GET_DEVICE_ATTR, &attr) == 0 &&
		    tsc_offset_holds(vcpu, offset)) {
			vcpu->tsc_offset = offset;
			vcpu->tsc_source = 1;
		}
	}
#endif
}

bool vcpu_guest_tsc_is_free(struct vcpu *vcpu)
{
	if (!vcpu->tsc_source)
		choose_tsc_source(vcpu);
	return vcpu->tsc_source == 1;
}

uint64_t vcpu_guest_tsc(struct vcpu *vcpu)
{
	uint64_t tsc;

	if (vcpu_guest_tsc_is_free(vcpu)) {
		vcpu->tsc_read_host_tsc = host_tsc();
		return vcpu->tsc_read_host_tsc + vcpu->tsc_offset;
	}
	return vcpu_get_msr(vcpu, X86_MSR_IA32_TSC, &tsc) ? 0 : tsc;
}

uint64_t vcpu_tsc_khz(struct vcpu *vcpu)
{
	int khz = vcpu_arch_ioctl(vcpu, KVM_GET_TSC_KHZ, 0);

	return khz > 0 ? (uint64_t)khz : 0;
}
