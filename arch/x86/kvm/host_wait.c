/* SPDX-License-Identifier: MIT */
/*
 * x86's half of vmm/kvm/host_wait.h. KVM keeps the figure in its
 * steal-time area (MSR_KVM_STEAL_TIME, Documentation/virt/kvm/x86/msr.rst):
 * the thread's run-queue delay in ns, refreshed every time the vCPU enters
 * the guest. The VMM points each vCPU's MSR at 64 bytes of a page of its
 * own, mapped where the guest has neither RAM nor a device
 * (LAYOUT_HOST_WAIT_AREA, in the MMIO hole; the memory map never names
 * it), and reads it after every KVM_RUN: one load from memory.
 *
 * A guest that uses steal time itself (Linux with KVM_FEATURE_STEAL_TIME)
 * writes the MSR with its own address; KVM then refreshes the guest's
 * area instead and ours stops changing. The first exit that finds our
 * area's version unchanged asks KVM for the MSR once (KVM_GET_MSRS) and
 * goes on reading the guest's area, whose steal field KVM keeps counting
 * the same way (an INIT, which resets the MSR, gets ours back). What a guest writes into its own area is not trusted: a
 * steal value that goes backwards is a new baseline, not a wait. A guest
 * that turns steal time off, or an area outside RAM, ends the counting
 * (host_wait.known false from then on).
 */
#include "vmm/kvm/host_wait.h"

#include <asm/kvm_para.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "arch/x86/layout.h"
#include "vmm/kvm/arch_ioctl.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/mem/guest_mem.h"

#define SLOT_BYTES 64 /* KVM wants the area 64-byte aligned */
#define PAGE_BYTES 4096ull
#define AREA_BYTES ((VM_MAX_VCPUS * SLOT_BYTES + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1))
_Static_assert(sizeof(struct kvm_steal_time) == SLOT_BYTES, "one slot per vCPU");
/* The slot after guest RAM's (guest_mem has at most GUEST_MEM_MAX_REGIONS). */
#define HOST_WAIT_MEMSLOT GUEST_MEM_MAX_REGIONS

int host_wait_map(struct vm *vm)
{
	struct kvm_userspace_memory_region slot = {
		.slot = HOST_WAIT_MEMSLOT,
		.guest_phys_addr = LAYOUT_HOST_WAIT_AREA,
		.memory_size = AREA_BYTES,
	};
	void *page = mmap(NULL, AREA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	if (page == MAP_FAILED)
		return -1;
	slot.userspace_addr = (uintptr_t)page;
	if (vm_arch_ioctl(vm, KVM_SET_USER_MEMORY_REGION, &slot) < 0) {
		munmap(page, AREA_BYTES);
		return -1;
	}
	vm->host_wait_page = page;
	return 0;
}

void host_wait_unmap(struct vm *vm)
{
	/* After the VM is closed: KVM writes no more. */
	if (vm->host_wait_page)
		munmap(vm->host_wait_page, AREA_BYTES);
	vm->host_wait_page = NULL;
}

static uint64_t load_u64(const uint8_t *p)
{
	return __atomic_load_n((const uint64_t *)(const void *)p, __ATOMIC_RELAXED);
}

static uint32_t load_u32(const uint8_t *p)
{
	return __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_RELAXED);
}

static void start_reading(struct host_wait *w, const uint8_t *area, uint64_t gpa)
{
	w->area = area;
	w->area_gpa = gpa;
	w->version = load_u32(area + offsetof(struct kvm_steal_time, version));
	w->steal = load_u64(area + offsetof(struct kvm_steal_time, steal));
}

void host_wait_enable(struct vcpu *vcpu)
{
	struct host_wait *w = &vcpu->wait;
	uint64_t gpa = LAYOUT_HOST_WAIT_AREA + (uint64_t)vcpu->id * SLOT_BYTES;

	uint8_t *slot;

	w->known = false;
	if (!vcpu->vm->host_wait_page || vcpu->id >= VM_MAX_VCPUS)
		return;
	/* Version 0: KVM's first write is a baseline (host_wait_update). */
	slot = vcpu->vm->host_wait_page + (uint64_t)vcpu->id * SLOT_BYTES;
	memset(slot, 0, SLOT_BYTES);
	if (vcpu_set_msr(vcpu, MSR_KVM_STEAL_TIME, gpa | KVM_MSR_ENABLED) < 0)
		return;
	start_reading(w, slot, gpa);
	w->known = true;
}

/* Our area did not change over a KVM_RUN: where does KVM write now? */
static void follow_msr(struct vcpu *vcpu)
{
	struct host_wait *w = &vcpu->wait;
	uint64_t msr, gpa;
	const uint8_t *area;

	if (vcpu_get_msr(vcpu, MSR_KVM_STEAL_TIME, &msr) < 0) {
		w->known = false;
		return;
	}
	if (!(msr & KVM_MSR_ENABLED)) {
		/* An INIT (an application processor's start) resets the MSR:
		 * ours again. A guest that turned its own off: stop. */
		if (w->followed_guest)
			w->known = false;
		else
			host_wait_enable(vcpu);
		return;
	}
	gpa = msr & KVM_STEAL_VALID_BITS;
	if (gpa == w->area_gpa) {
		/* Still the same area: the version did not move this time. A
		 * guest area that never moves is a guest writing it: stop. */
		if (w->followed_guest)
			w->known = false;
		return;
	}
	area = guest_mem_ptr(&vcpu->vm->mem, gpa, SLOT_BYTES);
	if (!area) {
		w->known = false;
		return;
	}
	start_reading(w, area, gpa);
	w->followed_guest = true;
}

uint64_t host_wait_update(struct vcpu *vcpu)
{
	struct host_wait *w = &vcpu->wait;
	uint32_t version;
	uint64_t steal, waited;

	if (!w->known)
		return 0;
	version = load_u32(w->area + offsetof(struct kvm_steal_time, version));
	steal = load_u64(w->area + offsetof(struct kvm_steal_time, steal));
	if (version == w->version) {
		follow_msr(vcpu);
		return 0;
	}
	/* KVM's first write after the MSR is set adds the thread's whole
	 * run-queue history (its last_steal starts at 0): a baseline, not a
	 * wait. Version 0 is an area KVM has not written yet. */
	if (!w->version) {
		w->version = version;
		w->steal = steal;
		return 0;
	}
	w->version = version;
	waited = steal > w->steal ? steal - w->steal : 0;
	w->steal = steal;
	w->waited_ns += waited;
	return waited;
}

void host_wait_rebase(struct vcpu *vcpu)
{
	struct host_wait *w = &vcpu->wait;

	if (w->known && w->version) {
		w->version = load_u32(w->area + offsetof(struct kvm_steal_time, version));
		w->steal = load_u64(w->area + offsetof(struct kvm_steal_time, steal));
	}
}

void host_wait_note(struct vcpu *vcpu, bool during_exit)
{
	uint64_t waited = host_wait_update(vcpu);

	if (waited && vcpu->on_wait)
		vcpu->on_wait(vcpu->on_wait_ctx, vcpu, waited, during_exit);
}
