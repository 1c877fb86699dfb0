/* SPDX-License-Identifier: MIT */
/*
 * The host's time stamp counter, read without a system call. The VMM
 * times its own exits in it and derives the guest's clock from it (the
 * guest's TSC is the host's plus KVM's offset: vmm/kvm/vcpu.h), so it is
 * the host architecture's counter; an arm64 host would read CNTVCT_EL0.
 */
#ifndef ARCH_X86_HOST_TSC_H
#define ARCH_X86_HOST_TSC_H

#include <stdint.h>
#include <x86intrin.h>

static inline uint64_t host_tsc(void)
{
	return __rdtsc();
}

#endif /* ARCH_X86_HOST_TSC_H */
