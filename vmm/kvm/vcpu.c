/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/vcpu.h"

#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/x86/boot_cpu.h"
#include "arch/x86/crash_report.h"
#include "arch/x86/emulation_fallback.h"
#include "vmm/error.h"
#include "vmm/kvm/msr_trap.h"

#define CPUID_MAX_ENTRIES 256

#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_IA32_MISC_ENABLE_FAST_STRING 1ull
#define MSR_MTRR_DEF_TYPE 0x2ff
/* AMD's HWCR: firmware sets TscFreqSel (the TSC counts at the P0
 * frequency) on every CPU with an invariant TSC, and Linux warns
 * "[Firmware Bug]: TSC doesn't count with P0 frequency!" (and takes a
 * different path than on real hardware or under QEMU) when it is clear. */
#define MSR_K7_HWCR 0xc0010015
#define MSR_K7_HWCR_TSC_FREQ_SEL (1ull << 24)
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
		struct kvm_msr_entry entries[3];
	} msrs = {
		.hdr.nmsrs = 2,
		.entries = {
			{ .index = MSR_IA32_MISC_ENABLE, .data = MSR_IA32_MISC_ENABLE_FAST_STRING },
			{ .index = MSR_MTRR_DEF_TYPE, .data = MTRR_DEF_TYPE_ENABLE_WB },
			{ .index = MSR_K7_HWCR, .data = MSR_K7_HWCR_TSC_FREQ_SEL },
		},
	};
	unsigned eax, ebx, ecx, edx;

	/* Last: KVM_SET_MSRS stops at the first MSR it refuses. The guest
	 * sees the host's vendor (every CPU model passes it through). */
	if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == 0x68747541 /* "Auth" */ &&
	    edx == 0x69746e65 /* "enti" */ && ecx == 0x444d4163 /* "cAMD" */)
		msrs.hdr.nmsrs = 3;
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

/* Tells the exit observer, if there is one, what this exit did. */
static void observe(struct vcpu *vcpu, uint16_t kind, uint64_t addr, const uint8_t *data,
		    uint32_t size, bool is_write, bool unclaimed)
{
	struct et_exit x = {
		.kind = kind,
		.addr = addr,
		.size = (uint8_t)size,
		.write = is_write,
		.unclaimed = unclaimed,
		.cpu = vcpu->id,
	};

	if (!vcpu->observe_exit)
		return;
	if (data)
		memcpy(&x.value, data, size < sizeof(x.value) ? size : sizeof(x.value));
	vcpu->observe_exit(vcpu->observe_exit_ctx, vcpu, &x);
}

static void handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;

	/* String instructions (rep outsb, ...) arrive as `count` accesses. */
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		bool claimed = iobus_access(&vcpu->vm->bus, IOBUS_PIO, run->io.port, data,
					    run->io.size, is_write);

		if (!claimed && vcpu->debug_io)
			fprintf(stderr, "earlytrace: unclaimed port %s 0x%04x size %u\n",
				is_write ? "write" : "read", run->io.port, run->io.size);
		observe(vcpu, ET_REC_PIO, run->io.port, data, run->io.size, is_write, !claimed);
	}
}

static void handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t len = run->mmio.len <= sizeof(run->mmio.data) ? run->mmio.len : 8;
	bool claimed = iobus_access(&vcpu->vm->bus, IOBUS_MMIO, run->mmio.phys_addr,
				    run->mmio.data, len, run->mmio.is_write);

	if (!claimed && vcpu->debug_io)
		fprintf(stderr, "earlytrace: unclaimed MMIO %s 0x%llx size %u\n",
			run->mmio.is_write ? "write" : "read",
			(unsigned long long)run->mmio.phys_addr, len);
	observe(vcpu, ET_REC_MMIO, run->mmio.phys_addr, run->mmio.data, len, run->mmio.is_write,
		!claimed);
}

/* An MSR the VMM asked to see (--trace-msr): done as KVM would have. */
static void handle_msr(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	bool is_write = run->exit_reason == KVM_EXIT_X86_WRMSR;

	msr_trap_complete(vcpu);
	observe(vcpu, ET_REC_MSR, run->msr.index, (const uint8_t *)&run->msr.data, 8, is_write,
		run->msr.error != 0);
}

static void crash(struct vcpu *vcpu, const char *what)
{
	vcpu->crash_reason = what;
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
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		handle_msr(vcpu);
		return 0;
	case KVM_EXIT_HLT:
		/* Only seen without an in-kernel LAPIC: nothing can wake us. */
		observe(vcpu, ET_REC_HLT, 0, NULL, 0, false, false);
		vm_request_stop(vcpu->vm, VM_STOP_HALTED, EXIT_STATUS_GUEST_CRASH);
		return 0;
	case KVM_EXIT_SHUTDOWN:
		observe(vcpu, ET_REC_SHUTDOWN, 0, NULL, 0, false, false);
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
