/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/vm.h"

#include <stdio.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm/host_wait.h"
#include "vmm/kvm/kvm_traits.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/util/error.h"

static int map_memory(struct vm *vm)
{
	for (unsigned i = 0; i < vm->mem.nr_regions; i++) {
		const struct guest_mem_region *r = &vm->mem.regions[i];
		struct kvm_userspace_memory_region slot = {
			.slot = i,
			.guest_phys_addr = r->gpa,
			.memory_size = r->size,
			.userspace_addr = (uintptr_t)r->host,
		};

		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &slot) < 0)
			return et_error_errno("KVM_SET_USER_MEMORY_REGION (slot %u) failed", i);
	}
	return 0;
}

int vm_create(struct vm *vm, uint64_t mem_size)
{
	memset(vm, 0, sizeof(*vm));
	vm->vm_fd = -1;
	iobus_init(&vm->bus);
	pthread_mutex_init(&vm->exit_lock, NULL); /* a plain mutex: nothing to destroy */

	vm->kvm_fd = kvm_device_open();
	if (vm->kvm_fd < 0)
		return -1;
	/* In a scratch VM of its own, before this one exists: nothing it
	 * learns changes what the guest runs. */
	vm->traits = kvm_traits_get(vm->kvm_fd);
	if (!vm->traits)
		goto fail;
	vm->hooks.on = !vm->traits->hw_bp_exits;
	vm->vcpu_mmap_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->vcpu_mmap_size <= 0) {
		et_error_errno("KVM_GET_VCPU_MMAP_SIZE failed");
		goto fail;
	}
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		et_error_errno("KVM_CREATE_VM failed");
		goto fail;
	}
	if (arch_vm_create_platform(vm) || guest_mem_init(&vm->mem, mem_size) || map_memory(vm))
		goto fail;
	host_wait_map(vm); /* without it, waits are unknown: not fatal */
	return 0;
fail:
	vm_destroy(vm);
	return -1;
}

void vm_destroy(struct vm *vm)
{
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	host_wait_unmap(vm);
	guest_mem_free(&vm->mem);
	iobus_free(&vm->bus);
	vm->vm_fd = vm->kvm_fd = -1;
}

unsigned vm_recommended_vcpus(struct vm *vm)
{
	int n = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);

	/* Old KVMs without the capability recommend 4 (api.rst). */
	if (n <= 0)
		n = 4;
	return n > VM_MAX_VCPUS ? VM_MAX_VCPUS : (unsigned)n;
}

unsigned vm_max_vcpus(struct vm *vm)
{
	int n = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);

	if (n <= 0)
		return vm_recommended_vcpus(vm);
	return n > VM_MAX_VCPUS ? VM_MAX_VCPUS : (unsigned)n;
}

void vm_kick_others(struct vm *vm, struct vcpu *except)
{
	for (unsigned i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *v = vm->vcpus[i];

		if (!v || v == except)
			continue;
		vcpu_kick(v);
		if (vm->kick)
			vm->kick(vm->kick_ctx, v);
	}
}

void vm_request_stop_detail(void *opaque, enum run_end reason, int value, const char *detail)
{
	struct vm *vm = opaque;
	uint64_t none = 0;

	if (atomic_compare_exchange_strong(&vm->stop, &none,
					   (uint64_t)reason << 32 | (uint32_t)value))
		atomic_store(&vm->stop_detail, (uintptr_t)detail);
}

void vm_request_stop(void *vm, enum run_end reason)
{
	vm_request_stop_detail(vm, reason, 0, NULL);
}

const char *vm_stop_detail(struct vm *vm)
{
	return (const char *)atomic_load(&vm->stop_detail);
}

void vm_set_stop_detail(struct vm *vm, const char *detail)
{
	atomic_store(&vm->stop_detail, (uintptr_t)detail);
}

const char *vm_stop_describe(struct vm *vm, char *buf, size_t len)
{
	return run_end_describe(vm_stop_reason(vm), vm_stop_detail(vm), buf, len);
}

int vm_set_irq_line(struct vm *vm, unsigned irq, int level)
{
	struct kvm_irq_level line = { .irq = irq, .level = (uint32_t)level };

	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &line) < 0)
		return et_error_errno("KVM_IRQ_LINE %u failed", irq);
	return 0;
}

enum run_end vm_stop_reason(struct vm *vm)
{
	return (enum run_end)(atomic_load(&vm->stop) >> 32);
}

int vm_stop_value(struct vm *vm)
{
	return (int)(uint32_t)atomic_load(&vm->stop);
}

int vm_stop_status(struct vm *vm)
{
	return run_end_status(vm_stop_reason(vm), vm_stop_value(vm));
}
