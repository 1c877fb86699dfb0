/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/arch_ioctl.h"

#include <sys/ioctl.h>

int kvm_arch_ioctl(struct vm *vm, unsigned long request, void *arg)
{
	return ioctl(vm->kvm_fd, request, arg);
}

int vm_arch_ioctl(struct vm *vm, unsigned long request, void *arg)
{
	return ioctl(vm->vm_fd, request, arg);
}

int vcpu_arch_ioctl(struct vcpu *vcpu, unsigned long request, void *arg)
{
	return ioctl(vcpu->fd, request, arg);
}
