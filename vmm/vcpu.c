/* SPDX-License-Identifier: MIT */
#include "vmm/vcpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86/boot_cpu.h"
#include "vmm/crash_report.h"
#include "vmm/emulation_fallback.h"
#include "vmm/error.h"

#define CPUID_MAX_ENTRIES 256

#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_IA32_MISC_ENABLE_FAST_STRING 1ull
#define MSR_MTRR_DEF_TYPE 0x2ff
#define MTRR_DEF_TYPE_ENABLE_WB ((1ull << 11) | 6) /* MTRRs on, default write-back */

static int setup_cpuid(struct vcpu *vcpu, const struct cpu_model *model)
{
	struct kvm_cpuid2 *cpuid;
	int ret = 0;

	cpuid = cpuid_alloc(CPUID_MAX_ENTRIES);
	if (!cpuid)
		return et_error("out of memory");
	if (ioctl(vcpu->vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) < 0)
		ret = et_error_errno("KVM_GET_SUPPORTED_CPUID failed");
	if (!ret) {
		cpu_model_apply(model, cpuid, vcpu->id);
		if (ioctl(vcpu->fd, KVM_SET_CPUID2, cpuid) < 0)
			ret = et_error_errno("KVM_SET_CPUID2 failed");
	}
	free(cpuid);
	return ret;
}

int vcpu_create(struct vcpu *vcpu, struct vm *vm, unsigned id, const struct cpu_model *model)
{
	void *run;

	memset(vcpu, 0, sizeof(*vcpu));
	vcpu->vm = vm;
	vcpu->id = id;
	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (vcpu->fd < 0)
		return et_error_errno("KVM_CREATE_VCPU failed");
	run = mmap(NULL, (size_t)vm->vcpu_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vcpu->fd, 0);
	if (run == MAP_FAILED) {
		et_error_errno("cannot map the vCPU run structure");
		close(vcpu->fd);
		return -1;
	}
	vcpu->run = run;
	vcpu->sync_regs = (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS) &
			   (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
			  (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS);
	if (setup_cpuid(vcpu, model)) {
		vcpu_destroy(vcpu);
		return -1;
	}
	return 0;
}

void vcpu_destroy(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, (size_t)vcpu->vm->vcpu_mmap_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	vcpu->run = NULL;
	vcpu->fd = -1;
}

int vcpu_set_boot_state(struct vcpu *vcpu, const struct kvm_regs *regs,
			const struct kvm_sregs *sregs)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entries[2];
	} msrs = {
		.hdr.nmsrs = 2,
		.entries = {
			{ .index = MSR_IA32_MISC_ENABLE, .data = MSR_IA32_MISC_ENABLE_FAST_STRING },
			{ .index = MSR_MTRR_DEF_TYPE, .data = MTRR_DEF_TYPE_ENABLE_WB },
		},
	};
	struct kvm_fpu fpu;

	boot_cpu_setup_fpu(&fpu);
	if (ioctl(vcpu->fd, KVM_SET_SREGS, sregs) < 0)
		return et_error_errno("KVM_SET_SREGS failed");
	if (ioctl(vcpu->fd, KVM_SET_REGS, regs) < 0)
		return et_error_errno("KVM_SET_REGS failed");
	if (ioctl(vcpu->fd, KVM_SET_FPU, &fpu) < 0)
		return et_error_errno("KVM_SET_FPU failed");
	/* KVM_SET_MSRS returns how many it set; fewer is not fatal (a host
	 * without MTRR emulation), the guest then sees reset values. */
	if (ioctl(vcpu->fd, KVM_SET_MSRS, &msrs) < 0)
		return et_error_errno("KVM_SET_MSRS failed");
	return 0;
}

void vcpu_kick(struct vcpu *vcpu)
{
	if (vcpu->run)
		vcpu->run->immediate_exit = 1;
}

static void handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;

	/* String instructions (rep outsb, ...) arrive as `count` accesses. */
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		if (!iobus_access(&vcpu->vm->bus, IOBUS_PIO, run->io.port, data, run->io.size,
				  is_write) &&
		    vcpu->debug_io)
			fprintf(stderr, "earlytrace: unclaimed port %s 0x%04x size %u\n",
				is_write ? "write" : "read", run->io.port, run->io.size);
	}
}

static void handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t len = run->mmio.len <= sizeof(run->mmio.data) ? run->mmio.len : 8;

	if (!iobus_access(&vcpu->vm->bus, IOBUS_MMIO, run->mmio.phys_addr, run->mmio.data, len,
			  run->mmio.is_write) &&
	    vcpu->debug_io)
		fprintf(stderr, "earlytrace: unclaimed MMIO %s 0x%llx size %u\n",
			run->mmio.is_write ? "write" : "read",
			(unsigned long long)run->mmio.phys_addr, len);
}

static void crash(struct vcpu *vcpu, const char *what)
{
	crash_report(vcpu, what, stderr);
	vm_request_stop(vcpu->vm, VM_STOP_GUEST_CRASH, EXIT_STATUS_GUEST_CRASH);
}

static void handle_system_event(struct vcpu *vcpu)
{
	switch (vcpu->run->system_event.type) {
	case KVM_SYSTEM_EVENT_RESET:
		vm_request_stop(vcpu->vm, VM_STOP_RESET, 0);
		break;
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vm_request_stop(vcpu->vm, VM_STOP_POWER_OFF, 0);
		break;
	default:
		crash(vcpu, "system event (crash)");
		break;
	}
}

/* Handles one exit; returns -1 only when the VMM cannot go on. */
static int dispatch_exit(struct vcpu *vcpu)
{
	switch (vcpu->run->exit_reason) {
	case KVM_EXIT_IO:
		handle_io(vcpu);
		return 0;
	case KVM_EXIT_MMIO:
		handle_mmio(vcpu);
		return 0;
	case KVM_EXIT_INTR:
		return 0; /* a signal; the stop state says whether to go on */
	case KVM_EXIT_HLT:
		/* Only seen without an in-kernel LAPIC: nothing can wake us. */
		vm_request_stop(vcpu->vm, VM_STOP_HALTED, EXIT_STATUS_GUEST_CRASH);
		return 0;
	case KVM_EXIT_SHUTDOWN:
		crash(vcpu, "triple fault (KVM_EXIT_SHUTDOWN)");
		return 0;
	case KVM_EXIT_FAIL_ENTRY:
		crash(vcpu, "VM entry failed (KVM_EXIT_FAIL_ENTRY)");
		return 0;
	case KVM_EXIT_INTERNAL_ERROR:
		if (!emulation_fallback(vcpu))
			crash(vcpu, "KVM internal error (KVM_EXIT_INTERNAL_ERROR)");
		return 0;
	case KVM_EXIT_SYSTEM_EVENT:
		handle_system_event(vcpu);
		return 0;
	case KVM_EXIT_DEBUG:
		if (!guest_debug_handle_exit(vcpu))
			crash(vcpu, "unexpected debug exit (KVM_EXIT_DEBUG)");
		return 0;
	default:
		crash(vcpu, "unexpected exit");
		return 0;
	}
}

int vcpu_get_regs(struct vcpu *vcpu, struct kvm_regs *regs, struct kvm_sregs *sregs)
{
	if (vcpu->regs_synced) {
		*regs = vcpu->run->s.regs.regs;
		if (sregs)
			*sregs = vcpu->run->s.regs.sregs;
		return 0;
	}
	if (ioctl(vcpu->fd, KVM_GET_REGS, regs) < 0)
		return -1;
	return sregs && ioctl(vcpu->fd, KVM_GET_SREGS, sregs) < 0 ? -1 : 0;
}

int vcpu_set_regs(struct vcpu *vcpu, const struct kvm_regs *regs)
{
	if (vcpu->regs_synced) {
		vcpu->run->s.regs.regs = *regs;
		vcpu->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
		return 0;
	}
	return ioctl(vcpu->fd, KVM_SET_REGS, regs) < 0 ? -1 : 0;
}

int vcpu_run(struct vcpu *vcpu)
{
	while (vm_stop_reason(vcpu->vm) == VM_STOP_NONE) {
		if (vcpu->sync_regs)
			vcpu->run->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
		vcpu->regs_synced = false;
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				vcpu->run->immediate_exit = 0;
				continue;
			}
			et_error_errno("KVM_RUN failed");
			vm_request_stop(vcpu->vm, VM_STOP_VMM_ERROR, EXIT_STATUS_ERROR);
			return -1;
		}
		vcpu->nr_exits++;
		vcpu->regs_synced = vcpu->sync_regs;
		if (dispatch_exit(vcpu))
			return -1;
	}
	return 0;
}
