/* SPDX-License-Identifier: MIT */
#include "tests/kvm_translate_helper.h"

#include <stdlib.h>
#include <sys/ioctl.h>

#include "arch/x86/cpu_model.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/error.h"

#define CPUID_MAX_ENTRIES 256

struct kth {
	struct vm vm;
	struct vcpu vcpu;
	struct kvm_cpuid2 *cpuid; /* what the vCPU was given */
};

struct kth *kth_open(uint64_t mem_size)
{
	struct kth *k = calloc(1, sizeof(*k));

	if (!k) {
		et_error("out of memory");
		return NULL;
	}
	if (vm_create(&k->vm, mem_size)) {
		free(k);
		return NULL;
	}
	if (vcpu_create(&k->vcpu, &k->vm, 0, cpu_model_find("auto"))) {
		vm_destroy(&k->vm);
		free(k);
		return NULL;
	}
	k->cpuid = cpuid_alloc(CPUID_MAX_ENTRIES);
	if (!k->cpuid || ioctl(k->vcpu.fd, KVM_GET_CPUID2, k->cpuid) < 0) {
		et_error_errno("KVM_GET_CPUID2 failed");
		kth_close(k);
		return NULL;
	}
	return k;
}

void kth_close(struct kth *k)
{
	if (!k)
		return;
	if (k->vcpu.run)
		vcpu_destroy(&k->vcpu);
	vm_destroy(&k->vm);
	free(k->cpuid);
	free(k);
}

const struct guest_mem *kth_mem(struct kth *k)
{
	return &k->vm.mem;
}

static int has_feature(struct kth *k, uint32_t leaf, enum cpuid_reg reg, unsigned bit)
{
	const struct kvm_cpuid_entry2 *e = cpuid_find_entry(k->cpuid, leaf, 0);
	uint32_t v;

	if (!e)
		return 0;
	v = reg == CPUID_EAX ? e->eax : reg == CPUID_EBX ? e->ebx : reg == CPUID_ECX ? e->ecx : e->edx;
	return (v >> bit) & 1;
}

int kth_has_la57(struct kth *k)
{
	return has_feature(k, 7, CPUID_ECX, 16);
}

int kth_has_rdtscp(struct kth *k)
{
	return has_feature(k, 0x80000001, CPUID_EDX, 27);
}

int kth_has_1g_pages(struct kth *k)
{
	return has_feature(k, 0x80000001, CPUID_EDX, 26);
}

int kth_set_paging(struct kth *k, const struct arch_paging *pg, struct arch_paging *actual)
{
	struct kvm_sregs s;
	int long_mode = (pg->efer & X86_EFER_LMA) != 0;

	if (ioctl(k->vcpu.fd, KVM_GET_SREGS, &s) < 0)
		return et_error_errno("KVM_GET_SREGS failed");
	s.cr0 = pg->cr0;
	s.cr3 = pg->cr3;
	s.cr4 = pg->cr4;
	s.efer = pg->efer;
	/* A flat code segment of the mode's width; the other segments keep
	 * KVM's reset values, which do not matter to a translation. */
	s.cs.base = 0;
	s.cs.limit = 0xffffffff;
	s.cs.selector = 0x8;
	s.cs.type = 0xb; /* execute/read, accessed */
	s.cs.s = 1;
	s.cs.present = 1;
	s.cs.g = 1;
	s.cs.l = long_mode;
	s.cs.db = !long_mode;
	if (ioctl(k->vcpu.fd, KVM_SET_SREGS, &s) < 0)
		return et_error_errno("KVM_SET_SREGS refused cr0=0x%llx cr4=0x%llx efer=0x%llx",
				      (unsigned long long)pg->cr0, (unsigned long long)pg->cr4,
				      (unsigned long long)pg->efer);
	if (ioctl(k->vcpu.fd, KVM_GET_SREGS, &s) < 0)
		return et_error_errno("KVM_GET_SREGS failed");
	*actual = arch_paging_of(&s);
	return 0;
}

int kth_translate(struct kth *k, uint64_t va, int *valid, uint64_t *pa)
{
	struct kvm_translation tr = { .linear_address = va };

	if (ioctl(k->vcpu.fd, KVM_TRANSLATE, &tr) < 0)
		return et_error_errno("KVM_TRANSLATE 0x%llx failed", (unsigned long long)va);
	*valid = tr.valid;
	*pa = tr.physical_address;
	return 0;
}
